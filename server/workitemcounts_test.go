package server

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestWorkItemCounts: after a random sequence of creations, status changes,
// moves between projects, milestones, types and asset groups, and deletes,
// the kept counts on projects, milestones, documents and asset groups and the
// work_item_types_count entries equal counts recomputed from scratch.
func TestWorkItemCounts(t *testing.T) {
	t.Parallel()
	f := newWIFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	oid := parseTestID(t, f.acme)
	var groups []string
	for i := range 2 {
		id := e.store.IDs.Next()
		typeID := e.store.IDs.Next()
		if _, err := e.write(`INSERT INTO asset_types(id, organisation_id, ephemerality, name, created_at) VALUES (?, ?, 2, ?, ?)`,
			typeID, oid, fmt.Sprint("T", i), e.srv.nowText()); err != nil {
			t.Fatal(err)
		}
		if _, err := e.write(`INSERT INTO asset_groups(id, organisation_id, type_id, ephemerality, name, normalised_name, created_at, created_by, updated_at, updated_by)
			VALUES (?, ?, ?, 2, ?, ?, ?, ?, ?, ?)`, id, oid, typeID, fmt.Sprint("G", i), fmt.Sprint("g", i), e.srv.nowText(), f.alice.id, e.srv.nowText(), f.alice.id); err != nil {
			t.Fatal(err)
		}
		groups = append(groups, fmt.Sprint(id))
	}
	var docs []any
	for _, title := range []string{"Spec A", "Spec B"} {
		docs = append(docs, e.must(201, f.alice, "POST", "/documents", map[string]any{"organisation_id": f.acme, "title": title}).obj(t)["id"].(string))
	}
	rng := rand.New(rand.NewPCG(14, 14))
	pick := func(options ...any) any { return options[rng.IntN(len(options))] }
	// place is a random project with one of its milestones, or neither.
	place := func(b map[string]any) {
		switch rng.IntN(4) {
		case 0:
			b["project_id"], b["milestone_id"] = nil, nil
		case 1:
			b["project_id"], b["milestone_id"] = f.project, pick(nil, f.milestone)
		case 2:
			b["project_id"], b["milestone_id"] = f.other, pick(nil, f.otherMilestone)
		default:
			b["project_id"], b["milestone_id"] = f.project, f.milestone
		}
	}
	var items []string
	for i := range 150 {
		switch op := rng.IntN(10); {
		case op < 4 || len(items) == 0:
			b := map[string]any{"type_id": pick(f.task, f.defect), "title": fmt.Sprint("Item ", i),
				"status": pick("open", "open", "closed"), "asset_group_id": pick(nil, groups[0], groups[1]),
				"document_id": pick(nil, docs[0], docs[1])}
			place(b)
			items = append(items, e.must(201, f.alice, "POST", acme+"/workitems", b).obj(t)["id"].(string))
		case op < 9:
			b := map[string]any{}
			for range 1 + rng.IntN(3) {
				switch rng.IntN(5) {
				case 0:
					b["status"] = pick("open", "closed")
				case 4:
					b["document_id"] = pick(nil, docs[0], docs[1])
				case 1:
					place(b)
				case 2:
					b["type_id"] = pick(f.task, f.defect)
				default:
					b["asset_group_id"] = pick(nil, groups[0], groups[1])
				}
			}
			e.must(200, f.alice, "PATCH", "/workitems/"+items[rng.IntN(len(items))], b)
		default: // no endpoint deletes work items; the triggers must still hold
			// (asset groups are counted by the handlers: leave the group first)
			j := rng.IntN(len(items))
			e.must(200, f.alice, "PATCH", "/workitems/"+items[j], map[string]any{"asset_group_id": nil})
			if _, err := e.write(`DELETE FROM work_items WHERE id = ?`, items[j]); err != nil {
				t.Fatal(err)
			}
			items = append(items[:j], items[j+1:]...)
		}
	}
	ctx := context.Background()
	for _, table := range []struct{ name, column string }{
		{"projects", "project_id"}, {"project_milestones", "milestone_id"}, {"asset_groups", "asset_group_id"},
	} {
		var bad, checked int
		err := e.store.Reader.QueryRowContext(ctx, `SELECT count(*), sum(s.open_work_item_count <> (SELECT count(*) FROM work_items w WHERE w.`+table.column+` = s.id AND w.status = 'open')
			OR s.closed_work_item_count <> (SELECT count(*) FROM work_items w WHERE w.`+table.column+` = s.id AND w.status = 'closed'))
			FROM `+table.name+` s WHERE s.organisation_id = ?`, oid).Scan(&checked, &bad)
		if err != nil || bad != 0 || checked == 0 {
			t.Fatalf("%s: %d of %d rows with wrong counts (err %v)", table.name, bad, checked, err)
		}
	}
	var mismatches int
	err := e.store.Reader.QueryRowContext(ctx, `
		WITH truth AS (
			SELECT scope, type_id, sum(status = 'open') AS o, sum(status = 'closed') AS c FROM (
				SELECT project_id AS scope, type_id, status FROM work_items WHERE project_id IS NOT NULL
				UNION ALL SELECT milestone_id, type_id, status FROM work_items WHERE milestone_id IS NOT NULL
				UNION ALL SELECT document_id, type_id, status FROM work_items WHERE document_id IS NOT NULL)
			GROUP BY scope, type_id),
		kept AS (SELECT scope_id AS scope, type_id, open_count AS o, closed_count AS c FROM work_item_type_counts
			WHERE open_count <> 0 OR closed_count <> 0)
		SELECT count(*) FROM (SELECT * FROM truth EXCEPT SELECT * FROM kept
			UNION ALL SELECT * FROM kept EXCEPT SELECT * FROM truth)`).Scan(&mismatches)
	if err != nil || mismatches != 0 {
		t.Fatalf("work_item_types_count: %d mismatches (err %v)", mismatches, err)
	}
	// The objects show the kept counts.
	var open, closed int64
	if err := e.store.Reader.QueryRowContext(ctx, `SELECT sum(status = 'open'), sum(status = 'closed') FROM work_items
		WHERE milestone_id = ? AND type_id = ?`, f.milestone, f.task).Scan(&open, &closed); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/milestones/" + f.milestone, "/projects/" + f.project} {
		got := e.must(200, f.bob, "GET", path, nil).obj(t)["work_item_types_count"].(map[string]any)
		entry, _ := got[f.task].(map[string]any)
		if path[1] == 'm' && (entry == nil || entry["open_count"] != float64(open) || entry["closed_count"] != float64(closed)) {
			t.Fatalf("%s work_item_types_count %v, want task %d open %d closed", path, got, open, closed)
		}
		if len(got) == 0 {
			t.Fatalf("%s has no work_item_types_count", path)
		}
	}
	for _, doc := range docs {
		var open, closed int64
		if err := e.store.Reader.QueryRowContext(ctx, `SELECT count(*) FILTER (WHERE status = 'open'), count(*) FILTER (WHERE status = 'closed')
			FROM work_items WHERE document_id = ?`, doc).Scan(&open, &closed); err != nil {
			t.Fatal(err)
		}
		d := e.must(200, f.alice, "GET", "/documents/"+doc.(string), nil).obj(t)
		if d["open_work_item_count"] != float64(open) || d["closed_work_item_count"] != float64(closed) || open+closed == 0 {
			t.Fatalf("document counts %v/%v, want %d/%d", d["open_work_item_count"], d["closed_work_item_count"], open, closed)
		}
	}
	ms := e.must(200, f.bob, "GET", "/projects/"+f.project+"/milestones", nil).arr(t)
	if entry := ms[0]["work_item_types_count"].(map[string]any)[f.task].(map[string]any); entry["open_count"] != float64(open) {
		t.Fatalf("milestone list entry %v, want %d open", entry, open)
	}
}

