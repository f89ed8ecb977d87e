package server

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

const (
	webRedirect  = "http://workspace.test/app/callback"
	testVerifier = "dBjftJeZ4CVP-mJ92K9qiU.~Fox7F0KvCQTrr1gE_Ww" // 43 unreserved characters
	appRedirect  = "https://app.example.com/cb?tenant=7"
)

func challengeOf(v string) string {
	sum := sha256.Sum256([]byte(v))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// authzEnv is a server with two registered clients besides the web client:
// a public mobile app and a confidential proxy.
func authzEnv(t *testing.T, opts ...func(*Config)) *testEnv {
	return newEnv(t, append([]func(*Config){func(c *Config) {
		c.OAuthClients = []OAuthClient{
			{ID: "mobile", RedirectURIs: []string{appRedirect}},
			{ID: "proxy", Secret: "s3cret", RedirectURIs: []string{"https://proxy.example.com/oauth2/callback"}},
		}
	}}, opts...)...)
}

// webAuthz is a valid authorization request of the web client.
func webAuthz() url.Values {
	return url.Values{
		"client_id": {WebClientID}, "redirect_uri": {webRedirect}, "response_type": {"code"},
		"scope": {"openid email profile"}, "state": {"st-1"}, "nonce": {"n-1"},
		"code_challenge": {challengeOf(testVerifier)}, "code_challenge_method": {"S256"},
	}
}

func with(v url.Values, kv ...string) url.Values {
	out := url.Values{}
	for k, vs := range v {
		out[k] = slices.Clone(vs)
	}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "" {
			out.Del(kv[i])
		} else {
			out.Set(kv[i], kv[i+1])
		}
	}
	return out
}

// postForm posts form-encoded values from a given client address.
func (e *testEnv) postForm(path string, v url.Values, remote string) *testResponse {
	e.t.Helper()
	// As a browser does: the form (and its cookie) first, for this very
	// authorization request.
	if v.Get("csrf") == "" {
		cookie, token := e.signinForm(v)
		v = with(v, "csrf", token)
		return e.postFormWith(path, v, remote, cookie, nil)
	}
	return e.postFormWith(path, v, remote, nil, nil)
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]*)"`)

// signinForm gets the sign-in page for the authorization request in v: its
// cookie and the form's token ("" when the page shows no form).
func (e *testEnv) signinForm(v url.Values) (*http.Cookie, string) {
	e.t.Helper()
	q := url.Values{}
	for _, k := range []string{"client_id", "redirect_uri", "response_type", "scope", "state", "code_challenge", "code_challenge_method", "nonce"} {
		if v.Has(k) {
			q.Set(k, v.Get(k))
		}
	}
	r := e.do(nil, "GET", "/oauth/authorize?"+q.Encode(), nil)
	var cookie *http.Cookie
	for _, c := range (&http.Response{Header: r.Header}).Cookies() {
		if c.Name == signinCookie {
			cookie = c
		}
	}
	m := csrfField.FindSubmatch(r.Body)
	if m == nil {
		return cookie, ""
	}
	return cookie, string(m[1])
}

