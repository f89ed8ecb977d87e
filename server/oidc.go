package server

import (
	"context"
	"errors"
	"mime"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/golang-jwt/jwt/v5"

	"workspace/db"
)

type registerBody struct {
	Email     string `json:"email"`
	Password  string `json:"password"`
	FirstName string `json:"first_name"`
	LastName  string `json:"last_name"`
}

// passwordProblem says what is wrong with a new password, or "". At most 72
// bytes: bcrypt ignores the rest, so longer passwords would compare equal.
func passwordProblem(pw string) string {
	switch {
	case utf8.RuneCountInString(pw) < 8:
		return "must be at least 8 characters"
	case len(pw) > 72:
		return "must be at most 72 bytes"
	}
	return ""
}

func (s *Server) register(rq *request) error {
	if !s.cfg.Registration {
		return forbidden("Registration is turned off on this server.")
	}
	// Every registration counts against the client address: it would
	// otherwise probe which addresses have accounts, or mass-create them.
	g := guess{kind: "register"}
	if err := s.allowGuess(rq, g); err != nil {
		return err
	}
	s.failedGuess(rq, g)
	var b registerBody
	if err := rq.decode(&b); err != nil {
		return err
	}
	if err := validateRegistration(&b); err != nil {
		return err
	}
	hash, err := s.hashPassword(b.Password)
	if err != nil {
		return err
	}
	u, err := s.createUser(rq.ctx, b.Email, hash, b.FirstName, b.LastName, 0, false)
	if err != nil {
		return err
	}
	return rq.json(http.StatusCreated, s.extendedUser(u))
}

// validateRegistration checks a new account's fields (also used by the
// sign-in page's registration form); it trims the address.
func validateRegistration(b *registerBody) error {
	b.Email = strings.TrimSpace(b.Email)
	p := problems{}
	if !validEmail(b.Email) {
		p.add("email", "must be a valid e-mail address")
	}
	if problem := passwordProblem(b.Password); problem != "" {
		p.add("password", problem)
	}
	p.length("first_name", b.FirstName, 0, 100)
	p.length("last_name", b.LastName, 0, 100)
	return p.err()
}

// createUser makes an account with its primary e-mail address. The address is
// unverified unless an issuer vouched for it.
func (s *Server) createUser(ctx context.Context, email, passwordHash, first, last string, badges int64, verified bool) (db.User, error) {
	var u db.User
	now := s.nowText()
	err := s.store.InTx(ctx, func(q *db.Queries) error {
		if _, err := q.UserGetByEmail(ctx, email); err == nil {
			return fieldError("email", "is already used by another account")
		} else if !db.IsNotFound(err) {
			return err
		}
		if n, err := q.UserEmailVerifiedElsewhere(ctx, db.UserEmailVerifiedElsewhereParams{Email: email, UserID: 0}); err != nil {
			return err
		} else if n > 0 {
			return fieldError("email", "is already used by another account")
		}
		var err error
		u, err = q.UserCreate(ctx, db.UserCreateParams{
			ID: s.store.IDs.Next(), Email: email, PasswordHash: passwordHash,
			FirstName: first, LastName: last, Badges: badges, CreatedAt: now,
		})
		if err != nil {
			if db.IsConflict(err) {
				return fieldError("email", "is already used by another account")
			}
			return err
		}
		e, err := q.UserEmailCreate(ctx, db.UserEmailCreateParams{
			ID: s.store.IDs.Next(), UserID: u.ID, Email: email, IsPrimary: true, IsVerified: verified, CreatedAt: now,
		})
		if err != nil || verified {
			return err
		}
		// A new account's address is confirmed from the mail's link, so
		// an invitation to it can be accepted (issue 36).
		return s.sendEmailToken(ctx, q, e)
	})
	return u, err
}

