package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// Options says how to open the database file.
type Options struct {
	Path string
	// Synchronous is FULL unless relaxed: site laptops lose power, and with
	// NORMAL the last commits can vanish (never corrupt) on power loss.
	Synchronous string
	// NodeID overrides the node id stored in the database; -1 uses the
	// stored one. Anything else outside 0-1023 is an error.
	NodeID int64
	// ReadConns sizes the reader pool; 0 picks one per CPU (at least 4).
	ReadConns int
	// Now is the wall clock of the sync log's hybrid clock (tests set it).
	Now func() time.Time
	// Unprepared leaves the queries unprepared: each is parsed when it runs.
	// For handler tests only: Open prepares every query (537) on the reader
	// and the writer, about half the CPU of a short test that runs a few
	// dozen of them. The service, the db tests and the test templates
	// prepare them all, so a query SQLite cannot parse still fails there.
	Unprepared bool
}

// Store is the database: one writer connection, fed by one write loop that
// group-commits InTx transactions (so writers queue in Go rather than spin on
// SQLITE_BUSY, and share fsyncs), and a pool of query-only readers. Writer is
// exported for migrations and tests that inspect the file; every write of
// the running service goes through InTx or InTxSQL.
type Store struct {
	Writer *sql.DB
	Reader *sql.DB
	// R runs single-statement reads on the reader pool; w is bound to the
	// writer for InTx. Both hold prepared statements: parsing SQL anew on
	// every call cost more than running it.
	R   *Queries
	w   *Queries
	IDs *IDGen
	// Each member of a write batch runs in a savepoint: prepared once, as
	// they are run for every write.
	savepoint, release, rollbackTo *sql.Stmt
	// dataVersionStmt reads PRAGMA data_version at every batch's start, so
	// memos kept in the writer learn of another process's commit before
	// they are used; seenDataVersion is the writer loop's last value.
	dataVersionStmt *sql.Stmt
	seenDataVersion atomic.Int64
	changes         *changes
	clock           *hlcClock    // the sync log's hybrid logical clock
	fks             *fkGraph     // foreign keys, for the sync's orphan rule
	numberBlock     atomic.Int64 // size of a leased number block; 0: DefaultNumberBlock
	clockStale      atomic.Bool
	// auditNode is the node of this database's audit chains: 0 where the
	// organisations' chains began, the node id on a clone (SyncRecordClonedLog).
	auditNode atomic.Int64
	// auditHeads is AppendAudit's memo of each chain's last entry.
	auditMu    sync.Mutex
	auditHeads map[int64]auditHead

	writes    chan *writeRequest // InTx's queue to the group-commit loop
	writeGen  atomic.Uint64      // odd while a write batch runs (WriteGeneration)
	readGens  sync.Map           // *Queries of running read transactions -> generation at BEGIN
	closeOnce sync.Once
	// sending guards s.writes: InTxSQL sends under its read lock, Close
	// closes the channel under the write lock, so a write after Close is
	// refused with ErrClosed instead of panicking on a closed channel.
	sending  sync.RWMutex
	closed   bool
	closeErr error
	loopDone chan struct{}
	// checkpointer is checkpointLoop's connection; committed wakes the loop
	// after a commit; Close closes stopCheckpoints, and checkpointDone is
	// closed when the loop has stopped.
	checkpointer    *sql.DB
	committed       chan struct{}
	stopCheckpoints chan struct{}
	checkpointDone  chan struct{}
	observer        atomic.Pointer[func(members int, took time.Duration)]
	// written is closed when the running or next write batch has ended
	// (Written); nil until someone asks.
	writtenMu sync.Mutex
	written   chan struct{}
}

// Page cache sizes (negative: KiB, as PRAGMA cache_size takes them). The
// driver's allocator hands each cached page (4 KiB plus SQLite's header) a
// slot of the next power of two, 8 KiB, so SQLite's default of 2,000 KiB
// held about 3.7 MB per connection: with four readers, the writer and the
// checkpointer that was a fifth of the server's peak memory under the load
// benchmark (docs/operations.md, Memory). A page the cache misses is read
// from the operating system's file cache, where the database stays hot
// either way; the benchmark's reads kept their throughput with these.
const (
	readerCacheKiB = -500
	writerCacheKiB = -1000
)

func dsn(path, sync string, readOnly bool) string {
	q := url.Values{}
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "synchronous("+sync+")")
	if readOnly {
		q.Add("_pragma", "query_only(1)")
		q.Add("_pragma", fmt.Sprintf("cache_size(%d)", readerCacheKiB))
	} else {
		q.Add("_pragma", fmt.Sprintf("cache_size(%d)", writerCacheKiB))
		q.Set("_txlock", "immediate")
		// Each member of a write batch runs in a savepoint, so every page an
		// earlier member dirtied is copied to the sub-journal first; on disk
		// (the default past 64 KiB) that was a pwrite per page.
		q.Add("_pragma", "temp_store(MEMORY)")
		// Checkpoints run off the writer (checkpoint.go).
		q.Add("_pragma", "wal_autocheckpoint(0)")
	}
	return "file:" + uriPath(path) + "?" + q.Encode()
}

