package server

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strings"
	"time"

	"workspace/db"
)

// The OpenID Connect authorization-code flow with PKCE (issue 16,
// docs/auth.md "Authorization-code flow"). GET /oauth/authorize checks the
// request and shows a sign-in and registration page the server renders
// itself (no script); POST /oauth/authorize signs in or registers and
// redirects back with a one-time code, which the client exchanges at
// /oauth/token with grant_type=authorization_code.

// OAuthClient is a client allowed to use the authorization endpoint. A client
// without a secret is public (a browser app, a mobile app) and must use PKCE.
type OAuthClient struct {
	ID           string
	Secret       string   // "" for a public client
	RedirectURIs []string // compared exactly, byte for byte
}

// WebClientID is the built-in public client of the SPA served under /app/.
const WebClientID = "workspace-web"

// WebRedirectPath is where the SPA receives its code, below the issuer.
const WebRedirectPath = "/app/callback"

const (
	authCodeTTL = 60 * time.Second
	// A code_challenge is the base64url SHA-256 of the verifier: 43 characters.
	s256ChallengeLen = 43
)

// ValidateOAuthClient checks a configured client at start-up.
func ValidateOAuthClient(c OAuthClient) error {
	if c.ID == "" || len(c.ID) > 100 || strings.ContainsAny(c.ID, " \t\r\n=,") {
		return fmt.Errorf("oauth client id %q: 1-100 characters without spaces, '=' or ','", c.ID)
	}
	if len(c.RedirectURIs) == 0 {
		return fmt.Errorf("oauth client %s: at least one redirect URI", c.ID)
	}
	for _, r := range c.RedirectURIs {
		u, err := url.Parse(r)
		// Private-use schemes of native apps (com.example.app:/cb) have no host.
		if err != nil || u.Scheme == "" || u.Fragment != "" || (u.Host == "" && u.Path == "" && u.Opaque == "") {
			return fmt.Errorf("oauth client %s: redirect URI %q must be absolute, without a fragment", c.ID, r)
		}
	}
	return nil
}

// oauthClient finds a client by id: the built-in web client or a configured one.
func (s *Server) oauthClient(id string) (OAuthClient, bool) {
	if id == WebClientID {
		return OAuthClient{ID: WebClientID, RedirectURIs: []string{s.cfg.Issuer + WebRedirectPath}}, true
	}
	for _, c := range s.cfg.OAuthClients {
		if c.ID == id {
			return c, true
		}
	}
	return OAuthClient{}, false
}

// authzRequest is one authorization request, as the client sent it.
type authzRequest struct {
	ClientID, RedirectURI, ResponseType, Scope, State string
	CodeChallenge, CodeChallengeMethod, Nonce         string
}

func authzRequestFrom(v url.Values) authzRequest {
	return authzRequest{
		ClientID: v.Get("client_id"), RedirectURI: v.Get("redirect_uri"), ResponseType: v.Get("response_type"),
		Scope: v.Get("scope"), State: v.Get("state"), CodeChallenge: v.Get("code_challenge"),
		CodeChallengeMethod: v.Get("code_challenge_method"), Nonce: v.Get("nonce"),
	}
}

// authzFailure is why a request cannot go on. With redirect set, the error
// goes back to the client (RFC 6749 4.1.2.1); without, the redirect URI is
// not trusted and the page shows the error itself.
type authzFailure struct {
	redirect bool
	code     string
	desc     string
}

// check validates the request in RFC 6749's order: the client and its
// redirect URI first (never redirect to an unverified URI), then the rest.
func (s *Server) checkAuthz(a authzRequest) (OAuthClient, *authzFailure) {
	c, ok := s.oauthClient(a.ClientID)
	if !ok {
		return c, &authzFailure{code: "invalid_client", desc: "The application asking you to sign in is not known to this server."}
	}
	matched := false
	for _, r := range c.RedirectURIs {
		if r == a.RedirectURI {
			matched = true
		}
	}
	if !matched {
		return c, &authzFailure{code: "invalid_request", desc: "The application's redirect address is not registered with this server."}
	}
	switch {
	case a.ResponseType != "code":
		return c, &authzFailure{redirect: true, code: "unsupported_response_type", desc: "Only response_type=code is supported."}
	case len(a.State) > 1000 || len(a.Nonce) > 1000 || len(a.Scope) > 1000:
		return c, &authzFailure{redirect: true, code: "invalid_request", desc: "state, nonce and scope are at most 1000 bytes."}
	case a.CodeChallenge == "" && c.Secret == "":
		return c, &authzFailure{redirect: true, code: "invalid_request", desc: "code_challenge is required for public clients (PKCE, S256)."}
	case a.CodeChallenge != "" && a.CodeChallengeMethod != "S256":
		return c, &authzFailure{redirect: true, code: "invalid_request", desc: "code_challenge_method must be S256."}
	case a.CodeChallenge != "" && !validS256Challenge(a.CodeChallenge):
		return c, &authzFailure{redirect: true, code: "invalid_request", desc: "code_challenge must be the base64url SHA-256 of the verifier (43 characters)."}
	}
	return c, nil
}