func (e *testEnv) postFormWith(path string, v url.Values, remote string, cookie *http.Cookie, header http.Header) *testResponse {
	e.t.Helper()
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(v.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if cookie != nil {
		req.AddCookie(cookie)
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	if remote != "" {
		req.RemoteAddr = remote
	}
	return e.serve(req)
}

// redirectParams returns the Location of a 303 and its query.
func redirectParams(t *testing.T, r *testResponse) (*url.URL, url.Values) {
	t.Helper()
	if r.Status != http.StatusSeeOther {
		t.Fatalf("status %d, want 303; body %s", r.Status, r.Body)
	}
	u, err := url.Parse(r.Header.Get("Location"))
	if err != nil {
		t.Fatalf("Location %q: %v", r.Header.Get("Location"), err)
	}
	return u, u.Query()
}

func TestAuthorizeRequestChecks(t *testing.T) {
	t.Parallel()
	e := authzEnv(t)
	page := func(t *testing.T, r *testResponse, wantText ...string) {
		t.Helper()
		if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
			t.Fatalf("Content-Type = %q, want HTML", ct)
		}
		csp := r.Header.Get("Content-Security-Policy")
		if !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "frame-ancestors 'none'") || strings.Contains(csp, "script-src") {
			t.Errorf("CSP = %q", csp)
		}
		if r.Header.Get("Location") != "" {
			t.Errorf("redirected to %s, want no redirect", r.Header.Get("Location"))
		}
		for _, w := range wantText {
			if !strings.Contains(string(r.Body), w) {
				t.Errorf("page lacks %q:\n%s", w, r.Body)
			}
		}
		if strings.Contains(string(r.Body), "<script") {
			t.Errorf("page has a script")
		}
	}
	backWith := func(base, errCode string) func(t *testing.T, r *testResponse) {
		return func(t *testing.T, r *testResponse) {
			u, q := redirectParams(t, r)
			u.RawQuery = ""
			if !strings.HasPrefix(base, u.String()) {
				t.Errorf("redirected to %s, want %s", u, base)
			}
			if q.Get("error") != errCode || q.Get("state") != "st-1" || q.Get("code") != "" {
				t.Errorf("redirect query = %v, want error %s and the state", q, errCode)
			}
		}
	}
	rows := []struct {
		name  string
		query url.Values
		want  int
		check func(t *testing.T, r *testResponse)
	}{
		{"web client: the sign-in page", webAuthz(), 200, func(t *testing.T, r *testResponse) {
			page(t, r, `<h1>Sign in</h1>`, `name="code_challenge" value="`+challengeOf(testVerifier)+`"`, `value="st-1"`, `Create an account`, `<label for="password">`)
			if !strings.Contains(r.Header.Get("Content-Security-Policy"), "form-action 'self' http://workspace.test") {
				t.Errorf("CSP = %q, want form-action for the client", r.Header.Get("Content-Security-Policy"))
			}
			if r.Header.Get("Cache-Control") != "no-store" {
				t.Errorf("Cache-Control = %q", r.Header.Get("Cache-Control"))
			}
		}},
		{"registration screen", with(webAuthz(), "screen_hint", "signup", "login_hint", "x@example.com"), 200, func(t *testing.T, r *testResponse) {
			page(t, r, `<h1>Create an account</h1>`, `name="first_name"`, `value="x@example.com"`, `value="register"`)
		}},
		{"state is escaped", with(webAuthz(), "state", `"><script>alert(1)</script>`), 200, func(t *testing.T, r *testResponse) {
			page(t, r, `&#34;&gt;&lt;script&gt;`)
		}},
		{"unknown client: no redirect", with(webAuthz(), "client_id", "nope"), 400, func(t *testing.T, r *testResponse) {
			page(t, r, "not known")
		}},
		{"missing client", with(webAuthz(), "client_id", ""), 400, func(t *testing.T, r *testResponse) { page(t, r, "not known") }},
		{"redirect with a trailing slash", with(webAuthz(), "redirect_uri", webRedirect+"/"), 400, func(t *testing.T, r *testResponse) {
			page(t, r, "not registered")
		}},
		{"redirect of another case", with(webAuthz(), "redirect_uri", strings.ToUpper(webRedirect)), 400, func(t *testing.T, r *testResponse) { page(t, r) }},
		{"redirect with an extra query", with(webAuthz(), "redirect_uri", webRedirect+"?x=1"), 400, func(t *testing.T, r *testResponse) { page(t, r) }},
		{"redirect of another client", with(webAuthz(), "redirect_uri", appRedirect), 400, func(t *testing.T, r *testResponse) { page(t, r) }},
		{"missing redirect", with(webAuthz(), "redirect_uri", ""), 400, func(t *testing.T, r *testResponse) { page(t, r) }},
		{"public client without PKCE", with(webAuthz(), "code_challenge", "", "code_challenge_method", ""), 303, backWith(webRedirect, "invalid_request")},
		{"plain PKCE", with(webAuthz(), "code_challenge_method", "plain"), 303, backWith(webRedirect, "invalid_request")},
		{"PKCE method missing", with(webAuthz(), "code_challenge_method", ""), 303, backWith(webRedirect, "invalid_request")},
		{"challenge too short", with(webAuthz(), "code_challenge", "abc"), 303, backWith(webRedirect, "invalid_request")},
		{"challenge not base64url", with(webAuthz(), "code_challenge", strings.Repeat("+", 43)), 303, backWith(webRedirect, "invalid_request")},
		{"implicit flow", with(webAuthz(), "response_type", "token"), 303, backWith(webRedirect, "unsupported_response_type")},
		{"state too long", with(webAuthz(), "state", strings.Repeat("s", 1001)), 303, func(t *testing.T, r *testResponse) {
			_, q := redirectParams(t, r)
			if q.Get("error") != "invalid_request" {
				t.Errorf("error = %q", q.Get("error"))
			}
		}},
		{"registered public client keeps its redirect query", with(webAuthz(), "client_id", "mobile", "redirect_uri", appRedirect, "code_challenge", ""), 303,
			func(t *testing.T, r *testResponse) {
				u, q := redirectParams(t, r)
				if u.Host != "app.example.com" || q.Get("tenant") != "7" || q.Get("error") != "invalid_request" {
					t.Errorf("redirect = %s", u)
				}
			}},
		{"confidential client may skip PKCE", with(webAuthz(), "client_id", "proxy", "redirect_uri", "https://proxy.example.com/oauth2/callback",
			"code_challenge", "", "code_challenge_method", ""), 200, func(t *testing.T, r *testResponse) {
			page(t, r, `<h1>Sign in</h1>`)
			if !strings.Contains(r.Header.Get("Content-Security-Policy"), "https://proxy.example.com") {
				t.Errorf("CSP = %q", r.Header.Get("Content-Security-Policy"))
			}
		}},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			r := e.do(nil, "GET", "/oauth/authorize?"+row.query.Encode(), nil)
			if r.Status != row.want {
				t.Fatalf("status %d, want %d; Location %q body %s", r.Status, row.want, r.Header.Get("Location"), r.Body)
			}
			row.check(t, r)
		})
	}
}

