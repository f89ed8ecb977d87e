package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"testing"
)

// rawAssetGroup makes a permanent asset group in the store (the asset
// group endpoints belong to the fleets area) and returns its id.
func rawAssetGroup(t *testing.T, e *testEnv, orgID string, creator *testUser) string {
	t.Helper()
	oid := parseTestID(t, orgID)
	id, typeID := e.store.IDs.Next(), e.store.IDs.Next()
	if _, err := e.write(`INSERT INTO asset_types(id, organisation_id, ephemerality, name, created_at) VALUES (?, ?, 2, 'T', ?)`,
		typeID, oid, e.srv.nowText()); err != nil {
		t.Fatal(err)
	}
	if _, err := e.write(`INSERT INTO asset_groups(id, organisation_id, type_id, ephemerality, name, normalised_name, created_at, created_by, updated_at, updated_by)
		VALUES (?, ?, ?, 2, 'G', 'g', ?, ?, ?, ?)`, id, oid, typeID, e.srv.nowText(), creator.id, e.srv.nowText(), creator.id); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprint(id)
}

func wantStatusCount(total, header string) func(t *testing.T, r *testResponse) {
	return func(t *testing.T, r *testResponse) {
		t.Helper()
		if r.Header.Get("X-Total-Count") != total || r.Header.Get("X-Status-Count") != header {
			t.Fatalf("X-Total-Count %q X-Status-Count %q, want %s and %s", r.Header.Get("X-Total-Count"), r.Header.Get("X-Status-Count"), total, header)
		}
	}
}

