package server

import (
	"context"
	"fmt"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// --- e-mail addresses ---

// TestUserPatchMultipartLimits: repeated parts, over-long parts and bodies
// over --max-body are 4xx, and nothing changes.
func TestUserPatchMultipartLimits(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *Config) { c.MaxBody = 1 << 20 })
	alice := e.user("alice")
	part := func(name, v string) string {
		return "--b\r\nContent-Disposition: form-data; name=\"" + name + "\"\r\n\r\n" + v + "\r\n"
	}
	cases := []struct {
		name, body string
		want       int
		field      string
	}{
		{"part given twice", part("first_name", "A") + part("first_name", "B") + "--b--\r\n", 400, "first_name"},
		{"text part too long", part("first_name", strings.Repeat("a", maxFormField+1)) + "--b--\r\n", 400, "first_name"},
		{"body over max-body", part("avatar", strings.Repeat("a", 2<<20)) + "--b--\r\n", 413, ""},
		{"integer out of range", part("allow_shares_from", strings.Repeat("9", 30)) + "--b--\r\n", 400, "allow_shares_from"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := httptest.NewRequest("PATCH", "/users/@me", strings.NewReader(c.body))
			req.Header.Set("Content-Type", "multipart/form-data; boundary=b")
			req.Header.Set("Authorization", "Bearer "+e.bearer(alice))
			r := e.serve(req)
			if r.Status != c.want {
				t.Fatalf("got status %d, want %d: %s", r.Status, c.want, r.Body)
			}
			assertErrorBody(t, r)
			if c.field != "" {
				wantField(c.field)(t, r)
			}
			if n := e.count(`SELECT count(*) FROM users WHERE id = ? AND first_name = 'alice'`, alice.id); n != 1 {
				t.Fatalf("got first_name changed, want it unchanged")
			}
		})
	}
}

