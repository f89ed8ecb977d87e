package server

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestTextProblem(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{"plain", true},
		{"tab\tand\nnewline", true},
		{"émoji ✓ 漢字", true},
		{"nul\x00", false},
		{"bell\x07", false},
		{"cr\r", false},
		{"esc\x1b[31m", false},
		{"bad \xff utf8", false},
	} {
		if got := textProblem(tc.in) == ""; got != tc.ok {
			t.Errorf("textProblem(%q) ok = %v, want %v", tc.in, got, tc.ok)
		}
	}
}

// TestTextRuleAcrossAreas: the rule lives in the shared decoder, so every
// area refuses control characters, invalid UTF-8 and repeated keys with a
// 400 naming the field, and stores nothing.
func TestTextRuleAcrossAreas(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	owner := e.user("owner")
	orgID := e.org(owner, "Acme")
	project := e.must(http.StatusCreated, owner, "POST", "/organisations/"+orgID+"/projects", map[string]any{"name": "Bridge"}).obj(t)["id"].(string)
	role := e.must(http.StatusCreated, owner, "POST", "/organisations/"+orgID+"/roles", map[string]any{"alias": "crew"}).obj(t)["id"].(string)

	type row struct {
		name, method, path, body, field string
	}
	rows := []row{
		{"organisation name NUL", "POST", "/organisations", `{"name":"ab\u0000cd"}`, "name"},
		{"organisation patch BEL", "PATCH", "/organisations/" + orgID, `{"description":"x\u0007"}`, "description"},
		{"project name ESC", "POST", "/organisations/" + orgID + "/projects", `{"name":"x\u001b[31m"}`, "name"},
		{"project readme CR", "PATCH", "/projects/" + project, `{"readme":"a\r\nb"}`, "readme"},
		{"milestone name", "POST", "/projects/" + project + "/milestones", `{"name":"m\u0000"}`, "name"},
		{"package code", "POST", "/projects/" + project + "/packages", `{"code":"P\u0001"}`, "code"},
		{"role alias", "PATCH", "/roles/" + role, `{"alias":"r\u0002"}`, "alias"},
		{"user first name", "PATCH", "/users/@me", `{"first_name":"A\u0000"}`, "first_name"},
		{"e-mail", "POST", "/users/@me/emails", `{"email":"a\u0000@example.com"}`, "email"},
		{"nested permission key", "PUT", "/organisations/" + orgID + "/permissions/" + role, `{"permissions":{"VIEW\u0000":"allow"}}`, "permissions"},
		{"repeated key", "POST", "/organisations", `{"name":"Good name","name":"Other"}`, "name"},
		{"repeated nested key", "PUT", "/organisations/" + orgID + "/permissions/" + role, `{"permissions":{"VIEW_PROJECTS":"allow","VIEW_PROJECTS":"deny"}}`, "permissions.VIEW_PROJECTS"},
		{"array element", "PATCH", "/organisations/" + orgID + "/roles", `{"id":"` + role + `","order":0,"x":["ok","b\u0000"]}`, "x[1]"},
	}
	for _, tc := range rows {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do(owner, tc.method, tc.path, tc.body)
			if r.Status != http.StatusBadRequest {
				t.Fatalf("status %d, want 400; body %s", r.Status, r.Body)
			}
			errs, _ := r.obj(t)["errors"].(map[string]any)
			if _, ok := errs[tc.field]; !ok {
				t.Errorf("errors %v do not name %q", errs, tc.field)
			}
		})
	}

	t.Run("invalid UTF-8 body", func(t *testing.T) {
		r := e.do(owner, "POST", "/organisations", []byte("{\"name\":\"ab\xffcd\"}"))
		if r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), "UTF-8") {
			t.Errorf("status %d body %s, want 400 naming UTF-8", r.Status, r.Body)
		}
	})
	t.Run("deep nesting is a clean 400", func(t *testing.T) {
		deep := `{"name":` + strings.Repeat("[", 200000) + strings.Repeat("]", 200000) + `}`
		if r := e.do(owner, "POST", "/organisations", deep); r.Status != http.StatusBadRequest {
			t.Errorf("status %d, want 400", r.Status)
		}
	})
	t.Run("nothing was stored", func(t *testing.T) {
		orgs := e.must(http.StatusOK, owner, "GET", "/users/@me/organisations", nil).arr(t)
		if len(orgs) != 1 {
			t.Errorf("caller is in %d organisations, want 1 (a refused create stored something)", len(orgs))
		}
		p := e.must(http.StatusOK, owner, "GET", "/projects/"+project, nil).obj(t)
		if p["readme"] != "" {
			t.Errorf("readme = %q, want unchanged empty", p["readme"])
		}
	})
	t.Run("tab and newline are kept", func(t *testing.T) {
		e.must(http.StatusOK, owner, "PATCH", "/projects/"+project, `{"readme":"line one\n\tline two"}`)
		p := e.must(http.StatusOK, owner, "GET", "/projects/"+project, nil).obj(t)
		if p["readme"] != "line one\n\tline two" {
			t.Errorf("readme = %q", p["readme"])
		}
	})
}