func validS256Challenge(c string) bool {
	if len(c) != s256ChallengeLen {
		return false
	}
	b, err := base64.RawURLEncoding.DecodeString(c)
	return err == nil && len(b) == sha256.Size
}

// validVerifier is RFC 7636 4.1: 43-128 unreserved characters.
func validVerifier(v string) bool {
	if len(v) < 43 || len(v) > 128 {
		return false
	}
	for _, r := range v {
		if !(r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || strings.ContainsRune("-._~", r)) {
			return false
		}
	}
	return true
}

// redirectBack sends the browser to the client's redirect URI with params
// added to its query (RFC 6749 3.1.2: the URI's own query is kept).
func redirectBack(w http.ResponseWriter, r *http.Request, redirectURI string, params url.Values) {
	u, _ := url.Parse(redirectURI) // checked against the registered URI
	q := u.Query()
	for k, vs := range params {
		for _, v := range vs {
			if v != "" {
				q.Add(k, v)
			}
		}
	}
	u.RawQuery = q.Encode()
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, u.String(), http.StatusSeeOther)
}

// authorizePage is what the sign-in page template gets.
type authorizePage struct {
	Req          authzRequest
	Mode         string // "signin" or "register"
	Email        string
	FirstName    string
	LastName     string
	Message      string            // a failure not tied to one field
	Errors       map[string]string // by field
	Fatal        string            // the request itself is bad: no form
	Registration bool
	CSRF         string // the form's token, bound to the request (signinToken)
}

// authorizeGet shows the sign-in page, or the request's error.
func (s *Server) authorizeGet(rq *request) error {
	a := authzRequestFrom(rq.r.URL.Query())
	if _, f := s.checkAuthz(a); f != nil {
		if f.redirect {
			redirectBack(rq.w, rq.r, a.RedirectURI, url.Values{"error": {f.code}, "error_description": {f.desc}, "state": {a.State}})
			return nil
		}
		return s.renderAuthorize(rq, http.StatusBadRequest, authorizePage{Fatal: f.desc})
	}
	mode := "signin"
	if rq.r.URL.Query().Get("screen_hint") == "signup" && s.cfg.Registration {
		mode = "register"
	}
	return s.renderAuthorize(rq, http.StatusOK, authorizePage{Req: a, Mode: mode, Email: rq.r.URL.Query().Get("login_hint")})
}

