package main

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// writeOrganisations registers a user and creates n organisations through
// the API, returning the ids of those acknowledged (201).
func writeOrganisations(t *testing.T, base string, n int) []string {
	t.Helper()
	st, _, _ := call(t, "POST", base+"/auth/register", "", "application/json", `{"email":"rep@example.com","password":"rep-password","first_name":"Rep"}`)
	if st != http.StatusCreated {
		t.Fatalf("register: status %d", st)
	}
	tok := signIn(t, base, "rep@example.com", "rep-password")
	var ids []string
	for i := range n {
		st, org, _ := call(t, "POST", base+"/organisations", tok, "application/json", fmt.Sprintf(`{"name":"Replicated %d"}`, i))
		if st != http.StatusCreated {
			t.Fatalf("create organisation %d: status %d %v", i, st, org)
		}
		ids = append(ids, org["id"].(string))
	}
	return ids
}

// missingOrganisations lists the ids the database at path does not hold.
func missingOrganisations(t *testing.T, path string, ids []string) []string {
	t.Helper()
	d, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	var missing []string
	for _, id := range ids {
		var n int
		if err := d.QueryRow(`SELECT count(*) FROM organisations WHERE id = ?`, id).Scan(&n); err != nil || n != 1 {
			missing = append(missing, id)
		}
	}
	return missing
}

// TestServeReplicates: serve --replicate DIR streams every write; after
// serve stops, restore --from-replica gives a database holding every
// acknowledged write, which serve then runs on.
func TestServeReplicates(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	dbPath := servedDB(t, filepath.Join(dir, "ws.db"))
	replica := filepath.Join(dir, "replica")
	s := startServe(t, "--db", dbPath, "--replicate", replica)
	if !strings.Contains(s.out.String(), "replicating to "+replica) {
		t.Fatalf("serve did not say it replicates: %q", s.out.String())
	}
	ids := writeOrganisations(t, s.base, 25)
	s.cancel()
	<-s.done
	if s.err != nil {
		t.Fatalf("serve: %v", s.err)
	}

	restored := filepath.Join(dir, "elsewhere", "ws.db")
	var out syncBuffer
	if err := run(ctx, []string{"restore", "--from-replica", replica, "--db", restored}, noEnv, &out, io.Discard); err != nil {
		t.Fatalf("restore --from-replica: %v", err)
	}
	if !strings.Contains(out.String(), "restored") {
		t.Fatalf("restore said %q", out.String())
	}
	if m := missingOrganisations(t, restored, ids); len(m) > 0 {
		t.Fatalf("acknowledged organisations missing after restore: %v", m)
	}
	// The restored file serves, replicating to the same replica again:
	// the same account signs in and reads them, and new writes reach the
	// replica on top of the old ones.
	s2 := startServe(t, "--db", restored, "--replicate", replica)
	tok := signIn(t, s2.base, "rep@example.com", "rep-password")
	if st, org, _ := call(t, "GET", s2.base+"/organisations/"+ids[len(ids)-1], tok, "", ""); st != http.StatusOK || org["name"] != "Replicated 24" {
		t.Fatalf("restored organisation: %d %v", st, org)
	}
	st, org, _ := call(t, "POST", s2.base+"/organisations", tok, "application/json", `{"name":"After restore"}`)
	if st != http.StatusCreated {
		t.Fatalf("write after restore: %d %v", st, org)
	}
	ids = append(ids, org["id"].(string))
	s2.cancel()
	<-s2.done
	if s2.err != nil {
		t.Fatalf("serve on the restored file: %v", s2.err)
	}
	again := filepath.Join(dir, "again", "ws.db")
	if err := run(ctx, []string{"restore", "--from-replica", replica, "--db", again}, noEnv, io.Discard, io.Discard); err != nil {
		t.Fatalf("second restore: %v", err)
	}
	if m := missingOrganisations(t, again, ids); len(m) > 0 {
		t.Fatalf("organisations missing after the second restore: %v", m)
	}
	startServe(t, "--db", restored) // holds the restored file for the refusal below

	t.Run("flags", func(t *testing.T) {
		for _, args := range [][]string{
			{"restore", "--db", restored},
			{"restore", "--db", restored, "--from", "x.db", "--from-replica", replica},
			{"serve", "--db", filepath.Join(dir, "other.db"), "--addr", "127.0.0.1:0", "--replicate", "ftp://host/x"},
		} {
			if err := run(ctx, args, noEnv, io.Discard, io.Discard); err == nil {
				t.Errorf("%v accepted", args)
			}
		}
		// Restoring over a database a server uses is refused.
		err := run(ctx, []string{"restore", "--from-replica", replica, "--db", restored}, noEnv, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), "in use by a running server") {
			t.Fatalf("restore over a served database: %v", err)
		}
	})
}

// TestServeReplicaSurvivesKill: the replica streams while serve runs, not
// only when it stops: serve is killed (SIGKILL, no shutdown) once the
// replica has caught up, and the restore holds every acknowledged write.
// serve runs in a child process (this test binary, TestReplicaChildServe).
func TestServeReplicaSurvivesKill(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	dbPath := servedDB(t, filepath.Join(dir, "ws.db"))
	replica := filepath.Join(dir, "replica")
	cmd := exec.Command(os.Args[0], "-test.run=^TestReplicaChildServe$")
	cmd.Env = append(os.Environ(), "WORKSPACE_CHILD_SERVE="+dbPath+"\n"+replica)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	t.Cleanup(func() {
		if !killed {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var base string
	deadline := time.After(60 * time.Second)
	for base == "" {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("child serve exited before listening")
			}
			if a, ok := strings.CutPrefix(l, "listening on "); ok {
				base = a
			}
		case <-deadline:
			t.Fatal("child serve did not start")
		}
	}
	ids := writeOrganisations(t, base, 10)

	// Wait until a restore of the replica holds the last write.
	probe := 0
	waitForCond(t, 30*time.Second, "the replica to hold the last write", func() bool {
		probe++
		p := filepath.Join(dir, fmt.Sprintf("probe-%d", probe), "ws.db")
		if err := run(ctx, []string{"restore", "--from-replica", replica, "--db", p}, noEnv, io.Discard, io.Discard); err != nil {
			return false
		}
		return len(missingOrganisations(t, p, ids[len(ids)-1:])) == 0
	})
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	killed = true

	restored := filepath.Join(dir, "after-kill", "ws.db")
	if err := run(ctx, []string{"restore", "--from-replica", replica, "--db", restored}, noEnv, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	if m := missingOrganisations(t, restored, ids); len(m) > 0 {
		t.Fatalf("acknowledged organisations missing after kill and restore: %v", m)
	}
}

// TestReplicaChildServe is serve --replicate in a child process of
// TestServeReplicaSurvivesKill; it does nothing in a normal run.
func TestReplicaChildServe(t *testing.T) {
	env := os.Getenv("WORKSPACE_CHILD_SERVE")
	if env == "" {
		t.Skip("runs only as TestServeReplicaSurvivesKill's child")
	}
	dbPath, replica, _ := strings.Cut(env, "\n")
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	if err := run(ctx, []string{"serve", "--db", dbPath, "--addr", "127.0.0.1:0", "--replicate", replica}, noEnv, os.Stdout, io.Discard); err != nil {
		t.Fatal(err)
	}
}

// waitForCond polls cond until it holds or the deadline passes.
func waitForCond(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond) // polling interval, not synchronisation
	}
}
