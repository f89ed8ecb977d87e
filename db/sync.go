package db

import (
	"context"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Change capture for offline sync (docs/sync.md). The writer connection's
// pre-update hook sees every row a write transaction changes; for a table
// the catalogue says is replicated it records the change (key, changed
// columns or delete), and when the member's work (and its audit entry)
// succeeded, runMember appends the recorded changes to sync_changes inside
// the member's savepoint, each with the next tick of the node's hybrid
// logical clock. So a change commits or rolls back with its log entry, and
// no handler can forget to log.

// capTable is what the hook needs of a replicated table.
type capTable struct {
	name   string
	cols   []string
	pk     []int  // column indexes of the primary key
	ship   []bool // false for derived columns
	orgCol int    // -1: none
	viaCol int    // -1: none; else the column whose parent row holds the organisation
	via    *OrgVia
	// userRefs are the columns referencing users(id): the accounts a
	// change needs on the node that applies it (SyncChangesFor).
	userRefs []int
}

type capturedChange struct {
	t      *capTable
	op     byte // 'i', 'u', 'd'
	pk     string
	cols   string // JSON object; "" for a delete
	org    *int64
	viaKey any
}

// capture is the hook's state. The hook runs in the goroutine running the
// statement: the write loop's, inside a member.
type capture struct {
	on     atomic.Bool
	tables atomic.Pointer[map[string]*capTable]
	buf    []capturedChange
	err    error
	// scratch rows reused between calls
	oldVals, newVals []any
}

func (c *capture) begin(on bool) {
	c.buf, c.err = c.buf[:0], nil
	c.on.Store(on)
}

func (c *capture) end() {
	c.on.Store(false)
	clear(c.buf)
	c.buf = c.buf[:0]
}

// preUpdate records one row change of a replicated table. Changes a
// trigger or a foreign key action makes (depth > 0) are not recorded: the
// same trigger or action runs on every node that applies the statement's
// own change.
func (c *capture) preUpdate(d *sqlite.SQLitePreUpdateData) {
	if !c.on.Load() {
		return
	}
	tp := c.tables.Load()
	if tp == nil {
		return
	}
	t := (*tp)[d.TableName]
	if t == nil || d.DatabaseName != "main" || d.Depth() > 0 {
		return
	}
	n := len(t.cols)
	if d.Count() != n {
		c.fail(fmt.Errorf("sync capture: %s has %d columns, the catalogue knows %d", t.name, d.Count(), n))
		return
	}
	var oldV, newV []any
	if d.Op != sqlite3.SQLITE_INSERT {
		c.oldVals = resize(c.oldVals, n)
		oldV = c.oldVals
		if err := d.Old(oldV...); err != nil {
			c.fail(err)
			return
		}
	}
	if d.Op != sqlite3.SQLITE_DELETE {
		c.newVals = resize(c.newVals, n)
		newV = c.newVals
		if err := d.New(newV...); err != nil {
			c.fail(err)
			return
		}
	}
	switch d.Op {
	case sqlite3.SQLITE_INSERT:
		c.add(t, 'i', newV, nil)
	case sqlite3.SQLITE_DELETE:
		c.add(t, 'd', oldV, nil)
	case sqlite3.SQLITE_UPDATE:
		if t.keyOf(oldV) != t.keyOf(newV) {
			// A new key is another row: the old one goes, the new one comes.
			c.add(t, 'd', oldV, nil)
			c.add(t, 'i', newV, nil)
			return
		}
		changed := false
		mask := make([]bool, n)
		for i := range n {
			if t.ship[i] && !sameValue(oldV[i], newV[i]) {
				mask[i], changed = true, true
			}
		}
		if changed {
			c.add(t, 'u', newV, mask)
		}
	}
}

func (c *capture) fail(err error) {
	if c.err == nil {
		c.err = err
	}
}

func resize(s []any, n int) []any {
	if cap(s) < n {
		return make([]any, n)
	}
	s = s[:n]
	clear(s)
	return s
}

func (c *capture) add(t *capTable, op byte, row []any, mask []bool) {
	ch := capturedChange{t: t, op: op, pk: t.keyOf(row)}
	if t.orgCol >= 0 {
		if v, ok := row[t.orgCol].(int64); ok {
			ch.org = &v
		}
	}
	if t.viaCol >= 0 {
		ch.viaKey = row[t.viaCol]
	}
	if op != 'd' {
		b := make([]byte, 0, 256)
		b = append(b, '{')
		first := true
		for i, v := range row {
			if !t.ship[i] || (mask != nil && !mask[i]) {
				continue
			}
			if !first {
				b = append(b, ',')
			}
			first = false
			b = appendJSONString(b, t.cols[i])
			b = append(b, ':')
			b = appendValue(b, v)
		}
		ch.cols = string(append(b, '}'))
	}
	c.buf = append(c.buf, ch)
}

func (t *capTable) keyOf(row []any) string {
	b := make([]byte, 0, 32)
	b = append(b, '[')
	for i, k := range t.pk {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendValue(b, row[k])
	}
	return string(append(b, ']'))
}

func sameValue(a, b any) bool {
	switch x := a.(type) {
	case []byte:
		y, ok := b.([]byte)
		return ok && string(x) == string(y)
	default:
		return a == b
	}
}

// appendValue writes a column value as JSON keeping SQLite's type: an
// integer as a number, text as a string, a real as {"r":…} and a blob as
// {"x":base64}, so a change applied elsewhere stores the same value.
func appendValue(b []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...)
	case int64:
		return strconv.AppendInt(b, x, 10)
	case float64:
		b = append(b, `{"r":`...)
		b = strconv.AppendFloat(b, x, 'g', -1, 64)
		return append(b, '}')
	case string:
		return appendJSONString(b, x)
	case []byte:
		b = append(b, `{"x":"`...)
		b = base64.StdEncoding.AppendEncode(b, x)
		return append(b, `"}`...)
	case bool: // not from SQLite, but from callers building keys
		if x {
			return append(b, '1')
		}
		return append(b, '0')
	default:
		panic(fmt.Sprintf("sync: value of type %T", v))
	}
}

