package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strconv"
)

// Grants and roles fail closed beyond presence (docs/sync.md, "Security
// state fails closed"): two offices that changed one grant's permission
// bits while apart end with the stricter result, and a role given to a
// person another office removed at the same time does not stay.

// grantMaskCols: how two concurrent values of a grant's masks combine:
// allowed only what both allow, denied what either denies.
var grantMaskCols = []struct {
	col     string
	combine func(a, b int64) int64
}{
	{"allow_mask", func(a, b int64) int64 { return a & b }},
	{"deny_mask", func(a, b int64) int64 { return a | b }},
}

// grantMasks, after an insert or update of a grant was applied: for each
// mask, the edits no other edit of the row saw (since its last delete)
// are its latest; when there are several (made apart, none knowing the
// others), the row gets their stricter combination instead of the later
// one. Every node computes the same from the log; the hub logs its result
// (an edit that saw them all, so it stands alone from then on) and writes
// the resolution to the audit trail.
func (s *Store) grantMasks(ctx context.Context, tx *sql.Tx, q *Queries, t *capTable, e SyncEntry) error {
	if t.name != "permission_grants" || (e.Op != "i" && e.Op != "u") {
		return nil
	}
	rows, err := q.SyncRowHistory(ctx, SyncRowHistoryParams{Tbl: t.name, Pk: e.Key})
	if err != nil {
		return err
	}
	start := 0
	for i, r := range rows {
		if r.Op == "d" {
			start = i + 1
		}
	}
	type edit struct {
		presenceEntry
		vals map[string]any
	}
	var edits []edit
	for _, r := range rows[start:] {
		if r.Cols == nil {
			continue
		}
		ed := edit{presenceEntry: presenceEntry{hlc: r.Hlc, origin: r.Origin, op: r.Op}}
		if r.Seen != nil {
			if err := json.Unmarshal([]byte(*r.Seen), &ed.seen); err != nil {
				return refuse("%s: bad seen: %v", t.name, err)
			}
		}
		if ed.vals, err = decodeCols(*r.Cols); err != nil {
			return refuse("%s: bad columns: %v", t.name, err)
		}
		edits = append(edits, ed)
	}
	key, err := decodeKey(e.Key, len(t.pk))
	if err != nil {
		return err
	}
	where, args := t.whereKey(key)
	changed := map[string]int64{}
	later := map[string]int64{} // each mask as the later of the edits apart gave it: what Undo restores
	for _, m := range grantMaskCols {
		var latest []int64
		var last *edit
		for i, x := range edits {
			v, ok := x.vals[m.col].(int64)
			if !ok {
				continue
			}
			seenByOther := false
			for j, y := range edits {
				if _, sets := y.vals[m.col]; j != i && sets && saw(y.presenceEntry, x.presenceEntry) {
					seenByOther = true
					break
				}
			}
			if !seenByOther {
				latest = append(latest, v)
				if last == nil || x.hlc > last.hlc || x.hlc == last.hlc && x.origin > last.origin {
					last = &edits[i]
				}
			}
		}
		if len(latest) < 2 {
			continue
		}
		later[m.col] = last.vals[m.col].(int64)
		want := latest[0]
		for _, v := range latest[1:] {
			want = m.combine(want, v)
		}
		var have int64
		err := tx.QueryRowContext(ctx, `SELECT `+quoteIdent(m.col)+` FROM `+quoteIdent(t.name)+where, args...).Scan(&have)
		if errors.Is(err, sql.ErrNoRows) {
			return nil // removed (a removal won)
		}
		if err != nil {
			return err
		}
		if have != want {
			changed[m.col] = want
		}
	}
	if len(changed) == 0 {
		return nil
	}
	undo := UndoMasks{}
	var targetType string
	if err := tx.QueryRowContext(ctx, `SELECT scope_id, target_id, target_type, allow_mask, deny_mask FROM permission_grants`+where, args...).
		Scan(&undo.ScopeID, &undo.TargetID, &targetType, &undo.Allow, &undo.Deny); err != nil {
		return err
	}
	if v, ok := later["allow_mask"]; ok {
		undo.Allow = v
	}
	if v, ok := later["deny_mask"]; ok {
		undo.Deny = v
	}
	b := []byte{'{'}
	for _, m := range grantMaskCols {
		v, ok := changed[m.col]
		if !ok {
			continue
		}
		if _, err := tx.ExecContext(ctx, `UPDATE `+quoteIdent(t.name)+` SET `+quoteIdent(m.col)+` = ?`+where, append([]any{v}, args...)...); err != nil {
			return err
		}
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = append(appendJSONString(b, m.col), ':')
		b = strconv.AppendInt(b, v, 10)
	}
	if !s.IsSyncHub() {
		return nil // the hub's result follows
	}
	cols := string(append(b, '}'))
	if err := s.logOwn(ctx, q, t.name, e.Key, "u", &cols, e.Org); err != nil {
		return err
	}
	var person int64
	if targetType == "user" {
		person = undo.TargetID
	}
	return s.accessDecision(ctx, tx, q, e, "two changes of one grant made at the same time: the stricter kept",
		DecisionStricterGrant, person, undo.ScopeID, AccessUndo{Masks: &undo})
}

// rolesNeedMembership, after a role was given or a membership removed: a
// person who is no member of the organisation holds no role in it, so a
// role given at one office to someone another office removed at the same
// time goes (the hub logs and audits it; a laptop follows quietly).
func (s *Store) rolesNeedMembership(ctx context.Context, tx *sql.Tx, q *Queries, e SyncEntry) error {
	var org, user any
	switch {
	case e.Table == "member_roles" && e.Op == "i":
		k, err := decodeKey(e.Key, 3)
		if err != nil {
			return err
		}
		org, user = k[0], k[1]
	case e.Table == "organisation_members" && (e.Op == "d" || e.Op == "i"):
		k, err := decodeKey(e.Key, 2)
		if err != nil {
			return err
		}
		org, user = k[0], k[1]
	default:
		return nil
	}
	var one int
	err := tx.QueryRowContext(ctx, `SELECT 1 FROM organisation_members WHERE organisation_id = ? AND user_id = ?`, org, user).Scan(&one)
	if err == nil {
		return nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	rt := (*s.changes.cap.tables.Load())["member_roles"]
	keys, err := s.rowKeys(ctx, tx, rt, "organisation_id = ? AND user_id = ?", org, user)
	if err != nil || len(keys) == 0 {
		return err
	}
	undo := AccessUndo{Member: true}
	for _, k := range keys {
		if !s.IsSyncHub() {
			where, args := rt.whereKey(k)
			if _, err := tx.ExecContext(ctx, `DELETE FROM member_roles`+where, args...); err != nil {
				return err
			}
			continue
		}
		if err := s.undoRow(ctx, tx, rt, k, &undo); err != nil {
			return err
		}
		if err := s.removeRow(ctx, tx, q, rt, k, e.Org); err != nil {
			return err
		}
	}
	person, _ := user.(int64)
	return s.accessDecision(ctx, tx, q, e, "a removal from the organisation made at the same time won over a role given",
		DecisionRemovalOverRole, person, 0, undo)
}