func TestUserWorkItems(t *testing.T) {
	t.Parallel()
	f := newWIFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	bobco := e.org(f.bob, "Bobco")
	bobType := e.must(201, f.bob, "POST", "/organisations/"+bobco+"/work-item-types", map[string]any{"name": "Chore"}).obj(t)["id"].(string)
	group, asset := rawAssetGroup(t, e, f.acme, f.alice), rawAssetGroup(t, e, f.acme, f.alice)
	if _, err := e.write(`INSERT INTO asset_group_members(group_id, asset_id, organisation_id, position) VALUES (?, ?, ?, 0)`, group, asset, parseTestID(t, f.acme)); err != nil {
		t.Fatal(err)
	}
	mk := func(u *testUser, org string, b map[string]any) string {
		return e.must(201, u, "POST", "/organisations/"+org+"/workitems", b).obj(t)["id"].(string)
	}
	bob := []string{f.bob.ID}
	a1 := mk(f.alice, f.acme, map[string]any{"type_id": f.task, "title": "A1", "assignee_ids": bob, "project_id": f.project,
		"location_id": f.location, "start_at": "2026-12-01T08:00:00Z", "finish_at": "2026-12-03T08:00:00Z", "asset_group_id": group})
	a2 := mk(f.alice, f.acme, map[string]any{"type_id": f.defect, "title": "A2", "assignee_ids": bob, "status": "closed", "asset_group_id": asset})
	a3 := mk(f.alice, f.acme, map[string]any{"type_id": f.task, "title": "A3 invited"})
	mk(f.alice, f.acme, map[string]any{"type_id": f.task, "title": "A4 not bob's"}) // never listed for bob
	a5 := mk(f.alice, f.acme, map[string]any{"type_id": f.task, "title": "A5 declined"})
	b1 := mk(f.bob, bobco, map[string]any{"type_id": bobType, "title": "B1", "assignee_ids": bob})
	mk(f.mallory, f.evil, map[string]any{"type_id": f.evilType, "title": "E1", "assignee_ids": []string{f.mallory.ID}})
	slot := func(extra map[string]any) map[string]any {
		b := map[string]any{"scheduled_start_at": "2026-12-05T07:00:00Z", "scheduled_finish_at": "2026-12-05T08:00:00Z"}
		for k, v := range extra {
			b[k] = v
		}
		return b
	}
	e.run(t, []scenario{
		{"schedule: member without CREATE_WORKITEMS", f.bob, "POST", "/workitems/" + a3 + "/schedules", slot(nil), 403, nil},
		{"schedule: other organisation", f.mallory, "POST", "/workitems/" + a3 + "/schedules", slot(nil), 403, nil},
		{"schedule: absent work item", f.alice, "POST", "/workitems/123456789/schedules", slot(nil), 404, nil},
		{"schedule: bad time", f.alice, "POST", "/workitems/" + a3 + "/schedules", slot(map[string]any{"scheduled_start_at": "soon"}), 400, wantField("scheduled_start_at")},
		{"schedule: invitee of another organisation", f.alice, "POST", "/workitems/" + a3 + "/schedules", slot(map[string]any{"invitee_ids": []string{f.mallory.ID}}), 400, wantField("invitee_ids")},
		{"schedule: invites bob", f.alice, "POST", "/workitems/" + a3 + "/schedules", slot(map[string]any{"invitee_ids": bob}), 201, wantKey("work_item_id", a3)},
	})
	declined := e.must(201, f.alice, "POST", "/workitems/"+a5+"/schedules", slot(map[string]any{"invitee_ids": bob})).obj(t)["id"].(string)
	e.must(200, f.bob, "POST", "/schedules/"+declined+"/decline", map[string]any{})
	ids := func(want ...string) func(t *testing.T, r *testResponse) {
		return func(t *testing.T, r *testResponse) {
			t.Helper()
			var got []string
			for _, w := range r.arr(t) {
				got = append(got, w["id"].(string))
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("work items %v, want %v", got, want)
			}
		}
	}
	both := func(a, b func(t *testing.T, r *testResponse)) func(t *testing.T, r *testResponse) {
		return func(t *testing.T, r *testResponse) { a(t, r); b(t, r) }
	}
	me := "/users/@me/work-items"
	q := func(s string) string { return me + "?" + s }
	e.run(t, []scenario{
		{"assigned and invited, in every organisation", f.bob, "GET", me, nil, 200, both(ids(a1, a2, a3, b1), wantStatusCount("4", "open=3,closed=1"))},
		{"the schedule shows with its invitees", f.bob, "GET", "/workitems/" + a3, nil, 200, func(t *testing.T, r *testResponse) {
			scs := r.obj(t)["schedules"].([]any)
			if len(scs) != 1 || len(scs[0].(map[string]any)["invitees"].([]any)) != 1 {
				t.Fatalf("schedules %v", scs)
			}
		}},
		{"the owner sees only hers", f.alice, "GET", me, nil, 200, wantLen(0)},
		{"mallory sees only hers", f.mallory, "GET", me, nil, 200, wantLen(1)},
		{"by organisation", f.bob, "GET", q("organisation=" + f.acme), nil, 200, both(ids(a1, a2, a3), wantStatusCount("3", "open=2,closed=1"))},
		{"by type", f.bob, "GET", q("type=" + f.defect), nil, 200, ids(a2)},
		{"by work item", f.bob, "GET", q("work_item=" + a1), nil, 200, ids(a1)},
		{"by project", f.bob, "GET", q("project=" + f.project), nil, 200, ids(a1)},
		{"by location", f.bob, "GET", q("location=" + f.location), nil, 200, ids(a1)},
		{"by status", f.bob, "GET", q("status=closed"), nil, 200, both(ids(a2), wantStatusCount("1", "open=0,closed=1"))},
		{"by asset group", f.bob, "GET", q("asset_group=" + group), nil, 200, ids(a1)},
		{"by asset group with its assets", f.bob, "GET", q("asset_group=" + group + "&include_assets=true"), nil, 200, ids(a1, a2)},
		{"by fleet", f.bob, "GET", q("fleet=123456789"), nil, 200, ids()},
		{"by document", f.bob, "GET", q("document=123456789"), nil, 200, ids()},
		{"start_date", f.bob, "GET", q("start_date=2026-12-01"), nil, 200, ids(a1)},
		{"finish_date", f.bob, "GET", q("finish_date=" + url.QueryEscape("2026-12-02T00:00:00Z")), nil, 200, ids()},
		{"closed since", f.bob, "GET", q("closed=2026-01-01"), nil, 200, ids(a2)},
		{"opened since the future", f.bob, "GET", q("open=2030-01-01"), nil, 200, ids()},
		{"OData status", f.bob, "GET", q("$filter=" + url.QueryEscape("status eq 'open'")), nil, 200, both(ids(a1, a3, b1), wantStatusCount("3", "open=3,closed=0"))},
		{"OData type_id", f.bob, "GET", q("$filter=" + url.QueryEscape("type_id eq '"+bobType+"'")), nil, 200, ids(b1)},
		{"OData start_at", f.bob, "GET", q("$filter=" + url.QueryEscape("start_at lt 2027-01-01T00:00:00Z")), nil, 200, ids(a1)},
		{"paging keeps the counts", f.bob, "GET", q("$top=2&$skip=1"), nil, 200, both(ids(a2, a3), wantStatusCount("4", "open=3,closed=1"))},
		{"bad id filter", f.bob, "GET", q("project=abc"), nil, 400, wantField("project")},
		{"bad status", f.bob, "GET", q("status=done"), nil, 400, wantField("status")},
		{"bad include_assets", f.bob, "GET", q("include_assets=sometimes"), nil, 400, wantField("include_assets")},
		{"bad date", f.bob, "GET", q("open=yesterday"), nil, 400, wantField("open")},
		{"OData on an unknown field", f.bob, "GET", q("$filter=" + url.QueryEscape("title eq 'x'")), nil, 400, wantField("title")},
		{"no token", nil, "GET", me, nil, 401, nil},
	})
	// Leaving an organisation takes its work items off the list.
	e.must(204, f.alice, "DELETE", acme+"/members/"+f.bob.ID, nil)
	e.run(t, []scenario{
		{"after leaving", f.bob, "GET", me, nil, 200, both(ids(b1), wantStatusCount("1", "open=1,closed=0"))},
	})
}