func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c < 0x20:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, `\ufffd`...)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}

// hlcClock is the node's hybrid logical clock: milliseconds of wall time
// shifted left 16 bits, plus a counter for ticks within one millisecond or
// while the wall clock is behind. It never goes backwards: it starts above
// every clock in the log (its own and those received), and a wall clock
// set back only slows it to counting.
type hlcClock struct {
	mu   sync.Mutex
	last uint64
	now  func() time.Time
	// offset corrects the wall clock by what the hub said of it (a site
	// whose clock is off: SetClockOffset).
	offset atomic.Int64
}

// MaxClockSkew is how far ahead of the hub's wall clock a change it takes
// may be dated (docs/sync.md, "The clock"): a node whose clock is far
// ahead cannot push every node's clock into the future.
const MaxClockSkew = 5 * time.Minute

func (h *hlcClock) wall() time.Time { return h.now().Add(time.Duration(h.offset.Load())) }

// bound is the latest clock the hub takes from another node.
func (h *hlcClock) bound() uint64 {
	return uint64(h.wall().Add(MaxClockSkew).UnixMilli())<<16 | 0xffff
}

// SetClockOffset corrects this node's wall clock by d for its clock from
// now on (the hub's time minus this node's, learnt at an exchange). The
// clock still never goes backwards: with the node's clock ahead, it counts
// on from its last value until the corrected time passes it.
func (s *Store) SetClockOffset(d time.Duration) { s.clock.offset.Store(int64(d)) }

// HLCTime is the wall time part of a clock value.
func HLCTime(h int64) time.Time { return time.UnixMilli(h >> 16).UTC() }

func (h *hlcClock) next() int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	pt := uint64(h.wall().UnixMilli()) << 16
	if pt > h.last {
		h.last = pt
	} else {
		h.last++
	}
	return int64(h.last)
}

// observe moves the clock past a clock received from another node. (The
// hub takes no change dated further ahead of its clock than MaxClockSkew:
// ApplySyncChanges refuses it, so no node pushes the clocks far ahead.)
func (h *hlcClock) observe(remote int64) {
	h.mu.Lock()
	if uint64(remote) > h.last {
		h.last = uint64(remote)
	}
	h.mu.Unlock()
}

// HLC is the clock's last value (0 before any change).
func (s *Store) HLC() int64 {
	s.clock.mu.Lock()
	defer s.clock.mu.Unlock()
	return int64(s.clock.last)
}

// NodeID is this database's node id: the origin of the changes it makes.
func (s *Store) NodeID() int64 { return s.IDs.node }

