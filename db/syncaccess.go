package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Access decisions (docs/sync.md, "Security state fails closed"): when two
// offices changed someone's access opposite ways while apart, the hub keeps
// the stricter result and records it as a conflict of kind 'access' that
// carries the change that lost, so the organisation's owner can look at it
// and, if access was meant to be given, undo the decision in one click.

// The hub's access decisions, as sync_conflicts.col.
const (
	DecisionStricterGrant       = "stricter_grant"        // two changes of one grant: the stricter kept
	DecisionRemovalOverRole     = "removal_over_role"     // a removal from the organisation over a role given
	DecisionRemovalOverAddition = "removal_over_addition" // a removal over an addition (a member, role, grant, share…)
	DecisionBanOverLift         = "ban_over_lift"         // a ban over lifting it
	DecisionBanOverMembership   = "ban_over_membership"   // a ban over a membership
)

// AccessUndo is the change that lost an access decision, as the steps an
// owner's Undo takes, in this order: lift the ban, make the person a member
// again, give the roles, put the rows back, set the grant's permissions.
type AccessUndo struct {
	Unban  bool `json:"unban,omitempty"`
	Member bool `json:"member,omitempty"`
	// Pending: the membership taken was still waiting for approval, and
	// comes back waiting.
	Pending bool       `json:"pending,omitempty"`
	Roles   []int64    `json:"roles,omitempty"`
	Rows    []UndoRow  `json:"rows,omitempty"`
	Masks   *UndoMasks `json:"masks,omitempty"`
}

// UndoRow is a row the decision removed, in the change log's encoding.
type UndoRow struct {
	Table string          `json:"table"`
	Cols  json.RawMessage `json:"cols"`
}

// UndoMasks: the permissions the later of two grant changes gave.
type UndoMasks struct {
	ScopeID  int64 `json:"scope_id"`
	TargetID int64 `json:"target_id"`
	Allow    int64 `json:"allow"`
	Deny     int64 `json:"deny"`
}

// accessDecision writes a decision to the audit trail and, with what an
// Undo would apply, as an open conflict (on the hub, which judges; both
// are logged so every node lists them).
func (s *Store) accessDecision(ctx context.Context, tx *sql.Tx, q *Queries, e SyncEntry, what, decision string, person, other int64, undo AccessUndo) error {
	if err := s.auditResolution(ctx, tx, q, e, what); err != nil {
		return err
	}
	if !s.IsSyncHub() || e.Org == nil {
		return nil
	}
	b, err := json.Marshal(undo)
	if err != nil {
		return err
	}
	text := string(b)
	cid := s.IDs.Next()
	if err := q.SyncConflictCreate(ctx, SyncConflictCreateParams{ID: cid, OrganisationID: *e.Org, Kind: "access", Tbl: e.Table,
		Col: decision, RowID: person, OtherID: other, CreatedAt: FormatTime(s.clock.now()), Undo: &text}); err != nil {
		return err
	}
	return s.logOwnRow(ctx, tx, q, "sync_conflicts", cid, e.Org)
}

// undoRow is the undo step that puts a row back: a membership and a role
// given are steps of their own (the API's own writes), any other row of
// security state is put back whole.
func (s *Store) undoRow(ctx context.Context, tx *sql.Tx, t *capTable, key []any, u *AccessUndo) error {
	switch t.name {
	case "organisation_members":
		u.Member = true
		where, args := t.whereKey(key)
		return tx.QueryRowContext(ctx, `SELECT pending FROM organisation_members`+where, args...).Scan(&u.Pending)
	case "member_roles":
		if len(key) == 3 {
			if r, ok := key[2].(int64); ok {
				u.Roles = append(u.Roles, r)
				return nil
			}
		}
	}
	where, args := t.whereKey(key)
	_, cols, err := readRow(ctx, tx, t, where, args...)
	if err != nil {
		return err
	}
	u.Rows = append(u.Rows, UndoRow{Table: t.name, Cols: cols})
	return nil
}

// ErrUndoBlocked: an Undo whose change can no longer be made (what it needs
// was removed since); the message says what, in words.
var ErrUndoBlocked = errors.New("undo blocked")