func TestUserEmails(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	alice, bob, carol := e.user("alice"), e.user("bob"), e.user("carol")
	const addr = "alice.work@acme.test"
	var id string
	e.run(t, []scenario{
		{name: "no token", method: "POST", path: "/users/@me/emails", body: map[string]any{"email": addr}, want: 401},
		{name: "missing", as: alice, method: "POST", path: "/users/@me/emails", body: map[string]any{}, want: 400, check: wantField("email")},
		{name: "invalid", as: alice, method: "POST", path: "/users/@me/emails", body: map[string]any{"email": "not an address"}, want: 400, check: wantField("email")},
		{name: "display name", as: alice, method: "POST", path: "/users/@me/emails", body: map[string]any{"email": "Al <a@b.test>"}, want: 400, check: wantField("email")},
		{name: "wrong type", as: alice, method: "POST", path: "/users/@me/emails", body: map[string]any{"email": 7}, want: 400},
		{name: "linked to another account", as: alice, method: "POST", path: "/users/@me/emails", body: map[string]any{"email": "BOB@example.com"}, want: 400, check: wantField("email")},
		{name: "add", as: alice, method: "POST", path: "/users/@me/emails", body: map[string]any{"email": addr}, want: 201, check: func(t *testing.T, r *testResponse) {
			m := r.obj(t)
			if m["is_verified"] != false || m["is_primary"] != false || m["user_id"] != alice.ID || m["email"] != addr {
				t.Fatalf("got %v", m)
			}
			id = m["id"].(string)
		}},
	})
	if e.messagesTo(addr) != 1 {
		t.Fatalf("verification mails = %d, want 1", e.messagesTo(addr))
	}
	first := e.lastSecret(addr)
	if n := e.count(`SELECT count(*) FROM user_emails WHERE token_hash = ?`, first); n != 0 {
		t.Fatalf("token stored in clear")
	}
	e.run(t, []scenario{
		{name: "pending again returns it", as: alice, method: "POST", path: "/users/@me/emails", body: map[string]any{"email": strings.ToUpper(addr)}, want: 200, check: func(t *testing.T, r *testResponse) {
			if r.obj(t)["id"] != id || e.messagesTo(addr) != 1 {
				t.Fatalf("got %s with %d mails, want the pending object and no new mail", r.Body, e.messagesTo(addr))
			}
		}},
		{name: "get own", as: alice, method: "GET", path: "/users/@me/emails/" + id, want: 200, check: wantKey("email", addr)},
		{name: "get others'", as: bob, method: "GET", path: "/users/@me/emails/" + id, want: 404},
		{name: "get bad id", as: alice, method: "GET", path: "/users/@me/emails/x1", want: 400},
		{name: "get absent", as: alice, method: "GET", path: "/users/@me/emails/99", want: 404},
		{name: "get no token", method: "GET", path: "/users/@me/emails/" + id, want: 401},
		{name: "resend", as: alice, method: "POST", path: "/users/@me/emails/" + id + "/verify", want: 200, check: wantKey("is_verified", false)},
		{name: "resend others'", as: bob, method: "POST", path: "/users/@me/emails/" + id + "/verify", want: 404},
		{name: "resend no token", method: "POST", path: "/users/@me/emails/" + id + "/verify", want: 401},
	})
	second := e.lastSecret(addr)
	e.run(t, []scenario{
		{name: "replaced token refused", as: alice, method: "PATCH", path: "/users/@me/emails/" + id, body: map[string]any{"email_token": first}, want: 400, check: wantField("email_token")},
		{name: "primary before verified", as: alice, method: "PATCH", path: "/users/@me/emails/" + id, body: map[string]any{"is_primary": true}, want: 400, check: wantField("is_primary")},
		{name: "read-only address", as: alice, method: "PATCH", path: "/users/@me/emails/" + id, body: map[string]any{"email": "x@y.test"}, want: 400, check: wantField("email")},
		{name: "read-only is_verified", as: alice, method: "PATCH", path: "/users/@me/emails/" + id, body: map[string]any{"is_verified": true}, want: 400, check: wantField("is_verified")},
		{name: "others' with token", as: bob, method: "PATCH", path: "/users/@me/emails/" + id, body: map[string]any{"email_token": second}, want: 404},
		{name: "malformed", as: alice, method: "PATCH", path: "/users/@me/emails/" + id, body: `{"email_token": 1}`, want: 400},
		{name: "patch no token", method: "PATCH", path: "/users/@me/emails/" + id, body: map[string]any{"email_token": second}, want: 401},
		{name: "verify", as: alice, method: "PATCH", path: "/users/@me/emails/" + id, body: map[string]any{"email_token": second}, want: 200, check: wantKey("is_verified", true)},
	})
	t.Run("resend on verified sends nothing", func(t *testing.T) {
		before := e.messagesTo(addr)
		e.must(200, alice, "POST", "/users/@me/emails/"+id+"/verify", nil)
		if e.messagesTo(addr) != before {
			t.Fatalf("mail sent for a verified address")
		}
	})
	t.Run("make primary", func(t *testing.T) {
		m := e.must(200, alice, "PATCH", "/users/@me/emails/"+id, map[string]any{"is_primary": true}).obj(t)
		if m["is_primary"] != true {
			t.Fatalf("is_primary = %v", m["is_primary"])
		}
		me := e.must(200, alice, "GET", "/users/@me", nil).obj(t)
		if me["email"] != addr || me["email_confirmed"] != true {
			t.Fatalf("sign-in address %v confirmed %v", me["email"], me["email_confirmed"])
		}
		list := e.must(200, alice, "GET", "/users/@me/emails", nil).arr(t)
		primaries := 0
		for _, x := range list {
			if x["is_primary"] == true {
				primaries++
			}
		}
		if len(list) != 2 || primaries != 1 {
			t.Fatalf("list %v, want 2 addresses and 1 primary", list)
		}
	})
	e.run(t, []scenario{
		{name: "unset primary", as: alice, method: "PATCH", path: "/users/@me/emails/" + id, body: map[string]any{"is_primary": false}, want: 400, check: wantField("is_primary")},
		{name: "delete primary", as: alice, method: "DELETE", path: "/users/@me/emails/" + id, want: 400},
		{name: "now linked for others", as: carol, method: "POST", path: "/users/@me/emails", body: map[string]any{"email": addr}, want: 400, check: wantField("email")},
	})

	t.Run("verification races: the first to verify wins", func(t *testing.T) {
		const shared = "shared@else.test"
		bid := e.must(201, bob, "POST", "/users/@me/emails", map[string]any{"email": shared}).obj(t)["id"].(string)
		bobTok := e.lastSecret(shared)
		cid := e.must(201, carol, "POST", "/users/@me/emails", map[string]any{"email": shared}).obj(t)["id"].(string)
		carolTok := e.lastSecret(shared)
		e.must(200, carol, "PATCH", "/users/@me/emails/"+cid, map[string]any{"email_token": carolTok})
		// Carol proved the address first: Bob's unverified claim was released.
		e.must(404, bob, "PATCH", "/users/@me/emails/"+bid, map[string]any{"email_token": bobTok})
	})
	t.Run("an unverified sign-in address elsewhere gives way to its verified owner", func(t *testing.T) {
		const taken = "signin@else.test"
		dee, err := e.srv.createUser(context.Background(), taken, "", "Dee", "T", 0, false)
		if err != nil {
			t.Fatal(err)
		}
		xid := e.must(201, bob, "POST", "/users/@me/emails", map[string]any{"email": taken}).obj(t)["id"].(string)
		e.must(200, bob, "PATCH", "/users/@me/emails/"+xid, map[string]any{"email_token": e.lastSecret(taken)})
		e.must(200, bob, "PATCH", "/users/@me/emails/"+xid, map[string]any{"is_primary": true})
		if m := e.must(200, bob, "GET", "/users/@me", nil).obj(t); m["email"] != taken {
			t.Fatalf("sign-in address %v, want %s", m["email"], taken)
		}
		if m := e.must(200, e.tokenFor(dee), "GET", "/users/@me", nil).obj(t); m["email"] == taken {
			t.Fatalf("Dee still holds %s", taken)
		}
		// Bob signs in with his original address again for the tests below.
		for _, a := range e.must(200, bob, "GET", "/users/@me/emails", nil).arr(t) {
			if a["email"] == "bob@example.com" {
				e.must(200, bob, "PATCH", "/users/@me/emails/"+a["id"].(string), map[string]any{"is_primary": true})
			}
		}
	})
	t.Run("expired token", func(t *testing.T) {
		const a = "late@else.test"
		xid := e.must(201, bob, "POST", "/users/@me/emails", map[string]any{"email": a}).obj(t)["id"].(string)
		tok := e.lastSecret(a)
		e.clock.Advance(24*time.Hour + time.Second)
		e.must(400, bob, "PATCH", "/users/@me/emails/"+xid, map[string]any{"email_token": tok})
	})
	t.Run("delete", func(t *testing.T) {
		const a = "gone@else.test"
		xid := e.must(201, bob, "POST", "/users/@me/emails", map[string]any{"email": a}).obj(t)["id"].(string)
		e.must(404, alice, "DELETE", "/users/@me/emails/"+xid, nil)
		e.must(401, nil, "DELETE", "/users/@me/emails/"+xid, nil)
		e.must(400, bob, "DELETE", "/users/@me/emails/abc", nil)
		e.must(204, bob, "DELETE", "/users/@me/emails/"+xid, nil)
		e.must(404, bob, "GET", "/users/@me/emails/"+xid, nil)
		e.must(404, bob, "DELETE", "/users/@me/emails/"+xid, nil)
	})
	t.Run("concurrent adds make one address", func(t *testing.T) {
		const a = "race@else.test"
		var wg sync.WaitGroup
		ids := make([]string, 8)
		for i := range ids {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := e.do(carol, "POST", "/users/@me/emails", map[string]any{"email": a})
				if r.Status == 200 || r.Status == 201 {
					var m map[string]any
					_ = jsonUnmarshal(r.Body, &m)
					ids[i], _ = m["id"].(string)
				}
			}()
		}
		wg.Wait()
		for _, x := range ids {
			if x == "" || x != ids[0] {
				t.Fatalf("ids %v, want one id for all", ids)
			}
		}
		if n := e.count(`SELECT count(*) FROM user_emails WHERE email = ? AND user_id = ?`, a, carol.id); n != 1 || e.messagesTo(a) != 1 {
			t.Fatalf("rows %d, mails %d, want 1 and 1", n, e.messagesTo(a))
		}
	})
}

