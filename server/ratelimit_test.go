package server

import (
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestLimiterBuckets(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)
	l := newLimiter(3, time.Minute, 100)
	for i := 0; i < 3; i++ {
		if w := l.wait("k", now); w != 0 {
			t.Fatalf("attempt %d: wait %v, want 0", i, w)
		}
		l.spend("k", now)
	}
	if w := l.wait("k", now); w != time.Minute {
		t.Fatalf("empty bucket: wait %v, want 1m", w)
	}
	if w := l.wait("other", now); w != 0 {
		t.Fatalf("another key: wait %v, want 0", w)
	}
	now = now.Add(30 * time.Second)
	if w := l.wait("k", now); w != 30*time.Second {
		t.Fatalf("half refilled: wait %v, want 30s", w)
	}
	now = now.Add(30 * time.Second)
	if w := l.wait("k", now); w != 0 {
		t.Fatalf("after the window: wait %v, want 0", w)
	}
	now = now.Add(time.Hour)
	l.spend("k", now)
	l.spend("k", now)
	if w := l.wait("k", now); w != 0 {
		t.Fatalf("refill stops at the burst: wait %v after 2 of 3, want 0", w)
	}
}

func TestLimiterMemoryIsBounded(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)
	l := newLimiter(5, time.Minute, 1000)
	for i := 0; i < 100_000; i++ {
		l.spend("addr-"+strconv.Itoa(i), now)
	}
	if n := l.size(); n > 1000 {
		t.Fatalf("limiter holds %d keys, want at most 1000", n)
	}
}

// TestPasswordGuessingIsLimited: wrong passwords for one account are
// refused with 429 and Retry-After once its attempts are spent; the right
// password works again after the window; each refusal is logged without
// the secret; another account is not affected.
func TestPasswordGuessingIsLimited(t *testing.T) {
	t.Parallel()
	logs := &syncBuffer{}
	e := newEnv(t, func(c *Config) { c.Logger = slog.New(slog.NewTextHandler(logs, nil)) })
	e.register("pat@example.com", "correct horse")
	e.register("sam@example.com", "battery staple")
	login := func(user, pw string) *testResponse {
		return e.tokenReq(url.Values{"grant_type": {"password"}, "username": {user}, "password": {pw}})
	}
	for i := 0; i < accountAttempts; i++ {
		if r := login("pat@example.com", "guess"+strconv.Itoa(i)); r.Status != http.StatusBadRequest {
			t.Fatalf("guess %d: status %d, want 400", i, r.Status)
		}
	}
	r := login("PAT@example.com", "one more")
	if r.Status != http.StatusTooManyRequests {
		t.Fatalf("guess past the limit (other case): status %d, want 429", r.Status)
	}
	secs, err := strconv.Atoi(r.Header.Get("Retry-After"))
	if err != nil || secs < 1 {
		t.Fatalf("Retry-After = %q, want whole seconds", r.Header.Get("Retry-After"))
	}
	if r := login("pat@example.com", "correct horse"); r.Status != http.StatusTooManyRequests {
		t.Fatalf("right password during the lockout: status %d, want 429", r.Status)
	}
	if r := login("sam@example.com", "battery staple"); r.Status != http.StatusOK {
		t.Fatalf("another account: status %d, want 200", r.Status)
	}
	e.clock.Advance(time.Duration(secs) * time.Second)
	if r := login("pat@example.com", "correct horse"); r.Status != http.StatusOK {
		t.Fatalf("right password after the window: status %d, want 200; body %s", r.Status, r.Body)
	}
	out := logs.String()
	if !strings.Contains(out, "guessing limited") || !strings.Contains(out, "kind=password") {
		t.Errorf("refusal not logged: %s", out)
	}
	if strings.Contains(out, "one more") || strings.Contains(out, "correct horse") {
		t.Errorf("a password reached the log")
	}
}

func TestClientAddressIsLimited(t *testing.T) {
	t.Parallel()
	const limit = 5 // each unknown address costs a full-cost dummy hash check
	e := newEnv(t, func(c *Config) { c.AddressAttempts = limit })
	for i := 0; i < limit; i++ {
		// Every wrong guess is against a different account: only the
		// address bucket stops them.
		if r := e.tokenReq(url.Values{"grant_type": {"password"}, "username": {"u" + strconv.Itoa(i) + "@example.com"}, "password": {"x"}}); r.Status != http.StatusBadRequest {
			t.Fatalf("guess %d: status %d, want 400", i, r.Status)
		}
	}
	if r := e.tokenReq(url.Values{"grant_type": {"password"}, "username": {"new@example.com"}, "password": {"x"}}); r.Status != http.StatusTooManyRequests {
		t.Fatalf("past the address limit: status %d, want 429", r.Status)
	}
	if r := e.register("late@example.com", "correct horse"); r.Status != http.StatusTooManyRequests {
		t.Fatalf("registration from the limited address: status %d, want 429", r.Status)
	}
	req := newFormRequest("/oauth/token", url.Values{"grant_type": {"password"}, "username": {"new@example.com"}, "password": {"x"}})
	req.RemoteAddr = "198.51.100.7:4000"
	if r := e.serve(req); r.Status != http.StatusBadRequest {
		t.Fatalf("another client address: status %d, want 400", r.Status)
	}
}

func TestCodeGuessingIsLimited(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	alice := e.user("alice")
	t.Run("e-mail verification token", func(t *testing.T) {
		id := e.must(http.StatusCreated, alice, "POST", "/users/@me/emails", map[string]any{"email": "alice.work@example.com"}).obj(t)["id"].(string)
		for i := 0; i < accountAttempts; i++ {
			e.must(http.StatusBadRequest, alice, "PATCH", "/users/@me/emails/"+id, map[string]any{"email_token": "wrong"})
		}
		r := e.do(alice, "PATCH", "/users/@me/emails/"+id, map[string]any{"email_token": "wrong"})
		if r.Status != http.StatusTooManyRequests || r.Header.Get("Retry-After") == "" {
			t.Fatalf("status %d Retry-After %q, want 429 with Retry-After", r.Status, r.Header.Get("Retry-After"))
		}
	})
	t.Run("invite codes", func(t *testing.T) {
		bob := e.user("bob")
		for i := 0; i < accountAttempts; i++ {
			e.must(http.StatusNotFound, bob, "POST", "/invites/nosuchcode"+strconv.Itoa(i), nil)
		}
		if r := e.do(bob, "POST", "/invites/nosuchcode-x", nil); r.Status != http.StatusTooManyRequests {
			t.Fatalf("status %d, want 429", r.Status)
		}
	})
	t.Run("account deletion token", func(t *testing.T) {
		carol := e.user("carol")
		e.must(http.StatusAccepted, carol, "DELETE", "/users/@me", nil)
		for i := 0; i < accountAttempts; i++ {
			e.must(http.StatusBadRequest, carol, "DELETE", "/users/@me?email_token=wrong", nil)
		}
		if r := e.do(carol, "DELETE", "/users/@me?email_token=wrong", nil); r.Status != http.StatusTooManyRequests {
			t.Fatalf("status %d, want 429", r.Status)
		}
	})
}

func newFormRequest(path string, form url.Values) *http.Request {
	req, _ := http.NewRequest(http.MethodPost, path, io.NopCloser(strings.NewReader(form.Encode())))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.RemoteAddr = "192.0.2.1:1234"
	return req
}
