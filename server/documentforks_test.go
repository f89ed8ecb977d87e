package server

import (
	"context"
	"sort"
	"strings"
	"sync"
	"testing"
)

// chunkCount is the number of stored engine objects.
func chunkCount(t *testing.T, e *testEnv) int {
	t.Helper()
	var n int
	if err := e.store.Writer.QueryRowContext(context.Background(), `SELECT count(*) FROM document_chunks`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// historyHashes is the first-parent history of a branch, newest first.
func historyHashes(t *testing.T, e *testEnv, u *testUser, doc, branch string) []string {
	t.Helper()
	var out []string
	for _, r := range e.must(200, u, "GET", doc+"/revisions?branch="+branch, nil).arr(t) {
		out = append(out, r["hash"].(string))
	}
	return out
}

func TestDocumentFork(t *testing.T) {
	t.Parallel()
	f := newDocFixture(t)
	e := f.e
	c := content{f: f, doc: "/documents/" + f.doc}
	// some history on two branches, and a custom field value
	h0 := c.head(t, "main")
	h1 := c.change(t, "POST", c.rev(h0)+"/clauses", map[string]any{"text": "first"})
	h2 := c.change(t, "POST", c.rev(h1)+"/clauses", map[string]any{"text": "second"})
	e.must(201, f.alice, "POST", c.doc+"/branches", map[string]any{"name": "feature", "revision": h1})
	h3 := e.must(200, f.alice, "POST", c.rev(h1)+"/clauses?branch=feature", map[string]any{"text": "on feature"}).obj(t)["hash"].(string)
	e.must(200, f.alice, "PATCH", c.doc, map[string]any{"type_id": f.typeID, "fields": map[string]any{f.enumID: f.valueA}})
	e.must(200, f.alice, "PATCH", c.doc+"/branches/feature", map[string]any{"protected": true})
	acme2 := e.org(f.alice, "Acme Two")
	chunks := chunkCount(t, e)
	var fork, fork2 string
	e.run(t, []scenario{
		{"member without EDIT_DOCUMENTS", f.bob, "POST", c.doc, nil, 403, nil},
		{"foreign organisation", f.mallory, "POST", c.doc, nil, 403, nil},
		{"foreign member forks into its own organisation", f.mallory, "POST", c.doc, map[string]any{"organisation_id": f.evil}, 403, nil},
		{"into an organisation the caller is not in", f.alice, "POST", c.doc, map[string]any{"organisation_id": f.evil}, 403, nil},
		{"into an absent organisation", f.alice, "POST", c.doc, map[string]any{"organisation_id": "999"}, 400, nil},
		{"organisation_id not a snowflake", f.alice, "POST", c.doc, map[string]any{"organisation_id": "abc"}, 400, nil},
		{"organisation_id of the wrong type", f.alice, "POST", c.doc, map[string]any{"organisation_id": true}, 400, nil},
		{"title too short", f.alice, "POST", c.doc, map[string]any{"title": "x"}, 400, wantField("title")},
		{"title too long", f.alice, "POST", c.doc, map[string]any{"title": strings.Repeat("t", 201)}, 400, wantField("title")},
		{"project of another organisation", f.alice, "POST", c.doc, map[string]any{"organisation_id": acme2, "project_id": f.project}, 400, wantField("project_id")},
		{"read-only origin_id", f.alice, "POST", c.doc, map[string]any{"origin_id": f.doc}, 400, wantField("origin_id")},
		{"malformed JSON", f.alice, "POST", c.doc, `{"title":`, 400, nil},
		{"not an object", f.alice, "POST", c.doc, `[1]`, 400, nil},
		{"absent document", f.alice, "POST", "/documents/4242", nil, 404, nil},
		{"bad id", f.alice, "POST", "/documents/abc", nil, 400, nil},
		{"no token", nil, "POST", c.doc, nil, 401, nil},

		{"fork within the organisation", f.alice, "POST", c.doc, nil, 201, func(t *testing.T, r *testResponse) {
			o := r.obj(t)
			fork = o["id"].(string)
			fv, _ := o["fields"].(map[string]any)[f.enumID].(map[string]any)
			if o["origin_id"] != f.doc || o["number"] != float64(2) || o["formatted_number"] != "SP-2" || o["title"] != "Main spec" ||
				o["branch_count"] != float64(2) || fv["value"] != f.valueA || o["default_branch"].(map[string]any)["name"] != "main" ||
				o["default_branch"].(map[string]any)["revision"].(map[string]any)["hash"] != h2 {
				t.Fatalf("fork %v", o)
			}
		}},
		{"origin counts its fork", f.bob, "GET", c.doc, nil, 200, wantKey("fork_count", 1)},
		{"fork into another organisation of the caller", f.alice, "POST", c.doc, map[string]any{"organisation_id": acme2, "title": "Their copy"}, 201, func(t *testing.T, r *testResponse) {
			o := r.obj(t)
			fork2 = o["id"].(string)
			if o["organisation_id"] != acme2 || o["origin_id"] != f.doc || o["number"] != float64(1) || o["title"] != "Their copy" ||
				o["type"] != nil || len(o["fields"].(map[string]any)) != 0 {
				t.Fatalf("fork %v", o)
			}
		}},
		{"origin counts both", f.alice, "GET", c.doc, nil, 200, wantKey("fork_count", 2)},
	})
	e.run(t, []scenario{
		{"a fork in another organisation is not readable by the origin's member", f.bob, "GET", "/documents/" + fork2, nil, 403, nil},
		{"its owner reads it", f.alice, "GET", "/documents/" + fork2, nil, 200, wantKey("branch_count", 2)},
	})
	if n := chunkCount(t, e); n != chunks {
		t.Fatalf("forking stored %d new objects; a fork shares its origin's", n-chunks)
	}
	fd := "/documents/" + fork
	// the same history, with the same hashes, on both branches
	for _, br := range []string{"main", "feature"} {
		want, got := historyHashes(t, e, f.alice, c.doc, br), historyHashes(t, e, f.alice, fd, br)
		if strings.Join(want, ",") != strings.Join(got, ",") {
			t.Fatalf("%s history: origin %v, fork %v", br, want, got)
		}
	}
	if got := historyHashes(t, e, f.alice, fd, "feature"); got[0] != h3 {
		t.Fatalf("feature head %v, want %s", got, h3)
	}
	// protection is the origin's rule, not copied
	if e.must(200, f.alice, "GET", fd+"/branches/feature", nil).obj(t)["branch"].(map[string]any)["protected"] != false {
		t.Fatal("fork copied the branch protection")
	}
	// revision rows are the fork's own, with the same content
	rev := e.must(200, f.alice, "GET", fd+"/revisions/"+h1, nil).obj(t)
	orev := e.must(200, f.alice, "GET", c.rev(h1), nil).obj(t)
	if rev["document_id"] != fork || rev["id"] == orev["id"] || rev["hash"] != orev["hash"] {
		t.Fatalf("fork revision %v, origin %v", rev, orev)
	}
	// the fork changes apart from its origin
	fh := c.head(t, "main")
	nh := e.must(200, f.alice, "POST", fd+"/revisions/"+h2+"/clauses", map[string]any{"text": "fork only"}).obj(t)["hash"].(string)
	if c.head(t, "main") != fh || nh == fh {
		t.Fatal("a change of the fork moved the origin")
	}
	e.run(t, []scenario{
		{"a fork of a fork names its own origin", f.alice, "POST", fd, nil, 201, wantKey("origin_id", fork)},
		{"deleting a fork drops the count", f.alice, "DELETE", fd, nil, 200, nil},
		{"origin count", f.alice, "GET", c.doc, nil, 200, wantKey("fork_count", 1)},
		{"a deleted document cannot be forked", f.alice, "POST", fd, nil, 404, nil},
	})
}

// TestDocumentForkNumbersConcurrent: parallel forks draw distinct,
// gap-free numbers in the fork's organisation, and each copies the whole
// history.
func TestDocumentForkNumbersConcurrent(t *testing.T) {
	t.Parallel()
	f := newDocFixture(t)
	e := f.e
	const n = 12
	var wg sync.WaitGroup
	numbers := make(chan float64, n)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := e.do(f.alice, "POST", "/documents/"+f.doc, nil)
			if r.Status != 201 {
				t.Errorf("fork: %d %s", r.Status, r.Body)
				return
			}
			numbers <- r.obj(t)["number"].(float64)
		}()
	}
	wg.Wait()
	close(numbers)
	var got []int
	for x := range numbers {
		got = append(got, int(x))
	}
	sort.Ints(got)
	for i, x := range got {
		if x != i+2 { // the origin is number 1
			t.Fatalf("numbers %v, want 2..%d without gaps", got, n+1)
		}
	}
	if len(got) != n {
		t.Fatalf("%d forks made, want %d", len(got), n)
	}
	e.run(t, []scenario{{"origin counts them", f.alice, "GET", "/documents/" + f.doc, nil, 200, wantKey("fork_count", n)}})
}
