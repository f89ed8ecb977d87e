package server

import (
	"context"
	"testing"
	"time"

	"workspace/db"
)

// --- QR token ---

func TestUserQR(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	alice, bob := e.user("alice"), e.user("bob")
	const secret = "JBSWY3DPEHPK3PXP"
	e.run(t, []scenario{
		{name: "no token", method: "PUT", path: "/users/@me/qr/token", body: map[string]any{"token": secret}, want: 401},
		{name: "missing", as: alice, method: "PUT", path: "/users/@me/qr/token", body: map[string]any{}, want: 400, check: wantField("token")},
		{name: "empty", as: alice, method: "PUT", path: "/users/@me/qr/token", body: map[string]any{"token": "  "}, want: 400, check: wantField("token")},
		{name: "not base32", as: alice, method: "PUT", path: "/users/@me/qr/token", body: map[string]any{"token": "not-base32-at-all!!"}, want: 400, check: wantField("token")},
		{name: "too short", as: alice, method: "PUT", path: "/users/@me/qr/token", body: map[string]any{"token": "JBSWY3DP"}, want: 400},
		{name: "wrong type", as: alice, method: "PUT", path: "/users/@me/qr/token", body: map[string]any{"token": 12}, want: 400},
		{name: "register", as: alice, method: "PUT", path: "/users/@me/qr/token", body: map[string]any{"token": "jbsw y3dp ehpk 3pxp"}, want: 200, check: wantKey("expires_at", "2026-11-22T09:30:00.000Z")},
		{name: "refresh", as: alice, method: "PUT", path: "/users/@me/qr/token", body: map[string]any{"token": secret}, want: 200},
		{name: "scan no token", method: "POST", path: "/users/@me/qr/scan", want: 401},
		{name: "scan", as: alice, method: "POST", path: "/users/@me/qr/scan", want: 501},
		{name: "me keeps totp_token null", as: alice, method: "GET", path: "/users/@me", want: 200, check: wantKey("totp_token", nil)},
	})
	live := func(u *testUser) (string, bool) {
		var s string
		var ok bool
		err := e.store.InTx(context.Background(), func(q *db.Queries) error {
			var err error
			s, ok, err = e.srv.liveTOTPSecret(context.Background(), q, u.id)
			return err
		})
		if err != nil {
			t.Fatalf("liveTOTPSecret: %v", err)
		}
		return s, ok
	}
	if s, ok := live(alice); !ok || s != secret {
		t.Fatalf("live secret = %q, %v; want %s", s, ok, secret)
	}
	if n := e.count(`SELECT count(*) FROM user_totp_secrets WHERE user_id = ?`, alice.id); n != 1 {
		t.Fatalf("rows = %d, want 1 (upsert)", n)
	}
	e.clock.Advance(24 * time.Hour)
	if _, ok := live(alice); ok {
		t.Fatalf("after 24 hours the secret is still live")
	}
	if n := e.count(`SELECT count(*) FROM user_totp_secrets WHERE user_id = ?`, alice.id); n != 0 {
		t.Fatalf("expired secret not deleted on read")
	}
	// Registering sweeps everyone's expired secrets.
	e.exec(`INSERT INTO user_totp_secrets(user_id, secret, created_at, expires_at) VALUES (?, ?, ?, ?)`, alice.id, secret, "2026-01-01T00:00:00.000Z", "2026-01-02T00:00:00.000Z")
	bob = e.tokenFor(db.User{ID: bob.id, Email: bob.Email})
	e.must(200, bob, "PUT", "/users/@me/qr/token", map[string]any{"token": secret})
	if n := e.count(`SELECT count(*) FROM user_totp_secrets`); n != 1 {
		t.Fatalf("secrets = %d, want only bob's", n)
	}
}
