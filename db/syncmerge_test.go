package db

import (
	"context"
	"path/filepath"
	"testing"
	"time"
)

// TestSyncSecurityFailsClosed: with the site's clock ahead (its changes are
// later by clock), a grant the site re-made while head office revoked it
// stays revoked; a person the office banned while the site accepted their
// invite is not a member; an owner changed at the site is head office's
// again; a re-grant made after the site saw the revoke stands. Each
// resolution is in the hub's audit trail, and both nodes end equal.
func TestSyncSecurityFailsClosed(t *testing.T) {
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
INSERT INTO users (id, email, created_at, updated_at) VALUES (2, 'b@example.com', `+ts+`, `+ts+`), (3, 'c@example.com', `+ts+`, `+ts+`);
INSERT INTO organisation_members (organisation_id, user_id, joined_at) VALUES (10, 1, `+ts+`), (10, 2, `+ts+`);
INSERT INTO permission_grants (organisation_id, scope_type, scope_id, target_type, target_id, allow_mask) VALUES (10, 'organisation', 10, 'user', 2, 1);`)
	clonePath := filepath.Join(dir, "site.db")
	if _, err := hub.s.Writer.ExecContext(ctx, `VACUUM INTO ?`, clonePath); err != nil {
		t.Fatal(err)
	}
	site.s = openSyncStore(t, clonePath, 2, site.clock())
	defer site.s.Close()
	if err := site.s.SyncRecordClonedLog(ctx); err != nil {
		t.Fatal(err)
	}
	orgs := []int64{10}

	// Apart; the site's clock an hour ahead.
	hub.at(t0.Add(time.Minute))
	hub.exec(t, `DELETE FROM permission_grants WHERE scope_id = 10 AND target_id = 2`)
	hub.exec(t, `INSERT INTO organisation_bans (organisation_id, user_id, banned_at, banned_by) VALUES (10, 3, `+ts+`, 1)`)
	site.at(t0.Add(time.Hour))
	site.exec(t, `UPDATE permission_grants SET allow_mask = 3 WHERE scope_id = 10 AND target_id = 2`)
	site.exec(t, `DELETE FROM permission_grants WHERE scope_id = 10 AND target_id = 2`)
	site.exec(t, `INSERT INTO permission_grants (organisation_id, scope_type, scope_id, target_type, target_id, allow_mask) VALUES (10, 'organisation', 10, 'user', 2, 7)`)
	site.exec(t, `INSERT INTO organisation_members (organisation_id, user_id, joined_at) VALUES (10, 3, `+ts+`)`)
	site.exec(t, `UPDATE organisations SET owned_by = 2 WHERE id = 10`)

	exchange(t, site.s, hub.s, orgs, 2)
	exchange(t, hub.s, site.s, orgs, 2)
	for _, n := range []*Store{hub.s, site.s} {
		if got := dump(t, n, `SELECT target_id FROM permission_grants`); len(got) != 0 {
			t.Errorf("node %d: a grant re-made while revoked stands: %v", n.NodeID(), got)
		}
		if got := dump(t, n, `SELECT user_id FROM organisation_members ORDER BY 1`); len(got) != 2 || got[0] != "[1]" || got[1] != "[2]" {
			t.Errorf("node %d: members %v, want 1 and 2 (3 banned)", n.NodeID(), got)
		}
		if got := dump(t, n, `SELECT owned_by FROM organisations WHERE id = 10`); len(got) != 1 || got[0] != "[1]" {
			t.Errorf("node %d: owner %v, changed offline", n.NodeID(), got)
		}
	}
	if got := dump(t, hub.s, `SELECT count(*) FROM audit_log WHERE action = 'SYNC security'`); got[0] != "[3]" {
		t.Errorf("resolutions audited: %v, want 3 (grant, membership, owner)", got)
	}

	// A grant the site makes after it saw the revoke stands.
	site.at(t0.Add(2 * time.Hour))
	site.exec(t, `INSERT INTO permission_grants (organisation_id, scope_type, scope_id, target_type, target_id, allow_mask) VALUES (10, 'organisation', 10, 'user', 2, 1)`)
	exchange(t, site.s, hub.s, orgs, 2)
	exchange(t, hub.s, site.s, orgs, 2)
	for _, n := range []*Store{hub.s, site.s} {
		if got := dump(t, n, `SELECT target_id, allow_mask FROM permission_grants`); len(got) != 1 || got[0] != "[2 1]" {
			t.Errorf("node %d: grants %v, want the later one", n.NodeID(), got)
		}
	}
	for _, q := range []string{`SELECT * FROM organisation_members ORDER BY 1, 2`, `SELECT * FROM organisation_bans`, `SELECT id, chain, node, seq, hash FROM audit_log ORDER BY id`} {
		if a, b := dump(t, hub.s, q), dump(t, site.s, q); len(a) != len(b) {
			t.Errorf("%s: hub %v, site %v", q, a, b)
		}
	}
}
