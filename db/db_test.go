package db

import (
	"context"
	"database/sql"
	"fmt"
	"go/ast"
	goparser "go/parser"
	gotoken "go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
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
	t.Parallel()
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
	t.Parallel()
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
	t.Parallel()
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
	t.Parallel()
	ctx := context.Background()
	s, err := Open(ctx, Options{Path: fresh(t, filepath.Join(t.TempDir(), "g.db")), NodeID: 1})
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

// TestCheckRebuildKeepsRowsAndChecks runs migration 0071 (invites,
// integration_deliveries, schedule_invitees, toolbox_users and
// document_merge_requests rebuilt with their IN-list CHECKs as equalities)
// again over one row of each: every row survives with its values, the schema
// (tables, indexes, the triggers on and about those tables) comes out the
// same, each CHECK accepts every value it names and refuses others, and an
// insert no longer builds a temporary b-tree (OpenEphemeral) for its CHECK.
func TestCheckRebuildKeepsRowsAndChecks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, err := Open(ctx, Options{Path: fresh(t, filepath.Join(t.TempDir(), "c.db")), NodeID: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rebuild, err := migrationFS.ReadFile("migrations/0071_checks_without_in_lists.sql")
	if err != nil {
		t.Fatal(err)
	}
	parents := []string{
		`INSERT INTO users (id, email, created_at, updated_at) VALUES (9, 'o@example.com', 'x', 'x')`,
		// invitees of schedule 1 are keyed by user: one user per value tried.
		`WITH RECURSIVE n(v) AS (SELECT 10 UNION ALL SELECT v + 1 FROM n WHERE v < 30)
			INSERT INTO users (id, email, created_at, updated_at) SELECT v, 'u' || v || '@example.com', 'x', 'x' FROM n`,
		`INSERT INTO organisations (id, name, owned_by, created_at) VALUES (1, 'O', 9, 'x')`,
		`INSERT INTO integrations (id, organisation_id, item_type, provider, secret, created_at) VALUES (1, 1, 'work_item', 'webhook', 's', 'x')`,
		`INSERT INTO toolboxes (id, organisation_id, title, totp_secret, created_at, created_by, updated_at, updated_by) VALUES (1, 1, 'T', 's', 'x', 9, 'x', 9)`,
		`INSERT INTO schedules (id, organisation_id, toolbox_id, scheduled_start_at, scheduled_finish_at, created_at, created_by, updated_at, updated_by)
			VALUES (1, 1, 1, 'a', 'b', 'x', 9, 'x', 9)`,
		`INSERT INTO documents (id, organisation_id, number, formatted_number, title, created_at, created_by, updated_at, updated_by) VALUES (1, 1, 1, 'D-1', 'D', 'x', 9, 'x', 9)`,
		`INSERT INTO document_revisions (id, document_id, hash, generation, created_at, created_by) VALUES (1, 1, x'00', 0, 'x', 9)`,
		`INSERT INTO document_branches (id, organisation_id, document_id, name, revision_id, created_at, created_by) VALUES (1, 1, 1, 'main', 1, 'x', 9), (2, 1, 1, 'b', 1, 'x', 9)`,
	}
	// insert writes one row keyed by ?1 with the checked column set to ?2;
	// row reads back every column of the row keyed 1 as a JSON array.
	cases := []struct {
		table, insert, row string
		initial, want      string // the row keyed 1: its checked value, all of it read back
		values             []string
	}{
		{"invites",
			`INSERT INTO invites (id, organisation_id, code, email, expires_at, revoked, domain, auto_add, approval, status, created_by, created_at)
				VALUES (?1, 1, 'code' || ?1, 'a@example.com', 'e', 1, 'example.com', 1, 1, ?2, 9, 'c')`,
			`SELECT json_array(id, organisation_id, code, email, expires_at, revoked, domain, auto_add, approval, status, created_by, created_at) FROM invites WHERE id = 1`,
			"rejected",
			`[1,1,"code1","a@example.com","e",1,"example.com",1,1,"rejected",9,"c"]`,
			[]string{"pending", "accepted", "rejected", "revoked"}},
		{"integration_deliveries",
			`INSERT INTO integration_deliveries (id, organisation_id, integration_id, event, body, status, attempts, next_attempt_at, response_code, last_error, created_at, delivered_at)
				VALUES (?1, 1, 1, 'ev', '{}', ?2, 3, 'n', 500, 'boom', 'c', 'd')`,
			`SELECT json_array(id, organisation_id, integration_id, event, body, status, attempts, next_attempt_at, response_code, last_error, created_at, delivered_at) FROM integration_deliveries WHERE id = 1`,
			"failed",
			`[1,1,1,"ev","{}","failed",3,"n",500,"boom","c","d"]`,
			[]string{"pending", "delivered", "failed"}},
		{"schedule_invitees",
			`INSERT INTO schedule_invitees (schedule_id, user_id, status, latitude, longitude, updated_at) VALUES (1, 9 + ?1, ?2, 51.5, -0.25, 'u')`,
			`SELECT json_array(schedule_id, user_id, status, latitude, longitude, updated_at) FROM schedule_invitees WHERE user_id = 10`,
			"checked_in",
			`[1,10,"checked_in",51.5,-0.25,"u"]`,
			[]string{"invited", "checked_in", "attending", "declined"}},
		{"toolbox_users",
			`INSERT INTO toolbox_users (id, organisation_id, toolbox_id, schedule_id, user_id, first_name, last_name, email, phone_number, company, position, signature, signed_at, signed_method, signed_by)
				VALUES (?1, 1, 1, 1, 9 + ?1, 'F', 'L', 'f@example.com', '+44', 'Co', 'Pos', 'sig', 's', ?2, 9)`,
			`SELECT json_array(id, organisation_id, toolbox_id, schedule_id, user_id, first_name, last_name, email, phone_number, company, position, signature, signed_at, signed_method, signed_by) FROM toolbox_users WHERE id = 1`,
			"user_qr",
			`[1,1,1,1,10,"F","L","f@example.com","+44","Co","Pos","sig","s","user_qr",9]`,
			[]string{"declaration", "signature", "toolbox_qr", "user_qr", "app"}},
		{"document_merge_requests",
			`INSERT INTO document_merge_requests (id, organisation_id, number, document_id, from_document_id, from_branch_id, to_branch_id, title, description, status, revision_id, created_at, created_by, updated_at, closed_at, closed_by)
				VALUES (?1, 1, ?1, 1, 1, 2, 1, 'T', 'D', ?2, 1, 'c', 9, 'u', 'z', 9)`,
			`SELECT json_array(id, organisation_id, number, document_id, from_document_id, from_branch_id, to_branch_id, title, description, status, revision_id, created_at, created_by, updated_at, closed_at, closed_by) FROM document_merge_requests WHERE id = 1`,
			"merged",
			`[1,1,1,1,1,2,1,"T","D","merged",1,"c",9,"u","z",9]`,
			[]string{"open", "merged", "closed"}},
	}
	before := schemaOf(t, s.Writer)
	// Indexes that later migrations add to these tables are not the
	// rebuild's to keep: it runs, in order, before them.
	later := indexesAddedAfter(t, "0071")
	for _, name := range later {
		delete(before, "index "+name)
	}
	if err := s.InTxSQL(ctx, func(tx *sql.Tx, q *Queries) error {
		for _, p := range parents {
			if _, err := tx.Exec(p); err != nil {
				return err
			}
		}
		for _, c := range cases {
			if _, err := tx.Exec(c.insert, 1, c.initial); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(string(rebuild)); err != nil {
			return err
		}
		// Columns later migrations add to these tables, as they do (the
		// rebuild runs, in order, before them): 0160's duplicate_of.
		_, err := tx.Exec(`ALTER TABLE toolbox_users ADD COLUMN duplicate_of INTEGER`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	after := schemaOf(t, s.Writer)
	for _, name := range later {
		delete(after, "index "+name)
	}
	for k, v := range before {
		if after[k] != v {
			t.Errorf("%s changed by the rebuild:\nbefore: %s\nafter: %s", k, v, after[k])
		}
	}
	for k := range after {
		if _, ok := before[k]; !ok {
			t.Errorf("%s is new after the rebuild", k)
		}
	}
	for _, c := range cases {
		t.Run(c.table, func(t *testing.T) {
			var got string
			if err := s.Writer.QueryRow(c.row).Scan(&got); err != nil || got != c.want {
				t.Fatalf("after the rebuild: %s (%v), want %s", got, err, c.want)
			}
			if strings.Contains(after["table "+c.table], " IN (") {
				t.Errorf("%s still has an IN list: %s", c.table, after["table "+c.table])
			}
			rows, err := s.Writer.Query(`EXPLAIN `+c.insert, 100, c.values[0])
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var addr, p1, p2, p3, p5 int64
				var opcode string
				var p4, comment any
				if err := rows.Scan(&addr, &opcode, &p1, &p2, &p3, &p4, &p5, &comment); err != nil {
					t.Fatal(err)
				}
				if opcode == "OpenEphemeral" {
					t.Errorf("an insert into %s still opens an ephemeral table (addr %d)", c.table, addr)
				}
			}
			rows.Close()
			tries := []struct {
				value string
				ok    bool
			}{{"other", false}, {"", false}, {strings.ToUpper(c.values[0]), false}, {c.values[0] + " ", false}}
			for _, v := range c.values {
				tries = append(tries, struct {
					value string
					ok    bool
				}{v, true})
			}
			for i, try := range tries {
				err := s.InTxSQL(ctx, func(tx *sql.Tx, q *Queries) error {
					_, err := tx.Exec(c.insert, 2+i, try.value)
					return err
				})
				if (err == nil) != try.ok {
					t.Errorf("%q: err %v, want accepted %v", try.value, err, try.ok)
				}
			}
		})
	}
}

// TestPageCacheSizes: readers and the writer open with the page caches
// dsn sets (the server's peak memory depends on them).
func TestPageCacheSizes(t *testing.T) {
	t.Parallel()
	s := openTest(t)
	ctx := context.Background()
	for _, c := range []struct {
		name string
		d    *sql.DB
		want int
	}{{"reader", s.Reader, readerCacheKiB}, {"writer", s.Writer, writerCacheKiB}} {
		var got int
		if err := c.d.QueryRowContext(ctx, "PRAGMA cache_size").Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("%s cache_size = %d, want %d", c.name, got, c.want)
		}
	}
}

// TestGrantLookupsSeek: the queries that find the grants applying to one
// caller seek them by key. Without statistics the planner preferred
// permission_grants_target on the organisation column alone, which reads
// every grant of the organisation: with tens of thousands of project grants
// each lookup took tens of milliseconds, on the writer.
func TestGrantLookupsSeek(t *testing.T) {
	t.Parallel()
	s := openTest(t)
	for _, c := range []struct {
		name, query, want string
	}{
		{"AccessGrants", accessGrants, "SEARCH g USING PRIMARY KEY (scope_id=? AND target_id=?)"},
		{"ScopeGrantsForUser", scopeGrantsForUser, "SEARCH g USING PRIMARY KEY (scope_id=?)"},
		{"ScopeGrantAllowingIDs", scopeGrantAllowingIDs, "SEARCH g USING INDEX permission_grants_target (organisation_id=? AND scope_type=? AND target_id=?)"},
		{"ScopeGrantDenyingIDs", scopeGrantDenyingIDs, "SEARCH g USING INDEX permission_grants_denying (organisation_id=? AND scope_type=? AND target_id=?)"},
	} {
		plan, err := queryPlan(context.Background(), s.Reader, c.query)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !slices.Contains(plan, c.want) {
			t.Errorf("%s: plan %q lacks %q", c.name, plan, c.want)
		}
	}
}

// scanAllowed names the queries that read a whole table on purpose: sweeps
// over every row and tables of a handful of rows.
var scanAllowed = map[string]string{
	"auditChains":                 "audit verify reads every chain",
	"signingCodeSweep":            "expiry sweep",
	"outboxList":                  "the mail outbox, drained whole",
	"signingKeyList":              "a handful of keys",
	"inductionReminderCandidates": "the reminder sweep",
	"syncReceived":                "the version vector: a row per node",
	"syncReceivedRecordLog":       "once, when a clone starts: the whole copied log",
	"syncNodeIDsUsed":             "at pairing: every node id in use (at most 1024 rows each)",
	"numberBlocksHeld":            "a clone's leased blocks: a few rows per counter",
	"syncStagedPrune":             "objects a cut fetch left waiting: few, emptied by the next fetch",
	"workItemsProvisional":        "a partial index of provisional numbers only (none outside a clone offline)",
	"systemsProvisional":          "a partial index of provisional numbers only (none outside a clone offline)",
	"documentsProvisional":        "a partial index of provisional numbers only (none outside a clone offline)",
	"mergeRequestsProvisional":    "a partial index of provisional numbers only (none outside a clone offline)",
	"assetGroupsProvisional":      "a partial index of provisional numbers only (none outside a clone offline)",
}

// TestQueryPlansSeek: no sqlc query reads a whole table to find a few rows
// (every organisation's rows, in a multi-tenant file), except those named
// in scanAllowed. The queries are read from the generated files.
func TestQueryPlansSeek(t *testing.T) {
	t.Parallel()
	s := openTest(t)
	files, err := filepath.Glob("*.sql.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("generated files: %v %v", files, err)
	}
	queries := map[string]string{}
	for _, f := range files {
		file, err := goparser.ParseFile(gotoken.NewFileSet(), f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != gotoken.CONST {
				continue
			}
			for _, spec := range g.Specs {
				v := spec.(*ast.ValueSpec)
				if lit, ok := v.Values[0].(*ast.BasicLit); ok && lit.Kind == gotoken.STRING {
					queries[v.Names[0].Name] = strings.Trim(lit.Value, "`")
				}
			}
		}
	}
	if len(queries) < 100 {
		t.Fatalf("only %d queries found", len(queries))
	}
	// Foreign key enforcement is left out: an insert's plan lists the
	// child tables SQLite would scan to settle deferred violations, code
	// that runs only while such violations are pending (never here).
	ctx := context.Background()
	conn, err := s.Reader.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "PRAGMA foreign_keys = OFF"); err != nil {
		t.Fatal(err)
	}
	for name, query := range queries {
		plan, err := queryPlan(ctx, conn, query)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		for _, detail := range plan {
			// json_each and constant rows are the query's own input.
			if strings.HasPrefix(detail, "SCAN ") && !strings.Contains(detail, "VIRTUAL TABLE") &&
				!strings.Contains(detail, "CONSTANT ROW") && scanAllowed[name] == "" {
				t.Errorf("%s reads a whole table: %s", name, detail)
			}
		}
	}
}

// queryPlan returns the detail lines of EXPLAIN QUERY PLAN for a generated
// query. Its numbered parameters must be bound; the plan does not depend
// on their values.
func queryPlan(ctx context.Context, q interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}, query string) ([]string, error) {
	var args []any
	for n := 1; strings.Contains(query, fmt.Sprintf("?%d", n)); n++ {
		args = append(args, 0)
	}
	rows, err := q.QueryContext(ctx, "EXPLAIN QUERY PLAN "+query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			return nil, err
		}
		plan = append(plan, detail)
	}
	return plan, rows.Err()
}

// indexesAddedAfter names the indexes created by the migrations that come
// after the one numbered version.
func indexesAddedAfter(t *testing.T, version string) []string {
	t.Helper()
	entries, err := migrationFS.ReadDir("migrations")
	if err != nil {
		t.Fatal(err)
	}
	create := regexp.MustCompile(`(?i)CREATE\s+(?:UNIQUE\s+)?INDEX\s+(?:IF\s+NOT\s+EXISTS\s+)?(\w+)`)
	var names []string
	for _, e := range entries {
		if e.Name()[:len(version)] <= version {
			continue
		}
		body, err := migrationFS.ReadFile("migrations/" + e.Name())
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range create.FindAllStringSubmatch(string(body), -1) {
			names = append(names, m[1])
		}
	}
	return names
}
