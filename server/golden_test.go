package server

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/server")

var (
	snowflakeRE = regexp.MustCompile(`^[0-9]{15,20}$`)
	timeRE      = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z$`)
)

// normalise replaces what changes between runs (snowflake ids, in order of
// first appearance, and timestamps) so a body can be compared with its
// golden file.
func normalise(v any, ids map[string]string) any {
	switch x := v.(type) {
	case map[string]any:
		// In key order, so placeholders are numbered alike on every run.
		for _, k := range slices.Sorted(maps.Keys(x)) {
			x[k] = normalise(x[k], ids)
		}
	case []any:
		for i, e := range x {
			x[i] = normalise(e, ids)
		}
	case string:
		if snowflakeRE.MatchString(x) {
			if _, ok := ids[x]; !ok {
				ids[x] = fmt.Sprintf("<id %d>", len(ids)+1)
			}
			return ids[x]
		}
		if timeRE.MatchString(x) {
			return "<time>"
		}
	}
	return v
}

// golden compares a response body with testdata/server/<name>.json
// (rewritten with -update). ids is shared across one test's bodies, so the
// same id has the same placeholder in every file.
func golden(t *testing.T, name string, r *testResponse, ids map[string]string) {
	t.Helper()
	var v any
	if err := json.Unmarshal(r.Body, &v); err != nil {
		t.Fatalf("%s: not JSON: %s", name, r.Body)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(map[string]any{"status": r.Status, "body": normalise(v, ids)}); err != nil {
		t.Fatal(err)
	}
	got := buf.Bytes()
	path := filepath.Join("..", "testdata", "server", name+".json")
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%s: %v (run go test ./server -run TestGolden -update to create it)", name, err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from %s (go test ./server -run TestGolden -update rewrites it after review):\ngot:\n%s\nwant:\n%s", name, path, got, want)
	}
}

// TestGoldenResponses pins the whole shape of the main objects and of the
// error body, on the shared fixture cast.
func TestGoldenResponses(t *testing.T) {
	t.Parallel()
	f := newOrgFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	ids := map[string]string{}
	// Fixed first, so placeholders do not depend on map order.
	for _, u := range []*testUser{f.alice, f.bob, f.pen, f.mallory, f.nobody} {
		normalise(u.ID, ids)
	}
	normalise(f.acme, ids)
	normalise(f.evil, ids)
	role := e.role(f.alice, f.acme, "Crew")
	e.grant(f.alice, f.acme, role, map[string]string{"VIEW_PROJECTS": "allow", "MANAGE_TEAMS": "deny"})
	e.assign(f.alice, f.acme, f.bob, role)
	project := e.must(201, f.alice, "POST", acme+"/projects", map[string]any{"name": "Tunnel", "code": "T1", "description": "Bore"})
	golden(t, "project_create", project, ids)
	pid := project.obj(t)["id"].(string)
	e.must(201, f.alice, "POST", "/projects/"+pid+"/milestones", map[string]any{"name": "Portal", "due_at": "2027-01-01T00:00:00.000Z"})
	for _, c := range []struct {
		name string
		as   *testUser
		path string
	}{
		{"organisation", f.bob, acme},
		{"members", f.alice, acme + "/members"},
		{"roles", f.bob, acme + "/roles"},
		{"project_as_member", f.bob, "/projects/" + pid},
		{"project_list", f.bob, acme + "/projects"},
		{"milestones", f.bob, "/projects/" + pid + "/milestones"},
		{"me", f.bob, "/users/@me"},
		{"my_organisations", f.bob, "/users/@me/organisations"},
		{"error_not_a_member", f.mallory, acme},
		{"error_absent", f.alice, "/projects/123456789012345678"},
	} {
		t.Run(c.name, func(t *testing.T) {
			golden(t, c.name, e.do(c.as, "GET", c.path, nil), ids)
		})
	}
	golden(t, "error_fields", e.do(f.alice, "PATCH", acme, map[string]any{"name": "A", "code": "far too long a code"}), ids)
}
