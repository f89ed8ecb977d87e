package main

import (
	"bytes"
	"context"
	"database/sql"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"workspace/db"
)

// TestCompareFindsDifferences: the fault run's final comparison is not
// vacuous. Two copies of one file compare equal; a row only one file holds
// makes its replicated table differ; an acknowledged write neither file
// holds is lost once per file.
func TestCompareFindsDifferences(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	hub, site := filepath.Join(dir, "hub.db"), filepath.Join(dir, "site.db")
	store, err := db.Open(context.Background(), db.Options{Path: hub, NodeID: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
	whole, err := os.ReadFile(hub) // closed: the file alone is whole
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(site, whole, 0o600); err != nil {
		t.Fatal(err)
	}
	var rep report
	if err := compare(&rep, hub, []string{site}, nil); err != nil {
		t.Fatal(err)
	}
	if !rep.ok() || rep.tablesDiffer != 0 || rep.lost != 0 {
		t.Fatalf("two copies of one file: %+v", rep)
	}

	d, err := sql.Open("sqlite", site)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Exec(`INSERT INTO users(id, email, created_at, updated_at) VALUES (4242, 'only.here@example.com', '2026-11-28T00:00:00Z', '2026-11-28T00:00:00Z')`); err != nil {
		t.Fatal(err)
	}
	// A file only the laptop holds (keyed by its hash, no id).
	if _, err := d.Exec(`INSERT INTO blobs(hash, content_type, size, data, created_at) VALUES ('f00d', 'image/png', 1, x'00', '2026-11-28T00:00:00Z')`); err != nil {
		t.Fatal(err)
	}
	d.Close()
	rep = report{}
	acks := map[string][]ack{"hub": {{table: "projects", id: "1", name: "fault-hub-1"}},
		"laptop": {{table: "blobs", name: "f00d"}, {table: "toolbox_users", name: "fault-laptop-s1@example.com"}}}
	if err := compare(&rep, hub, []string{site}, acks); err != nil {
		t.Fatal(err)
	}
	// lost: the project twice, the file on the hub, the signature twice
	if rep.ok() || rep.tablesDiffer != 2 || rep.lost != 5 || rep.duplicated != 0 || rep.integrity != 0 || rep.auditFailures != 0 {
		t.Fatalf("a users row and a file on the laptop only, a lost project and signature: %+v, want 2 tables differing and 5 lost", rep)
	}

	// The new writers' kinds are looked for in both files: a witness
	// record, an induction record, an induction revision and an asset
	// log's attachment missing from both are two losses each. A person's
	// own rows (a TOTP secret and its audit entry, no organisation) are
	// each node's own and never differ; an organisation's audit entry on
	// one side does.
	for _, path := range []string{hub, site} {
		d, err := sql.Open("sqlite", path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := d.Exec(`DELETE FROM users WHERE id = 4242; DELETE FROM blobs WHERE hash = 'f00d'`); err != nil {
			t.Fatal(err)
		}
		d.Close()
	}
	d, err = sql.Open("sqlite", site)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Exec(`INSERT INTO users(id, email, created_at, updated_at) VALUES (4243, 'owner@example.com', '2026-11-28T00:00:00Z', '2026-11-28T00:00:00Z');
		INSERT INTO user_totp_secrets(user_id, secret, created_at, expires_at) VALUES (4243, 'JBSWY3DPEHPK3PXPJBSWY3DP', '2026-11-28T00:00:00Z', '2026-11-29T00:00:00Z');
		INSERT INTO audit_log(id, chain, seq, organisation_id, actor_id, action, target_ids, changed_fields, request_id, created_at, prev_hash, hash) VALUES (77, 0, 1, NULL, 4243, 'PUT /users/@me/qr/token', '{}', '[]', 'x', '2026-11-28T00:00:00Z', '', 'h')`); err != nil {
		t.Fatal(err)
	}
	d.Close()
	d, err = sql.Open("sqlite", hub)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Exec(`INSERT INTO users(id, email, created_at, updated_at) VALUES (4243, 'owner@example.com', '2026-11-28T00:00:00Z', '2026-11-28T00:00:00Z')`); err != nil {
		t.Fatal(err)
	}
	d.Close()
	rep = report{}
	acks = map[string][]ack{"laptop": {{"witness_records", "7", "70"}, {"induction_records", "8", "80"}, {"induction_revisions", "9", "ab"}, {"attachments", "10", "fault-laptop-f10.txt"}}}
	if err := compare(&rep, hub, []string{site}, acks); err != nil {
		t.Fatal(err)
	}
	if rep.lost != 8 || rep.tablesDiffer != 0 || rep.duplicated != 0 { // (the hand-made audit entry fails verify: not judged here)
		t.Fatalf("four kinds lost, a person's own rows on one side: %+v, want 8 lost and nothing differing", rep)
	}

	// A second laptop's file: a row only it holds makes the table differ
	// (the hub against each laptop), and an acknowledged write missing
	// from it alone is lost once.
	site2 := filepath.Join(dir, "site2.db")
	if err := os.WriteFile(site2, whole, 0o600); err != nil {
		t.Fatal(err)
	}
	d, err = sql.Open("sqlite", site2)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Exec(`INSERT INTO users(id, email, created_at, updated_at) VALUES (4243, 'owner@example.com', '2026-11-28T00:00:00Z', '2026-11-28T00:00:00Z');
		INSERT INTO users(id, email, created_at, updated_at) VALUES (4244, 'laptop2.only@example.com', '2026-11-28T00:00:00Z', '2026-11-28T00:00:00Z')`); err != nil {
		t.Fatal(err)
	}
	d.Close()
	for _, path := range []string{hub, site} {
		d, err := sql.Open("sqlite", path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := d.Exec(`INSERT INTO blobs(hash, content_type, size, data, created_at) VALUES ('beef', 'image/png', 1, x'00', '2026-11-28T00:00:00Z')`); err != nil {
			t.Fatal(err)
		}
		d.Close()
	}
	rep = report{}
	acks = map[string][]ack{"laptop2": {{table: "blobs", name: "beef"}}}
	if err := compare(&rep, hub, []string{site, site2}, acks); err != nil {
		t.Fatal(err)
	}
	if rep.lost != 1 || rep.tablesDiffer != 2 || !strings.Contains(strings.Join(rep.details, "\n"), "only on laptop2") {
		t.Fatalf("a file missing from the second laptop, a users row only there: %+v, want 1 lost and 2 tables differing (users, blobs) on laptop2", rep)
	}
}

// echoServer answers each connection with what it reads.
func echoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { _, _ = io.Copy(c, c); c.Close() }()
		}
	}()
	return ln.Addr().String()
}

// roundTrip sends payload through addr and reads as many bytes back: true
// when they came back whole and unchanged; got is what came back.
func roundTrip(addr string, payload []byte) (whole bool, got []byte) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return false, nil
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(20 * time.Second))
	go func() { _, _ = c.Write(payload) }()
	got = make([]byte, len(payload))
	n, _ := io.ReadFull(c, got)
	return n == len(payload) && bytes.Equal(got, payload), got[:n]
}

