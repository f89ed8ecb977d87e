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