// TestUserWorkItemsKept: after a random sequence of assignments, schedules
// with invitations (declined, checked in, removed), schedule and work item
// deletions and changes to the copied columns, user_work_items (what GET
// /users/@me/work-items reads) equals the membership recomputed from the
// source tables, and the list answers exactly the caller's work items.
func TestUserWorkItemsKept(t *testing.T) {
	t.Parallel()
	f := newWIFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	carol := e.user("carol")
	e.addMember(f.acme, carol)
	people := []*testUser{f.alice, f.bob, carol}
	rng := rand.New(rand.NewPCG(23, 23))
	someone := func() *testUser { return people[rng.IntN(len(people))] }
	assignees := func() []string {
		var ids []string
		for _, u := range people {
			if rng.IntN(2) == 0 {
				ids = append(ids, fmt.Sprint(u.id))
			}
		}
		return ids
	}
	type schedule struct{ id, item string }
	var items []string
	var schedules []schedule
	for i := range 120 {
		switch op := rng.IntN(9); {
		case op == 0 || len(items) == 0:
			items = append(items, e.must(201, f.alice, "POST", acme+"/workitems", map[string]any{"type_id": f.task,
				"title": fmt.Sprint("Item ", i), "assignee_ids": assignees()}).obj(t)["id"].(string))
		case op == 1:
			b := map[string]any{"assignee_ids": assignees()}
			if rng.IntN(2) == 0 {
				b["status"] = []string{"open", "closed"}[rng.IntN(2)]
			}
			if rng.IntN(2) == 0 {
				b["start_at"] = fmt.Sprintf("2026-0%d-01T00:00:00Z", 1+rng.IntN(9))
				b["type_id"] = []string{f.task, f.defect}[rng.IntN(2)]
				b["project_id"] = []any{nil, f.project}[rng.IntN(2)]
			}
			e.must(200, f.alice, "PATCH", "/workitems/"+items[rng.IntN(len(items))], b)
		case op == 2:
			item := items[rng.IntN(len(items))]
			var invitees []string
			for _, u := range people {
				if rng.IntN(2) == 0 {
					invitees = append(invitees, fmt.Sprint(u.id))
				}
			}
			sc := e.must(201, f.alice, "POST", "/workitems/"+item+"/schedules", map[string]any{
				"scheduled_start_at": "2026-05-01T08:00:00Z", "scheduled_finish_at": "2026-05-01T09:00:00Z", "invitee_ids": invitees}).obj(t)
			schedules = append(schedules, schedule{sc["id"].(string), item})
		case op == 3 && len(schedules) > 0:
			sc := schedules[rng.IntN(len(schedules))]
			u := someone()
			e.do(u, "POST", "/schedules/"+sc.id+[]string{"/decline", "/check-in"}[rng.IntN(2)], map[string]any{})
		case op == 4 && len(schedules) > 0:
			sc := schedules[rng.IntN(len(schedules))]
			u := someone()
			if rng.IntN(2) == 0 {
				e.do(f.alice, "PUT", fmt.Sprintf("/schedules/%s/invitees/%d", sc.id, u.id), nil)
			} else {
				e.do(f.alice, "DELETE", fmt.Sprintf("/schedules/%s/invitees/%d", sc.id, u.id), nil)
			}
		case op == 5 && len(schedules) > 0:
			j := rng.IntN(len(schedules))
			e.must(204, f.alice, "DELETE", "/schedules/"+schedules[j].id, nil)
			schedules = append(schedules[:j], schedules[j+1:]...)
		case op == 6 && len(items) > 1:
			// No endpoint deletes work items; the triggers must still hold.
			j := rng.IntN(len(items))
			if _, err := e.write(`DELETE FROM schedules WHERE work_item_id = ?`, items[j]); err != nil {
				t.Fatal(err)
			}
			if _, err := e.write(`DELETE FROM work_items WHERE id = ?`, items[j]); err != nil {
				t.Fatal(err)
			}
			kept := schedules[:0]
			for _, sc := range schedules {
				if sc.item != items[j] {
					kept = append(kept, sc)
				}
			}
			schedules = kept
			items = append(items[:j], items[j+1:]...)
		}
	}
	var mismatches, rows int
	err := e.store.Reader.QueryRowContext(context.Background(), `
		WITH truth AS (
			SELECT m.user_id, w.id, w.organisation_id, w.status, w.type_id, w.project_id, w.document_id, w.fleet_id,
				w.location_id, w.asset_group_id, w.start_at, w.finish_at, w.created_at, w.closed_at
			FROM (SELECT user_id, work_item_id FROM work_item_assignees
				UNION SELECT si.user_id, sc.work_item_id FROM schedule_invitees si JOIN schedules sc ON sc.id = si.schedule_id
				WHERE si.status <> 'declined' AND sc.work_item_id IS NOT NULL) m
			JOIN work_items w ON w.id = m.work_item_id),
		kept AS (SELECT * FROM user_work_items)
		SELECT (SELECT count(*) FROM (SELECT * FROM truth EXCEPT SELECT * FROM kept
			UNION ALL SELECT * FROM kept EXCEPT SELECT * FROM truth)), (SELECT count(*) FROM kept)`).Scan(&mismatches, &rows)
	if err != nil || mismatches != 0 || rows == 0 {
		t.Fatalf("user_work_items: %d mismatches in %d rows (err %v)", mismatches, rows, err)
	}
	// The sequence must have reached each source of membership.
	var invitedOnly, declined int
	if err := e.store.Reader.QueryRowContext(context.Background(), `SELECT
		(SELECT count(*) FROM user_work_items u WHERE NOT EXISTS (SELECT 1 FROM work_item_assignees a WHERE a.work_item_id = u.work_item_id AND a.user_id = u.user_id)),
		(SELECT count(*) FROM schedule_invitees WHERE status = 'declined')`).Scan(&invitedOnly, &declined); err != nil || invitedOnly == 0 || declined == 0 {
		t.Fatalf("the sequence left %d invitation-only memberships and %d declines (err %v)", invitedOnly, declined, err)
	}
	for _, u := range people {
		var want int
		if err := e.store.Reader.QueryRowContext(context.Background(), `SELECT count(*) FROM user_work_items WHERE user_id = ?`, u.id).Scan(&want); err != nil {
			t.Fatal(err)
		}
		r := e.must(200, u, "GET", "/users/@me/work-items?$top=500", nil)
		if got := len(r.arr(t)); got != want || r.Header.Get("X-Total-Count") != fmt.Sprint(want) {
			t.Fatalf("%d: list has %d (X-Total-Count %s), want %d", u.id, got, r.Header.Get("X-Total-Count"), want)
		}
	}
}
