package server

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/MicahParks/keyfunc/v3"
	"github.com/golang-jwt/jwt/v5"
	"golang.org/x/crypto/bcrypt"
	"golang.org/x/time/rate"

	"workspace/db"
)

const (
	accessTokenTTL  = time.Hour
	refreshTokenTTL = 30 * 24 * time.Hour
)

// ExternalIssuer is an OpenID provider whose tokens the server also trusts.
type ExternalIssuer struct {
	URL      string
	Audience string
	// KeyRefresh is how often its key set is fetched again, so a key the
	// issuer removed stops working (0: externalKeyRefresh).
	KeyRefresh time.Duration
}

// externalKeyRefresh bounds how long a key an external issuer removed (say,
// after a leak) still verifies tokens here, cached ones included.
const externalKeyRefresh = 10 * time.Minute

// claims are the access token claims, local or external.
type claims struct {
	jwt.RegisteredClaims
	Email         string    `json:"email,omitempty"`
	EmailVerified *flexBool `json:"email_verified,omitempty"`
	GivenName     string    `json:"given_name,omitempty"`
	FamilyName    string    `json:"family_name,omitempty"`
	Name          string    `json:"name,omitempty"`
	Nonce         string    `json:"nonce,omitempty"` // ID tokens of the code flow

	// For a verified external token: its issuer and key, so a cached
	// verification can be dropped when the issuer removes that key.
	ext *externalVerifier
	kid string
}

// flexBool is a boolean claim that some issuers (AWS Cognito) send as the
// string "true" or "false".
type flexBool bool

func (b *flexBool) UnmarshalJSON(raw []byte) error {
	switch string(raw) {
	case "true", `"true"`:
		*b = true
	case "false", `"false"`, "null":
		*b = false
	default:
		return fmt.Errorf("not a boolean: %s", raw)
	}
	return nil
}

// authenticator verifies bearer tokens from the server itself and from the
// configured external issuers.
type authenticator struct {
	issuer   string
	audience string
	keys     atomic.Pointer[keySet]
	external map[string]*externalVerifier // by issuer URL
	parser   *jwt.Parser

	// verified caches tokens already checked, until they expire: a signature
	// check costs more than the rest of a typical read.
	mu       sync.Mutex
	verified map[[32]byte]cachedToken
}

type cachedToken struct {
	userID  int64
	expires time.Time
	ext     *externalVerifier // nil for our own tokens
	kid     string
}

type externalVerifier struct {
	audience string
	issuer   string
	httpc    *http.Client
	log      *slog.Logger
	// life bounds keyfunc's background refresh: the server's lifetime, not
	// one request's.
	life    context.Context
	refresh time.Duration // how often the key set is fetched again

	mu         sync.Mutex
	keys       keyfunc.Keyfunc // fetched on first use
	failedAt   time.Time       // last failed discovery, to not retry on every request
	lastFailed error
}

// discoveryRetry is how long a failed discovery is remembered: an issuer that
// is down must not cost one outgoing request per incoming one.
const discoveryRetry = 10 * time.Second

// newAuthenticator builds the verifier. now is the server's clock: expiry is
// judged by it, so tests that move the clock see tokens expire.
func newAuthenticator(life context.Context, issuer, audience string, keys *keySet, ext []ExternalIssuer, httpc *http.Client, log *slog.Logger, now func() time.Time) *authenticator {
	a := &authenticator{
		issuer:   issuer,
		audience: audience,
		external: map[string]*externalVerifier{},
		parser: jwt.NewParser(jwt.WithValidMethods([]string{"RS256"}), jwt.WithExpirationRequired(),
			jwt.WithLeeway(30*time.Second), jwt.WithTimeFunc(now)),
		verified: map[[32]byte]cachedToken{},
	}
	a.keys.Store(keys)
	for _, e := range ext {
		iss := strings.TrimSuffix(e.URL, "/")
		refresh := e.KeyRefresh
		if refresh <= 0 {
			refresh = externalKeyRefresh
		}
		a.external[iss] = &externalVerifier{audience: e.Audience, issuer: iss, httpc: httpc, log: log, life: life, refresh: refresh}
	}
	return a
}

// sign makes a JWT with the server's key.
func (a *authenticator) sign(c jwt.Claims, typ string) (string, error) {
	t := jwt.NewWithClaims(jwt.SigningMethodRS256, c)
	key := a.current()
	t.Header["kid"] = key.kid
	t.Header["typ"] = typ
	return t.SignedString(key.priv)
}

// accessTokenType is the JWT type of our access tokens (RFC 9068). Only
// tokens of this type are bearer tokens: an ID token (typ JWT) or a signing
// token, signed with the same key, must not open the API.
const accessTokenType = "at+jwt"

func isAccessTokenType(typ string) bool {
	typ = strings.ToLower(typ)
	return typ == accessTokenType || typ == "application/"+accessTokenType
}

