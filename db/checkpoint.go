package db

import (
	"context"
	"database/sql"
	"log/slog"
	"time"
)

// Checkpoints copy the WAL back into the database file. SQLite runs them by
// default inside the commit that crosses 1,000 WAL frames, on the
// committing connection: here that is the single writer, whose every
// millisecond is every writer's latency, and a checkpoint (read the frames
// back, write the pages, two fsyncs) took about a tenth of its time under a
// create load. The writer's automatic checkpoint is off (wal_autocheckpoint
// 0 in its DSN) and this loop checkpoints on a connection of its own, while
// the writer goes on: a PASSIVE checkpoint never blocks writers or readers.
// Checkpointing at most every checkpointEvery also copies a page written by
// many commits once instead of once per 1,000 frames.
const checkpointEvery = 100 * time.Millisecond

// checkpointLoop checkpoints after writes until Close closes
// s.stopCheckpoints, which also cuts its pause short: a store closed right
// after a write must not wait out checkpointEvery. The last commits are
// checkpointed by the last connection's close, which checkpoints the whole
// WAL.
func (s *Store) checkpointLoop() {
	defer close(s.checkpointDone)
	for {
		select {
		case <-s.stopCheckpoints:
			return
		case <-s.committed:
		}
		if err := s.checkpoint(context.Background()); err != nil {
			// The WAL keeps the data: it only grows until the next
			// checkpoint succeeds.
			slog.Warn("wal checkpoint", "err", err)
		}
		select {
		case <-s.stopCheckpoints:
			return
		case <-time.After(checkpointEvery):
		}
	}
}

// checkpoint runs one PASSIVE checkpoint: as many frames as no reader still
// needs are copied into the database file.
func (s *Store) checkpoint(ctx context.Context) error {
	var busy, frames, copied int64
	return s.checkpointer.QueryRowContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &frames, &copied)
}

// noteCommit tells the checkpoint loop that the WAL grew, without waiting:
// one pending signal is enough however many commits follow it.
func (s *Store) noteCommit() {
	select {
	case s.committed <- struct{}{}:
	default:
	}
}

// openCheckpointer opens the checkpoint loop's own connection.
func openCheckpointer(path, sync string) (*sql.DB, error) {
	c, err := sql.Open("sqlite", dsn(path, sync, false))
	if err != nil {
		return nil, err
	}
	c.SetMaxOpenConns(1)
	c.SetMaxIdleConns(1)
	c.SetConnMaxLifetime(0)
	return c, nil
}