// CheckStaffCredentials is what CreateStaff asks of an e-mail address and a
// password, so the console can refuse them before opening the database.
func CheckStaffCredentials(email, password string) error {
	if !validEmail(email) {
		return fieldError("email", "must be a valid e-mail address")
	}
	if problem := passwordProblem(password); problem != "" {
		return fieldError("password", problem)
	}
	return nil
}

// CreateStaff makes a user with the Staff badge, for `admin create`.
func CreateStaff(ctx context.Context, store *db.Store, email, password string) (db.User, error) {
	s := &Server{store: store, now: time.Now}
	if err := CheckStaffCredentials(email, password); err != nil {
		return db.User{}, err
	}
	hash, err := s.hashPassword(password)
	if err != nil {
		return db.User{}, err
	}
	// The operator vouches for the address of an account made at the console.
	return s.createUser(ctx, email, hash, "", "", BadgeStaff, true)
}

// tokenError is RFC 6749's error body.
type tokenError struct {
	Error       string `json:"error"`
	Description string `json:"error_description"`
}

type tokenResponse struct {
	AccessToken  string `json:"access_token"`
	TokenType    string `json:"token_type"`
	ExpiresIn    int    `json:"expires_in"`
	RefreshToken string `json:"refresh_token"`
	IDToken      string `json:"id_token"`
}

// token is RFC 6749's token endpoint. Grant failures answer in its error
// form; a body of the wrong type or size answers like every other endpoint.
func (s *Server) token(rq *request) error {
	fail := func(code, desc string) error {
		rq.w.Header().Set("Cache-Control", "no-store")
		return rq.json(http.StatusBadRequest, tokenError{Error: code, Description: desc})
	}
	if mt, _, _ := mime.ParseMediaType(rq.r.Header.Get("Content-Type")); mt != "application/x-www-form-urlencoded" {
		return errorf(http.StatusUnsupportedMediaType, "Content-Type must be application/x-www-form-urlencoded.")
	}
	if err := rq.r.ParseForm(); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return errBodyTooLarge
		}
		return fail("invalid_request", "The body must be application/x-www-form-urlencoded.")
	}
	form := rq.r.PostForm
	var resp tokenResponse
	switch form.Get("grant_type") {
	case "password":
		email, pw := strings.TrimSpace(form.Get("username")), form.Get("password")
		if email == "" || pw == "" {
			return fail("invalid_request", "username and password are required.")
		}
		g := guessOf("password", email)
		if err := s.allowGuess(rq, g); err != nil {
			return err
		}
		u, err := s.store.R.UserGetByEmail(rq.ctx, email)
		if err != nil && !db.IsNotFound(err) {
			return err
		}
		// An unknown address still costs one hash check: timing does not
		// tell which addresses have accounts.
		if !checkPassword(u.PasswordHash, pw) {
			s.failedGuess(rq, g)
			return fail("invalid_grant", "The e-mail address or password is wrong.")
		}
		err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
			resp, err = s.issueTokens(rq.ctx, q, u)
			return err
		})
		if err != nil {
			return err
		}
	case "refresh_token":
		rt := form.Get("refresh_token")
		if rt == "" {
			return fail("invalid_request", "refresh_token is required.")
		}
		var refused string
		err := s.store.InTx(rq.ctx, func(q *db.Queries) error {
			var err error
			resp, refused, err = s.rotateRefresh(rq.ctx, q, rt)
			return err
		})
		if err != nil {
			return err
		}
		if refused != "" {
			return fail("invalid_grant", refused)
		}
	case "authorization_code":
		var code, desc string
		var err error
		resp, code, desc, err = s.codeGrant(rq.ctx, rq.r, form)
		if err != nil {
			return err
		}
		if code == "invalid_client" {
			// RFC 6749 5.2: a failed client authentication is 401.
			rq.w.Header().Set("Cache-Control", "no-store")
			return rq.json(http.StatusUnauthorized, tokenError{Error: code, Description: desc})
		}
		if code != "" {
			return fail(code, desc)
		}
	case "":
		return fail("invalid_request", "grant_type is required.")
	default:
		return fail("unsupported_grant_type", "Only the authorization_code, password and refresh_token grants are supported.")
	}
	rq.w.Header().Set("Cache-Control", "no-store")
	return rq.json(http.StatusOK, resp)
}

