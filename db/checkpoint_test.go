package db

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

// TestCheckpointsRunOffTheWriter: the writer never checkpoints (its
// automatic checkpoint is off), the checkpoint loop copies committed writes
// into the database file by itself, and its checkpoints are not mistaken
// for another process's commit (which would drop every writer memo).
func TestCheckpointsRunOffTheWriter(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ckpt.db")
	s, err := Open(ctx, Options{Path: fresh(t, path), NodeID: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })

	var auto int64
	if err := s.Writer.QueryRowContext(ctx, "PRAGMA wal_autocheckpoint").Scan(&auto); err != nil || auto != 0 {
		t.Fatalf("writer's wal_autocheckpoint = %d (%v), want 0", auto, err)
	}

	// An immutable connection reads the database file alone, never the
	// WAL: a row shows there only once a checkpoint copied it.
	file, err := sql.Open("sqlite", "file:"+uriPath(path)+"?immutable=1")
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	inFile := func(key string) bool {
		var n int
		// A fresh connection each time: an immutable one caches pages.
		file.SetMaxIdleConns(0)
		// Before the first checkpoint even the schema is only in the WAL.
		err := file.QueryRowContext(ctx, "SELECT count(*) FROM meta WHERE key = ?", key).Scan(&n)
		return err == nil && n == 1
	}

	epoch := s.changes.epoch.Load()
	for i := range 3 {
		key := fmt.Sprintf("ckpt-%d", i)
		if err := s.InTxSQL(ctx, func(tx *sql.Tx, q *Queries) error {
			_, err := tx.Exec("INSERT INTO meta (key, value) VALUES (?, '1')", key)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(10 * time.Second); !inFile(key); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s committed but never checkpointed into the database file", key)
			}
		}
	}
	// Each write after the first began after a checkpoint by the other
	// connection, and read data_version at its start.
	if got := s.changes.epoch.Load(); got != epoch {
		t.Errorf("the checkpoints moved the writer's epoch %d -> %d: taken for another process's commits", epoch, got)
	}
}
