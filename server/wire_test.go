package server

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"workspace/db"
)

// syncBuffer is a log sink safe for concurrent handlers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestWireConventions(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *Config) { c.MaxBody = 1024 })
	alice := e.user("alice")
	big := `{"email":"big@example.com","password":"12345678","first_name":"` + strings.Repeat("x", 2000) + `"}`
	e.run(t, []scenario{
		{name: "healthz", method: "GET", path: "/healthz", want: 200, check: func(t *testing.T, r *testResponse) {
			if got := r.obj(t)["status"]; got != "ok" {
				t.Fatalf("status = %v, want ok", got)
			}
		}},
		{name: "unknown path", method: "GET", path: "/no/such/path", want: 404},
		{name: "unknown path with a token", as: alice, method: "POST", path: "/nothing", body: map[string]any{}, want: 404},
		{name: "trailing slash is another path", method: "GET", path: "/healthz/", want: 404},
		{name: "wrong method", method: "DELETE", path: "/healthz", want: 405, check: func(t *testing.T, r *testResponse) {
			if allow := r.Header.Get("Allow"); !strings.Contains(allow, "GET") {
				t.Fatalf("Allow = %q, want GET in it", allow)
			}
		}},
		{name: "wrong method on a POST route", method: "PUT", path: "/auth/register", body: map[string]any{}, want: 405,
			check: func(t *testing.T, r *testResponse) {
				if allow := r.Header.Get("Allow"); !strings.Contains(allow, "POST") {
					t.Fatalf("Allow = %q, want POST in it", allow)
				}
			}},
		{name: "body over the limit", method: "POST", path: "/auth/register", body: big, want: 413},
		{name: "authenticated body over the limit", as: alice, method: "POST", path: "/organisations",
			body: `{"name":"` + strings.Repeat("x", 2000) + `"}`, want: 413},
		{name: "malformed JSON", method: "POST", path: "/auth/register", body: `{"email":`, want: 400},
		{name: "not JSON at all", method: "POST", path: "/auth/register", body: `email=x`, want: 400},
		{name: "wrong type names the field", method: "POST", path: "/auth/register", body: `{"email":"w@example.com","password":12345678}`, want: 400,
			check: func(t *testing.T, r *testResponse) {
				if errs, _ := r.obj(t)["errors"].(map[string]any); errs["password"] == nil {
					t.Fatalf("errors = %v, want password named", errs)
				}
			}},
		{name: "no token", method: "GET", path: "/users/@me", want: 401},
	})
	for _, ct := range []string{"text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/json; charset", "nonsense"} {
		t.Run("content type "+ct, func(t *testing.T) {
			r := e.postRaw("/auth/register", ct, `{"email":"ct@example.com","password":"12345678"}`)
			if r.Status != http.StatusUnsupportedMediaType {
				t.Fatalf("status %d, want 415", r.Status)
			}
			assertErrorBody(t, r)
		})
	}
	t.Run("JSON content types accepted", func(t *testing.T) {
		for i, ct := range []string{"application/json; charset=utf-8", "application/merge-patch+json"} {
			r := e.postRaw("/auth/register", ct, fmt.Sprintf(`{"email":"ok%d@example.com","password":"12345678"}`, i))
			if r.Status != http.StatusCreated {
				t.Fatalf("%s: status %d, want 201", ct, r.Status)
			}
		}
	})
	t.Run("form over the limit at the token endpoint", func(t *testing.T) {
		r := e.tokenReq(url.Values{"grant_type": {"password"}, "username": {strings.Repeat("x", 2000)}, "password": {"x"}})
		if r.Status != http.StatusRequestEntityTooLarge {
			t.Fatalf("status %d, want 413; body %s", r.Status, r.Body)
		}
		assertErrorBody(t, r)
	})
	t.Run("every answer carries a request id", func(t *testing.T) {
		a, b := e.do(nil, "GET", "/healthz", nil), e.do(nil, "GET", "/nope", nil)
		if a.Header.Get("X-Request-Id") == "" || a.Header.Get("X-Request-Id") == b.Header.Get("X-Request-Id") {
			t.Fatalf("request ids %q, %q: want two different ones", a.Header.Get("X-Request-Id"), b.Header.Get("X-Request-Id"))
		}
	})
	t.Run("errors are JSON", func(t *testing.T) {
		r := e.do(nil, "GET", "/nope", nil)
		if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			t.Fatalf("Content-Type = %q, want JSON", ct)
		}
	})
}

