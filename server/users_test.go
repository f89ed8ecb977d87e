package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
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

var secretRE = regexp.MustCompile(`(?m)^(?:Token|Code): (\S+)$`)

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
	return m[1]
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

// --- PATCH /users/@me (JSON) ---

func TestUserPatchJSON(t *testing.T) {
	e := newEnv(t)
	alice := e.user("alice")
	e.run(t, []scenario{
		{name: "no token", method: "PATCH", path: "/users/@me", body: map[string]any{"first_name": "A"}, want: 401},
		{name: "profile fields", as: alice, method: "PATCH", path: "/users/@me", body: map[string]any{
			"first_name": " Alice ", "last_name": "Liddell", "company": "Acme", "position": "Lead",
			"language": "en-GB", "timezone_code": "Europe/London", "initials": "AL",
			"enable_email_notifications": false, "enable_sms_notifications": true, "enable_email_newsletter": true,
			"allow_shares_from": 255,
		}, want: 200, check: func(t *testing.T, r *testResponse) {
			m := r.obj(t)
			want := map[string]any{"first_name": "Alice", "last_name": "Liddell", "company": "Acme", "position": "Lead",
				"language": "en-GB", "timezone_code": "Europe/London", "initials": "AL", "email_notifications": false,
				"sms_notifications": true, "email_newsletter": true, "allow_shares_from": float64(255)}
			for k, v := range want {
				if m[k] != v {
					t.Errorf("%s = %v, want %v", k, m[k], v)
				}
			}
		}},
		{name: "alias of notification flag", as: alice, method: "PATCH", path: "/users/@me", body: map[string]any{"email_notifications": true}, want: 200, check: wantKey("email_notifications", true)},
		{name: "unknown timezone", as: alice, method: "PATCH", path: "/users/@me", body: map[string]any{"timezone_code": "Mars/Olympus"}, want: 400, check: wantField("timezone_code")},
		{name: "empty timezone", as: alice, method: "PATCH", path: "/users/@me", body: map[string]any{"timezone_code": ""}, want: 400, check: wantField("timezone_code")},
		{name: "Local timezone", as: alice, method: "PATCH", path: "/users/@me", body: map[string]any{"timezone_code": "Local"}, want: 400, check: wantField("timezone_code")},
		{name: "path timezone", as: alice, method: "PATCH", path: "/users/@me", body: map[string]any{"timezone_code": "../../etc/passwd"}, want: 400, check: wantField("timezone_code")},
		{name: "signature not SVG", as: alice, method: "PATCH", path: "/users/@me", body: map[string]any{"signature": "<b>hi</b>"}, want: 400, check: wantField("signature")},
		{name: "signature malformed", as: alice, method: "PATCH", path: "/users/@me", body: map[string]any{"signature": "<svg><g></svg>"}, want: 400, check: wantField("signature")},
		{name: "signature with script", as: alice, method: "PATCH", path: "/users/@me", body: map[string]any{"signature": "<svg><script>alert(1)</script></svg>"}, want: 400, check: wantField("signature")},
		{name: "signature with javascript link", as: alice, method: "PATCH", path: "/users/@me", body: map[string]any{"signature": `<svg><a href="javascript:alert(1)"><text>x</text></a></svg>`}, want: 400, check: wantField("signature")},
		{name: "signature with external image", as: alice, method: "PATCH", path: "/users/@me", body: map[string]any{"signature": `<svg xmlns:xlink="http://www.w3.org/1999/xlink"><image xlink:href="https://example.net/t.png"/></svg>`}, want: 400, check: wantField("signature")},
		{name: "signature with attribute animation", as: alice, method: "PATCH", path: "/users/@me", body: map[string]any{"signature": `<svg><set attributeName="fill" to="red"/></svg>`}, want: 400, check: wantField("signature")},
		{name: "signature with handler", as: alice, method: "PATCH", path: "/users/@me", body: map[string]any{"signature": `<svg onload="x()"></svg>`}, want: 400, check: wantField("signature")},
		{name: "signature trimmed", as: alice, method: "PATCH", path: "/users/@me", body: map[string]any{"signature": "  <svg viewBox=\"0 0 10 10\"><path d=\"M0 0L10 10\"/></svg>\n"}, want: 200, check: wantKey("signature", `<svg viewBox="0 0 10 10"><path d="M0 0L10 10"/></svg>`)},
		{name: "initials too long", as: alice, method: "PATCH", path: "/users/@me", body: map[string]any{"initials": "ABCDEFG"}, want: 400, check: wantField("initials")},
		{name: "name too long", as: alice, method: "PATCH", path: "/users/@me", body: map[string]any{"first_name": strings.Repeat("x", 101)}, want: 400, check: wantField("first_name")},
		{name: "bad language", as: alice, method: "PATCH", path: "/users/@me", body: map[string]any{"language": "english!"}, want: 400, check: wantField("language")},
		{name: "bad phone", as: alice, method: "PATCH", path: "/users/@me", body: map[string]any{"phone_number": "call me"}, want: 400, check: wantField("phone_number")},
		{name: "bad allow value", as: alice, method: "PATCH", path: "/users/@me", body: map[string]any{"allow_connections_from": 3}, want: 400, check: wantField("allow_connections_from")},
		{name: "wrong type", as: alice, method: "PATCH", path: "/users/@me", body: map[string]any{"first_name": 5}, want: 400, check: wantField("first_name")},
		{name: "wrong type bool", as: alice, method: "PATCH", path: "/users/@me", body: map[string]any{"enable_sms_notifications": "yes"}, want: 400},
		{name: "malformed JSON", as: alice, method: "PATCH", path: "/users/@me", body: `{"first_name":`, want: 400},
		{name: "JSON array", as: alice, method: "PATCH", path: "/users/@me", body: `[1,2]`, want: 400},
		{name: "read-only email", as: alice, method: "PATCH", path: "/users/@me", body: map[string]any{"email": "x@example.com"}, want: 400, check: wantField("email")},
		{name: "read-only badges", as: alice, method: "PATCH", path: "/users/@me", body: map[string]any{"badges": 1 << 31}, want: 400, check: wantField("badges")},
		{name: "read-only phone_number_confirmed", as: alice, method: "PATCH", path: "/users/@me", body: map[string]any{"phone_number_confirmed": true}, want: 400, check: wantField("phone_number_confirmed")},
		{name: "read-only unchanged is fine", as: alice, method: "PATCH", path: "/users/@me", body: map[string]any{"id": alice.ID, "email": "alice@example.com", "roles": []any{}, "last_name": "L"}, want: 200, check: wantKey("last_name", "L")},
		{name: "avatar in JSON", as: alice, method: "PATCH", path: "/users/@me", body: map[string]any{"avatar": "aGVsbG8="}, want: 400, check: wantField("avatar")},
		{name: "unknown fields ignored", as: alice, method: "PATCH", path: "/users/@me", body: map[string]any{"colour": "red"}, want: 200},
	})
	t.Run("nothing changed by refused requests", func(t *testing.T) {
		m := e.must(200, alice, "GET", "/users/@me", nil).obj(t)
		if m["first_name"] != "Alice" || m["timezone_code"] != "Europe/London" || m["initials"] != "AL" || m["email"] != "alice@example.com" {
			t.Fatalf("profile changed by a refused request: %v", m)
		}
	})
	t.Run("wrong content type", func(t *testing.T) {
		req := httptest.NewRequest("PATCH", "/users/@me", strings.NewReader("first_name=x"))
		req.Header.Set("Content-Type", "text/plain")
		req.Header.Set("Authorization", "Bearer "+alice.Token)
		if r := e.serve(req); r.Status != 415 {
			t.Fatalf("status %d, want 415", r.Status)
		}
	})
}