func TestAuthorizeSignInAndRegister(t *testing.T) {
	t.Parallel()
	e := authzEnv(t, func(c *Config) { c.AccountAttempts = 2 })
	e.must(http.StatusCreated, nil, "POST", "/auth/register", map[string]any{"email": "Sam@Example.com", "password": "right-password"})
	signin := func(email, pw string) url.Values {
		return with(webAuthz(), "action", "signin", "email", email, "password", pw)
	}
	register := func(kv ...string) url.Values {
		return with(webAuthz(), append([]string{"action", "register", "email", "new@example.com", "password", "long enough", "first_name", "New"}, kv...)...)
	}
	codeBack := func(t *testing.T, r *testResponse) {
		u, q := redirectParams(t, r)
		if u.Scheme+"://"+u.Host+u.Path != webRedirect || q.Get("state") != "st-1" || len(q.Get("code")) < 40 || q.Get("error") != "" {
			t.Fatalf("redirect = %s", u)
		}
	}
	shows := func(texts ...string) func(t *testing.T, r *testResponse) {
		return func(t *testing.T, r *testResponse) {
			for _, w := range texts {
				if !strings.Contains(string(r.Body), w) {
					t.Errorf("page lacks %q:\n%s", w, r.Body)
				}
			}
			if r.Header.Get("Location") != "" {
				t.Errorf("redirected on failure")
			}
		}
	}
	rows := []struct {
		name   string
		form   url.Values
		remote string
		want   int
		check  func(t *testing.T, r *testResponse)
	}{
		{"right password, address in another case", signin("sam@example.COM", "right-password"), "", 303, codeBack},
		{"wrong password", signin("sam@example.com", "wrong-password"), "", 400, shows("The e-mail address or password is wrong.", `value="sam@example.com"`, `value="st-1"`)},
		{"unknown address", signin("nobody@example.com", "whatever1"), "", 400, shows("The e-mail address or password is wrong.")},
		{"missing fields", signin("", ""), "", 400, shows(`id="email-error"`, `id="password-error"`, `aria-invalid="true"`)},
		{"no action", with(webAuthz(), "email", "sam@example.com"), "", 400, shows("Choose to sign in or to register.")},
		{"tampered redirect is refused, not followed", with(signin("sam@example.com", "right-password"), "redirect_uri", "https://evil.example/cb"), "", 400, shows("not registered")},
		{"tampered PKCE goes back as an error", with(signin("sam@example.com", "right-password"), "code_challenge", ""), "", 303, func(t *testing.T, r *testResponse) {
			if _, q := redirectParams(t, r); q.Get("error") != "invalid_request" || q.Get("code") != "" {
				t.Errorf("query = %v", q)
			}
		}},
		{"register", register("last_name", "Person"), "", 303, codeBack},
		{"register a taken address", register("email", "SAM@example.com"), "", 400, shows(`id="email-error"`, "already used", `value="register"`)},
		{"register a short password", register("email", "other@example.com", "password", "short"), "", 400, shows(`id="password-error"`, "at least 8")},
		{"register a bad address", register("email", "not-an-address"), "", 400, shows(`id="email-error"`)},
		{"register a long name", register("email", "other@example.com", "first_name", strings.Repeat("n", 101)), "", 400, shows(`id="first_name-error"`)},
		// AccountAttempts 2: one wrong guess above, one more empties the bucket.
		{"second wrong password", signin("sam@example.com", "wrong-again"), "", 400, shows("wrong")},
		{"limited even with the right password", signin("Sam@example.com", "right-password"), "", 429, func(t *testing.T, r *testResponse) {
			shows("Too many failed attempts")(t, r)
			if r.Header.Get("Retry-After") == "" {
				t.Errorf("no Retry-After")
			}
		}},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			r := e.postForm("/oauth/authorize", row.form, row.remote)
			if r.Status != row.want {
				t.Fatalf("status %d, want %d; Location %q body %s", r.Status, row.want, r.Header.Get("Location"), r.Body)
			}
			row.check(t, r)
		})
	}
	t.Run("the limit is shared with the password grant", func(t *testing.T) {
		r := e.tokenReq(url.Values{"grant_type": {"password"}, "username": {"sam@example.com"}, "password": {"right-password"}})
		if r.Status != http.StatusTooManyRequests {
			t.Fatalf("status %d, want 429", r.Status)
		}
	})
	t.Run("registration turned off", func(t *testing.T) {
		off := authzEnv(t, func(c *Config) { c.Registration = false })
		r := off.postForm("/oauth/authorize", register(), "")
		if r.Status != http.StatusForbidden || !strings.Contains(string(r.Body), "Registration is turned off") {
			t.Fatalf("status %d body %s", r.Status, r.Body)
		}
		if g := off.do(nil, "GET", "/oauth/authorize?"+webAuthz().Encode(), nil); strings.Contains(string(g.Body), "Create an account") {
			t.Errorf("the page offers registration while it is off")
		}
	})
}

