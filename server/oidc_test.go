package server

import (
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/MicahParks/keyfunc/v3"
	"github.com/golang-jwt/jwt/v5"
)

// countUsers counts live accounts.
func (e *testEnv) countUsers() int {
	e.t.Helper()
	var n int
	if err := e.store.Reader.QueryRow(`SELECT count(*) FROM users WHERE deleted_at IS NULL`).Scan(&n); err != nil {
		e.t.Fatal(err)
	}
	return n
}

// postRaw sends a body with an explicit Content-Type ("" sends none).
func (e *testEnv) postRaw(path, contentType, body string) *testResponse {
	e.t.Helper()
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	return e.serve(req)
}

func (e *testEnv) tokenReq(form url.Values) *testResponse {
	e.t.Helper()
	return e.postRaw("/oauth/token", "application/x-www-form-urlencoded", form.Encode())
}

func (e *testEnv) register(email, password string) *testResponse {
	e.t.Helper()
	return e.do(nil, "POST", "/auth/register", map[string]any{"email": email, "password": password})
}

func TestRegister(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	bodyErr := func(field string) func(t *testing.T, r *testResponse) {
		return func(t *testing.T, r *testResponse) {
			errs, _ := r.obj(t)["errors"].(map[string]any)
			if _, ok := errs[field]; !ok {
				t.Fatalf("errors = %v, want a problem for %q", errs, field)
			}
		}
	}
	e.run(t, []scenario{
		{name: "created", method: "POST", path: "/auth/register",
			body: map[string]any{"email": "Reg@Example.com", "password": "12345678", "first_name": "Reg", "last_name": "Istered"},
			want: http.StatusCreated, check: func(t *testing.T, r *testResponse) {
				m := r.obj(t)
				want := map[string]any{"email": "Reg@Example.com", "first_name": "Reg", "last_name": "Istered",
					"email_confirmed": false, "badges": float64(0), "language": "en", "timezone_code": "UTC"}
				for k, v := range want {
					if m[k] != v {
						t.Errorf("%s = %v, want %v", k, m[k], v)
					}
				}
				if id, _ := m["id"].(string); id == "" {
					t.Errorf("id = %v, want a snowflake string", m["id"])
				}
				if _, ok := m["password_hash"]; ok {
					t.Errorf("response leaks password_hash")
				}
			}},
		{name: "same e-mail, other case", method: "POST", path: "/auth/register",
			body: map[string]any{"email": "reg@EXAMPLE.COM", "password": "12345678"}, want: 400, check: bodyErr("email")},
		{name: "invalid e-mail", method: "POST", path: "/auth/register",
			body: map[string]any{"email": "not-an-address", "password": "12345678"}, want: 400, check: bodyErr("email")},
		{name: "e-mail with display name", method: "POST", path: "/auth/register",
			body: map[string]any{"email": "Bob <bob@example.com>", "password": "12345678"}, want: 400, check: bodyErr("email")},
		{name: "e-mail without dotted domain", method: "POST", path: "/auth/register",
			body: map[string]any{"email": "bob@localhost", "password": "12345678"}, want: 400, check: bodyErr("email")},
		{name: "missing e-mail", method: "POST", path: "/auth/register",
			body: map[string]any{"password": "12345678"}, want: 400, check: bodyErr("email")},
		{name: "password of 7", method: "POST", path: "/auth/register",
			body: map[string]any{"email": "p7@example.com", "password": "1234567"}, want: 400, check: bodyErr("password")},
		{name: "password of 7 characters in 14 bytes", method: "POST", path: "/auth/register",
			body: map[string]any{"email": "p7@example.com", "password": "ééééééé"}, want: 400, check: bodyErr("password")},
		{name: "password over bcrypt's 72 bytes", method: "POST", path: "/auth/register",
			body: map[string]any{"email": "p73@example.com", "password": strings.Repeat("x", 73)}, want: 400, check: bodyErr("password")},
		{name: "first name too long", method: "POST", path: "/auth/register",
			body: map[string]any{"email": "long@example.com", "password": "12345678", "first_name": strings.Repeat("x", 101)}, want: 400, check: bodyErr("first_name")},
		{name: "wrong type", method: "POST", path: "/auth/register",
			body: map[string]any{"email": 5, "password": "12345678"}, want: 400, check: bodyErr("email")},
		{name: "malformed JSON", method: "POST", path: "/auth/register", body: `{"email": "x@example.com",`, want: 400},
		{name: "JSON array", method: "POST", path: "/auth/register", body: `[1,2]`, want: 400},
		{name: "empty body", method: "POST", path: "/auth/register", body: ``, want: 400},
		{name: "unknown fields ignored", method: "POST", path: "/auth/register",
			body: map[string]any{"email": "extra@example.com", "password": "12345678", "badges": 2147483648}, want: 201,
			check: func(t *testing.T, r *testResponse) {
				if got := r.obj(t)["badges"]; got != float64(0) {
					t.Fatalf("badges = %v, want 0: a caller must not pick its badges", got)
				}
			}},
		{name: "wrong method", method: "GET", path: "/auth/register", want: 405},
	})
	t.Run("wrong content type", func(t *testing.T) {
		before := e.countUsers()
		r := e.postRaw("/auth/register", "text/plain", `{"email":"ct@example.com","password":"12345678"}`)
		if r.Status != http.StatusUnsupportedMediaType {
			t.Fatalf("status %d, want 415", r.Status)
		}
		assertErrorBody(t, r)
		if e.countUsers() != before {
			t.Fatal("a rejected registration made an account")
		}
	})
	t.Run("the new account signs in", func(t *testing.T) {
		r := e.tokenReq(url.Values{"grant_type": {"password"}, "username": {"reg@example.com"}, "password": {"12345678"}})
		if r.Status != http.StatusOK {
			t.Fatalf("status %d, want 200; body %s", r.Status, r.Body)
		}
	})
	t.Run("concurrent registrations of one address make one account", func(t *testing.T) {
		before := e.countUsers()
		var wg sync.WaitGroup
		statuses := make([]int, 8)
		for i := range statuses {
			wg.Go(func() {
				statuses[i] = e.register(fmt.Sprintf("Race@example.com"), "12345678").Status
			})
		}
		wg.Wait()
		created := 0
		for _, s := range statuses {
			switch s {
			case http.StatusCreated:
				created++
			case http.StatusBadRequest:
			default:
				t.Fatalf("status %d, want 201 or 400", s)
			}
		}
		if created != 1 || e.countUsers() != before+1 {
			t.Fatalf("created %d accounts (users %d -> %d), want 1", created, before, e.countUsers())
		}
	})
}