// --- phone number confirmation ---

func TestUserPhone(t *testing.T) {
	e := newEnv(t)
	alice, bob := e.user("alice"), e.user("bob")
	const phone = "+447700900123"
	e.run(t, []scenario{
		{name: "no token", method: "POST", path: "/users/@me/verify-phone-number", want: 401},
		{name: "no phone number", as: alice, method: "POST", path: "/users/@me/verify-phone-number", want: 400},
		{name: "set phone", as: alice, method: "PATCH", path: "/users/@me", body: map[string]any{"phone_number": "+44 7700 900-123"}, want: 200, check: func(t *testing.T, r *testResponse) {
			m := r.obj(t)
			if m["phone_number"] != phone || m["phone_number_confirmed"] != false {
				t.Fatalf("phone = %v confirmed %v", m["phone_number"], m["phone_number_confirmed"])
			}
		}},
		{name: "token without a code sent", as: alice, method: "PATCH", path: "/users/@me", body: map[string]any{"phone_number_token": "123456"}, want: 400, check: wantField("phone_number_token")},
		{name: "send code", as: alice, method: "POST", path: "/users/@me/verify-phone-number", want: 200, check: wantKey("sent", true)},
	})
	code := e.lastSecret(phone)
	wrong := "000000"
	if code == wrong {
		wrong = "111111"
	}
	e.run(t, []scenario{
		{name: "wrong code", as: alice, method: "PATCH", path: "/users/@me", body: map[string]any{"phone_number_token": wrong, "first_name": "Changed"}, want: 400, check: wantField("phone_number_token")},
		{name: "empty code", as: alice, method: "PATCH", path: "/users/@me", body: map[string]any{"phone_number_token": " "}, want: 400, check: wantField("phone_number_token")},
		{name: "another user's code", as: bob, method: "PATCH", path: "/users/@me", body: map[string]any{"phone_number_token": code}, want: 400},
		{name: "right code", as: alice, method: "PATCH", path: "/users/@me", body: map[string]any{"phone_number_token": code}, want: 200, check: func(t *testing.T, r *testResponse) {
			m := r.obj(t)
			if m["phone_number_confirmed"] != true || m["first_name"] == "Changed" {
				t.Fatalf("confirmed %v first_name %v", m["phone_number_confirmed"], m["first_name"])
			}
		}},
	})
	t.Run("already confirmed sends nothing", func(t *testing.T) {
		before := e.messagesTo(phone)
		r := e.must(200, alice, "POST", "/users/@me/verify-phone-number", nil)
		if r.obj(t)["sent"] != false || e.messagesTo(phone) != before {
			t.Fatalf("sent = %v, messages %d -> %d", r.obj(t)["sent"], before, e.messagesTo(phone))
		}
	})
	t.Run("a change resets confirmation and old codes", func(t *testing.T) {
		e.must(200, alice, "PATCH", "/users/@me", map[string]any{"phone_number": "+15550001111"})
		e.must(200, alice, "POST", "/users/@me/verify-phone-number", nil)
		code := e.lastSecret("+15550001111")
		m := e.must(200, alice, "PATCH", "/users/@me", map[string]any{"phone_number": "+15550002222"}).obj(t)
		if m["phone_number_confirmed"] != false {
			t.Fatalf("confirmed after a change")
		}
		e.must(400, alice, "PATCH", "/users/@me", map[string]any{"phone_number_token": code})
	})
	t.Run("expired code", func(t *testing.T) {
		e.must(200, alice, "POST", "/users/@me/verify-phone-number", nil)
		code := e.lastSecret("+15550002222")
		e.clock.Advance(16 * time.Minute)
		e.must(400, alice, "PATCH", "/users/@me", map[string]any{"phone_number_token": code})
	})
	t.Run("too many wrong guesses burn the code", func(t *testing.T) {
		e.must(200, alice, "POST", "/users/@me/verify-phone-number", nil)
		code := e.lastSecret("+15550002222")
		bad := "999999"
		if code == bad {
			bad = "999998"
		}
		for range phoneCodeTries {
			e.must(400, alice, "PATCH", "/users/@me", map[string]any{"phone_number_token": bad})
		}
		e.must(400, alice, "PATCH", "/users/@me", map[string]any{"phone_number_token": code})
	})
}

