package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Keys a database index keeps unique (docs/sync.md, "Keys an index keeps
// unique"). Two nodes apart can give two rows one such key: an account's
// e-mail address, an organisation's domain, one person's assignment to an
// induction, an option of an asset field. Applying the second row would
// break the index, and the page would be refused at every try. Each such
// key has a rule here (IndexKeyRule in the catalogue), judged alike on
// every node from the log: the row whose key was given later (by the clock
// of the change that gave it, ties by node) is the later one.
//   - Hold (e-mail addresses): both accounts stay, and neither is merged
//     into the other or renamed quietly: the later account's address is
//     held aside (its row reads a placeholder no mail reaches and nobody
//     can sign in with), the address itself is kept in a conflict record,
//     and a person settles it (gives that account another address, or
//     removes one of the accounts).
//   - Rename (a document's branch names and tag labels): both rows stay,
//     the later renamed with a free suffix ("draft-2"), as codes are.
//   - Otherwise the two rows say the same thing (one domain, one
//     assignment, one option): the earlier row stays, the later goes, and
//     a conflict record says so.
// The hub logs its resolution (so the node that made the later row
// follows) and lists the conflict; a laptop applies the same judgement
// without logging it, and the hub's change that follows changes nothing.

// IndexKeyRule is how a replicated table's index-enforced unique key is
// kept when two nodes gave it twice.
type IndexKeyRule struct {
	// Cols: the index's columns, the last one the key a person gave.
	Cols []string
	// Where: the index's condition (a partial index), SQL over the row.
	Where string
	// Held: the placeholder the later row's key becomes (nil: the later
	// row is removed instead).
	Held func(id int64) string
	// Rename: both rows are kept, as for codes (resolveUnique): the later
	// row's key gets the first free suffix "-2", "-3"..., cut to this many
	// characters (0: no rename). A branch name or a tag label given on one
	// document at two offices: each names different work.
	Rename int
}

// heldAddress is an account's address held aside: the .invalid domain
// (RFC 2606) never receives mail, and the id keeps it unique.
func heldAddress(id int64) string {
	return "held-" + strconv.FormatInt(id, 10) + "@sync.invalid"
}

// isUniqueError: a statement broke a UNIQUE index or constraint.
func isUniqueError(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE
}

// indexKeyRule, after the entry's row (row: the values being written,
// completed from the row here for an update) broke a unique index, applies
// the table's rule. retry: the write may be tried again (the key is free
// or row's key was held); drop: the entry's row is the later of two alike
// rows and is not kept. Neither: the error stands (no rule, or no other
// row holds the key: a bad page).
func (s *Store) indexKeyRule(ctx context.Context, tx *sql.Tx, q *Queries, t *capTable, e SyncEntry, key []any, row map[string]any,
	allowed map[int64]bool) (retry, drop bool, err error) {
	rule := SyncCatalogue[t.name].IndexKey
	if rule == nil || len(t.pk) != 1 || t.cols[t.pk[0]] != "id" || len(key) != 1 {
		return false, false, nil
	}
	id, ok := key[0].(int64)
	if !ok {
		return false, false, nil
	}
	conds := make([]string, 0, len(rule.Cols)+1)
	args := make([]any, 0, len(rule.Cols)+1)
	for _, c := range rule.Cols {
		v, ok := row[c]
		if !ok {
			if err := tx.QueryRowContext(ctx, `SELECT `+quoteIdent(c)+` FROM `+quoteIdent(t.name)+` WHERE id = ?`, id).Scan(&v); err != nil {
				return false, false, nil
			}
		}
		conds, args = append(conds, quoteIdent(c)+" = ?"), append(args, v)
	}
	if rule.Where != "" {
		conds = append(conds, rule.Where)
	}
	var other int64
	err = tx.QueryRowContext(ctx, `SELECT id FROM `+quoteIdent(t.name)+` WHERE `+strings.Join(conds, " AND ")+` AND id <> ? LIMIT 1`,
		append(args, id)...).Scan(&other)
	if errors.Is(err, sql.ErrNoRows) {
		return false, false, nil
	}
	if err != nil {
		return false, false, err
	}
	col := rule.Cols[len(rule.Cols)-1]
	st, err := q.SyncColumnStamp(ctx, SyncColumnStampParams{Tbl: t.name, Pk: t.keyOfKey([]any{other}), Col: col})
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return false, false, err
	}
	incomingLater := e.HLC > st.Hlc || e.HLC == st.Hlc && e.Origin > st.Origin
	later, kept := id, other
	if !incomingLater {
		later, kept = other, id
	}
	value, _ := args[len(rule.Cols)-1].(string)
	hub := s.IsSyncHub()
	org := e.Org
	if t.orgCol < 0 {
		org = nil
	}
	// logName logs (on the hub) the key column of row id as v; setLater
	// gives the later row v, in the entry when it is the later, and logs it.
	logName := func(id any, v string) error {
		if !hub {
			return nil
		}
		cols := string(appendValue(append(appendJSONString([]byte{'{'}, col), ':'), v)) + "}"
		return s.logOwn(ctx, q, t.name, t.keyOfKey([]any{id}), "u", &cols, org)
	}
	setLater := func(v string) error {
		if incomingLater {
			row[col] = v
		} else if _, err := tx.ExecContext(ctx, `UPDATE `+quoteIdent(t.name)+` SET `+quoteIdent(col)+` = ? WHERE id = ?`, v, later); err != nil {
			return err
		}
		return logName(later, v)
	}
	var resolution string
	switch {
	case rule.Held != nil:
		resolution = rule.Held(later)
		if err := setLater(resolution); err != nil {
			return false, false, err
		}
		retry = true
	case rule.Rename > 0:
		// Every node picks the first suffix free here; the hub's pick,
		// logged, is the one that stays (its change is the later).
		if resolution, err = freeKey(ctx, tx, t.name, rule, args, value, rule.Rename); err != nil {
			return false, false, err
		}
		// Both rows' names are logged on the hub, the renamed one's first:
		// a laptop that settled a collision its own way (its rows were not
		// the hub's at that moment) meets the hub's names of both later and
		// ends where the hub does.
		if err := setLater(resolution); err != nil {
			return false, false, err
		}
		if err := logName(kept, value); err != nil {
			return false, false, err
		}
		retry = true
	case incomingLater:
		// The entry's row is the later of two alike: not kept. A row here
		// (an update that made it alike) goes.
		if _, err := tx.ExecContext(ctx, `DELETE FROM `+quoteIdent(t.name)+` WHERE id = ?`, id); err != nil {
			return false, false, err
		}
		if hub {
			if err := s.logOwn(ctx, q, t.name, t.keyOfKey([]any{id}), "d", nil, org); err != nil {
				return false, false, err
			}
		}
		drop = true
	default:
		if hub {
			if err := s.removeRow(ctx, tx, q, t, []any{other}, org); err != nil {
				return false, false, err
			}
		} else if _, err := tx.ExecContext(ctx, `DELETE FROM `+quoteIdent(t.name)+` WHERE id = ?`, other); err != nil {
			return false, false, err
		}
		retry = true
	}
	if !hub {
		return retry, drop, nil
	}
	orgs, err := s.conflictOrgs(ctx, tx, e.Org, allowed, later, kept, t.name == "users")
	if err != nil {
		return false, false, err
	}
	for _, o := range orgs {
		cid := s.IDs.Next()
		if err := q.SyncConflictCreate(ctx, SyncConflictCreateParams{ID: cid, OrganisationID: o, Kind: "unique", Tbl: t.name,
			Col: col, RowID: later, OtherID: kept, Value: value, RenamedTo: resolution, CreatedAt: FormatTime(s.clock.now())}); err != nil {
			return false, false, err
		}
		if err := s.logOwnRow(ctx, tx, q, "sync_conflicts", cid, &o); err != nil {
			return false, false, err
		}
	}
	return retry, drop, nil
}

