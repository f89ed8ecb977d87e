package db

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestSyncNumberBlocks: a clone draws numbers only from blocks the hub
// leased it (the hub's own draws go past them), renews when fewer than
// half are left, numbers provisionally when out of blocks, and the next
// accepted blocks replace the provisional numbers; only the hub leases,
// and a bad block is refused.
func TestSyncNumberBlocks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	hub, clone := hubAndClone(t, `INSERT INTO work_item_types (id, organisation_id, name, colour, created_at) VALUES (300, 10, 'Defect', '', '2026-11-26T00:00:00.000Z');`)
	hub.SetNumberBlockSize(4)
	orgs := []int64{10}
	draw := func(s *Store) (n int64, provisional bool) {
		t.Helper()
		err := s.InTxSQL(ctx, func(tx *sql.Tx, q *Queries) error {
			var leased bool
			var err error
			n, provisional, leased, err = DrawLeased(ctx, q, 10, "work_item")
			if err == nil && !leased {
				n, err = q.CounterNext(ctx, CounterNextParams{OrganisationID: 10, Name: "work_item"})
			}
			if err != nil {
				return err
			}
			_, err = tx.Exec(`INSERT INTO work_items (id, organisation_id, type_id, number, formatted_number, title, status, created_at, created_by, updated_at, updated_by)
				VALUES (?, 10, 300, ?, ?, 't', 'open', '2026-11-26T00:00:00.000Z', 1, '2026-11-26T00:00:00.000Z', 1)`, s.IDs.Next(), n, FormatNumber("{number}", nil, n))
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return n, provisional
	}
	lease := func() []NumberBlock {
		t.Helper()
		held, err := clone.HeldNumberBlocks(ctx)
		if err != nil {
			t.Fatal(err)
		}
		blocks, err := hub.GrantNumberBlocks(ctx, 2, orgs, held)
		if err != nil {
			t.Fatal(err)
		}
		if err := clone.AcceptNumberBlocks(ctx, blocks); err != nil {
			t.Fatal(err)
		}
		return blocks
	}

	// Before any block: provisional, unique by the node.
	n, prov := draw(clone)
	if !prov || n >= 0 || ProvisionalText(n) != "PROV-2-1" {
		t.Fatalf("first clone draw %d %v %s", n, prov, ProvisionalText(n))
	}
	blocks := lease()
	var wi NumberBlock
	for _, b := range blocks {
		if b.Counter == "work_item" {
			wi = b
		}
	}
	if wi.First != 1 || wi.Last != 4 {
		t.Fatalf("work item block %+v of %v", wi, blocks)
	}
	// The provisional number became the block's first.
	if got := dump(t, clone, `SELECT number, formatted_number FROM work_items ORDER BY number`); len(got) != 1 || got[0] != "[1 1]" {
		t.Fatalf("after accepting: %v", got)
	}
	// The hub draws past the block; the clone draws within it.
	if n, _ := draw(hub); n != 5 {
		t.Fatalf("hub drew %d, want 5 (past the leased 1-4)", n)
	}
	if n, prov := draw(clone); n != 2 || prov {
		t.Fatalf("clone drew %d %v, want 2", n, prov)
	}
	// Two left of four: not renewed; one left: renewed.
	if blocks := lease(); len(blocks) != 0 && blocks[0].Counter == "work_item" {
		t.Fatalf("renewed with half left: %v", blocks)
	}
	draw(clone)
	renewed := false
	for _, b := range lease() {
		if b.Counter == "work_item" {
			renewed = b.First == 6 && b.Last == 9
		}
	}
	if !renewed {
		t.Fatal("not renewed with one of four left")
	}
	// A clone cannot lease; a bad block is refused.
	if _, err := clone.GrantNumberBlocks(ctx, 3, orgs, nil); err == nil {
		t.Error("a clone leased blocks")
	}
	if err := clone.AcceptNumberBlocks(ctx, []NumberBlock{{OrganisationID: 10, Counter: "work_item", First: 9, Last: 3}}); err == nil {
		t.Error("a block ending before it starts was accepted")
	}
}

// TestSyncProvisionalNumbersEveryKind: blocks accepted on a clone replace
// its provisional numbers of documents (the organisation's number, the text
// made from it plainly or by the type's template, and a prefix's number in
// the text), merge requests and assets (by the asset counter or a prefix),
// oldest first; another node's provisional number is left to that node.
func TestSyncProvisionalNumbersEveryKind(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const at = `'2026-11-26T00:00:00.000Z'`
	hub, clone := hubAndClone(t, `
INSERT INTO prefixes (id, organisation_id, number_format, number_digits, created_at) VALUES (500, 10, 'D-{number}', 3, `+at+`);
INSERT INTO prefixes (id, organisation_id, number_format, created_at) VALUES (501, 10, 'A-{number}', `+at+`);
INSERT INTO document_types (id, organisation_id, name, number_format, created_at) VALUES (600, 10, 'Method', 'DT-{number}', `+at+`);
INSERT INTO asset_types (id, organisation_id, ephemerality, name, created_at) VALUES (700, 10, 0, 'Crane', `+at+`);
INSERT INTO documents (id, organisation_id, number, formatted_number, title, created_at, created_by, updated_at, updated_by) VALUES (800, 10, 900, '900', 'Plan', `+at+`, 1, `+at+`, 1);
INSERT INTO document_revisions (id, document_id, hash, generation, created_at, created_by) VALUES (801, 800, x'00', 0, `+at+`, 1);
INSERT INTO document_branches (id, organisation_id, document_id, name, revision_id, created_at, created_by) VALUES (802, 10, 800, 'main', 801, `+at+`, 1);
INSERT INTO document_branches (id, organisation_id, document_id, name, revision_id, created_at, created_by) VALUES (803, 10, 800, 'site', 801, `+at+`, 1);`)
	hub.SetNumberBlockSize(4)

	// insert draws a number of counter on the clone (a prefix's through its
	// template) and writes one row with it.
	insert := func(stmt string, counter string, format func(int64) string, extra ...any) int64 {
		t.Helper()
		id := clone.IDs.Next()
		err := clone.InTxSQL(ctx, func(tx *sql.Tx, q *Queries) error {
			n, _, leased, err := DrawLeased(ctx, q, 10, counter)
			if err != nil || !leased {
				t.Fatalf("draw %s: %v leased %v", counter, err, leased)
			}
			_, err = tx.Exec(stmt, append([]any{id, n, format(n)}, extra...)...)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	plain := func(n int64) string { return FormatNumber("{number}", nil, n) }
	doc := `INSERT INTO documents (id, organisation_id, number, formatted_number, title, type_id, created_at, created_by, updated_at, updated_by) VALUES (?, 10, ?, ?, 'Site doc', ?, ` + at + `, 1, ` + at + `, 1)`
	// A document from prefix 500: the organisation's number and the
	// prefix's text are drawn apart; here the organisation's number is real
	// (a block of it held) and the prefix's provisional.
	if err := clone.AcceptNumberBlocks(ctx, []NumberBlock{{OrganisationID: 10, Counter: "documents", First: 1000, Last: 1000}}); err != nil {
		t.Fatal(err)
	}
	var prefixText string
	prefixDoc := func() int64 {
		var text string
		if err := clone.InTxSQL(ctx, func(tx *sql.Tx, q *Queries) error {
			p, _, _, err := DrawLeased(ctx, q, 10, PrefixCounter(500))
			text = FormatNumber("D-{number}", &[]int64{3}[0], p)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		prefixText = text
		return insert(doc, "documents", func(int64) string { return prefixText }, nil)
	}
	docReal := prefixDoc()
	docPlain := insert(doc, "documents", plain, nil)
	docTyped := insert(doc, "documents", func(n int64) string { return FormatNumber("DT-{number}", nil, n) }, 600)
	docBoth := prefixDoc()
	mr := insert(`INSERT INTO document_merge_requests (id, organisation_id, number, document_id, from_document_id, from_branch_id, to_branch_id, title, created_at, created_by, updated_at)
VALUES (?, 10, ?, 800, 800, 803, 802, ?, `+at+`, 1, `+at+`)`, "merge_requests", func(int64) string { return "Site edits" })
	asset := `INSERT INTO asset_groups (id, organisation_id, type_id, ephemerality, number, formatted_number, prefix_id, name, normalised_name, created_at, created_by, updated_at, updated_by)
VALUES (?, 10, 700, 0, ?, ?, ?, 'Crane', 'crane', ` + at + `, 1, ` + at + `, 1)`
	assetPlain := insert(asset, "asset", plain, nil)
	assetPrefixed := insert(asset, PrefixCounter(501), func(n int64) string { return FormatNumber("A-{number}", nil, n) }, 501)
	// Another laptop's provisional document, received here: its own to replace.
	other := clone.IDs.Next()
	if err := clone.InTxSQL(ctx, func(tx *sql.Tx, q *Queries) error {
		_, err := tx.Exec(doc, other, -(3<<32 | 1), "PROV-3-1", nil)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	row := func(query string, id int64) string {
		t.Helper()
		got := dump(t, clone, strings.ReplaceAll(query, "?", strconv.FormatInt(id, 10)))
		if len(got) != 1 {
			t.Fatalf("%s: %v", query, got)
		}
		return got[0]
	}
	docRow := `SELECT number, formatted_number FROM documents WHERE id = ?`
	mrRow := `SELECT number FROM document_merge_requests WHERE id = ?`
	assetRow := `SELECT number, formatted_number FROM asset_groups WHERE id = ?`
	// Each kind's row before the clone holds blocks and after it accepts
	// them ("" where only the after state is the point).
	kinds := []struct {
		query         string
		id            int64
		before, after string
	}{
		{docRow, docReal, "[1000 D-PROV-2-1]", "[1000 D-001]"},
		{docRow, docPlain, "[-8589934593 PROV-2-1]", "[1 1]"},
		{docRow, docTyped, "[-8589934594 DT-PROV-2-2]", "[2 DT-2]"},
		{docRow, docBoth, "[-8589934595 D-PROV-2-2]", "[3 D-002]"},
		{docRow, other, "", "[-12884901889 PROV-3-1]"},
		{mrRow, mr, "[-8589934593]", "[1]"},
		{assetRow, assetPlain, "[-8589934593 PROV-2-1]", "[1 1]"},
		{assetRow, assetPrefixed, "[-8589934593 A-PROV-2-1]", "[1 A-1]"},
		{`SELECT last_number FROM document_types WHERE id = ?`, 600, "", "[2]"},
	}
	for _, c := range kinds {
		if got := row(c.query, c.id); c.before != "" && got != c.before {
			t.Errorf("before blocks, %d: %s, want %s", c.id, got, c.before)
		}
	}

	held, err := clone.HeldNumberBlocks(ctx)
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := hub.GrantNumberBlocks(ctx, 2, []int64{10}, held)
	if err != nil {
		t.Fatal(err)
	}
	if err := clone.AcceptNumberBlocks(ctx, blocks); err != nil {
		t.Fatal(err)
	}
	for _, c := range kinds {
		if got := row(c.query, c.id); got != c.after {
			t.Errorf("after blocks, %d: %s, want %s", c.id, got, c.after)
		}
	}
	// The renumbering is the clone's own change, to go up to the hub.
	if got := dump(t, clone, `SELECT count(*) FROM sync_changes WHERE origin = 2 AND op = 'u' AND tbl IN ('documents', 'document_merge_requests', 'asset_groups')`); got[0] != "[7]" {
		t.Errorf("renumbering logged %v, want 7 updates (4 documents, 1 merge request, 2 assets)", got)
	}
	// Accepting again changes nothing.
	if err := clone.AcceptNumberBlocks(ctx, blocks); err != nil {
		t.Fatal(err)
	}
	if got := row(docRow, docBoth); got != "[3 D-002]" {
		t.Errorf("accepted twice: %s", got)
	}
}

// hubAndClone: a hub (node 1) seeded with seedOrg and more, and a clone
// (node 2) copied from it as a laptop is, its log recorded as cloned.
func hubAndClone(t *testing.T, more string) (hub, clone *Store) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	hubPath := filepath.Join(dir, "hub.db")
	seed := openSyncStore(t, hubPath, 1, nil)
	if err := seed.InTxSQL(ctx, func(tx *sql.Tx, q *Queries) error {
		_, err := tx.Exec(seedOrg + more)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if err := seed.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(hubPath)
	if err != nil {
		t.Fatal(err)
	}
	clonePath := filepath.Join(dir, "clone.db")
	if err := os.WriteFile(clonePath, b, 0o644); err != nil {
		t.Fatal(err)
	}
	hub = openSyncStore(t, hubPath, 1, nil)
	t.Cleanup(func() { hub.Close() })
	clone = openSyncStore(t, clonePath, 2, nil)
	t.Cleanup(func() { clone.Close() })
	if err := clone.SyncRecordClonedLog(ctx); err != nil {
		t.Fatal(err)
	}
	return hub, clone
}