// TestProxyFaults: a quiet proxy passes every connection whole; a faulty
// one fails some (and counts them), passes others whole, and never
// delivers altered bytes: what a failed connection delivers is a prefix.
func TestProxyFaults(t *testing.T) {
	t.Parallel()
	p, err := newProxy(echoServer(t), 7)
	if err != nil {
		t.Fatal(err)
	}
	defer p.close()
	payload := bytes.Repeat([]byte("0123456789abcdef"), 6<<10) // 96 KiB: more than any cut's budget (64 KiB)
	p.setQuiet(true)
	for i := 0; i < 5; i++ {
		if whole, got := roundTrip(p.addr(), payload); !whole {
			t.Fatalf("quiet proxy: %d of %d bytes came back", len(got), len(payload))
		}
	}
	if n := p.faults.Load(); n != 0 {
		t.Fatalf("quiet proxy counted %d faults", n)
	}
	p.setQuiet(false)
	wholeN, failed := 0, 0
	for i := 0; i < 30; i++ {
		whole, got := roundTrip(p.addr(), payload)
		if whole {
			wholeN++
			continue
		}
		failed++
		if !bytes.Equal(got, payload[:len(got)]) {
			t.Fatalf("a faulty connection delivered altered bytes (%d)", len(got))
		}
	}
	if wholeN == 0 || failed == 0 || p.faults.Load() == 0 {
		t.Fatalf("30 faulty connections: %d whole, %d failed, %d faults counted; want some of each", wholeN, failed, p.faults.Load())
	}
}
