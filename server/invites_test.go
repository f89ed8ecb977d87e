package server

import (
	"context"
	"fmt"
	"regexp"
	"sync"
	"testing"
	"time"

	"workspace/db"
)

// fakeDNS answers TXT lookups from a map.
type fakeDNS struct {
	mu      sync.Mutex
	records map[string][]string
}

func (d *fakeDNS) set(name string, values ...string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.records[name] = values
}

func (d *fakeDNS) LookupTXT(ctx context.Context, name string) ([]string, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if v, ok := d.records[name]; ok {
		return v, nil
	}
	return nil, fmt.Errorf("lookup %s: no such host", name)
}

func withDNS(d *fakeDNS) func(*Config) {
	return func(c *Config) { c.LookupTXT = d.LookupTXT }
}

// verifiedDomain adds, verifies and (if approve) approves a domain as u.
func (e *testEnv) verifiedDomain(dns *fakeDNS, u *testUser, orgID, domain string, approve bool) string {
	e.t.Helper()
	d := e.must(201, u, "POST", "/organisations/"+orgID+"/domains", map[string]any{"domain": domain}).obj(e.t)
	dns.set(challengePrefix+domain, "unrelated", d["challenge_token"].(string))
	id := d["id"].(string)
	e.must(200, u, "POST", "/organisations/"+orgID+"/domains/"+id+"/verify", nil)
	if approve {
		e.must(200, u, "PATCH", "/organisations/"+orgID+"/domains/"+id, map[string]any{"is_approved": true})
	}
	return id
}

var mailedCode = regexp.MustCompile(`/app/join/([A-Za-z0-9_-]{10,})`)

// mailedInviteCode reads the code of the newest invite mailed to addr.
func (e *testEnv) mailedInviteCode(addr string) string {
	e.t.Helper()
	rows, err := e.store.R.OutboxList(context.Background(), 100)
	if err != nil {
		e.t.Fatal(err)
	}
	for _, m := range rows {
		if m.Recipient == addr {
			if c := mailedCode.FindStringSubmatch(m.Body); c != nil {
				return c[1]
			}
		}
	}
	e.t.Fatalf("no invite mailed to %s", addr)
	return ""
}

