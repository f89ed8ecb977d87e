package db

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"sync"
	"testing"
)

// TestAppendAuditKeepsChainsWhole: the writer's memo of each chain's head
// never forks a chain: not across interleaved chains, concurrent writers in
// shared batches, a rolled-back append, or an append by another process.
func TestAppendAuditKeepsChainsWhole(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "audit.db")
	s, err := Open(ctx, Options{Path: fresh(t, path), Synchronous: "NORMAL", NodeID: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	entry := func(chain int64) AuditLog {
		return AuditLog{ID: s.IDs.Next(), Chain: chain, Action: "POST /things", TargetIds: "{}", ChangedFields: "[]",
			RequestID: "req", CreatedAt: "2026-11-26T00:00:00Z"}
	}
	boom := errors.New("boom")
	appendOne := func(chain int64, fail bool) error {
		return s.InTx(ctx, func(q *Queries) error {
			if err := s.AppendAudit(ctx, q, entry(chain)); err != nil {
				return err
			}
			if fail {
				return boom
			}
			return nil
		})
	}
	want := 0
	for i := 0; i < 3; i++ {
		for _, chain := range []int64{1, 2} {
			if err := appendOne(chain, false); err != nil {
				t.Fatal(err)
			}
			want++
		}
	}
	if err := appendOne(1, true); !errors.Is(err, boom) {
		t.Fatalf("rolled-back append: %v", err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for i := 0; i < 40; i++ {
		wg.Add(1)
		go func(chain int64) {
			defer wg.Done()
			errs <- appendOne(chain, chain == 3) // chain 3: every append rolled back
		}(int64(1 + i%3))
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil && !errors.Is(err, boom) {
			t.Fatal(err)
		}
		if err == nil {
			want++
		}
	}

	other, err := sql.Open("sqlite", dsn(path, "NORMAL", false))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := AuditAppendEntry(ctx, New(other), entry(1)); err != nil {
		t.Fatal(err)
	}
	want++
	for _, chain := range []int64{1, 2} {
		if err := appendOne(chain, false); err != nil {
			t.Fatalf("append after another process's: %v", err)
		}
		want++
	}

	problems, checked, err := VerifyAudit(ctx, s.R)
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) > 0 || checked != want {
		t.Fatalf("verify: %d entries checked (want %d), problems %v", checked, want, problems)
	}
}
