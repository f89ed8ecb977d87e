package server

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"regexp"
	"testing"
	"time"

	"workspace/db"
)

// --- helpers for the users area ---

// exec runs fixture SQL the areas that own it have no endpoint for yet.
func (e *testEnv) exec(query string, args ...any) {
	e.t.Helper()
	if _, err := e.write(query, args...); err != nil {
		e.t.Fatalf("exec %q: %v", query, err)
	}
}

func (e *testEnv) count(query string, args ...any) int {
	e.t.Helper()
	var n int
	if err := e.store.Writer.QueryRowContext(context.Background(), query, args...).Scan(&n); err != nil {
		e.t.Fatalf("count %q: %v", query, err)
	}
	return n
}

// messagesTo counts outbox messages to a recipient.
func (e *testEnv) messagesTo(recipient string) int {
	return e.count(`SELECT count(*) FROM outbox WHERE recipient = ?`, recipient)
}

// secretRE reads a mailed link's token or an SMS code.
var secretRE = regexp.MustCompile(`(?m)[?&]token=([A-Za-z0-9_-]+)|^Code: (\S+)$`)

// lastSecret is the token or code in the newest message to a recipient.
func (e *testEnv) lastSecret(recipient string) string {
	e.t.Helper()
	var body string
	err := e.store.Writer.QueryRowContext(context.Background(),
		`SELECT body FROM outbox WHERE recipient = ? ORDER BY id DESC LIMIT 1`, recipient).Scan(&body)
	if err != nil {
		e.t.Fatalf("no message to %s: %v", recipient, err)
	}
	m := secretRE.FindStringSubmatch(body)
	if m == nil {
		e.t.Fatalf("no token in message to %s: %q", recipient, body)
	}
	if m[1] != "" {
		return m[1]
	}
	return m[2]
}

// grantUser gives a member a permission at organisation scope.
func (e *testEnv) grantUser(orgID string, u *testUser, p Permission) {
	e.t.Helper()
	oid, _ := db.ParseID(orgID)
	e.exec(`INSERT INTO permission_grants(organisation_id, scope_type, scope_id, target_type, target_id, allow_mask, deny_mask)
		VALUES (?, 'organisation', ?, 'user', ?, ?, 0)`, int64(oid), int64(oid), u.id, int64(p))
}

// giveRole makes a role with the given allowed permissions and assigns it.
func (e *testEnv) giveRole(orgID string, u *testUser, name string, allow Permission) int64 {
	e.t.Helper()
	oid, _ := db.ParseID(orgID)
	id := e.store.IDs.Next()
	e.exec(`INSERT INTO roles(id, organisation_id, name, sort_order, created_at) VALUES (?, ?, ?, 0, ?)`, id, int64(oid), name, e.srv.nowText())
	e.exec(`INSERT INTO member_roles(organisation_id, user_id, role_id) VALUES (?, ?, ?)`, int64(oid), u.id, id)
	if allow != 0 {
		e.exec(`INSERT INTO permission_grants(organisation_id, scope_type, scope_id, target_type, target_id, allow_mask, deny_mask)
			VALUES (?, 'organisation', ?, 'role', ?, ?, 0)`, int64(oid), int64(oid), id, int64(allow))
	}
	return id
}

// multipartReq builds a multipart/form-data request; files maps a field to
// its content.
func multipartReq(t testing.TB, u *testUser, method, path string, fields map[string]string, files map[string][]byte) *http.Request {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for k, v := range fields {
		if err := w.WriteField(k, v); err != nil {
			t.Fatal(err)
		}
	}
	for k, v := range files {
		fw, err := w.CreateFormFile(k, k+".bin")
		if err != nil {
			t.Fatal(err)
		}
		_, _ = fw.Write(v)
	}
	_ = w.Close()
	req := httptest.NewRequest(method, path, &buf)
	req.Header.Set("Content-Type", w.FormDataContentType())
	if u != nil {
		req.Header.Set("Authorization", "Bearer "+u.Token)
	}
	return req
}

func testImage(w, h int) image.Image {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y += 7 {
		for x := 0; x < w; x += 5 {
			img.Set(x, y, color.RGBA{uint8(x), uint8(y), 90, 255})
		}
	}
	return img
}

