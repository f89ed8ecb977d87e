package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func openTest(t *testing.T) *Store {
	t.Helper()
	s, err := Open(context.Background(), Options{Path: fresh(t, filepath.Join(t.TempDir(), "tx.db")), Synchronous: "NORMAL", NodeID: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func metaKeys(t *testing.T, s *Store) map[string]bool {
	t.Helper()
	rows, err := s.Reader.Query(`SELECT key FROM meta WHERE key LIKE 'k%'`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	got := map[string]bool{}
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			t.Fatal(err)
		}
		got[k] = true
	}
	return got
}

func put(ctx context.Context, q *Queries, key string) error {
	return q.MetaPut(ctx, MetaPutParams{Key: key, Value: "v"})
}

// TestInTxGroupCommitIsolatesFailures: under concurrency, transactions that
// fail leave nothing behind and every acknowledged one is stored.
func TestInTxGroupCommitIsolatesFailures(t *testing.T) {
	t.Parallel()
	s := openTest(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make([]error, 200)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = s.InTx(ctx, func(q *Queries) error {
				if err := put(ctx, q, fmt.Sprintf("k%03d", i)); err != nil {
					return err
				}
				if i%3 == 0 {
					return fmt.Errorf("refused %d", i)
				}
				return nil
			})
		}()
	}
	wg.Wait()
	got := metaKeys(t, s)
	for i, err := range errs {
		key := fmt.Sprintf("k%03d", i)
		if (i%3 == 0) != (err != nil) {
			t.Fatalf("member %d: err %v", i, err)
		}
		if got[key] != (err == nil) {
			t.Errorf("member %d (err %v): stored %v", i, err, got[key])
		}
	}
}

func TestInTxPanicReachesCaller(t *testing.T) {
	t.Parallel()
	s := openTest(t)
	ctx := context.Background()
	func() {
		defer func() {
			if p := recover(); p != "boom" {
				t.Fatalf("recovered %v, want boom", p)
			}
		}()
		_ = s.InTx(ctx, func(q *Queries) error {
			_ = put(ctx, q, "kpanic")
			panic("boom")
		})
		t.Fatal("InTx returned instead of panicking")
	}()
	if err := s.InTx(ctx, func(q *Queries) error { return put(ctx, q, "kafter") }); err != nil {
		t.Fatalf("write after a panic: %v", err)
	}
	if got := metaKeys(t, s); got["kpanic"] || !got["kafter"] {
		t.Errorf("stored %v, want kafter only", got)
	}
}

// TestRunBatchAbortedTransaction: when SQLite rolls the shared transaction
// back under a member, no member run so far may be told it committed, and
// the members after it still run.
func TestRunBatchAbortedTransaction(t *testing.T) {
	t.Parallel()
	s := openTest(t)
	ctx := context.Background()
	mk := func(fn func(q *Queries) error) *writeRequest {
		return &writeRequest{ctx: ctx, fn: func(_ *sql.Tx, q *Queries) error { return fn(q) }, done: make(chan writeResult, 1)}
	}
	batch := []*writeRequest{
		mk(func(q *Queries) error { return put(ctx, q, "k1") }),
		mk(func(q *Queries) error {
			_ = put(ctx, q, "k2")
			_, err := q.db.ExecContext(ctx, "ROLLBACK") // what an interrupted statement does
			return err
		}),
		mk(func(q *Queries) error { return put(ctx, q, "k3") }),
	}
	done := make(chan struct{})
	go func() { s.runBatch(batch); close(done) }()
	r1, r2, r3 := <-batch[0].done, <-batch[1].done, <-batch[2].done
	<-done
	if !errors.Is(r1.err, errBatchAborted) {
		t.Errorf("member 1: err %v, want errBatchAborted", r1.err)
	}
	if !errors.Is(r2.err, errBatchAborted) {
		t.Errorf("member 2: err %v, want errBatchAborted", r2.err)
	}
	if r3.err != nil {
		t.Errorf("member 3: err %v, want it committed in a new batch", r3.err)
	}
	if got := metaKeys(t, s); got["k1"] || got["k2"] || !got["k3"] {
		t.Errorf("stored %v, want k3 only", got)
	}
}

func TestInTxCancelledBeforeRunning(t *testing.T) {
	t.Parallel()
	s := openTest(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := s.InTx(ctx, func(q *Queries) error { return put(context.Background(), q, "kcancel") })
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err %v, want context.Canceled", err)
	}
	if metaKeys(t, s)["kcancel"] {
		t.Errorf("a cancelled request wrote")
	}
}

// TestInTxAfterClose: a write racing the store's Close either commits
// (Close waits for it) or is refused with ErrClosed; none panics (a
// background job once outlived its server and sent on the closed queue).
func TestInTxAfterClose(t *testing.T) {
	s := openTest(t)
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- s.InTx(context.Background(), func(q *Queries) error { return put(context.Background(), q, fmt.Sprintf("kclose%d", i)) })
		}()
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil && !errors.Is(err, ErrClosed) {
			t.Errorf("a write racing Close: %v, want nil or ErrClosed", err)
		}
	}
	if err := s.InTx(context.Background(), func(q *Queries) error { return put(context.Background(), q, "klate") }); !errors.Is(err, ErrClosed) {
		t.Errorf("a write after Close: %v, want ErrClosed", err)
	}
}

