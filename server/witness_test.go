package server

import (
	"testing"
	"time"
)

func TestWitnessSigning(t *testing.T) {
	t.Parallel()
	f := newWIFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	carol := e.user("carol")
	e.addMember(f.acme, carol)
	wi := e.must(201, f.alice, "POST", acme+"/workitems", map[string]any{"type_id": f.task, "title": "Pressure test", "assignee_ids": []string{f.bob.ID}}).obj(t)
	id := wi["id"].(string)
	for _, u := range []*testUser{f.bob, carol, f.mallory, f.pen} {
		e.must(200, u, "PUT", "/users/@me/qr/token", map[string]any{"token": userSecret})
	}
	e.must(200, f.bob, "PATCH", "/users/@me", map[string]any{"company": "Inspect Ltd"})
	var jwt string
	e.run(t, []scenario{
		{"token required", f.bob, "GET", "/users/@me/witness/" + id, nil, 400, wantField("token")},
		{"not an id", f.bob, "GET", "/users/@me/witness/x?token=123456", nil, 400, nil},
		{"absent object", f.bob, "GET", "/users/@me/witness/123456789?token=" + code(t, e, userSecret), nil, 404, nil},
		{"another organisation's work item", f.mallory, "GET", "/users/@me/witness/" + id + "?token=" + code(t, e, userSecret), nil, 404, nil},
		{"a pending member", f.pen, "GET", "/users/@me/witness/" + id + "?token=" + code(t, e, userSecret), nil, 404, nil},
		{"wrong code", f.bob, "GET", "/users/@me/witness/" + id + "?token=000000", nil, 404, nil},
		{"the assignee gets a signing token", f.bob, "GET", "/users/@me/witness/" + id + "?token=" + code(t, e, userSecret), nil, 200, func(t *testing.T, r *testResponse) {
			o := r.obj(t)
			jwt, _ = o["sign_token"].(string)
			if jwt == "" || o["object_type"] != "work_item" || o["object_id"] != id || o["expires_at"] != "2026-11-21T10:00:00.000Z" {
				t.Errorf("got %v", o)
			}
		}},
		{"the code only once", f.bob, "GET", "/users/@me/witness/" + id + "?token=" + code(t, e, userSecret), nil, 404, nil},
	})
	e.run(t, []scenario{
		{"jwt required", f.bob, "POST", "/users/@me/witness/" + id + "/sign", map[string]any{}, 400, wantField("jwt")},
		{"malformed", f.bob, "POST", "/users/@me/witness/" + id + "/sign", `{"jwt":`, 400, nil},
		{"jwt of a wrong type", f.bob, "POST", "/users/@me/witness/" + id + "/sign", map[string]any{"jwt": 1}, 400, nil},
		{"another user's token", carol, "POST", "/users/@me/witness/" + id + "/sign", map[string]any{"jwt": jwt}, 404, nil},
		{"a token for another object", f.bob, "POST", "/users/@me/witness/" + f.project + "/sign", map[string]any{"jwt": jwt}, 404, nil},
		{"an access token", f.bob, "POST", "/users/@me/witness/" + id + "/sign", map[string]any{"jwt": f.bob.Token}, 404, nil},
		{"a phone that is not confirmed", f.bob, "POST", "/users/@me/witness/" + id + "/sign", map[string]any{"jwt": jwt, "phone_number": "+441234567890"}, 400, wantField("phone_number")},
		{"witness", f.bob, "POST", "/users/@me/witness/" + id + "/sign", map[string]any{"jwt": jwt, "position": "Inspector"}, 200, func(t *testing.T, r *testResponse) {
			o := r.obj(t)
			if o["user_id"] != f.bob.ID || o["company"] != "Inspect Ltd" || o["position"] != "Inspector" || o["object_id"] != id || o["signed_at"] == nil {
				t.Errorf("got %v", o)
			}
		}},
		{"witnessing again returns the first record", f.bob, "POST", "/users/@me/witness/" + id + "/sign", map[string]any{"jwt": jwt, "position": "Other"}, 200, wantKey("position", "Inspector")},
		{"witnesses listed", f.alice, "GET", "/workitems/" + id + "/witnesses", nil, 200, wantLen(1)},
		{"other organisation cannot list witnesses", f.mallory, "GET", "/workitems/" + id + "/witnesses", nil, 403, nil},
		{"absent work item", f.alice, "GET", "/workitems/123456789/witnesses", nil, 404, nil},
	})
	e.clock.Advance(31 * time.Minute)
	e.run(t, []scenario{
		{"an expired token", f.bob, "POST", "/users/@me/witness/" + id + "/sign", map[string]any{"jwt": jwt}, 404, nil},
	})
}

func TestWitnessRevision(t *testing.T) {
	t.Parallel()
	f := newDocFixture(t)
	e := f.e
	revs := e.must(200, f.alice, "GET", "/documents/"+f.doc+"/revisions", nil).arr(t)
	if len(revs) == 0 {
		t.Fatal("a new document has no revision")
	}
	rev, hash := revs[0]["id"].(string), revs[0]["hash"].(string)
	for _, u := range []*testUser{f.alice, f.mallory} {
		e.must(200, u, "PUT", "/users/@me/qr/token", map[string]any{"token": userSecret})
	}
	e.run(t, []scenario{
		{"another organisation's revision", f.mallory, "GET", "/users/@me/witness/" + rev + "?token=" + code(t, e, userSecret), nil, 404, nil},
	})
	var jwt string
	e.run(t, []scenario{
		{"a revision opens with its hash", f.alice, "GET", "/users/@me/witness/" + rev + "?token=" + code(t, e, userSecret), nil, 200, func(t *testing.T, r *testResponse) {
			o := r.obj(t)
			jwt, _ = o["sign_token"].(string)
			if o["object_type"] != "document_revision" || o["hash"] != hash || o["title"] != "Main spec" {
				t.Errorf("got %v", o)
			}
		}},
	})
	e.run(t, []scenario{
		{"witness the revision", f.alice, "POST", "/users/@me/witness/" + rev + "/sign", map[string]any{"jwt": jwt}, 200, func(t *testing.T, r *testResponse) {
			if o := r.obj(t); o["object_type"] != "document_revision" || o["object_id"] != rev {
				t.Errorf("got %v", o)
			}
		}},
	})
}
