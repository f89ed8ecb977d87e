package db

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkSyncExchange: b.N changes (project creates and edits on the
// site) sent to the hub in pages of 1,000; reports changes per second
// (the speed target is 100,000 changes in under a minute, docs/sync.md).
func BenchmarkSyncExchange(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	hub, err := Open(ctx, Options{Path: filepath.Join(dir, "hub.db"), Synchronous: "NORMAL", NodeID: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer hub.Close()
	if err := hub.InTxSQL(ctx, func(tx *sql.Tx, q *Queries) error { _, err := tx.Exec(seedOrg); return err }); err != nil {
		b.Fatal(err)
	}
	clonePath := filepath.Join(dir, "site.db")
	if _, err := hub.Writer.ExecContext(ctx, `VACUUM INTO ?`, clonePath); err != nil {
		b.Fatal(err)
	}
	site, err := Open(ctx, Options{Path: clonePath, Synchronous: "NORMAL", NodeID: 2})
	if err != nil {
		b.Fatal(err)
	}
	defer site.Close()
	if err := site.SyncRecordClonedLog(ctx); err != nil {
		b.Fatal(err)
	}
	// A tenth creates, the rest edits of them, 500 per transaction.
	for done := 0; done < b.N; {
		n := min(500, b.N-done)
		if err := site.InTxSQL(ctx, func(tx *sql.Tx, q *Queries) error {
			for i := 0; i < n; i++ {
				k := done + i
				var err error
				if k%10 == 0 {
					_, err = tx.Exec(`INSERT INTO projects (id, organisation_id, name, status, created_at, created_by) VALUES (?, 10, ?, 'open', '2026-11-26T00:00:00.000Z', 1)`, 1000+k/10, fmt.Sprint("p", k))
				} else {
					_, err = tx.Exec(`UPDATE projects SET description = ? WHERE id = ?`, fmt.Sprint("d", k), 1000+k/10)
				}
				if err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			b.Fatal(err)
		}
		done += n
	}
	b.ResetTimer()
	start := time.Now()
	total := 0
	for {
		vector, err := hub.SyncVector(ctx)
		if err != nil {
			b.Fatal(err)
		}
		page, err := site.SyncChangesFor(ctx, vector, []int64{10}, 1000)
		if err != nil {
			b.Fatal(err)
		}
		if len(page) == 0 {
			break
		}
		n, err := hub.ApplySyncChanges(ctx, page, []int64{10})
		if err != nil {
			b.Fatal(err)
		}
		total += n
	}
	b.StopTimer()
	if total != b.N {
		b.Fatalf("applied %d of %d", total, b.N)
	}
	b.ReportMetric(float64(total)/time.Since(start).Seconds(), "changes/s")
}