func TestMultipartTextRule(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	alice := e.user("alice")
	req := multipartReq(t, alice, "PATCH", "/users/@me", map[string]string{"first_name": "Al\x00ice"}, nil)
	r := e.serve(req)
	if r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), "first_name") {
		t.Errorf("status %d body %s, want 400 naming first_name", r.Status, r.Body)
	}
}

func TestSecurityHeaders(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	alice := e.user("alice")
	for _, tc := range []struct {
		name, method, path string
		as                 *testUser
		noStore            bool
	}{
		{"authenticated user", "GET", "/users/@me", alice, true},
		{"authenticated list", "GET", "/users/@me/organisations", alice, true},
		{"authenticated error", "GET", "/projects/123", alice, true},
		{"public discovery", "GET", "/.well-known/openid-configuration", nil, false},
		{"no token", "GET", "/users/@me", nil, false},
		{"unknown path", "GET", "/nowhere", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do(tc.as, tc.method, tc.path, nil)
			if got := r.Header.Get("X-Content-Type-Options"); got != "nosniff" {
				t.Errorf("X-Content-Type-Options = %q, want nosniff", got)
			}
			if got := r.Header.Get("Cache-Control"); tc.noStore && got != "no-store" {
				t.Errorf("Cache-Control = %q, want no-store", got)
			}
			if got := r.Header.Get("Strict-Transport-Security"); got != "" {
				t.Errorf("Strict-Transport-Security = %q over http, want none", got)
			}
		})
	}
	t.Run("https issuer sets HSTS", func(t *testing.T) {
		e := newEnv(t, func(c *Config) { c.Issuer = "https://workspace.example" })
		r := e.do(nil, "GET", "/healthz", nil)
		if got := r.Header.Get("Strict-Transport-Security"); !strings.HasPrefix(got, "max-age=") {
			t.Errorf("Strict-Transport-Security = %q, want max-age", got)
		}
	})
}

// TestJSONBodyNeedsContentType: a body sent without a Content-Type is not
// taken for JSON (415) and changes nothing; no body at all is fine.
func TestJSONBodyNeedsContentType(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	alice := e.user("alice")
	send := func(ct, body string) *testResponse {
		req := httptest.NewRequest("POST", "/organisations", strings.NewReader(body))
		if ct != "" {
			req.Header.Set("Content-Type", ct)
		}
		req.Header.Set("Authorization", "Bearer "+e.bearer(alice))
		return e.serve(req)
	}
	if r := send("", `{"name":"No type"}`); r.Status != http.StatusUnsupportedMediaType {
		t.Fatalf("no Content-Type: status %d, want 415", r.Status)
	}
	if r := send("text/plain", `{"name":"Plain"}`); r.Status != http.StatusUnsupportedMediaType {
		t.Fatalf("text/plain: status %d, want 415", r.Status)
	}
	if orgs := e.must(http.StatusOK, alice, "GET", "/users/@me/organisations", nil).arr(t); len(orgs) != 0 {
		t.Fatalf("a refused body made %d organisations", len(orgs))
	}
	if r := send("application/json; charset=utf-8", `{"name":"Typed"}`); r.Status != http.StatusCreated {
		t.Fatalf("application/json: status %d, want 201", r.Status)
	}
	// No body needs no type.
	bob := e.user("bob")
	e.must(http.StatusAccepted, bob, "DELETE", "/users/@me", nil)
}