func TestRegistrationOff(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *Config) { c.Registration = false })
	e.run(t, []scenario{
		{name: "forbidden", method: "POST", path: "/auth/register",
			body: map[string]any{"email": "off@example.com", "password": "12345678"}, want: 403},
	})
	if n := e.countUsers(); n != 0 {
		t.Fatalf("users = %d, want 0", n)
	}
}

func TestPasswordGrant(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	reg := e.register("Pat@example.com", "correct horse").obj(t)
	patID := reg["id"].(string)

	var tok map[string]any
	t.Run("issued", func(t *testing.T) {
		r := e.tokenReq(url.Values{"grant_type": {"password"}, "username": {" pat@EXAMPLE.com "}, "password": {"correct horse"}})
		if r.Status != http.StatusOK {
			t.Fatalf("status %d, want 200; body %s", r.Status, r.Body)
		}
		if got := r.Header.Get("Cache-Control"); got != "no-store" {
			t.Errorf("Cache-Control = %q, want no-store", got)
		}
		tok = r.obj(t)
		if tok["token_type"] != "Bearer" || tok["expires_in"] != float64(3600) {
			t.Errorf("token_type, expires_in = %v, %v; want Bearer, 3600", tok["token_type"], tok["expires_in"])
		}
		for _, k := range []string{"access_token", "refresh_token", "id_token"} {
			if s, _ := tok[k].(string); s == "" {
				t.Errorf("%s missing", k)
			}
		}
		c := jwtPayload(t, tok["access_token"].(string))
		now := e.clock.Now().Unix()
		want := map[string]any{"iss": "http://workspace.test", "sub": patID, "aud": "workspace",
			"email": "Pat@example.com", "iat": float64(now), "exp": float64(now + 3600)}
		for k, v := range want {
			got := c[k]
			if a, ok := got.([]any); ok && len(a) == 1 {
				got = a[0]
			}
			if got != v {
				t.Errorf("claim %s = %v, want %v", k, c[k], v)
			}
		}
		if s, _ := c["jti"].(string); s == "" {
			t.Errorf("jti missing")
		}
		id := jwtPayload(t, tok["id_token"].(string))
		if id["sub"] != patID || id["iss"] != "http://workspace.test" {
			t.Errorf("id token sub, iss = %v, %v", id["sub"], id["iss"])
		}
	})
	if tok == nil {
		t.FailNow()
	}
	access := &testUser{ID: patID, Token: tok["access_token"].(string)}

	t.Run("the access token works and verifies against the published JWKS", func(t *testing.T) {
		if got := e.must(http.StatusOK, access, "GET", "/users/@me", nil).obj(t)["id"]; got != patID {
			t.Fatalf("id = %v, want %v", got, patID)
		}
		jwks := e.must(http.StatusOK, nil, "GET", "/.well-known/jwks.json", nil)
		kf, err := keyfunc.NewJWKSetJSON(jwks.Body)
		if err != nil {
			t.Fatalf("JWKS: %v", err)
		}
		parsed, err := jwt.Parse(access.Token, kf.Keyfunc, jwt.WithValidMethods([]string{"RS256"}),
			jwt.WithIssuer("http://workspace.test"), jwt.WithAudience("workspace"),
			jwt.WithTimeFunc(e.clock.Now))
		if err != nil || !parsed.Valid {
			t.Fatalf("token does not verify with the published key: %v", err)
		}
		if _, err := jwt.Parse(tok["id_token"].(string), kf.Keyfunc, jwt.WithTimeFunc(e.clock.Now)); err != nil {
			t.Fatalf("id token does not verify: %v", err)
		} // RFC 9068: only access tokens are bearer tokens; the ID token,
		// though signed by the same key for the same audience, is not.
		if typ := parsed.Header["typ"]; typ != "at+jwt" {
			t.Errorf("access token typ = %v, want at+jwt", typ)
		}
		assertUnauthorized(t, e.do(&testUser{Token: tok["id_token"].(string)}, "GET", "/users/@me", nil))
	})
	t.Run("discovery", func(t *testing.T) {
		d := e.must(http.StatusOK, nil, "GET", "/.well-known/openid-configuration", nil).obj(t)
		want := map[string]any{
			"issuer":            "http://workspace.test",
			"jwks_uri":          "http://workspace.test/.well-known/jwks.json",
			"token_endpoint":    "http://workspace.test/oauth/token",
			"userinfo_endpoint": "http://workspace.test/oauth/userinfo",
		}
		for k, v := range want {
			if d[k] != v {
				t.Errorf("%s = %v, want %v", k, d[k], v)
			}
		}
	})
	t.Run("userinfo", func(t *testing.T) {
		u := e.must(http.StatusOK, access, "GET", "/oauth/userinfo", nil).obj(t)
		if u["sub"] != patID || u["email"] != "Pat@example.com" || u["email_verified"] != false {
			t.Fatalf("userinfo = %v", u)
		}
		assertUnauthorized(t, e.do(nil, "GET", "/oauth/userinfo", nil))
	})

	grantErr := func(t *testing.T, r *testResponse, status int, code string) {
		t.Helper()
		if r.Status != status {
			t.Fatalf("status %d, want %d; body %s", r.Status, status, r.Body)
		}
		var b tokenError
		if err := json.Unmarshal(r.Body, &b); err != nil || b.Error != code || b.Description == "" {
			t.Fatalf("body %s, want error %q with a description", r.Body, code)
		}
	}
	for _, tc := range []struct {
		name string
		form url.Values
		code string
	}{
		{"wrong password", url.Values{"grant_type": {"password"}, "username": {"pat@example.com"}, "password": {"wrong horse"}}, "invalid_grant"},
		{"unknown user", url.Values{"grant_type": {"password"}, "username": {"nobody@example.com"}, "password": {"correct horse"}}, "invalid_grant"},
		{"missing password", url.Values{"grant_type": {"password"}, "username": {"pat@example.com"}}, "invalid_request"},
		{"missing username", url.Values{"grant_type": {"password"}, "password": {"correct horse"}}, "invalid_request"},
		{"missing grant type", url.Values{"username": {"pat@example.com"}, "password": {"correct horse"}}, "invalid_request"},
		{"unsupported grant", url.Values{"grant_type": {"client_credentials"}}, "unsupported_grant_type"},
		{"missing refresh token", url.Values{"grant_type": {"refresh_token"}}, "invalid_request"},
		{"unknown refresh token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"nope"}}, "invalid_grant"},
	} {
		t.Run(tc.name, func(t *testing.T) { grantErr(t, e.tokenReq(tc.form), 400, tc.code) })
	}
	t.Run("JSON body is 415", func(t *testing.T) {
		r := e.postRaw("/oauth/token", "application/json", `{"grant_type":"password"}`)
		if r.Status != http.StatusUnsupportedMediaType {
			t.Fatalf("status %d, want 415", r.Status)
		}
		assertErrorBody(t, r)
	})
	t.Run("no content type is 415", func(t *testing.T) {
		if r := e.postRaw("/oauth/token", "", "grant_type=password"); r.Status != http.StatusUnsupportedMediaType {
			t.Fatalf("status %d, want 415", r.Status)
		}
	})
	t.Run("GET is 405", func(t *testing.T) {
		r := e.do(nil, "GET", "/oauth/token", nil)
		if r.Status != http.StatusMethodNotAllowed || !strings.Contains(r.Header.Get("Allow"), "POST") {
			t.Fatalf("status %d Allow %q, want 405 naming POST", r.Status, r.Header.Get("Allow"))
		}
	})

	t.Run("refresh rotates", func(t *testing.T) {
		first := tok["refresh_token"].(string)
		r := e.tokenReq(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {first}})
		if r.Status != http.StatusOK {
			t.Fatalf("status %d, want 200; body %s", r.Status, r.Body)
		}
		next := r.obj(t)
		second, _ := next["refresh_token"].(string)
		if second == "" || second == first {
			t.Fatalf("refresh_token = %q, want a new one", second)
		}
		e.must(http.StatusOK, &testUser{Token: next["access_token"].(string)}, "GET", "/users/@me", nil)
		third := e.tokenReq(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {second}})
		if third.Status != http.StatusOK {
			t.Fatalf("the rotated token: status %d, want 200", third.Status)
		}
	})
	t.Run("reuse of a rotated token revokes its whole chain", func(t *testing.T) {
		login := func() string {
			return e.tokenReq(url.Values{"grant_type": {"password"}, "username": {"pat@example.com"}, "password": {"correct horse"}}).obj(t)["refresh_token"].(string)
		}
		refresh := func(rt string) *testResponse {
			return e.tokenReq(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}})
		}
		other := login() // another sign-in, another chain: untouched
		first := login()
		second := refresh(first).obj(t)["refresh_token"].(string)
		third := refresh(second).obj(t)["refresh_token"].(string)
		grantErr(t, refresh(first), 400, "invalid_grant") // the leaked, used token comes back
		for _, rt := range []string{second, third} {      // used, and the live end of the chain
			grantErr(t, refresh(rt), 400, "invalid_grant")
		}
		if r := refresh(other); r.Status != http.StatusOK {
			t.Fatalf("a token of another chain: status %d, want 200", r.Status)
		}
	})
	t.Run("revoke signs out: the chain ends, 200 for anything", func(t *testing.T) {
		rt := e.tokenReq(url.Values{"grant_type": {"password"}, "username": {"pat@example.com"}, "password": {"correct horse"}}).obj(t)["refresh_token"].(string)
		next := e.tokenReq(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}}).obj(t)["refresh_token"].(string)
		revoke := func(form url.Values) *testResponse {
			return e.postRaw("/oauth/revoke", "application/x-www-form-urlencoded", form.Encode())
		}
		if r := revoke(url.Values{"token": {rt}, "token_type_hint": {"refresh_token"}}); r.Status != http.StatusOK {
			t.Fatalf("revoke: status %d, want 200; body %s", r.Status, r.Body)
		}
		grantErr(t, e.tokenReq(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {next}}), 400, "invalid_grant")
		for name, form := range map[string]url.Values{
			"unknown token":   {"token": {"nope"}},
			"revoked again":   {"token": {rt}},
			"an access token": {"token": {tok["access_token"].(string)}, "token_type_hint": {"access_token"}},
		} {
			if r := revoke(form); r.Status != http.StatusOK {
				t.Errorf("%s: status %d, want 200", name, r.Status)
			}
		}
		if r := revoke(url.Values{}); r.Status != http.StatusBadRequest {
			t.Errorf("no token: status %d, want 400", r.Status)
		}
		if r := e.postRaw("/oauth/revoke", "application/json", `{"token":"x"}`); r.Status != http.StatusUnsupportedMediaType {
			t.Errorf("JSON body: status %d, want 415", r.Status)
		}
		disc := e.do(nil, "GET", "/.well-known/openid-configuration", nil).obj(t)
		if disc["revocation_endpoint"] != "http://workspace.test/oauth/revoke" {
			t.Errorf("revocation_endpoint = %v", disc["revocation_endpoint"])
		}
	})
	t.Run("a refresh token is good once under concurrency", func(t *testing.T) {
		rt := e.tokenReq(url.Values{"grant_type": {"password"}, "username": {"pat@example.com"}, "password": {"correct horse"}}).obj(t)["refresh_token"].(string)
		var wg sync.WaitGroup
		statuses := make([]int, 8)
		for i := range statuses {
			wg.Go(func() {
				statuses[i] = e.tokenReq(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}}).Status
			})
		}
		wg.Wait()
		ok := 0
		for _, s := range statuses {
			if s == http.StatusOK {
				ok++
			} else if s != http.StatusBadRequest {
				t.Fatalf("status %d, want 200 or 400", s)
			}
		}
		if ok != 1 {
			t.Fatalf("%d refreshes succeeded with one token, want 1", ok)
		}
	})
	t.Run("expired refresh token", func(t *testing.T) {
		rt := e.tokenReq(url.Values{"grant_type": {"password"}, "username": {"pat@example.com"}, "password": {"correct horse"}}).obj(t)["refresh_token"].(string)
		e.clock.Advance(refreshTokenTTL + time.Second)
		grantErr(t, e.tokenReq(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}}), 400, "invalid_grant")
		var n int
		if err := e.store.Reader.QueryRow(`SELECT count(*) FROM refresh_tokens WHERE token_hash = ?`, hashToken(rt)).Scan(&n); err != nil || n != 0 {
			t.Fatalf("expired refresh token rows = %d (%v), want 0: it is deleted when presented", n, err)
		}
	})
	t.Run("refresh for a deleted user", func(t *testing.T) {
		rt := e.tokenReq(url.Values{"grant_type": {"password"}, "username": {"pat@example.com"}, "password": {"correct horse"}}).obj(t)["refresh_token"].(string)
		if _, err := e.write(`UPDATE users SET deleted_at = ? WHERE id = ?`, e.srv.nowText(), patID); err != nil {
			t.Fatal(err)
		}
		grantErr(t, e.tokenReq(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}}), 400, "invalid_grant")
		grantErr(t, e.tokenReq(url.Values{"grant_type": {"password"}, "username": {"pat@example.com"}, "password": {"correct horse"}}), 400, "invalid_grant")
	})
}