// issueTokens makes an access token, an id token and a refresh token, whose
// hash it stores with q.
// rotateRefresh exchanges a refresh token for new tokens. Tokens rotate: a
// used token is kept, marked used, until it expires, and its successor joins
// its chain. Presenting a used token again means it leaked (the thief or the
// owner used it first), so the whole chain is revoked and both must sign in
// again (OAuth 2.0 Security BCP, section 4.14). refused says why the token
// was refused; the revocation must commit, so it is not an error.
func (s *Server) rotateRefresh(ctx context.Context, q *db.Queries, raw string) (tokenResponse, string, error) {
	const bad = "The refresh token is invalid, used or expired."
	row, err := q.RefreshTokenGet(ctx, hashToken(raw))
	if db.IsNotFound(err) {
		return tokenResponse{}, bad, nil
	} else if err != nil {
		return tokenResponse{}, "", err
	}
	now := s.nowText()
	if row.ExpiresAt <= now {
		return tokenResponse{}, bad, q.RefreshTokenDeleteExpired(ctx, db.RefreshTokenDeleteExpiredParams{UserID: row.UserID, Now: now})
	}
	n, err := q.RefreshTokenUse(ctx, db.RefreshTokenUseParams{UsedAt: &now, TokenHash: row.TokenHash})
	if err != nil {
		return tokenResponse{}, "", err
	}
	if n == 0 {
		s.log.WarnContext(ctx, "refresh token reused: chain revoked", "user_id", row.UserID, "request_id", requestID(ctx))
		return tokenResponse{}, bad, q.RefreshTokenRevokeFamily(ctx, row.FamilyID)
	}
	u, err := q.UserGet(ctx, row.UserID)
	if db.IsNotFound(err) {
		return tokenResponse{}, bad, nil
	} else if err != nil {
		return tokenResponse{}, "", err
	}
	resp, err := s.issueTokensIn(ctx, q, u, row.FamilyID)
	return resp, "", err
}

// revoke is RFC 7009 token revocation, for signing out: a refresh token
// revokes its whole chain. Access tokens are self-contained JWTs that expire
// within the hour; they cannot be revoked one by one. Unknown, used or
// malformed tokens answer 200 as well, as the RFC asks, so the answer tells
// nothing about the token.
func (s *Server) revoke(rq *request) error {
	if mt, _, _ := mime.ParseMediaType(rq.r.Header.Get("Content-Type")); mt != "application/x-www-form-urlencoded" {
		return errorf(http.StatusUnsupportedMediaType, "Content-Type must be application/x-www-form-urlencoded.")
	}
	if err := rq.r.ParseForm(); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return errBodyTooLarge
		}
		return rq.json(http.StatusBadRequest, tokenError{Error: "invalid_request", Description: "The body must be application/x-www-form-urlencoded."})
	}
	raw := rq.r.PostForm.Get("token")
	if raw == "" {
		return rq.json(http.StatusBadRequest, tokenError{Error: "invalid_request", Description: "token is required."})
	}
	err := s.store.InTx(rq.ctx, func(q *db.Queries) error {
		row, err := q.RefreshTokenGet(rq.ctx, hashToken(raw))
		if db.IsNotFound(err) {
			return nil
		} else if err != nil {
			return err
		}
		return q.RefreshTokenRevokeFamily(rq.ctx, row.FamilyID)
	})
	if err != nil {
		return err
	}
	rq.w.Header().Set("Cache-Control", "no-store")
	rq.w.WriteHeader(http.StatusOK)
	return nil
}

// issueTokens signs a new access and ID token and starts a refresh chain.
func (s *Server) issueTokens(ctx context.Context, q *db.Queries, u db.User) (tokenResponse, error) {
	return s.issueTokensIn(ctx, q, u, s.store.IDs.Next())
}

