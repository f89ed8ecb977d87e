package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// maxBatch bounds how many write transactions share one commit.
const maxBatch = 64

type writeRequest struct {
	ctx  context.Context
	fn   func(tx *sql.Tx, q *Queries) error
	done chan writeResult
}

type writeResult struct {
	err      error
	panicked bool
	panicVal any
}

// errBatchAborted: SQLite rolled back a shared transaction under a member
// (an interrupted statement does that), so no member of it committed.
var errBatchAborted = errors.New("write transaction was rolled back")

// InTx runs fn as one write transaction and returns only after its COMMIT
// returned, so a caller may answer 2xx. Concurrent callers are group
// committed: the write loop runs a batch of them in one BEGIN IMMEDIATE ...
// COMMIT, each inside its own SAVEPOINT, so with synchronous=FULL a batch
// costs one fsync instead of one per request. A member whose fn fails is
// rolled back to its savepoint alone; the others still commit. A panic in fn
// is re-raised here, in the caller's goroutine.
func (s *Store) InTx(ctx context.Context, fn func(q *Queries) error) error {
	return s.InTxSQL(ctx, func(_ *sql.Tx, q *Queries) error { return fn(q) })
}

// InTxSQL is InTx that also hands out the transaction, for writes that are
// not sqlc queries. Every write goes through here: the store's write
// generation (and the caches that trust it) depend on that.
func (s *Store) InTxSQL(ctx context.Context, fn func(tx *sql.Tx, q *Queries) error) error {
	req := &writeRequest{ctx: ctx, fn: fn, done: make(chan writeResult, 1)}
	s.sending.RLock()
	if s.closed {
		s.sending.RUnlock()
		return ErrClosed
	}
	select {
	case s.writes <- req: // the loop runs until Close holds the lock, so this is taken
	case <-ctx.Done():
		s.sending.RUnlock()
		return ctx.Err()
	}
	s.sending.RUnlock()
	res := <-req.done // wait even if ctx ends: the outcome must be known
	if res.panicked {
		panic(res.panicVal)
	}
	return res.err
}

func (s *Store) writeLoop() {
	defer close(s.loopDone)
	poll := time.NewTicker(externalWritePoll)
	defer poll.Stop()
	if v, err := s.dataVersion(s.dataVersionStmt); err == nil {
		s.seenDataVersion.Store(v)
	}
	for {
		var first *writeRequest
		select {
		case r, ok := <-s.writes:
			if !ok {
				return
			}
			first = r
		case <-poll.C:
			// Only between batches: the generation is even here.
			s.noticeOtherCommits(s.dataVersionStmt)
			continue
		}
		batch := []*writeRequest{first}
	collect:
		for len(batch) < maxBatch {
			select {
			case r, ok := <-s.writes:
				if !ok {
					break collect
				}
				batch = append(batch, r)
			default:
				break collect
			}
		}
		start := time.Now()
		s.runBatch(batch)
		s.noteCommit()
		s.signalWritten()
		if f := s.observer.Load(); f != nil {
			(*f)(len(batch), time.Since(start))
		}
	}
}

// externalWritePoll is how often the idle writer asks SQLite whether
// another process committed to the file (`workspace admin create` while a
// server runs, an operator's sqlite3): such a commit moves the write
// generation too, so caches drop what it may have changed within this time.
const externalWritePoll = 100 * time.Millisecond

// dataVersion is the writer connection's PRAGMA data_version: it changes
// when another connection, in any process, commits, and never for the
// writer's own commits, so a change means a write the loop did not make.
func (s *Store) dataVersion(stmt *sql.Stmt) (int64, error) {
	var v int64
	err := stmt.QueryRowContext(context.Background()).Scan(&v)
	return v, err
}

// noticeOtherCommits moves the write generation and drops the writer's
// memos when another process committed since the loop last looked. Between
// batches (the idle poll) or at a batch's start, inside BEGIN IMMEDIATE,
// where nobody else can commit until the batch ends.
func (s *Store) noticeOtherCommits(stmt *sql.Stmt) {
	v, err := s.dataVersion(stmt)
	if err != nil || s.seenDataVersion.Swap(v) == v {
		return
	}
	s.changes.outsideChange()
	// Another process (workspace admin create) may have logged changes
	// with this node's origin: the next flush restarts the clock above them.
	s.clockStale.Store(true)
	if s.writeGen.Load()%2 == 0 {
		s.writeGen.Add(2)
	}
}

// Written returns a channel closed once a write batch ends after the call
// (committed or rolled back), for long-lived readers (event streams) that
// look again after any change instead of polling. Take the channel before
// reading, then wait on it: a write racing the read still closes it.
func (s *Store) Written() <-chan struct{} {
	s.writtenMu.Lock()
	defer s.writtenMu.Unlock()
	if s.written == nil {
		s.written = make(chan struct{})
	}
	return s.written
}

func (s *Store) signalWritten() {
	s.writtenMu.Lock()
	if s.written != nil {
		close(s.written)
		s.written = nil
	}
	s.writtenMu.Unlock()
}

// ObserveBatches has f called after every write batch (group commit) with
// its number of transactions and how long it took, for the metrics.
func (s *Store) ObserveBatches(f func(members int, took time.Duration)) { s.observer.Store(&f) }

