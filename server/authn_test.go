package server

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"golang.org/x/crypto/bcrypt"
)

// authnGet sends GET path with a raw Authorization header ("" sends none).
func (e *testEnv) authnGet(path, authorization string) *testResponse {
	e.t.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	return e.serve(req)
}

// authnClaims are valid claims for u from the test server, which a case
// then spoils.
func (e *testEnv) authnClaims(u *testUser) jwt.MapClaims {
	now := e.clock.Now()
	return jwt.MapClaims{
		"iss": e.srv.cfg.Issuer, "sub": u.ID, "aud": e.srv.cfg.Audience,
		"exp": now.Add(time.Hour).Unix(), "iat": now.Unix(), "jti": "x", "email": u.Email,
	}
}

func signRS(t testing.TB, key *rsa.PrivateKey, kid string, method jwt.SigningMethod, c jwt.Claims) string {
	t.Helper()
	tok := jwt.NewWithClaims(method, c)
	tok.Header["typ"] = accessTokenType // so spoiled tokens fail for their own reason
	if kid != "" {
		tok.Header["kid"] = kid
	}
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatalf("sign: %v", err)
	}
	return s
}

func newRSAKey(t testing.TB) *rsa.PrivateKey {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func assertUnauthorized(t testing.TB, r *testResponse) {
	t.Helper()
	if r.Status != http.StatusUnauthorized {
		t.Fatalf("status %d, want 401; body %s", r.Status, r.Body)
	}
	if got := r.Header.Get("WWW-Authenticate"); !strings.HasPrefix(got, "Bearer") {
		t.Fatalf("WWW-Authenticate = %q, want Bearer ...", got)
	}
	assertErrorBody(t, r)
}

func TestBearerRejects(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	alice := e.user("alice")
	key := e.srv.auth.current()
	other := newRSAKey(t)
	pubDER, err := x509.MarshalPKIXPublicKey(&key.priv.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	pubPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER})
	hs := func(secret []byte) string {
		tok := jwt.NewWithClaims(jwt.SigningMethodHS256, e.authnClaims(alice))
		tok.Header["kid"] = key.kid
		s, err := tok.SignedString(secret)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	none := func() string {
		tok := jwt.NewWithClaims(jwt.SigningMethodNone, e.authnClaims(alice))
		tok.Header["kid"] = key.kid
		s, err := tok.SignedString(jwt.UnsafeAllowNoneSignatureType)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	spoil := func(f func(c jwt.MapClaims)) string {
		c := e.authnClaims(alice)
		f(c)
		return signRS(t, key.priv, key.kid, jwt.SigningMethodRS256, c)
	}
	// A token whose header says none but keeps a real RS256 signature.
	relabel := func() string {
		good := signRS(t, key.priv, key.kid, jwt.SigningMethodRS256, e.authnClaims(alice))
		parts := strings.Split(good, ".")
		parts[0] = base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"JWT","kid":"` + key.kid + `"}`))
		return strings.Join(parts, ".")
	}

	cases := []struct {
		name, auth string
	}{
		{"missing header", ""},
		{"wrong scheme", "Basic " + base64.StdEncoding.EncodeToString([]byte("alice:pw"))},
		{"scheme only", "Bearer"},
		{"empty token", "Bearer    "},
		{"garbage", "Bearer not-a-jwt"},
		{"three garbage parts", "Bearer a.b.c"},
		{"token without scheme", alice.Token},
		{"alg none", "Bearer " + none()},
		{"alg none header on a real signature", "Bearer " + relabel()},
		{"HS256 with the public key PEM as secret", "Bearer " + hs(pubPEM)},
		{"HS256 with the public key DER as secret", "Bearer " + hs(pubDER)},
		{"RS512 with the right key", "Bearer " + signRS(t, key.priv, key.kid, jwt.SigningMethodRS512, e.authnClaims(alice))},
		{"another RSA key with the right kid", "Bearer " + signRS(t, other, key.kid, jwt.SigningMethodRS256, e.authnClaims(alice))},
		{"another RSA key without kid", "Bearer " + signRS(t, other, "", jwt.SigningMethodRS256, e.authnClaims(alice))},
		{"another RSA key with its own kid", "Bearer " + signRS(t, other, "other", jwt.SigningMethodRS256, e.authnClaims(alice))},
		{"right key without kid", "Bearer " + signRS(t, key.priv, "", jwt.SigningMethodRS256, e.authnClaims(alice))},
		{"expired", "Bearer " + spoil(func(c jwt.MapClaims) { c["exp"] = e.clock.Now().Add(-time.Minute).Unix() })},
		{"no exp", "Bearer " + spoil(func(c jwt.MapClaims) { delete(c, "exp") })},
		{"not yet valid", "Bearer " + spoil(func(c jwt.MapClaims) { c["nbf"] = e.clock.Now().Add(time.Hour).Unix() })},
		{"wrong issuer", "Bearer " + spoil(func(c jwt.MapClaims) { c["iss"] = "http://evil.test" })},
		{"no issuer", "Bearer " + spoil(func(c jwt.MapClaims) { delete(c, "iss") })},
		{"wrong audience", "Bearer " + spoil(func(c jwt.MapClaims) { c["aud"] = "someone-else" })},
		{"no audience", "Bearer " + spoil(func(c jwt.MapClaims) { delete(c, "aud") })},
		{"subject not a snowflake", "Bearer " + spoil(func(c jwt.MapClaims) { c["sub"] = "alice" })},
		{"subject of nobody", "Bearer " + spoil(func(c jwt.MapClaims) { c["sub"] = "12345" })},
		{"no subject", "Bearer " + spoil(func(c jwt.MapClaims) { delete(c, "sub") })},
		{"typ JWT with the right key", "Bearer " + func() string {
			tok := jwt.NewWithClaims(jwt.SigningMethodRS256, e.authnClaims(alice))
			tok.Header["kid"] = key.kid
			s, _ := tok.SignedString(key.priv)
			return s
		}()},
		{"no typ with the right key", "Bearer " + func() string {
			tok := jwt.NewWithClaims(jwt.SigningMethodRS256, e.authnClaims(alice))
			tok.Header["kid"] = key.kid
			delete(tok.Header, "typ")
			s, _ := tok.SignedString(key.priv)
			return s
		}()},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := e.authnGet("/users/@me", tc.auth)
			assertUnauthorized(t, r)
			if got, presented := r.Header.Get("WWW-Authenticate"), tc.auth != ""; strings.Contains(got, "invalid_token") != presented {
				t.Fatalf("WWW-Authenticate = %q; want error=\"invalid_token\" exactly when a header was sent", got)
			}
		})
	}

	t.Run("control: the valid token works, scheme case-insensitive", func(t *testing.T) {
		for _, auth := range []string{"Bearer " + alice.Token, "bearer " + alice.Token, "Bearer  " + alice.Token + " "} {
			if r := e.authnGet("/users/@me", auth); r.Status != http.StatusOK {
				t.Fatalf("%q: status %d, want 200; body %s", auth[:8], r.Status, r.Body)
			}
		}
		c := e.authnClaims(alice)
		c["aud"] = []string{"other", e.srv.cfg.Audience}
		if r := e.authnGet("/users/@me", "Bearer "+signRS(t, key.priv, key.kid, jwt.SigningMethodRS256, c)); r.Status != http.StatusOK {
			t.Fatalf("audience list holding ours: status %d, want 200", r.Status)
		}
	})
}

// TestBearerExpiryAndCache: the verified-token cache never outlives the
// token, and never lets a deleted user in.
func TestBearerExpiryAndCache(t *testing.T) {
	t.Parallel()
	deleteUser := func(t *testing.T, e *testEnv, u *testUser) {
		t.Helper()
		if _, err := e.write(`UPDATE users SET deleted_at = ? WHERE id = ?`, e.srv.nowText(), u.id); err != nil {
			t.Fatal(err)
		}
	}
	// pin sends u's current token as it is: e.do mints a fresh one for
	// accounts made by e.user once theirs has expired.
	pin := func(u *testUser) *testUser { return &testUser{ID: u.ID, Email: u.Email, Token: u.Token} }
	t.Run("expired after being cached", func(t *testing.T) {
		e := newEnv(t)
		alice := pin(e.user("alice"))
		e.must(http.StatusOK, alice, "GET", "/users/@me", nil)
		if _, ok := e.srv.auth.cached(context.Background(), alice.Token, e.clock.Now()); !ok {
			t.Fatal("token not cached after a successful request; this test would prove nothing")
		}
		e.clock.Advance(59 * time.Minute)
		e.must(http.StatusOK, alice, "GET", "/users/@me", nil)
		// 30 seconds of leeway forgive clock skew, then no more.
		e.clock.Advance(time.Minute + 31*time.Second)
		assertUnauthorized(t, e.do(alice, "GET", "/users/@me", nil))
		e.clock.Advance(time.Hour)
		assertUnauthorized(t, e.do(alice, "GET", "/users/@me", nil))
	})
	t.Run("expired, never cached", func(t *testing.T) {
		e := newEnv(t)
		alice := pin(e.user("alice"))
		e.clock.Advance(accessTokenTTL + time.Minute)
		assertUnauthorized(t, e.do(alice, "GET", "/users/@me", nil))
	})
	t.Run("deleted user, token cached", func(t *testing.T) {
		e := newEnv(t)
		alice := e.user("alice")
		e.must(http.StatusOK, alice, "GET", "/users/@me", nil)
		deleteUser(t, e, alice)
		assertUnauthorized(t, e.do(alice, "GET", "/users/@me", nil))
		assertUnauthorized(t, e.do(alice, "GET", "/oauth/userinfo", nil))
	})
	t.Run("deleted user, token never used", func(t *testing.T) {
		e := newEnv(t)
		alice := e.user("alice")
		deleteUser(t, e, alice)
		assertUnauthorized(t, e.do(alice, "GET", "/users/@me", nil))
	})
	t.Run("test users stay signed in when the test clock moves", func(t *testing.T) {
		e := newEnv(t)
		alice := e.user("alice")
		old := alice.Token
		e.clock.Advance(72 * time.Hour)
		e.must(http.StatusOK, alice, "GET", "/users/@me", nil)
		if alice.Token == old {
			t.Fatal("the harness sent the expired token and the server accepted it")
		}
		assertUnauthorized(t, e.do(&testUser{Token: old}, "GET", "/users/@me", nil))
	})
	t.Run("cache serves the current user row", func(t *testing.T) {
		e := newEnv(t)
		alice := e.user("alice")
		e.must(http.StatusOK, alice, "GET", "/users/@me", nil)
		if _, err := e.write(`UPDATE users SET first_name = 'Renamed' WHERE id = ?`, alice.id); err != nil {
			t.Fatal(err)
		}
		if got := e.must(http.StatusOK, alice, "GET", "/users/@me", nil).obj(t)["first_name"]; got != "Renamed" {
			t.Fatalf("first_name = %v, want Renamed", got)
		}
	})
}

func TestSigningKeySurvivesRestart(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	alice := e.user("alice")
	// The second server's background jobs must end before the store
	// closes: one left running wrote into the closed store a minute later.
	ctx, cancel := context.WithCancel(context.Background())
	again, err := New(ctx, e.store, e.cfg)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); again.Wait() })
	if again.auth.current().kid != e.srv.auth.current().kid {
		t.Fatalf("kid after restart = %q, want %q", again.auth.current().kid, e.srv.auth.current().kid)
	}
	req := httptest.NewRequest("GET", "/users/@me", nil)
	req.Header.Set("Authorization", "Bearer "+alice.Token)
	rec := httptest.NewRecorder()
	again.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("old token on a restarted server: status %d, want 200", rec.Code)
	}
}

// jwtPayload decodes a JWT's claims without verifying it.
func jwtPayload(t testing.TB, tok string) map[string]any {
	t.Helper()
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWT: %q", tok)
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestPasswordCost: Config.PasswordCost sets the bcrypt cost of the hashes
// new accounts get (the browser tests lower it), and New refuses a cost
// bcrypt does not take.
func TestPasswordCost(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *Config) { c.PasswordCost = 6 })
	e.must(http.StatusCreated, nil, "POST", "/auth/register", map[string]any{"email": "cost@example.com", "password": "cost password", "first_name": "Cost"})
	u, err := e.store.R.UserGetByEmail(context.Background(), "cost@example.com")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := bcrypt.Cost([]byte(u.PasswordHash)); err != nil || got != 6 {
		t.Fatalf("hash cost %d (%v), want 6", got, err)
	}
	for _, bad := range []int{-1, 3, 32} {
		if _, err := New(context.Background(), e.store, Config{PasswordCost: bad}); err == nil || !strings.Contains(err.Error(), "password cost") {
			t.Errorf("PasswordCost %d: %v, want a refusal", bad, err)
		}
	}
}
