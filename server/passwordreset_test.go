package server

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"
)

// resetToken is the token of the nth reset mail to addr (waited for).
func (e *testEnv) resetToken(addr string, n int) string {
	e.t.Helper()
	u, err := url.Parse(e.nthMail(addr, "new password", n).Link)
	if err != nil {
		e.t.Fatal(err)
	}
	return u.Query().Get("token")
}

func (e *testEnv) passwordWorks(email, pw string) bool {
	e.t.Helper()
	return e.tokenReq(url.Values{"grant_type": {"password"}, "username": {email}, "password": {pw}}).Status == http.StatusOK
}

// TestPasswordReset: the rules of issue 36 (one hour, single use, the same
// answer for unknown addresses, refresh tokens revoked, throttled).
func TestPasswordReset(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if r := e.register("sam@example.com", "old password"); r.Status != http.StatusCreated {
		t.Fatalf("register: %d %s", r.Status, r.Body)
	}
	login := e.tokenReq(url.Values{"grant_type": {"password"}, "username": {"sam@example.com"}, "password": {"old password"}}).obj(t)
	refresh := login["refresh_token"].(string)
	forgot := func(email, remote string) *testResponse {
		return e.postForm("/auth/forgot", url.Values{"email": {email}}, remote)
	}

	t.Run("the same answer whether or not the address has an account", func(t *testing.T) {
		unknown, known := forgot("nobody@example.com", "10.0.0.1:1"), forgot("SAM@example.com", "10.0.0.1:1")
		if known.Status != 200 || unknown.Status != 200 {
			t.Fatalf("statuses %d, %d; want 200, 200", known.Status, unknown.Status)
		}
		if a, b := strings.ReplaceAll(string(known.Body), "SAM@example.com", "X"), strings.ReplaceAll(string(unknown.Body), "nobody@example.com", "X"); a != b {
			t.Errorf("the pages differ:\n%s\n%s", a, b)
		}
		e.nthMail("sam@example.com", "Choose a new password", 1)
		// Only a known address starts a mail: nothing else is on its way.
		if e.messagesTo("nobody@example.com") != 0 {
			t.Error("an address without an account was mailed")
		}
		if n := e.count(`SELECT count(*) FROM outbox WHERE recipient = 'sam@example.com' AND subject = 'Choose a new password'`); n != 1 {
			t.Errorf("reset mails to sam = %d, want 1", n)
		}
	})
	tok := e.resetToken("sam@example.com", 1)
	t.Run("stored hashed", func(t *testing.T) {
		if e.count(`SELECT count(*) FROM password_resets WHERE token_hash = ?`, tok) != 0 ||
			e.count(`SELECT count(*) FROM password_resets WHERE token_hash = ?`, hashToken(tok)) != 1 {
			t.Fatal("the reset token is not stored as its hash")
		}
	})
	t.Run("the link opens the new-password page", func(t *testing.T) {
		r := e.do(nil, "GET", "/auth/reset?token="+tok, nil)
		if r.Status != 200 || !strings.Contains(string(r.Body), `name="password_again"`) {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
		if r.Header.Get("Referrer-Policy") != "no-referrer" || !strings.Contains(r.Header.Get("Content-Security-Policy"), "default-src 'none'") {
			t.Errorf("headers %v", r.Header)
		}
	})
	t.Run("bad passwords change nothing", func(t *testing.T) {
		for _, form := range []url.Values{
			{"token": {tok}, "password": {"short"}, "password_again": {"short"}},
			{"token": {tok}, "password": {"new password 1"}, "password_again": {"new password 2"}},
		} {
			r := e.postForm("/auth/reset", form, "")
			if r.Status != 400 || !strings.Contains(string(r.Body), `class="err"`) {
				t.Errorf("%v: %d %s", form, r.Status, r.Body)
			}
		}
		if !e.passwordWorks("sam@example.com", "old password") {
			t.Fatal("the old password stopped working")
		}
	})
	t.Run("set, once; refresh tokens revoked", func(t *testing.T) {
		r := e.postForm("/auth/reset", url.Values{"token": {tok}, "password": {"new password"}, "password_again": {"new password"}}, "")
		if r.Status != 200 || !strings.Contains(string(r.Body), "Your password is changed") {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
		if e.passwordWorks("sam@example.com", "old password") || !e.passwordWorks("sam@example.com", "new password") {
			t.Error("the password did not change")
		}
		if r := e.tokenReq(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}}); r.Status != 400 {
			t.Errorf("a refresh token from before the reset still works: %d", r.Status)
		}
		for _, r := range []*testResponse{
			e.do(nil, "GET", "/auth/reset?token="+tok, nil),
			e.postForm("/auth/reset", url.Values{"token": {tok}, "password": {"third password"}, "password_again": {"third password"}}, ""),
		} {
			if r.Status != 400 || !strings.Contains(string(r.Body), "expired or was already used") || !strings.Contains(string(r.Body), `action="/auth/forgot"`) {
				t.Errorf("a used link: %d %s", r.Status, r.Body)
			}
		}
		if !e.passwordWorks("sam@example.com", "new password") {
			t.Error("a used link changed the password again")
		}
	})
	t.Run("expires after an hour; a new request replaces the link", func(t *testing.T) {
		forgot("sam@example.com", "10.0.0.2:1")
		first := e.resetToken("sam@example.com", 2)
		forgot("sam@example.com", "10.0.0.2:1")
		second := e.resetToken("sam@example.com", 3)
		if r := e.do(nil, "GET", "/auth/reset?token="+first, nil); r.Status != 400 {
			t.Errorf("a replaced link: %d", r.Status)
		}
		e.clock.Advance(59 * time.Minute)
		if r := e.do(nil, "GET", "/auth/reset?token="+second, nil); r.Status != 200 {
			t.Errorf("at 59 minutes: %d", r.Status)
		}
		e.clock.Advance(2 * time.Minute)
		if r := e.do(nil, "GET", "/auth/reset?token="+second, nil); r.Status != 400 {
			t.Errorf("at 61 minutes: %d", r.Status)
		}
	})
	t.Run("requests are throttled per address, known or not", func(t *testing.T) {
		for _, addr := range []string{"sam@example.com", "ghost@example.com"} {
			var last *testResponse
			for i := 0; i <= accountAttempts; i++ {
				last = forgot(addr, "10.1.0."+strconv.Itoa(i)+":1")
			}
			if last.Status != 429 || last.Header.Get("Retry-After") == "" {
				t.Errorf("%s: request %d answered %d (Retry-After %q), want 429", addr, accountAttempts+1, last.Status, last.Header.Get("Retry-After"))
			}
		}
	})
	t.Run("wrong tokens spend the client's guesses", func(t *testing.T) {
		var last *testResponse
		for i := 0; i <= addressAttempts; i++ {
			req := e.do(nil, "GET", "/auth/reset?token=guess"+strconv.Itoa(i), nil)
			last = req
		}
		if last.Status != 429 {
			t.Errorf("after %d wrong tokens: %d, want 429", addressAttempts+1, last.Status)
		}
	})
	t.Run("bad input", func(t *testing.T) {
		if r := e.postForm("/auth/forgot", url.Values{"email": {"not an address"}}, "10.2.0.1:1"); r.Status != 400 || !strings.Contains(string(r.Body), "email-error") {
			t.Errorf("invalid address: %d", r.Status)
		}
		if r := e.postRaw("/auth/forgot", "application/x-www-form-urlencoded", "%zz"); r.Status != 400 {
			t.Errorf("malformed form: %d", r.Status)
		}
		r := e.do(nil, "GET", "/auth/forgot?next=https://evil.example/", nil)
		if r.Status != 200 || strings.Contains(string(r.Body), "evil.example") {
			t.Errorf("a foreign return address was kept: %s", r.Body)
		}
	})
}

