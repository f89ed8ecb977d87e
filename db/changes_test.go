package db

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"
)

// TestTableChangesFollowTheWriter: the pre-update hook sees the writer's row
// changes (a trigger's too) at once for memos inside the writer, readers'
// versions move only once the batch ended, and rollbacks and other
// processes' commits move everything.
func TestTableChangesFollowTheWriter(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "changes.db")
	s, err := Open(ctx, Options{Path: fresh(t, path), Synchronous: "NORMAL", NodeID: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	// In the writer's goroutine, where t.Fatal would stop the write loop.
	exec := func(tx *sql.Tx, query string) {
		t.Helper()
		if _, err := tx.Exec(query); err != nil {
			t.Error(err)
		}
	}

	usersBefore, integrationsBefore := s.TableVersion(TableUsers), s.TableVersion(TableIntegrations)
	if err := s.InTxSQL(ctx, func(tx *sql.Tx, q *Queries) error {
		stamp := s.WriterStamp(TableUsers)
		exec(tx, `INSERT INTO users (id, email, created_at, updated_at) VALUES (1, 'a@example.com', '2026-11-26T00:00:00Z', '2026-11-26T00:00:00Z')`)
		if s.WriterStamp(TableUsers) == stamp {
			t.Error("a users row written: the writer's stamp did not move")
		}
		if s.TableVersion(TableUsers) != usersBefore {
			t.Error("readers' users version moved before the batch ended")
		}
		// A trigger's change is seen as well.
		exec(tx, `CREATE TRIGGER meta_touch AFTER INSERT ON meta WHEN NEW.key = 'k-trigger' BEGIN
			INSERT INTO access_versions (organisation_id, tag) VALUES (999, 1); END`)
		access := s.WriterStamp(TableAccessVersions)
		exec(tx, `INSERT INTO meta (key, value) VALUES ('k-trigger', '1')`)
		if s.WriterStamp(TableAccessVersions) == access {
			t.Error("a trigger's access_versions row: the stamp did not move")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if s.TableVersion(TableUsers) == usersBefore {
		t.Error("the batch that wrote users ended: readers' version did not move")
	}
	if s.TableVersion(TableUsers)%2 != 0 {
		t.Error("a table version is odd")
	}
	if s.TableVersion(TableIntegrations) != integrationsBefore {
		t.Error("integrations untouched, yet its version moved")
	}

	// A member rolled back: its row changes are undone, so the epoch moves.
	epoch := s.WriterEpoch()
	boom := errors.New("boom")
	if err := s.InTxSQL(ctx, func(tx *sql.Tx, q *Queries) error {
		exec(tx, `INSERT INTO users (id, email, created_at, updated_at) VALUES (2, 'b@example.com', '2026-11-26T00:00:00Z', '2026-11-26T00:00:00Z')`)
		return boom
	}); !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
	if s.WriterEpoch() == epoch {
		t.Error("a rolled-back member did not move the epoch")
	}

	// Another process's commit is noticed at the next batch's start, before
	// its work runs.
	other, err := sql.Open("sqlite", dsn(path, "NORMAL", false))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	epoch, users := s.WriterEpoch(), s.TableVersion(TableUsers)
	if _, err := other.Exec(`UPDATE users SET email = 'c@example.com' WHERE id = 1`); err != nil {
		t.Fatal(err)
	}
	if err := s.InTx(ctx, func(q *Queries) error {
		if s.WriterEpoch() == epoch {
			t.Error("another process committed: the epoch had not moved when the next batch ran")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if s.TableVersion(TableUsers) == users {
		t.Error("another process committed: readers' users version did not move")
	}
}
