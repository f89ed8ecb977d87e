package db

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
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
	dir := t.TempDir()
	hubPath := filepath.Join(dir, "hub.db")
	seed := openSyncStore(t, hubPath, 1, nil)
	if err := seed.InTxSQL(ctx, func(tx *sql.Tx, q *Queries) error {
		_, err := tx.Exec(seedOrg + `INSERT INTO work_item_types (id, organisation_id, name, colour, created_at) VALUES (300, 10, 'Defect', '', '2026-11-26T00:00:00.000Z');`)
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
	hub := openSyncStore(t, hubPath, 1, nil)
	defer hub.Close()
	clone := openSyncStore(t, clonePath, 2, nil)
	defer clone.Close()
	if err := clone.SyncRecordClonedLog(ctx); err != nil {
		t.Fatal(err)
	}
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
