package server

import (
	"fmt"
	"sort"
	"testing"
)

// TestShareListsShowEachSubject: the share lists of every kind read their
// subjects for the whole page at once (server/shares.go); each row still
// shows its own subject when a list names several subjects, one subject
// twice (a share to the user and one to its organisation) and subjects
// in another order than the shares. A member of the recipient organisation
// sees only the organisation's shares, the sharer's organisation none.
func TestShareListsShowEachSubject(t *testing.T) {
	t.Parallel()
	f := newAssetFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	carol := e.user("carol") // shared with personally, and a member of Evil
	e.addMember(f.evil, carol)
	e.sharesFromAnyone(carol)
	id := func(r *testResponse) string { return r.obj(t)["id"].(string) }
	p1 := id(e.must(201, f.alice, "POST", acme+"/projects", map[string]any{"name": "Plant"}))
	p2 := id(e.must(201, f.alice, "POST", acme+"/projects", map[string]any{"name": "Pier"}))
	d1 := id(e.must(201, f.alice, "POST", "/documents", map[string]any{"organisation_id": f.acme, "title": "Spec one"}))
	d2 := id(e.must(201, f.alice, "POST", "/documents", map[string]any{"organisation_id": f.acme, "title": "Spec two"}))

	type made struct{ kind, subject, key string } // key: the subject's object in the share
	shares := map[string]made{}                   // share id ->
	orgShares := map[string]bool{}
	share := func(kind, path, subject, key string, body map[string]any) {
		sid := id(e.must(201, f.alice, "POST", path+"/shares", body))
		shares[sid] = made{kind, subject, key}
		if body["organisation_id"] != nil {
			orgShares[sid] = true
		}
	}
	toCarol := map[string]any{"user_id": carol.ID}
	toEvil := map[string]any{"organisation_id": f.evil}
	docToCarol := map[string]any{"user_id": carol.ID, "scope_view": true}
	docToEvil := map[string]any{"organisation_id": f.evil, "scope_view": true}
	// later subjects first, one subject twice per kind
	share("project", "/projects/"+p2, p2, "project", toCarol)
	share("project", "/projects/"+p1, p1, "project", toCarol)
	share("project", "/projects/"+p1, p1, "project", toEvil)
	share("fleet", "/fleets/"+f.otherFleet, f.otherFleet, "fleet", toCarol)
	share("fleet", "/fleets/"+f.fleet, f.fleet, "fleet", toEvil)
	share("fleet", "/fleets/"+f.fleet, f.fleet, "fleet", toCarol)
	share("document", "/documents/"+d2, d2, "document", docToCarol)
	share("document", "/documents/"+d1, d1, "document", docToEvil)
	share("document", "/documents/"+d1, d1, "document", docToCarol)

	// check that a list is exactly want (share ids) and each row names its subject
	check := func(kind string, want []string) func(t *testing.T, r *testResponse) {
		return func(t *testing.T, r *testResponse) {
			t.Helper()
			var got []string
			for _, row := range r.arr(t) {
				sh, k := row, kind
				if kind == "" { // /users/@me/shares
					k = row["type"].(string)
					sh = row["share"].(map[string]any)
				}
				sid := sh["id"].(string)
				m, ok := shares[sid]
				if !ok || m.kind != k {
					t.Fatalf("unexpected %s share %v", k, sh)
				}
				if subj := sh[m.key].(map[string]any)["id"]; subj != m.subject {
					t.Fatalf("%s share %s shows %s %v, want %s", k, sid, m.key, subj, m.subject)
				}
				if o := sh["owner_organisation"].(map[string]any)["id"]; o != f.acme {
					t.Fatalf("%s share %s: owner %v", k, sid, o)
				}
				got = append(got, sid)
			}
			sort.Strings(got)
			sort.Strings(want)
			if len(got) != len(want) || fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("shares %v, want %v", got, want)
			}
		}
	}
	of := func(pred func(sid string, m made) bool) []string {
		out := []string{}
		for sid, m := range shares {
			if pred(sid, m) {
				out = append(out, sid)
			}
		}
		return out
	}
	all := func(string, made) bool { return true }
	kind := func(k string) func(string, made) bool {
		return func(_ string, m made) bool { return m.kind == k }
	}
	subject := func(s string) func(string, made) bool {
		return func(_ string, m made) bool { return m.subject == s }
	}
	orgOnly := func(sid string, _ made) bool { return orgShares[sid] }
	e.run(t, []scenario{
		{"carol: every kind", carol, "GET", "/users/@me/shares", nil, 200, check("", of(all))},
		{"carol: project shares", carol, "GET", "/users/@me/project-shares", nil, 200, check("project", of(kind("project")))},
		{"carol: fleet shares", carol, "GET", "/users/@me/fleet-shares", nil, 200, check("fleet", of(kind("fleet")))},
		{"carol: document shares", carol, "GET", "/users/@me/document-shares", nil, 200, check("document", of(kind("document")))},
		{"Evil's owner: only the organisation's shares", f.mallory, "GET", "/users/@me/shares", nil, 200, check("", of(orgOnly))},
		{"the sharer's organisation: none addressed to it", f.bob, "GET", "/users/@me/shares", nil, 200, check("", nil)},
		{"a project's shares", f.alice, "GET", "/projects/" + p1 + "/shares", nil, 200, check("project", of(subject(p1)))},
		{"a fleet's shares", f.alice, "GET", "/fleets/" + f.fleet + "/shares", nil, 200, check("fleet", of(subject(f.fleet)))},
		{"a document's shares", f.alice, "GET", "/documents/" + d1 + "/shares", nil, 200, check("document", of(subject(d1)))},
		{"foreign organisation: a project's shares", f.mallory, "GET", "/projects/" + p1 + "/shares", nil, 403, nil},
		{"foreign organisation: a fleet's shares", f.mallory, "GET", "/fleets/" + f.fleet + "/shares", nil, 403, nil},
		{"foreign organisation: a document's shares", f.mallory, "GET", "/documents/" + d1 + "/shares", nil, 403, nil},
		{"a subject without shares lists none", f.alice, "GET", "/projects/" + id(e.must(201, f.alice, "POST", acme+"/projects", map[string]any{"name": "Quay"})) + "/shares", nil, 200, wantLen(0)},
	})
}

// wantResponded: a share's answer to accept or reject carries the new status
// and when it was given (the row as written, not as read before).
func wantResponded(status int) func(t *testing.T, r *testResponse) {
	return func(t *testing.T, r *testResponse) {
		t.Helper()
		o := r.obj(t)
		if fmt.Sprint(o["status"]) != fmt.Sprint(status) {
			t.Fatalf("status = %v, want %d", o["status"], status)
		}
		if at, _ := o["responded_at"].(string); at == "" {
			t.Fatalf("responded_at = %v, want the time of the answer", o["responded_at"])
		}
	}
}