// fakeIssuer is a real OpenID issuer for tests: discovery document, JWKS and
// its own RSA keys, served over HTTP.
type fakeIssuer struct {
	t   testing.TB
	srv *httptest.Server

	mu         sync.Mutex
	keys       map[string]*rsa.PrivateKey // published, by kid
	jwksHits   int
	discovered int
}

func newFakeIssuer(t testing.TB) *fakeIssuer {
	f := &fakeIssuer{t: t, keys: map[string]*rsa.PrivateKey{"k1": newRSAKey(t)}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.discovered++
		f.mu.Unlock()
		writeJSON(w, 200, map[string]string{"issuer": f.srv.URL, "jwks_uri": f.srv.URL + "/keys"})
	})
	mux.HandleFunc("GET /keys", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.jwksHits++
		var keys []map[string]string
		for kid, k := range f.keys {
			keys = append(keys, map[string]string{"kty": "RSA", "use": "sig", "alg": "RS256", "kid": kid,
				"n": base64.RawURLEncoding.EncodeToString(k.N.Bytes()),
				"e": base64.RawURLEncoding.EncodeToString(big.NewInt(int64(k.E)).Bytes())})
		}
		writeJSON(w, 200, map[string]any{"keys": keys})
	})
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

// counts returns how often discovery and the JWKS were fetched.
func (f *fakeIssuer) counts() (discovered, jwks int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.discovered, f.jwksHits
}