func TestInviteCreateAndList(t *testing.T) {
	t.Parallel()
	dns := &fakeDNS{records: map[string][]string{}}
	f := newOrgFixture(t, withDNS(dns))
	e, acme := f.e, "/organisations/"+f.acme
	e.verifiedDomain(dns, f.alice, f.acme, "acme.test", false)
	e.must(201, f.alice, "POST", acme+"/domains", map[string]any{"domain": "unverified.test"})
	invites := acme + "/invites"
	in7days := db.FormatTime(e.clock.Now().Add(7 * 24 * time.Hour))
	e.run(t, []scenario{
		{"code invite with defaults", f.alice, "POST", invites, nil, 201, func(t *testing.T, r *testResponse) {
			o := r.obj(t)
			if code, _ := o["code"].(string); len(code) < 10 {
				t.Errorf("code %q, want at least 10 characters", code)
			}
			if o["expires_at"] != in7days || o["status"] != "pending" || o["revoked"] != false || o["approval"] != false ||
				o["auto_add"] != false || o["email"] != "" || o["domain"] != "" {
				t.Errorf("got %v", o)
			}
			if o["organisation"].(map[string]any)["id"] != f.acme || o["created_by"].(map[string]any)["id"] != f.alice.ID {
				t.Errorf("organisation / created_by: got %v", o)
			}
		}},
		{"explicit expiry", f.alice, "POST", invites, map[string]any{"expires_at": "2026-12-01T00:00:00Z"}, 201, wantKey("expires_at", "2026-12-01T00:00:00.000Z")},
		{"no expiry", f.alice, "POST", invites, map[string]any{"expires_at": nil}, 201, wantKey("expires_at", nil)},
		{"e-mail invite hides its code", f.alice, "POST", invites, map[string]any{"email": "guest@example.org"}, 201, func(t *testing.T, r *testResponse) {
			o := r.obj(t)
			if o["code"] != "" || o["email"] != "guest@example.org" {
				t.Errorf("got %v", o)
			}
			if code := e.mailedInviteCode("guest@example.org"); len(code) < 10 {
				t.Errorf("mailed code %q", code)
			}
		}},
		{"domain invite never expires", f.alice, "POST", invites, map[string]any{"domain": "Example.ORG"}, 201, func(t *testing.T, r *testResponse) {
			o := r.obj(t)
			if o["domain"] != "example.org" || o["expires_at"] != nil {
				t.Errorf("got %v", o)
			}
		}},
		{"auto_add on a verified domain", f.alice, "POST", invites, map[string]any{"domain": "acme.test", "auto_add": true}, 201, wantKey("auto_add", true)},
		{"auto_add on an unverified domain", f.alice, "POST", invites, map[string]any{"domain": "unverified.test", "auto_add": true}, 400, wantField("auto_add")},
		{"auto_add without a domain", f.alice, "POST", invites, map[string]any{"auto_add": true}, 400, wantField("auto_add")},
		{"bad e-mail", f.alice, "POST", invites, map[string]any{"email": "not-mail"}, 400, wantField("email")},
		{"bad domain", f.alice, "POST", invites, map[string]any{"domain": "no spaces.com"}, 400, wantField("domain")},
		{"single-label domain", f.alice, "POST", invites, map[string]any{"domain": "localhost"}, 400, wantField("domain")},
		{"e-mail and domain", f.alice, "POST", invites, map[string]any{"email": "a@acme.test", "domain": "acme.test"}, 400, wantField("domain")},
		{"domain with an expiry", f.alice, "POST", invites, map[string]any{"domain": "acme.test", "expires_at": "2026-12-01T00:00:00Z"}, 400, wantField("expires_at")},
		{"expiry in the past", f.alice, "POST", invites, map[string]any{"expires_at": "2020-01-01T00:00:00Z"}, 400, wantField("expires_at")},
		{"expiry not a time", f.alice, "POST", invites, map[string]any{"expires_at": "soon"}, 400, wantField("expires_at")},
		{"expiry past year 9999 in UTC", f.alice, "POST", invites, map[string]any{"expires_at": "9999-12-31T23:00:00-05:00"}, 400, wantField("expires_at")},
		{"expiry at the end of year 9999", f.alice, "POST", invites, map[string]any{"expires_at": "9999-12-31T23:59:59Z", "email": "late@example.org"}, 201, wantKey("expires_at", "9999-12-31T23:59:59.000Z")},
		{"approval wrong type", f.alice, "POST", invites, map[string]any{"approval": "yes"}, 400, wantField("approval")},
		{"member without CREATE_INVITE", f.bob, "POST", invites, nil, 403, nil},
		{"pending member", f.pen, "POST", invites, nil, 403, nil},
		{"other organisation", f.mallory, "POST", invites, nil, 403, nil},
		{"absent organisation", f.alice, "POST", "/organisations/42/invites", nil, 404, nil},
		{"list", f.alice, "GET", invites, nil, 200, func(t *testing.T, r *testResponse) {
			list := r.arr(t)
			if len(list) != 7 {
				t.Fatalf("got %d invites, want 7", len(list))
			}
			for _, inv := range list {
				if inv["email"] != "" && inv["code"] != "" {
					t.Errorf("e-mail invite listed with its code: %v", inv)
				}
			}
		}},
		{"member without CREATE_INVITE cannot list", f.bob, "GET", invites, nil, 403, nil},
		{"other organisation cannot list", f.mallory, "GET", invites, nil, 403, nil},
		{"absent organisation list", f.alice, "GET", "/organisations/42/invites", nil, 404, nil},
		{"other organisation's list is its own", f.mallory, "GET", "/organisations/" + f.evil + "/invites", nil, 200, wantLen(0)},
	})
	e.grant(f.alice, f.acme, f.bob.ID, map[string]string{"CREATE_INVITE": "allow"})
	e.must(200, f.alice, "PATCH", acme, map[string]any{"member_approval": true})
	e.run(t, []scenario{
		{"granted member creates", f.bob, "POST", invites, nil, 201, nil},
		{"approval forced when the organisation requires it", f.bob, "POST", invites, map[string]any{"approval": false}, 201, wantKey("approval", true)},
	})
}

