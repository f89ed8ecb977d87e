package db

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// SyncEntry is one change as it travels between nodes: a sync_changes row
// without the node-local sequence.
type SyncEntry struct {
	Origin int64   `json:"origin"`
	HLC    int64   `json:"hlc"`
	Org    *int64  `json:"org"`
	Table  string  `json:"table"`
	Key    string  `json:"key"`
	Op     string  `json:"op"`
	Cols   *string `json:"cols"`
	// Seen (security state only): what the maker held of each node's
	// changes, a JSON object of origin -> clock.
	Seen *string `json:"seen,omitempty"`
}

// ErrSyncRefused: a page broke a rule (an unknown table, a row of an
// organisation the exchange is not for, a malformed change) and none of it
// was applied.
var ErrSyncRefused = errors.New("sync page refused")

func refuse(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrSyncRefused, fmt.Sprintf(format, args...))
}

// SyncVector is what this node holds of each origin's changes: the highest
// clock received from it, and for itself its own clock (a node has all of
// its own changes).
func (s *Store) SyncVector(ctx context.Context) (map[int64]int64, error) {
	rows, err := s.R.SyncReceived(ctx)
	if err != nil {
		return nil, err
	}
	v := make(map[int64]int64, len(rows)+1)
	for _, r := range rows {
		v[r.Origin] = r.Hlc
	}
	v[s.NodeID()] = max(v[s.NodeID()], s.HLC())
	return v, nil
}