// rotate replaces the published keys with one new key.
func (f *fakeIssuer) rotate(kid string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.keys = map[string]*rsa.PrivateKey{kid: newRSAKey(f.t)}
}

// token signs claims with the published key kid, filling iss/aud/exp/iat.
func (f *fakeIssuer) token(kid string, now time.Time, c jwt.MapClaims) string {
	f.mu.Lock()
	key := f.keys[kid]
	f.mu.Unlock()
	if key == nil {
		f.t.Fatalf("no key %s", kid)
	}
	full := jwt.MapClaims{"iss": f.srv.URL, "aud": "ext-aud", "exp": now.Add(time.Hour).Unix(), "iat": now.Unix()}
	for k, v := range c {
		full[k] = v
	}
	return signRS(f.t, key, kid, jwt.SigningMethodRS256, full)
}

func newExternalEnv(t *testing.T, iss *fakeIssuer) *testEnv {
	return newEnv(t, func(c *Config) {
		c.ExternalIssuers = []ExternalIssuer{{URL: iss.srv.URL + "/", Audience: "ext-aud"}}
		c.HTTPClient = iss.srv.Client()
	})
}

func TestExternalIssuer(t *testing.T) {
	t.Parallel()
	iss := newFakeIssuer(t)
	e := newExternalEnv(t, iss)
	now := e.clock.Now
	as := func(tok string) *testUser { return &testUser{Token: tok} }
	erin := jwt.MapClaims{"sub": "erin-1", "email": "erin@corp.example", "email_verified": true, "given_name": "Erin", "family_name": "Ext"}

	var erinID string
	t.Run("first token creates the user", func(t *testing.T) {
		before := e.countUsers()
		me := e.must(http.StatusOK, as(iss.token("k1", now(), erin)), "GET", "/users/@me", nil).obj(t)
		if me["email"] != "erin@corp.example" || me["first_name"] != "Erin" || me["last_name"] != "Ext" || me["email_confirmed"] != true {
			t.Fatalf("user = %v, want erin@corp.example Erin Ext, confirmed", me)
		}
		if e.countUsers() != before+1 {
			t.Fatalf("users %d -> %d, want one more", before, e.countUsers())
		}
		erinID = me["id"].(string)
	})
	t.Run("a second token maps to the same user", func(t *testing.T) {
		e.clock.Advance(time.Minute)
		before := e.countUsers()
		me := e.must(http.StatusOK, as(iss.token("k1", now(), erin)), "GET", "/users/@me", nil).obj(t)
		if me["id"] != erinID || e.countUsers() != before {
			t.Fatalf("id = %v (users %d -> %d), want %v and no new user", me["id"], before, e.countUsers(), erinID)
		}
	})
	t.Run("name claim alone", func(t *testing.T) {
		me := e.must(http.StatusOK, as(iss.token("k1", now(), jwt.MapClaims{"sub": "nina", "email": "nina@corp.example", "name": "Nina Van Named"})), "GET", "/users/@me", nil).obj(t)
		if me["first_name"] != "Nina" || me["last_name"] != "Van Named" || me["email_confirmed"] != false {
			t.Fatalf("user = %v", me)
		}
	})
	rejects := []struct {
		name string
		tok  func() string
	}{
		{"wrong audience", func() string {
			return iss.token("k1", now(), jwt.MapClaims{"sub": "erin-1", "email": "erin@corp.example", "aud": "workspace"})
		}},
		{"unknown issuer", func() string {
			return iss.token("k1", now(), jwt.MapClaims{"sub": "erin-1", "email": "erin@corp.example", "iss": "https://elsewhere.example"})
		}},
		{"issuer's kid, another key", func() string {
			return signRS(t, newRSAKey(t), "k1", jwt.SigningMethodRS256, jwt.MapClaims{"iss": iss.srv.URL, "aud": "ext-aud", "sub": "erin-1", "exp": now().Add(time.Hour).Unix()})
		}},
		{"expired", func() string {
			return iss.token("k1", now(), jwt.MapClaims{"sub": "erin-1", "exp": now().Add(-time.Hour).Unix()})
		}},
		{"no e-mail for a new subject", func() string { return iss.token("k1", now(), jwt.MapClaims{"sub": "anon"}) }},
		{"invalid e-mail for a new subject", func() string {
			return iss.token("k1", now(), jwt.MapClaims{"sub": "anon", "email": "nope", "email_verified": true})
		}},
		{"no subject", func() string { return iss.token("k1", now(), jwt.MapClaims{"email": "x@corp.example"}) }},
	}
	for _, tc := range rejects {
		t.Run(tc.name, func(t *testing.T) {
			before := e.countUsers()
			assertUnauthorized(t, e.do(as(tc.tok()), "GET", "/users/@me", nil))
			if e.countUsers() != before {
				t.Fatal("a rejected token made a user")
			}
		})
	}
	t.Run("deleted user", func(t *testing.T) {
		tok := iss.token("k1", now(), erin)
		e.must(http.StatusOK, as(tok), "GET", "/users/@me", nil)
		if _, err := e.write(`UPDATE users SET deleted_at = ? WHERE id = ?`, e.srv.nowText(), erinID); err != nil {
			t.Fatal(err)
		}
		assertUnauthorized(t, e.do(as(tok), "GET", "/users/@me", nil))
		assertUnauthorized(t, e.do(as(iss.token("k1", now(), erin)), "GET", "/users/@me", nil))
	})
	if d, _ := iss.counts(); d != 1 {
		t.Errorf("discovery fetched %d times, want once", d)
	}
}