func TestInviteGetPatchRevoke(t *testing.T) {
	t.Parallel()
	dns := &fakeDNS{records: map[string][]string{}}
	f := newOrgFixture(t, withDNS(dns))
	e, acme := f.e, "/organisations/"+f.acme
	code := e.must(201, f.alice, "POST", acme+"/invites", nil).obj(t)["code"].(string)
	short := e.must(201, f.alice, "POST", acme+"/invites", map[string]any{"expires_at": "2026-11-22T09:30:00Z"}).obj(t)["code"].(string)
	mailID := e.must(201, f.alice, "POST", acme+"/invites", map[string]any{"email": "guest@example.org"}).obj(t)["id"].(string)
	evilCode := e.must(201, f.mallory, "POST", "/organisations/"+f.evil+"/invites", nil).obj(t)["code"].(string)
	e.grant(f.alice, f.acme, f.bob.ID, map[string]string{"CREATE_INVITE": "allow"})
	inv := "/invites/" + code
	e.run(t, []scenario{
		{"anyone signed in with the code reads it", f.nobody, "GET", inv, nil, 200, func(t *testing.T, r *testResponse) {
			o := r.obj(t)
			if o["code"] != code || o["organisation"].(map[string]any)["name"] != "Acme" {
				t.Errorf("got %v", o)
			}
		}},
		{"no token", nil, "GET", inv, nil, 401, nil},
		{"absent code", f.alice, "GET", "/invites/nosuchcode123", nil, 404, nil},
		{"an id is not a code", f.alice, "GET", "/invites/" + mailID, nil, 404, nil},

		{"extend the expiry", f.bob, "PATCH", inv, map[string]any{"expires_at": "2027-01-01T00:00:00Z"}, 200, wantKey("expires_at", "2027-01-01T00:00:00.000Z")},
		{"expiry in the past", f.bob, "PATCH", inv, map[string]any{"expires_at": "2020-01-01T00:00:00Z"}, 400, wantField("expires_at")},
		{"require approval", f.bob, "PATCH", inv, map[string]any{"approval": true}, 200, wantKey("approval", true)},
		{"setting a domain removes the expiry", f.bob, "PATCH", inv, map[string]any{"domain": "example.org"}, 200, func(t *testing.T, r *testResponse) {
			o := r.obj(t)
			if o["domain"] != "example.org" || o["expires_at"] != nil {
				t.Errorf("got %v", o)
			}
		}},
		{"a domain invite takes no expiry", f.bob, "PATCH", inv, map[string]any{"expires_at": "2027-01-01T00:00:00Z"}, 400, wantField("expires_at")},
		{"auto_add needs a verified domain", f.bob, "PATCH", inv, map[string]any{"auto_add": true}, 400, wantField("auto_add")},
		{"bad domain", f.bob, "PATCH", inv, map[string]any{"domain": "-bad-.com"}, 400, wantField("domain")},
		{"read-only code", f.bob, "PATCH", inv, map[string]any{"code": "mine12345678"}, 400, wantField("code")},
		{"read-only email", f.bob, "PATCH", inv, map[string]any{"email": "x@example.org"}, 400, wantField("email")},
		{"member without CREATE_INVITE", f.pen, "PATCH", inv, map[string]any{"approval": false}, 403, nil},
		{"other organisation", f.mallory, "PATCH", inv, map[string]any{"approval": false}, 403, nil},
		{"patch another organisation's invite", f.alice, "PATCH", "/invites/" + evilCode, map[string]any{"approval": true}, 403, nil},
		{"absent invite", f.bob, "PATCH", "/invites/nosuchcode123", map[string]any{"approval": true}, 404, nil},
		{"an e-mail invite is managed by id", f.bob, "PATCH", "/invites/" + mailID, map[string]any{"approval": true}, 200, wantKey("approval", true)},
		{"an e-mail invite takes no domain", f.bob, "PATCH", "/invites/" + mailID, map[string]any{"domain": "example.org"}, 400, wantField("domain")},
		{"absent id", f.bob, "PATCH", "/invites/42", map[string]any{"approval": true}, 404, nil},
	})
	e.verifiedDomain(dns, f.alice, f.acme, "example.org", false)
	e.must(200, f.alice, "PATCH", acme, map[string]any{"member_approval": true})
	e.run(t, []scenario{
		{"auto_add on the verified domain", f.bob, "PATCH", inv, map[string]any{"auto_add": true}, 200, wantKey("auto_add", true)},
		{"clearing the domain clears auto_add", f.bob, "PATCH", inv, map[string]any{"domain": nil, "expires_at": "2027-01-01T00:00:00Z"}, 200, func(t *testing.T, r *testResponse) {
			o := r.obj(t)
			if o["domain"] != "" || o["auto_add"] != false || o["expires_at"] != "2027-01-01T00:00:00.000Z" {
				t.Errorf("got %v", o)
			}
		}},
		{"approval stays forced", f.bob, "PATCH", inv, map[string]any{"approval": false}, 200, wantKey("approval", true)},
	})
	e.clock.Advance(48 * time.Hour)
	e.run(t, []scenario{
		{"expired invite is not shown", f.alice, "GET", "/invites/" + short, nil, 404, nil},
		{"member with only CREATE_INVITE cannot revoke", f.bob, "DELETE", inv, nil, 403, nil},
		{"other organisation cannot revoke", f.mallory, "DELETE", inv, nil, 403, nil},
		{"absent invite revoke", f.alice, "DELETE", "/invites/nosuchcode123", nil, 404, nil},
		{"revoke", f.alice, "DELETE", inv, nil, 200, func(t *testing.T, r *testResponse) {
			o := r.obj(t)
			if o["status"] != "revoked" || o["revoked"] != true {
				t.Errorf("got %v", o)
			}
		}},
		{"revoke again is fine", f.alice, "DELETE", inv, nil, 200, wantKey("status", "revoked")},
		{"a revoked invite shows as revoked", f.nobody, "GET", inv, nil, 200, wantKey("revoked", true)},
		{"a revoked invite cannot be changed", f.alice, "PATCH", inv, map[string]any{"approval": true}, 400, nil},
		{"revoke an e-mail invite by id", f.alice, "DELETE", "/invites/" + mailID, nil, 200, wantKey("status", "revoked")},
		{"another organisation's invite is untouched", f.mallory, "GET", "/invites/" + evilCode, nil, 200, wantKey("status", "pending")},
	})
	e.grant(f.alice, f.acme, f.bob.ID, map[string]string{"REVOKE_INVITE": "allow"})
	e.must(200, f.bob, "DELETE", "/invites/"+short, nil)
}

