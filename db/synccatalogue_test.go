package db

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"
)

// TestSyncCatalogueCoversSchema: every table the migrations build declares
// a sync policy (a new table must say whether and how it travels), the
// catalogue names no table that does not exist, a replicated table has a
// merge rule, and a derived table has a rebuild.
func TestSyncCatalogueCoversSchema(t *testing.T) {
	t.Parallel()
	s := openSyncStore(t, filepath.Join(t.TempDir(), "cat.db"), 1, nil)
	defer s.Close()
	rows, err := s.Reader.Query(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`)
	if err != nil {
		t.Fatal(err)
	}
	tables := map[string]bool{}
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		tables[name] = true
	}
	rows.Close()
	if len(tables) < 80 {
		t.Fatalf("only %d tables found", len(tables))
	}
	for name := range tables {
		p, ok := SyncCatalogue[name]
		if !ok {
			t.Errorf("table %s has no sync policy: add it to SyncCatalogue (db/synccatalogue.go)", name)
			continue
		}
		switch p.Policy {
		case Local:
		case Derived:
			if len(p.Rebuild) == 0 {
				t.Errorf("derived table %s has no rebuild", name)
			}
		case Replicated:
			if p.Rule < RulePlain || p.Rule > RuleFiles {
				t.Errorf("replicated table %s has no merge rule", name)
			}
		default:
			t.Errorf("table %s: policy %d is none of local, derived, replicated", name, p.Policy)
		}
	}
	for name := range SyncCatalogue {
		if !tables[name] {
			t.Errorf("the catalogue names %s, which no migration creates", name)
		}
	}
}

// TestSyncRebuildDerivedMatchesTriggers: after rows are written (the
// triggers keeping the derived tables and counts), wiping the derived state
// and running the rebuild gives back exactly what the triggers kept.
func TestSyncRebuildDerivedMatchesTriggers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openSyncStore(t, filepath.Join(t.TempDir(), "rebuild.db"), 1, nil)
	defer s.Close()
	const ts = `'2026-11-26T00:00:00.000Z'`
	seed := seedOrg + `
INSERT INTO users (id, email, created_at, updated_at) VALUES (2, 'b@example.com', ` + ts + `, ` + ts + `);
INSERT INTO projects (id, organisation_id, name, status, created_at, created_by) VALUES (101, 10, 'Tunnel', 'closed', ` + ts + `, 1);
INSERT INTO project_milestones (id, organisation_id, project_id, name, status, created_at, created_by) VALUES (200, 10, 100, 'M1', 'open', ` + ts + `, 1);
INSERT INTO work_item_types (id, organisation_id, name, colour, created_at) VALUES (300, 10, 'Defect', '', ` + ts + `);
INSERT INTO work_item_types (id, organisation_id, name, colour, created_at) VALUES (301, 10, 'Task', '', ` + ts + `);
`
	for i := 0; i < 12; i++ {
		status := []string{"open", "closed"}[i%2]
		project := []string{"100", "101", "NULL"}[i%3]
		milestone := "NULL"
		if project == "100" && i%4 == 0 {
			milestone = "200"
		}
		seed += fmt.Sprintf(`INSERT INTO work_items (id, organisation_id, type_id, number, formatted_number, title, status, project_id, milestone_id, created_at, created_by, updated_at, updated_by)
VALUES (%d, 10, %d, %d, 'W-%d', 'Item', '%s', %s, %s, %s, 1, %s, 1);
`, 400+i, 300+i%2, i, i, status, project, milestone, ts, ts)
	}
	seed += `
INSERT INTO work_item_assignees (work_item_id, user_id) VALUES (400, 1), (401, 2), (402, 1);
INSERT INTO schedules (id, organisation_id, work_item_id, scheduled_start_at, scheduled_finish_at, created_at, created_by, updated_at, updated_by) VALUES (500, 10, 403, ` + ts + `, ` + ts + `, ` + ts + `, 1, ` + ts + `, 1);
INSERT INTO schedule_invitees (schedule_id, user_id, status, updated_at) VALUES (500, 1, 'invited', ` + ts + `), (500, 2, 'declined', ` + ts + `);
UPDATE work_items SET status = 'closed' WHERE id = 400;
UPDATE work_items SET project_id = 101 WHERE id = 404;
DELETE FROM work_items WHERE id = 406;
UPDATE projects SET status = 'closed' WHERE id = 100;
`
	if err := s.InTxSQL(ctx, func(tx *sql.Tx, q *Queries) error {
		_, err := tx.Exec(seed)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	snapshot := func() map[string][][]any {
		out := map[string][][]any{}
		for name, query := range map[string]string{
			"project_status_counts": `SELECT organisation_id, status, n FROM project_status_counts WHERE n <> 0 ORDER BY 1, 2`,
			"work_item_type_counts": `SELECT scope_id, type_id, open_count, closed_count FROM work_item_type_counts WHERE open_count <> 0 OR closed_count <> 0 ORDER BY 1, 2`,
			"user_work_items":       `SELECT * FROM user_work_items ORDER BY 1, 2`,
			"projects":              `SELECT id, open_work_item_count, closed_work_item_count FROM projects ORDER BY id`,
			"project_milestones":    `SELECT id, open_work_item_count, closed_work_item_count FROM project_milestones ORDER BY id`,
			"access_versions":       `SELECT organisation_id FROM access_versions ORDER BY 1`,
		} {
			rows, err := s.Reader.Query(query)
			if err != nil {
				t.Fatal(err)
			}
			cols, _ := rows.Columns()
			for rows.Next() {
				vals := make([]any, len(cols))
				ptrs := make([]any, len(cols))
				for i := range vals {
					ptrs[i] = &vals[i]
				}
				if err := rows.Scan(ptrs...); err != nil {
					t.Fatal(err)
				}
				out[name] = append(out[name], vals)
			}
			rows.Close()
		}
		return out
	}
	before := snapshot()
	if len(before["user_work_items"]) != 4 || len(before["work_item_type_counts"]) == 0 {
		t.Fatalf("the seed did not exercise the triggers: %v", before)
	}
	var tagBefore int64
	if err := s.Reader.QueryRow(`SELECT tag FROM access_versions WHERE organisation_id = 10`).Scan(&tagBefore); err != nil {
		t.Fatal(err)
	}
	if err := s.InTxSQL(ctx, func(tx *sql.Tx, q *Queries) error {
		for _, stmt := range []string{`DELETE FROM project_status_counts`, `DELETE FROM work_item_type_counts`,
			`DELETE FROM user_work_items`, `UPDATE projects SET open_work_item_count = 99, closed_work_item_count = 99`,
			`UPDATE project_milestones SET open_work_item_count = 99, closed_work_item_count = 99`} {
			if _, err := tx.Exec(stmt); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.InTxSQL(ctx, func(tx *sql.Tx, q *Queries) error { return RebuildDerived(ctx, tx) }); err != nil {
		t.Fatal(err)
	}
	after := snapshot()
	for name := range before {
		if !reflect.DeepEqual(before[name], after[name]) {
			t.Errorf("%s rebuilt:\n%v\nthe triggers kept:\n%v", name, after[name], before[name])
		}
	}
	var tagAfter int64
	if err := s.Reader.QueryRow(`SELECT tag FROM access_versions WHERE organisation_id = 10`).Scan(&tagAfter); err != nil {
		t.Fatal(err)
	}
	if tagAfter == tagBefore {
		t.Error("the rebuild left the access tag: caches of access would not start again")
	}
}

// TestSyncDerivedColumnsAreKept: every derived column of a replicated table
// (never shipped) is kept on each node: by the triggers, by a recount after
// applying changes, or named as waiting for the sync of its inputs.
func TestSyncDerivedColumnsAreKept(t *testing.T) {
	t.Parallel()
	kept := map[string]string{}
	for _, c := range triggerKeptColumns {
		kept[c] = "triggers"
	}
	for _, r := range syncOrgRebuilds {
		for _, c := range r.Columns {
			kept[c] = "recount"
		}
	}
	for c := range laterDerivedColumns {
		kept[c] = "later"
	}
	declared := map[string]bool{}
	for name, p := range SyncCatalogue {
		for _, col := range p.DerivedColumns {
			c := name + "." + col
			declared[c] = true
			if kept[c] == "" {
				t.Errorf("derived column %s is kept by nothing after changes are applied", c)
			}
		}
	}
	for c := range kept {
		if !declared[c] {
			t.Errorf("%s is kept as derived but the catalogue does not declare it derived", c)
		}
	}
}