// --- organisation domain rules, notification routing ---

func TestUserEmailOrganisationRules(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	alice, bob, carol, eve := e.user("alice"), e.user("bob"), e.user("carol"), e.user("eve")
	acme := e.org(alice, "Acme")
	other := e.org(carol, "Other")
	e.addMember(acme, bob)
	e.exec(`INSERT INTO organisation_members(organisation_id, user_id, pending, joined_at) VALUES (?, ?, 1, ?)`, mustID(acme), eve.id, e.srv.nowText())
	e.exec(`UPDATE organisations SET restrict_email_domain = 1 WHERE id = ?`, mustID(acme))
	e.exec(`INSERT INTO organisation_domains(id, organisation_id, domain, challenge_token, is_verified, is_approved, created_at) VALUES (?, ?, 'ACME.test', 'c', 1, 1, ?)`, e.store.IDs.Next(), mustID(acme), e.srv.nowText())
	e.exec(`INSERT INTO organisation_domains(id, organisation_id, domain, challenge_token, is_verified, is_approved, created_at) VALUES (?, ?, 'unapproved.test', 'c', 1, 0, ?)`, e.store.IDs.Next(), mustID(acme), e.srv.nowText())

	add := func(u *testUser, addr string, verify bool) string {
		id := e.must(201, u, "POST", "/users/@me/emails", map[string]any{"email": addr}).obj(t)["id"].(string)
		if verify {
			e.must(200, u, "PATCH", "/users/@me/emails/"+id, map[string]any{"email_token": e.lastSecret(addr)})
		}
		return id
	}
	work := add(bob, "bob@acme.test", true)
	unverified := add(bob, "bob2@acme.test", false)
	side := add(bob, "bob@unapproved.test", true)
	primary := e.must(200, bob, "GET", "/users/@me/emails", nil).arr(t)[0]["id"].(string)
	carolsOwn := e.must(200, carol, "GET", "/users/@me/emails", nil).arr(t)[0]["id"].(string)

	emails := func(want ...string) func(t *testing.T, r *testResponse) {
		return func(t *testing.T, r *testResponse) {
			var got []string
			for _, x := range r.arr(t) {
				got = append(got, x["email"].(string))
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("got %v, want %v", got, want)
			}
		}
	}
	path := "/users/@me/organisations/" + acme + "/email"
	e.run(t, []scenario{
		{name: "list all", as: bob, method: "GET", path: "/users/@me/emails", want: 200, check: wantLen(4)},
		{name: "list no token", method: "GET", path: "/users/@me/emails", want: 401},
		{name: "list approved domains only", as: bob, method: "GET", path: "/users/@me/emails?organisation_id=" + acme, want: 200, check: emails("bob@acme.test", "bob2@acme.test")},
		{name: "list unrestricted organisation", as: alice, method: "GET", path: "/users/@me/emails?organisation_id=" + acme, want: 200, check: wantLen(0)},
		{name: "list bad organisation id", as: bob, method: "GET", path: "/users/@me/emails?organisation_id=abc", want: 400, check: wantField("organisation_id")},
		{name: "list absent organisation", as: bob, method: "GET", path: "/users/@me/emails?organisation_id=123456", want: 400},
		{name: "list foreign organisation", as: bob, method: "GET", path: "/users/@me/emails?organisation_id=" + other, want: 400},
		{name: "list as pending member", as: eve, method: "GET", path: "/users/@me/emails?organisation_id=" + acme, want: 400},

		{name: "route no token", method: "PATCH", path: path, body: map[string]any{"notification_email_id": work}, want: 401},
		{name: "route missing id", as: bob, method: "PATCH", path: path, body: map[string]any{}, want: 400, check: wantField("notification_email_id")},
		{name: "route null id", as: bob, method: "PATCH", path: path, body: map[string]any{"notification_email_id": nil}, want: 400},
		{name: "route bad id", as: bob, method: "PATCH", path: path, body: map[string]any{"notification_email_id": "x"}, want: 400},
		{name: "route unverified", as: bob, method: "PATCH", path: path, body: map[string]any{"notification_email_id": unverified}, want: 400, check: wantField("notification_email_id")},
		{name: "route another user's address", as: bob, method: "PATCH", path: path, body: map[string]any{"notification_email_id": carolsOwn}, want: 400, check: wantField("notification_email_id")},
		{name: "route absent address", as: bob, method: "PATCH", path: path, body: map[string]any{"notification_email_id": "42"}, want: 400},
		{name: "route forbidden domain", as: bob, method: "PATCH", path: path, body: map[string]any{"notification_email_id": side}, want: 400, check: wantField("notification_email_id")},
		{name: "route primary off-domain", as: bob, method: "PATCH", path: path, body: map[string]any{"notification_email_id": primary}, want: 400},
		{name: "route foreign organisation", as: carol, method: "PATCH", path: path, body: map[string]any{"notification_email_id": carolsOwn}, want: 404},
		{name: "route pending member", as: eve, method: "PATCH", path: path, body: map[string]any{"notification_email_id": work}, want: 404},
		{name: "route absent organisation", as: bob, method: "PATCH", path: "/users/@me/organisations/777/email", body: map[string]any{"notification_email_id": work}, want: 404},
		{name: "route bad organisation id", as: bob, method: "PATCH", path: "/users/@me/organisations/zz/email", body: map[string]any{"notification_email_id": work}, want: 400},
		{name: "route", as: bob, method: "PATCH", path: path, body: map[string]any{"notification_email_id": work}, want: 200, check: func(t *testing.T, r *testResponse) {
			m := r.obj(t)
			if m["notification_email_id"] != work || m["is_owner"] != false || m["pending"] != false {
				t.Fatalf("got %v", m)
			}
		}},
		{name: "routed address cannot be removed", as: bob, method: "DELETE", path: "/users/@me/emails/" + work, want: 400},
		{name: "unrestricted organisation takes any verified address", as: carol, method: "PATCH", path: "/users/@me/organisations/" + other + "/email", body: map[string]any{"notification_email_id": carolsOwn}, want: 200},
	})
	if n := e.count(`SELECT count(*) FROM organisation_members WHERE user_id = ? AND notification_email_id = ?`, bob.id, mustID(work)); n != 1 {
		t.Fatalf("routing rows = %d, want 1", n)
	}
}

