package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
)

// The merge rules beyond the plain per-column one (docs/sync.md "Merge
// rules"): a parent deleted on one node while another added a child, and
// the node's own changes the rules make while applying a page.

// fkRef is one foreign key of a table to another table's primary key.
type fkRef struct {
	table, col, parent string
	notNull            bool
	onDelete           string // NO ACTION, RESTRICT, CASCADE, SET NULL, SET DEFAULT
}

// fkGraph: each table's references to parents, and each parent's
// referencing children.
type fkGraph struct {
	parents  map[string][]fkRef
	children map[string][]fkRef
}

// readFKGraph reads every table's single-column foreign keys to a primary key.
func readFKGraph(ctx context.Context, w *sql.DB) (*fkGraph, error) {
	g := &fkGraph{parents: map[string][]fkRef{}, children: map[string][]fkRef{}}
	rows, err := w.QueryContext(ctx, `SELECT m.name, f."from", f."table", coalesce(f."to", ''), f.on_delete,
		(SELECT c."notnull" FROM pragma_table_info(m.name) c WHERE c.name = f."from"),
		(SELECT count(*) FROM pragma_foreign_key_list(m.name) f2 WHERE f2.id = f.id)
	FROM sqlite_schema m, pragma_foreign_key_list(m.name) f
	WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%'`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var r fkRef
		var to string
		var notNull, parts int
		if err := rows.Scan(&r.table, &r.col, &r.parent, &to, &r.onDelete, &notNull, &parts); err != nil {
			return nil, err
		}
		if parts != 1 || (to != "" && to != "id") {
			continue // a composite key or a key other than the id: none of the replicated tables' references
		}
		r.notNull = notNull == 1
		r.onDelete = strings.ToUpper(r.onDelete)
		g.parents[r.table] = append(g.parents[r.table], r)
		g.children[r.parent] = append(g.children[r.parent], r)
	}
	return g, rows.Err()
}

// logOwn appends a change this node's rules made while applying a page
// (a cascade, a rename, a conflict record): it is this node's own entry,
// with its next clock, shipped to the others like any change made here.
func (s *Store) logOwn(ctx context.Context, q *Queries, table, pk, op string, cols *string, org *int64) error {
	var seen *string
	if SyncCatalogue[table].Rule == RuleSecurity {
		v, err := q.SyncReceived(ctx)
		if err != nil {
			return err
		}
		seen = seenJSON(v)
	}
	return q.SyncChangeAppend(ctx, SyncChangeAppendParams{Origin: s.NodeID(), Hlc: s.clock.next(), Org: org,
		Tbl: table, Pk: pk, Op: op, Cols: cols, Seen: seen})
}

// seenJSON is a security change's context: the clock this node holds of
// every other node's changes as it makes the change.
func seenJSON(v []SyncReceived) *string {
	b := []byte{'{'}
	for i, r := range v {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendQuote(b, strconv.FormatInt(r.Origin, 10))
		b = append(b, ':')
		b = strconv.AppendInt(b, r.Hlc, 10)
	}
	out := string(append(b, '}'))
	return &out
}

// parentGone tells whether a row's reference names a row that was here
// (or was sent here) and is gone: deleted here, or dropped with its own
// deleted parent. A reference to a row the log never knew is left to the
// foreign key, which refuses the page.
func (s *Store) parentGone(ctx context.Context, tx *sql.Tx, q *Queries, parent string, id any) (bool, error) {
	var one int
	err := tx.QueryRowContext(ctx, `SELECT 1 FROM `+quoteIdent(parent)+` WHERE id = ?`, id).Scan(&one)
	if err == nil {
		return false, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return false, err
	}
	known, err := q.SyncRowKnown(ctx, SyncRowKnownParams{Tbl: parent, Pk: string(appendValue([]byte{'['}, id)) + "]"})
	return known, err
}

// orphanRule applies the rule for a row whose change names a parent that
// is gone here (docs/sync.md): the delete wins. A required reference takes
// the row with its parent (dropped = true: the caller writes nothing); an
// optional one is cleared (the column is set to null in cols, and the
// clearing is logged as this node's change so every node ends the same).
func (s *Store) orphanRule(ctx context.Context, tx *sql.Tx, q *Queries, t *capTable, e SyncEntry, key []any, exists bool, cols map[string]any) (dropped bool, cleared []string, err error) {
	for _, fk := range s.fks.parents[t.name] {
		v, ok := cols[fk.col]
		if !ok || v == nil {
			continue
		}
		gone, err := s.parentGone(ctx, tx, q, fk.parent, v)
		if err != nil || !gone {
			if err != nil {
				return false, nil, err
			}
			continue
		}
		if fk.notNull {
			if exists {
				if err := s.removeRow(ctx, tx, q, t, key, e.Org); err != nil {
					return false, nil, err
				}
			} else if err := s.logOwn(ctx, q, t.name, e.Key, "d", nil, e.Org); err != nil {
				return false, nil, err
			}
			return true, nil, nil
		}
		cols[fk.col] = nil
		cleared = append(cleared, fk.col)
	}
	return false, cleared, nil
}

