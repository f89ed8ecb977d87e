package db

import (
	"context"
	"encoding/json"
	"testing"
	"time"
)

// TestSyncLogPruned: entries older than the retention that the paired node
// holds are pruned (and noted), entries it lacks are kept, as are recent
// ones; a node not heard from within the retention does not hold pruning
// back; the two nodes still exchange and end equal afterwards.
func TestSyncLogPruned(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t0 := time.Date(2026, 9, 1, 8, 0, 0, 0, time.UTC)
	const ts = `'2026-11-26T00:00:00.000Z'`
	hub, site := twoNodes(t, t0, seedOrg)
	orgs := []int64{10}
	hub.exec(t, `UPDATE projects SET name = 'Old edit' WHERE id = 100`)
	site.exec(t, `INSERT INTO projects (id, organisation_id, code, name, status, created_at, created_by) VALUES (101, 10, 'S1', 'Site', 'open', `+ts+`, 1)`)
	exchange(t, site.s, hub.s, orgs, 10)
	exchange(t, hub.s, site.s, orgs, 10)
	// The site's holdings as its last exchange reported them.
	v, err := site.s.SyncVector(ctx)
	if err != nil {
		t.Fatal(err)
	}
	vj := map[string]int64{}
	for o, h := range v {
		vj[itoa(o)] = h
	}
	vb, _ := json.Marshal(vj)
	// A change the site has not received (dated just as old).
	hub.exec(t, `UPDATE projects SET name = 'Not yet at the site' WHERE id = 101`)
	lacked := hub.s.HLC()
	// Forty days on: the site exchanged yesterday; another node months ago.
	now := t0.Add(40 * 24 * time.Hour)
	hub.at(now)
	if _, err := hub.s.Writer.ExecContext(ctx, `INSERT INTO sync_nodes (node, public_key, name, paired_by, paired_at, last_exchange_at, vector) VALUES
		(2, x'00', 'Site', 1, ?, ?, ?), (3, x'00', 'Gone', 1, ?, ?, '{}')`,
		FormatTime(t0), FormatTime(now.Add(-24*time.Hour)), string(vb), FormatTime(t0), FormatTime(t0)); err != nil {
		t.Fatal(err)
	}
	hub.exec(t, `UPDATE projects SET name = 'Recent' WHERE id = 100`)
	since := now.Add(-DefaultSyncRetention)
	ack, err := hub.s.SyncAcknowledged(ctx, since)
	if err != nil {
		t.Fatal(err)
	}
	before := dump(t, hub.s, `SELECT count(*) FROM sync_changes`)
	n, err := hub.s.PruneSyncLog(ctx, ack, since.UnixMilli()<<16)
	if err != nil || n == 0 {
		t.Fatalf("pruned %d (of %v) %v", n, before, err)
	}
	if got := dump(t, hub.s, `SELECT count(*) FROM sync_changes WHERE hlc = `+itoa(lacked)); got[0] != "[1]" {
		t.Errorf("the change the site lacks was pruned")
	}
	if got := dump(t, hub.s, `SELECT count(*) FROM sync_changes WHERE hlc > `+itoa(since.UnixMilli()<<16)); got[0] == "[0]" {
		t.Errorf("recent changes were pruned")
	}
	if got := dump(t, hub.s, `SELECT count(*) FROM sync_pruned`); got[0] == "[0]" {
		t.Errorf("the pruning is not noted")
	}
	// Still one workspace: the site catches up and its edits arrive.
	site.at(now)
	site.exec(t, `UPDATE projects SET name = 'Site edit' WHERE id = 101`)
	exchange(t, hub.s, site.s, orgs, 10)
	exchange(t, site.s, hub.s, orgs, 10)
	q := `SELECT id, name FROM projects ORDER BY id`
	if a, b := dump(t, hub.s, q), dump(t, site.s, q); len(a) != 2 || a[0] != b[0] || a[1] != b[1] || a[1] != "[101 Site edit]" || a[0] != "[100 Recent]" {
		t.Errorf("after pruning: hub %v, site %v", a, b)
	}
	// A node whose holdings bind pruning (the site, within the retention)
	// is all that holds it back: with the site's vector at nothing, nothing of
	// the hub's own goes.
	if _, err := hub.s.Writer.ExecContext(ctx, `UPDATE sync_nodes SET vector = '{"5": 1}' WHERE node = 2`); err != nil {
		t.Fatal(err)
	}
	ack, err = hub.s.SyncAcknowledged(ctx, since)
	if err != nil || ack[1] != 0 {
		t.Fatalf("a node holding nothing of the hub's: ack %v %v", ack, err)
	}
}

func itoa(n int64) string { b, _ := json.Marshal(n); return string(b) }