func TestInviteUse(t *testing.T) {
	t.Parallel()
	dns := &fakeDNS{records: map[string][]string{}}
	f := newOrgFixture(t, withDNS(dns))
	e, acme := f.e, "/organisations/"+f.acme
	create := func(body map[string]any) string {
		t.Helper()
		return e.must(201, f.alice, "POST", acme+"/invites", body).obj(t)["code"].(string)
	}
	code := create(nil)
	approval := create(map[string]any{"approval": true})
	short := create(map[string]any{"expires_at": "2026-11-22T09:30:00Z"})
	revoked := create(nil)
	e.must(200, f.alice, "DELETE", "/invites/"+revoked, nil)
	create(map[string]any{"email": "guest@example.org"})
	mailed := e.mailedInviteCode("guest@example.org")
	domain := create(map[string]any{"domain": "example.org"})
	e.verifiedDomain(dns, f.alice, f.acme, "acme.test", true)
	autoAdd := create(map[string]any{"domain": "acme.test", "auto_add": true, "approval": true})

	u := map[string]*testUser{}
	for _, n := range []string{"u1", "u2", "guest", "unverified", "domainer", "acmer", "late"} {
		u[n] = e.user(n)
	}
	e.addEmail(u["guest"], "guest@example.org", true)
	e.addEmail(u["unverified"], "guest2@example.org", false)
	e.addEmail(u["domainer"], "d@EXAMPLE.org", true)
	e.addEmail(u["acmer"], "a@acme.test", true)
	use := func(c string) string { return "/invites/" + c }
	joined := func(pending bool) func(t *testing.T, r *testResponse) {
		return func(t *testing.T, r *testResponse) {
			t.Helper()
			o := r.obj(t)
			if o["id"] != f.acme || o["organisation_user"].(map[string]any)["pending"] != pending {
				t.Errorf("got %v, want membership of Acme with pending %v", o, pending)
			}
		}
	}
	e.run(t, []scenario{
		{"use", u["u1"], "POST", use(code), nil, 200, joined(false)},
		{"the new member has access", u["u1"], "GET", acme, nil, 200, wantKey("member_count", float64(3))},
		{"already a member", u["u1"], "POST", use(code), nil, 204, nil},
		{"the owner is already a member", f.alice, "POST", use(code), nil, 204, nil},
		{"a pending member is already in", f.pen, "POST", use(code), nil, 204, nil},
		{"a member of another organisation may join", f.mallory, "POST", use(code), nil, 200, joined(false)},
		{"approval makes the membership pending", u["u2"], "POST", use(approval), nil, 200, joined(true)},
		{"pending has no access", u["u2"], "GET", acme, nil, 403, nil},
		{"absent", u["late"], "POST", use("nosuchcode123"), nil, 404, nil},
		{"revoked", u["late"], "POST", use(revoked), nil, 404, nil},
		{"no token", nil, "POST", use(code), nil, 401, nil},

		{"e-mail invite: someone else", u["late"], "POST", use(mailed), nil, 403, nil},
		{"e-mail invite: address not verified", u["unverified"], "POST", use(mailed), nil, 403, nil},
		{"e-mail invite: its verified owner", u["guest"], "POST", use(mailed), nil, 200, joined(false)},
		{"e-mail invite is accepted", f.alice, "GET", acme + "/invites", nil, 200, func(t *testing.T, r *testResponse) {
			for _, inv := range r.arr(t) {
				if inv["email"] == "guest@example.org" && inv["status"] != "accepted" {
					t.Errorf("status %v, want accepted", inv["status"])
				}
			}
		}},

		{"domain invite: no address on the domain", u["late"], "POST", use(domain), nil, 403, nil},
		{"domain invite: address unverified", u["unverified"], "POST", use(domain), nil, 403, nil},
		{"domain invite: verified address on it", u["domainer"], "POST", use(domain), nil, 200, joined(false)},
		{"auto_add skips the invite's approval", u["acmer"], "POST", use(autoAdd), nil, 200, joined(false)},
	})
	// The e-mail invite is single use.
	e.must(204, f.alice, "DELETE", acme+"/members/"+u["guest"].ID, nil)
	e.run(t, []scenario{{"e-mail invite used up", u["guest"], "POST", use(mailed), nil, 404, nil}})

	// Restricting e-mail domains admits only addresses on approved domains.
	e.must(200, f.alice, "PATCH", acme, map[string]any{"restrict_email_domain": true, "member_approval": true})
	open := create(nil)
	e.must(204, f.alice, "DELETE", acme+"/members/"+u["acmer"].ID, nil)
	e.run(t, []scenario{
		{"restricted: no approved address", u["late"], "POST", use(open), nil, 403, nil},
		{"restricted: approved address, organisation approval pending", u["acmer"], "POST", use(open), nil, 200, joined(true)},
	})

	e.clock.Advance(48 * time.Hour)
	e.run(t, []scenario{{"expired", u["late"], "POST", use(short), nil, 404, nil}})

	e.must(204, f.alice, "DELETE", acme, nil)
	e.run(t, []scenario{
		{"organisation deleted", u["late"], "POST", use(code), nil, 400, nil},
		{"organisation deleted: not shown", u["late"], "GET", use(code), nil, 404, nil},
		{"organisation deleted: cannot be managed", f.alice, "DELETE", use(code), nil, 404, nil},
	})
}