// authorizePost signs in or registers, then redirects with a code.
func (s *Server) authorizePost(rq *request) error {
	if err := rq.r.ParseForm(); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return errBodyTooLarge
		}
		return s.renderAuthorize(rq, http.StatusBadRequest, authorizePage{Fatal: "The form could not be read."})
	}
	form := rq.r.PostForm
	a := authzRequestFrom(form)
	client, f := s.checkAuthz(a)
	if f != nil {
		if f.redirect {
			redirectBack(rq.w, rq.r, a.RedirectURI, url.Values{"error": {f.code}, "error_description": {f.desc}, "state": {a.State}})
			return nil
		}
		return s.renderAuthorize(rq, http.StatusBadRequest, authorizePage{Fatal: f.desc})
	}
	page := authorizePage{
		Req: a, Mode: form.Get("action"), Email: strings.TrimSpace(form.Get("email")),
		FirstName: form.Get("first_name"), LastName: form.Get("last_name"),
	}
	if !sameSitePost(rq.r) || !validSigninToken(rq.r, a, form.Get("csrf")) {
		// A cross-site post (login CSRF) or a form this browser was not
		// given: nothing happens; the page comes back with a fresh form.
		return s.renderAuthorize(rq, http.StatusForbidden, withMessage(page,
			"This sign-in form has expired or was sent from another site. Please check your details and try again."))
	}
	var u db.User
	switch page.Mode {
	case "signin":
		var err error
		if u, err = s.pageSignIn(rq, page.Email, form.Get("password")); err != nil {
			return s.renderAuthorizeError(rq, page, err)
		}
	case "register":
		var err error
		if u, err = s.pageRegister(rq, registerBody{Email: page.Email, Password: form.Get("password"), FirstName: page.FirstName, LastName: page.LastName}); err != nil {
			return s.renderAuthorizeError(rq, page, err)
		}
	default:
		page.Mode = "signin"
		return s.renderAuthorize(rq, http.StatusBadRequest, withMessage(page, "Choose to sign in or to register."))
	}
	code := randomToken(32)
	now := s.clock()
	err := s.store.InTx(rq.ctx, func(q *db.Queries) error {
		// Expired codes are swept here, so the table holds at most a
		// minute of sign-ins.
		if err := q.OAuthCodeDeleteExpired(rq.ctx, db.FormatTime(now)); err != nil {
			return err
		}
		return q.OAuthCodeCreate(rq.ctx, db.OAuthCodeCreateParams{
			CodeHash: hashToken(code), ClientID: client.ID, RedirectUri: a.RedirectURI, UserID: u.ID,
			CodeChallenge: a.CodeChallenge, Nonce: a.Nonce, FamilyID: s.store.IDs.Next(),
			ExpiresAt: db.FormatTime(now.Add(authCodeTTL)), CreatedAt: db.FormatTime(now),
		})
	})
	if err != nil {
		return err
	}
	redirectBack(rq.w, rq.r, a.RedirectURI, url.Values{"code": {code}, "state": {a.State}})
	return nil
}

// pageSignIn checks a password exactly as the password grant does, against
// the same guessing buckets.
func (s *Server) pageSignIn(rq *request, email, pw string) (db.User, error) {
	p := problems{}
	if email == "" {
		p.add("email", "is required")
	}
	if pw == "" {
		p.add("password", "is required")
	}
	if err := p.err(); err != nil {
		return db.User{}, err
	}
	g := guessOf("password", email)
	if err := s.allowGuess(rq, g); err != nil {
		return db.User{}, err
	}
	u, err := s.store.R.UserGetByEmail(rq.ctx, email)
	if err != nil && !db.IsNotFound(err) {
		return db.User{}, err
	}
	if !checkPassword(u.PasswordHash, pw) {
		s.failedGuess(rq, g)
		return db.User{}, badRequest("The e-mail address or password is wrong.")
	}
	return u, nil
}

// pageRegister makes an account with the rules of POST /auth/register.
func (s *Server) pageRegister(rq *request, b registerBody) (db.User, error) {
	if !s.cfg.Registration {
		return db.User{}, forbidden("Registration is turned off on this server.")
	}
	g := guess{kind: "register"}
	if err := s.allowGuess(rq, g); err != nil {
		return db.User{}, err
	}
	s.failedGuess(rq, g)
	if err := validateRegistration(&b); err != nil {
		return db.User{}, err
	}
	hash, err := s.hashPassword(b.Password)
	if err != nil {
		return db.User{}, err
	}
	return s.createUser(rq.ctx, b.Email, hash, b.FirstName, b.LastName, 0, false)
}

func withMessage(p authorizePage, msg string) authorizePage {
	p.Message = msg
	return p
}

// renderAuthorizeError shows a client-facing error on the page (fields next
// to their inputs); anything else goes to the usual 500.
func (s *Server) renderAuthorizeError(rq *request, page authorizePage, err error) error {
	var e *Error
	if !errors.As(db.Classify(err), &e) {
		return err
	}
	if len(e.Fields) > 0 {
		page.Errors = e.Fields
	} else {
		page.Message = e.Message
	}
	return s.renderAuthorize(rq, e.Status, page)
}

