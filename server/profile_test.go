package server

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"image"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// --- PATCH /users/@me (JSON) ---

func TestUserPatchJSON(t *testing.T) {
	t.Parallel()
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
		{name: "signature trimmed", as: alice, method: "PATCH", path: "/users/@me", body: map[string]any{"signature": "  <svg viewBox=\"0 0 10 10\"><path d=\"M0 0L10 10\"/></svg>\n"}, want: 200, check: wantKey("signature", `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10"><path d="M0 0L10 10"/></svg>`)},
		{name: "initials too long", as: alice, method: "PATCH", path: "/users/@me", body: map[string]any{"initials": "ABCDEFG"}, want: 400, check: wantField("initials")},
		{name: "name too long", as: alice, method: "PATCH", path: "/users/@me", body: map[string]any{"first_name": strings.Repeat("x", 101)}, want: 400, check: wantField("first_name")},
		{name: "bad language", as: alice, method: "PATCH", path: "/users/@me", body: map[string]any{"language": "english!"}, want: 400, check: wantField("language")},
		{name: "phone over 32 characters as typed", as: alice, method: "PATCH", path: "/users/@me", body: map[string]any{"phone_number": "+44" + strings.Repeat(" ", 30) + "1234567890"}, want: 400, check: wantField("phone_number")},
		{name: "bad phone", as: alice, method: "PATCH", path: "/users/@me", body: map[string]any{"phone_number": "call me"}, want: 400, check: wantField("phone_number")},
		{name: "bad allow value", as: alice, method: "PATCH", path: "/users/@me", body: map[string]any{"allow_connections_from": 3}, want: 400, check: wantField("allow_connections_from")},
		{name: "bad allow shares value", as: alice, method: "PATCH", path: "/users/@me", body: map[string]any{"allow_shares_from": 254}, want: 400, check: wantField("allow_shares_from")},
		{name: "last name too long", as: alice, method: "PATCH", path: "/users/@me", body: map[string]any{"last_name": strings.Repeat("x", 101)}, want: 400, check: wantField("last_name")},
		{name: "company too long", as: alice, method: "PATCH", path: "/users/@me", body: map[string]any{"company": strings.Repeat("x", 201)}, want: 400, check: wantField("company")},
		{name: "position too long", as: alice, method: "PATCH", path: "/users/@me", body: map[string]any{"position": strings.Repeat("x", 201)}, want: 400, check: wantField("position")},
		{name: "position at its limit", as: alice, method: "PATCH", path: "/users/@me", body: map[string]any{"position": strings.Repeat("é", 200)}, want: 200, check: wantKey("position", strings.Repeat("é", 200))},
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
	t.Parallel()
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
	t.Parallel()
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
