package server

import (
	"database/sql"
	"fmt"
	"testing"

	"workspace/db"
)

// TestSyncConflicts: an organisation's conflicts (as the hub records them
// when two offices gave one code apart: db.TestSyncConvergesProperty) are
// listed and settled by a MANAGE_ORGANISATION member only, never through
// another organisation; settling is audited and keeps the first settler.
func TestSyncConflicts(t *testing.T) {
	t.Parallel()
	f := newOrgFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	conflict := func(orgID string) string {
		id := e.store.IDs.Next()
		org, _ := db.ParseID(orgID)
		if err := e.store.InTxSQL(t.Context(), func(tx *sql.Tx, q *db.Queries) error {
			_, err := tx.Exec(`INSERT INTO sync_conflicts (id, organisation_id, kind, tbl, col, row_id, other_id, value, renamed_to, created_at)
				VALUES (?, ?, 'unique', 'projects', 'code', 11, 12, 'B7', 'B7-2', '2026-11-28T00:00:00.000Z')`, id, int64(org))
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return fmt.Sprint(id)
	}
	older, mine, theirs := conflict(f.acme), conflict(f.acme), conflict(f.evil)
	list, settle := acme+"/sync-conflicts", acme+"/sync-conflicts/"+mine+"/settle"
	e.run(t, []scenario{
		{"owner lists", f.alice, "GET", list, nil, 200, func(t *testing.T, r *testResponse) {
			l := r.arr(t)
			if len(l) != 2 || l[1]["id"] != older || l[0]["id"] != mine || l[0]["record_type"] != "project" || l[0]["record_id"] != "11" ||
				l[0]["value"] != "B7" || l[0]["renamed_to"] != "B7-2" || l[0]["settled_at"] != nil {
				t.Errorf("got %v", l)
			}
		}},
		{"a page of one, newest first, with the total", f.alice, "GET", list + "?$top=1", nil, 200, func(t *testing.T, r *testResponse) {
			if l := r.arr(t); len(l) != 1 || l[0]["id"] != mine || r.Header.Get("X-Total-Count") != "2" {
				t.Errorf("got %v, total %q", l, r.Header.Get("X-Total-Count"))
			}
		}},
		{"the second page", f.alice, "GET", list + "?$top=1&$skip=1", nil, 200, func(t *testing.T, r *testResponse) {
			if l := r.arr(t); len(l) != 1 || l[0]["id"] != older {
				t.Errorf("got %v", l)
			}
		}},
		{"a page size that is not a number", f.alice, "GET", list + "?$top=many", nil, 400, nil},
		{"absent organisation", f.alice, "GET", "/organisations/123456789/sync-conflicts", nil, 404, nil},
		{"member without MANAGE_ORGANISATION", f.bob, "GET", list, nil, 403, nil},
		{"other organisation cannot list", f.mallory, "GET", list, nil, 403, nil},
		{"member cannot settle", f.bob, "POST", settle, nil, 403, nil},
		{"another organisation's conflict through this one", f.alice, "POST", acme + "/sync-conflicts/" + theirs + "/settle", nil, 404, nil},
		{"other organisation cannot settle", f.mallory, "POST", settle, nil, 403, nil},
		{"absent conflict", f.alice, "POST", acme + "/sync-conflicts/123456789/settle", nil, 404, nil},
		{"not a snowflake", f.alice, "POST", acme + "/sync-conflicts/abc/settle", nil, 400, nil},
		{"owner settles", f.alice, "POST", settle, map[string]any{}, 200, func(t *testing.T, r *testResponse) {
			o := r.obj(t)
			if o["settled_at"] == nil || o["settled_by"] != f.alice.ID {
				t.Errorf("got %v", o)
			}
		}},
	})
	// Bob, given MANAGE_ORGANISATION, settles again: the first settler stays.
	e.grantUser(f.acme, f.bob, ManageOrganisation)
	e.run(t, []scenario{
		{"settled again keeps the first", f.bob, "POST", settle, nil, 200, func(t *testing.T, r *testResponse) {
			if o := r.obj(t); o["settled_by"] != f.alice.ID {
				t.Errorf("got %v", o)
			}
		}},
		{"the settlement is in the audit trail", f.alice, "GET", acme + "/audit-log?action=POST%20/organisations/:id/sync-conflicts/:conflict/settle", nil, 200, func(t *testing.T, r *testResponse) {
			if l := r.arr(t); len(l) != 2 || l[1]["actor_id"] != f.alice.ID {
				t.Errorf("got %v", l)
			}
		}},
		{"the open ones only", f.alice, "GET", list + "?$filter=settled_at%20eq%20null", nil, 200, func(t *testing.T, r *testResponse) {
			if l := r.arr(t); len(l) != 1 || l[0]["id"] != older || r.Header.Get("X-Total-Count") != "1" {
				t.Errorf("got %v", l)
			}
		}},
		{"the settled ones only", f.alice, "GET", list + "?$filter=settled_at%20ne%20null", nil, 200, func(t *testing.T, r *testResponse) {
			if l := r.arr(t); len(l) != 1 || l[0]["id"] != mine {
				t.Errorf("got %v", l)
			}
		}},
		{"a filter on a field not offered", f.alice, "GET", list + "?$filter=value%20eq%20'B7'", nil, 400, nil},
		{"the other organisation's conflict is untouched", f.mallory, "GET", "/organisations/" + f.evil + "/sync-conflicts", nil, 200, func(t *testing.T, r *testResponse) {
			if l := r.arr(t); len(l) != 1 || l[0]["settled_at"] != nil {
				t.Errorf("got %v", l)
			}
		}},
	})
}

// TestSyncProvisionalNumbers: on an office's copy (a clone) with no number
// block left, a work item gets a provisional number, shown as such (a
// negative number, formatted PROV-<office>-<n>), with or without a prefix;
// the same on head office numbers as ever.
func TestSyncProvisionalNumbers(t *testing.T) {
	t.Parallel()
	f := newOrgFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	id := func(r *testResponse) string { return r.obj(t)["id"].(string) }
	prefix := id(e.must(201, f.alice, "POST", acme+"/prefixes", map[string]any{"number_format": "D-{number}"}))
	task := id(e.must(201, f.alice, "POST", acme+"/work-item-types", map[string]any{"name": "Task"}))
	defect := id(e.must(201, f.alice, "POST", acme+"/work-item-types", map[string]any{"name": "Defect", "prefix_id": prefix}))
	hubItem := e.must(201, f.alice, "POST", acme+"/workitems", map[string]any{"type_id": task, "title": "At head office"}).obj(t)
	if hubItem["number"] != float64(1) || hubItem["formatted_number"] != "1" {
		t.Fatalf("hub numbered %v %v", hubItem["number"], hubItem["formatted_number"])
	}
	// This database becomes node 7's clone (as SyncRecordClonedLog marks it).
	if err := e.store.InTxSQL(t.Context(), func(tx *sql.Tx, q *db.Queries) error {
		_, err := tx.Exec(`INSERT INTO meta(key, value) VALUES ('sync_clone', '1'), ('sync_node', '7')`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	e.run(t, []scenario{
		{"counter, no block left", f.alice, "POST", acme + "/workitems", map[string]any{"type_id": task, "title": "On site"}, 201, func(t *testing.T, r *testResponse) {
			if o := r.obj(t); o["formatted_number"] != "PROV-7-1" || o["number"].(float64) >= 0 {
				t.Errorf("got %v %v", o["number"], o["formatted_number"])
			}
		}},
		{"prefix, no block left", f.alice, "POST", acme + "/workitems", map[string]any{"type_id": defect, "title": "On site"}, 201, func(t *testing.T, r *testResponse) {
			if o := r.obj(t); o["formatted_number"] != "D-PROV-7-1" || o["number"].(float64) >= 0 {
				t.Errorf("got %v %v", o["number"], o["formatted_number"])
			}
		}},
		{"another organisation's prefix still refused", f.mallory, "POST", "/organisations/" + f.evil + "/workitems", map[string]any{"type_id": defect, "title": "x"}, 400, nil},
	})
}

// TestSyncDuplicateSignaturesShown: two signatures of one person on one
// talk, as an exchange keeps them when two offices recorded them apart
// (db.TestSyncConvergesProperty), are both in the talk's answer, the
// second naming the first; another organisation's talk is not reachable.
func TestSyncDuplicateSignaturesShown(t *testing.T) {
	t.Parallel()
	f := newOrgFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	talk := e.must(201, f.alice, "POST", acme+"/toolboxes", map[string]any{"title": "Working at height"}).obj(t)["id"].(string)
	tid, _ := db.ParseID(talk)
	org, _ := db.ParseID(f.acme)
	first, second := e.store.IDs.Next(), e.store.IDs.Next()
	if err := e.store.InTxSQL(t.Context(), func(tx *sql.Tx, q *db.Queries) error {
		_, err := tx.Exec(`INSERT INTO toolbox_users (id, organisation_id, toolbox_id, user_id, first_name, last_name, signed_at, signed_method, duplicate_of)
			VALUES (?, ?, ?, ?, 'Alice', 'A', '2026-11-28T08:00:00.000Z', 'app', NULL), (?, ?, ?, ?, 'Alice', 'A', '2026-11-28T09:00:00.000Z', 'app', ?)`,
			first, int64(org), int64(tid), f.alice.id, second, int64(org), int64(tid), f.alice.id, first)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	e.run(t, []scenario{
		{"both signatures, the second flagged", f.alice, "GET", "/toolboxes/" + talk, nil, 200, func(t *testing.T, r *testResponse) {
			users, _ := r.obj(t)["users"].([]any)
			if len(users) != 2 {
				t.Fatalf("got %v", users)
			}
			a, b := users[0].(map[string]any), users[1].(map[string]any)
			if a["duplicate_of"] != nil || b["duplicate_of"] != fmt.Sprint(first) {
				t.Errorf("duplicate_of %v, %v", a["duplicate_of"], b["duplicate_of"])
			}
		}},
		{"another organisation", f.mallory, "GET", "/toolboxes/" + talk, nil, 403, nil},
	})
}

// TestSyncAccessUndo: an access decision (as the hub records it when two
// offices changed someone's access opposite ways: db.TestSyncAccessDecisionsUndo)
// is listed with the person and roles named, and only the organisation's
// owner may undo it, which makes the change that lost (here bob, removed at
// one office while another gave him a role, is a member with the role
// again), settles it as undone and is audited; a key given twice, a decision
// settled or undone already, or one whose change can no longer be made is
// refused in words, and another organisation's decision is never reached.
func TestSyncAccessUndo(t *testing.T) {
	t.Parallel()
	f := newOrgFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	role := e.must(201, f.alice, "POST", acme+"/roles", map[string]any{"name": "Site lead"}).obj(t)["id"].(string)
	roleID, _ := db.ParseID(role)
	e.must(204, f.alice, "DELETE", acme+"/members/"+f.bob.ID, nil)
	insert := func(orgID, kind, decision string, person int64, undo string) string {
		id, tbl := e.store.IDs.Next(), "member_roles"
		if kind == "unique" {
			tbl = "projects"
		}
		org, _ := db.ParseID(orgID)
		if err := e.store.InTxSQL(t.Context(), func(tx *sql.Tx, q *db.Queries) error {
			_, err := tx.Exec(`INSERT INTO sync_conflicts (id, organisation_id, kind, tbl, col, row_id, other_id, value, renamed_to, created_at, undo)
				VALUES (?, ?, ?, ?, ?, ?, 0, '', '', '2026-11-28T00:00:00.000Z', ?)`, id, int64(org), kind, tbl, decision, person, undo)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return fmt.Sprint(id)
	}
	bobBack := insert(f.acme, "access", db.DecisionRemovalOverRole, f.bob.id, fmt.Sprintf(`{"member":true,"roles":[%d]}`, int64(roleID)))
	gone := insert(f.acme, "access", db.DecisionRemovalOverRole, f.bob.id, `{"member":true,"roles":[123456789]}`)
	settled := insert(f.acme, "access", db.DecisionBanOverLift, f.bob.id, `{"unban":true}`)
	code := insert(f.acme, "unique", "code", 11, "")
	theirs := insert(f.evil, "access", db.DecisionRemovalOverRole, f.mallory.id, `{"member":true}`)
	undo := func(id string) string { return acme + "/sync-conflicts/" + id + "/undo" }
	e.must(200, f.alice, "POST", acme+"/sync-conflicts/"+settled+"/settle", nil)
	e.grantUser(f.acme, f.pen, ManageOrganisation)
	e.run(t, []scenario{
		{"listed with the person and the role named", f.alice, "GET", acme + "/sync-conflicts?$filter=settled_at%20eq%20null", nil, 200, func(t *testing.T, r *testResponse) {
			for _, c := range r.arr(t) {
				if c["id"] != bobBack {
					continue
				}
				a, _ := c["access"].(map[string]any)
				if c["kind"] != "access" || c["record_type"] != "access" || c["field"] != db.DecisionRemovalOverRole || c["undone"] != false ||
					a == nil || a["person_name"] != "bob Tester" || fmt.Sprint(a["roles"]) != "[Site lead]" {
					t.Errorf("got %v", c)
				}
				return
			}
			t.Error("the decision is not listed")
		}},
		{"a manager who is not the owner", f.pen, "POST", undo(bobBack), nil, 403, nil},
		{"a member", f.bob, "POST", undo(bobBack), nil, 403, nil},
		{"another organisation's owner", f.mallory, "POST", undo(bobBack), nil, 403, nil},
		{"another organisation's decision through this one", f.alice, "POST", undo(theirs), nil, 404, nil},
		{"absent", f.alice, "POST", undo("123456789"), nil, 404, nil},
		{"not a snowflake", f.alice, "POST", undo("abc"), nil, 400, nil},
		{"no token", nil, "POST", undo(bobBack), nil, 401, nil},
		{"a code given twice is settled, not undone", f.alice, "POST", undo(code), nil, 409, wantMessage("Only a decision about someone's access can be undone; this one can only be settled.")},
		{"settled already", f.alice, "POST", undo(settled), nil, 409, wantMessage("This decision was marked settled already; to give the access now, use Members.")},
		{"the role was deleted since", f.alice, "POST", undo(gone), nil, 409, wantMessage("This decision cannot be undone: the role was deleted since.")},
		{"bob is not a member after the refused undo", f.alice, "GET", acme + "/members/" + f.bob.ID, nil, 404, nil},
		{"the owner undoes", f.alice, "POST", undo(bobBack), map[string]any{}, 200, func(t *testing.T, r *testResponse) {
			if o := r.obj(t); o["undone"] != true || o["settled_by"] != f.alice.ID || o["settled_at"] == nil {
				t.Errorf("got %v", o)
			}
		}},
		{"bob is a member with the role again", f.alice, "GET", acme + "/members/" + f.bob.ID, nil, 200, func(t *testing.T, r *testResponse) {
			roles, _ := r.obj(t)["roles"].([]any)
			if len(roles) != 1 || fmt.Sprint(roles[0]) != role && fmt.Sprint(roles[0].(map[string]any)["id"]) != role {
				t.Errorf("roles %v, want the role given back", roles)
			}
		}},
		{"undone already", f.alice, "POST", undo(bobBack), nil, 409, wantMessage("This decision was undone already.")},
		{"the undo is in the audit trail", f.alice, "GET", acme + "/audit-log?action=POST%20/organisations/:id/sync-conflicts/:conflict/undo", nil, 200, func(t *testing.T, r *testResponse) {
			if l := r.arr(t); len(l) != 1 || l[0]["actor_id"] != f.alice.ID {
				t.Errorf("got %v", l)
			}
		}},
		{"the other organisation's decision is untouched", f.mallory, "GET", "/organisations/" + f.evil + "/sync-conflicts", nil, 200, func(t *testing.T, r *testResponse) {
			if l := r.arr(t); len(l) != 1 || l[0]["settled_at"] != nil {
				t.Errorf("got %v", l)
			}
		}},
	})
}