// issueTokensIn is issueTokens with the refresh token joining chain family.
func (s *Server) issueTokensIn(ctx context.Context, q *db.Queries, u db.User, family int64) (tokenResponse, error) {
	return s.issueTokensFor(ctx, q, u, family, idTokenFor{})
}

// idTokenFor is who an ID token is for: in the code flow the client (its
// audience) and the nonce it sent; otherwise the API's audience.
type idTokenFor struct {
	clientID string
	nonce    string
}

func (s *Server) issueTokensFor(ctx context.Context, q *db.Queries, u db.User, family int64, forc idTokenFor) (tokenResponse, error) {
	now := s.clock()
	aud := s.cfg.Audience
	if forc.clientID != "" {
		aud = forc.clientID
	}
	access, err := s.auth.accessToken(u, now)
	if err != nil {
		return tokenResponse{}, err
	}
	id, err := s.auth.sign(claims{
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer: s.cfg.Issuer, Subject: db.ID(u.ID).String(), Audience: jwt.ClaimStrings{aud},
			ExpiresAt: jwt.NewNumericDate(now.Add(accessTokenTTL)), IssuedAt: jwt.NewNumericDate(now),
		},
		Email: u.Email, GivenName: u.FirstName, FamilyName: u.LastName, Name: strings.TrimSpace(u.FirstName + " " + u.LastName),
		Nonce: forc.nonce,
	}, "JWT")
	if err != nil {
		return tokenResponse{}, err
	}
	// Used tokens are kept until they expire (to recognise reuse); sweep the
	// user's expired ones here so the table stays bounded.
	if err := q.RefreshTokenDeleteExpired(ctx, db.RefreshTokenDeleteExpiredParams{UserID: u.ID, Now: db.FormatTime(now)}); err != nil {
		return tokenResponse{}, err
	}
	refresh := randomToken(32)
	err = q.RefreshTokenCreate(ctx, db.RefreshTokenCreateParams{
		TokenHash: hashToken(refresh), UserID: u.ID, FamilyID: family,
		ExpiresAt: db.FormatTime(now.Add(refreshTokenTTL)), CreatedAt: db.FormatTime(now),
	})
	if err != nil {
		return tokenResponse{}, err
	}
	return tokenResponse{AccessToken: access, TokenType: "Bearer", ExpiresIn: int(accessTokenTTL.Seconds()), RefreshToken: refresh, IDToken: id}, nil
}

func (s *Server) discovery(rq *request) error {
	iss := s.cfg.Issuer
	return rq.json(http.StatusOK, map[string]any{
		"issuer":                                     iss,
		"authorization_endpoint":                     iss + "/oauth/authorize",
		"token_endpoint":                             iss + "/oauth/token",
		"revocation_endpoint":                        iss + "/oauth/revoke",
		"userinfo_endpoint":                          iss + "/oauth/userinfo",
		"jwks_uri":                                   iss + "/.well-known/jwks.json",
		"registration_endpoint":                      iss + "/auth/register",
		"grant_types_supported":                      []string{"authorization_code", "password", "refresh_token"},
		"response_types_supported":                   []string{"code"},
		"response_modes_supported":                   []string{"query"},
		"code_challenge_methods_supported":           []string{"S256"},
		"subject_types_supported":                    []string{"public"},
		"id_token_signing_alg_values_supported":      []string{"RS256"},
		"token_endpoint_auth_methods_supported":      []string{"none", "client_secret_post", "client_secret_basic"},
		"revocation_endpoint_auth_methods_supported": []string{"none"},
		"scopes_supported":                           []string{"openid", "email", "profile"},
		"claims_supported":                           []string{"iss", "sub", "aud", "exp", "iat", "jti", "email", "given_name", "family_name", "name", "nonce"},
	})
}

