package db

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestBackupUnderWrites: a backup taken while many goroutines write is a
// sound database holding every write acknowledged before the backup began.
func TestBackupUnderWrites(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	src := filepath.Join(dir, "live.db")
	store, err := Open(ctx, Options{Path: fresh(t, src), NodeID: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()

	var (
		mu    sync.Mutex
		acked []string // keys whose transaction committed
		stop  atomic.Bool
		wg    sync.WaitGroup
		errs  = make(chan error, 16)
	)
	for g := range 8 {
		wg.Go(func() {
			for i := 0; !stop.Load(); i++ {
				key := fmt.Sprintf("w-%d-%d", g, i)
				err := store.InTx(ctx, func(q *Queries) error {
					// Two statements per transaction: a copy must hold both or neither.
					if err := q.MetaPut(ctx, MetaPutParams{Key: key, Value: "a"}); err != nil {
						return err
					}
					return q.MetaPut(ctx, MetaPutParams{Key: key + "-pair", Value: "b"})
				})
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				acked = append(acked, key)
				mu.Unlock()
			}
		})
	}
	// Let some writes land before the backup, with a deadline.
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		n := len(acked)
		mu.Unlock()
		if n >= 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("only %d writes in 10s", n)
		}
		time.Sleep(time.Millisecond) // polling, not synchronisation
	}
	mu.Lock()
	before := append([]string(nil), acked...)
	mu.Unlock()

	out := filepath.Join(dir, "copy.db")
	if err := Backup(ctx, src, out); err != nil {
		t.Fatalf("backup: %v", err)
	}
	mu.Lock()
	during := len(acked) - len(before)
	mu.Unlock()
	stop.Store(true)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("write failed during backup: %v", err)
	}

	cp, err := sql.Open("sqlite", "file:"+out+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Close()
	var check string
	if err := cp.QueryRow(`PRAGMA integrity_check`).Scan(&check); err != nil || check != "ok" {
		t.Fatalf("integrity_check = %q (%v), want ok", check, err)
	}
	keys := map[string]bool{}
	rows, err := cp.Query(`SELECT key FROM meta`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			t.Fatal(err)
		}
		keys[k] = true
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	for _, k := range before {
		if !keys[k] || !keys[k+"-pair"] {
			t.Fatalf("write %s acknowledged before the backup is missing from the copy", k)
		}
	}
	for k := range keys {
		base, isPair := strings.CutSuffix(k, "-pair")
		if !strings.HasPrefix(k, "w-") {
			continue
		}
		if isPair && !keys[base] || !isPair && !keys[k+"-pair"] {
			t.Fatalf("the copy holds half a transaction: %s", k)
		}
	}
	if !keys["node_id"] {
		t.Fatal("the copy lacks the node id")
	}
	t.Logf("%d writes acknowledged before the backup, %d during it, %d keys in the copy", len(before), during, len(keys))
	if _, err := os.Stat(out + ".tmp"); !os.IsNotExist(err) {
		t.Fatalf("temporary file left behind: %v", err)
	}
	// The copy opens as a store (migrations already applied).
	again, err := Open(ctx, Options{Path: out, NodeID: -1})
	if err != nil {
		t.Fatalf("open the copy as a store: %v", err)
	}
	again.Close()
}

func TestBackupErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	src := filepath.Join(dir, "live.db")
	store, err := Open(ctx, Options{Path: fresh(t, src), NodeID: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	cases := []struct{ name, src, out string }{
		{"missing database", filepath.Join(dir, "nope.db"), filepath.Join(dir, "out.db")},
		{"out is the database", src, src},
		{"out is the database by another path", src, filepath.Join(dir, ".", "..", filepath.Base(dir), "live.db")},
		{"out directory missing", src, filepath.Join(dir, "no", "such", "out.db")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if err := Backup(ctx, tc.src, tc.out); err == nil {
				t.Fatal("want an error")
			}
		})
	}
	if err := store.Writer.PingContext(ctx); err != nil {
		t.Fatalf("the live database suffered: %v", err)
	}
	t.Run("existing out is replaced", func(t *testing.T) {
		out := filepath.Join(dir, "old.db")
		if err := os.WriteFile(out, []byte("old"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := Backup(ctx, src, out); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(out)
		if err != nil || len(b) < 16 || string(b[:15]) != "SQLite format 3" {
			t.Fatalf("out is not a SQLite file after backup (%v)", err)
		}
	})
}

func TestOpenOptions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		sync string
		want int // PRAGMA synchronous: OFF 0, NORMAL 1, FULL 2, EXTRA 3
	}{{"", 2}, {"FULL", 2}, {"normal", 1}, {"NORMAL", 1}, {"Extra", 3}, {"OFF", 0}} {
		t.Run("synchronous "+tc.sync, func(t *testing.T) {
			s, err := Open(ctx, Options{Path: fresh(t, filepath.Join(t.TempDir(), "s.db")), Synchronous: tc.sync, NodeID: -1})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			for name, d := range map[string]*sql.DB{"writer": s.Writer, "reader": s.Reader} {
				var got int
				if err := d.QueryRow(`PRAGMA synchronous`).Scan(&got); err != nil || got != tc.want {
					t.Fatalf("%s synchronous = %d (%v), want %d", name, got, err, tc.want)
				}
			}
		})
	}
	for _, bad := range []string{"fast", "2", "FULL;"} {
		if _, err := Open(ctx, Options{Path: filepath.Join(t.TempDir(), "b.db"), Synchronous: bad, NodeID: -1}); err == nil {
			t.Errorf("synchronous %q: want an error", bad)
		}
	}
	for _, tc := range []struct {
		node int64
		ok   bool
	}{{-1, true}, {0, true}, {1023, true}, {1024, false}, {-2, false}} {
		s, err := Open(ctx, Options{Path: fresh(t, filepath.Join(t.TempDir(), "n.db")), NodeID: tc.node})
		if (err == nil) != tc.ok {
			t.Errorf("node id %d: err %v, want ok %v", tc.node, err, tc.ok)
		}
		if err == nil {
			if tc.node >= 0 && s.IDs.node != tc.node {
				t.Errorf("node id %d: generator uses %d", tc.node, s.IDs.node)
			}
			s.Close()
		}
	}
}