// TestExternalKeyRotation: a new kid at the issuer is picked up without a
// restart, because keyfunc refetches the JWKS for an unknown kid.
func TestExternalKeyRotation(t *testing.T) {
	t.Parallel()
	iss := newFakeIssuer(t)
	e := newExternalEnv(t, iss)
	claims := jwt.MapClaims{"sub": "rot", "email": "rot@corp.example", "email_verified": true}
	id := e.must(http.StatusOK, &testUser{Token: iss.token("k1", e.clock.Now(), claims)}, "GET", "/users/@me", nil).obj(t)["id"]
	iss.rotate("k2")
	e.clock.Advance(time.Second) // a different token, not a cached one
	got := e.must(http.StatusOK, &testUser{Token: iss.token("k2", e.clock.Now(), claims)}, "GET", "/users/@me", nil).obj(t)["id"]
	if got != id {
		t.Fatalf("id after rotation = %v, want %v", got, id)
	}
	if _, n := iss.counts(); n != 2 {
		t.Fatalf("JWKS fetched %d times, want 2 (first use, then the unknown kid)", n)
	}
	// Made-up kids may not make the server fetch again and again.
	for i := range 5 {
		tok := signRS(t, newRSAKey(t), fmt.Sprintf("made-up-%d", i), jwt.SigningMethodRS256, jwt.MapClaims{"iss": iss.srv.URL, "aud": "ext-aud", "sub": "x", "exp": e.clock.Now().Add(time.Hour).Unix()})
		assertUnauthorized(t, e.do(&testUser{Token: tok}, "GET", "/users/@me", nil))
	}
	if _, n := iss.counts(); n != 2 {
		t.Fatalf("JWKS fetched %d times after made-up kids, want still 2 (rate limited)", n)
	}
}