func TestPasswordResetByStaff(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	staff, alice := e.user("root"), e.user("alice")
	e.exec(`UPDATE users SET badges = ? WHERE id = ?`, BadgeStaff, staff.id)
	e.run(t, []scenario{
		{name: "staff sends", as: staff, method: "POST", path: "/admin/users/" + alice.ID + "/password-reset", want: 202},
		{name: "not staff", as: alice, method: "POST", path: "/admin/users/" + staff.ID + "/password-reset", want: 403},
		{name: "no such user", as: staff, method: "POST", path: "/admin/users/123456789012345678/password-reset", want: 404},
		{name: "not an id", as: staff, method: "POST", path: "/admin/users/abc/password-reset", want: 400},
		{name: "no token", method: "POST", path: "/admin/users/" + alice.ID + "/password-reset", want: 401},
	})
	if e.messagesTo(alice.Email) != 1 || e.messagesTo(staff.Email) != 0 {
		t.Fatalf("mails: alice %d, staff %d; want 1, 0", e.messagesTo(alice.Email), e.messagesTo(staff.Email))
	}
	tok := e.resetToken(alice.Email, 1)
	if r := e.postForm("/auth/reset", url.Values{"token": {tok}, "password": {"chosen password"}, "password_again": {"chosen password"}}, ""); r.Status != 200 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	if !e.passwordWorks(alice.Email, "chosen password") {
		t.Fatal("the password was not set")
	}
}