func pngBytes(t testing.TB, w, h int) []byte {
	var b bytes.Buffer
	if err := png.Encode(&b, testImage(w, h)); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func jpegBytes(t testing.TB, w, h int) []byte {
	var b bytes.Buffer
	if err := jpeg.Encode(&b, testImage(w, h), nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func gifBytes(t testing.TB, w, h int) []byte {
	var b bytes.Buffer
	if err := gif.Encode(&b, testImage(w, h), nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func wantCode(code int) func(t *testing.T, r *testResponse) {
	return func(t *testing.T, r *testResponse) {
		t.Helper()
		if got := r.obj(t)["code"]; got != float64(code) {
			t.Fatalf("code = %v, want %d", got, code)
		}
	}
}

func orgIDs(t *testing.T, m map[string]any) []string {
	t.Helper()
	var out []string
	for _, o := range m["organisations"].([]any) {
		out = append(out, o.(map[string]any)["id"].(string))
	}
	return out
}

// --- GET /users/@me, GET /users/{id} ---

func TestUserMeAndGet(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	alice, bob, carol, dave, eve := e.user("alice"), e.user("bob"), e.user("carol"), e.user("dave"), e.user("eve")
	acme := e.org(alice, "Acme")
	bobco := e.org(bob, "BobCo")
	other := e.org(carol, "Other")
	e.addMember(acme, bob)
	e.addMember(acme, dave)
	e.exec(`INSERT INTO organisation_members(organisation_id, user_id, pending, joined_at) VALUES (?, ?, 1, ?)`, mustID(acme), eve.id, e.srv.nowText())
	crew := e.giveRole(acme, bob, "Crew", ViewProjects|ManageTeams)
	boss := e.giveRole(bobco, bob, "Boss", 0)
	e.exec(`UPDATE users SET phone_number = '+441234567890' WHERE id = ?`, bob.id)

	e.run(t, []scenario{
		{name: "me without token", method: "GET", path: "/users/@me", want: 401},
		{name: "me", as: bob, method: "GET", path: "/users/@me", want: 200, check: func(t *testing.T, r *testResponse) {
			m := r.obj(t)
			if got := orgIDs(t, m); len(got) != 2 || got[0] != acme || got[1] != bobco {
				t.Fatalf("organisations = %v, want [%s %s]", got, acme, bobco)
			}
			roles := m["roles"].([]any)
			if len(roles) != 2 || roles[0].(map[string]any)["id"] != db.ID(crew).String() || roles[1].(map[string]any)["id"] != db.ID(boss).String() {
				t.Fatalf("roles = %v, want Crew and Boss", roles)
			}
			perms := roles[0].(map[string]any)["permissions"].(map[string]any)
			if perms["MANAGE_TEAMS"] != "allow" || perms["VIEW_PROJECTS"] != "allow" {
				t.Fatalf("role permissions = %v", perms)
			}
			if m["email_confirmed"] != true || m["phone_number"] != "+441234567890" || m["totp_token"] != nil {
				t.Fatalf("extended fields: %v", m)
			}
		}},
		{name: "get without token", method: "GET", path: "/users/" + bob.ID, want: 401},
		{name: "get bad id", as: alice, method: "GET", path: "/users/abc", want: 400},
		{name: "get self", as: carol, method: "GET", path: "/users/" + carol.ID, want: 200, check: wantKey("id", carol.ID)},
		{name: "owner sees shared orgs only, phone shown", as: alice, method: "GET", path: "/users/" + bob.ID, want: 200, check: func(t *testing.T, r *testResponse) {
			m := r.obj(t)
			if got := orgIDs(t, m); len(got) != 1 || got[0] != acme {
				t.Fatalf("organisations = %v, want only %s", got, acme)
			}
			if m["phone_number"] != "+441234567890" {
				t.Fatalf("phone_number = %v, want shown to the owner", m["phone_number"])
			}
			roles := m["roles"].([]any)
			if len(roles) != 1 || roles[0].(map[string]any)["name"] != "Crew" {
				t.Fatalf("roles = %v, want only Crew (BobCo is not shared)", roles)
			}
			if _, ok := m["signature"]; ok {
				t.Fatalf("another user's object must not be the extended form: %v", m)
			}
		}},
		{name: "plain member sees no phone", as: dave, method: "GET", path: "/users/" + bob.ID, want: 200, check: wantKey("phone_number", "")},
		{name: "member list shows no phone", as: dave, method: "GET", path: "/organisations/" + acme + "/members", want: 200, check: func(t *testing.T, r *testResponse) {
			for _, m := range r.arr(t) {
				if u := m["user"].(map[string]any); u["phone_number"] != "" {
					t.Fatalf("member %v: phone_number = %v, want \"\"", u["id"], u["phone_number"])
				}
			}
		}},
		{name: "foreign organisation user", as: carol, method: "GET", path: "/users/" + bob.ID, want: 400},
		{name: "pending member is no shared org", as: alice, method: "GET", path: "/users/" + eve.ID, want: 400},
		{name: "pending member cannot see", as: eve, method: "GET", path: "/users/" + alice.ID, want: 400},
		{name: "absent user", as: alice, method: "GET", path: "/users/123456789", want: 400},
	})
	_ = other
}

func mustID(s string) int64 {
	id, _ := db.ParseID(s)
	return int64(id)
}

// --- GET /users/lookup ---

func TestUserLookup(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	alice, bob, carol, dave := e.user("alice"), e.user("bob"), e.user("carol"), e.user("dave")
	acme := e.org(alice, "Acme")
	e.org(carol, "Other")
	e.addMember(acme, bob)
	e.addMember(acme, dave)
	e.run(t, []scenario{
		{name: "no token", method: "GET", path: "/users/lookup?email=bob@example.com", want: 401},
		{name: "missing email", as: alice, method: "GET", path: "/users/lookup", want: 400, check: wantField("email")},
		{name: "unknown", as: alice, method: "GET", path: "/users/lookup?email=nobody@example.com", want: 404},
		{name: "owner holds MANAGE_FLEETS", as: alice, method: "GET", path: "/users/lookup?email=BOB@example.com", want: 200, check: func(t *testing.T, r *testResponse) {
			m := r.obj(t)
			if m["id"] != bob.ID || len(orgIDs(t, m)) != 1 {
				t.Fatalf("got %v, want bob with one mutual organisation", m)
			}
		}},
		{name: "member without MANAGE_FLEETS", as: dave, method: "GET", path: "/users/lookup?email=bob@example.com", want: 403},
		{name: "foreign organisation", as: carol, method: "GET", path: "/users/lookup?email=bob@example.com", want: 403},
	})
	e.grantUser(acme, dave, ManageFleets)
	e.exec(`UPDATE users SET phone_number = '+15550001234' WHERE id = ?`, bob.id)
	e.run(t, []scenario{
		{name: "granted MANAGE_FLEETS", as: dave, method: "GET", path: "/users/lookup?email=bob@example.com", want: 200, check: func(t *testing.T, r *testResponse) {
			if m := r.obj(t); m["id"] != bob.ID || m["phone_number"] != "" {
				t.Fatalf("got id %v phone %v, want bob without his phone (dave does not manage Acme)", m["id"], m["phone_number"])
			}
		}},
		{name: "owner sees the phone", as: alice, method: "GET", path: "/users/lookup?email=bob@example.com", want: 200, check: wantKey("phone_number", "+15550001234")},
	})
	e.exec(`UPDATE users SET allow_shares_from = 0 WHERE id = ?`, bob.id)
	e.run(t, []scenario{
		{name: "shares from no one", as: alice, method: "GET", path: "/users/lookup?email=bob@example.com", want: 403},
	})
	e.exec(`UPDATE users SET allow_shares_from = 255 WHERE id = ?`, bob.id)
	e.run(t, []scenario{
		{name: "shares from everyone", as: carol, method: "GET", path: "/users/lookup?email=bob@example.com", want: 200, check: func(t *testing.T, r *testResponse) {
			if got := orgIDs(t, r.obj(t)); len(got) != 0 {
				t.Fatalf("mutual organisations = %v, want none", got)
			}
		}},
	})
}

// --- leaving an organisation ---

func TestUserLeaveOrganisation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	alice, bob, carol := e.user("alice"), e.user("bob"), e.user("carol")
	acme := e.org(alice, "Acme")
	other := e.org(carol, "Other")
	e.addMember(acme, bob)
	e.giveRole(acme, bob, "Crew", ViewProjects)
	e.grantUser(acme, bob, ManageFleets)
	e.run(t, []scenario{
		{name: "no token", method: "DELETE", path: "/users/@me/organisations/" + acme, want: 401},
		{name: "bad id", as: bob, method: "DELETE", path: "/users/@me/organisations/acme", want: 400},
		{name: "absent organisation", as: bob, method: "DELETE", path: "/users/@me/organisations/424242", want: 404},
		{name: "owner cannot leave", as: alice, method: "DELETE", path: "/users/@me/organisations/" + acme, want: 400},
		{name: "foreign organisation is already left", as: bob, method: "DELETE", path: "/users/@me/organisations/" + other, want: 204},
		{name: "leave", as: bob, method: "DELETE", path: "/users/@me/organisations/" + acme, want: 204},
		{name: "again", as: bob, method: "DELETE", path: "/users/@me/organisations/" + acme, want: 204},
		{name: "no longer shared", as: alice, method: "GET", path: "/users/" + bob.ID, want: 400},
	})
	for what, q := range map[string]string{
		"membership": `SELECT count(*) FROM organisation_members WHERE user_id = ? AND organisation_id = ?`,
		"roles":      `SELECT count(*) FROM member_roles WHERE user_id = ? AND organisation_id = ?`,
		"grants":     `SELECT count(*) FROM permission_grants WHERE target_id = ? AND organisation_id = ?`,
	} {
		if n := e.count(q, bob.id, mustID(acme)); n != 0 {
			t.Errorf("%s rows left: %d", what, n)
		}
	}
	if n := e.count(`SELECT count(*) FROM organisation_members WHERE user_id = ?`, carol.id); n != 1 {
		t.Errorf("carol's membership touched: %d rows", n)
	}
}

// --- DELETE /users/@me ---

func TestUserDeleteMe(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	alice, bob := e.user("alice"), e.user("bob")
	acme := e.org(alice, "Acme")
	e.addMember(acme, bob)
	e.run(t, []scenario{
		{name: "no token", method: "DELETE", path: "/users/@me", want: 401},
		{name: "owner first", as: alice, method: "DELETE", path: "/users/@me", want: 400, check: wantCode(0x01000)},
		{name: "still a member", as: bob, method: "DELETE", path: "/users/@me", want: 400, check: wantCode(0x01002)},
		{name: "leave", as: bob, method: "DELETE", path: "/users/@me/organisations/" + acme, want: 204},
		{name: "malformed body", as: bob, method: "DELETE", path: "/users/@me", body: `{"email_token": 5}`, want: 400},
		{name: "wrong token before any", as: bob, method: "DELETE", path: "/users/@me?email_token=nope", want: 400, check: wantCode(0x01001)},
		{name: "asks for a token", as: bob, method: "DELETE", path: "/users/@me", want: 202},
	})
	first := e.lastSecret("bob@example.com")
	e.must(202, bob, "DELETE", "/users/@me", nil)
	tok := e.lastSecret("bob@example.com")
	e.run(t, []scenario{
		{name: "replaced token", as: bob, method: "DELETE", path: "/users/@me?email_token=" + first, want: 400, check: wantCode(0x01001)},
		{name: "wrong token in body", as: bob, method: "DELETE", path: "/users/@me", body: map[string]any{"email_token": "wrong"}, want: 400, check: wantCode(0x01001)},
	})
	t.Run("expired token", func(t *testing.T) {
		e.clock.Advance(24*time.Hour + time.Second)
		r := e.must(400, bob, "DELETE", "/users/@me", map[string]any{"email_token": tok})
		wantCode(0x01001)(t, r)
	})
	// Tokens were issued at the start; make fresh ones after the clock moved.
	bob = e.tokenFor(db.User{ID: bob.id, Email: bob.Email})
	e.must(202, bob, "DELETE", "/users/@me", nil)
	tok = e.lastSecret("bob@example.com")
	e.run(t, []scenario{
		{name: "deletes with body token", as: bob, method: "DELETE", path: "/users/@me", body: map[string]any{"email_token": tok}, want: 204},
		{name: "token of a deleted user", as: bob, method: "GET", path: "/users/@me", want: 401},
	})
	for what, q := range map[string]string{
		"emails":         `SELECT count(*) FROM user_emails WHERE user_id = ?`,
		"refresh tokens": `SELECT count(*) FROM refresh_tokens WHERE user_id = ?`,
		"tokens":         `SELECT count(*) FROM user_tokens WHERE user_id = ?`,
		"live user":      `SELECT count(*) FROM users WHERE id = ? AND deleted_at IS NULL`,
	} {
		if n := e.count(q, bob.id); n != 0 {
			t.Errorf("%s left: %d", what, n)
		}
	}
	t.Run("address is free again", func(t *testing.T) {
		if _, err := e.srv.createUser(context.Background(), "bob@example.com", "", "Bob", "Again", 0, true); err != nil {
			t.Fatalf("re-register: %v", err)
		}
	})
	t.Run("query token", func(t *testing.T) {
		carol := e.user("carol")
		e.must(202, carol, "DELETE", "/users/@me", nil)
		e.must(204, carol, "DELETE", "/users/@me?email_token="+e.lastSecret("carol@example.com"), nil)
	})
}
