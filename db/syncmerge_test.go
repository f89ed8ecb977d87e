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

	// Apart; the site's clock ahead (within the skew a hub takes).
	hub.at(t0.Add(time.Minute))
	hub.exec(t, `DELETE FROM permission_grants WHERE scope_id = 10 AND target_id = 2`)
	hub.exec(t, `INSERT INTO organisation_bans (organisation_id, user_id, banned_at, banned_by) VALUES (10, 3, `+ts+`, 1)`)
	site.at(t0.Add(4 * time.Minute))
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
	hub.at(t0.Add(2 * time.Hour))
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

// twoNodes opens a hub seeded with seed and its clone (node 2), both at t0.
func twoNodes(t *testing.T, t0 time.Time, seed string) (hub, site *syncNode) {
	t.Helper()
	dir := t.TempDir()
	hub, site = &syncNode{}, &syncNode{}
	hub.at(t0)
	site.at(t0)
	hub.s = openSyncStore(t, filepath.Join(dir, "hub.db"), 1, hub.clock())
	t.Cleanup(func() { hub.s.Close() })
	hub.exec(t, seed)
	clonePath := filepath.Join(dir, "site.db")
	if _, err := hub.s.Writer.ExecContext(context.Background(), `VACUUM INTO ?`, clonePath); err != nil {
		t.Fatal(err)
	}
	site.s = openSyncStore(t, clonePath, 2, site.clock())
	t.Cleanup(func() { site.s.Close() })
	if err := site.s.SyncRecordClonedLog(context.Background()); err != nil {
		t.Fatal(err)
	}
	return hub, site
}

// TestSyncGrantBitsStricter: one grant's bits changed at both offices
// apart (the site's later by clock, adding what the office took away)
// end with the stricter result on both: allowed what both allow, denied
// what either denies; the resolution is audited once; an edit made after
// seeing both stands.
func TestSyncGrantBitsStricter(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 28, 8, 0, 0, 0, time.UTC)
	const ts = `'2026-11-26T00:00:00.000Z'`
	hub, site := twoNodes(t, t0, seedOrg+`
INSERT INTO users (id, email, created_at, updated_at) VALUES (2, 'b@example.com', `+ts+`, `+ts+`);
INSERT INTO organisation_members (organisation_id, user_id, joined_at) VALUES (10, 1, `+ts+`), (10, 2, `+ts+`);
INSERT INTO permission_grants (organisation_id, scope_type, scope_id, target_type, target_id, allow_mask, deny_mask) VALUES (10, 'organisation', 10, 'user', 2, 3, 0);
INSERT INTO permission_grants (organisation_id, scope_type, scope_id, target_type, target_id, allow_mask, deny_mask) VALUES (10, 'project', 100, 'user', 2, 1, 0);`)
	orgs := []int64{10}
	hub.at(t0.Add(time.Minute))
	hub.exec(t, `UPDATE permission_grants SET allow_mask = 1, deny_mask = 4 WHERE scope_id = 10 AND target_id = 2`)
	site.at(t0.Add(time.Hour))
	site.exec(t, `UPDATE permission_grants SET allow_mask = 7, deny_mask = 2 WHERE scope_id = 10 AND target_id = 2`)
	// Changed at one office only: its value, as always.
	site.exec(t, `UPDATE permission_grants SET allow_mask = 9 WHERE scope_id = 100 AND target_id = 2`)
	hub.at(t0.Add(time.Hour)) // the two clocks agree again when they meet

	exchange(t, site.s, hub.s, orgs, 2)
	exchange(t, hub.s, site.s, orgs, 2)
	exchange(t, site.s, hub.s, orgs, 2)
	for _, n := range []*Store{hub.s, site.s} {
		if got := dump(t, n, `SELECT scope_id, allow_mask, deny_mask FROM permission_grants ORDER BY scope_id`); len(got) != 2 || got[0] != "[10 1 6]" || got[1] != "[100 9 0]" {
			t.Errorf("node %d: grants %v, want [10 1 6] (1&7, 4|2) and [100 9 0]", n.NodeID(), got)
		}
	}
	if got := dump(t, hub.s, `SELECT count(*) FROM audit_log WHERE action = 'SYNC security' AND details LIKE '%stricter%'`); got[0] != "[1]" {
		t.Errorf("resolutions audited: %v, want 1", got)
	}
	// A change made after seeing both stands, on both.
	site.at(t0.Add(2 * time.Hour))
	hub.at(t0.Add(2 * time.Hour))
	site.exec(t, `UPDATE permission_grants SET allow_mask = 3, deny_mask = 0 WHERE scope_id = 10 AND target_id = 2`)
	exchange(t, site.s, hub.s, orgs, 2)
	exchange(t, hub.s, site.s, orgs, 2)
	for _, n := range []*Store{hub.s, site.s} {
		if got := dump(t, n, `SELECT allow_mask, deny_mask FROM permission_grants WHERE scope_id = 10`); len(got) != 1 || got[0] != "[3 0]" {
			t.Errorf("node %d: a later edit %v, want [3 0]", n.NodeID(), got)
		}
	}
}

// TestSyncRoleNeedsMembership: a role the site gave a person the office
// removed from the organisation at the same time does not stay (on both
// nodes, audited); a role given to a member stays.
func TestSyncRoleNeedsMembership(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 28, 8, 0, 0, 0, time.UTC)
	const ts = `'2026-11-26T00:00:00.000Z'`
	hub, site := twoNodes(t, t0, seedOrg+`
INSERT INTO users (id, email, created_at, updated_at) VALUES (2, 'b@example.com', `+ts+`, `+ts+`), (3, 'c@example.com', `+ts+`, `+ts+`);
INSERT INTO organisation_members (organisation_id, user_id, joined_at) VALUES (10, 1, `+ts+`), (10, 2, `+ts+`), (10, 3, `+ts+`);
INSERT INTO roles (id, organisation_id, name, sort_order, created_at) VALUES (50, 10, 'Supervisor', 1, `+ts+`), (51, 10, 'Admin', 2, `+ts+`);
INSERT INTO member_roles (organisation_id, user_id, role_id) VALUES (10, 2, 50);`)
	orgs := []int64{10}
	hub.at(t0.Add(time.Minute))
	hub.exec(t, `DELETE FROM member_roles WHERE organisation_id = 10 AND user_id = 2; DELETE FROM organisation_members WHERE organisation_id = 10 AND user_id = 2`)
	site.at(t0.Add(time.Hour))
	site.exec(t, `INSERT INTO member_roles (organisation_id, user_id, role_id) VALUES (10, 2, 51), (10, 3, 51)`)
	hub.at(t0.Add(time.Hour))

	exchange(t, site.s, hub.s, orgs, 2)
	exchange(t, hub.s, site.s, orgs, 2)
	for _, n := range []*Store{hub.s, site.s} {
		if got := dump(t, n, `SELECT user_id, role_id FROM member_roles ORDER BY 1, 2`); len(got) != 1 || got[0] != "[3 51]" {
			t.Errorf("node %d: roles %v, want only [3 51]", n.NodeID(), got)
		}
		if got := dump(t, n, `SELECT user_id FROM organisation_members ORDER BY 1`); len(got) != 2 {
			t.Errorf("node %d: members %v, want 1 and 3", n.NodeID(), got)
		}
	}
	if got := dump(t, hub.s, `SELECT count(*) FROM audit_log WHERE action = 'SYNC security' AND details LIKE '%role given%'`); got[0] != "[1]" {
		t.Errorf("resolutions audited: %v, want 1", got)
	}
}