// TestAwkwardPaths: a database path is a file name, not URI syntax.
func TestAwkwardPaths(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, name := range []string{"with space", "hash#dir", "per%20cent", "what?", "ünï"} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), name)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			// The file at p is a copy of the migrated template, so it exists
			// before Open: what proves Open used p is a write found in it.
			p := fresh(t, filepath.Join(dir, "x.db"))
			s, err := Open(ctx, Options{Path: p, NodeID: -1})
			if err != nil {
				t.Fatalf("open: %v", err)
			}
			marker := "written-through-" + name
			err = s.InTx(ctx, func(q *Queries) error { return q.MetaPut(ctx, MetaPutParams{Key: "marker", Value: marker}) })
			s.Close() // checkpoints the write into the file
			if err != nil {
				t.Fatal(err)
			}
			if b, err := os.ReadFile(p); err != nil || !strings.Contains(string(b), marker) {
				t.Fatalf("the database is not at its path: %v", err)
			}
			out := filepath.Join(dir, "copy#1?.db")
			if err := Backup(ctx, p, out); err != nil {
				t.Fatalf("backup: %v", err)
			}
			if _, err := os.Stat(out); err != nil {
				t.Fatalf("the copy is not at its path: %v", err)
			}
		})
	}
}

// TestBackupIntoRotates: scheduled copies are named by time, each is
// checked, and only the newest keep remain.
func TestBackupIntoRotates(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	src := filepath.Join(dir, "live.db")
	store, err := Open(ctx, Options{Path: fresh(t, src), NodeID: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	backups := filepath.Join(dir, "back ups #?%") // names are not URI syntax
	start := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	var made []string
	for i := range 4 {
		out, err := BackupInto(ctx, src, backups, 2, start.Add(time.Duration(i)*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		made = append(made, out)
	}
	left, _ := filepath.Glob(filepath.Join(backups, "workspace-*"))
	if len(left) != 2 || left[0] != made[2] || left[1] != made[3] {
		t.Fatalf("left %v, want the newest two of %v", left, made)
	}
	if filepath.Base(made[3]) != "workspace-20261125T130000Z.db" {
		t.Errorf("name %s", filepath.Base(made[3]))
	}
	for _, p := range left {
		if err := CheckCopy(ctx, p); err != nil {
			t.Errorf("copy %s: %v", p, err)
		}
	}
}

// TestRestore: a checked copy replaces the database (later writes are gone,
// the old write-ahead log is not replayed); a damaged copy or a database a
// server holds is refused and nothing changes.
func TestRestore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	src := filepath.Join(dir, "live.db")
	store, err := Open(ctx, Options{Path: fresh(t, src), NodeID: -1})
	if err != nil {
		t.Fatal(err)
	}
	put := func(s *Store, key string) {
		t.Helper()
		if err := s.InTx(ctx, func(q *Queries) error { return q.MetaPut(ctx, MetaPutParams{Key: key, Value: "v"}) }); err != nil {
			t.Fatal(err)
		}
	}
	put(store, "before")
	copyPath := filepath.Join(dir, "copy.db")
	if err := Backup(ctx, src, copyPath); err != nil {
		t.Fatal(err)
	}
	put(store, "after")

	unlock, err := LockForServe(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := Restore(ctx, copyPath, src); err == nil || !strings.Contains(err.Error(), "in use") {
		t.Fatalf("restore under a server: %v, want a refusal", err)
	}
	unlock()

	junk := filepath.Join(dir, "junk.db")
	if err := os.WriteFile(junk, []byte(strings.Repeat("not a database ", 500)), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Restore(ctx, junk, src); err == nil {
		t.Fatal("restore from junk: want an error")
	}
	empty := filepath.Join(dir, "empty.db")
	if e, err := sql.Open("sqlite", empty); err == nil {
		_, _ = e.Exec(`CREATE TABLE x (a)`)
		e.Close()
	}
	if err := Restore(ctx, empty, src); err == nil || !strings.Contains(err.Error(), "not a workspace database") {
		t.Fatalf("restore from a foreign database: %v", err)
	}
	store.Close()

	if err := Restore(ctx, copyPath, src); err != nil {
		t.Fatal(err)
	}
	again, err := Open(ctx, Options{Path: src, NodeID: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	has := func(key string) bool {
		_, err := again.R.MetaGet(ctx, key)
		return err == nil
	}
	if !has("before") || has("after") {
		t.Fatalf("after restore: before=%v after=%v, want true false", has("before"), has("after"))
	}
}

func TestBackupProgress(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	src := filepath.Join(dir, "live.db")
	store, err := Open(ctx, Options{Path: fresh(t, src), NodeID: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	var last, total int64
	calls := 0
	if err := BackupWithProgress(ctx, src, filepath.Join(dir, "c.db"), func(w, tot int64) { calls, last, total = calls+1, w, tot }); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(filepath.Join(dir, "c.db"))
	if calls == 0 || last != fi.Size() || total <= 0 {
		t.Errorf("progress calls %d, last %d (copy %d), total %d", calls, last, fi.Size(), total)
	}
}