// TestWriteError: the one exit picks the status, and internal text never
// reaches the client; the log gets it with the request id.
func TestWriteError(t *testing.T) {
	t.Parallel()
	secret := "no such table: users_secret_internal"
	cases := []struct {
		name   string
		err    error
		status int
	}{
		{"client error", badRequest("Bad %s.", "thing"), 400},
		{"wrapped client error", fmt.Errorf("ctx: %w", forbidden("No.")), 403},
		{"not found", db.ErrNotFound, 404},
		{"wrapped not found", fmt.Errorf("get: %w", db.ErrNotFound), 404},
		{"unclassified missing row", sql.ErrNoRows, 404},
		{"wrapped unclassified missing row", fmt.Errorf("get: %w", sql.ErrNoRows), 404},
		{"conflict", errors.Join(db.ErrConflict, errors.New(secret)), 409},
		{"body too large", errBodyTooLarge, 413},
		{"unauthorized", errUnauthorized("Who?"), 401},
		{"internal", errors.New(secret), 500},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var log syncBuffer
			req := httptest.NewRequest("GET", "/x", nil)
			ctx := context.WithValue(req.Context(), requestIDKey, "req-42")
			ctx = context.WithValue(ctx, loggerKey, slog.New(slog.NewTextHandler(&log, nil)))
			rec := httptest.NewRecorder()
			writeError(rec, req.WithContext(ctx), tc.err)
			if rec.Code != tc.status {
				t.Fatalf("status %d, want %d", rec.Code, tc.status)
			}
			r := &testResponse{Status: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()}
			assertErrorBody(t, r)
			if strings.Contains(rec.Body.String(), "secret") {
				t.Fatalf("body leaks internal text: %s", rec.Body)
			}
			if tc.status == 500 {
				if msg := r.obj(t)["message"].(string); !strings.Contains(msg, "req-42") {
					t.Fatalf("message %q does not name the request id", msg)
				}
				if l := log.String(); !strings.Contains(l, secret) || !strings.Contains(l, "req-42") {
					t.Fatalf("log %q lacks the error or the request id", l)
				}
			}
		})
	}
	t.Run("cancelled request", func(t *testing.T) {
		req := httptest.NewRequest("GET", "/x", nil)
		ctx, cancel := context.WithCancel(req.Context())
		cancel()
		rec := httptest.NewRecorder()
		writeError(rec, req.WithContext(ctx), context.Canceled)
		if rec.Code == 500 {
			t.Fatalf("a request the client gave up on logged as a 500")
		}
	})
}

// TestPanicsAndInternalErrors go through the whole middleware chain.
func TestPanicsAndInternalErrors(t *testing.T) {
	t.Parallel()
	var log syncBuffer
	e := newEnv(t, func(c *Config) { c.Logger = slog.New(slog.NewJSONHandler(&log, nil)) })
	e.srv.router.Handle("GET", "/test/panic", e.srv.handle("test", public, func(rq *request) error { panic("boom secret") }))
	e.srv.router.Handle("GET", "/test/fail", e.srv.handle("test", public, func(rq *request) error { return errors.New("driver secret") }))
	for _, path := range []string{"/test/panic", "/test/fail"} {
		t.Run(path, func(t *testing.T) {
			r := e.do(nil, "GET", path, nil)
			if r.Status != 500 {
				t.Fatalf("status %d, want 500", r.Status)
			}
			assertErrorBody(t, r)
			if strings.Contains(string(r.Body), "secret") {
				t.Fatalf("body leaks: %s", r.Body)
			}
			if id := r.Header.Get("X-Request-Id"); !strings.Contains(string(r.Body), id) {
				t.Fatalf("body %s does not name request id %q", r.Body, id)
			}
		})
	}
	if !strings.Contains(log.String(), "driver secret") || !strings.Contains(log.String(), "boom secret") {
		t.Fatalf("the server log lacks the internal errors: %s", log.String())
	}
}

// TestQueryStringsNeverLogged: signing codes travel in query strings.
func TestQueryStringsNeverLogged(t *testing.T) {
	t.Parallel()
	var log syncBuffer
	e := newEnv(t, func(c *Config) { c.Logger = slog.New(slog.NewJSONHandler(&log, nil)) })
	alice := e.user("alice")
	e.do(nil, "GET", "/healthz?token=SECRET-CODE-1", nil)
	e.do(alice, "GET", "/users/@me?token=SECRET-CODE-2", nil)
	e.do(nil, "GET", "/nope?jwt=SECRET-CODE-3", nil)
	e.do(nil, "DELETE", "/healthz?token=SECRET-CODE-4", nil)
	out := log.String()
	if strings.Contains(out, "SECRET-CODE") {
		t.Fatalf("a query string reached the log: %s", out)
	}
	var lines int
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil && m["msg"] == "request" {
			lines++
			if p, _ := m["path"].(string); p == "" {
				t.Errorf("request line without path: %s", l)
			}
			if st, _ := m["status"].(float64); st < 200 {
				t.Errorf("request line with status %v: %s", m["status"], l)
			}
		}
	}
	if lines != 4 {
		t.Fatalf("%d request log lines, want 4:\n%s", lines, out)
	}
}

// A wrong type names the JSON type the field wants, nested keys included.
func TestWrongTypeNamesJSONType(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	alice := e.user("alice")
	org := e.org(alice, "Acme")
	path := "/organisations/" + org + "/permissions/" + org
	e.run(t, []scenario{
		{name: "array for an object", as: alice, method: "PUT", path: path, body: `{"permissions": []}`, want: 400,
			check: func(t *testing.T, r *testResponse) {
				if got := r.obj(t)["errors"].(map[string]any)["permissions"]; got != "must be of type object (got array)" {
					t.Errorf("got %v, want must be of type object (got array)", got)
				}
			}},
		{name: "number for a grant type", as: alice, method: "PUT", path: path, body: `{"permissions": {"VIEW_PROJECTS": 1}}`, want: 400,
			check: func(t *testing.T, r *testResponse) {
				if got := r.obj(t)["errors"].(map[string]any)["permissions"]; got != "must be of type string (got number)" {
					t.Errorf("got %v, want must be of type string (got number)", got)
				}
			}},
		{name: "string for a boolean", as: alice, method: "PATCH", path: "/organisations/" + org, body: `{"member_approval": "yes"}`, want: 400,
			check: func(t *testing.T, r *testResponse) {
				if got := r.obj(t)["errors"].(map[string]any)["member_approval"]; got != "must be of type boolean (got string)" {
					t.Errorf("got %v, want must be of type boolean (got string)", got)
				}
			}},
	})
}