// initSync reads the replicated tables' columns and starts the clock above
// every clock in the database.
func (s *Store) initSync(ctx context.Context, now func() time.Time) error {
	if now == nil {
		now = time.Now
	}
	tables := map[string]*capTable{}
	var err error
	for name, p := range SyncCatalogue {
		if p.Policy != Replicated || p.Objects {
			continue
		}
		t, err := readCapTable(ctx, s.Writer, name, p)
		if err != nil {
			return err
		}
		if t != nil {
			tables[name] = t
		}
	}
	s.changes.cap.tables.Store(&tables)
	if s.fks, err = readFKGraph(ctx, s.Writer); err != nil {
		return err
	}
	own, err := s.w.SyncLastHLC(ctx)
	if err != nil {
		return err
	}
	received, err := s.w.SyncLastReceived(ctx)
	if err != nil {
		return err
	}
	var clone string
	err = s.Writer.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'sync_clone'`).Scan(&clone)
	switch {
	case err == nil:
		s.auditNode.Store(s.NodeID())
	case !errors.Is(err, sql.ErrNoRows):
		return err
	}
	s.clock = &hlcClock{now: now, last: uint64(max(own, received))}
	return nil
}

func readCapTable(ctx context.Context, w *sql.DB, name string, p TablePolicy) (*capTable, error) {
	rows, err := w.QueryContext(ctx, `SELECT name, pk FROM pragma_table_info(?) ORDER BY cid`, name)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	t := &capTable{name: name, orgCol: -1, viaCol: -1, via: p.OrgVia}
	pkAt := map[int]int{}
	for rows.Next() {
		var col string
		var pk int
		if err := rows.Scan(&col, &pk); err != nil {
			return nil, err
		}
		i := len(t.cols)
		t.cols = append(t.cols, col)
		ship := true
		for _, d := range p.DerivedColumns {
			ship = ship && d != col
		}
		t.ship = append(t.ship, ship)
		if pk > 0 {
			pkAt[pk] = i
		}
		if p.Org != "" && col == p.Org {
			t.orgCol = i
		}
		if p.OrgVia != nil && col == p.OrgVia.Column {
			t.viaCol = i
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(t.cols) == 0 {
		return nil, nil // declared ahead of its migration
	}
	fks, err := w.QueryContext(ctx, `SELECT "from" FROM pragma_foreign_key_list(?) WHERE "table" = 'users'`, name)
	if err != nil {
		return nil, err
	}
	defer fks.Close()
	for fks.Next() {
		var col string
		if err := fks.Scan(&col); err != nil {
			return nil, err
		}
		if i := t.colIndex(col); i >= 0 {
			t.userRefs = append(t.userRefs, i)
		}
	}
	if err := fks.Err(); err != nil {
		return nil, err
	}
	for k := 1; k <= len(pkAt); k++ {
		t.pk = append(t.pk, pkAt[k])
	}
	if len(t.pk) == 0 {
		return nil, fmt.Errorf("sync: replicated table %s has no primary key", name)
	}
	if p.Org != "" && t.orgCol < 0 || p.OrgVia != nil && t.viaCol < 0 {
		return nil, fmt.Errorf("sync: table %s lacks the organisation column its policy names", name)
	}
	return t, nil
}

// flushChanges appends the member's recorded changes to the log.
func (s *Store) flushChanges(ctx context.Context, tx *sql.Tx, q *Queries) error {
	c := &s.changes.cap
	if c.err != nil {
		return c.err
	}
	if len(c.buf) == 0 {
		return nil
	}
	if s.clockStale.Swap(false) {
		last, err := q.SyncLastHLC(ctx)
		if err != nil {
			s.clockStale.Store(true)
			return err
		}
		s.clock.observe(last)
	}
	origin := s.NodeID()
	var seen *string
	for i := range c.buf {
		if SyncCatalogue[c.buf[i].t.name].Rule == RuleSecurity {
			v, err := q.SyncReceived(ctx)
			if err != nil {
				return err
			}
			seen = seenJSON(v)
			break
		}
	}
	for i := range c.buf {
		ch := &c.buf[i]
		org := ch.org
		if ch.t.via != nil && ch.viaKey != nil {
			var o int64
			err := tx.QueryRowContext(ctx, `SELECT organisation_id FROM `+quoteIdent(ch.t.via.Table)+` WHERE id = ?`, ch.viaKey).Scan(&o)
			if err == nil {
				org = &o
			} else if !errors.Is(err, sql.ErrNoRows) {
				return err
			}
		}
		var cols *string
		if ch.op != 'd' {
			cols = &ch.cols
		}
		var sn *string
		if SyncCatalogue[ch.t.name].Rule == RuleSecurity {
			sn = seen
		}
		if err := q.SyncChangeAppend(ctx, SyncChangeAppendParams{Origin: origin, Hlc: s.clock.next(), Org: org,
			Tbl: ch.t.name, Pk: ch.pk, Op: string(ch.op), Cols: cols, Seen: sn}); err != nil {
			return err
		}
	}
	return nil
}

func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

type noCaptureKey struct{}
