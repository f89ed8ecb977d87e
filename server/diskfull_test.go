package server

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestDiskFull: when the database cannot grow, a write answers 507 with
// Retry-After and a message saying the disk is full (never 500), every
// member of a shared commit fails that way and the writer stays usable,
// reads go on, the log has one line however many writes were refused, and
// writes succeed again by themselves once there is space (issue 35).
// Two ways to fill the disk: SQLite's max_page_count on the writer (always)
// and a real small file system (tmpfs, where the test may mount one).
func TestDiskFull(t *testing.T) {
	t.Parallel()
	t.Run("max_page_count", func(t *testing.T) {
		var logs syncBuffer
		e := newEnv(t, func(c *Config) { c.Logger = slog.New(slog.NewTextHandler(&logs, nil)) })
		var pages int64
		if err := e.store.Writer.QueryRow("PRAGMA page_count").Scan(&pages); err != nil {
			t.Fatal(err)
		}
		limit := func(n int64) {
			t.Helper()
			if _, err := e.store.Writer.Exec(fmt.Sprintf("PRAGMA max_page_count = %d", n)); err != nil {
				t.Fatal(err)
			}
		}
		checkDiskFull(t, e, &logs, true, func() { limit(pages + 8) }, func() { limit(1 << 30) })
	})
	t.Run("tmpfs", func(t *testing.T) {
		dir := t.TempDir()
		if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=16m"); err != nil {
			t.Skipf("this test may not mount a file system here (%v); the max_page_count variant stands in", err)
		}
		// Registered first, so it runs after the store is closed.
		t.Cleanup(func() { _ = syscall.Unmount(dir, syscall.MNT_DETACH) })
		var logs syncBuffer
		e := newEnvAt(t, filepath.Join(dir, "test.db"), func(c *Config) { c.Logger = slog.New(slog.NewTextHandler(&logs, nil)) })
		// Fill what is left with a file, as another program would.
		filler := filepath.Join(dir, "filler")
		checkDiskFull(t, e, &logs, false, func() {
			f, err := os.Create(filler)
			if err != nil {
				t.Fatal(err)
			}
			block := make([]byte, 64<<10)
			for {
				if _, err := f.Write(block); err != nil {
					if !errors.Is(err, syscall.ENOSPC) {
						t.Fatalf("filling: %v", err)
					}
					break
				}
			}
			f.Close()
		}, func() {
			if err := os.Remove(filler); err != nil {
				t.Fatal(err)
			}
		})
	})
}

// checkDiskFull fills the disk with fill, writes until a write is refused,
// checks the answers, frees space with free and checks that writes work
// again. strict: the disk stays full until free (max_page_count); on a
// real file system a refused write's rollback and a checkpoint hand space
// back, so a later small write may fit, and is then rightly accepted.
func checkDiskFull(t *testing.T, e *testEnv, logs *syncBuffer, strict bool, fill, free func()) {
	diskFullLog.Lock()
	diskFullLog.last, diskFullLog.refused = time.Time{}, 0
	diskFullLog.Unlock()
	alice := e.user("alice")
	acme := "/organisations/" + e.org(alice, "Acme")
	fill()
	name := strings.Repeat("A project with a long name to fill pages ", 4)
	var full *testResponse
	for i := 0; i < 20_000; i++ {
		r := e.do(alice, "POST", acme+"/projects", map[string]any{"name": fmt.Sprintf("%s %d", name, i)})
		if r.Status == 201 {
			continue
		}
		full = r
		break
	}
	if full == nil {
		t.Fatal("20,000 writes and the disk never filled")
	}
	if full.Status != 507 || full.Header.Get("Retry-After") == "" || !strings.Contains(full.obj(t)["message"].(string), "disk is full") {
		t.Fatalf("a write on a full disk: %d Retry-After %q %s; want 507 with Retry-After saying the disk is full",
			full.Status, full.Header.Get("Retry-After"), full.Body)
	}
	// Writes sharing commits: every one is refused the same way.
	var wg sync.WaitGroup
	answers := make([]*testResponse, 16)
	for i := range answers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			answers[i] = e.do(alice, "POST", acme+"/projects", map[string]any{"name": fmt.Sprintf("%s concurrent %d", name, i)})
		}()
	}
	wg.Wait()
	for i, r := range answers {
		if r.Status == 201 && !strict {
			continue // it found room (see above): accepted, not an error
		}
		if r.Status != 507 || r.Header.Get("Retry-After") == "" {
			t.Errorf("concurrent write %d on a full disk: %d %.300s", i, r.Status, r.Body)
		}
	}
	// Reads go on.
	e.must(200, alice, "GET", acme, nil)
	e.must(200, alice, "GET", acme+"/projects", nil)
	// One log line for all these refusals.
	if n := strings.Count(logs.String(), "writes are answered 507"); n != 1 {
		t.Errorf("%d log lines about the full disk, want 1:\n%s", n, logs.String())
	}
	if strings.Contains(logs.String(), "internal error") {
		t.Errorf("a full disk logged an internal error:\n%s", logs.String())
	}
	// Space returns: the next write succeeds, with no restart.
	free()
	e.must(201, alice, "POST", acme+"/projects", map[string]any{"name": "After the disk was freed"})
	e.must(201, alice, "POST", acme+"/projects", map[string]any{"name": "And another"})
}
