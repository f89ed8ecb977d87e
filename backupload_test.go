package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestScheduledBackupUnderLoad: the serve loop's scheduled backups, taken
// while clients keep creating projects over HTTP, are sound copies
// (integrity_check ok) that hold every write acknowledged before the
// backup began (issue 35). A copy is named after its tick's time (to the
// second, rounded down), so every write acknowledged before that second
// was committed before the backup began and must be in it.
func TestScheduledBackupUnderLoad(t *testing.T) {
	dir := t.TempDir()
	dbPath := servedDB(t, filepath.Join(dir, "ws.db"))
	s := startServe(t, "--db", dbPath)
	st, _, _ := call(t, "POST", s.base+"/auth/register", "", "application/json", `{"email":"load@example.com","password":"load-password","first_name":"Load"}`)
	if st != http.StatusCreated {
		t.Fatalf("register: %d", st)
	}
	tok := signIn(t, s.base, "load@example.com", "load-password")
	st, org, _ := call(t, "POST", s.base+"/organisations", tok, "application/json", `{"name":"Load"}`)
	if st != http.StatusCreated {
		t.Fatalf("organisation: %d", st)
	}
	projects := s.base + "/organisations/" + org["id"].(string) + "/projects"

	type ack struct {
		id string
		at time.Time
	}
	var (
		mu    sync.Mutex
		acked []ack
		stop  atomic.Bool
		wg    sync.WaitGroup
		fails atomic.Int64
		first atomic.Value
	)
	for g := range 6 {
		wg.Go(func() {
			for i := 0; !stop.Load(); i++ {
				body := fmt.Sprintf(`{"name":"Load %d-%d"}`, g, i)
				req, _ := http.NewRequest("POST", projects, strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", "Bearer "+tok)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					fails.Add(1)
					first.CompareAndSwap(nil, err.Error())
					continue
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				at := time.Now()
				var p struct{ ID string }
				if resp.StatusCode != http.StatusCreated || json.Unmarshal(b, &p) != nil || p.ID == "" {
					fails.Add(1)
					first.CompareAndSwap(nil, fmt.Sprintf("%d %s", resp.StatusCode, b))
					continue
				}
				mu.Lock()
				acked = append(acked, ack{p.ID, at})
				mu.Unlock()
			}
		})
	}
	// The same loop serve runs with --backup-dir, at a short interval
	// (serve refuses one under a minute; the loop itself takes any).
	backups := filepath.Join(dir, "backups")
	var logs syncBuffer
	stopBackups := scheduleBackups(context.Background(), slog.New(slog.NewTextHandler(&logs, nil)), dbPath, backups, 1100*time.Millisecond, 0)
	var copies []string
	waitFor(t, "three scheduled backups under load", func() bool {
		copies, _ = filepath.Glob(filepath.Join(backups, "workspace-*Z.db"))
		return len(copies) >= 3
	})
	stopBackups()
	stop.Store(true)
	wg.Wait()
	if n := fails.Load(); n > 0 {
		t.Fatalf("%d writes failed during the backups; the first: %v", n, first.Load())
	}
	if strings.Contains(logs.String(), "failed") {
		t.Fatalf("a scheduled backup failed: %s", logs.String())
	}
	for _, cp := range copies {
		name := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(cp), "workspace-"), ".db")
		began, err := time.Parse("20060102T150405Z", name)
		if err != nil {
			t.Fatalf("copy %s: %v", cp, err)
		}
		conn, err := sql.Open("sqlite", "file:"+cp+"?mode=ro")
		if err != nil {
			t.Fatal(err)
		}
		var check string
		if err := conn.QueryRow(`PRAGMA integrity_check`).Scan(&check); err != nil || check != "ok" {
			t.Fatalf("%s: integrity_check %q (%v), want ok", cp, check, err)
		}
		have := map[string]bool{}
		rows, err := conn.Query(`SELECT CAST(id AS TEXT) FROM projects`)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var id string
			_ = rows.Scan(&id)
			have[id] = true
		}
		rows.Close()
		conn.Close()
		before := 0
		mu.Lock()
		for _, a := range acked {
			if !a.at.Before(began) {
				continue
			}
			before++
			if !have[a.id] {
				mu.Unlock()
				t.Fatalf("%s lacks project %s, acknowledged at %s, before the backup began", cp, a.id, a.at.Format(time.RFC3339Nano))
			}
		}
		total := len(acked)
		mu.Unlock()
		t.Logf("%s: integrity ok, %d projects; %d of the %d acknowledged writes came before it began, all in it", filepath.Base(cp), len(have), before, total)
		if before == 0 && cp != copies[0] {
			t.Errorf("%s: no write was acknowledged before it began: the load did not overlap", cp)
		}
	}
}