// ApplyAccessUndo makes the change an access decision kept out, through
// this node's ordinary captured writes (so it is logged and reaches every
// office like any change an owner makes): steps already true are passed
// over; a step that can no longer be made refuses the whole Undo.
func (s *Store) ApplyAccessUndo(ctx context.Context, tx *sql.Tx, q *Queries, orgID, person int64, undoJSON string, now string) error {
	var u AccessUndo
	if err := json.Unmarshal([]byte(undoJSON), &u); err != nil {
		return fmt.Errorf("an access decision's undo: %w", err)
	}
	if u.Unban {
		if _, err := q.BanDelete(ctx, BanDeleteParams{OrganisationID: orgID, UserID: person}); err != nil {
			return err
		}
	}
	if u.Member {
		if n, err := q.BanExists(ctx, BanExistsParams{OrganisationID: orgID, UserID: person}); err != nil {
			return err
		} else if n > 0 {
			return fmt.Errorf("%w: the person is banned from the organisation now; lift the ban under Members first", ErrUndoBlocked)
		}
		var one int
		err := tx.QueryRowContext(ctx, `SELECT 1 FROM organisation_members WHERE organisation_id = ? AND user_id = ?`, orgID, person).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			var gone int
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM users WHERE id = ? AND deleted_at IS NULL`, person).Scan(&gone); err != nil {
				return err
			}
			if gone == 0 {
				return fmt.Errorf("%w: the person's account was deleted since", ErrUndoBlocked)
			}
			err = q.MemberCreate(ctx, MemberCreateParams{OrganisationID: orgID, UserID: person, Pending: u.Pending, JoinedAt: now})
		}
		if err != nil {
			return err
		}
	}
	for _, r := range u.Roles {
		var member, role int
		if err := tx.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM organisation_members WHERE organisation_id = ? AND user_id = ?),
			(SELECT count(*) FROM roles WHERE id = ? AND organisation_id = ?)`, orgID, person, r, orgID).Scan(&member, &role); err != nil {
			return err
		}
		if member == 0 {
			return fmt.Errorf("%w: the person is no longer a member; add them again under Members first", ErrUndoBlocked)
		}
		if role == 0 {
			return fmt.Errorf("%w: the role was deleted since", ErrUndoBlocked)
		}
		if err := q.MemberRoleAdd(ctx, MemberRoleAddParams{OrganisationID: orgID, UserID: person, RoleID: r}); err != nil {
			return err
		}
	}
	for _, r := range u.Rows {
		if err := s.restoreRow(ctx, tx, orgID, r); err != nil {
			return err
		}
	}
	if m := u.Masks; m != nil {
		res, err := tx.ExecContext(ctx, `UPDATE permission_grants SET allow_mask = ?, deny_mask = ? WHERE scope_id = ? AND target_id = ? AND organisation_id = ?`,
			m.Allow, m.Deny, m.ScopeID, m.TargetID, orgID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("%w: the permissions were removed since; give them again under Roles", ErrUndoBlocked)
		}
	}
	return nil
}

// restoreRow puts back a row of security state the decision removed, unless
// one with its key is there again.
func (s *Store) restoreRow(ctx context.Context, tx *sql.Tx, orgID int64, r UndoRow) error {
	t := (*s.changes.cap.tables.Load())[r.Table]
	if t == nil || SyncCatalogue[r.Table].Rule != RuleSecurity {
		return fmt.Errorf("an access decision's undo names %q", r.Table)
	}
	cols, err := decodeCols(string(r.Cols))
	if err != nil {
		return err
	}
	if o, ok := cols["organisation_id"]; ok && o != orgID {
		return fmt.Errorf("an access decision's undo names another organisation's row")
	}
	names, marks, vals := []string{}, []string{}, []any{}
	for _, n := range t.cols {
		if v, ok := cols[n]; ok {
			names, marks, vals = append(names, quoteIdent(n)), append(marks, "?"), append(vals, v)
		}
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO `+quoteIdent(t.name)+` (`+strings.Join(names, ", ")+`) VALUES (`+strings.Join(marks, ", ")+`) ON CONFLICT DO NOTHING`, vals...)
	if isForeignKeyError(err) {
		return fmt.Errorf("%w: something it was given for was removed since", ErrUndoBlocked)
	}
	return err
}

// personOf is the person a removed row of security state concerned, when
// it names one (a membership, a role given, a grant to them).
func personOf(table string, key []any, undo AccessUndo) int64 {
	switch table {
	case "organisation_members", "member_roles":
		if len(key) >= 2 {
			p, _ := key[1].(int64)
			return p
		}
	}
	for _, r := range undo.Rows {
		c, err := decodeCols(string(r.Cols))
		if err != nil {
			continue
		}
		if tt, _ := c["target_type"].(string); tt == "user" {
			p, _ := c["target_id"].(int64)
			return p
		}
		if p, ok := c["user_id"].(int64); ok {
			return p
		}
	}
	return 0
}

// conflictSettleCols are what another node may change of a conflict record:
// that a person settled it (or undid it), who and when.
var conflictSettleCols = map[string]bool{"settled_at": true, "settled_by": true, "undone": true}

// conflictsMadeByHub: on the hub, conflict records are the hub's alone (it
// judges; an access decision's undo is what an owner's click applies, so a
// laptop must not write one, or change what it applies). A record made or
// removed by another node is refused; another node's edit keeps only its
// settlement.
func (s *Store) conflictsMadeByHub(e SyncEntry) (SyncEntry, error) {
	if e.Table != "sync_conflicts" || !s.IsSyncHub() || e.Origin == s.NodeID() {
		return e, nil
	}
	if e.Op != "u" {
		return e, refuse("sync_conflicts: a conflict record made or removed elsewhere than head office")
	}
	if e.Cols == nil {
		return e, nil
	}
	cols, err := decodeCols(*e.Cols)
	if err != nil {
		return e, refuse("sync_conflicts: bad columns: %v", err)
	}
	b := []byte{'{'}
	for c, v := range cols {
		if !conflictSettleCols[c] {
			continue
		}
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = append(appendJSONString(b, c), ':')
		b = appendValue(b, v)
	}
	kept := string(append(b, '}'))
	e.Cols = &kept
	return e, nil
}
