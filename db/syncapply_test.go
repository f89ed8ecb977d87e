package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"sync/atomic"
	"testing"
	"time"
)

// syncNode is one database in a sync test with a wall clock the test moves.
type syncNode struct {
	s   *Store
	now atomic.Int64 // unix milliseconds
}

func (n *syncNode) at(t time.Time) { n.now.Store(t.UnixMilli()) }

func (n *syncNode) clock() func() time.Time {
	return func() time.Time { return time.UnixMilli(n.now.Load()) }
}

func (n *syncNode) exec(t *testing.T, query string, args ...any) {
	t.Helper()
	if err := n.s.InTxSQL(context.Background(), func(tx *sql.Tx, q *Queries) error {
		_, err := tx.Exec(query, args...)
		return err
	}); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

// dump reads a query's rows as strings, for comparing two nodes.
func dump(t *testing.T, s *Store, query string) []string {
	t.Helper()
	rows, err := s.Reader.Query(query)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%v", vals))
	}
	return out
}

// exchange sends from one node to the other, in pages of pageSize, until
// the receiver lacks nothing of orgs. It returns how many entries were
// applied.
func exchange(t *testing.T, from, to *Store, orgs []int64, pageSize int) int {
	t.Helper()
	ctx := context.Background()
	total := 0
	for range 1000 {
		vector, err := to.SyncVector(ctx)
		if err != nil {
			t.Fatal(err)
		}
		page, err := from.SyncChangesFor(ctx, vector, orgs, pageSize)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			return total
		}
		for _, e := range page {
			if e.Org == nil && e.Table == "users" {
				continue // an account, checked by the tests
			}
			if e.Org == nil || *e.Org != orgs[0] {
				t.Fatalf("an entry of organisation %v left for a node paired for %v", e.Org, orgs)
			}
		}
		n, err := to.ApplySyncChanges(ctx, page, orgs)
		if err != nil {
			t.Fatal(err)
		}
		// The same page again changes nothing.
		again, err := to.ApplySyncChanges(ctx, page, orgs)
		if err != nil || again != 0 {
			t.Fatalf("the page applied twice: %d applied, %v", again, err)
		}
		total += n
	}
	t.Fatal("the exchange never ended")
	return 0
}