// freeKey is value with the first suffix "-2", "-3"... no row of the
// index's scope (args: the index's columns' values, the last the key) has,
// cut to max characters.
func freeKey(ctx context.Context, tx *sql.Tx, table string, rule *IndexKeyRule, args []any, value string, max int) (string, error) {
	conds := make([]string, 0, len(rule.Cols)+1)
	for _, c := range rule.Cols {
		conds = append(conds, quoteIdent(c)+" = ?")
	}
	if rule.Where != "" {
		conds = append(conds, rule.Where)
	}
	stmt := `SELECT 1 FROM ` + quoteIdent(table) + ` WHERE ` + strings.Join(conds, " AND ") + ` LIMIT 1`
	return firstFreeSuffix(ctx, tx, stmt, args[:len(rule.Cols)-1], value, max)
}

// firstFreeSuffix is value with the first suffix "-2", "-3"... for which
// taken (SELECT 1 ... LIMIT 1, the candidate its last argument after
// fixed) finds no row, cut to max characters.
func firstFreeSuffix(ctx context.Context, tx *sql.Tx, taken string, fixed []any, value string, max int) (string, error) {
	for n := 2; ; n++ {
		suffix := "-" + strconv.Itoa(n)
		base := value
		for utf8.RuneCountInString(base)+len(suffix) > max && base != "" {
			_, size := utf8.DecodeLastRuneInString(base)
			base = base[:len(base)-size]
		}
		cand := base + suffix
		var one int
		err := tx.QueryRowContext(ctx, taken, append(append([]any{}, fixed...), cand)...).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return cand, nil
		}
		if err != nil {
			return "", err
		}
	}
}

// conflictOrgs: the organisations whose owners see a conflict: the row's
// own, or for an account (no organisation) those of the exchange that
// either account is a member of (all of the exchange's when neither is
// yet).
func (s *Store) conflictOrgs(ctx context.Context, tx *sql.Tx, org *int64, allowed map[int64]bool, a, b int64, account bool) ([]int64, error) {
	if org != nil && !account {
		return []int64{*org}, nil
	}
	all := make([]int64, 0, len(allowed))
	for o := range allowed {
		all = append(all, o)
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	orgsJSON, _ := json.Marshal(all)
	rows, err := tx.QueryContext(ctx, `SELECT DISTINCT organisation_id FROM organisation_members WHERE user_id IN (?, ?)
		AND organisation_id IN (SELECT value FROM json_each(?)) ORDER BY 1`, a, b, string(orgsJSON))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var o int64
		if err := rows.Scan(&o); err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return all, nil
	}
	return out, nil
}