func TestInviteMemberQuota(t *testing.T) {
	t.Parallel()
	f := newOrgFixture(t, func(c *Config) { c.MaxMembersPerOrg = 4 })
	e, acme := f.e, "/organisations/"+f.acme
	// alice, bob and pen (pending) hold 3 of the 4 seats.
	code := e.must(201, f.alice, "POST", acme+"/invites", nil).obj(t)["code"].(string)
	users := make([]*testUser, 24)
	for i := range users {
		users[i] = e.user(fmt.Sprintf("racer%d", i))
	}
	statuses := make([]int, len(users))
	var wg sync.WaitGroup
	for i, u := range users {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses[i] = e.do(u, "POST", "/invites/"+code, nil).Status
		}()
	}
	wg.Wait()
	count := map[int]int{}
	for _, s := range statuses {
		count[s]++
	}
	if count[200] != 1 || count[429] != len(users)-1 {
		t.Fatalf("got statuses %v, want one 200 and the rest 429", count)
	}
	var seats int
	if err := e.store.Reader.QueryRow(`SELECT count(*) FROM organisation_members WHERE organisation_id = ?`, f.acme).Scan(&seats); err != nil || seats != 4 {
		t.Fatalf("got %d seats (%v), want 4", seats, err)
	}
	e.run(t, []scenario{
		{"quota full", f.nobody, "POST", "/invites/" + code, nil, 429, nil},
		{"a member is still answered 204", f.bob, "POST", "/invites/" + code, nil, 204, nil},
	})
	// Removing a member frees a seat.
	e.must(204, f.alice, "DELETE", acme+"/members/"+f.pen.ID, nil)
	e.must(200, f.nobody, "POST", "/invites/"+code, nil)
}