// TestExternalLinking: an external e-mail links to an existing local account
// only when the issuer vouches for it and the local account verified it.
func TestExternalLinking(t *testing.T) {
	t.Parallel()
	iss := newFakeIssuer(t)
	e := newExternalEnv(t, iss)
	alice := e.user("alice") // verified alice@example.com
	e.register("mallory-prereg@example.com", "12345678")
	tok := func(sub, email string, verified any) *testUser {
		c := jwt.MapClaims{"sub": sub, "email": email}
		if verified != nil {
			c["email_verified"] = verified
		}
		return &testUser{Token: iss.token("k1", e.clock.Now(), c)}
	}
	t.Run("unverified claim does not link", func(t *testing.T) {
		assertUnauthorized(t, e.do(tok("a-1", "alice@example.com", false), "GET", "/users/@me", nil))
		assertUnauthorized(t, e.do(tok("a-2", "ALICE@example.com", nil), "GET", "/users/@me", nil))
	})
	t.Run("claim unverified as a string does not link", func(t *testing.T) {
		assertUnauthorized(t, e.do(tok("a-3", "alice@example.com", "false"), "GET", "/users/@me", nil))
		assertUnauthorized(t, e.do(tok("a-3", "alice@example.com", "yes"), "GET", "/users/@me", nil))
	})
	t.Run("verified claim links to a verified local account", func(t *testing.T) {
		before := e.countUsers()
		got := e.must(http.StatusOK, tok("a-4", "Alice@Example.com", true), "GET", "/users/@me", nil).obj(t)["id"]
		if got != alice.ID || e.countUsers() != before {
			t.Fatalf("id = %v, want alice %v and no new user", got, alice.ID)
		}
		// Linked for good: later tokens of that subject need no claim.
		if got := e.must(http.StatusOK, tok("a-4", "", nil), "GET", "/users/@me", nil).obj(t)["id"]; got != alice.ID {
			t.Fatalf("id = %v, want %v", got, alice.ID)
		}
	})
	t.Run("claim verified as a string links (Cognito sends strings)", func(t *testing.T) {
		if got := e.must(http.StatusOK, tok("a-5", "alice@example.com", "true"), "GET", "/users/@me", nil).obj(t)["id"]; got != alice.ID {
			t.Fatalf("id = %v, want %v", got, alice.ID)
		}
	})
	t.Run("a local account that never verified its address is not linked", func(t *testing.T) {
		assertUnauthorized(t, e.do(tok("victim", "mallory-prereg@example.com", true), "GET", "/users/@me", nil))
	})
	t.Run("an address verified as another account's secondary", func(t *testing.T) {
		if _, err := e.write(`INSERT INTO user_emails(id, user_id, email, is_primary, is_verified, created_at) VALUES (?, ?, 'alias@example.com', 0, 1, ?)`,
			e.store.IDs.Next(), alice.id, e.srv.nowText()); err != nil {
			t.Fatal(err)
		}
		before := e.countUsers()
		assertUnauthorized(t, e.do(tok("alias", "alias@example.com", true), "GET", "/users/@me", nil))
		if e.countUsers() != before {
			t.Fatal("made a second account for a verified address")
		}
	})
}