// codeFor signs in through the page and returns the code.
func (e *testEnv) codeFor(t *testing.T, q url.Values, email, pw string) string {
	t.Helper()
	_, back := redirectParams(t, e.postForm("/oauth/authorize", with(q, "action", "signin", "email", email, "password", pw), ""))
	if back.Get("code") == "" {
		t.Fatalf("no code: %v", back)
	}
	return back.Get("code")
}

func TestAuthorizationCodeGrant(t *testing.T) {
	t.Parallel()
	e := authzEnv(t)
	reg := e.must(http.StatusCreated, nil, "POST", "/auth/register", map[string]any{"email": "kim@example.com", "password": "kims-password"}).obj(t)
	exchange := func(code string, kv ...string) url.Values {
		return with(url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {webRedirect},
			"client_id": {WebClientID}, "code_verifier": {testVerifier}}, kv...)
	}
	code := e.codeFor(t, webAuthz(), "kim@example.com", "kims-password")
	var firstRefresh string
	rows := []struct {
		name  string
		form  url.Values
		basic [2]string
		want  int
		err   string
		check func(t *testing.T, tok map[string]any)
	}{
		{"unknown code", exchange("not-a-code"), [2]string{}, 400, "invalid_grant", nil},
		{"no verifier", exchange(code, "code_verifier", ""), [2]string{}, 400, "invalid_grant", nil},
		{"wrong verifier", exchange(code, "code_verifier", strings.Repeat("a", 43)), [2]string{}, 400, "invalid_grant", nil},
		{"malformed verifier", exchange(code, "code_verifier", "short"), [2]string{}, 400, "invalid_request", nil},
		{"other redirect URI", exchange(code, "redirect_uri", webRedirect+"/"), [2]string{}, 400, "invalid_grant", nil},
		{"other client", exchange(code, "client_id", "mobile"), [2]string{}, 400, "invalid_grant", nil},
		{"unknown client", exchange(code, "client_id", "who"), [2]string{}, 401, "invalid_client", nil},
		{"no code", exchange(""), [2]string{}, 400, "invalid_request", nil},
		{"no redirect URI", exchange(code, "redirect_uri", ""), [2]string{}, 400, "invalid_request", nil},
		{"right", exchange(code), [2]string{}, 200, "", func(t *testing.T, tok map[string]any) {
			firstRefresh, _ = tok["refresh_token"].(string)
			if tok["token_type"] != "Bearer" || firstRefresh == "" {
				t.Fatalf("token answer = %v", tok)
			}
			me := e.must(200, &testUser{Token: tok["access_token"].(string)}, "GET", "/users/@me", nil).obj(t)
			if me["id"] != reg["id"] {
				t.Errorf("signed in as %v, want %v", me["id"], reg["id"])
			}
			var c claims
			p := jwt.NewParser(jwt.WithTimeFunc(e.clock.Now))
			if _, err := p.ParseWithClaims(tok["id_token"].(string), &c, func(*jwt.Token) (any, error) { return &e.srv.auth.current().priv.PublicKey, nil }); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(c.Audience, jwt.ClaimStrings{WebClientID}) || c.Nonce != "n-1" || c.Subject != reg["id"] {
				t.Errorf("id token aud %v nonce %q sub %q", c.Audience, c.Nonce, c.Subject)
			}
		}},
		{"replayed code revokes what it gave", exchange(code), [2]string{}, 400, "invalid_grant", func(t *testing.T, _ map[string]any) {
			r := e.tokenReq(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {firstRefresh}})
			if r.Status != 400 {
				t.Errorf("refresh after a replayed code: status %d, want 400", r.Status)
			}
		}},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			req := httptest.NewRequest("POST", "/oauth/token", strings.NewReader(row.form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			if row.basic[0] != "" {
				req.SetBasicAuth(row.basic[0], row.basic[1])
			}
			r := e.serve(req)
			var body map[string]any
			_ = json.Unmarshal(r.Body, &body)
			if r.Status != row.want || (row.err != "" && body["error"] != row.err) {
				t.Fatalf("status %d body %s, want %d %s", r.Status, r.Body, row.want, row.err)
			}
			if r.Header.Get("Cache-Control") != "no-store" {
				t.Errorf("Cache-Control = %q", r.Header.Get("Cache-Control"))
			}
			if row.check != nil {
				row.check(t, body)
			}
		})
	}
	t.Run("a code lasts 60 seconds", func(t *testing.T) {
		c1 := e.codeFor(t, webAuthz(), "kim@example.com", "kims-password")
		c2 := e.codeFor(t, webAuthz(), "kim@example.com", "kims-password")
		e.clock.Advance(59 * time.Second)
		if r := e.tokenReq(exchange(c1)); r.Status != 200 {
			t.Fatalf("at 59 s: status %d %s", r.Status, r.Body)
		}
		e.clock.Advance(time.Second)
		if r := e.tokenReq(exchange(c2)); r.Status != 400 {
			t.Fatalf("at 60 s: status %d, want 400", r.Status)
		}
	})
	t.Run("confidential client", func(t *testing.T) {
		q := with(webAuthz(), "client_id", "proxy", "redirect_uri", "https://proxy.example.com/oauth2/callback", "code_challenge", "", "code_challenge_method", "")
		c := e.codeFor(t, q, "kim@example.com", "kims-password")
		form := url.Values{"grant_type": {"authorization_code"}, "code": {c}, "redirect_uri": {"https://proxy.example.com/oauth2/callback"}}
		for _, tc := range []struct {
			name, id, secret string
			basic            bool
			want             int
		}{
			{"no secret", "proxy", "", false, 401},
			{"wrong secret", "proxy", "nope", true, 401},
			{"a verifier for a code without a challenge", "proxy", "s3cret", false, 400},
			{"secret in the body", "proxy", "s3cret", false, 200},
			{"used", "proxy", "s3cret", true, 400},
		} {
			f := with(form)
			if tc.basic {
				f.Del("client_id")
			} else {
				f.Set("client_id", tc.id)
				if tc.secret != "" {
					f.Set("client_secret", tc.secret)
				}
			}
			if tc.name == "a verifier for a code without a challenge" {
				f.Set("code_verifier", testVerifier)
			}
			req := httptest.NewRequest("POST", "/oauth/token", strings.NewReader(f.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			if tc.basic {
				req.SetBasicAuth(tc.id, tc.secret)
			}
			if r := e.serve(req); r.Status != tc.want {
				t.Errorf("%s: status %d, want %d: %s", tc.name, r.Status, tc.want, r.Body)
			}
		}
	})
	t.Run("discovery names the endpoint", func(t *testing.T) {
		d := e.must(200, nil, "GET", "/.well-known/openid-configuration", nil).obj(t)
		if d["authorization_endpoint"] != "http://workspace.test/oauth/authorize" {
			t.Errorf("authorization_endpoint = %v", d["authorization_endpoint"])
		}
		for k, want := range map[string]string{"code_challenge_methods_supported": "S256", "response_types_supported": "code", "grant_types_supported": "authorization_code"} {
			l, _ := d[k].([]any)
			if !slices.Contains(l, any(want)) {
				t.Errorf("%s = %v, want %s in it", k, d[k], want)
			}
		}
	})
}

func TestValidateOAuthClient(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		c  OAuthClient
		ok bool
	}{
		{OAuthClient{ID: "app", RedirectURIs: []string{"https://a.example/cb"}}, true},
		{OAuthClient{ID: "app", RedirectURIs: []string{"com.example.app:/cb"}}, true},
		{OAuthClient{ID: "", RedirectURIs: []string{"https://a.example/cb"}}, false},
		{OAuthClient{ID: "a b", RedirectURIs: []string{"https://a.example/cb"}}, false},
		{OAuthClient{ID: "app"}, false},
		{OAuthClient{ID: "app", RedirectURIs: []string{"/relative"}}, false},
		{OAuthClient{ID: "app", RedirectURIs: []string{"https://a.example/cb#frag"}}, false},
	} {
		if err := ValidateOAuthClient(tc.c); (err == nil) != tc.ok {
			t.Errorf("%+v: err %v, want ok=%v", tc.c, err, tc.ok)
		}
	}
}