// TestSignInPageLinksToReset: "Forgot password?" on the sign-in page keeps
// the sign-in request to come back to.
func TestSignInPageLinksToReset(t *testing.T) {
	t.Parallel()
	e := authzEnv(t)
	r := e.do(nil, "GET", "/oauth/authorize?"+webAuthz().Encode(), nil)
	body := string(r.Body)
	i := strings.Index(body, `<a href="/auth/forgot?`)
	if r.Status != 200 || i < 0 || !strings.Contains(body, "Forgot password?") {
		t.Fatalf("no forgot-password link: %s", body)
	}
	href := body[i+len(`<a href="`):]
	href = strings.ReplaceAll(href[:strings.IndexByte(href, '"')], "&amp;", "&")
	page := e.do(nil, "GET", href, nil)
	if page.Status != 200 || !strings.Contains(string(page.Body), `href="/oauth/authorize?`) {
		t.Fatalf("the reset page does not lead back to the sign-in: %s", page.Body)
	}
}

// TestConfirmationMailThrottle: confirmation mails are limited per account
// and per address (issue 36).
func TestConfirmationMailThrottle(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	alice, bob := e.user("alice"), e.user("bob")
	id := e.must(201, alice, "POST", "/users/@me/emails", map[string]any{"email": "shared@example.org"}).obj(t)["id"].(string)
	for i := 1; i < accountAttempts; i++ {
		e.must(200, alice, "POST", "/users/@me/emails/"+id+"/verify", nil)
	}
	r := e.do(alice, "POST", "/users/@me/emails/"+id+"/verify", nil)
	if r.Status != 429 || r.Header.Get("Retry-After") == "" {
		t.Fatalf("mail %d: %d, want 429 with Retry-After", accountAttempts+1, r.Status)
	}
	// Another account cannot make the server mail the same address either.
	if r := e.do(bob, "POST", "/users/@me/emails", map[string]any{"email": "shared@example.org"}); r.Status != 429 {
		t.Errorf("another account mailing the same address: %d, want 429", r.Status)
	}
	if n := e.messagesTo("shared@example.org"); n != accountAttempts {
		t.Errorf("mails = %d, want %d", n, accountAttempts)
	}
	e.clock.Advance(time.Hour)
	e.must(200, alice, "POST", "/users/@me/emails/"+id+"/verify", nil)
}