// logCleared logs the references orphanRule cleared in a row.
func (s *Store) logCleared(ctx context.Context, q *Queries, t *capTable, pk string, org *int64, cleared []string) error {
	if len(cleared) == 0 {
		return nil
	}
	b := []byte{'{'}
	for i, c := range cleared {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, c)
		b = append(b, ":null"...)
	}
	cols := string(append(b, '}'))
	return s.logOwn(ctx, q, t.name, pk, "u", &cols, org)
}

// releaseChildren makes way for a parent's delete: rows here that still
// name it (added on this node, or received, while another node deleted
// it) go with it when the reference is required, and are detached when it
// is optional. Each is logged as this node's change. Cascading and
// nulling foreign keys do their own work on every node.
func (s *Store) releaseChildren(ctx context.Context, tx *sql.Tx, q *Queries, parent string, id any, org *int64) error {
	tp := s.changes.cap.tables.Load()
	for _, fk := range s.fks.children[parent] {
		if fk.onDelete != "NO ACTION" && fk.onDelete != "RESTRICT" {
			continue
		}
		ct := (*tp)[fk.table]
		if ct == nil {
			// A node-local table: its rows follow without a log entry.
			stmt := `DELETE FROM ` + quoteIdent(fk.table) + ` WHERE ` + quoteIdent(fk.col) + ` = ?`
			if !fk.notNull {
				stmt = `UPDATE ` + quoteIdent(fk.table) + ` SET ` + quoteIdent(fk.col) + ` = NULL WHERE ` + quoteIdent(fk.col) + ` = ?`
			}
			if _, err := tx.ExecContext(ctx, stmt, id); err != nil {
				return err
			}
			continue
		}
		keys, err := s.rowKeys(ctx, tx, ct, quoteIdent(fk.col)+` = ?`, id)
		if err != nil {
			return err
		}
		for _, key := range keys {
			if fk.notNull {
				if err := s.removeRow(ctx, tx, q, ct, key, org); err != nil {
					return err
				}
				continue
			}
			where, args := ct.whereKey(key)
			if _, err := tx.ExecContext(ctx, `UPDATE `+quoteIdent(ct.name)+` SET `+quoteIdent(fk.col)+` = NULL`+where, args...); err != nil {
				return err
			}
			if err := s.logCleared(ctx, q, ct, ct.keyOfKey(key), org, []string{fk.col}); err != nil {
				return err
			}
		}
	}
	return nil
}

// removeRow deletes a row (after its own children) and logs the delete.
func (s *Store) removeRow(ctx context.Context, tx *sql.Tx, q *Queries, t *capTable, key []any, org *int64) error {
	if len(t.pk) == 1 && t.cols[t.pk[0]] == "id" {
		if err := s.releaseChildren(ctx, tx, q, t.name, key[0], org); err != nil {
			return err
		}
	}
	where, args := t.whereKey(key)
	if _, err := tx.ExecContext(ctx, `DELETE FROM `+quoteIdent(t.name)+where, args...); err != nil {
		return err
	}
	return s.logOwn(ctx, q, t.name, t.keyOfKey(key), "d", nil, org)
}