// TestAddressSquattingReleasedByVerification (issue 20): an unverified
// registration of an address cannot lock out its owner. When the owner
// verifies it on their own account the unverified claims elsewhere are
// released (and their accounts told), so the owner can make it primary and
// sign in with it; a verified address is never released the other way.
func TestAddressSquattingReleasedByVerification(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const taken = "someone@example.com"
	if r := e.register(taken, "squatter password"); r.Status != 201 {
		t.Fatalf("squatting registration: %d %s", r.Status, r.Body)
	}
	squatter := e.tokenReq(url.Values{"grant_type": {"password"}, "username": {taken}, "password": {"squatter password"}})
	if squatter.Status != 200 {
		t.Fatalf("squatter signs in: %d", squatter.Status)
	}
	squatterTok := &testUser{Token: squatter.obj(t)["access_token"].(string)}
	// A second account holds the address as an unverified extra address.
	second := e.user("second")
	e.must(201, second, "POST", "/users/@me/emails", map[string]any{"email": taken})

	owner := e.user("owner")
	added := e.must(201, owner, "POST", "/users/@me/emails", map[string]any{"email": taken}).obj(t)
	id := added["id"].(string)
	e.must(200, owner, "PATCH", "/users/@me/emails/"+id, map[string]any{"email_token": e.lastSecret(taken)})
	e.must(200, owner, "PATCH", "/users/@me/emails/"+id, map[string]any{"is_primary": true})
	if got := e.must(200, owner, "GET", "/users/@me", nil).obj(t)["email"]; got != taken {
		t.Fatalf("owner's sign-in address %v, want %s", got, taken)
	}

	// The squatting account lost the address it never proved.
	me := e.must(200, squatterTok, "GET", "/users/@me", nil).obj(t)
	if me["email"] == taken {
		t.Fatalf("the squatter still signs in as %s", taken)
	}
	if r := e.tokenReq(url.Values{"grant_type": {"password"}, "username": {taken}, "password": {"squatter password"}}); r.Status == 200 {
		t.Fatal("the squatter's password still signs in with the released address")
	}
	for _, a := range e.must(200, second, "GET", "/users/@me/emails", nil).arr(t) {
		if a["email"] == taken {
			t.Fatalf("the second account keeps its unverified claim: %v", a)
		}
	}
	var told int
	e.store.Writer.QueryRow(`SELECT count(*) FROM outbox WHERE recipient = ? AND subject = 'An address was removed from your account'`, second.Email).Scan(&told)
	if told != 1 {
		t.Errorf("the second account was told %d times, want once", told)
	}

	// Never the reverse: the owner's verified address cannot be claimed.
	e.run(t, []scenario{
		{name: "a verified address is not released to another account", as: second, method: "POST", path: "/users/@me/emails",
			body: map[string]any{"email": taken}, want: 400, check: wantField("email")},
		{name: "nor registered again", method: "POST", path: "/auth/register",
			body: map[string]any{"email": taken, "password": "another password"}, want: 400, check: wantField("email")},
	})
}