// TestInviteRefusalReasons: each refusal carries a machine-readable reason
// the join page words (issue 36), and an unconfirmed address is told apart
// from another address.
func TestInviteRefusalReasons(t *testing.T) {
	t.Parallel()
	f := newOrgFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	create := func(body map[string]any) string {
		t.Helper()
		return e.must(201, f.alice, "POST", acme+"/invites", body).obj(t)["code"].(string)
	}
	e.must(201, f.alice, "POST", acme+"/invites", map[string]any{"email": "guest@example.org"})
	mailed := e.mailedInviteCode("guest@example.org")
	revoked := create(nil)
	e.must(200, f.alice, "DELETE", "/invites/"+revoked, nil)
	short := create(map[string]any{"expires_at": "2026-11-21T10:30:00Z"})
	open := create(nil)
	unconfirmed, other, guest := e.user("unconfirmed"), e.user("other"), e.user("guest")
	e.addEmail(unconfirmed, "GUEST@example.org", false)
	e.addEmail(guest, "guest@example.org", true)
	e.exec(`INSERT INTO organisation_bans(organisation_id, user_id, banned_at, banned_by) VALUES (?, ?, ?, ?)`, mustID(f.acme), other.id, e.srv.nowText(), f.alice.id)
	reason := func(want string) func(t *testing.T, r *testResponse) {
		return wantKey("reason", want)
	}
	e.run(t, []scenario{
		{name: "address not confirmed", as: unconfirmed, method: "POST", path: "/invites/" + mailed, want: 403, check: reason("email_unconfirmed")},
		{name: "another address", as: f.nobody, method: "POST", path: "/invites/" + mailed, want: 403, check: reason("wrong_email")},
		{name: "revoked", as: f.bob, method: "POST", path: "/invites/" + revoked, want: 404, check: reason("invite_revoked")},
		{name: "unknown", as: f.bob, method: "POST", path: "/invites/NoSuchCode123", want: 404, check: reason("invite_not_found")},
		{name: "unknown, shown", as: f.bob, method: "GET", path: "/invites/NoSuchCode123", want: 404, check: reason("invite_not_found")},
		{name: "banned", as: other, method: "POST", path: "/invites/" + open, want: 403, check: reason("banned")},
		{name: "already a member", as: f.bob, method: "POST", path: "/invites/" + open, want: 204},
		{name: "the owner of the address joins", as: guest, method: "POST", path: "/invites/" + mailed, want: 200},
		{name: "used", as: unconfirmed, method: "POST", path: "/invites/" + mailed, want: 403, check: reason("email_unconfirmed")},
		{name: "a foreign manager cannot revoke it by id", as: f.mallory, method: "DELETE", path: "/invites/" + e.inviteID(mailed), want: 403},
	})
	e.clock.Advance(2 * time.Hour)
	e.run(t, []scenario{
		{name: "expired", as: f.bob, method: "POST", path: "/invites/" + short, want: 404, check: reason("invite_expired")},
		{name: "expired, shown", as: f.bob, method: "GET", path: "/invites/" + short, want: 404, check: reason("invite_expired")},
	})
}

// inviteID is the id of the invite with code.
func (e *testEnv) inviteID(code string) string {
	e.t.Helper()
	var id int64
	if err := e.store.Reader.QueryRow(`SELECT id FROM invites WHERE code = ?`, code).Scan(&id); err != nil {
		e.t.Fatal(err)
	}
	return db.ID(id).String()
}