// TestAuthorizeLoginCSRF: issue 35. The sign-in form is good only in the
// browser it was given to and for its own authorization request, and a
// post a browser marks as cross-site is refused; before the fix every row
// but the last signed in (303 with a code).
// TestSigninCookieSecure: the sign-in form's cookie is Secure when people
// reach the server over HTTPS, also behind a proxy that ends TLS (the
// issuer is https), and not on plain HTTP, where a browser would drop it.
func TestSigninCookieSecure(t *testing.T) {
	t.Parallel()
	for _, row := range []struct {
		issuer string
		secure bool
	}{{"", false}, {"https://work.example.com", true}} {
		e := authzEnv(t, func(c *Config) {
			if row.issuer != "" {
				c.Issuer = row.issuer
			}
		})
		v := webAuthz()
		v.Set("redirect_uri", e.srv.cfg.Issuer+WebRedirectPath)
		cookie, token := e.signinForm(v)
		if cookie == nil || token == "" || cookie.Secure != row.secure {
			t.Errorf("issuer %q: cookie %+v token %q, want Secure %v", row.issuer, cookie, token, row.secure)
		}
	}
}

func TestAuthorizeLoginCSRF(t *testing.T) {
	t.Parallel()
	e := authzEnv(t)
	e.must(http.StatusCreated, nil, "POST", "/auth/register", map[string]any{"email": "sam@example.com", "password": "right-password"})
	signin := with(webAuthz(), "action", "signin", "email", "sam@example.com", "password", "right-password")
	cookie, token := e.signinForm(signin)
	otherCookie, _ := e.signinForm(signin)
	_, otherRequestToken := e.signinForm(with(signin, "state", "st-other"))
	if cookie == nil || !cookie.HttpOnly || cookie.SameSite != http.SameSiteStrictMode || token == "" {
		t.Fatalf("cookie %v token %q", cookie, token)
	}
	refused := func(t *testing.T, r *testResponse) {
		if r.Status != http.StatusForbidden || r.Header.Get("Location") != "" || !strings.Contains(string(r.Body), "sent from another site") {
			t.Fatalf("status %d Location %q body %s", r.Status, r.Header.Get("Location"), r.Body)
		}
	}
	h := func(kv ...string) http.Header {
		out := http.Header{}
		for i := 0; i < len(kv); i += 2 {
			out.Set(kv[i], kv[i+1])
		}
		return out
	}
	for _, row := range []struct {
		name   string
		form   url.Values
		cookie *http.Cookie
		header http.Header
		ok     bool
	}{
		{"another site's form: no token, no cookie", signin, nil, nil, false},
		{"a token without its cookie", with(signin, "csrf", token), nil, nil, false},
		{"a token with another browser's cookie", with(signin, "csrf", token), otherCookie, nil, false},
		{"the token of another authorization request", with(signin, "csrf", otherRequestToken), cookie, nil, false},
		{"a cross-site post with a good token", with(signin, "csrf", token), cookie, h("Sec-Fetch-Site", "cross-site"), false},
		{"a same-site post from another origin", with(signin, "csrf", token), cookie, h("Sec-Fetch-Site", "same-site"), false},
		{"an Origin that is not this server", with(signin, "csrf", token), cookie, h("Origin", "https://evil.example"), false},
		{"this browser's form", with(signin, "csrf", token), cookie, h("Sec-Fetch-Site", "same-origin", "Origin", "null"), true},
		{"this form from a browser without Sec-Fetch-Site", with(signin, "csrf", token), cookie, h("Origin", "http://example.com"), true},
	} {
		t.Run(row.name, func(t *testing.T) {
			r := e.postFormWith("/oauth/authorize", row.form, "", row.cookie, row.header)
			if !row.ok {
				refused(t, r)
				return
			}
			if _, q := redirectParams(t, r); q.Get("code") == "" {
				t.Fatalf("no code: %v", q)
			}
		})
	}
}