func TestWorkItemSubscriptions(t *testing.T) {
	t.Parallel()
	f := newWIFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	conf, _ := json.Marshal(map[string]string{"url": "https://hooks.example.invalid/x"})
	e.must(201, f.alice, "POST", acme+"/integrations", map[string]any{"item_type": "work_item", "provider": "github", "configuration": string(conf)})
	w := e.must(201, f.alice, "POST", acme+"/workitems", map[string]any{"type_id": f.defect, "title": "Leak"}).obj(t)["id"].(string)
	path, mine := "/workitems/"+w+"/subscription", "/users/@me/work-items/"+w+"/subscriptions"
	outbox := func() []string {
		rows, err := e.store.Reader.QueryContext(context.Background(), `SELECT recipient || ' ' || subject FROM outbox WHERE subject LIKE 'Work item%' ORDER BY id`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var s string
			rows.Scan(&s)
			out = append(out, s)
		}
		return out
	}
	e.run(t, []scenario{
		{"bob follows", f.bob, "PUT", path, nil, 200, func(t *testing.T, r *testResponse) {
			if o := r.obj(t); o["work_item_id"] != w || o["user"].(map[string]any)["id"] != f.bob.ID {
				t.Fatalf("subscription %v", o)
			}
		}},
		{"following twice is once", f.bob, "PUT", path, nil, 200, nil},
		{"alice follows", f.alice, "PUT", path, nil, 200, nil},
		{"other organisation cannot follow", f.mallory, "PUT", path, nil, 403, nil},
		{"pending member cannot follow", f.pen, "PUT", path, nil, 403, nil},
		{"absent work item", f.bob, "PUT", "/workitems/123456789/subscription", nil, 404, nil},
		{"bob's subscriptions", f.bob, "GET", mine, nil, 200, wantLen(1)},
		{"other organisation cannot list", f.mallory, "GET", mine, nil, 403, nil},
		{"absent work item's subscriptions", f.bob, "GET", "/users/@me/work-items/123456789/subscriptions", nil, 404, nil},
		{"alice closes", f.alice, "PATCH", "/workitems/" + w, map[string]any{"status": "closed"}, 200, nil},
	})
	if got := outbox(); len(got) != 1 || got[0] != "bob@example.com Work item D-001 is now closed" {
		t.Fatalf("outbox %v, want one mail to bob (not to alice, who closed it)", got)
	}
	e.run(t, []scenario{
		{"a title change mails nobody", f.alice, "PATCH", "/workitems/" + w, map[string]any{"title": "Big leak"}, 200, nil},
		{"other organisation cannot unfollow", f.mallory, "DELETE", path, nil, 403, nil},
		{"bob unfollows", f.bob, "DELETE", path, nil, 204, nil},
		{"unfollowing again is fine", f.bob, "DELETE", path, nil, 204, nil},
		{"none left", f.bob, "GET", mine, nil, 200, wantLen(0)},
		{"alice reopens", f.alice, "PATCH", "/workitems/" + w, map[string]any{"status": "open"}, 200, nil},
	})
	if got := outbox(); len(got) != 1 {
		t.Fatalf("outbox %v, want still one mail", got)
	}
	var events []string
	rows, err := e.store.Reader.QueryContext(context.Background(), `SELECT event FROM integration_deliveries ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var s string
		rows.Scan(&s)
		events = append(events, s)
	}
	if fmt.Sprint(events) != "[work_item.created work_item.closed work_item.updated work_item.updated]" {
		t.Fatalf("events %v", events)
	}
}