// authorizeCSS is the page's only style; the CSP allows exactly it by hash.
const authorizeCSS = `body{font:16px/1.5 system-ui,sans-serif;margin:0;background:#f4f5f7;color:#1b1f24}
main{max-width:26rem;margin:2rem auto;padding:1.5rem;background:#fff;border-radius:8px;box-shadow:0 1px 3px #0003}
h1{font-size:1.4rem;margin:0 0 1rem}label{display:block;margin:.75rem 0 .25rem;font-weight:600}
input{box-sizing:border-box;width:100%;padding:.6rem;font:inherit;border:1px solid #8a929c;border-radius:4px}
input:focus,button:focus,a:focus{outline:3px solid #2563eb;outline-offset:2px}
button{margin-top:1rem;width:100%;padding:.7rem;font:inherit;font-weight:600;color:#fff;background:#1d4ed8;border:0;border-radius:4px;cursor:pointer}
.err{color:#b91c1c;margin:.25rem 0 0}.msg{padding:.75rem;background:#fee2e2;color:#7f1d1d;border-radius:4px}
nav{margin-top:1.25rem;text-align:center}
.brand{display:flex;align-items:center;gap:.5rem;margin:0 0 1rem;font-weight:700;font-size:1.15rem;color:#0f172a}
.mark{display:inline-flex;align-items:center;justify-content:center;width:1.9rem;height:1.9rem;border-radius:7px;background:#1d4ed8;color:#fff;font-size:1rem}@media (max-width:480px){main{margin:0;border-radius:0;min-height:100vh}}`

var authorizeCSP = func() string {
	sum := sha256.Sum256([]byte(authorizeCSS))
	return "default-src 'none'; style-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'; frame-ancestors 'none'; base-uri 'none'"
}()