// TestSyncApplyBetweenTwoNodes: a hub and its clone, edited apart, then
// exchanging in small pages both ways: the same rows equal on both, per
// column the later edit kept, a delete winning over a later edit, the
// witness records of both kept, the derived counts right, a
// page applied twice changing nothing, and the rows of the organisation the
// clone is not paired for never leaving the hub.
func TestSyncApplyBetweenTwoNodes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	t0 := time.Date(2026, 11, 28, 8, 0, 0, 0, time.UTC)
	hub, site := &syncNode{}, &syncNode{}
	hub.at(t0)
	site.at(t0)
	hub.s = openSyncStore(t, filepath.Join(dir, "hub.db"), 1, hub.clock())
	defer hub.s.Close()
	const ts = `'2026-11-26T00:00:00.000Z'`
	hub.exec(t, seedOrg+`
INSERT INTO users (id, email, created_at, updated_at) VALUES (2, 'b@example.com', `+ts+`, `+ts+`);
INSERT INTO organisations (id, name, owned_by, created_at) VALUES (20, 'Foreign', 1, `+ts+`);
INSERT INTO projects (id, organisation_id, code, name, status, created_at, created_by) VALUES (101, 10, 'P2', 'Tunnel', 'open', `+ts+`, 1);
INSERT INTO projects (id, organisation_id, code, name, status, created_at, created_by) VALUES (102, 20, 'F1', 'Secret', 'open', `+ts+`, 1);
INSERT INTO work_item_types (id, organisation_id, name, colour, created_at) VALUES (300, 10, 'Defect', '', `+ts+`);
INSERT INTO work_items (id, organisation_id, type_id, number, formatted_number, title, status, project_id, created_at, created_by, updated_at, updated_by)
VALUES (400, 10, 300, 1, 'W-1', 'Crack', 'open', 100, `+ts+`, 1, `+ts+`, 1);`)

	// The clone: a copy of the hub's file with a node id of its own.
	clonePath := filepath.Join(dir, "site.db")
	if _, err := hub.s.Writer.ExecContext(ctx, `VACUUM INTO ?`, clonePath); err != nil {
		t.Fatal(err)
	}
	site.s = openSyncStore(t, clonePath, 2, site.clock())
	defer site.s.Close()
	if err := site.s.SyncRecordClonedLog(ctx); err != nil {
		t.Fatal(err)
	}
	cloned := hub.s.HLC()
	orgs := []int64{10}
	if n := exchange(t, hub.s, site.s, orgs, 3); n != 0 {
		t.Fatalf("a fresh clone was sent %d entries it holds", n)
	}

	// Apart: each edits, with its own clock.
	site.at(t0.Add(5 * time.Second))
	site.exec(t, `DELETE FROM projects WHERE id = 101`)
	hub.at(t0.Add(10 * time.Second))
	hub.exec(t, `UPDATE projects SET name = 'Hub name', readme = 'Hub readme' WHERE id = 100`)
	site.at(t0.Add(20 * time.Second))
	site.exec(t, `UPDATE projects SET name = 'Site name', description = 'Site description' WHERE id = 100`)
	hub.at(t0.Add(30 * time.Second))
	hub.exec(t, `UPDATE projects SET name = 'Renamed after the delete' WHERE id = 101`)
	site.exec(t, `INSERT INTO work_items (id, organisation_id, type_id, number, formatted_number, title, status, project_id, created_at, created_by, updated_at, updated_by)
VALUES (401, 10, 300, 2, 'W-2', 'Leak', 'closed', 100, `+ts+`, 1, `+ts+`, 1)`)
	witness := `INSERT INTO witness_records (id, organisation_id, object_type, object_id, user_id, first_name, last_name, email, signed_at)
VALUES (?, 10, 'work_item', 400, ?, 'Ann', 'Lee', 'a@example.com', ` + ts + `)`
	hub.exec(t, witness, 600, 1)
	site.exec(t, witness, 601, 2)
	// A milestone made on the site, its project's count kept as the
	// handler keeps it: the hub recounts after applying.
	site.exec(t, `INSERT INTO project_milestones (id, organisation_id, project_id, name, status, created_at, created_by) VALUES (200, 10, 100, 'M1', 'open', `+ts+`, 1)`)
	if err := site.s.InTx(ctx, func(q *Queries) error {
		return q.ProjectMilestoneCountsRefresh(ctx, ProjectMilestoneCountsRefreshParams{ID: 100, OrganisationID: 10})
	}); err != nil {
		t.Fatal(err)
	}
	// The foreign organisation changes on the hub only.
	hub.exec(t, `UPDATE organisations SET name = 'Foreign renamed' WHERE id = 20`)
	hub.exec(t, `INSERT INTO projects (id, organisation_id, code, name, status, created_at, created_by) VALUES (103, 20, 'F2', 'Also secret', 'open', `+ts+`, 1)`)

	// Exchanges both ways until quiet, in pages of two.
	for round := 0; ; round++ {
		n := exchange(t, site.s, hub.s, orgs, 2) + exchange(t, hub.s, site.s, orgs, 2)
		if n == 0 {
			break
		}
		if round > 5 {
			t.Fatal("the exchanges never quieten")
		}
	}

	for _, q := range []string{
		`SELECT * FROM projects WHERE organisation_id = 10 ORDER BY id`,
		`SELECT * FROM work_items ORDER BY id`,
		`SELECT * FROM witness_records ORDER BY id`,
		`SELECT * FROM organisations WHERE id = 10`,
		`SELECT * FROM project_status_counts WHERE organisation_id = 10 AND n <> 0 ORDER BY 2`,
		`SELECT * FROM work_item_type_counts ORDER BY 1, 2`,
	} {
		h, s := dump(t, hub.s, q), dump(t, site.s, q)
		if !reflect.DeepEqual(h, s) {
			t.Errorf("%s differs:\nhub:  %v\nsite: %v", q, h, s)
		}
	}
	var name, description, readme string
	var open, closed, milestones int
	if err := hub.s.Reader.QueryRow(`SELECT name, description, readme, open_work_item_count, closed_work_item_count, open_milestone_count FROM projects WHERE id = 100`).Scan(&name, &description, &readme, &open, &closed, &milestones); err != nil {
		t.Fatal(err)
	}
	if milestones != 1 {
		t.Errorf("the hub counts %d open milestones of project 100, want the site's 1", milestones)
	}
	if name != "Site name" || description != "Site description" || readme != "Hub readme" {
		t.Errorf("project 100 merged to name %q, description %q, readme %q", name, description, readme)
	}
	if open != 1 || closed != 1 {
		t.Errorf("project 100 counts open %d closed %d, want 1 and 1", open, closed)
	}
	if n := len(dump(t, hub.s, `SELECT id FROM projects WHERE id = 101`)); n != 0 {
		t.Error("the deleted project came back with the later rename")
	}
	if n := len(dump(t, hub.s, `SELECT id FROM witness_records WHERE object_id = 400`)); n != 2 {
		t.Errorf("%d witness records, want both nodes'", n)
	}
	// The foreign organisation's changes stayed on the hub.
	if got := dump(t, site.s, `SELECT name FROM organisations WHERE id = 20`); !reflect.DeepEqual(got, []string{"[Foreign]"}) {
		t.Errorf("the site's foreign organisation is %v", got)
	}
	if n := len(dump(t, site.s, `SELECT id FROM projects WHERE id = 103`)); n != 0 {
		t.Error("a project of the foreign organisation reached the site")
	}
	if got := dump(t, site.s, `SELECT count(*) FROM sync_changes WHERE origin = 1 AND org = 20 AND hlc > `+fmt.Sprint(cloned)); !reflect.DeepEqual(got, []string{"[0]"}) {
		t.Errorf("the site's log holds the hub's later foreign entries: %v", got)
	}
	// Each clock moved past every clock it received.
	for _, n := range []*syncNode{hub, site} {
		var last int64
		if err := n.s.Reader.QueryRow(`SELECT max(hlc) FROM sync_changes`).Scan(&last); err != nil {
			t.Fatal(err)
		}
		if n.s.HLC() < last {
			t.Errorf("node %d: clock %d behind a received %d", n.s.NodeID(), n.s.HLC(), last)
		}
	}
	if site.s.HLC() < int64(t0.Add(30*time.Second).UnixMilli())<<16 {
		t.Error("the site's clock did not move past the hub's later edit")
	}
}

