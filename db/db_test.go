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
