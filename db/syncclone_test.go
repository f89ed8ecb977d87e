package db

import (
	"bytes"
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestSyncWriteClone: the copy a hub sends a node holds the paired
// organisations' rows, the accounts they need (a password only for
// members), their part of the log and none of another organisation's rows,
// even in freed pages; the node opened on it has its assigned id, the
// derived tables rebuilt and nothing to receive again.
func TestSyncWriteClone(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	hub := openSyncStore(t, filepath.Join(dir, "hub.db"), 1, nil)
	defer hub.Close()
	if err := hub.InTxSQL(ctx, func(tx *sql.Tx, q *Queries) error {
		_, err := tx.Exec(seedOrg + `
UPDATE users SET password_hash = 'member-hash' WHERE id = 1;
INSERT INTO users (id, email, password_hash, created_at, updated_at) VALUES (2, 'left@example.com', 'left-hash', '2026-11-26T00:00:00.000Z', '2026-11-26T00:00:00.000Z');
INSERT INTO users (id, email, password_hash, created_at, updated_at) VALUES (3, 'other@example.com', 'other-hash', '2026-11-26T00:00:00.000Z', '2026-11-26T00:00:00.000Z');
INSERT INTO organisation_members (organisation_id, user_id, joined_at) VALUES (10, 1, '2026-11-26T00:00:00.000Z');
INSERT INTO projects (id, organisation_id, code, name, status, created_at, created_by) VALUES (101, 10, 'P2', 'Made by one who left', 'open', '2026-11-26T00:00:00.000Z', 2);
INSERT INTO organisations (id, name, owned_by, created_at) VALUES (20, 'Elsewhere', 3, '2026-11-26T00:00:00.000Z');
INSERT INTO organisation_members (organisation_id, user_id, joined_at) VALUES (20, 3, '2026-11-26T00:00:00.000Z');
INSERT INTO projects (id, organisation_id, code, name, status, created_at, created_by) VALUES (200, 20, 'S1', 'Secret tunnel', 'open', '2026-11-26T00:00:00.000Z', 3);
INSERT INTO outbox (id, kind, recipient, subject, body, created_at) VALUES (1, 'email', 'a@example.com', 'local mail', 'b', '2026-11-26T00:00:00.000Z');`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	// Documents and files: the clone holds its organisation's content and
	// files, none of the other's.
	newSyncDoc(t, hub, 500, 10, 2)
	commitDoc(t, hub, 501, setText(1, "Our own clause"))
	newSyncDoc(t, hub, 600, 20, 2)
	commitDoc(t, hub, 601, setText(1, "Secret clause of another"))
	// Avatars: a member's travels, another organisation's member's not.
	for user, data := range map[int64]string{1: "Member avatar", 3: "Foreign avatar"} {
		h := sha256Hex([]byte(data))
		if err := hub.InTxSQL(ctx, func(tx *sql.Tx, q *Queries) error {
			if _, err := tx.Exec(`INSERT INTO blobs (hash, content_type, size, data, created_at) VALUES (?, 'image/png', 1, ?, '2026-11-26T00:00:00.000Z')`, h, []byte(data)); err != nil {
				return err
			}
			_, err := tx.Exec(`UPDATE users SET avatar_hash = ? WHERE id = ?`, h, user)
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	for org, data := range map[int64]string{10: "Our own file", 20: "Foreign file bytes"} {
		h := sha256Hex([]byte(data))
		if err := hub.InTxSQL(ctx, func(tx *sql.Tx, q *Queries) error {
			if _, err := tx.Exec(`INSERT INTO blobs (hash, content_type, size, data, created_at) VALUES (?, 'application/pdf', 1, ?, '2026-11-26T00:00:00.000Z')`, h, []byte(data)); err != nil {
				return err
			}
			_, err := tx.Exec(`INSERT INTO organisation_blobs (organisation_id, hash, refs) VALUES (?, ?, 1)`, org, h)
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "clone.db")
	if _, err := hub.SyncWriteClone(ctx, path, []int64{10}, 5); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Our own clause", "Our own file", "Member avatar"} {
		if !bytes.Contains(raw, []byte(want)) {
			t.Errorf("the clone's file lacks %q", want)
		}
	}
	for _, secret := range []string{"Secret tunnel", "other@example.com", "other-hash", "left-hash", "local mail", "Elsewhere",
		"Secret clause of another", "Foreign file bytes", "Foreign avatar"} {
		if bytes.Contains(raw, []byte(secret)) {
			t.Errorf("the clone's file holds %q", secret)
		}
	}
	node, err := Open(ctx, Options{Path: path, Synchronous: "NORMAL", NodeID: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer node.Close()
	if node.NodeID() != 5 {
		t.Fatalf("node id %d, want the assigned 5", node.NodeID())
	}
	if err := node.SyncFinishClone(ctx, []int64{10}); err != nil {
		t.Fatal(err)
	}
	for q, want := range map[string][]string{
		`SELECT id, password_hash FROM users ORDER BY id`:                       {"[1 member-hash]", "[2 ]"},
		`SELECT id, name FROM projects ORDER BY id`:                             {"[100 Bridge]", "[101 Made by one who left]"},
		`SELECT id FROM organisations`:                                          {"[10]"},
		`SELECT count(*) FROM outbox`:                                           {"[0]"},
		`SELECT organisation_id, status, n FROM project_status_counts`:          {"[10 open 2]"},
		`SELECT count(*) FROM sync_changes WHERE org = 20 OR tbl = 'outbox'`:    {"[0]"},
		`SELECT count(*) FROM sync_changes WHERE org = 10 AND tbl = 'projects'`: {"[2]"},
	} {
		if got := dump(t, node, q); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: got %v, want %v", q, got, want)
		}
	}
	if got := docText(t, node, 501); len(got) != 2 || got[0] != "1:Our own clause|" {
		t.Errorf("the clone reads its document as %v", got)
	}
	v, err := node.SyncVector(ctx)
	if err != nil {
		t.Fatal(err)
	}
	page, err := hub.SyncChangesFor(ctx, v, []int64{10}, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(page) != 0 {
		t.Fatalf("the hub would send the new clone %d entries it holds", len(page))
	}
}
