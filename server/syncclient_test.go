package server

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"workspace/db"
)

// cutAfter cancels an exchange once it reported n pages (a cut between
// pages, as a link that drops).
type cutAfter struct {
	n      int32
	seen   atomic.Int32
	cancel context.CancelFunc
}

func (c *cutAfter) Write(p []byte) (int, error) {
	if c.seen.Add(1) >= c.n {
		c.cancel()
	}
	return len(p), nil
}

// TestSyncExchangeResumesAfterCut: a node cloned over HTTP receives the
// hub's changes in pages of two; an exchange cut after a few pages leaves
// the node with part of them, and the next exchange finishes the rest
// without duplicating any; a third finds nothing to do.
func TestSyncExchangeResumesAfterCut(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.clock.Advance(time.Since(e.clock.Now())) // the node signs with the wall clock
	alice := e.user("Alice")
	acme := e.org(alice, "Acme")
	other := e.org(e.user("Mallory"), "Other")
	hub := httptest.NewServer(e.srv)
	t.Cleanup(hub.Close)
	north := e.org(alice, "Acme North") // paired too: a code for two organisations
	code := e.must(201, alice, "POST", "/organisations/"+acme+"/sync/pairing-codes", map[string]any{"organisations": []string{north}}).obj(t)["code"].(string)
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "site.db")
	if _, _, err := SyncClone(ctx, hub.URL, code, "Site", path, io.Discard); err != nil {
		t.Fatal(err)
	}
	if _, _, err := SyncClone(ctx, hub.URL, code, "Site", path, io.Discard); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Fatalf("a clone over an existing file: %v", err)
	}
	const n = 12
	for i := range n {
		e.must(201, alice, "POST", "/organisations/"+acme+"/projects", map[string]any{"name": fmt.Sprintf("P%02d", i)})
	}
	e.must(201, e.user("Mallory2"), "POST", "/organisations", map[string]any{"name": "Unrelated"})
	e.must(201, alice, "POST", "/organisations/"+north+"/projects", map[string]any{"name": "North"})
	_ = other

	node, err := db.Open(ctx, db.Options{Path: path, Synchronous: "NORMAL", NodeID: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { node.Close() })
	count := func() (n int) {
		if err := node.Reader.QueryRow(`SELECT count(*) FROM projects`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	cutCtx, cancel := context.WithCancel(ctx)
	_, err = SyncNow(cutCtx, node, 2, &cutAfter{n: 3, cancel: cancel})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("the cut exchange: %v", err)
	}
	part := count()
	if part == 0 || part >= n {
		t.Fatalf("after the cut the node holds %d of %d projects: want some", part, n)
	}
	var lastErr *string
	if err := node.Reader.QueryRow(`SELECT last_error FROM sync_hub`).Scan(&lastErr); err != nil || lastErr == nil {
		t.Fatalf("the cut is not recorded: %v %v", lastErr, err)
	}
	res, err := SyncNow(ctx, node, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := count(); got != n+1 {
		t.Fatalf("after resuming the node holds %d projects, want %d", got, n+1)
	}
	if res.Received == 0 || res.Rounds < 2 {
		t.Fatalf("the resumed exchange: %+v", res)
	}
	res, err = SyncNow(ctx, node, 2, nil)
	if err != nil || res.Received != 0 || res.Sent != 0 {
		t.Fatalf("a quiet exchange: %+v %v", res, err)
	}
	// The exchanges leased the node number blocks (docs/sync.md).
	if held, err := node.HeldNumberBlocks(ctx); err != nil || len(held) == 0 || held[0].Left != db.DefaultNumberBlock {
		t.Fatalf("number blocks held after exchanging: %+v %v", held, err)
	}
	var names int
	if err := node.Reader.QueryRow(`SELECT count(*) FROM organisations`).Scan(&names); err != nil || names != 2 {
		t.Fatalf("the node holds %d organisations, want its two: %v", names, err)
	}
	// The node's clock is two hours behind the hub's: its first signed
	// request is refused, it learns the hub's time and the exchange goes on;
	// the offset is reported.
	e.clock.Advance(2 * time.Hour)
	e.must(201, alice, "POST", "/organisations/"+acme+"/projects", map[string]any{"name": "Late"})
	res, err = SyncNow(ctx, node, 2, nil)
	if err != nil || count() != n+2 || res.ClockOffset < time.Hour {
		t.Fatalf("an exchange two hours apart: %+v %v", res, err)
	}
	// Each exchange that moved anything is in the organisation's trail
	// once, with its count (the cut one with the one that resumed it; the
	// quiet one not at all).
	trail := e.must(200, alice, "GET", "/organisations/"+acme+"/audit-log?action=SYNC%20exchange", nil).arr(t)
	if len(trail) != 2 {
		t.Fatalf("exchanges in the trail: %d, want 2: %v", len(trail), trail)
	}
	counts := []float64{}
	for _, a := range trail {
		d, _ := a["details"].(map[string]any)
		c, _ := d["count"].(float64)
		counts = append(counts, c)
	}
	// Newest first: Late (with what came with it), then the twelve
	// projects and what came with them (the number blocks' counters).
	if counts[0] < 1 || counts[0] >= n || counts[1] < n {
		t.Fatalf("exchange counts %v, want a few (Late) then at least %d (the projects, resumed after the cut)", counts, n)
	}
	if north := e.must(200, alice, "GET", "/organisations/"+north+"/audit-log?action=SYNC%20exchange", nil).arr(t); len(north) != 1 {
		t.Fatalf("the second organisation's trail: %v", north)
	}
	// The hub's status of the node: nothing waiting for it.
	st := e.must(200, alice, "GET", "/organisations/"+acme+"/sync/nodes", nil).arr(t)
	if len(st) != 1 || st[0]["pending_to_node"] != float64(0) || st[0]["last_exchange_at"] == nil {
		t.Fatalf("nodes %v", st)
	}
}

// TestSyncClockAheadWaits: changes a laptop made while its clock was two
// hours ahead (set right since) are dated ahead of head office's clock:
// the laptop sends only what the hub takes (the hub refuses the rest,
// TestSyncClockBounded), still receives the hub's changes, and says its
// own wait; its changes dated in the hub's time go.
func TestSyncClockAheadWaits(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.clock.Advance(time.Since(e.clock.Now())) // the node signs with the wall clock
	alice := e.user("Alice")
	acme := e.org(alice, "Acme")
	hub := httptest.NewServer(e.srv)
	t.Cleanup(hub.Close)
	code := e.must(201, alice, "POST", "/organisations/"+acme+"/sync/pairing-codes", map[string]any{}).obj(t)["code"].(string)
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "site.db")
	if _, _, err := SyncClone(ctx, hub.URL, code, "Site", path, io.Discard); err != nil {
		t.Fatal(err)
	}
	var ahead atomic.Int64
	ahead.Store(int64(2 * time.Hour))
	node, err := db.Open(ctx, db.Options{Path: path, Synchronous: "NORMAL", NodeID: -1,
		Now: func() time.Time { return time.Now().Add(time.Duration(ahead.Load())) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { node.Close() })
	exec := func(q string) {
		t.Helper()
		if err := node.InTxSQL(ctx, func(tx *sql.Tx, _ *db.Queries) error {
			_, err := tx.Exec(q)
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	exec(`UPDATE organisations SET name = 'Acme (site)'`)
	e.must(201, alice, "POST", "/organisations/"+acme+"/projects", map[string]any{"name": "From the office"})
	name := func(s *db.Store) (n string) {
		if err := s.Reader.QueryRow(`SELECT name FROM organisations`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	res, err := SyncNow(ctx, node, 0, nil)
	if err != nil {
		t.Fatalf("an exchange with changes dated ahead: %v", err)
	}
	if !res.HeldBack || res.Received == 0 || res.Sent != 0 {
		t.Fatalf("result %+v: want the laptop's change held back and the office's received", res)
	}
	var projects int
	if err := node.Reader.QueryRow(`SELECT count(*) FROM projects WHERE name = 'From the office'`).Scan(&projects); err != nil || projects != 1 {
		t.Fatalf("the office's project on the laptop: %d %v", projects, err)
	}
	if got := name(e.store); got != "Acme" {
		t.Fatalf("the hub took a change dated two hours ahead: %q", got)
	}
	var pending int64
	if err := node.Reader.QueryRow(`SELECT count(*) FROM sync_changes WHERE origin = ?`, node.NodeID()).Scan(&pending); err != nil || pending == 0 {
		t.Fatalf("the laptop's change is gone from its log: %d %v", pending, err)
	}
}