// uriPath escapes what a SQLite URI would read as syntax: the driver splits
// at the first '?', SQLite cuts at '#' and decodes '%'.
func uriPath(p string) string {
	return strings.NewReplacer("%", "%25", "?", "%3F", "#", "%23").Replace(p)
}

// Open opens (creating if needed) and migrates the database at opts.Path.
func Open(ctx context.Context, opts Options) (*Store, error) {
	opts.Synchronous = strings.ToUpper(opts.Synchronous)
	switch opts.Synchronous {
	case "":
		opts.Synchronous = "FULL"
	case "FULL", "NORMAL", "EXTRA", "OFF":
	default:
		return nil, fmt.Errorf("synchronous must be FULL, NORMAL, EXTRA or OFF, not %q", opts.Synchronous)
	}
	ch := &changes{}
	w := openWriter(dsn(opts.Path, opts.Synchronous, false), ch)
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	if err := w.PingContext(ctx); err != nil {
		w.Close()
		return nil, fmt.Errorf("open %s: %w", opts.Path, err)
	}
	if err := Migrate(ctx, w); err != nil {
		w.Close()
		return nil, err
	}
	node, err := nodeID(ctx, w, opts.NodeID)
	if err != nil {
		w.Close()
		return nil, err
	}
	n := opts.ReadConns
	if n <= 0 {
		n = max(4, runtime.NumCPU()*2)
	}
	r, err := sql.Open("sqlite", dsn(opts.Path, opts.Synchronous, true))
	if err != nil {
		w.Close()
		return nil, err
	}
	r.SetMaxOpenConns(n)
	r.SetMaxIdleConns(n)
	r.SetConnMaxLifetime(0)
	prepare := Prepare
	if opts.Unprepared {
		prepare = func(_ context.Context, d DBTX) (*Queries, error) { return New(d), nil }
	}
	rq, err := prepare(ctx, r)
	if err != nil {
		r.Close()
		w.Close()
		return nil, err
	}
	wq, err := prepare(ctx, w)
	if err != nil {
		rq.Close()
		r.Close()
		w.Close()
		return nil, err
	}
	s := &Store{Writer: w, Reader: r, R: rq, w: wq, IDs: NewIDGen(node), changes: ch,
		writes: make(chan *writeRequest), loopDone: make(chan struct{})}
	for _, p := range []struct {
		stmt **sql.Stmt
		sql  string
	}{{&s.savepoint, "SAVEPOINT member"}, {&s.release, "RELEASE member"}, {&s.rollbackTo, "ROLLBACK TO member"},
		{&s.dataVersionStmt, "PRAGMA data_version"}} {
		if *p.stmt, err = w.PrepareContext(ctx, p.sql); err != nil {
			rq.Close()
			wq.Close()
			r.Close()
			w.Close()
			return nil, err
		}
	}
	if err = s.initSync(ctx, opts.Now); err != nil {
		_ = errors.Join(rq.Close(), wq.Close(), r.Close(), w.Close())
		return nil, err
	}
	if s.checkpointer, err = openCheckpointer(opts.Path, opts.Synchronous); err != nil {
		_ = errors.Join(rq.Close(), wq.Close(), r.Close(), w.Close())
		return nil, err
	}
	s.committed, s.stopCheckpoints, s.checkpointDone = make(chan struct{}, 1), make(chan struct{}), make(chan struct{})
	go s.checkpointLoop()
	go s.writeLoop()
	return s, nil
}

// WriteGeneration moves to an odd number when a write batch begins and to
// the next even number when it has committed or rolled back, before any of
// its writers is answered (all writes go through InTx). A value read before
// a query and still current afterwards proves nothing was written in
// between, so a cache of rows may be trusted only while the (even)
// generation it was filled at is current; an odd one means a batch is
// running, whose changes a cache cannot know yet.
func (s *Store) WriteGeneration() uint64 { return s.writeGen.Load() }

// Close stops the write loop (after the batch it is running) and closes the
// pools. No InTx may be called after Close.
func (s *Store) Close() error {
	// A second Close (a test's cleanup after the test closed it) returns
	// the first one's answer.
	s.closeOnce.Do(func() {
		s.sending.Lock()
		s.closed = true
		close(s.writes)
		s.sending.Unlock()
		<-s.loopDone
		close(s.stopCheckpoints)
		<-s.checkpointDone
		s.closeErr = errors.Join(s.checkpointer.Close(), s.R.Close(), s.w.Close(), s.savepoint.Close(), s.release.Close(), s.rollbackTo.Close(), s.dataVersionStmt.Close(), s.Reader.Close(), s.Writer.Close())
	})
	return s.closeErr
}

// nodeID returns the node id kept in the database, choosing one at random the
// first time, so two databases that later exchange data do not mint equal ids.
func nodeID(ctx context.Context, w *sql.DB, override int64) (int64, error) {
	if override != -1 {
		if override < 0 || override > maxNode {
			return 0, fmt.Errorf("node id must be 0-%d", maxNode)
		}
		return override, nil
	}
	var v string
	err := w.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'node_id'`).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		node := randomNode()
		_, err = w.ExecContext(ctx, `INSERT INTO meta(key, value) VALUES ('node_id', ?)`, strconv.FormatInt(node, 10))
		return node, err
	}
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(v, 10, 64)
}
