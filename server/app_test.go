package server

import (
	"io/fs"
	"net/http"
	"strings"
	"testing"

	"workspace/web"
)

func TestAppServing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	assets, err := fs.Glob(web.Dist(), "assets/*.js")
	if err != nil || len(assets) == 0 {
		t.Fatalf("no script in web/dist/assets: %v", err)
	}
	script := "/app/" + assets[0]
	isIndex := func(t *testing.T, r *testResponse) {
		t.Helper()
		if !strings.Contains(string(r.Body), `<div id="app">`) || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") {
			t.Fatalf("not index.html: %s %s", r.Header.Get("Content-Type"), r.Body)
		}
		if r.Header.Get("Cache-Control") != "no-cache" {
			t.Errorf("Cache-Control = %q, want no-cache", r.Header.Get("Cache-Control"))
		}
		csp := r.Header.Get("Content-Security-Policy")
		for _, want := range []string{"default-src 'self'", "script-src 'self'", "frame-ancestors 'none'"} {
			if !strings.Contains(csp, want) {
				t.Errorf("CSP %q lacks %s", csp, want)
			}
		}
		if strings.Contains(csp, "unsafe-inline") || strings.Contains(string(r.Body), "<script>") {
			t.Errorf("inline script allowed or present")
		}
		if r.Header.Get("X-Content-Type-Options") != "nosniff" || r.Header.Get("Referrer-Policy") == "" || r.Header.Get("X-Frame-Options") != "DENY" {
			t.Errorf("headers = %v", r.Header)
		}
	}
	redirectsTo := func(want string) func(t *testing.T, r *testResponse) {
		return func(t *testing.T, r *testResponse) {
			if r.Header.Get("Location") != want {
				t.Errorf("Location = %q, want %q", r.Header.Get("Location"), want)
			}
		}
	}
	rows := []struct {
		name, path string
		want       int
		check      func(t *testing.T, r *testResponse)
	}{
		{"the root sends a browser to the app", "/", http.StatusFound, redirectsTo("/app/")},
		{"/app without the slash", "/app", http.StatusFound, redirectsTo("/app/")},
		{"the app", "/app/", http.StatusOK, isIndex},
		{"index.html by name", "/app/index.html", http.StatusOK, isIndex},
		{"a route of the app", "/app/orgs/123/members", http.StatusOK, isIndex},
		{"the sign-in callback", "/app/callback?code=x&state=y", http.StatusOK, isIndex},
		{"a climbing path stays inside", "/app/../../etc/passwd", http.StatusOK, isIndex},
		{"a hashed script", script, http.StatusOK, func(t *testing.T, r *testResponse) {
			if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/javascript") {
				t.Errorf("Content-Type = %q", ct)
			}
			if cc := r.Header.Get("Cache-Control"); !strings.Contains(cc, "immutable") || !strings.Contains(cc, "max-age=31536000") {
				t.Errorf("Cache-Control = %q", cc)
			}
		}},
		{"a missing asset is not index.html", "/app/assets/missing-123.js", http.StatusNotFound, func(t *testing.T, r *testResponse) {
			assertErrorBody(t, r)
		}},
		{"the assets folder itself", "/app/assets/", http.StatusNotFound, nil},
		{"the icon", "/favicon.ico", http.StatusOK, func(t *testing.T, r *testResponse) {
			if ct := r.Header.Get("Content-Type"); ct != "image/svg+xml" || !strings.HasPrefix(string(r.Body), "<svg") {
				t.Errorf("Content-Type %q, body %.40s", ct, r.Body)
			}
		}},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			r := e.do(nil, "GET", row.path, nil)
			if r.Status != row.want {
				t.Fatalf("GET %s: status %d, want %d: %s", row.path, r.Status, row.want, r.Body)
			}
			if row.check != nil {
				row.check(t, r)
			}
		})
	}
	t.Run("POST is not allowed", func(t *testing.T) {
		if r := e.do(nil, "POST", "/app/", nil); r.Status != http.StatusMethodNotAllowed {
			t.Fatalf("status %d, want 405", r.Status)
		}
	})
}