// TestSyncApplyRefusesBadPages: a page with an entry of an organisation the
// exchange is not for, of an unknown or local table, with a malformed key
// or breaking a constraint is refused whole: nothing of it is applied.
func TestSyncApplyRefusesBadPages(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openSyncStore(t, filepath.Join(t.TempDir(), "r.db"), 5, nil)
	defer s.Close()
	if err := s.InTxSQL(ctx, func(tx *sql.Tx, q *Queries) error {
		_, err := tx.Exec(seedOrg + `
INSERT INTO organisations (id, name, owned_by, created_at) VALUES (20, 'Foreign', 1, '2026-11-26T00:00:00.000Z');
INSERT INTO projects (id, organisation_id, code, name, status, created_at, created_by) VALUES (102, 20, 'F1', 'Secret', 'open', '2026-11-26T00:00:00.000Z', 1);`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	org10, org20 := int64(10), int64(20)
	good := `{"id":700,"organisation_id":10,"code":"","name":"From afar","description":"","readme":"","status":"open","created_at":"2026-11-26T00:00:00.000Z","created_by":1,"closed_at":null,"closed_by":null}`
	goodEntry := SyncEntry{Origin: 9, HLC: 100, Org: &org10, Table: "projects", Key: "[700]", Op: "i", Cols: &good}
	foreign := `{"id":701,"organisation_id":20,"code":"","name":"X","description":"","readme":"","status":"open","created_at":"2026-11-26T00:00:00.000Z","created_by":1,"closed_at":null,"closed_by":null}`
	badFK := `{"id":702,"organisation_id":10,"code":"","name":"X","description":"","readme":"","status":"open","created_at":"2026-11-26T00:00:00.000Z","created_by":999,"closed_at":null,"closed_by":null}`
	wrongOrg := `{"name":"moved"}`
	outbox := `{"id":1}`
	for name, bad := range map[string]SyncEntry{
		"foreign organisation":    {Origin: 9, HLC: 101, Org: &org20, Table: "projects", Key: "[701]", Op: "i", Cols: &foreign},
		"organisation mislabeled": {Origin: 9, HLC: 101, Org: &org10, Table: "projects", Key: "[701]", Op: "i", Cols: &foreign},
		"local table":             {Origin: 9, HLC: 101, Org: &org10, Table: "outbox", Key: "[1]", Op: "i", Cols: &outbox},
		"unknown table":           {Origin: 9, HLC: 101, Org: &org10, Table: "nope", Key: "[1]", Op: "d"},
		"bad key":                 {Origin: 9, HLC: 101, Org: &org10, Table: "projects", Key: "[1,2]", Op: "d"},
		"unknown operation":       {Origin: 9, HLC: 101, Org: &org10, Table: "projects", Key: "[100]", Op: "x"},
		"breaks a foreign key":    {Origin: 9, HLC: 101, Org: &org10, Table: "projects", Key: "[702]", Op: "i", Cols: &badFK},
		"row of another org here": {Origin: 9, HLC: 101, Org: &org10, Table: "projects", Key: "[102]", Op: "u", Cols: &wrongOrg},
		"delete of another org's": {Origin: 9, HLC: 101, Org: &org10, Table: "projects", Key: "[102]", Op: "d"},
	} {
		before := dump(t, s, `SELECT * FROM projects ORDER BY id`)
		n, err := s.ApplySyncChanges(ctx, []SyncEntry{goodEntry, bad}, []int64{10})
		if !errors.Is(err, ErrSyncRefused) {
			t.Errorf("%s: err = %v, want refused", name, err)
		}
		if after := dump(t, s, `SELECT * FROM projects ORDER BY id`); !reflect.DeepEqual(before, after) {
			t.Errorf("%s: the refused page changed the projects", name)
		}
		if v, _ := s.SyncVector(ctx); v[9] != 0 || n != 0 {
			t.Errorf("%s: the refused page moved the vector: %v", name, v)
		}
	}
	// The good entry alone applies.
	if n, err := s.ApplySyncChanges(ctx, []SyncEntry{goodEntry}, []int64{10}); err != nil || n != 1 {
		t.Fatalf("good page: %d, %v", n, err)
	}
	if got := dump(t, s, `SELECT name FROM projects WHERE id = 700`); !reflect.DeepEqual(got, []string{"[From afar]"}) {
		t.Errorf("the applied project: %v", got)
	}
}

// TestSyncAccountsTravelWithTheirOrganisations: after the clone, a person
// who joins the paired organisation on the hub reaches the site with the
// account they sign in with (and later edits of it), the creator of a row
// who is no member travels without a password hash, and a person of the
// other organisation only never leaves the hub.
func TestSyncAccountsTravelWithTheirOrganisations(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	hub := openSyncStore(t, filepath.Join(dir, "hub.db"), 1, nil)
	defer hub.Close()
	run := func(s *Store, query string) {
		t.Helper()
		if err := s.InTxSQL(ctx, func(tx *sql.Tx, q *Queries) error { _, err := tx.Exec(query); return err }); err != nil {
			t.Fatalf("%s: %v", query, err)
		}
	}
	const ts = `'2026-11-26T00:00:00.000Z'`
	run(hub, seedOrg+`INSERT INTO organisations (id, name, owned_by, created_at) VALUES (20, 'Foreign', 1, `+ts+`);`)
	clonePath := filepath.Join(dir, "site.db")
	if _, err := hub.Writer.ExecContext(ctx, `VACUUM INTO ?`, clonePath); err != nil {
		t.Fatal(err)
	}
	site := openSyncStore(t, clonePath, 2, nil)
	defer site.Close()
	if err := site.SyncRecordClonedLog(ctx); err != nil {
		t.Fatal(err)
	}
	// Three new people on the hub: one joins the paired organisation, one
	// the other organisation only, one is no member but creates a project
	// of the paired one (an operator, say).
	run(hub, `INSERT INTO users (id, email, password_hash, first_name, created_at, updated_at) VALUES
		(3, 'joiner@example.com', 'hash-3', 'Jo', `+ts+`, `+ts+`),
		(4, 'foreign@example.com', 'hash-4', 'Fo', `+ts+`, `+ts+`),
		(5, 'operator@example.com', 'hash-5', 'Op', `+ts+`, `+ts+`)`)
	run(hub, `INSERT INTO organisation_members (organisation_id, user_id, joined_at) VALUES (10, 3, `+ts+`), (20, 4, `+ts+`)`)
	run(hub, `INSERT INTO projects (id, organisation_id, name, status, created_at, created_by) VALUES (110, 10, 'By the joiner', 'open', `+ts+`, 3), (111, 10, 'By the operator', 'open', `+ts+`, 5)`)
	run(hub, `UPDATE users SET first_name = 'Joanna' WHERE id = 3`)
	run(hub, `UPDATE users SET first_name = 'Fiona' WHERE id = 4`)
	orgs := []int64{10}
	exchange(t, hub, site, orgs, 2)
	exchange(t, site, hub, orgs, 2)

	got := dump(t, site, `SELECT id, password_hash, first_name FROM users WHERE id >= 3 ORDER BY id`)
	want := []string{"[3 hash-3 Joanna]", "[5  Op]"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the site's new accounts = %v, want %v", got, want)
	}
	if got := dump(t, site, `SELECT id FROM projects WHERE id IN (110, 111) ORDER BY id`); !reflect.DeepEqual(got, []string{"[110]", "[111]"}) {
		t.Errorf("the site's projects: %v", got)
	}
	// An edit of the joiner's profile on the site reaches the hub.
	run(site, `UPDATE users SET last_name = 'Site' WHERE id = 3`)
	exchange(t, site, hub, orgs, 2)
	if got := dump(t, hub, `SELECT first_name, last_name FROM users WHERE id = 3`); !reflect.DeepEqual(got, []string{"[Joanna Site]"}) {
		t.Errorf("the hub's joiner: %v", got)
	}
	// The operator's password hash stayed on the hub.
	if got := dump(t, hub, `SELECT password_hash FROM users WHERE id = 5`); !reflect.DeepEqual(got, []string{"[hash-5]"}) {
		t.Errorf("the hub's operator: %v", got)
	}
}

// TestSyncAuditChainsPerNode: a hub and its clone both audit writes of one
// organisation while apart; the clone's entries go on a chain of its own,
// so after exchanging both ways each holds every entry of both and every
// chain verifies.
func TestSyncAuditChainsPerNode(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	hub := openSyncStore(t, filepath.Join(dir, "hub.db"), 1, nil)
	defer hub.Close()
	org := int64(10)
	audit := func(s *Store, action string) {
		t.Helper()
		if err := s.InTxSQL(ctx, func(tx *sql.Tx, q *Queries) error {
			return s.AppendAudit(ctx, q, AuditLog{ID: s.IDs.Next(), Chain: org, OrganisationID: &org, Action: action,
				TargetIds: "{}", ChangedFields: "[]", CreatedAt: "2026-11-26T00:00:00.000Z"})
		}); err != nil {
			t.Fatal(err)
		}
	}
	if err := hub.InTxSQL(ctx, func(tx *sql.Tx, q *Queries) error { _, err := tx.Exec(seedOrg); return err }); err != nil {
		t.Fatal(err)
	}
	audit(hub, "POST /before-the-clone")
	clonePath := filepath.Join(dir, "site.db")
	if _, err := hub.Writer.ExecContext(ctx, `VACUUM INTO ?`, clonePath); err != nil {
		t.Fatal(err)
	}
	site := openSyncStore(t, clonePath, 2, nil)
	if err := site.SyncRecordClonedLog(ctx); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		audit(hub, fmt.Sprintf("POST /hub-%d", i))
		audit(site, fmt.Sprintf("POST /site-%d", i))
	}
	// The clone keeps its own chain after a restart.
	if err := site.Close(); err != nil {
		t.Fatal(err)
	}
	site = openSyncStore(t, clonePath, 2, nil)
	defer site.Close()
	audit(site, "POST /site-after-restart")
	orgs := []int64{10}
	exchange(t, site, hub, orgs, 2)
	exchange(t, hub, site, orgs, 2)
	q := `SELECT chain, node, seq, action FROM audit_log ORDER BY node, seq`
	want := []string{
		"[10 0 1 POST /before-the-clone]", "[10 0 2 POST /hub-0]", "[10 0 3 POST /hub-1]", "[10 0 4 POST /hub-2]",
		"[10 2 1 POST /site-0]", "[10 2 2 POST /site-1]", "[10 2 3 POST /site-2]", "[10 2 4 POST /site-after-restart]",
	}
	for name, s := range map[string]*Store{"hub": hub, "site": site} {
		if got := dump(t, s, q); !reflect.DeepEqual(got, want) {
			t.Errorf("%s's trail:\n%v\nwant\n%v", name, got, want)
		}
		problems, checked, err := VerifyAudit(ctx, s.R)
		if err != nil || len(problems) != 0 || checked != len(want) {
			t.Errorf("%s: verify checked %d: %v %v", name, checked, problems, err)
		}
	}
	// A clone's entry altered is found on its chain.
	if _, err := hub.Writer.ExecContext(ctx, `UPDATE audit_log SET action = 'POST /forged' WHERE node = 2 AND seq = 2`); err != nil {
		t.Fatal(err)
	}
	var forged int64
	if err := hub.Reader.QueryRow(`SELECT id FROM audit_log WHERE node = 2 AND seq = 2`).Scan(&forged); err != nil {
		t.Fatal(err)
	}
	problems, _, err := VerifyAudit(ctx, hub.R)
	if err != nil || !reflect.DeepEqual(problems, []string{fmt.Sprintf("chain 10 (node 2): entry 2 (id %d) was altered", forged)}) {
		t.Errorf("verify after a forgery: %v %v", problems, err)
	}
}