func (s *Server) jwks(rq *request) error {
	rq.w.Header().Set("Cache-Control", "public, max-age=300")
	return rq.json(http.StatusOK, map[string]any{"keys": s.auth.keys.Load().jwkSet()})
}

func (s *Server) userinfo(rq *request) error {
	u := rq.user
	verified, err := primaryVerified(rq.ctx, s.store.R, u.ID)
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, map[string]any{
		"sub": db.ID(u.ID).String(), "email": u.Email, "email_verified": verified,
		"given_name": u.FirstName, "family_name": u.LastName,
		"name": strings.TrimSpace(u.FirstName + " " + u.LastName),
	})
}

// externalUser maps an external issuer's (iss, sub) to a local user, making
// one on first sight. An e-mail already held by a local account links to it
// only when the issuer says the address is verified AND the local account has
// verified it too: otherwise anyone who controls an issuer account could take
// over a local one, or someone who registered a victim's address locally
// (never verifying it) could wait for the victim to sign in and share the
// account. docs/auth.md records the rules.
func (s *Server) externalUser(ctx context.Context, c *claims) (db.User, error) {
	iss := strings.TrimSuffix(c.Issuer, "/")
	if id, err := s.store.R.IdentityGet(ctx, db.IdentityGetParams{Issuer: iss, Subject: c.Subject}); err == nil {
		return s.store.R.UserGet(ctx, id.UserID)
	} else if !db.IsNotFound(err) {
		return db.User{}, err
	}
	if !validEmail(c.Email) {
		return db.User{}, errUnauthorized("The token carries no valid e-mail claim to create an account from.")
	}
	verified := c.EmailVerified != nil && bool(*c.EmailVerified)
	first, last := c.GivenName, c.FamilyName
	if first == "" && last == "" && c.Name != "" {
		first, last, _ = strings.Cut(strings.TrimSpace(c.Name), " ")
	}
	now := s.nowText()
	var u db.User
	err := s.store.InTx(ctx, func(q *db.Queries) error {
		// Another request for the same identity may have won the race.
		id, err := q.IdentityGet(ctx, db.IdentityGetParams{Issuer: iss, Subject: c.Subject})
		if err == nil {
			u, err = q.UserGet(ctx, id.UserID)
			return err
		} else if !db.IsNotFound(err) {
			return err
		}
		existing, err := q.UserGetByEmail(ctx, c.Email)
		switch {
		case err == nil:
			if !verified {
				return errUnauthorized("An account with this e-mail exists; the issuer must vouch for the address (email_verified) to link it.")
			}
			ok, err := primaryVerified(ctx, q, existing.ID)
			if err != nil {
				return err
			}
			if !ok {
				return errUnauthorized("An account with this e-mail exists but has not verified the address; verify it there first.")
			}
			u = existing
		case db.IsNotFound(err):
			// The address may be another account's verified secondary
			// address: never make a second account claiming it.
			n, err := q.UserEmailVerifiedElsewhere(ctx, db.UserEmailVerifiedElsewhereParams{Email: c.Email, UserID: 0})
			if err != nil {
				return err
			}
			if n > 0 {
				return errUnauthorized("Another account holds this e-mail address.")
			}
			u, err = q.UserCreate(ctx, db.UserCreateParams{
				ID: s.store.IDs.Next(), Email: c.Email, FirstName: truncate(first, 100), LastName: truncate(last, 100), CreatedAt: now,
			})
			if err != nil {
				return err
			}
			if _, err := q.UserEmailCreate(ctx, db.UserEmailCreateParams{
				ID: s.store.IDs.Next(), UserID: u.ID, Email: c.Email, IsPrimary: true, IsVerified: verified, CreatedAt: now,
			}); err != nil {
				return err
			}
		default:
			return err
		}
		return q.IdentityCreate(ctx, db.IdentityCreateParams{Issuer: iss, Subject: c.Subject, UserID: u.ID, CreatedAt: now})
	})
	return u, err
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) > n {
		return string(r[:n])
	}
	return s
}