// accessToken issues a one-hour access token for a user.
func (a *authenticator) accessToken(u db.User, now time.Time) (string, error) {
	return a.sign(claims{
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer:    a.issuer,
			Subject:   db.ID(u.ID).String(),
			Audience:  jwt.ClaimStrings{a.audience},
			ExpiresAt: jwt.NewNumericDate(now.Add(accessTokenTTL)),
			IssuedAt:  jwt.NewNumericDate(now),
			ID:        randomToken(16),
		},
		Email: u.Email,
	}, accessTokenType)
}

// verify checks a bearer token and returns its claims and whether it came
// from the server itself.
func (a *authenticator) verify(ctx context.Context, raw string) (*claims, bool, error) {
	var c claims
	var local bool
	_, err := a.parser.ParseWithClaims(raw, &c, func(t *jwt.Token) (any, error) {
		iss, _ := t.Claims.GetIssuer()
		if iss == a.issuer {
			local = true
			if typ, _ := t.Header["typ"].(string); !isAccessTokenType(typ) {
				return nil, errors.New("not an access token")
			}
			return a.publicKey(t)
		}
		ev, ok := a.external[strings.TrimSuffix(iss, "/")]
		if !ok {
			return nil, errors.New("unknown issuer")
		}
		kf, err := ev.keyfunc(ctx)
		if err != nil {
			return nil, err
		}
		c.ext = ev
		c.kid, _ = t.Header["kid"].(string)
		// An unknown kid makes keyfunc refetch the JWKS (rate limited), so
		// a key rotated at the issuer works without a restart.
		return kf.KeyfuncCtx(ctx)(t)
	})
	if err != nil {
		return nil, false, err
	}
	want := a.audience
	if !local {
		want = a.external[strings.TrimSuffix(c.Issuer, "/")].audience
	}
	if !slices.Contains(c.Audience, want) {
		return nil, false, errors.New("token is not for this audience")
	}
	if c.Subject == "" {
		return nil, false, errors.New("token has no subject")
	}
	return &c, local, nil
}

// keyfunc fetches the issuer's discovery document and JWKS on first use;
// keyfunc refetches the JWKS hourly and when a token names an unknown key.
func (ev *externalVerifier) keyfunc(ctx context.Context) (keyfunc.Keyfunc, error) {
	ev.mu.Lock()
	defer ev.mu.Unlock()
	if ev.keys != nil {
		return ev.keys, nil
	}
	if ev.lastFailed != nil && time.Since(ev.failedAt) < discoveryRetry {
		return nil, ev.lastFailed
	}
	kf, err := ev.fetch(ctx)
	if err != nil {
		ev.failedAt, ev.lastFailed = time.Now(), err
		ev.log.Warn("external issuer unavailable", "issuer", ev.issuer, "err", err)
		return nil, err
	}
	ev.keys, ev.lastFailed = kf, nil
	return kf, nil
}

func (ev *externalVerifier) fetch(ctx context.Context) (keyfunc.Keyfunc, error) {
	jwksURL, err := discoverJWKS(ctx, ev.httpc, ev.issuer)
	if err != nil {
		return nil, err
	}
	// The first JWKS fetch must succeed, else the next request retries
	// discovery instead of living with an empty key set until a refresh.
	strict := false
	kf, err := keyfunc.NewDefaultOverrideCtx(ev.life, []string{jwksURL}, keyfunc.Override{
		Client:                    ev.httpc,
		HTTPTimeout:               10 * time.Second,
		NoErrorReturnFirstHTTPReq: &strict,
		// A token with an unknown kid refetches the JWKS at most once a
		// minute, so tokens with made-up kids cannot make the server hammer
		// the issuer. RateLimitWaitMax bounds both the wait for the limiter
		// (a longer wait fails at once) and the refetch itself.
		RefreshUnknownKID: rate.NewLimiter(rate.Every(time.Minute), 1),
		RateLimitWaitMax:  5 * time.Second,
		RefreshInterval:   ev.refresh,
		RefreshErrorHandlerFunc: func(u string) func(context.Context, error) {
			return func(_ context.Context, err error) {
				ev.log.Warn("external issuer keys refresh failed", "issuer", ev.issuer, "url", u, "err", err)
			}
		},
	})
	if err != nil {
		return nil, fmt.Errorf("jwks %s: %w", jwksURL, err)
	}
	return kf, nil
}

