package db

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestSyncLease: one exchange per database file across the stores (the
// processes) that open it. A second holder is refused and told who holds
// it; the lease is renewed while held; an expired one is taken over and
// its old holder learns it lost it; a lease left by a process of this
// host that is gone is taken at once, one of another host only after it
// expires; a released lease is free.
func TestSyncLease(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := fresh(t, filepath.Join(t.TempDir(), "lease.db"))
	open := func() *Store {
		s, err := Open(ctx, Options{Path: path, Synchronous: "OFF", NodeID: 5, Unprepared: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	a, b := open(), open()
	now := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	const ttl = time.Minute
	take := func(s *Store, holder string, at time.Time) (bool, SyncLeaseHolder) {
		t.Helper()
		ok, other, err := s.TakeSyncLease(ctx, holder, at, ttl)
		if err != nil {
			t.Fatal(err)
		}
		return ok, other
	}
	host, _ := os.Hostname()

	if ok, _ := take(a, "A", now); !ok {
		t.Fatal("a free lease was not taken")
	}
	ok, other := take(b, "B", now.Add(10*time.Second))
	if ok || other.Pid != int64(os.Getpid()) || other.Host != host || !other.StartedAt.Equal(now) {
		t.Fatalf("a held lease: taken %v, holder %+v", ok, other)
	}
	if held, err := a.RenewSyncLease(ctx, "A", now.Add(50*time.Second), ttl); err != nil || !held {
		t.Fatalf("renewal: %v %v", held, err)
	}
	if ok, _ := take(b, "B", now.Add(100*time.Second)); ok {
		t.Fatal("a renewed lease was taken before its new expiry")
	}
	if ok, _ := take(b, "B", now.Add(110*time.Second)); !ok {
		t.Fatal("an expired lease was not taken over")
	}
	if held, err := a.RenewSyncLease(ctx, "A", now.Add(111*time.Second), ttl); err != nil || held {
		t.Fatalf("the old holder renewed a lease it lost: %v %v", held, err)
	}
	if err := a.ReleaseSyncLease(ctx, "A"); err != nil {
		t.Fatal(err)
	}
	if ok, _ := take(a, "A2", now.Add(112*time.Second)); ok {
		t.Fatal("the old holder's release freed the new holder's lease")
	}
	if err := b.ReleaseSyncLease(ctx, "B"); err != nil {
		t.Fatal(err)
	}
	if ok, _ := take(a, "A3", now.Add(113*time.Second)); !ok {
		t.Fatal("a released lease was not free")
	}

	// Killed mid-exchange: a process of this host that is gone.
	gone := exec.Command(os.Args[0], "-test.run", "^$")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	at := now.Add(time.Hour)
	if _, err := a.Writer.Exec(`UPDATE sync_lease SET pid = ?, host = ?, expires_at = ?`, gone.Process.Pid, host, FormatTime(at.Add(ttl))); err != nil {
		t.Fatal(err)
	}
	if ok, _ := take(b, "B2", at); !ok {
		t.Fatal("the lease of a process that is gone was not taken")
	}
	// Another host's: its process cannot be asked, so it waits to expire.
	if _, err := a.Writer.Exec(`UPDATE sync_lease SET pid = ?, host = 'elsewhere', expires_at = ?`, gone.Process.Pid, FormatTime(at.Add(ttl))); err != nil {
		t.Fatal(err)
	}
	if ok, other := take(b, "B3", at.Add(time.Second)); ok || other.Host != "elsewhere" {
		t.Fatalf("another host's unexpired lease: taken %v by %+v", ok, other)
	}
	if ok, _ := take(b, "B3", at.Add(ttl)); !ok {
		t.Fatal("another host's expired lease was not taken")
	}
}
