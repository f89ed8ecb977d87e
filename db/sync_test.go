package db

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func openSyncStore(t *testing.T, path string, node int64, now func() time.Time) *Store {
	t.Helper()
	// Unprepared: preparing every query at Open was about a third of the
	// property test's CPU (three stores a case), and a sync test runs few
	// of them; the service and buildTemplate still prepare all. OFF: a
	// test's temp file needs no fsync.
	s, err := Open(context.Background(), Options{Path: fresh(t, path), Synchronous: "OFF", NodeID: node, Now: now, Unprepared: true})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func logOf(t *testing.T, s *Store) []SyncChange {
	t.Helper()
	rows, err := s.Reader.Query(`SELECT seq, origin, hlc, org, tbl, pk, op, cols FROM sync_changes ORDER BY seq`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []SyncChange
	for rows.Next() {
		var c SyncChange
		if err := rows.Scan(&c.Seq, &c.Origin, &c.Hlc, &c.Org, &c.Tbl, &c.Pk, &c.Op, &c.Cols); err != nil {
			t.Fatal(err)
		}
		out = append(out, c)
	}
	return out
}

// seedOrg writes a user, an organisation and a project in one transaction.
const seedOrg = `
INSERT INTO users (id, email, created_at, updated_at) VALUES (1, 'a@example.com', '2026-11-26T00:00:00.000Z', '2026-11-26T00:00:00.000Z');
INSERT INTO organisations (id, name, owned_by, created_at) VALUES (10, 'Acme', 1, '2026-11-26T00:00:00.000Z');
INSERT INTO projects (id, organisation_id, code, name, status, created_at, created_by) VALUES (100, 10, 'P1', 'Bridge', 'open', '2026-11-26T00:00:00.000Z', 1);
`

// TestSyncCaptureLogsReplicatedChanges: every change of a replicated row
// made through the store is in the log with this node's origin, in order of
// a rising clock, with the key, the organisation and only the changed
// columns; local and derived tables and trigger effects are not logged; a
// rolled-back member leaves no entry, and a write the sync applies itself
// is not logged again.
func TestSyncCaptureLogsReplicatedChanges(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openSyncStore(t, filepath.Join(t.TempDir(), "a.db"), 7, nil)
	defer s.Close()
	exec := func(tx *sql.Tx, q string, args ...any) error {
		_, err := tx.Exec(q, args...)
		return err
	}
	if err := s.InTxSQL(ctx, func(tx *sql.Tx, q *Queries) error {
		if err := exec(tx, seedOrg); err != nil {
			return err
		}
		// Local: never logged.
		return exec(tx, `INSERT INTO outbox (id, kind, recipient, subject, body, created_at) VALUES (1, 'email', 'a@example.com', 's', 'b', '2026-11-26T00:00:00.000Z')`)
	}); err != nil {
		t.Fatal(err)
	}
	got := logOf(t, s)
	want := []struct{ tbl, pk, op string }{{"users", "[1]", "i"}, {"organisations", "[10]", "i"}, {"projects", "[100]", "i"}}
	if len(got) != len(want) {
		t.Fatalf("log = %+v, want %d entries", got, len(want))
	}
	for i, w := range want {
		c := got[i]
		if c.Tbl != w.tbl || c.Pk != w.pk || c.Op != w.op || c.Origin != 7 {
			t.Errorf("entry %d = %s %s %s origin %d, want %s %s %s origin 7", i, c.Tbl, c.Pk, c.Op, c.Origin, w.tbl, w.pk, w.op)
		}
		if i > 0 && c.Hlc <= got[i-1].Hlc {
			t.Errorf("entry %d: clock %d not above %d", i, c.Hlc, got[i-1].Hlc)
		}
	}
	if got[2].Org == nil || *got[2].Org != 10 || got[1].Org == nil || *got[1].Org != 10 || got[0].Org != nil {
		t.Errorf("organisations: users %v, organisations %v, projects %v", got[0].Org, got[1].Org, got[2].Org)
	}
	// The insert carries every shipped column with its type, not the
	// derived counts.
	if c := *got[2].Cols; c != `{"id":100,"organisation_id":10,"code":"P1","name":"Bridge","description":"","readme":"","status":"open","created_at":"2026-11-26T00:00:00.000Z","created_by":1,"closed_at":null,"closed_by":null}` {
		t.Errorf("project insert cols = %s", c)
	}

	// An update logs only the columns it changed; the trigger's count
	// change of the project (a work item's) is not logged.
	if err := s.InTxSQL(ctx, func(tx *sql.Tx, q *Queries) error {
		return exec(tx, `UPDATE projects SET name = 'Bridge 2', description = description, status = 'closed' WHERE id = 100`)
	}); err != nil {
		t.Fatal(err)
	}
	got = logOf(t, s)
	if len(got) != 4 || got[3].Op != "u" || *got[3].Cols != `{"name":"Bridge 2","status":"closed"}` {
		t.Fatalf("after the update: %+v", got[len(got)-1])
	}

	// A failed member is rolled back with its entries.
	boom := errors.New("boom")
	if err := s.InTxSQL(ctx, func(tx *sql.Tx, q *Queries) error {
		if err := exec(tx, `UPDATE projects SET name = 'Lost' WHERE id = 100`); err != nil {
			return err
		}
		return boom
	}); !errors.Is(err, boom) {
		t.Fatal(err)
	}
	// Reals and blobs keep their type (a whole real comes as SQLite keeps
	// it, an integer, which the column's REAL affinity turns back into a
	// real wherever it is applied); a delete carries no columns.
	if err := s.InTxSQL(ctx, func(tx *sql.Tx, q *Queries) error {
		if err := exec(tx, `INSERT INTO locations (id, organisation_id, code, name, colour, latitude, longitude, radius, created_at) VALUES (5, 10, 'L', 'Yard', '', 1.0, -2.5, 3, '2026-11-26T00:00:00.000Z')`); err != nil {
			return err
		}
		if err := exec(tx, `INSERT INTO blobs (hash, content_type, size, data, created_at) VALUES ('h', 'image/png', 2, x'00ff', '2026-11-26T00:00:00.000Z')`); err != nil {
			return err
		}
		return exec(tx, `DELETE FROM projects WHERE id = 100`)
	}); err != nil {
		t.Fatal(err)
	}
	got = logOf(t, s)
	// The blob is not logged: objects move by hash (syncobjects.go); a
	// blob value's encoding is what a revision's hash travels in.
	if len(got) != 6 {
		t.Fatalf("log has %d entries, want 6: %+v", len(got), got)
	}
	if c := *got[4].Cols; c != `{"id":5,"organisation_id":10,"code":"L","name":"Yard","colour":"","latitude":1,"longitude":{"r":-2.5},"radius":3,"address":"","delivery":0,"timezone_code":null,"created_at":"2026-11-26T00:00:00.000Z"}` {
		t.Errorf("location insert cols = %s", c)
	}
	if b := appendValue(nil, []byte{0, 0xff}); string(b) != `{"x":"AP8="}` {
		t.Errorf("a blob value = %s", b)
	}
	if got[5].Op != "d" || got[5].Pk != "[100]" || got[5].Cols != nil {
		t.Errorf("delete = %+v", got[5])
	}

	// Writes the sync applies itself are not logged again.
	if err := s.InTxSQL(context.WithValue(ctx, noCaptureKey{}, true), func(tx *sql.Tx, q *Queries) error {
		return exec(tx, `UPDATE organisations SET name = 'Applied' WHERE id = 10`)
	}); err != nil {
		t.Fatal(err)
	}
	if n := len(logOf(t, s)); n != 6 {
		t.Errorf("an applied write was logged: %d entries", n)
	}
}

// TestSyncClockMonotonicAcrossRestarts: the clock keeps rising when the
// wall clock stands still, goes back, or the database is reopened with a
// wall clock set hours back.
func TestSyncClockMonotonicAcrossRestarts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "clock.db")
	wall := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	frozen := func() time.Time { return wall }
	s := openSyncStore(t, path, 3, frozen)
	write := func(s *Store, name string) {
		t.Helper()
		if err := s.InTxSQL(ctx, func(tx *sql.Tx, q *Queries) error {
			_, err := tx.Exec(`INSERT INTO users (email, first_name, created_at, updated_at) VALUES (? || '@example.com', 'n', '2026-11-26T00:00:00.000Z', '2026-11-26T00:00:00.000Z')`, name)
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	write(s, "a")
	write(s, "b")
	if s.HLC() != wall.UnixMilli()<<16+1 {
		t.Errorf("clock = %d, want the wall time's tick plus one (%d)", s.HLC(), wall.UnixMilli()<<16+1)
	}
	if !HLCTime(s.HLC()).Equal(wall) {
		t.Errorf("clock's time = %v", HLCTime(s.HLC()))
	}
	last := s.HLC()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// Reopened with the wall clock three hours back.
	s = openSyncStore(t, path, 3, func() time.Time { return wall.Add(-3 * time.Hour) })
	defer s.Close()
	if s.HLC() != last {
		t.Errorf("reopened: clock = %d, want %d", s.HLC(), last)
	}
	write(s, "c")
	log := logOf(t, s)
	for i := 1; i < len(log); i++ {
		if log[i].Hlc <= log[i-1].Hlc {
			t.Errorf("entry %d: clock %d after %d", i, log[i].Hlc, log[i-1].Hlc)
		}
	}
	if len(log) != 3 || log[2].Hlc != last+1 {
		t.Errorf("after the restart: %d entries, last clock %d, want %d", len(log), log[len(log)-1].Hlc, last+1)
	}
	// A clock received from another node moves this one past it (within
	// the allowed skew ahead of the wall clock: here set right again).
	s.SetClockOffset(3 * time.Hour)
	s.clock.observe(last + 1000)
	write(s, "d")
	if s.HLC() != last+1001 {
		t.Errorf("after observing a later clock: %d, want %d", s.HLC(), last+1001)
	}
}

// TestSyncClockAboveAnotherProcessesEntries: two stores on one file (the
// server and `workspace admin create`) share the node's origin; a change
// one makes after the other committed gets a later clock, so the origin's
// entries rise in commit order (what the version vector relies on).
func TestSyncClockAboveAnotherProcessesEntries(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "two.db")
	wall := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	frozen := func() time.Time { return wall }
	a := openSyncStore(t, path, 4, frozen)
	defer a.Close()
	b := openSyncStore(t, path, 4, frozen)
	defer b.Close()
	write := func(s *Store, email string) {
		t.Helper()
		if err := s.InTxSQL(ctx, func(tx *sql.Tx, q *Queries) error {
			_, err := tx.Exec(`INSERT INTO users (email, created_at, updated_at) VALUES (?, '2026-11-26T00:00:00.000Z', '2026-11-26T00:00:00.000Z')`, email)
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	write(a, "a1@example.com")
	write(a, "a2@example.com")
	write(b, "b1@example.com")
	write(a, "a3@example.com")
	log := logOf(t, a)
	if len(log) != 4 {
		t.Fatalf("%d entries", len(log))
	}
	for i := 1; i < len(log); i++ {
		if log[i].Hlc <= log[i-1].Hlc {
			t.Errorf("entry %d (seq %d): clock %d not above %d", i, log[i].Seq, log[i].Hlc, log[i-1].Hlc)
		}
	}
}

// TestSyncClockBounded: changes from a node whose clock is two hours
// ahead are refused (the page whole, with the reason), so they never push
// this node's clock into the future; once this node's clock reaches them
// they are taken. A node told its clock is off takes the corrected time
// for its next changes.
func TestSyncClockBounded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	wall := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	hubN := &syncNode{}
	hubN.at(wall)
	hubPath := filepath.Join(dir, "hub.db")
	hub := openSyncStore(t, hubPath, 1, hubN.clock())
	defer func() { hub.Close() }()
	if err := hub.InTxSQL(ctx, func(tx *sql.Tx, q *Queries) error {
		_, err := tx.Exec(seedOrg)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	sitePath := filepath.Join(dir, "site.db")
	if _, err := hub.Writer.ExecContext(ctx, `VACUUM INTO ?`, sitePath); err != nil {
		t.Fatal(err)
	}
	ahead := wall.Add(2 * time.Hour)
	site := openSyncStore(t, sitePath, 2, func() time.Time { return ahead })
	defer site.Close()
	if err := site.SyncRecordClonedLog(ctx); err != nil {
		t.Fatal(err)
	}
	rename := func(s *Store, name string) {
		t.Helper()
		if err := s.InTxSQL(ctx, func(tx *sql.Tx, q *Queries) error {
			_, err := tx.Exec(`UPDATE projects SET name = ? WHERE id = 100`, name)
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	rename(site, "From the future")
	vector, err := hub.SyncVector(ctx)
	if err != nil {
		t.Fatal(err)
	}
	page, err := site.SyncChangesFor(ctx, vector, []int64{10}, 10)
	if err != nil || len(page) == 0 {
		t.Fatalf("the site's page: %v %v", page, err)
	}
	before := hub.HLC()
	if _, err := hub.ApplySyncChanges(ctx, page, []int64{10}); !errors.Is(err, ErrSyncRefused) || !strings.Contains(err.Error(), "clock is wrong") {
		t.Fatalf("a page dated two hours ahead: %v", err)
	}
	if hub.HLC() != before {
		t.Fatalf("the refused page moved the hub's clock to %v", HLCTime(hub.HLC()))
	}
	if got := dump(t, hub, `SELECT name FROM projects WHERE id = 100`); got[0] != "[Bridge]" {
		t.Fatalf("the refused page changed %v", got)
	}
	// Two hours later at head office, the same changes are taken.
	hubN.at(ahead)
	if n, err := hub.ApplySyncChanges(ctx, page, []int64{10}); err != nil || n == 0 {
		t.Fatalf("the page once the hub's clock reached it: %d %v", n, err)
	}
	if got := dump(t, hub, `SELECT name FROM projects WHERE id = 100`); got[0] != "[From the future]" {
		t.Fatalf("after: %v", got)
	}
	// The site, told its clock is two hours ahead: counts on from its last
	// clock (never backwards); a node without changes ahead takes the
	// corrected time at once.
	site.SetClockOffset(-2 * time.Hour)
	last := site.HLC()
	rename(site, "Counted")
	if site.HLC() != last+1 {
		t.Fatalf("site clock %d after %d: want one tick on", site.HLC(), last)
	}
	fresh := openSyncStore(t, filepath.Join(dir, "fresh.db"), 3, func() time.Time { return ahead })
	defer fresh.Close()
	fresh.SetClockOffset(-2 * time.Hour)
	if err := fresh.InTxSQL(ctx, func(tx *sql.Tx, q *Queries) error {
		_, err := tx.Exec(`INSERT INTO users (email, created_at, updated_at) VALUES ('z@example.com', '2026-11-26T00:00:00.000Z', '2026-11-26T00:00:00.000Z')`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if got := HLCTime(fresh.HLC()); !got.Equal(wall) {
		t.Fatalf("a corrected clock dated its change %v, want %v", got, wall)
	}
}