// --- PATCH /users/@me (multipart) and GET /users/avatar/{hash} ---

func TestUserAvatar(t *testing.T) {
	e := newEnv(t)
	alice, bob := e.user("alice"), e.user("bob")
	pngData := pngBytes(t, 800, 600)
	sum := sha256.Sum256(pngData)
	hash := hex.EncodeToString(sum[:])

	patch := func(u *testUser, fields map[string]string, files map[string][]byte) *testResponse {
		return e.serve(multipartReq(t, u, "PATCH", "/users/@me", fields, files))
	}
	cases := []struct {
		name   string
		as     *testUser
		fields map[string]string
		files  map[string][]byte
		want   int
		field  string
	}{
		{"no token", nil, nil, map[string][]byte{"avatar": pngData}, 401, ""},
		{"gif", alice, nil, map[string][]byte{"avatar": gifBytes(t, 800, 600)}, 400, "avatar"},
		{"not an image", alice, nil, map[string][]byte{"avatar": []byte("hello, world")}, 400, "avatar"},
		{"empty file", alice, nil, map[string][]byte{"avatar": {}}, 400, "avatar"},
		{"too small", alice, nil, map[string][]byte{"avatar": pngBytes(t, 639, 480)}, 400, "avatar"},
		{"too short", alice, nil, map[string][]byte{"avatar": jpegBytes(t, 640, 479)}, 400, "avatar"},
		{"too large a canvas", alice, nil, map[string][]byte{"avatar": pngBytes(t, 5000, 500)}, 400, "avatar"},
		{"truncated body", alice, nil, map[string][]byte{"avatar": pngData[:len(pngData)/2]}, 400, "avatar"},
		{"bad boolean", alice, map[string]string{"enable_sms_notifications": "maybe"}, nil, 400, "enable_sms_notifications"},
		{"bad timezone", alice, map[string]string{"timezone_code": "Nowhere/Town"}, nil, 400, "timezone_code"},
		{"read-only field", alice, map[string]string{"email": "x@example.com"}, nil, 400, "email"},
		{"signature not SVG", alice, map[string]string{"signature": "hello"}, nil, 400, "signature"},
		{"text not UTF-8", alice, map[string]string{"first_name": "Al\xff\xfe"}, nil, 400, "first_name"},
		{"png with fields", alice, map[string]string{"first_name": "Al", "enable_sms_notifications": "true", "timezone_code": "Asia/Tokyo"}, map[string][]byte{"avatar": pngData}, 200, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := patch(c.as, c.fields, c.files)
			if r.Status != c.want {
				t.Fatalf("status %d, want %d: %s", r.Status, c.want, r.Body)
			}
			if c.want >= 400 {
				assertErrorBody(t, r)
			}
			if c.field != "" {
				wantField(c.field)(t, r)
			}
		})
	}
	t.Run("stored", func(t *testing.T) {
		m := e.must(200, alice, "GET", "/users/@me", nil).obj(t)
		if m["avatar_hash"] != hash || m["first_name"] != "Al" || m["sms_notifications"] != true || m["timezone_code"] != "Asia/Tokyo" {
			t.Fatalf("after multipart PATCH: %v", m)
		}
	})
	t.Run("malformed multipart", func(t *testing.T) {
		req := httptest.NewRequest("PATCH", "/users/@me", strings.NewReader("--x\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nunterminated"))
		req.Header.Set("Content-Type", "multipart/form-data; boundary=x")
		req.Header.Set("Authorization", "Bearer "+alice.Token)
		if r := e.serve(req); r.Status != 400 {
			t.Fatalf("status %d, want 400: %s", r.Status, r.Body)
		}
		req = httptest.NewRequest("PATCH", "/users/@me", strings.NewReader("x"))
		req.Header.Set("Content-Type", "multipart/form-data")
		req.Header.Set("Authorization", "Bearer "+alice.Token)
		if r := e.serve(req); r.Status != 400 {
			t.Fatalf("no boundary: status %d, want 400: %s", r.Status, r.Body)
		}
	})

	// A blob that is nobody's avatar must not be served.
	e.exec(`INSERT INTO blobs(hash, content_type, size, data, created_at) VALUES (?, 'application/pdf', 3, x'010203', ?)`, strings.Repeat("ab", 32), e.srv.nowText())
	e.run(t, []scenario{
		{name: "served without token", method: "GET", path: "/users/avatar/" + hash, want: 200, check: func(t *testing.T, r *testResponse) {
			if r.Header.Get("Content-Type") != "image/png" || r.Header.Get("Cache-Control") != "public, max-age=900" || !bytes.Equal(r.Body, pngData) {
				t.Fatalf("headers %v, %d bytes", r.Header, len(r.Body))
			}
		}},
		{name: "resized keeps aspect", method: "GET", path: "/users/avatar/" + hash + "?size=100", want: 200, check: func(t *testing.T, r *testResponse) {
			cfg, format, err := image.DecodeConfig(bytes.NewReader(r.Body))
			if err != nil || format != "png" || cfg.Width != 100 || cfg.Height != 75 {
				t.Fatalf("got %s %dx%d (%v), want png 100x75", format, cfg.Width, cfg.Height, err)
			}
			if r.Header.Get("Cache-Control") != "public, max-age=900" {
				t.Fatalf("Cache-Control %q", r.Header.Get("Cache-Control"))
			}
		}},
		{name: "size above the image is the original", method: "GET", path: "/users/avatar/" + hash + "?size=1024", want: 200, check: func(t *testing.T, r *testResponse) {
			if !bytes.Equal(r.Body, pngData) {
				t.Fatalf("got %d bytes, want the original", len(r.Body))
			}
		}},
		{name: "size not a number", method: "GET", path: "/users/avatar/" + hash + "?size=big", want: 400, check: wantField("size")},
		{name: "size too small", method: "GET", path: "/users/avatar/" + hash + "?size=15", want: 400},
		{name: "size too large", method: "GET", path: "/users/avatar/" + hash + "?size=1025", want: 400},
		{name: "unknown hash", method: "GET", path: "/users/avatar/" + strings.Repeat("0", 64), want: 404},
		{name: "malformed hash", method: "GET", path: "/users/avatar/xyz", want: 404},
		{name: "blob that is no avatar", method: "GET", path: "/users/avatar/" + strings.Repeat("ab", 32), want: 404},
	})

	t.Run("jpeg resize", func(t *testing.T) {
		j := jpegBytes(t, 640, 960)
		if r := patch(bob, nil, map[string][]byte{"avatar": j}); r.Status != 200 {
			t.Fatalf("status %d: %s", r.Status, r.Body)
		}
		s := sha256.Sum256(j)
		r := e.must(200, nil, "GET", "/users/avatar/"+hex.EncodeToString(s[:])+"?size=96", nil)
		cfg, format, err := image.DecodeConfig(bytes.NewReader(r.Body))
		if err != nil || format != "jpeg" || cfg.Width != 64 || cfg.Height != 96 || r.Header.Get("Content-Type") != "image/jpeg" {
			t.Fatalf("got %s %dx%d (%v) %q, want jpeg 64x96", format, cfg.Width, cfg.Height, err, r.Header.Get("Content-Type"))
		}
	})
	t.Run("null removes the avatar", func(t *testing.T) {
		m := e.must(200, alice, "PATCH", "/users/@me", map[string]any{"avatar": nil}).obj(t)
		if m["avatar_hash"] != nil {
			t.Fatalf("avatar_hash = %v, want null", m["avatar_hash"])
		}
		e.must(404, nil, "GET", "/users/avatar/"+hash, nil)
	})
}