// SyncRecordClonedLog makes a copied database hold what its log holds:
// every other origin's entries in it count as received. A clone runs it
// once, with its new node id.
func (s *Store) SyncRecordClonedLog(ctx context.Context) error {
	err := s.InTxSQL(context.WithValue(ctx, noCaptureKey{}, true), func(tx *sql.Tx, q *Queries) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO meta(key, value) VALUES ('sync_clone', '1'), ('sync_node', ?)
			ON CONFLICT(key) DO UPDATE SET value = excluded.value`, s.NodeID()); err != nil {
			return err
		}
		return q.SyncReceivedRecordLog(ctx, s.NodeID())
	})
	if err == nil {
		// From now on the clone's audit entries go on chains of its own.
		s.auditNode.Store(s.NodeID())
	}
	return err
}

// SyncChangesFor returns up to limit entries of the organisations orgs that
// a node holding vector lacks, in clock order: applying them in that order,
// page after page, never applies a change before one it depends on, and a
// cut between pages leaves the receiver's vector exact.
func (s *Store) SyncChangesFor(ctx context.Context, vector map[int64]int64, orgs []int64, limit int) ([]SyncEntry, error) {
	own, err := s.SyncVector(ctx)
	if err != nil {
		return nil, err
	}
	minHLC, vb, ob := vectorArgs(own, vector, orgs)
	var out []SyncEntry
	err = s.ReadTxSQL(ctx, func(tx *sql.Tx, q *Queries) error {
		rows, err := q.SyncChangesAfter(ctx, SyncChangesAfterParams{MinHlc: minHLC, VectorJson: vb, OrgsJson: ob, PageSize: int64(limit)})
		if err != nil {
			return err
		}
		page := make([]SyncEntry, len(rows))
		for i, r := range rows {
			page[i] = SyncEntry{Origin: r.Origin, HLC: r.Hlc, Org: r.Org, Table: r.Tbl, Key: r.Pk, Op: r.Op, Cols: r.Cols, Seen: r.Seen}
		}
		snaps, err := s.accountSnapshots(ctx, tx, q, page, ob)
		if err != nil {
			return err
		}
		out = append(snaps, page...)
		return nil
	})
	return out, err
}

// accountSnapshots: the accounts a page's rows refer to (a creator, a
// member, an assignee) travel before it as snapshots (op "s": the row as
// it is, with the clock of its latest entry), so the receiver has them even
// when their own entries are older than what it holds (a person who joined
// after the clone) or were never sent (a person of no paired
// organisation). A person who is no member of the paired organisations
// travels without the password hash: they cannot sign in there.
func (s *Store) accountSnapshots(ctx context.Context, tx *sql.Tx, q *Queries, page []SyncEntry, orgsJSON string) ([]SyncEntry, error) {
	tp := s.changes.cap.tables.Load()
	users := (*tp)["users"]
	seen := map[int64]bool{}
	var ids []int64
	for _, e := range page {
		t := (*tp)[e.Table]
		if t == nil || e.Cols == nil || len(t.userRefs) == 0 {
			continue
		}
		cols, err := decodeCols(*e.Cols)
		if err != nil {
			return nil, err
		}
		for _, i := range t.userRefs {
			if id, ok := cols[t.cols[i]].(int64); ok && !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
	}
	var out []SyncEntry
	for _, id := range ids {
		vals := make([]any, len(users.cols))
		ptrs := make([]any, len(vals))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		err := tx.QueryRowContext(ctx, `SELECT * FROM users WHERE id = ?`, id).Scan(ptrs...)
		if errors.Is(err, sql.ErrNoRows) {
			continue // the entry's own constraint tells the receiver
		}
		if err != nil {
			return nil, err
		}
		member, err := q.SyncIsMember(ctx, SyncIsMemberParams{UserID: id, OrgsJson: orgsJSON})
		if err != nil {
			return nil, err
		}
		key := users.keyOf(vals)
		var origin, hlc int64
		latest, err := q.SyncRowLatest(ctx, SyncRowLatestParams{Tbl: "users", Pk: key})
		switch {
		case err == nil:
			origin, hlc = latest.Origin, latest.Hlc
		case !errors.Is(err, sql.ErrNoRows):
			return nil, err
		}
		b := []byte{'{'}
		for i, c := range users.cols {
			if c == "password_hash" && !member {
				continue
			}
			if len(b) > 1 {
				b = append(b, ',')
			}
			b = appendJSONString(b, c)
			b = append(b, ':')
			b = appendValue(b, vals[i])
		}
		cols := string(append(b, '}'))
		out = append(out, SyncEntry{Origin: origin, HLC: hlc, Table: "users", Key: key, Op: "s", Cols: &cols})
	}
	return out, nil
}

// ApplySyncChanges applies a page of another node's changes in one
// transaction, for the organisations orgs only: the whole page or nothing.
// An entry this node already holds (by its origin's clock) is skipped, so
// a page applied twice changes nothing. Each applied entry is kept in the
// log verbatim (the hub passes it on) and moves the clock past its own.
// The rows are written with plain SQL, so the triggers keep the derived
// tables as they do for local writes.
func (s *Store) ApplySyncChanges(ctx context.Context, page []SyncEntry, orgs []int64) (applied int, err error) {
	allowed := make(map[int64]bool, len(orgs))
	for _, o := range orgs {
		allowed[o] = true
	}
	tp := s.changes.cap.tables.Load()
	err = s.InTxSQL(context.WithValue(ctx, noCaptureKey{}, true), func(tx *sql.Tx, q *Queries) error {
		ctx := withTxStmts(ctx, tx)
		applied = 0
		vector, err := s.SyncVector(ctx)
		if err != nil {
			return err
		}
		// The vector is read outside this transaction; the write loop runs
		// one member at a time, so take this transaction's own view.
		rows, err := q.SyncReceived(ctx)
		if err != nil {
			return err
		}
		for _, r := range rows {
			vector[r.Origin] = r.Hlc
		}
		// Objects (chunks, blobs) arrive before their page (syncdocs.go).
		if err := s.checkPageObjects(ctx, q, page); err != nil {
			return err
		}
		prevHLC := int64(0)
		touched := map[string]map[int64]bool{} // table -> organisations
		// Branch heads a page moves are judged once per branch, after the
		// page's other rows (its revisions) are in, on the last head it
		// brings (docs/sync.md, "A long catch-up"): judging each move
		// alone merged a large document once per entry, and made a merge
		// revision for each. A move from another origin than the one
		// pending for its branch has the pending one judged first. Each
		// branch is judged where its last move is in the page's order.
		type headMove struct {
			i        int
			e        SyncEntry
			id, head int64
		}
		var heads []headMove
		headAt := map[int64]int{}
		judge := func(m headMove) error {
			if err := s.headRule(ctx, tx, q, m.e, m.id, m.head); err != nil {
				return fmt.Errorf("entry %d (%s %s): %w", m.i, m.e.Table, m.e.Key, err)
			}
			return nil
		}
		for i, e := range page {
			if e.Op == "s" {
				// An account snapshot: merged, not logged, the vector
				// unmoved (it is no entry of its origin's sequence).
				if e.Table != "users" || e.Org != nil {
					return refuse("entry %d: a snapshot of a %s row", i, e.Table)
				}
				if err := s.applyEntry(ctx, tx, q, (*tp)["users"], e, allowed); err != nil {
					return fmt.Errorf("entry %d (account %s): %w", i, e.Key, err)
				}
				continue
			}
			if e.Origin == s.NodeID() {
				continue // our own change, back from the hub
			}
			if e.HLC <= vector[e.Origin] {
				continue // already held
			}
			if e.HLC < prevHLC {
				return refuse("entry %d is out of clock order", i)
			}
			if s.IsSyncHub() && uint64(e.HLC) > s.clock.bound() {
				// Dated ahead of the hub's clock by more than the skew
				// allowed: taken, it would push every clock into the
				// future. (A site takes what the hub passes on: the hub's
				// clock is the reference.)
				return refuse("entry %d is dated %s, more than %s ahead of this computer's clock: the sending computer's clock is wrong",
					i, HLCTime(e.HLC).Format(time.RFC3339), MaxClockSkew)
			}
			prevHLC = e.HLC
			t := (*tp)[e.Table]
			if t == nil {
				return refuse("entry %d: table %q is not replicated", i, e.Table)
			}
			if e.Org == nil && e.Table == "users" {
				// An account of a member of the paired organisations (the
				// sender chose it by membership).
			} else if e.Org == nil || !allowed[*e.Org] {
				return refuse("entry %d: a %s row of an organisation this exchange is not for", i, e.Table)
			}
			// The rules may log this node's own changes while applying the
			// entry (a cascade, a rename): they must come after it.
			s.clock.observe(e.HLC)
			applyAs, err := s.ownershipOnline(ctx, tx, q, e)
			if err != nil {
				return fmt.Errorf("entry %d (%s %s): %w", i, e.Table, e.Key, err)
			}
			if applyAs, err = s.conflictsMadeByHub(applyAs); err != nil {
				return fmt.Errorf("entry %d (%s %s): %w", i, e.Table, e.Key, err)
			}
			// A branch head moves by its own rule (syncdocs.go).
			applyAs, branch, head, err := s.splitBranchHead(ctx, tx, applyAs)
			if err != nil {
				return fmt.Errorf("entry %d (%s %s): %w", i, e.Table, e.Key, err)
			}
			if err := s.applyEntry(ctx, tx, q, t, applyAs, allowed); err != nil {
				var se *sqlite.Error
				if errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_CONSTRAINT {
					// The page breaks a rule of the schema here: refused
					// whole, and the exchange may be tried again.
					return refuse("entry %d (%s %s) breaks a constraint: %v", i, e.Table, e.Key, err)
				}
				return fmt.Errorf("entry %d (%s %s): %w", i, e.Table, e.Key, err)
			}
			if err := q.SyncChangeAppend(ctx, SyncChangeAppendParams{Origin: e.Origin, Hlc: e.HLC, Org: e.Org,
				Tbl: e.Table, Pk: e.Key, Op: e.Op, Cols: e.Cols, Seen: e.Seen}); err != nil {
				return err
			}
			if err := s.securityRule(ctx, tx, q, t, e); err != nil {
				return fmt.Errorf("entry %d (%s %s): %w", i, e.Table, e.Key, err)
			}
			if branch != 0 {
				m := headMove{i: i, e: e, id: branch, head: head}
				if k, ok := headAt[branch]; !ok {
					headAt[branch] = len(heads)
					heads = append(heads, m)
				} else {
					if heads[k].e.Origin != e.Origin {
						if err := judge(heads[k]); err != nil {
							return err
						}
					}
					heads[k] = m
				}
			}
			if err := q.SyncReceivedSet(ctx, SyncReceivedSetParams{Origin: e.Origin, Hlc: e.HLC}); err != nil {
				return err
			}
			vector[e.Origin] = e.HLC
			if e.Op == "i" || e.Op == "u" {
				if err := s.resolveUnique(ctx, tx, q, t, e); err != nil {
					return fmt.Errorf("entry %d (%s %s): %w", i, e.Table, e.Key, err)
				}
			}
			applied++
			if e.Org != nil {
				if touched[e.Table] == nil {
					touched[e.Table] = map[int64]bool{}
				}
				touched[e.Table][*e.Org] = true
			}
		}
		// In the order of each branch's last move, as they were made (a
		// site branch moved before the main head it sets aside).
		slices.SortFunc(heads, func(a, b headMove) int { return a.i - b.i })
		for _, m := range heads {
			if err := judge(m); err != nil {
				return err
			}
		}
		// Counts the handlers keep (the triggers keep theirs as the rows
		// are written), recounted for the organisations the page touched.
		for _, r := range syncOrgRebuilds {
			done := map[int64]bool{}
			for _, table := range r.After {
				for org := range touched[table] {
					if done[org] {
						continue
					}
					done[org] = true
					if _, err := tx.ExecContext(ctx, r.SQL, org); err != nil {
						return fmt.Errorf("recount %v: %w", r.Columns, err)
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		return 0, err // none of the page was applied
	}
	return applied, nil
}

// applyEntry merges one change into its row. Plain records (and, until
// their own rules land, every other replicated kind): per column the later
// clock wins, ties by node id; a delete is a tombstone that wins over a
// concurrent edit (the row does not come back), a create after it is a new
// row. Evidence is append-only: a row already there is never overwritten.
// q is the transaction's queries (a WithTx per entry allocated about 5 KB
// of statements each, most of a catch-up's garbage).
func (s *Store) applyEntry(ctx context.Context, tx *sql.Tx, q *Queries, t *capTable, e SyncEntry, allowed map[int64]bool) error {
	key, err := decodeKey(e.Key, len(t.pk))
	if err != nil {
		return refuse("%s: bad key: %v", e.Table, err)
	}
	var cols map[string]any
	switch e.Op {
	case "i", "u", "s":
		if e.Cols == nil {
			return refuse("%s: a change without columns", e.Table)
		}
		if cols, err = decodeCols(*e.Cols); err != nil {
			return refuse("%s: bad columns: %v", e.Table, err)
		}
		for c := range cols {
			i := t.colIndex(c)
			if i < 0 || !t.ship[i] {
				return refuse("%s: unknown column %q", e.Table, c)
			}
			if i == t.orgCol {
				if o, ok := cols[c].(int64); !ok || e.Org == nil || o != *e.Org {
					return refuse("%s: the row's organisation is not the entry's", e.Table)
				}
			}
		}
		if e.Op != "u" {
			for n, k := range t.pk {
				if v, ok := cols[t.cols[k]]; !ok || !sameValue(v, key[n]) {
					return refuse("%s: the row's key is not the entry's", e.Table)
				}
			}
		}
	case "d":
	default:
		return refuse("%s: unknown operation %q", e.Table, e.Op)
	}

	// The row as this node has it: does it exist, and is it of an
	// organisation the exchange is for?
	where, whereArgs := t.whereKey(key)
	exists := false
	var rowOrg sql.NullInt64
	if t.orgCol >= 0 {
		err = txScanRow(ctx, tx, `SELECT `+quoteIdent(t.cols[t.orgCol])+` FROM `+quoteIdent(t.name)+where, whereArgs, &rowOrg)
	} else {
		var one int
		err = txScanRow(ctx, tx, `SELECT 1 FROM `+quoteIdent(t.name)+where, whereArgs, &one)
	}
	switch {
	case err == nil:
		exists = true
		if t.orgCol >= 0 && !allowed[rowOrg.Int64] {
			return refuse("%s: the row here is of an organisation this exchange is not for", e.Table)
		}
	case errors.Is(err, sql.ErrNoRows):
	default:
		return err
	}
	if t.via != nil && e.Op != "d" {
		if parent, ok := cols[t.cols[t.viaCol]]; ok {
			var o int64
			err := txScanRow(ctx, tx, `SELECT organisation_id FROM `+quoteIdent(t.via.Table)+` WHERE id = ?`, []any{parent}, &o)
			if err == nil && o != *e.Org {
				return refuse("%s: the parent row's organisation is not the entry's", e.Table)
			}
		}
	}

	// What this node changed of the row after the entry's clock (ties by
	// node id): those columns stay, a later delete keeps the row gone, a
	// later create keeps it.
	// An update left with no columns (a branch's head taken out by
	// splitBranchHead, which headRule decides) writes nothing whatever came
	// later: skip reading the row's later changes. The hub logs each head it
	// takes as its own, so a branch a site edited all month had thousands
	// of them, each read again for every head the site sent (BenchmarkSyncBusyMonth
	// spent 60% of its time there).
	var later []SyncRowLaterRow
	if e.Op != "u" || len(cols) > 0 {
		later, err = q.SyncRowLater(ctx, SyncRowLaterParams{Tbl: e.Table, Pk: e.Key, Hlc: e.HLC})
		if err != nil {
			return err
		}
	}
	kept := map[string]bool{}
	laterDelete, laterCreate := false, false
	for _, l := range later {
		if l.Hlc == e.HLC && l.Origin <= e.Origin {
			continue
		}
		switch l.Op {
		case "d":
			laterDelete = true
		case "i":
			laterCreate = true
			fallthrough
		case "u":
			if l.Cols != nil {
				lc, err := decodeCols(*l.Cols)
				if err != nil {
					return err
				}
				for c := range lc {
					kept[c] = true
				}
			}
		}
	}
	// The audit trail ships verbatim like evidence: each node's chains are
	// its own, so an entry never meets another one at its place.
	evidence := SyncCatalogue[t.name].Rule == RuleEvidence || SyncCatalogue[t.name].Rule == RuleAudit

	switch e.Op {
	case "d":
		if !exists || laterCreate {
			return nil
		}
		del := func() error {
			_, err := txExec(ctx, tx, `DELETE FROM `+quoteIdent(t.name)+where, whereArgs...)
			return err
		}
		err = del()
		if isForeignKeyError(err) && len(t.pk) == 1 && t.cols[t.pk[0]] == "id" {
			// Rows added here (or received) that still name it go with it.
			if err := s.releaseChildren(ctx, tx, q, t.name, key[0], e.Org); err != nil {
				return err
			}
			err = del()
		}
		return err
	case "u":
		if !exists {
			return nil // deleted here: the tombstone wins
		}
	case "i", "s":
		if !exists {
			if laterDelete {
				return nil
			}
			if err := s.markDuplicate(ctx, tx, t, cols); err != nil {
				return err
			}
			ins := func() error {
				names := make([]string, 0, len(cols))
				marks := make([]string, 0, len(cols))
				args := make([]any, 0, len(cols))
				for _, c := range t.cols {
					if v, ok := cols[c]; ok {
						names, marks, args = append(names, quoteIdent(c)), append(marks, "?"), append(args, v)
					}
				}
				_, err := txExec(ctx, tx, `INSERT INTO `+quoteIdent(t.name)+` (`+strings.Join(names, ", ")+`) VALUES (`+strings.Join(marks, ", ")+`)`, args...)
				return err
			}
			err := ins()
			if isUniqueError(err) {
				// A key an index keeps unique, given here too.
				retry, drop, rerr := s.indexKeyRule(ctx, tx, q, t, e, key, cols, allowed)
				if rerr != nil || drop {
					return rerr
				}
				if retry {
					err = ins()
				}
			}
			if !isForeignKeyError(err) {
				return err
			}
			// A child of a parent deleted here: the delete wins.
			dropped, cleared, oerr := s.orphanRule(ctx, tx, q, t, e, key, false, cols)
			if oerr != nil || dropped {
				return oerr
			}
			if len(cleared) == 0 {
				return err // not a deleted parent: the page breaks the key
			}
			if err := ins(); err != nil {
				return err
			}
			return s.logCleared(ctx, q, t, e.Key, e.Org, cleared)
		}
		if evidence {
			return nil // evidence is never overwritten
		}
	}
	write := make(map[string]any, len(cols))
	for c, v := range cols {
		if !kept[c] {
			write[c] = v
		}
	}
	upd := func() error {
		sets := make([]string, 0, len(write))
		args := make([]any, 0, len(write)+len(whereArgs))
		for _, c := range t.cols {
			v, ok := write[c]
			if !ok {
				continue
			}
			sets, args = append(sets, quoteIdent(c)+" = ?"), append(args, v)
		}
		if len(sets) == 0 {
			return nil
		}
		_, err := txExec(ctx, tx, `UPDATE `+quoteIdent(t.name)+` SET `+strings.Join(sets, ", ")+where, append(args, whereArgs...)...)
		return err
	}
	err = upd()
	if isUniqueError(err) {
		retry, drop, rerr := s.indexKeyRule(ctx, tx, q, t, e, key, write, allowed)
		if rerr != nil || drop {
			return rerr
		}
		if retry {
			err = upd()
		}
	}
	if !isForeignKeyError(err) {
		return err
	}
	// Moved under a parent deleted here: the delete wins.
	dropped, cleared, oerr := s.orphanRule(ctx, tx, q, t, e, key, true, write)
	if oerr != nil || dropped {
		return oerr
	}
	if len(cleared) == 0 {
		return err
	}
	if err := upd(); err != nil {
		return err
	}
	return s.logCleared(ctx, q, t, e.Key, e.Org, cleared)
}

// isForeignKeyError: a statement broke a foreign key (and was undone).
func isForeignKeyError(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code() == sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY
}

func (t *capTable) colIndex(name string) int {
	for i, c := range t.cols {
		if c == name {
			return i
		}
	}
	return -1
}

func (t *capTable) whereKey(key []any) (string, []any) {
	var b strings.Builder
	b.WriteString(" WHERE ")
	for n, k := range t.pk {
		if n > 0 {
			b.WriteString(" AND ")
		}
		b.WriteString(quoteIdent(t.cols[k]) + " = ?")
	}
	return b.String(), key
}

func decodeKey(s string, n int) ([]any, error) {
	var raw []json.RawMessage
	if err := json.Unmarshal([]byte(s), &raw); err != nil {
		return nil, err
	}
	if len(raw) != n {
		return nil, fmt.Errorf("%d key values, want %d", len(raw), n)
	}
	out := make([]any, n)
	for i, r := range raw {
		v, err := decodeValue(r)
		if err != nil {
			return nil, err
		}
		if v == nil {
			return nil, errors.New("a null key value")
		}
		out[i] = v
	}
	return out, nil
}

func decodeCols(s string) (map[string]any, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(s), &raw); err != nil {
		return nil, err
	}
	out := make(map[string]any, len(raw))
	for c, r := range raw {
		v, err := decodeValue(r)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c, err)
		}
		out[c] = v
	}
	return out, nil
}

// decodeValue reads what appendValue wrote.
func decodeValue(r json.RawMessage) (any, error) {
	r = bytes.TrimSpace(r)
	if len(r) == 0 {
		return nil, errors.New("empty value")
	}
	switch r[0] {
	case 'n':
		if string(r) != "null" {
			return nil, errors.New("bad value")
		}
		return nil, nil
	case '"':
		var s string
		err := json.Unmarshal(r, &s)
		return s, err
	case '{':
		var w struct {
			R *json.Number `json:"r"`
			X *string      `json:"x"`
		}
		d := json.NewDecoder(bytes.NewReader(r))
		d.UseNumber()
		if err := d.Decode(&w); err != nil {
			return nil, err
		}
		switch {
		case w.R != nil && w.X == nil:
			return strconv.ParseFloat(string(*w.R), 64)
		case w.X != nil && w.R == nil:
			return base64.StdEncoding.DecodeString(*w.X)
		}
		return nil, errors.New("bad typed value")
	default:
		return strconv.ParseInt(string(r), 10, 64)
	}
}

// vectorArgs gives a version vector query its arguments: the lowest clock the
// peer holds of every origin this node knows (entries at or below it are all
// there, so the index starts after it), the vector and the organisations as
// JSON.
func vectorArgs(own, vector map[int64]int64, orgs []int64) (minHLC int64, vectorJSON, orgsJSON string) {
	minHLC = int64(math.MaxInt64)
	for origin := range own {
		minHLC = min(minHLC, vector[origin])
	}
	vj := make(map[string]int64, len(vector))
	for o, h := range vector {
		vj[strconv.FormatInt(o, 10)] = h
	}
	vb, _ := json.Marshal(vj)
	if orgs == nil {
		orgs = []int64{}
	}
	ob, _ := json.Marshal(orgs)
	return minHLC, string(vb), string(ob)
}