// TestExternalIssuerDown: an unreachable issuer is a 401, never a 5xx.
func TestExternalIssuerDown(t *testing.T) {
	t.Parallel()
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "down", http.StatusBadGateway)
	}))
	defer down.Close()
	e := newEnv(t, func(c *Config) {
		c.ExternalIssuers = []ExternalIssuer{{URL: down.URL, Audience: "ext-aud"}}
	})
	tok := signRS(t, newRSAKey(t), "k1", jwt.SigningMethodRS256, jwt.MapClaims{"iss": down.URL, "aud": "ext-aud", "sub": "x", "email": "x@corp.example", "exp": e.clock.Now().Add(time.Hour).Unix()})
	for range 3 {
		assertUnauthorized(t, e.do(&testUser{Token: tok}, "GET", "/users/@me", nil))
	}
}

// TestExternalRemovedKeyDropsCachedTokens: once the issuer removes a key
// (after a leak, say), tokens it signed stop working here within one key
// refresh, also those whose verification was cached.
func TestExternalRemovedKeyDropsCachedTokens(t *testing.T) {
	t.Parallel()
	iss := newFakeIssuer(t)
	e := newEnv(t, func(c *Config) {
		c.ExternalIssuers = []ExternalIssuer{{URL: iss.srv.URL + "/", Audience: "ext-aud", KeyRefresh: 50 * time.Millisecond}}
		c.HTTPClient = iss.srv.Client()
	})
	tok := &testUser{Token: iss.token("k1", e.clock.Now(), jwt.MapClaims{"sub": "gone", "email": "gone@corp.example", "email_verified": true})}
	e.must(http.StatusOK, tok, "GET", "/users/@me", nil)
	e.must(http.StatusOK, tok, "GET", "/users/@me", nil) // now served from the cache
	iss.rotate("k2")
	deadline := time.Now().Add(30 * time.Second)
	for {
		r := e.do(tok, "GET", "/users/@me", nil)
		if r.Status == http.StatusUnauthorized {
			break
		}
		if r.Status != http.StatusOK || time.Now().After(deadline) {
			t.Fatalf("token of a removed key: status %d, want 401 after the key refresh", r.Status)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Tokens of the key that replaced it work.
	e.must(http.StatusOK, &testUser{Token: iss.token("k2", e.clock.Now(), jwt.MapClaims{"sub": "gone", "email": "gone@corp.example", "email_verified": true})}, "GET", "/users/@me", nil)
}