// rowKeys reads the primary keys of a table's rows matching a condition.
func (s *Store) rowKeys(ctx context.Context, tx *sql.Tx, t *capTable, cond string, args ...any) ([][]any, error) {
	names := make([]string, len(t.pk))
	for i, k := range t.pk {
		names[i] = quoteIdent(t.cols[k])
	}
	rows, err := tx.QueryContext(ctx, `SELECT `+strings.Join(names, ", ")+` FROM `+quoteIdent(t.name)+` WHERE `+cond, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out [][]any
	for rows.Next() {
		key := make([]any, len(t.pk))
		ptrs := make([]any, len(key))
		for i := range key {
			ptrs[i] = &key[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		out = append(out, key)
	}
	return out, rows.Err()
}

// keyOfKey is keyOf for the key's values alone.
func (t *capTable) keyOfKey(key []any) string {
	b := []byte{'['}
	for i, v := range key {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendValue(b, v)
	}
	return string(append(b, ']'))
}

// markDuplicate: an evidence row received while this node holds one of the
// same person and thing (signed on two nodes apart) is kept too, flagged
// for now as a duplicate of the one here; the page's recount
// (syncOrgRebuilds) then flags all but the first by id on every node alike.
func (s *Store) markDuplicate(ctx context.Context, tx *sql.Tx, t *capTable, cols map[string]any) error {
	key := SyncCatalogue[t.name].DuplicateKey
	if len(key) == 0 {
		return nil
	}
	conds := make([]string, len(key))
	args := make([]any, len(key))
	for i, c := range key {
		v := cols[c]
		if v == nil {
			return nil // a visitor, not a person with an account: no key
		}
		conds[i], args[i] = quoteIdent(c)+" = ?", v
	}
	var first int64
	err := tx.QueryRowContext(ctx, `SELECT id FROM `+quoteIdent(t.name)+` WHERE `+strings.Join(conds, " AND ")+
		` AND duplicate_of IS NULL`, args...).Scan(&first)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	cols["duplicate_of"] = first
	return nil
}

// IsSyncHub: this database is no one's clone (the hub, or a database that
// never synced). The hub settles what needs one judge: unique keys.
func (s *Store) IsSyncHub() bool { return s.auditNode.Load() == 0 }

// maxCodeLen is the longest code the API takes (projects, locations...):
// a renamed code keeps to it.
const maxCodeLen = 12

// maxDocKey is the longest branch name and tag label the API takes: a
// renamed one keeps to it.
const maxDocKey = 50

// resolveUnique (on the hub, after an entry was applied): when the row's
// unique key (a code) is now also another row's, and the two were given
// on different nodes, both rows stay and the later (by the clock of the
// change that gave the key, ties by node) is renamed with a visible
// suffix ("B7-2"), and a conflict record asks a person to settle it.
// Both are this node's own changes, shipped to every node. Only the hub
// judges: every laptop's changes pass through it, and two judges could
// rename one row twice. Rows one node gave one key are that node's
// person's choice, not a collision.
func (s *Store) resolveUnique(ctx context.Context, tx *sql.Tx, q *Queries, t *capTable, e SyncEntry) error {
	uk := SyncCatalogue[t.name].UniqueKey
	if len(uk) == 0 || !s.IsSyncHub() || len(t.pk) != 1 || e.Cols == nil {
		return nil
	}
	// Only a change that gives a key can make a collision.
	touched := false
	for _, c := range uk {
		touched = touched || strings.Contains(*e.Cols, `"`+c+`":`)
	}
	if !touched {
		return nil
	}
	key, err := decodeKey(e.Key, 1)
	if err != nil {
		return err
	}
	id, ok := key[0].(int64)
	if !ok {
		return nil
	}
	col := uk[len(uk)-1]
	sel := make([]string, len(uk))
	for i, c := range uk {
		sel[i] = quoteIdent(c)
	}
	vals := make([]any, len(uk))
	ptrs := make([]any, len(uk))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	err = tx.QueryRowContext(ctx, `SELECT `+strings.Join(sel, ", ")+` FROM `+quoteIdent(t.name)+` WHERE id = ?`, id).Scan(ptrs...)
	if errors.Is(err, sql.ErrNoRows) {
		return nil // dropped or deleted here
	}
	if err != nil {
		return err
	}
	value, _ := vals[len(vals)-1].(string)
	if value == "" {
		return nil
	}
	conds := make([]string, len(uk))
	for i := range uk {
		conds[i] = sel[i] + " = ?"
	}
	scope := strings.Join(conds, " AND ")
	others, err := s.rowKeys(ctx, tx, t, scope+` AND id <> ?`, append(append([]any{}, vals...), id)...)
	if err != nil {
		return err
	}
	stamp := func(id any) (SyncColumnStampRow, error) {
		st, err := q.SyncColumnStamp(ctx, SyncColumnStampParams{Tbl: t.name, Pk: t.keyOfKey([]any{id}), Col: col})
		if errors.Is(err, sql.ErrNoRows) {
			return st, nil // given before the log began
		}
		return st, err
	}
	mine, err := stamp(id)
	if err != nil {
		return err
	}
	for _, o := range others {
		theirs, err := stamp(o[0])
		if err != nil {
			return err
		}
		if theirs.Origin == mine.Origin {
			continue
		}
		later, kept := id, o[0].(int64)
		if theirs.Hlc > mine.Hlc || theirs.Hlc == mine.Hlc && theirs.Origin > mine.Origin {
			later, kept = kept, later
		}
		renamed, err := s.freeCode(ctx, tx, t, scope, vals, value)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE `+quoteIdent(t.name)+` SET `+quoteIdent(col)+` = ? WHERE id = ?`, renamed, later); err != nil {
			return err
		}
		cols := string(appendValue(append(appendJSONString([]byte{'{'}, col), ':'), renamed)) + "}"
		if err := s.logOwn(ctx, q, t.name, t.keyOfKey([]any{later}), "u", &cols, e.Org); err != nil {
			return err
		}
		if e.Org == nil {
			return nil
		}
		cid := s.IDs.Next()
		if err := q.SyncConflictCreate(ctx, SyncConflictCreateParams{ID: cid, OrganisationID: *e.Org, Kind: "unique", Tbl: t.name,
			Col: col, RowID: later, OtherID: kept, Value: value, RenamedTo: renamed, CreatedAt: FormatTime(s.clock.now())}); err != nil {
			return err
		}
		if err := s.logOwnRow(ctx, tx, q, "sync_conflicts", cid, e.Org); err != nil {
			return err
		}
		if later == id {
			return nil // this row has a key of its own now
		}
	}
	return nil
}

// freeCode is value with the first suffix "-2", "-3"... no row in the
// scope has, cut to the longest code the API takes.
func (s *Store) freeCode(ctx context.Context, tx *sql.Tx, t *capTable, scope string, vals []any, value string) (string, error) {
	return firstFreeSuffix(ctx, tx, `SELECT 1 FROM `+quoteIdent(t.name)+` WHERE `+scope+` LIMIT 1`, vals[:len(vals)-1], value, maxCodeLen)
}

// logOwnRow logs a row this node's rules made, whole, as an insert.
func (s *Store) logOwnRow(ctx context.Context, tx *sql.Tx, q *Queries, table string, id int64, org *int64) error {
	t := (*s.changes.cap.tables.Load())[table]
	vals, cols, err := readRow(ctx, tx, t, ` WHERE id = ?`, id)
	if err != nil {
		return err
	}
	text := string(cols)
	return s.logOwn(ctx, q, table, t.keyOf(vals), "i", &text, org)
}

// readRow reads one row of t whole: its values, and its shipped columns in
// the change log's encoding.
func readRow(ctx context.Context, tx *sql.Tx, t *capTable, where string, args ...any) ([]any, json.RawMessage, error) {
	vals := make([]any, len(t.cols))
	ptrs := make([]any, len(vals))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := tx.QueryRowContext(ctx, `SELECT * FROM `+quoteIdent(t.name)+where, args...).Scan(ptrs...); err != nil {
		return nil, nil, err
	}
	b := []byte{'{'}
	for i, c := range t.cols {
		if !t.ship[i] {
			continue
		}
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = append(appendJSONString(b, c), ':')
		b = appendValue(b, vals[i])
	}
	return vals, append(b, '}'), nil
}

// presenceEntry is an insert or delete of a row, with its maker's context.
type presenceEntry struct {
	hlc, origin int64
	op          string
	seen        map[string]int64
	cols        *string
}

// saw: whether x's maker held y when making x.
func saw(x, y presenceEntry) bool {
	if x.origin == y.origin {
		return y.hlc < x.hlc
	}
	return x.seen[strconv.FormatInt(y.origin, 10)] >= y.hlc
}

// securityPresent judges from the whole log whether a row of security
// state is there, failing closed (docs/sync.md): a removal (a member
// removed, a grant revoked, a share ended) wins over an add its maker had
// not seen: the row is there only when some add saw every removal. For a
// ban the add is the closing side: the ban is gone only when some unban
// saw every ban.
func securityPresent(entries []presenceEntry, addCloses bool) bool {
	adds, removes := []presenceEntry{}, []presenceEntry{}
	for _, e := range entries {
		if e.op == "i" {
			adds = append(adds, e)
		} else {
			removes = append(removes, e)
		}
	}
	if addCloses {
		for _, r := range removes {
			all := true
			for _, a := range adds {
				all = all && saw(r, a)
			}
			if all {
				return false
			}
		}
		return len(adds) > 0
	}
	for _, a := range adds {
		all := true
		for _, r := range removes {
			all = all && saw(a, r)
		}
		if all {
			return true
		}
	}
	return false
}

// securityRule, after an insert or delete of security state was applied
// by the plain rules, makes the row what the fail-closed judgement says:
// a row an unseen removal took is removed again, a ban an unseen unban
// lifted comes back. On the hub each such resolution is logged as its own
// change (so every node follows) and written to the organisation's audit
// trail; a laptop follows quietly until the hub's change arrives.
func (s *Store) securityRule(ctx context.Context, tx *sql.Tx, q *Queries, t *capTable, e SyncEntry) error {
	if err := s.securityPresence(ctx, tx, q, t, e); err != nil {
		return err
	}
	if err := s.grantMasks(ctx, tx, q, t, e); err != nil {
		return err
	}
	return s.rolesNeedMembership(ctx, tx, q, e)
}

// securityPresence: the fail-closed judgement of whether a row of security
// state is there (securityPresent), made real.
func (s *Store) securityPresence(ctx context.Context, tx *sql.Tx, q *Queries, t *capTable, e SyncEntry) error {
	if SyncCatalogue[t.name].Rule != RuleSecurity || (e.Op != "i" && e.Op != "d") || t.name == "organisations" {
		return nil
	}
	rows, err := q.SyncRowPresence(ctx, SyncRowPresenceParams{Tbl: t.name, Pk: e.Key})
	if err != nil {
		return err
	}
	entries := make([]presenceEntry, len(rows))
	for i, r := range rows {
		entries[i] = presenceEntry{hlc: r.Hlc, origin: r.Origin, op: r.Op, cols: r.Cols}
		if r.Seen != nil {
			if err := json.Unmarshal([]byte(*r.Seen), &entries[i].seen); err != nil {
				return refuse("%s: bad seen: %v", t.name, err)
			}
		}
	}
	bans := t.name == "organisation_bans"
	want := securityPresent(entries, bans)
	key, err := decodeKey(e.Key, len(t.pk))
	if err != nil {
		return err
	}
	where, args := t.whereKey(key)
	var one int
	err = tx.QueryRowContext(ctx, `SELECT 1 FROM `+quoteIdent(t.name)+where, args...).Scan(&one)
	exists := err == nil
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	hub := s.IsSyncHub()
	switch {
	case exists && !want:
		var undo AccessUndo
		if hub && !bans {
			if err := s.undoRow(ctx, tx, t, key, &undo); err != nil {
				return err
			}
		}
		if hub {
			if err := s.removeRow(ctx, tx, q, t, key, e.Org); err != nil {
				return err
			}
		} else if _, err := tx.ExecContext(ctx, `DELETE FROM `+quoteIdent(t.name)+where, args...); err != nil {
			return err
		}
		if bans {
			return nil
		}
		return s.accessDecision(ctx, tx, q, e, "a removal made at the same time won over an addition",
			DecisionRemovalOverAddition, personOf(t.name, key, undo), 0, undo)
	case !exists && want && bans:
		// The latest ban, back.
		var cols *string
		for _, en := range entries {
			if en.op == "i" {
				cols = en.cols
			}
		}
		if cols == nil {
			return nil
		}
		c, err := decodeCols(*cols)
		if err != nil {
			return err
		}
		names, marks, vals := []string{}, []string{}, []any{}
		for _, n := range t.cols {
			if v, ok := c[n]; ok {
				names, marks, vals = append(names, quoteIdent(n)), append(marks, "?"), append(vals, v)
			}
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO `+quoteIdent(t.name)+` (`+strings.Join(names, ", ")+`) VALUES (`+strings.Join(marks, ", ")+`)`, vals...); err != nil {
			return err
		}
		if hub {
			if err := s.logOwn(ctx, q, t.name, e.Key, "i", cols, e.Org); err != nil {
				return err
			}
		}
		person, _ := key[1].(int64)
		if err := s.accessDecision(ctx, tx, q, e, "a ban made at the same time won over lifting it",
			DecisionBanOverLift, person, 0, AccessUndo{Unban: true}); err != nil {
			return err
		}
		return s.banWins(ctx, tx, q, t, key, e)
	}
	if bans && e.Op == "i" {
		return s.banWins(ctx, tx, q, t, key, e)
	}
	if t.name == "organisation_members" && e.Op == "i" {
		// A membership arriving after a ban made at the same time.
		var banned int
		err := tx.QueryRowContext(ctx, `SELECT 1 FROM organisation_bans WHERE organisation_id = ? AND user_id = ?`, key[0], key[1]).Scan(&banned)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		return s.banWins(ctx, tx, q, t, key, e)
	}
	return nil
}

// banWins: a person banned on one node while another let them in (an
// invite accepted, a member added) is not a member: the membership and
// what came with it go, as a ban removes them.
func (s *Store) banWins(ctx context.Context, tx *sql.Tx, q *Queries, t *capTable, key []any, e SyncEntry) error {
	if !s.IsSyncHub() {
		return nil // the hub judges; its removals follow
	}
	org, user := key[0], key[1]
	tp := s.changes.cap.tables.Load()
	removed := false
	undo := AccessUndo{Unban: true}
	for _, c := range []struct{ table, cond string }{
		{"member_roles", "organisation_id = ? AND user_id = ?"},
		{"permission_grants", "organisation_id = ? AND target_type = 'user' AND target_id = ?"},
		{"organisation_members", "organisation_id = ? AND user_id = ?"},
	} {
		ct := (*tp)[c.table]
		keys, err := s.rowKeys(ctx, tx, ct, c.cond, org, user)
		if err != nil {
			return err
		}
		for _, k := range keys {
			if err := s.undoRow(ctx, tx, ct, k, &undo); err != nil {
				return err
			}
			if err := s.removeRow(ctx, tx, q, ct, k, e.Org); err != nil {
				return err
			}
			removed = true
		}
	}
	if !removed {
		return nil
	}
	person, _ := user.(int64)
	return s.accessDecision(ctx, tx, q, e, "a ban made at the same time won over a membership",
		DecisionBanOverMembership, person, 0, undo)
}

// auditResolution writes a resolution of the security rule to the
// organisation's audit trail (on the hub, which judges).
func (s *Store) auditResolution(ctx context.Context, tx *sql.Tx, q *Queries, e SyncEntry, what string) error {
	if !s.IsSyncHub() || e.Org == nil {
		return nil
	}
	targets, _ := json.Marshal(map[string]string{"table": e.Table, "key": e.Key})
	details, _ := json.Marshal(map[string]any{"values": map[string]string{"resolution": what}})
	id := s.IDs.Next()
	if err := s.AppendAudit(ctx, q, AuditLog{ID: id, Chain: *e.Org, OrganisationID: e.Org, Action: "SYNC security",
		TargetIds: string(targets), ChangedFields: "[]", CreatedAt: FormatTime(s.clock.now()), Details: string(details)}); err != nil {
		return err
	}
	// Written while the sync applies (no capture): logged here, so it
	// reaches every node like any audit entry.
	return s.logOwnRow(ctx, tx, q, "audit_log", id, e.Org)
}

// ownershipOnline: an organisation's owner changes only online, on the hub
// (docs/sync.md). A change of owned_by made on another node is not applied
// here: the hub applies the rest of the entry and logs the owner it keeps,
// so the node that changed it follows back, and audits the refusal.
// Elsewhere the entry applies as it is (only the hub's changes of owner
// reach a laptop, and a laptop's own are undone by the hub's answer).
func (s *Store) ownershipOnline(ctx context.Context, tx *sql.Tx, q *Queries, e SyncEntry) (SyncEntry, error) {
	if e.Table != "organisations" || e.Op != "u" || e.Cols == nil || !s.IsSyncHub() || e.Origin == s.NodeID() {
		return e, nil
	}
	cols, err := decodeCols(*e.Cols)
	if err != nil {
		return e, refuse("organisations: bad columns: %v", err)
	}
	if _, ok := cols["owned_by"]; !ok {
		return e, nil
	}
	key, err := decodeKey(e.Key, 1)
	if err != nil {
		return e, refuse("organisations: bad key: %v", err)
	}
	var owner int64
	if err := tx.QueryRowContext(ctx, `SELECT owned_by FROM organisations WHERE id = ?`, key[0]).Scan(&owner); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return e, nil
		}
		return e, err
	}
	delete(cols, "owned_by")
	b := []byte{'{'}
	for c, v := range cols {
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = appendJSONString(b, c)
		b = append(b, ':')
		b = appendValue(b, v)
	}
	rest := string(append(b, '}'))
	e.Cols = &rest
	kept := `{"owned_by":` + strconv.FormatInt(owner, 10) + `}`
	if err := s.logOwn(ctx, q, "organisations", e.Key, "u", &kept, e.Org); err != nil {
		return e, err
	}
	return e, s.auditResolution(ctx, tx, q, e, "an owner change made offline was refused: owners change only online")
}