// TestReadGeneration: the generation caches may use for a query handle is
// the current one for the reader pool, the one from before BEGIN for a read
// transaction (even after a write commits during it), none inside a write
// batch, and the generation is odd exactly while a batch runs.
func TestReadGeneration(t *testing.T) {
	t.Parallel()
	s := openTest(t)
	ctx := context.Background()
	write := func() {
		t.Helper()
		err := s.InTxSQL(ctx, func(tx *sql.Tx, q *Queries) error {
			if g := s.WriteGeneration(); g%2 != 1 {
				t.Errorf("generation %d is even inside a batch", g)
			}
			if _, ok := s.ReadGeneration(q); ok {
				t.Error("a write transaction's queries got a cache generation")
			}
			_, err := tx.Exec(`INSERT OR REPLACE INTO meta(key, value) VALUES ('kgen', 'x')`)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	write()
	before := s.WriteGeneration()
	if g, ok := s.ReadGeneration(s.R); !ok || g != before || g%2 != 0 {
		t.Fatalf("reader pool: %d %v, want %d (even)", g, ok, before)
	}
	err := s.ReadTx(ctx, func(q *Queries) error {
		write()
		if g, ok := s.ReadGeneration(q); !ok || g != before {
			t.Errorf("read transaction: %d %v, want the generation from before it began (%d)", g, ok, before)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if after := s.WriteGeneration(); after != before+2 {
		t.Errorf("one batch moved the generation from %d to %d, want +2", before, after)
	}
}

// TestExternalCommitMovesGeneration: a commit by another connection (another
// process writing the file) moves the write generation, still even, within
// a bounded time, so caches do not keep serving what it may have changed;
// the store's own commits move it by exactly two and are not counted twice.
func TestExternalCommitMovesGeneration(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "ext.db")
	s, err := Open(context.Background(), Options{Path: fresh(t, path), Synchronous: "NORMAL", NodeID: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	before := s.WriteGeneration()
	if err := s.InTx(context.Background(), func(q *Queries) error {
		return q.MetaPut(context.Background(), MetaPutParams{Key: "k-own", Value: "1"})
	}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * externalWritePoll) // the loop polls in between: its own commit is no news
	if got := s.WriteGeneration(); got != before+2 {
		t.Fatalf("own commit moved the generation from %d to %d, want %d", before, got, before+2)
	}
	other, err := sql.Open("sqlite", dsn(path, "NORMAL", false))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := other.Exec(`INSERT INTO meta (key, value) VALUES ('k-other', '1')`); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for s.WriteGeneration() == before+2 {
		if time.Now().After(deadline) {
			t.Fatal("another connection's commit never moved the generation")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if g := s.WriteGeneration(); g%2 != 0 {
		t.Fatalf("generation %d is odd outside a batch", g)
	}
}

// TestCancelledCallerCannotAbortOthers: a caller that goes away while its
// statement runs must not roll back the batch it shares with others. The
// driver would interrupt the statement on cancellation, and SQLite rolls
// back the whole transaction under an interrupted write, so the writer's
// statements run without the caller's cancellation.
func TestCancelledCallerCannotAbortOthers(t *testing.T) {
	t.Parallel()
	s := openTest(t)
	bg := context.Background()
	leaving, leave := context.WithCancel(bg)
	defer leave()
	before := s.WriterStamp(TableUsers)[1]
	batch := []*writeRequest{
		{ctx: bg, fn: func(_ *sql.Tx, q *Queries) error { return put(bg, q, "k-stays") }, done: make(chan writeResult, 1)},
		{ctx: leaving, fn: func(tx *sql.Tx, q *Queries) error {
			// The caller leaves once the statement has written its first
			// row (the writer's pre-update hook counts rows of users), and
			// the statement goes on for thousands more: the leaving lands
			// mid-statement on any machine, where a timer had to bet on
			// the statement's length (2,000,000 rows, 28 s under -race).
			go func() {
				for s.WriterStamp(TableUsers)[1] == before {
					time.Sleep(100 * time.Microsecond) // the poll interval
				}
				leave()
			}()
			_, err := tx.ExecContext(leaving, `WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 20000)
				INSERT INTO users (id, email, created_at, updated_at) SELECT 1000 + x, 'long' || x || '@example.com', 'x', 'x' FROM c`)
			return err
		}, done: make(chan writeResult, 1)},
	}
	done := make(chan struct{})
	go func() { s.runBatch(batch); close(done) }()
	stays := <-batch[0].done
	long := <-batch[1].done
	<-done
	if stays.err != nil {
		t.Fatalf("the member that stayed: %v", stays.err)
	}
	if !metaKeys(t, s)["k-stays"] {
		t.Fatal("the member that stayed was not committed")
	}
	// The statement that had begun ran to its end.
	if long.err != nil {
		t.Fatalf("the member whose caller left: %v", long.err)
	}
	if leaving.Err() == nil {
		t.Fatal("the caller never left")
	}
	var n int
	if err := s.Reader.QueryRow(`SELECT count(*) FROM users WHERE email LIKE 'long%'`).Scan(&n); err != nil || n != 20000 {
		t.Fatalf("%d rows of the long statement committed (%v), want 20000", n, err)
	}
}

// TestGroupCommitDiskFull: when the database cannot grow (max_page_count
// on the writer stands in for a full disk), every member of the shared
// transactions fails with an error IsDiskFull knows (never a bare "rolled
// back"), none of them is half-written, and the writer commits again as
// soon as there is room, with no restart.
func TestGroupCommitDiskFull(t *testing.T) {
	t.Parallel()
	s := openTest(t)
	ctx := context.Background()
	var pages int64
	if err := s.Writer.QueryRow(`PRAGMA page_count`).Scan(&pages); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Writer.Exec(fmt.Sprintf(`PRAGMA max_page_count = %d`, pages+4)); err != nil {
		t.Fatal(err)
	}
	big := string(make([]byte, 3000))
	var wg sync.WaitGroup
	errs := make([]error, 48)
	for i := range errs {
		wg.Go(func() {
			errs[i] = s.InTx(ctx, func(q *Queries) error {
				key := fmt.Sprintf("k%02d", i)
				if err := q.MetaPut(ctx, MetaPutParams{Key: key, Value: big}); err != nil {
					return err
				}
				return q.MetaPut(ctx, MetaPutParams{Key: key + "-pair", Value: big})
			})
		})
	}
	wg.Wait()
	full := 0
	for i, err := range errs {
		switch {
		case err == nil:
		case IsDiskFull(err):
			full++
		default:
			t.Errorf("member %d: %v, want a full-disk error or success", i, err)
		}
	}
	if full == 0 {
		t.Fatal("48 writes of 6 KB each fitted in 4 pages")
	}
	keys := metaKeys(t, s)
	for k := range keys {
		if base, ok := strings.CutSuffix(k, "-pair"); ok && !keys[base] || !ok && !keys[k+"-pair"] {
			t.Fatalf("half a transaction committed: %s", k)
		}
	}
	if _, err := s.Writer.Exec(`PRAGMA max_page_count = 1073741823`); err != nil {
		t.Fatal(err)
	}
	if err := s.InTx(ctx, func(q *Queries) error { return q.MetaPut(ctx, MetaPutParams{Key: "k-after", Value: big}) }); err != nil {
		t.Fatalf("after room returned: %v", err)
	}
	t.Logf("%d of 48 writes refused as disk full, %d committed", full, len(errs)-full)
}