func discoverJWKS(ctx context.Context, httpc *http.Client, issuer string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, issuer+"/.well-known/openid-configuration", nil)
	if err != nil {
		return "", err
	}
	resp, err := httpc.Do(req)
	if err != nil {
		return "", fmt.Errorf("discovery %s: %w", issuer, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("discovery %s: status %d", issuer, resp.StatusCode)
	}
	var doc struct {
		Issuer  string `json:"issuer"`
		JWKSURI string `json:"jwks_uri"`
	}
	if err := decodeLimited(resp.Body, &doc); err != nil {
		return "", fmt.Errorf("discovery %s: %w", issuer, err)
	}
	if strings.TrimSuffix(doc.Issuer, "/") != issuer || doc.JWKSURI == "" {
		return "", fmt.Errorf("discovery %s: issuer or jwks_uri mismatch", issuer)
	}
	return doc.JWKSURI, nil
}

// cached returns the user id of a token verified before and not yet expired.
func (a *authenticator) cached(ctx context.Context, raw string, now time.Time) (int64, bool) {
	sum := sha256.Sum256([]byte(raw))
	a.mu.Lock()
	c, ok := a.verified[sum]
	a.mu.Unlock()
	if !ok || !now.Before(c.expires) {
		return 0, false
	}
	if c.ext != nil && !c.ext.hasKey(ctx, c.kid) {
		// The issuer removed the key since: verify again (and fail).
		a.mu.Lock()
		delete(a.verified, sum)
		a.mu.Unlock()
		return 0, false
	}
	return c.userID, true
}

// hasKey reports whether the issuer's current key set (as last fetched)
// still holds kid.
func (ev *externalVerifier) hasKey(ctx context.Context, kid string) bool {
	ev.mu.Lock()
	kf := ev.keys
	ev.mu.Unlock()
	if kf == nil {
		return false
	}
	_, err := kf.Storage().KeyRead(ctx, kid)
	return err == nil
}

func (a *authenticator) remember(raw string, userID int64, c *claims, now time.Time) {
	expires := c.ExpiresAt.Time
	sum := sha256.Sum256([]byte(raw))
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.verified) >= 100_000 { // bound memory: drop expired, then everything
		for k, v := range a.verified {
			if !now.Before(v.expires) {
				delete(a.verified, k)
			}
		}
		if len(a.verified) >= 100_000 {
			clear(a.verified)
		}
	}
	a.verified[sum] = cachedToken{userID: userID, expires: expires, ext: c.ext, kid: c.kid}
}

func randomToken(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

func hashToken(t string) string {
	sum := sha256.Sum256([]byte(t))
	return hex.EncodeToString(sum[:])
}

// Password hashing is deliberately slow; bound how many run at once so a
// burst of sign-ins cannot starve every other request of CPU.
var hashSlots = make(chan struct{}, max(1, runtime.NumCPU()))

// bcryptCost is a variable so tests can use the minimum cost.
var bcryptCost = 10

// hashPassword hashes at the configured cost (Config.PasswordCost), else
// bcryptCost.
func (s *Server) hashPassword(pw string) (string, error) {
	cost := s.cfg.PasswordCost
	if cost == 0 {
		cost = bcryptCost
	}
	hashSlots <- struct{}{}
	defer func() { <-hashSlots }()
	h, err := bcrypt.GenerateFromPassword([]byte(pw), cost)
	return string(h), err
}

func checkPassword(hash, pw string) bool {
	hashSlots <- struct{}{}
	defer func() { <-hashSlots }()
	if hash == "" {
		// Accounts without a local password (external sign-in): spend the
		// same time as a real check so timing does not reveal them.
		_ = bcrypt.CompareHashAndPassword(dummyHash, []byte(pw))
		return false
	}
	return bcrypt.CompareHashAndPassword([]byte(hash), []byte(pw)) == nil
}

var dummyHash, _ = bcrypt.GenerateFromPassword([]byte("not a password"), 10)

// jwk is the public half of the signing key in JWKS form.
func (k *signingKey) jwk() map[string]string {
	pub := k.priv.PublicKey
	return map[string]string{
		"kty": "RSA", "use": "sig", "alg": "RS256", "kid": k.kid,
		"n": base64.RawURLEncoding.EncodeToString(pub.N.Bytes()),
		"e": base64.RawURLEncoding.EncodeToString(bigEndian(pub.E)),
	}
}

func bigEndian(e int) []byte {
	var b []byte
	for e > 0 {
		b = append([]byte{byte(e)}, b...)
		e >>= 8
	}
	return b
}

// userCache keeps callers' user rows while the users table has not been
// written (see genCache, db.TableVersion): every request loads its caller,
// and a write to any other table (a project created) cannot change it.
type userCache = genCache[int64, db.User]

// caller loads the live user with this id, from the cache when it is current.
func (s *Server) caller(ctx context.Context, id int64) (db.User, error) {
	gen := s.store.TableVersion(db.TableUsers)
	if u, ok := s.users.get(id, gen); ok {
		return u, nil
	}
	u, err := s.store.R.UserGet(ctx, id)
	if err == nil {
		s.users.put(u.ID, u, gen)
	}
	return u, err
}
