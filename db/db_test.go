package db

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// schemaOf lists every table and index definition in a database.
func schemaOf(t *testing.T, d *sql.DB) map[string]string {
	t.Helper()
	rows, err := d.Query(`SELECT type || ' ' || name, coalesce(sql, '') FROM sqlite_master
		WHERE name NOT LIKE 'sqlite_%' AND name <> 'schema_migrations'`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			t.Fatal(err)
		}
		out[k] = strings.Join(strings.Fields(v), " ")
	}
	return out
}

// TestSchemaMatchesMigrations: schema.sql, which sqlc reads, must describe
// exactly what the migrations build.
func TestSchemaMatchesMigrations(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	migrated, err := Open(ctx, Options{Path: filepath.Join(dir, "m.db"), NodeID: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer migrated.Close()
	schema, err := os.ReadFile("../schema.sql")
	if err != nil {
		t.Fatal(err)
	}
	plain, err := sql.Open("sqlite", filepath.Join(dir, "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if _, err := plain.Exec(string(schema)); err != nil {
		t.Fatalf("schema.sql does not apply: %v", err)
	}
	got, want := schemaOf(t, migrated.Writer), schemaOf(t, plain)
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s differs:\nschema.sql: %s\nmigrations: %s", k, v, got[k])
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s is made by the migrations but missing from schema.sql", k)
		}
	}
}

func TestMigrateIsIdempotent(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "x.db")
	s, err := Open(ctx, Options{Path: path, NodeID: -1})
	if err != nil {
		t.Fatal(err)
	}
	node := s.IDs.node
	s.Close()
	s, err = Open(ctx, Options{Path: path, NodeID: -1})
	if err != nil {
		t.Fatalf("second open: %v", err)
	}
	defer s.Close()
	if s.IDs.node != node {
		t.Errorf("node id changed across opens: %d then %d", node, s.IDs.node)
	}
	ms, _ := migrations()
	var n int
	if err := s.Writer.QueryRow(`SELECT count(*) FROM schema_migrations`).Scan(&n); err != nil || n != len(ms) {
		t.Errorf("schema_migrations has %d rows (err %v), want %d", n, err, len(ms))
	}
}

func TestIDs(t *testing.T) {
	g := NewIDGen(5)
	seen := map[int64]bool{}
	prev := int64(0)
	for i := 0; i < 10000; i++ {
		id := g.Next()
		if id <= prev || seen[id] {
			t.Fatalf("id %d not increasing or repeated (prev %d)", id, prev)
		}
		if node := id >> sequenceBits & maxNode; node != 5 {
			t.Fatalf("node bits %d, want 5", node)
		}
		seen[id], prev = true, id
	}
	for _, tc := range []struct {
		in string
		ok bool
	}{{"123", true}, {"0", false}, {"-1", false}, {"12a", false}, {"", false}, {"99999999999999999999", false}, {" 1", false}} {
		if _, ok := ParseID(tc.in); ok != tc.ok {
			t.Errorf("ParseID(%q) ok = %v, want %v", tc.in, ok, tc.ok)
		}
	}
}

// TestGrantRebuildKeepsRowsAndChecks runs migration 0070 (the rebuild of
// permission_grants with its CHECKs as equalities) again over a grant: the
// row survives with its key and masks, and the CHECKs still refuse a layer
// or target kind they do not name.
func TestGrantRebuildKeepsRowsAndChecks(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, Options{Path: filepath.Join(t.TempDir(), "g.db"), NodeID: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rebuild, err := migrationFS.ReadFile("migrations/0070_grant_checks_without_in_lists.sql")
	if err != nil {
		t.Fatal(err)
	}
	insert := `INSERT INTO permission_grants (organisation_id, scope_type, scope_id, target_type, target_id, allow_mask, deny_mask)
		VALUES (1, ?, ?, ?, 3, 5, 2)`
	if err := s.InTxSQL(ctx, func(tx *sql.Tx, q *Queries) error {
		if _, err := tx.Exec(`INSERT INTO users (id, email, created_at, updated_at) VALUES (9, 'o@example.com', 'x', 'x')`); err != nil {
			return err
		}
		if _, err := tx.Exec(`INSERT INTO organisations (id, name, owned_by, created_at) VALUES (1, 'O', 9, 'x')`); err != nil {
			return err
		}
		if _, err := tx.Exec(insert, "project", 2, "user"); err != nil {
			return err
		}
		_, err := tx.Exec(string(rebuild))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	var scope, target string
	var allow, deny int64
	if err := s.Writer.QueryRow(`SELECT scope_type, target_type, allow_mask, deny_mask FROM permission_grants WHERE scope_id = 2 AND target_id = 3`).
		Scan(&scope, &target, &allow, &deny); err != nil || scope != "project" || target != "user" || allow != 5 || deny != 2 {
		t.Fatalf("after the rebuild: %s %s %d %d (%v)", scope, target, allow, deny, err)
	}
	for _, c := range []struct {
		scope, target string
		ok            bool
	}{{"document", "organisation", true}, {"fleet", "role", true}, {"site", "user", false}, {"project", "team", false}, {"Project", "user", false}} {
		err := s.InTxSQL(ctx, func(tx *sql.Tx, q *Queries) error {
			_, err := tx.Exec(insert, c.scope, 100+len(c.scope)+len(c.target), c.target)
			return err
		})
		if (err == nil) != c.ok {
			t.Errorf("%s/%s: err %v, want accepted %v", c.scope, c.target, err, c.ok)
		}
	}
}
