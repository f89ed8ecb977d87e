package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestSyncAccessDecisionsUndo: each of the hub's five access decisions is an
// open conflict on both nodes carrying the change that lost, and an owner's
// Undo (made on the site here, as a laptop may) applies that change through
// the node's own writes: it reaches the hub and stands there (the hub's rule
// sees an Undo made after the decision, so it takes no second decision),
// and the conflict is settled as undone on both.
func TestSyncAccessDecisionsUndo(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t0 := time.Date(2026, 11, 28, 8, 0, 0, 0, time.UTC)
	const ts = `'2026-11-26T00:00:00.000Z'`
	hub, site := twoNodes(t, t0, seedOrg+`
INSERT INTO users (id, email, created_at, updated_at) VALUES (2, 'b@example.com', `+ts+`, `+ts+`), (3, 'c@example.com', `+ts+`, `+ts+`),
  (4, 'd@example.com', `+ts+`, `+ts+`), (5, 'e@example.com', `+ts+`, `+ts+`), (6, 'f@example.com', `+ts+`, `+ts+`);
INSERT INTO organisation_members (organisation_id, user_id, joined_at) VALUES (10, 1, `+ts+`), (10, 2, `+ts+`), (10, 3, `+ts+`), (10, 4, `+ts+`);
INSERT INTO roles (id, organisation_id, name, sort_order, created_at) VALUES (50, 10, 'Supervisor', 1, `+ts+`), (51, 10, 'Admin', 2, `+ts+`);
INSERT INTO permission_grants (organisation_id, scope_type, scope_id, target_type, target_id, allow_mask, deny_mask) VALUES (10, 'organisation', 10, 'user', 2, 3, 0);
INSERT INTO permission_grants (organisation_id, scope_type, scope_id, target_type, target_id, allow_mask, deny_mask) VALUES (10, 'project', 100, 'user', 4, 1, 0);
INSERT INTO organisation_bans (organisation_id, user_id, banned_at, banned_by) VALUES (10, 5, `+ts+`, 1);`)
	orgs := []int64{10}
	hub.at(t0.Add(time.Minute))
	// 1: person 2's grant changed at both offices (the site's later).
	hub.exec(t, `UPDATE permission_grants SET allow_mask = 1, deny_mask = 4 WHERE scope_id = 10 AND target_id = 2`)
	// 2: person 3 removed at head office while the site gave them a role.
	hub.exec(t, `DELETE FROM organisation_members WHERE organisation_id = 10 AND user_id = 3`)
	// 3: person 4's project grant removed at head office while the site made it again.
	hub.exec(t, `DELETE FROM permission_grants WHERE scope_id = 100 AND target_id = 4`)
	// 4: person 5's ban made again at head office while the site lifted it.
	hub.exec(t, `DELETE FROM organisation_bans WHERE organisation_id = 10 AND user_id = 5`)
	hub.exec(t, `INSERT INTO organisation_bans (organisation_id, user_id, reason, banned_at, banned_by) VALUES (10, 5, 'again', `+ts+`, 1)`)
	// 5: person 6 banned at head office while the site let them in with a role.
	hub.exec(t, `INSERT INTO organisation_bans (organisation_id, user_id, banned_at, banned_by) VALUES (10, 6, `+ts+`, 1)`)
	site.at(t0.Add(time.Hour))
	site.exec(t, `UPDATE permission_grants SET allow_mask = 7, deny_mask = 2 WHERE scope_id = 10 AND target_id = 2`)
	site.exec(t, `INSERT INTO member_roles (organisation_id, user_id, role_id) VALUES (10, 3, 51)`)
	site.exec(t, `DELETE FROM permission_grants WHERE scope_id = 100 AND target_id = 4`)
	site.exec(t, `INSERT INTO permission_grants (organisation_id, scope_type, scope_id, target_type, target_id, allow_mask, deny_mask) VALUES (10, 'project', 100, 'user', 4, 5, 0)`)
	site.exec(t, `DELETE FROM organisation_bans WHERE organisation_id = 10 AND user_id = 5`)
	site.exec(t, `INSERT INTO organisation_members (organisation_id, user_id, pending, joined_at) VALUES (10, 6, 1, `+ts+`)`) // awaiting approval
	site.exec(t, `INSERT INTO member_roles (organisation_id, user_id, role_id) VALUES (10, 6, 50)`)
	hub.at(t0.Add(time.Hour))

	exchange(t, site.s, hub.s, orgs, 3)
	exchange(t, hub.s, site.s, orgs, 3)
	// Person 6 is two decisions: the ban over the membership (when it
	// arrived), then the removal over the role given (in a later page).
	want := []string{
		`[ban_over_lift organisation_bans 5 0 {"unban":true}]`,
		`[ban_over_membership organisation_members 6 0 {"unban":true,"member":true,"pending":true}]`,
		`[removal_over_addition permission_grants 4 0 {"rows":[{"table":"permission_grants","cols":{"organisation_id":10,"scope_type":"project","scope_id":100,"target_type":"user","target_id":4,"allow_mask":5,"deny_mask":0}}]}]`,
		`[removal_over_role member_roles 3 0 {"member":true,"roles":[51]}]`,
		`[removal_over_role member_roles 6 0 {"member":true,"roles":[50]}]`,
		`[stricter_grant permission_grants 2 10 {"masks":{"scope_id":10,"target_id":2,"allow":7,"deny":2}}]`,
	}
	for _, n := range []*Store{hub.s, site.s} {
		got := dump(t, n, `SELECT col, tbl, row_id, other_id, undo FROM sync_conflicts WHERE kind = 'access' AND settled_at IS NULL ORDER BY col, row_id`)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("node %d: access conflicts\n%s\nwant\n%s", n.NodeID(), strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
	// The stricter rule held meanwhile.
	if got := dump(t, site.s, `SELECT allow_mask, deny_mask FROM permission_grants WHERE scope_id = 10 AND target_id = 2`); len(got) != 1 || got[0] != "[1 6]" {
		t.Fatalf("grant before undo: %v, want the stricter [1 6]", got)
	}

	// Every decision undone at the site, by its owner.
	site.at(t0.Add(2 * time.Hour))
	hub.at(t0.Add(2 * time.Hour))
	rows := dump(t, site.s, `SELECT id FROM sync_conflicts WHERE kind = 'access' ORDER BY id`) // the ban's undo before the role's
	for _, r := range rows {
		var id int64
		if _, err := fmt.Sscan(strings.Trim(r, "[]"), &id); err != nil {
			t.Fatal(err)
		}
		if err := undoDecision(ctx, site.s, id); err != nil {
			t.Fatalf("undo %d: %v", id, err)
		}
	}
	exchange(t, site.s, hub.s, orgs, 3)
	exchange(t, hub.s, site.s, orgs, 3)
	for _, n := range []*Store{hub.s, site.s} {
		for q, w := range map[string]string{
			`SELECT allow_mask, deny_mask FROM permission_grants WHERE scope_id = 10 AND target_id = 2`:        "[[7 2]]",
			`SELECT user_id, pending FROM organisation_members ORDER BY 1`:                                     "[[1 0] [2 0] [3 0] [4 0] [6 1]]",
			`SELECT user_id, role_id FROM member_roles ORDER BY 1`:                                             "[[3 51] [6 50]]",
			`SELECT allow_mask FROM permission_grants WHERE scope_id = 100 AND target_id = 4`:                  "[[5]]",
			`SELECT user_id FROM organisation_bans ORDER BY 1`:                                                 "[]",
			`SELECT count(*) FROM sync_conflicts WHERE kind = 'access' AND (undone = 0 OR settled_at IS NULL)`: "[[0]]",
			`SELECT count(*) FROM sync_conflicts WHERE kind = 'access'`:                                        "[[6]]",
		} {
			if got := "[" + strings.Join(dump(t, n, q), " ") + "]"; got != w {
				t.Errorf("node %d after undo: %s: %s, want %s", n.NodeID(), q, got, w)
			}
		}
	}
	if got := dump(t, hub.s, `SELECT count(*) FROM audit_log WHERE action = 'SYNC security'`); got[0] != "[6]" {
		t.Errorf("decisions audited: %v, want the 6 (no second decision over an undo)", got)
	}
}

// TestAccessUndoBlocked: an Undo whose change can no longer be made (the
// role deleted since, the person banned again) is refused in words and
// changes nothing; steps already true are passed over.
func TestAccessUndoBlocked(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t0 := time.Date(2026, 11, 28, 8, 0, 0, 0, time.UTC)
	const ts = `'2026-11-26T00:00:00.000Z'`
	hub, _ := twoNodes(t, t0, seedOrg+`
INSERT INTO users (id, email, created_at, updated_at) VALUES (2, 'b@example.com', `+ts+`, `+ts+`), (3, 'c@example.com', `+ts+`, `+ts+`);
INSERT INTO organisation_members (organisation_id, user_id, joined_at) VALUES (10, 1, `+ts+`), (10, 2, `+ts+`);
INSERT INTO roles (id, organisation_id, name, sort_order, created_at) VALUES (50, 10, 'Supervisor', 1, `+ts+`);
INSERT INTO organisation_bans (organisation_id, user_id, banned_at, banned_by) VALUES (10, 3, `+ts+`, 1);`)
	undo := func(person int64, u string) error {
		return hub.s.InTxSQL(ctx, func(tx *sql.Tx, q *Queries) error {
			return hub.s.ApplyAccessUndo(ctx, tx, q, 10, person, u, `2026-11-28T10:00:00.000Z`)
		})
	}
	for _, c := range []struct {
		person int64
		undo   string
		words  string
	}{
		{2, `{"member":true,"roles":[77]}`, "the role was deleted since"},
		{3, `{"member":true}`, "banned from the organisation now"},
		{99, `{"member":true}`, "account was deleted since"},
		{2, `{"masks":{"scope_id":10,"target_id":2,"allow":1,"deny":0}}`, "permissions were removed since"},
		{3, `{"roles":[50]}`, "no longer a member"},
	} {
		err := undo(c.person, c.undo)
		if !errors.Is(err, ErrUndoBlocked) || !strings.Contains(err.Error(), c.words) {
			t.Errorf("undo %s of %d: %v, want refused saying %q", c.undo, c.person, err, c.words)
		}
	}
	if got := dump(t, hub.s, `SELECT count(*) FROM member_roles`); got[0] != "[0]" {
		t.Errorf("a refused undo changed roles: %v", got)
	}
	// Already a member: only the role is given.
	if err := undo(2, `{"member":true,"roles":[50]}`); err != nil {
		t.Fatal(err)
	}
	if got := dump(t, hub.s, `SELECT user_id, role_id FROM member_roles`); len(got) != 1 || got[0] != "[2 50]" {
		t.Errorf("roles %v, want [2 50]", got)
	}
	// Another organisation's row is never put back.
	if err := undo(2, `{"rows":[{"table":"permission_grants","cols":{"organisation_id":11,"scope_type":"organisation","scope_id":11,"target_type":"user","target_id":2,"allow_mask":1,"deny_mask":0}}]}`); err == nil || !strings.Contains(err.Error(), "another organisation's row") {
		t.Errorf("an undo naming another organisation's grant: %v, want refused for it", err)
	}
}

// TestSyncConflictRecordsAreTheHubs: a laptop cannot make a conflict record
// at head office (its page is refused whole), nor change what a decision's
// Undo applies: of its edit of a record only the settlement is taken.
func TestSyncConflictRecordsAreTheHubs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t0 := time.Date(2026, 11, 28, 8, 0, 0, 0, time.UTC)
	const ts = `'2026-11-26T00:00:00.000Z'`
	hub, site := twoNodes(t, t0, seedOrg+`
INSERT INTO users (id, email, created_at, updated_at) VALUES (2, 'b@example.com', `+ts+`, `+ts+`);
INSERT INTO sync_conflicts (id, organisation_id, kind, tbl, col, row_id, other_id, value, renamed_to, created_at, undo)
  VALUES (900, 10, 'access', 'organisation_bans', 'ban_over_lift', 2, 0, '', '', `+ts+`, '{"unban":true}');`)
	orgs := []int64{10}
	site.at(t0.Add(time.Minute))
	site.exec(t, `INSERT INTO sync_conflicts (id, organisation_id, kind, tbl, col, row_id, other_id, value, renamed_to, created_at, undo)
  VALUES (901, 10, 'access', 'permission_grants', 'stricter_grant', 2, 10, '', '', `+ts+`,
  '{"rows":[{"table":"permission_grants","cols":{"organisation_id":10,"scope_type":"organisation","scope_id":10,"target_type":"user","target_id":2,"allow_mask":-1,"deny_mask":0}}]}')`)
	vector, err := hub.s.SyncVector(ctx)
	if err != nil {
		t.Fatal(err)
	}
	page, err := site.s.SyncChangesFor(ctx, vector, orgs, 100)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := hub.s.ApplySyncChanges(ctx, page, orgs); !errors.Is(err, ErrSyncRefused) {
		t.Fatalf("a conflict record made on a laptop: %v, want refused", err)
	}
	if got := dump(t, hub.s, `SELECT count(*) FROM sync_conflicts WHERE id = 901`); got[0] != "[0]" {
		t.Fatalf("the laptop's record is at head office: %v", got)
	}

	// The record taken out of the laptop's file and log; then its edit of
	// the hub's record.
	site.exec(t, `DELETE FROM sync_conflicts WHERE id = 901`)
	site.exec(t, `DELETE FROM sync_changes WHERE tbl = 'sync_conflicts' AND pk = '[901]'`)
	site.exec(t, `UPDATE sync_conflicts SET undo = '{"member":true}', settled_at = '2026-11-28T09:00:00.000Z', settled_by = 1 WHERE id = 900`)
	exchange(t, site.s, hub.s, orgs, 10)
	if got := dump(t, hub.s, `SELECT undo, settled_at, settled_by FROM sync_conflicts WHERE id = 900`); len(got) != 1 || got[0] != `[{"unban":true} 2026-11-28T09:00:00.000Z 1]` {
		t.Errorf("the hub's record after the laptop's edit: %v, want its undo kept and the settlement taken", got)
	}
}

// undoDecision is what the undo route does on s: the decision's change made
// and the decision settled as undone, in one transaction.
func undoDecision(ctx context.Context, s *Store, id int64) error {
	return s.InTxSQL(ctx, func(tx *sql.Tx, q *Queries) error {
		c, err := q.SyncConflictGet(ctx, SyncConflictGetParams{ID: id, OrganisationID: 10})
		if err != nil {
			return err
		}
		at, by := `2026-11-28T10:00:00.000Z`, int64(1)
		if err := s.ApplyAccessUndo(ctx, tx, q, 10, c.RowID, *c.Undo, at); err != nil {
			return err
		}
		_, err = q.SyncConflictUndone(ctx, SyncConflictUndoneParams{ID: id, OrganisationID: 10, SettledAt: &at, SettledBy: &by})
		return err
	})
}