// --- e-mail addresses ---

// TestUserPatchMultipartLimits: repeated parts, over-long parts and bodies
// over --max-body are 4xx, and nothing changes.
func TestUserPatchMultipartLimits(t *testing.T) {
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
		r := e.must(400, bob, "PATCH", "/users/@me/emails/"+bid, map[string]any{"email_token": bobTok})
		wantField("email")(t, r)
	})
	t.Run("primary taken as another account's sign-in address", func(t *testing.T) {
		const taken = "signin@else.test"
		if _, err := e.srv.createUser(context.Background(), taken, "", "Dee", "T", 0, false); err != nil {
			t.Fatal(err)
		}
		xid := e.must(201, bob, "POST", "/users/@me/emails", map[string]any{"email": taken}).obj(t)["id"].(string)
		e.must(200, bob, "PATCH", "/users/@me/emails/"+xid, map[string]any{"email_token": e.lastSecret(taken)})
		r := e.must(400, bob, "PATCH", "/users/@me/emails/"+xid, map[string]any{"is_primary": true})
		wantField("email")(t, r)
		if m := e.must(200, bob, "GET", "/users/@me", nil).obj(t); m["email"] != "bob@example.com" {
			t.Fatalf("sign-in address changed to %v", m["email"])
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

// --- leaving an organisation ---

func TestUserLeaveOrganisation(t *testing.T) {
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

// --- QR token ---

func TestUserQR(t *testing.T) {
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

// --- rows whose objects belong to areas not built yet ---

func TestUserPendingAreaRows(t *testing.T) {
	e := newEnv(t)
	alice := e.user("alice")
	var rows []scenario
	for _, p := range []string{"document-shares", "work-items", "fleets", "shares", "fleet-shares", "inductions"} {
		rows = append(rows,
			scenario{name: p + " no token", method: "GET", path: "/users/@me/" + p, want: 401},
			scenario{name: p + " empty", as: alice, method: "GET", path: "/users/@me/" + p, want: 200, check: wantLen(0)},
		)
	}
	rows = append(rows, []scenario{
		{name: "work-items headers", as: alice, method: "GET", path: "/users/@me/work-items?organisation=12&include_assets=true&start_date=2026-01-01&$top=10", want: 200, check: func(t *testing.T, r *testResponse) {
			if r.Header.Get("X-Total-Count") != "0" || r.Header.Get("X-Status-Count") != "{}" {
				t.Fatalf("headers %v", r.Header)
			}
		}},
		{name: "work-items bad id filter", as: alice, method: "GET", path: "/users/@me/work-items?project=abc", want: 400, check: wantField("project")},
		{name: "work-items bad boolean", as: alice, method: "GET", path: "/users/@me/work-items?include_assets=sometimes", want: 400, check: wantField("include_assets")},
		{name: "work-items bad date", as: alice, method: "GET", path: "/users/@me/work-items?finish_date=tomorrow", want: 400, check: wantField("finish_date")},
		{name: "work-items bad top", as: alice, method: "GET", path: "/users/@me/work-items?$top=5000", want: 400, check: wantField("$top")},
		{name: "work-items bad skip", as: alice, method: "GET", path: "/users/@me/work-items?$skip=-1", want: 400, check: wantField("$skip")},
		{name: "work-items filter on an unknown field", as: alice, method: "GET", path: "/users/@me/work-items?$filter=" + url.QueryEscape("colour eq 'red'"), want: 400, check: wantField("colour")},
		{name: "work-items malformed filter", as: alice, method: "GET", path: "/users/@me/work-items?$filter=" + url.QueryEscape("(("), want: 400, check: wantField("$filter")},
		{name: "fleet subscriptions absent", as: alice, method: "GET", path: "/users/@me/fleets/123/subscriptions", want: 404},
		{name: "fleet subscriptions bad id", as: alice, method: "GET", path: "/users/@me/fleets/x/subscriptions", want: 400},
		{name: "fleet subscriptions no token", method: "GET", path: "/users/@me/fleets/123/subscriptions", want: 401},
		{name: "work item subscriptions absent", as: alice, method: "GET", path: "/users/@me/work-items/123/subscriptions", want: 404},
		{name: "work item subscriptions bad id", as: alice, method: "GET", path: "/users/@me/work-items/-1/subscriptions", want: 400},
		{name: "toolbox absent", as: alice, method: "GET", path: "/users/@me/toolboxes/123?token=123456", want: 404},
		{name: "toolbox bad id", as: alice, method: "GET", path: "/users/@me/toolboxes/abc", want: 400},
		{name: "toolbox no token", method: "GET", path: "/users/@me/toolboxes/123", want: 401},
		{name: "toolbox sign without jwt or schedule", as: alice, method: "POST", path: "/users/@me/toolboxes/123/sign", body: map[string]any{}, want: 400, check: wantField("jwt")},
		{name: "toolbox sign bad phone", as: alice, method: "POST", path: "/users/@me/toolboxes/123/sign", body: map[string]any{"jwt": "x", "phone_number": "abc"}, want: 400, check: wantField("phone_number")},
		{name: "toolbox sign long name", as: alice, method: "POST", path: "/users/@me/toolboxes/123/sign", body: map[string]any{"jwt": "x", "first_name": strings.Repeat("n", 101)}, want: 400, check: wantField("first_name")},
		{name: "toolbox sign bad schedule id", as: alice, method: "POST", path: "/users/@me/toolboxes/123/sign", body: map[string]any{"schedule_id": "s"}, want: 400},
		{name: "toolbox sign malformed", as: alice, method: "POST", path: "/users/@me/toolboxes/123/sign", body: `{"jwt":`, want: 400},
		{name: "toolbox sign via schedule, absent", as: alice, method: "POST", path: "/users/@me/toolboxes/123/sign", body: map[string]any{"schedule_id": "77"}, want: 404},
		{name: "toolbox sign absent", as: alice, method: "POST", path: "/users/@me/toolboxes/123/sign", body: map[string]any{"jwt": "x"}, want: 404},
		{name: "toolbox sign no token", method: "POST", path: "/users/@me/toolboxes/123/sign", body: map[string]any{"jwt": "x"}, want: 401},
		{name: "witness without token", as: alice, method: "GET", path: "/users/@me/witness/123", want: 400, check: wantField("token")},
		{name: "witness absent", as: alice, method: "GET", path: "/users/@me/witness/123?token=123456", want: 404},
		{name: "witness bad id", as: alice, method: "GET", path: "/users/@me/witness/abc?token=1", want: 400},
		{name: "witness no auth", method: "GET", path: "/users/@me/witness/123?token=1", want: 401},
		{name: "witness sign without jwt", as: alice, method: "POST", path: "/users/@me/witness/123/sign", body: map[string]any{"first_name": "A"}, want: 400, check: wantField("jwt")},
		{name: "witness sign wrong type", as: alice, method: "POST", path: "/users/@me/witness/123/sign", body: map[string]any{"jwt": 1}, want: 400},
		{name: "witness sign absent", as: alice, method: "POST", path: "/users/@me/witness/123/sign", body: map[string]any{"jwt": "x"}, want: 404},
		{name: "witness sign no auth", method: "POST", path: "/users/@me/witness/123/sign", body: map[string]any{"jwt": "x"}, want: 401},
		{name: "induction absent", as: alice, method: "GET", path: "/users/@me/inductions/123", want: 404},
		{name: "induction bad id", as: alice, method: "GET", path: "/users/@me/inductions/abc", want: 400},
		{name: "induction no token", method: "GET", path: "/users/@me/inductions/123", want: 401},
	}...)
	e.run(t, rows)
}

// TestUserRoutesNeverFail sends malformed input to every users route: no
// answer may be a 5xx.
func TestUserRoutesNeverFail(t *testing.T) {
	e := newEnv(t)
	alice := e.user("alice")
	acme := e.org(alice, "Acme")
	bodies := []any{nil, "", "null", "[]", "{", `{"email": {}}`, `"text"`, `{"token": null, "email_token": [1], "notification_email_id": -5, "is_primary": "yes"}`, strings.Repeat("[", 5000)}
	paths := []string{
		"/users/@me", "/users/" + alice.ID, "/users/lookup?email=%zz", "/users/avatar/" + strings.Repeat("f", 64) + "?size=%00",
		"/users/@me/emails", "/users/@me/emails/1", "/users/@me/emails/99999999999999999999", "/users/@me/emails/1/verify",
		"/users/@me/organisations/" + acme + "/email", "/users/@me/organisations/" + acme, "/users/@me/verify-phone-number",
		"/users/@me/qr/token", "/users/@me/qr/scan", "/users/@me/work-items?organisation=%20", "/users/@me/toolboxes/1/sign",
		"/users/@me/witness/1/sign", "/users/@me/witness/1?token=", "/users/@me/emails?organisation_id=",
	}
	for _, p := range paths {
		for _, m := range []string{"GET", "POST", "PATCH", "PUT", "DELETE"} {
			for _, b := range bodies {
				r := e.do(alice, m, p, b)
				if r.Status >= 500 && !(r.Status == 501 && p == "/users/@me/qr/scan") {
					t.Errorf("%s %s %.40v: status %d: %.200s", m, p, b, r.Status, r.Body)
				}
			}
		}
	}
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