// runBatch commits a batch and answers every member. If SQLite aborted the
// shared transaction under a member, every member run so far is answered
// with an error (none of them committed) and the rest run in a new batch.
func (s *Store) runBatch(batch []*writeRequest) {
	results := make([]writeResult, len(batch))
	answer := func(n int) {
		for i := 0; i < n; i++ {
			batch[i].done <- results[i]
		}
	}
	bg := context.Background()
	tx, err := s.Writer.BeginTx(bg, nil)
	if err != nil {
		for i := range results {
			results[i].err = fmt.Errorf("begin: %w", err)
		}
		answer(len(batch))
		return
	}
	s.writeGen.Add(1) // odd while the batch runs: caches neither fill nor serve
	s.noticeOtherCommits(tx.StmtContext(bg, s.dataVersionStmt))
	q := s.w.WithTx(tx)
	savepoint, release, rollbackTo := tx.StmtContext(bg, s.savepoint), tx.StmtContext(bg, s.release), tx.StmtContext(bg, s.rollbackTo)
	for i, r := range batch {
		if err := r.ctx.Err(); err != nil {
			results[i].err = err
			continue
		}
		if _, err := savepoint.ExecContext(bg); err != nil {
			s.abortBatch(tx, batch, results, i, err)
			return
		}
		results[i] = s.runMember(r, tx, q)
		if results[i].err != nil || results[i].panicked {
			s.changes.epoch.Add(1) // its row changes are undone: memos of them are wrong
			_, err = rollbackTo.ExecContext(bg)
			if err == nil {
				_, err = release.ExecContext(bg)
			}
		} else {
			_, err = release.ExecContext(bg)
		}
		if err != nil { // the savepoint is gone: the whole transaction was rolled back
			s.abortBatch(tx, batch, results, i+1, err)
			return
		}
	}
	err = tx.Commit()
	if err != nil {
		s.changes.epoch.Add(1)
	}
	s.changes.batchEnded()
	s.writeGen.Add(1)
	if err != nil {
		for i := range results {
			if results[i].err == nil && !results[i].panicked {
				results[i].err = fmt.Errorf("commit: %w", err)
			}
		}
	}
	answer(len(batch))
}

// abortBatch answers the first n members with an error (keeping their own
// errors and panics), rolls back, and runs the rest in a new batch.
func (s *Store) abortBatch(tx *sql.Tx, batch []*writeRequest, results []writeResult, n int, cause error) {
	_ = tx.Rollback()
	s.changes.epoch.Add(1)
	s.changes.batchEnded()
	s.writeGen.Add(1)
	// A full disk fails one member's statement and may take the shared
	// transaction with it: every member it took down learns the disk is
	// full (so each answers 507, not 500), not merely that it was aborted.
	full := IsDiskFull(cause)
	for i := 0; i < n && !full; i++ {
		full = IsDiskFull(results[i].err)
	}
	for i := 0; i < n; i++ {
		if results[i].err == nil && !results[i].panicked {
			results[i].err = fmt.Errorf("%w: %v", errBatchAborted, cause)
			if full {
				results[i].err = errors.Join(ErrDiskFull, results[i].err)
			}
		}
		batch[i].done <- results[i]
	}
	if n < len(batch) {
		s.runBatch(batch[n:])
	}
}

func (s *Store) runMember(r *writeRequest, tx *sql.Tx, q *Queries) (res writeResult) {
	capturing := r.ctx.Value(noCaptureKey{}) == nil
	s.changes.cap.begin(capturing)
	defer s.changes.cap.end()
	defer func() {
		if p := recover(); p != nil {
			res = writeResult{panicked: true, panicVal: p}
		}
	}()
	err := r.fn(tx, q)
	// A caller that leaves once its work has run does not undo it: the
	// audit entry and the change log describing the work are written
	// whatever became of the caller (as the statements themselves run to
	// their end, TestCancelledCallerCannotAbortOthers).
	ctx := context.WithoutCancel(r.ctx)
	if err == nil {
		if hook, ok := r.ctx.Value(afterWriteKey{}).(AfterWrite); ok {
			// Inside the member's savepoint: the hook's rows commit or roll
			// back with the write they describe.
			err = hook(ctx, q)
		}
	}
	if err == nil && capturing {
		// After the audit entry, which is replicated too.
		err = s.flushChanges(ctx, tx, q)
	}
	return writeResult{err: err}
}

// AfterWrite runs after a write transaction's work succeeded, in the same
// transaction (the audit trail appends its entry here).
type AfterWrite func(ctx context.Context, q *Queries) error

type afterWriteKey struct{}

// WithAfterWrite has every InTx under ctx run hook after its work.
func WithAfterWrite(ctx context.Context, hook AfterWrite) context.Context {
	return context.WithValue(ctx, afterWriteKey{}, hook)
}

// ReadTx runs fn in one read transaction on the reader pool, so several
// queries see one snapshot.
func (s *Store) ReadTx(ctx context.Context, fn func(q *Queries) error) error {
	return s.ReadTxSQL(ctx, func(_ *sql.Tx, q *Queries) error { return fn(q) })
}

// ReadTxSQL is ReadTx that also hands out the transaction, for the dynamic
// (OData-filtered) list queries, so a count and its page see one snapshot.
func (s *Store) ReadTxSQL(ctx context.Context, fn func(tx *sql.Tx, q *Queries) error) error {
	// Read before BEGIN, which is deferred: the snapshot starts at the first
	// statement, so it holds at least every write this generation counts.
	gen := s.writeGen.Load()
	tx, err := s.Reader.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin read: %w", err)
	}
	defer tx.Rollback()
	q := s.R.WithTx(tx)
	s.readGens.Store(q, gen)
	defer s.readGens.Delete(q)
	return fn(tx, q)
}

// ReadGeneration is the write generation a cache may fill and serve q's
// reads at: for the reader pool's own statements (each its own snapshot) the
// current one, for a read transaction's the one read before it began. A
// write transaction's q has none (its batch's changes are not committed).
func (s *Store) ReadGeneration(q *Queries) (uint64, bool) {
	if q == s.R {
		return s.writeGen.Load(), true
	}
	gen, ok := s.readGens.Load(q)
	if !ok {
		return 0, false
	}
	return gen.(uint64), true
}