var authorizeTemplate = template.Must(template.New("authorize").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>{{if eq .P.Mode "register"}}Create an account{{else}}Sign in{{end}} · Workspace</title>
<style>{{.CSS}}</style></head><body><main>
<p class="brand"><span class="mark" aria-hidden="true">W</span>Workspace</p>
{{- with .P}}{{if .Fatal}}
<h1>Sign-in cannot continue</h1><p class="msg" role="alert">{{.Fatal}}</p>
{{- else}}
<h1>{{if eq .Mode "register"}}Create an account{{else}}Sign in{{end}}</h1>
{{if .Message}}<p class="msg" role="alert" id="message">{{.Message}}</p>{{end}}
<form method="post" action="/oauth/authorize" novalidate>
<input type="hidden" name="action" value="{{.Mode}}">
<input type="hidden" name="csrf" value="{{.CSRF}}">
{{with .Req}}<input type="hidden" name="client_id" value="{{.ClientID}}">
<input type="hidden" name="redirect_uri" value="{{.RedirectURI}}">
<input type="hidden" name="response_type" value="{{.ResponseType}}">
<input type="hidden" name="scope" value="{{.Scope}}">
<input type="hidden" name="state" value="{{.State}}">
<input type="hidden" name="code_challenge" value="{{.CodeChallenge}}">
<input type="hidden" name="code_challenge_method" value="{{.CodeChallengeMethod}}">
<input type="hidden" name="nonce" value="{{.Nonce}}">{{end}}
{{if eq .Mode "register"}}
<label for="first_name">First name</label>
<input id="first_name" name="first_name" autocomplete="given-name" value="{{.FirstName}}"{{with index .Errors "first_name"}} aria-invalid="true" aria-describedby="first_name-error"{{end}}>
{{with index .Errors "first_name"}}<p class="err" id="first_name-error">First name {{.}}</p>{{end}}
<label for="last_name">Last name</label>
<input id="last_name" name="last_name" autocomplete="family-name" value="{{.LastName}}"{{with index .Errors "last_name"}} aria-invalid="true" aria-describedby="last_name-error"{{end}}>
{{with index .Errors "last_name"}}<p class="err" id="last_name-error">Last name {{.}}</p>{{end}}
{{end}}
<label for="email">E-mail address</label>
<input id="email" name="email" type="email" autocomplete="email" required value="{{.Email}}"{{with index .Errors "email"}} aria-invalid="true" aria-describedby="email-error"{{end}}>
{{with index .Errors "email"}}<p class="err" id="email-error">E-mail address {{.}}</p>{{end}}
<label for="password">Password</label>
<input id="password" name="password" type="password" required autocomplete="{{if eq .Mode "register"}}new-password{{else}}current-password{{end}}"{{with index .Errors "password"}} aria-invalid="true" aria-describedby="password-error"{{end}}>
{{with index .Errors "password"}}<p class="err" id="password-error">Password {{.}}</p>{{end}}
<button type="submit">{{if eq .Mode "register"}}Create account{{else}}Sign in{{end}}</button>
</form>
{{if eq .Mode "signin"}}<nav><a href="{{.ForgotURL}}">Forgot password?</a></nav>{{end}}
{{if .Registration}}<nav>{{if eq .Mode "register"}}<a href="{{.SwitchURL}}">I have an account: sign in</a>{{else}}<a href="{{.SwitchURL}}">New here? Create an account</a>{{end}}</nav>{{end}}
{{- end}}{{end}}
</main></body></html>
`))

// authorizeView adds what the template derives.
type authorizeView struct {
	authorizePage
	SwitchURL string
	ForgotURL string // the reset pages, which link back to this one
}

func (s *Server) renderAuthorize(rq *request, status int, p authorizePage) error {
	p.Registration = s.cfg.Registration
	if p.Mode != "register" {
		p.Mode = "signin"
	}
	v := authorizeView{authorizePage: p}
	if p.Fatal == "" {
		q := url.Values{"client_id": {p.Req.ClientID}, "redirect_uri": {p.Req.RedirectURI}, "response_type": {p.Req.ResponseType}}
		for k, val := range map[string]string{"scope": p.Req.Scope, "state": p.Req.State, "code_challenge": p.Req.CodeChallenge,
			"code_challenge_method": p.Req.CodeChallengeMethod, "nonce": p.Req.Nonce, "login_hint": p.Email} {
			if val != "" {
				q.Set(k, val)
			}
		}
		back := "/oauth/authorize?" + q.Encode()
		v.ForgotURL = "/auth/forgot?" + url.Values{"email": {p.Email}, "next": {back}}.Encode()
		if p.Mode == "signin" {
			q.Set("screen_hint", "signup")
		}
		v.SwitchURL = "/oauth/authorize?" + q.Encode()
	}
	if p.Fatal == "" {
		v.CSRF = signinToken(rq.w, rq.r, p.Req, rq.r.TLS != nil || strings.HasPrefix(s.cfg.Issuer, "https://"))
	}
	h := rq.w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Security-Policy", authorizeCSP+formAction(p.Req.RedirectURI))
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	rq.w.WriteHeader(status)
	return authorizeTemplate.Execute(rq.w, struct {
		P   authorizeView
		CSS template.CSS
	}{v, template.CSS(authorizeCSS)})
}

// signinCookie holds a random value known only to this browser; the form's
// hidden token is an HMAC of the authorization request keyed by it, so a
// form is good only in the browser it was given to and only for its own
// request (client, redirect, state, PKCE challenge, nonce). Another site
// can neither read the cookie nor, with SameSite=Strict, send it.
const signinCookie = "signin_form"

func signinBinding(a authzRequest) string {
	return strings.Join([]string{a.ClientID, a.RedirectURI, a.State, a.CodeChallenge, a.Nonce}, "\x00")
}

func signinMAC(key string, a authzRequest) string {
	m := hmac.New(sha256.New, []byte(key))
	m.Write([]byte(signinBinding(a)))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// signinToken is the form's token, setting the cookie when the browser has
// none (an existing one is kept, so two tabs' forms both stay good). The
// cookie is Secure when the server is reached over HTTPS: directly, or
// behind a proxy that ends TLS (an https issuer says so).
func signinToken(w http.ResponseWriter, r *http.Request, a authzRequest, secure bool) string {
	key := ""
	if c, err := r.Cookie(signinCookie); err == nil && len(c.Value) >= 32 {
		key = c.Value
	} else {
		key = randomToken(32)
		http.SetCookie(w, &http.Cookie{Name: signinCookie, Value: key, Path: "/oauth/authorize", HttpOnly: true,
			Secure: secure, SameSite: http.SameSiteStrictMode, MaxAge: 3600})
	}
	return signinMAC(key, a)
}

func validSigninToken(r *http.Request, a authzRequest, token string) bool {
	c, err := r.Cookie(signinCookie)
	if err != nil || len(c.Value) < 32 || token == "" {
		return false
	}
	return hmac.Equal([]byte(token), []byte(signinMAC(c.Value, a)))
}

// sameSitePost refuses a post a browser says came from another site:
// Sec-Fetch-Site other than same-origin, or (from a browser without it) an
// Origin that is not this host. The page's no-referrer policy makes
// browsers send "Origin: null" with its own form, so null is left to the
// token check, as are clients that send neither (not browsers).
func sameSitePost(r *http.Request) bool {
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" {
		return site == "same-origin" || site == "none"
	}
	if origin := r.Header.Get("Origin"); origin != "" && origin != "null" {
		u, err := url.Parse(origin)
		if err != nil || u.Host != r.Host {
			return false
		}
	}
	return true
}

// formAction allows the form to post here and (Chromium applies
// form-action to the redirect that follows) to reach the client's origin.
func formAction(redirectURI string) string {
	dest := ""
	if u, err := url.Parse(redirectURI); err == nil && u.Scheme != "" && u.Host != "" {
		dest = " " + u.Scheme + "://" + u.Host
	}
	return "; form-action 'self'" + dest
}

// codeGrant exchanges a one-time code (RFC 6749 4.1.3, RFC 7636 4.6). A
// refusal comes back as errCode and desc (RFC 6749 5.2), err is for 500s.
func (s *Server) codeGrant(ctx context.Context, r *http.Request, form url.Values) (resp tokenResponse, errCode, desc string, err error) {
	clientID, secret, hasBasic := r.BasicAuth()
	if !hasBasic {
		clientID, secret = form.Get("client_id"), form.Get("client_secret")
	}
	code, redirectURI, verifier := form.Get("code"), form.Get("redirect_uri"), form.Get("code_verifier")
	if code == "" || redirectURI == "" || clientID == "" {
		return resp, "invalid_request", "code, redirect_uri and client_id are required.", nil
	}
	client, ok := s.oauthClient(clientID)
	if !ok || (client.Secret != "" && subtle.ConstantTimeCompare([]byte(secret), []byte(client.Secret)) != 1) {
		return resp, "invalid_client", "The client is unknown or its secret is wrong.", nil
	}
	if verifier != "" && !validVerifier(verifier) {
		return resp, "invalid_request", "code_verifier must be 43-128 unreserved characters.", nil
	}
	const bad = "The code is invalid, used or expired, or was issued to another client or redirect URI."
	err = s.store.InTx(ctx, func(q *db.Queries) error {
		row, err := q.OAuthCodeGet(ctx, hashToken(code))
		if db.IsNotFound(err) {
			errCode, desc = "invalid_grant", bad
			return nil
		} else if err != nil {
			return err
		}
		now := s.clock()
		if row.ExpiresAt <= db.FormatTime(now) || row.ClientID != client.ID || row.RedirectUri != redirectURI {
			errCode, desc = "invalid_grant", bad
			return nil
		}
		if row.CodeChallenge == "" && verifier != "" || row.CodeChallenge != "" && !s256Matches(verifier, row.CodeChallenge) {
			errCode, desc = "invalid_grant", "The code_verifier does not match the code_challenge."
			return nil
		}
		text := db.FormatTime(now)
		n, err := q.OAuthCodeUse(ctx, db.OAuthCodeUseParams{UsedAt: &text, CodeHash: row.CodeHash})
		if err != nil {
			return err
		}
		if n == 0 {
			// A replayed code: whoever redeemed it first may be a thief, so
			// the tokens it gave are revoked (RFC 6749 4.1.2).
			s.log.WarnContext(ctx, "authorization code reused: chain revoked", "user_id", row.UserID, "request_id", requestID(ctx))
			errCode, desc = "invalid_grant", bad
			return q.RefreshTokenRevokeFamily(ctx, row.FamilyID)
		}
		u, err := q.UserGet(ctx, row.UserID)
		if db.IsNotFound(err) {
			errCode, desc = "invalid_grant", bad
			return nil
		} else if err != nil {
			return err
		}
		resp, err = s.issueTokensFor(ctx, q, u, row.FamilyID, idTokenFor{clientID: client.ID, nonce: row.Nonce})
		return err
	})
	return resp, errCode, desc, err
}

func s256Matches(verifier, challenge string) bool {
	if verifier == "" {
		return false
	}
	sum := sha256.Sum256([]byte(verifier))
	return subtle.ConstantTimeCompare([]byte(base64.RawURLEncoding.EncodeToString(sum[:])), []byte(challenge)) == 1
}
