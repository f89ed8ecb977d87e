package server

import (
	"fmt"
	"testing"
	"time"

	"workspace/db"
)

func TestDocumentBookmarks(t *testing.T) {
	t.Parallel()
	f := newDocFixture(t)
	e := f.e
	doc := "/documents/" + f.doc
	bm := doc + "/bookmark"
	carol := e.user("carol")
	e.sharesFromAnyone(carol)
	sid := e.must(201, f.alice, "POST", doc+"/shares", map[string]any{"user_id": carol.ID, "scope_view": true}).obj(t)["id"].(string)
	e.must(200, carol, "POST", "/users/@me/document-shares/"+sid+"/accept", nil)
	var first string
	e.run(t, []scenario{
		{"bookmark", f.alice, "PUT", bm, nil, 200, func(t *testing.T, r *testResponse) {
			o := r.obj(t)
			first = o["created_at"].(string)
			if o["document_id"] != f.doc || o["user"].(map[string]any)["id"] != f.alice.ID {
				t.Fatalf("bookmark %v", o)
			}
		}},
		{"a member who may view", f.bob, "PUT", bm, nil, 200, nil},
		{"a share holder with scope_view", carol, "PUT", bm, nil, 200, nil},
		{"foreign organisation", f.mallory, "PUT", bm, nil, 403, nil},
		{"pending member", f.pen, "PUT", bm, nil, 403, nil},
		{"a user of no organisation", f.nobody, "PUT", bm, nil, 403, nil},
		{"absent document", f.alice, "PUT", "/documents/4242/bookmark", nil, 404, nil},
		{"bad id", f.alice, "PUT", "/documents/x/bookmark", nil, 400, nil},
		{"malformed JSON", f.alice, "PUT", bm, `{"x":`, 400, nil},
		{"not an object", f.alice, "PUT", bm, `[1]`, 400, nil},
		{"no token", nil, "PUT", bm, nil, 401, nil},
		{"the document counts three", f.alice, "GET", doc, nil, 200, func(t *testing.T, r *testResponse) {
			o := r.obj(t)
			b, _ := o["bookmark"].(map[string]any)
			if o["bookmark_count"] != float64(3) || b["user"].(map[string]any)["id"] != f.alice.ID {
				t.Fatalf("document %v", o)
			}
		}},
	})
	e.clock.Advance(time.Hour)
	e.run(t, []scenario{
		{"bookmarking again keeps the first", f.alice, "PUT", bm, map[string]any{"ignored": true}, 200, func(t *testing.T, r *testResponse) {
			if r.obj(t)["created_at"] != first {
				t.Fatalf("bookmark %s, want created %s", r.Body, first)
			}
		}},
		{"foreign cannot remove", f.mallory, "DELETE", bm, nil, 403, nil},
		{"remove", f.bob, "DELETE", bm, nil, 204, nil},
		{"remove again", f.bob, "DELETE", bm, nil, 204, nil},
		{"bob's is gone", f.bob, "GET", doc, nil, 200, func(t *testing.T, r *testResponse) {
			o := r.obj(t)
			if o["bookmark_count"] != float64(2) || o["bookmark"] != nil {
				t.Fatalf("document %v", o)
			}
		}},
		{"absent document", f.alice, "DELETE", "/documents/4242/bookmark", nil, 404, nil},
		{"a deleted document", f.alice, "DELETE", doc, nil, 200, nil},
		{"cannot be bookmarked", f.alice, "PUT", bm, nil, 404, nil},
	})
}

