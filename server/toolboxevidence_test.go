package server

import (
	"strings"
	"testing"
	"time"
)

// TestToolboxSigningEvidence: issue 35's signing evidence. A member who does
// not run the meeting cannot record a signature in another member's name or
// read the meeting's secret; what the conductor records for someone else is
// shown as recorded by them; a visitor with a member's contact details is
// refused; an outsider with the toolbox's code sees the talk and nothing
// else of the organisation.
func TestToolboxSigningEvidence(t *testing.T) {
	t.Parallel()
	f := newToolboxFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	carol := e.user("carol") // a member without permissions, not the conductor
	e.addMember(f.acme, carol)
	// Bob, a member without permissions, creates and conducts: he runs it.
	tb := e.must(201, f.bob, "POST", acme+"/toolboxes", map[string]any{"title": "Slings", "location_id": f.depot, "workgroup_id": f.workgroup}).obj(t)
	tp := "/toolboxes/" + tb["id"].(string)
	e.must(200, f.bob, "POST", tp+"/conduct", map[string]any{"latitude": 51.5, "longitude": -0.12})
	e.must(200, f.alice, "PATCH", "/users/@me", map[string]any{"phone_number": "+44 7700 900123"})
	e.must(200, f.alice, "POST", "/users/@me/verify-phone-number", nil)
	e.must(200, f.alice, "PATCH", "/users/@me", map[string]any{"phone_number_token": e.lastSecret("+447700900123")})

	recorder := func(want string) func(t *testing.T, r *testResponse) {
		return func(t *testing.T, r *testResponse) {
			o := r.obj(t)
			rb, _ := o["recorded_by"].(map[string]any)
			if want == "" && o["recorded_by"] != nil || want != "" && (rb == nil || rb["id"] != want) {
				t.Errorf("recorded_by %v, want %q (%s)", o["recorded_by"], want, r.Body)
			}
		}
	}
	e.run(t, []scenario{
		// Before the fix carol's rows were 200 and read as bob's or alice's own.
		{"a member who does not run the meeting signs for another member", carol, "POST", tp + "/sign", map[string]any{"user_id": f.alice.ID, "declaration": true}, 403, nil},
		{"nor with a drawn signature", carol, "POST", tp + "/sign", map[string]any{"user_id": f.alice.ID, "signature": `<svg xmlns="http://www.w3.org/2000/svg"><path d="M1 1"/></svg>`}, 403, nil},
		{"nor for a visitor", carol, "POST", tp + "/sign", map[string]any{"first_name": "Vi", "last_name": "Sitor", "declaration": true}, 403, nil},
		{"nor reads the meeting's secret", carol, "GET", tp + "?include_totp_token=true", nil, 403, nil},
		{"another organisation's user reads no secret", f.mallory, "GET", tp + "?include_totp_token=true", nil, 403, nil},
		{"another organisation's user records nothing", f.mallory, "POST", tp + "/sign", map[string]any{"user_id": f.alice.ID, "declaration": true}, 403, nil},
		{"the member reads the talk without the secret", carol, "GET", tp, nil, 200, func(t *testing.T, r *testResponse) {
			if r.obj(t)["totp_token"] != nil {
				t.Error("totp_token shown")
			}
		}},
		// Before the fix these visitors were recorded.
		{"a visitor with a member's e-mail", f.bob, "POST", tp + "/sign", map[string]any{"first_name": "Al", "last_name": "Ice", "email": "ALICE@example.com", "declaration": true}, 400, func(t *testing.T, r *testResponse) {
			o := r.obj(t)
			if !strings.Contains(o["message"].(string), "signs as themself") || o["errors"].(map[string]any)["email"] == nil {
				t.Errorf("got %v", o)
			}
		}},
		{"a visitor with a member's confirmed phone", f.bob, "POST", tp + "/sign", map[string]any{"first_name": "Al", "last_name": "Ice", "phone_number": "+44 7700 900123", "declaration": true}, 400, wantField("phone_number")},
		{"a visitor with another organisation's member's e-mail is a visitor here", f.bob, "POST", tp + "/sign", map[string]any{"first_name": "Mal", "last_name": "Lory", "email": f.mallory.Email, "declaration": true}, 200, recorder(f.bob.ID)},
		{"carol signs for herself", carol, "POST", tp + "/sign", map[string]any{"user_id": carol.ID, "declaration": true}, 200, recorder("")},
		{"the conductor records alice's declaration", f.bob, "POST", tp + "/sign", map[string]any{"user_id": f.alice.ID, "declaration": true}, 200, recorder(f.bob.ID)},
		{"signing again shows who recorded it", f.bob, "POST", tp + "/sign", map[string]any{"user_id": f.alice.ID, "declaration": true}, 200, recorder(f.bob.ID)},
		{"the toolbox shows who recorded what", carol, "GET", tp, nil, 200, func(t *testing.T, r *testResponse) {
			by := map[string]any{}
			for _, u := range r.obj(t)["users"].([]any) {
				m := u.(map[string]any)
				rb, _ := m["recorded_by"].(map[string]any)
				if rb == nil {
					by[m["first_name"].(string)] = nil
				} else {
					by[m["first_name"].(string)] = rb["id"]
				}
			}
			if len(by) != 3 || by["Mal"] != f.bob.ID || by["alice"] != f.bob.ID || by["carol"] != nil {
				t.Errorf("recorded by %v", by)
			}
		}},
	})

	// With the person's QR code the signature is theirs, whoever scans it.
	e.must(200, carol, "PUT", "/users/@me/qr/token", map[string]any{"token": userSecret})
	e.must(200, f.alice, "PUT", "/users/@me/qr/token", map[string]any{"token": userSecret})
	tb2 := e.must(201, f.alice, "POST", acme+"/toolboxes", map[string]any{"title": "Ladders"}).obj(t)
	tp2 := "/toolboxes/" + tb2["id"].(string)
	e.must(200, f.alice, "POST", tp2+"/conduct", map[string]any{"latitude": 51.5, "longitude": -0.12})
	e.run(t, []scenario{
		{"carol scans alice's QR code", carol, "POST", tp2 + "/sign", map[string]any{"user_qr_code": f.alice.ID + ":" + code(t, e, userSecret)}, 200, func(t *testing.T, r *testResponse) {
			if o := r.obj(t); o["signed_method"] != "user_qr" || o["user_id"] != f.alice.ID || o["recorded_by"] != nil {
				t.Errorf("got %v", o)
			}
		}},
	})

	// An outsider given the toolbox's code: the talk and a signing token,
	// none of the organisation's people's details, workgroup or location.
	secret := e.must(200, f.bob, "GET", tp+"?include_totp_token=true", nil).obj(t)["totp_token"].(string)
	e.run(t, []scenario{
		{"an outsider with the code", f.mallory, "GET", "/users/@me/toolboxes/" + tb["id"].(string) + "?token=" + code(t, e, secret), nil, 200, func(t *testing.T, r *testResponse) {
			o := r.obj(t)
			if o["sign_token"] == "" || o["title"] != "Slings" || o["workgroup"] != nil || o["location"] != nil || len(o["users"].([]any)) != 0 {
				t.Errorf("got %v", o)
			}
			cb := o["created_by"].(map[string]any)
			if cb["first_name"] != "bob" || cb["email"] != "" || cb["phone_number"] != "" || len(cb["organisations"].([]any)) != 0 {
				t.Errorf("created_by %v", cb)
			}
		}},
		{"a member with the code sees the workgroup", carol, "GET", "/users/@me/toolboxes/" + tb["id"].(string) + "?token=" + code(t, e, secret), nil, 200, func(t *testing.T, r *testResponse) {
			if o := r.obj(t); o["workgroup"] == nil || o["created_by"].(map[string]any)["email"] != f.bob.Email {
				t.Errorf("got %v", o)
			}
		}},
	})

	// The outsider signs in the app: a write in acme, on acme's audit chain
	// (before the fix it went to the chain of writes outside organisations).
	e.clock.Advance(time.Minute) // a new code: each is taken once per user
	jwt := e.must(200, f.mallory, "GET", "/users/@me/toolboxes/"+tb["id"].(string)+"?token="+code(t, e, secret), nil).obj(t)["sign_token"].(string)
	e.must(200, f.mallory, "POST", "/users/@me/toolboxes/"+tb["id"].(string)+"/sign", map[string]any{"jwt": jwt})
	var n int
	if err := e.store.Reader.QueryRow(`SELECT count(*) FROM audit_log WHERE chain = ? AND actor_id = ? AND action LIKE 'POST /users/@me/toolboxes/:id/sign'`,
		parseTestID(t, f.acme), f.mallory.id).Scan(&n); err != nil || n != 1 {
		t.Errorf("audit entries of the app signature on acme's chain: %d (%v)", n, err)
	}
}