// TestDocumentAccessedAt: reading a document records when, per user, at
// most once a minute.
func TestDocumentAccessedAt(t *testing.T) {
	t.Parallel()
	f := newDocFixture(t)
	e := f.e
	doc := "/documents/" + f.doc
	accessed := func(u *testUser) any { return e.must(200, u, "GET", doc, nil).obj(t)["accessed_at"] }
	list := func(u *testUser) any {
		for _, d := range e.must(200, u, "GET", "/organisations/"+f.acme+"/documents", nil).arr(t) {
			if d["id"] == f.doc {
				return d["accessed_at"]
			}
		}
		t.Fatal("document not listed")
		return nil
	}
	if got := list(f.alice); got != nil {
		t.Fatalf("accessed_at %v before any read", got)
	}
	t0 := db.FormatTime(e.clock.Now())
	if got := accessed(f.alice); got != t0 {
		t.Fatalf("accessed_at %v, want %s", got, t0)
	}
	e.clock.Advance(30 * time.Second)
	if got := accessed(f.alice); got != t0 {
		t.Fatalf("accessed_at %v within a minute, want %s kept", got, t0)
	}
	if got := list(f.bob); got != nil {
		t.Fatalf("bob's accessed_at %v before bob read it", got)
	}
	e.clock.Advance(31 * time.Second)
	t1 := db.FormatTime(e.clock.Now())
	if got := accessed(f.alice); got != t1 {
		t.Fatalf("accessed_at %v after a minute, want %s", got, t1)
	}
	if got := list(f.alice); got != t1 {
		t.Fatalf("list accessed_at %v, want %s", got, t1)
	}
	// a refused read records nothing
	e.must(403, f.mallory, "GET", doc, nil)
	var n int
	if err := e.store.Writer.QueryRow(`SELECT count(*) FROM document_accesses WHERE user_id = ?`, f.mallory.id).Scan(&n); err != nil || n != 0 {
		t.Fatalf("mallory's accesses %d (%v)", n, err)
	}
}

// TestDocumentListCounts: the organisation's document list shows each
// document's bookmark, fork, branch and work item counts, and the caller's
// own bookmark.
func TestDocumentListCounts(t *testing.T) {
	t.Parallel()
	f := newWIFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	var docs []string
	for _, title := range []string{"Spec A", "Spec B"} {
		docs = append(docs, e.must(201, f.alice, "POST", "/documents", map[string]any{"organisation_id": f.acme, "title": title}).obj(t)["id"].(string))
	}
	a, b := "/documents/"+docs[0], "/documents/"+docs[1]
	e.must(200, f.alice, "PUT", a+"/bookmark", nil)
	e.must(200, f.bob, "PUT", a+"/bookmark", nil)
	e.must(200, f.bob, "PUT", b+"/bookmark", nil)
	e.must(201, f.alice, "POST", a, nil)
	e.must(201, f.alice, "POST", a, nil)
	e.must(201, f.alice, "POST", b+"/branches", map[string]any{"name": "draft"})
	for i, w := range []struct {
		doc, status string
	}{{docs[0], "open"}, {docs[0], "open"}, {docs[0], "closed"}, {docs[1], "closed"}} {
		e.must(201, f.alice, "POST", acme+"/workitems", map[string]any{"type_id": f.task, "title": fmt.Sprint("Item ", i), "status": w.status, "document_id": w.doc})
	}
	type counts struct {
		bookmarks, forks, branches, open, closed float64
		mine                                     bool
	}
	want := map[string]counts{docs[0]: {2, 2, 1, 2, 1, true}, docs[1]: {1, 0, 2, 0, 1, false}}
	for _, d := range e.must(200, f.alice, "GET", acme+"/documents", nil).arr(t) {
		w, ok := want[d["id"].(string)]
		if !ok {
			if d["origin_id"] != docs[0] || d["fork_count"] != float64(0) || d["bookmark_count"] != float64(0) {
				t.Fatalf("fork %v", d)
			}
			continue
		}
		got := counts{d["bookmark_count"].(float64), d["fork_count"].(float64), d["branch_count"].(float64),
			d["open_work_item_count"].(float64), d["closed_work_item_count"].(float64), d["bookmark"] != nil}
		if got != w {
			t.Errorf("%s: counts %+v, want %+v", d["title"], got, w)
		}
		if tc := d["work_item_types_count"].(map[string]any)[f.task].(map[string]any); tc["open_count"] != w.open || tc["closed_count"] != w.closed {
			t.Errorf("%s: work_item_types_count %v", d["title"], tc)
		}
	}
	// bob's own bookmarks
	for _, d := range e.must(200, f.bob, "GET", acme+"/documents", nil).arr(t) {
		if d["origin_id"] == nil && d["bookmark"] == nil {
			t.Errorf("bob's bookmark of %s not shown", d["title"])
		}
	}
	e.run(t, []scenario{
		{"foreign organisation", f.mallory, "GET", acme + "/documents", nil, 403, nil},
	})
}
