package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
)

// mrFixture: the doc fixture's document with a text column, a number
// column and three clauses on main.
type mrFixture struct {
	*docFixture
	c         content
	note, qty string
	clauses   []string
	mrs       string // /documents/{id}/merge-requests
	h0        string // main's head after the setup
}

func newMRFixture(t *testing.T) *mrFixture {
	f := &mrFixture{docFixture: newDocFixture(t)}
	f.c = content{f: f.docFixture, doc: "/documents/" + f.doc}
	f.mrs = f.c.doc + "/merge-requests"
	h := f.c.head(t, "main")
	h = f.c.change(t, "POST", f.c.rev(h)+"/columns", map[string]any{"name": "Note"})
	h = f.c.change(t, "POST", f.c.rev(h)+"/columns", map[string]any{"name": "Qty", "type": "number"})
	for _, col := range f.e.must(200, f.alice, "GET", f.c.rev(h)+"/columns", nil).arr(t) {
		if col["name"] == "Note" {
			f.note = col["column_id"].(string)
		} else {
			f.qty = col["column_id"].(string)
		}
	}
	for _, txt := range []string{"one\n", "two\n", "three\n"} {
		h = f.c.change(t, "POST", f.c.rev(h)+"/clauses", map[string]any{"text": txt})
	}
	f.clauses = f.c.clauseIDs(t, h)
	f.h0 = h
	return f
}

// branch makes a branch from main's head.
func (f *mrFixture) branch(t *testing.T, name string) {
	t.Helper()
	f.e.must(201, f.alice, "POST", f.c.doc+"/branches", map[string]any{"name": name})
}

// set sets a cell on a branch from its head.
func (f *mrFixture) set(t *testing.T, branch, clause, col, v string) {
	t.Helper()
	h := f.c.head(t, branch)
	f.e.must(200, f.alice, "PATCH", f.c.rev(h)+"/fields?branch="+branch, map[string]any{"clause_id": clause, "column_id": col, "value": v})
}

func (f *mrFixture) open(t *testing.T, from, to string) string {
	t.Helper()
	r := f.e.must(201, f.alice, "POST", f.mrs, map[string]any{"from_branch": from, "to_branch": to})
	return fmt.Sprint(r.obj(t)["number"])
}

func wantMergeable(want bool, conflicts int) func(t *testing.T, r *testResponse) {
	return func(t *testing.T, r *testResponse) {
		t.Helper()
		o := r.obj(t)
		if o["mergeable"] != want || o["conflict_count"] != float64(conflicts) || len(o["conflicts"].([]any)) != conflicts {
			t.Fatalf("mergeable %v with %v conflicts, want %v with %d: %s", o["mergeable"], o["conflict_count"], want, conflicts, r.Body)
		}
	}
}

func TestMergeRequestRows(t *testing.T) {
	t.Parallel()
	f := newMRFixture(t)
	e := f.e
	f.branch(t, "feature")
	evilMRs := "/documents/" + f.evilDoc + "/merge-requests"
	e.must(201, f.mallory, "POST", "/documents/"+f.evilDoc+"/branches", map[string]any{"name": "evil-feature"})
	evilMR := e.must(201, f.mallory, "POST", evilMRs, map[string]any{"from_branch": "evil-feature", "to_branch": "main"}).obj(t)
	if evilMR["number"] != float64(1) {
		t.Fatalf("the other organisation's first request is number %v", evilMR["number"])
	}
	body := map[string]any{"from_branch": "feature", "to_branch": "main"}
	e.run(t, []scenario{
		{"create: no token", nil, "POST", f.mrs, body, 401, nil},
		{"create: member without EDIT_DOCUMENTS", f.bob, "POST", f.mrs, body, 403, nil},
		{"create: pending member", f.pen, "POST", f.mrs, body, 403, nil},
		{"create: foreign organisation", f.mallory, "POST", f.mrs, body, 403, nil},
		{"create: in no organisation", f.nobody, "POST", f.mrs, body, 403, nil},
		{"create: absent document", f.alice, "POST", "/documents/123456789/merge-requests", body, 404, nil},
		{"create: malformed", f.alice, "POST", f.mrs, `{"from_branch":`, 400, nil},
		{"create: wrong type", f.alice, "POST", f.mrs, map[string]any{"from_branch": 5, "to_branch": "main"}, 400, wantField("from_branch")},
		{"create: from_branch required", f.alice, "POST", f.mrs, map[string]any{"to_branch": "main"}, 400, wantField("from_branch")},
		{"create: to_branch required", f.alice, "POST", f.mrs, map[string]any{"from_branch": "feature"}, 400, wantField("to_branch")},
		{"create: the same branch", f.alice, "POST", f.mrs, map[string]any{"from_branch": "main", "to_branch": "main"}, 400, wantField("to_branch")},
		{"create: absent branch", f.alice, "POST", f.mrs, map[string]any{"from_branch": "nope", "to_branch": "main"}, 400, wantField("from_branch")},
		{"create: a branch of another document", f.alice, "POST", f.mrs, map[string]any{"from_branch": "evil-feature", "to_branch": "main"}, 400, wantField("from_branch")},
		{"create: title over 200", f.alice, "POST", f.mrs, map[string]any{"from_branch": "feature", "to_branch": "main", "title": strings.Repeat("t", 201)}, 400, wantField("title")},
		{"create: description over the limit", f.alice, "POST", f.mrs, map[string]any{"from_branch": "feature", "to_branch": "main", "description": strings.Repeat("d", maxDescriptionLen+1)}, 400, wantField("description")},
		{"create: read-only number", f.alice, "POST", f.mrs, map[string]any{"from_branch": "feature", "to_branch": "main", "number": 7}, 400, wantField("number")},
		{"create", f.alice, "POST", f.mrs, body, 201, func(t *testing.T, r *testResponse) {
			o := r.obj(t)
			if o["number"] != float64(1) || o["status"] != "open" || o["title"] != "Merge feature into main" ||
				o["from_branch"].(map[string]any)["name"] != "feature" || o["to_branch"].(map[string]any)["name"] != "main" ||
				o["user"].(map[string]any)["id"] != f.alice.ID || o["merge_base"] != f.h0 || o["mergeable"] != true {
				t.Fatalf("created %v", o)
			}
		}},
		{"create: one open request per pair of branches", f.alice, "POST", f.mrs, body, 409, nil},
		{"list", f.bob, "GET", f.mrs, nil, 200, func(t *testing.T, r *testResponse) {
			a := r.arr(t)
			if len(a) != 1 || r.Header.Get("X-Total-Count") != "1" {
				t.Fatalf("list %s", r.Body)
			}
			// the merge state costs a merge per row: only the single GET has it (docs/documents.md)
			for _, k := range []string{"mergeable", "reason", "merge_base", "conflicts", "conflict_count"} {
				if _, ok := a[0][k]; ok {
					t.Fatalf("the list row carries %s: %s", k, r.Body)
				}
			}
		}},
		{"list: filter status", f.bob, "GET", f.mrs + "?$filter=status%20eq%20'merged'", nil, 200, wantLen(0)},
		{"list: filter open", f.bob, "GET", f.mrs + "?$filter=status%20eq%20'open'", nil, 200, wantLen(1)},
		{"list: unknown filter field", f.bob, "GET", f.mrs + "?$filter=colour%20eq%201", nil, 400, nil},
		{"list: bad status value", f.bob, "GET", f.mrs + "?$filter=status%20eq%20'done'", nil, 400, nil},
		{"list: $top over 1000", f.bob, "GET", f.mrs + "?$top=1001", nil, 400, wantField("$top")},
		{"list: a page past the end", f.bob, "GET", f.mrs + "?$skip=5", nil, 200, wantLen(0)},
		{"list: foreign organisation", f.mallory, "GET", f.mrs, nil, 403, nil},
		{"list: the other organisation's list to alice", f.alice, "GET", evilMRs, nil, 403, nil},
		{"get", f.bob, "GET", f.mrs + "/1", nil, 200, wantMergeable(true, 0)},
		{"get: foreign organisation", f.mallory, "GET", f.mrs + "/1", nil, 403, nil},
		{"get: absent", f.bob, "GET", f.mrs + "/99", nil, 404, nil},
		{"get: not a number", f.bob, "GET", f.mrs + "/x", nil, 400, nil},
		{"get: zero", f.bob, "GET", f.mrs + "/0", nil, 400, nil},
		{"merge: member without EDIT_DOCUMENTS", f.bob, "POST", f.mrs + "/1/merge", nil, 403, nil},
		{"merge: foreign organisation", f.mallory, "POST", f.mrs + "/1/merge", nil, 403, nil},
		{"merge: absent", f.alice, "POST", f.mrs + "/99/merge", nil, 404, nil},
		{"merge: malformed", f.alice, "POST", f.mrs + "/1/merge", `{"resolutions":`, 400, nil},
		{"merge: resolutions not a list", f.alice, "POST", f.mrs + "/1/merge", map[string]any{"resolutions": "all"}, 400, wantField("resolutions")},
		{"merge: message over the limit", f.alice, "POST", f.mrs + "/1/merge", map[string]any{"message": strings.Repeat("m", maxDescriptionLen+1)}, 400, wantField("message")},
		{"merge: a resolution without id", f.alice, "POST", f.mrs + "/1/merge", map[string]any{"resolutions": []any{map[string]any{"take": "ours"}}}, 400, wantField("resolutions[0].id")},
		{"merge: a bad take", f.alice, "POST", f.mrs + "/1/merge", map[string]any{"resolutions": []any{map[string]any{"id": "x", "take": "mine"}}}, 400, wantField("resolutions[0].take")},
		{"merge: value without take value", f.alice, "POST", f.mrs + "/1/merge", map[string]any{"resolutions": []any{map[string]any{"id": "x", "take": "ours", "value": "v"}}}, 400, wantField("resolutions[0].value")},
		{"merge: take value without a value", f.alice, "POST", f.mrs + "/1/merge", map[string]any{"resolutions": []any{map[string]any{"id": "x", "take": "value"}}}, 400, wantField("resolutions[0].value")},
		{"merge: one conflict twice", f.alice, "POST", f.mrs + "/1/merge", map[string]any{"resolutions": []any{map[string]any{"id": "x", "take": "ours"}, map[string]any{"id": "x", "take": "base"}}}, 400, wantField("resolutions[1].id")},
		{"merge: a resolution naming no conflict", f.alice, "POST", f.mrs + "/1/merge", map[string]any{"resolutions": []any{map[string]any{"id": "cell:1:2:3:cell", "take": "ours"}}}, 400, wantField("resolutions[0].id")},
		{"close: member without EDIT_DOCUMENTS", f.bob, "POST", f.mrs + "/1/close", nil, 403, nil},
		{"close: foreign organisation", f.mallory, "POST", f.mrs + "/1/close", nil, 403, nil},
		{"close: the other organisation's request to alice", f.alice, "POST", evilMRs + "/1/close", nil, 403, nil},
		{"close: absent", f.alice, "POST", f.mrs + "/99/close", nil, 404, nil},
		{"close", f.alice, "POST", f.mrs + "/1/close", nil, 200, func(t *testing.T, r *testResponse) {
			o := r.obj(t)
			if o["status"] != "closed" || o["mergeable"] != false || o["closed_by"].(map[string]any)["id"] != f.alice.ID {
				t.Fatalf("closed %v", o)
			}
		}},
		{"close: closed already", f.alice, "POST", f.mrs + "/1/close", nil, 400, nil},
		{"merge: a closed request", f.alice, "POST", f.mrs + "/1/merge", nil, 400, nil},
		{"create: again once the first is closed", f.alice, "POST", f.mrs, body, 201, wantKey("number", 2)},
		{"a deleted document has no requests", f.alice, "DELETE", f.c.doc, nil, 200, nil},
		{"get: deleted document", f.alice, "GET", f.mrs + "/2", nil, 404, nil},
	})
}

// revisionOf reads a revision by hash.
func (f *mrFixture) revisionOf(t *testing.T, h string) map[string]any {
	return f.e.must(200, f.alice, "GET", f.c.rev(h), nil).obj(t)
}

func TestMergeRequestMerges(t *testing.T) {
	t.Parallel()
	f := newMRFixture(t)
	e := f.e
	cl := f.clauses
	// a clean merge: both sides changed different clauses
	f.branch(t, "feature")
	f.set(t, "feature", cl[0], f.note, "from feature")
	f.set(t, "main", cl[1], f.note, "from main")
	n := f.open(t, "feature", "main")
	e.run(t, []scenario{{"clean: mergeable", f.bob, "GET", f.mrs + "/" + n, nil, 200, wantMergeable(true, 0)}})
	mainHead, featureHead := f.c.head(t, "main"), f.c.head(t, "feature")
	r := e.must(200, f.alice, "POST", f.mrs+"/"+n+"/merge", map[string]any{"message": "Bring feature in"}).obj(t)
	head := f.c.head(t, "main")
	if r["status"] != "merged" || r["merge_revision"].(map[string]any)["hash"] != head || r["mergeable"] != false {
		t.Fatalf("merged %v", r)
	}
	rev := f.revisionOf(t, head)
	parents := rev["parents"].([]any)
	if len(parents) != 2 || parents[0] != f.revisionOf(t, mainHead)["id"] || parents[1] != f.revisionOf(t, featureHead)["id"] || rev["message"] != "Bring feature in" {
		t.Fatalf("merge revision %v", rev)
	}
	if cells := f.c.cells(t, head); cells[cl[0]+"/"+f.note] != "from feature" || cells[cl[1]+"/"+f.note] != "from main" {
		t.Fatalf("merged cells %v", cells)
	}
	e.run(t, []scenario{
		{"merged: again", f.alice, "POST", f.mrs + "/" + n + "/merge", nil, 400, nil},
		{"merged: close", f.alice, "POST", f.mrs + "/" + n + "/close", nil, 400, nil},
		{"merged: shows the revision", f.bob, "GET", f.mrs + "/" + n, nil, 200, func(t *testing.T, r *testResponse) {
			if o := r.obj(t); o["status"] != "merged" || o["merge_revision"].(map[string]any)["hash"] != head || o["mergeable"] != false {
				t.Fatalf("merged request %v", o)
			}
		}},
	})
	// the feature branch merged in: a later request merges nothing new
	// from it and the next change on feature merges from the new base
	up := f.open(t, "feature", "main")
	e.run(t, []scenario{{"up to date: mergeable, with a reason", f.bob, "GET", f.mrs + "/" + up, nil, 200, func(t *testing.T, r *testResponse) {
		if o := r.obj(t); o["mergeable"] != true || o["reason"] == nil || o["merge_base"] != featureHead {
			t.Fatalf("up to date %v", o)
		}
	}}})
	e.must(200, f.alice, "POST", f.mrs+"/"+up+"/merge", nil)
	if f.c.head(t, "main") != head {
		t.Fatal("merging an up-to-date request made a revision")
	}
	f.set(t, "feature", cl[1], f.qty, "5")
	again := f.open(t, "feature", "main")
	e.run(t, []scenario{{"after a merge the base is the merged source", f.bob, "GET", f.mrs + "/" + again, nil, 200, func(t *testing.T, r *testResponse) {
		if o := r.obj(t); o["mergeable"] != true || o["merge_base"] != featureHead {
			t.Fatalf("second merge %v", o)
		}
	}}})
	e.must(200, f.alice, "POST", f.mrs+"/"+again+"/merge", nil)
	if cells := f.c.cells(t, f.c.head(t, "main")); cells[cl[1]+"/"+f.qty] != "5" || cells[cl[1]+"/"+f.note] != "from main" {
		t.Fatalf("second merge cells %v", cells)
	}
}

// conflicted opens a request whose source and the target set one cell
// differently and answers its path and the conflict's id.
func (f *mrFixture) conflicted(t *testing.T, branch, col, ours, theirs string) (string, string) {
	t.Helper()
	f.branch(t, branch)
	f.set(t, branch, f.clauses[2], col, theirs)
	f.set(t, "main", f.clauses[2], col, ours)
	path := f.mrs + "/" + f.open(t, branch, "main")
	o := f.e.must(200, f.bob, "GET", path, nil).obj(t)
	cs := o["conflicts"].([]any)
	if o["mergeable"] != false || len(cs) != 1 {
		t.Fatalf("conflicted request %v", o)
	}
	c := cs[0].(map[string]any)
	if c["kind"] != "cell" || c["ours"] != ours || c["theirs"] != theirs || c["clause_id"] != f.clauses[2] {
		t.Fatalf("conflict %v", c)
	}
	return path, c["id"].(string)
}

func TestMergeRequestResolutions(t *testing.T) {
	t.Parallel()
	f := newMRFixture(t)
	e := f.e
	cell := func() string { return f.c.cells(t, f.c.head(t, "main"))[f.clauses[2]+"/"+f.note] }
	twoParents := func(t *testing.T) {
		if ps := f.revisionOf(t, f.c.head(t, "main"))["parents"].([]any); len(ps) != 2 {
			t.Fatalf("parents %v", ps)
		}
	}
	// ours: the target keeps its value
	path, id := f.conflicted(t, "ba", f.note, "main-1", "a-1")
	before := f.c.head(t, "main")
	r := e.do(f.alice, "POST", path+"/merge", nil)
	if r.Status != http.StatusConflict || r.obj(t)["conflict_count"] != float64(1) || r.obj(t)["head"].(map[string]any)["hash"] != before {
		t.Fatalf("merge with a conflict: %d %s", r.Status, r.Body)
	}
	if f.c.head(t, "main") != before {
		t.Fatal("a refused merge moved the target")
	}
	e.run(t, []scenario{
		{"one of the resolutions names no conflict", f.alice, "POST", path + "/merge",
			map[string]any{"resolutions": []any{map[string]any{"id": id, "take": "ours"}, map[string]any{"id": "text:0:1:0:text", "take": "base"}}}, 400, wantField("resolutions[1].id")},
		{"foreign organisation cannot resolve", f.mallory, "POST", path + "/merge", map[string]any{"resolutions": []any{map[string]any{"id": id, "take": "ours"}}}, 403, nil},
		{"member without EDIT_DOCUMENTS cannot resolve", f.bob, "POST", path + "/merge", map[string]any{"resolutions": []any{map[string]any{"id": id, "take": "ours"}}}, 403, nil},
		{"resolved: ours", f.alice, "POST", path + "/merge", map[string]any{"resolutions": []any{map[string]any{"id": id, "take": "ours"}}}, 200, wantKey("status", "merged")},
	})
	if cell() != "main-1" {
		t.Fatalf("ours kept %q", cell())
	}
	twoParents(t)
	// theirs: the source's value wins
	path, id = f.conflicted(t, "bb", f.note, "main-2", "b-2")
	e.must(200, f.alice, "POST", path+"/merge", map[string]any{"resolutions": []any{map[string]any{"id": id, "take": "theirs"}}})
	if cell() != "b-2" {
		t.Fatalf("theirs gave %q", cell())
	}
	twoParents(t)
	// base: the value both changed from
	path, id = f.conflicted(t, "bc", f.note, "main-3", "c-3")
	e.must(200, f.alice, "POST", path+"/merge", map[string]any{"resolutions": []any{map[string]any{"id": id, "take": "base"}}})
	if cell() != "b-2" {
		t.Fatalf("base gave %q", cell())
	}
	// a value, checked against the column's type
	path, id = f.conflicted(t, "bd", f.qty, "1", "2")
	e.run(t, []scenario{
		{"a value that does not fit a number column", f.alice, "POST", path + "/merge", map[string]any{"resolutions": []any{map[string]any{"id": id, "take": "value", "value": "many"}}}, 400, wantField("resolutions[0].value")},
		{"a value", f.alice, "POST", path + "/merge", map[string]any{"resolutions": []any{map[string]any{"id": id, "take": "value", "value": "3"}}}, 200, nil},
	})
	if got := f.c.cells(t, f.c.head(t, "main"))[f.clauses[2]+"/"+f.qty]; got != "3" {
		t.Fatalf("value gave %q", got)
	}
	// a delete against a change takes no value
	f.branch(t, "be")
	h := f.c.head(t, "be")
	e.must(200, f.alice, "DELETE", f.c.rev(h)+"/clauses/"+f.clauses[0]+"?branch=be", nil)
	f.set(t, "main", f.clauses[0], f.note, "kept")
	path = f.mrs + "/" + f.open(t, "be", "main")
	c := e.must(200, f.bob, "GET", path, nil).obj(t)["conflicts"].([]any)[0].(map[string]any)
	if c["kind"] != "delete_modify" {
		t.Fatalf("conflict %v", c)
	}
	e.run(t, []scenario{
		{"a value for a delete_modify conflict", f.alice, "POST", path + "/merge", map[string]any{"resolutions": []any{map[string]any{"id": c["id"], "take": "value", "value": "x"}}}, 400, wantField("resolutions[0].take")},
		{"the delete wins by theirs", f.alice, "POST", path + "/merge", map[string]any{"resolutions": []any{map[string]any{"id": c["id"], "take": "theirs"}}}, 200, nil},
	})
	if ids := f.c.clauseIDs(t, f.c.head(t, "main")); len(ids) != 2 {
		t.Fatalf("clauses after the delete won: %v", ids)
	}
}

// TestMergeRequestProtectedStrict: a protected branch changes only
// through merge requests; with the strict policy, a request whose source
// changed a clause the target changed too conflicts, where the loose
// policy merges the text and the cell.
func TestMergeRequestProtectedStrict(t *testing.T) {
	t.Parallel()
	f := newMRFixture(t)
	e := f.e
	br := f.c.doc + "/branches/main"
	f.branch(t, "cells")
	f.branch(t, "texts")
	f.set(t, "cells", f.clauses[0], f.note, "cell")
	h := f.c.head(t, "texts")
	e.must(200, f.alice, "PATCH", f.c.rev(h)+"/clauses/"+f.clauses[0]+"?branch=texts", map[string]any{"text": "ONE\n"})
	e.run(t, []scenario{
		{"member cannot set strict", f.bob, "PATCH", br, map[string]any{"strict": true}, 403, nil},
		{"foreign cannot set strict", f.mallory, "PATCH", br, map[string]any{"strict": true}, 403, nil},
		{"strict wrong type", f.alice, "PATCH", br, map[string]any{"strict": "yes"}, 400, wantField("strict")},
		{"protect with the strict policy", f.alice, "PATCH", br, map[string]any{"protected": true, "strict": true}, 200, func(t *testing.T, r *testResponse) {
			if o := r.obj(t); o["protected"] != true || o["strict"] != true {
				t.Fatalf("branch %v", o)
			}
		}},
		{"a direct change of the protected branch", f.alice, "PATCH", f.c.rev(f.c.head(t, "main")) + "/fields",
			map[string]any{"clause_id": f.clauses[0], "column_id": f.note, "value": "direct"}, 403, nil},
	})
	first := f.open(t, "texts", "main")
	e.must(200, f.alice, "POST", f.mrs+"/"+first+"/merge", nil)
	second := f.mrs + "/" + f.open(t, "cells", "main")
	var id string
	e.run(t, []scenario{
		{"strict: the same clause changed on both sides conflicts", f.bob, "GET", second, nil, 200, func(t *testing.T, r *testResponse) {
			wantMergeable(false, 1)(t, r)
			c := r.obj(t)["conflicts"].([]any)[0].(map[string]any)
			if c["kind"] != "clause" || c["clause_id"] != f.clauses[0] {
				t.Fatalf("strict conflict %v", c)
			}
			id = c["id"].(string)
		}},
		{"strict: merging is 409", f.alice, "POST", second + "/merge", nil, 409, nil},
		{"loose policy", f.alice, "PATCH", br, map[string]any{"strict": false}, 200, wantKey("strict", false)},
		{"loose: the text and the cell merge", f.bob, "GET", second, nil, 200, wantMergeable(true, 0)},
		{"strict again", f.alice, "PATCH", br, map[string]any{"strict": true}, 200, nil},
	})
	e.run(t, []scenario{
		{"strict: resolved by taking the source's clause", f.alice, "POST", second + "/merge", map[string]any{"resolutions": []any{map[string]any{"id": id, "take": "theirs"}}}, 200, nil},
	})
	head := f.c.head(t, "main")
	cl := e.must(200, f.alice, "GET", f.c.rev(head)+"/clauses", nil).arr(t)[0]
	// the source's whole clause: its cell, and the text it had (the base's)
	if cl["text"] != "one\n" || len(cl["fields"].([]any)) != 1 {
		t.Fatalf("clause after taking theirs %v", cl)
	}
	if ps := f.revisionOf(t, head)["parents"].([]any); len(ps) != 2 {
		t.Fatalf("parents %v", ps)
	}
}

func TestMergeRequestBranchDeleted(t *testing.T) {
	t.Parallel()
	f := newMRFixture(t)
	e := f.e
	f.branch(t, "gone")
	f.set(t, "gone", f.clauses[0], f.note, "x")
	path := f.mrs + "/" + f.open(t, "gone", "main")
	e.must(204, f.alice, "DELETE", f.c.doc+"/branches/gone", nil)
	e.run(t, []scenario{
		{"not mergeable", f.bob, "GET", path, nil, 200, func(t *testing.T, r *testResponse) {
			if o := r.obj(t); o["mergeable"] != false || o["reason"] == nil || o["from_branch"].(map[string]any)["is_deleted"] != true {
				t.Fatalf("request of a deleted branch %v", o)
			}
		}},
		{"merge refused", f.alice, "POST", path + "/merge", nil, 400, nil},
		{"close", f.alice, "POST", path + "/close", nil, 200, nil},
	})
}

// TestMergeRequestNumbersConcurrent: parallel creations get distinct,
// gap-free numbers per organisation, across the organisation's documents.
func TestMergeRequestNumbersConcurrent(t *testing.T) {
	t.Parallel()
	f := newMRFixture(t)
	e := f.e
	const n = 20
	for i := 0; i < n; i++ {
		f.branch(t, fmt.Sprintf("b%02d", i))
	}
	var wg sync.WaitGroup
	nums := make([]int, n)
	codes := make([]int, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			r := e.do(f.alice, "POST", f.mrs, map[string]any{"from_branch": fmt.Sprintf("b%02d", i), "to_branch": "main"})
			codes[i] = r.Status
			if r.Status == 201 {
				var o struct{ Number int }
				if err := json.Unmarshal(r.Body, &o); err == nil {
					nums[i] = o.Number
				}
			}
		}(i)
	}
	wg.Wait()
	for i, c := range codes {
		if c != 201 {
			t.Fatalf("request %d: %d", i, c)
		}
	}
	sort.Ints(nums)
	for i, v := range nums {
		if v != i+1 {
			t.Fatalf("numbers %v are not 1..%d", nums, n)
		}
	}
	// another document of the organisation continues the sequence
	other := e.must(201, f.alice, "POST", "/documents", map[string]any{"organisation_id": f.acme, "title": "Second"}).obj(t)["id"].(string)
	e.must(201, f.alice, "POST", "/documents/"+other+"/branches", map[string]any{"name": "xx"})
	r := e.must(201, f.alice, "POST", "/documents/"+other+"/merge-requests", map[string]any{"from_branch": "xx", "to_branch": "main"}).obj(t)
	if r["number"] != float64(n+1) {
		t.Fatalf("next number %v", r["number"])
	}
	// numbers are found within their document only
	e.run(t, []scenario{{"a number of another document", f.alice, "GET", f.mrs + fmt.Sprintf("/%d", n+1), nil, 404, nil}})
}

// TestMergeRequestFromFork: a fork (here in another organisation of the
// caller) opens a request back into its origin when the caller may edit
// the origin; merging copies the fork's revisions into the origin and
// makes a revision with two parents there.
func TestMergeRequestFromFork(t *testing.T) {
	t.Parallel()
	f := newMRFixture(t)
	e := f.e
	acme2 := e.org(f.alice, "Acme Two")
	e.addMember(acme2, f.bob)
	fork := e.must(201, f.alice, "POST", f.c.doc, map[string]any{"organisation_id": acme2}).obj(t)["id"].(string)
	fc := content{f: f.docFixture, doc: "/documents/" + fork}
	setOn := func(c content, clause, v string) string {
		h := c.head(t, "main")
		return e.must(200, f.alice, "PATCH", c.rev(h)+"/fields", map[string]any{"clause_id": clause, "column_id": f.note, "value": v}).obj(t)["hash"].(string)
	}
	forkHead := setOn(fc, f.clauses[0], "from the fork")
	setOn(f.c, f.clauses[1], "on the origin")
	other := e.must(201, f.alice, "POST", "/documents", map[string]any{"organisation_id": f.acme, "title": "Not a fork"}).obj(t)["id"].(string)
	body := map[string]any{"from_document_id": fork, "from_branch": "main", "to_branch": "main"}
	var path string
	e.run(t, []scenario{
		{"a member who may not edit the origin", f.bob, "POST", f.mrs, body, 403, nil},
		{"foreign organisation", f.mallory, "POST", f.mrs, body, 403, nil},
		{"a document that is not a fork of this one", f.alice, "POST", f.mrs, map[string]any{"from_document_id": other, "from_branch": "main", "to_branch": "main"}, 400, wantField("from_document_id")},
		{"another organisation's document", f.alice, "POST", f.mrs, map[string]any{"from_document_id": f.evilDoc, "from_branch": "main", "to_branch": "main"}, 400, wantField("from_document_id")},
		{"an absent document", f.alice, "POST", f.mrs, map[string]any{"from_document_id": "123456789", "from_branch": "main", "to_branch": "main"}, 400, wantField("from_document_id")},
		{"from_document_id of the wrong type", f.alice, "POST", f.mrs, map[string]any{"from_document_id": true, "from_branch": "main", "to_branch": "main"}, 400, nil},
		{"a branch the fork lacks", f.alice, "POST", f.mrs, map[string]any{"from_document_id": fork, "from_branch": "nope", "to_branch": "main"}, 400, wantField("from_branch")},
		{"the origin's own branch named as from itself", f.alice, "POST", f.mrs, map[string]any{"from_document_id": f.doc, "from_branch": "main", "to_branch": "main"}, 400, wantField("to_branch")},
		{"open from the fork", f.alice, "POST", f.mrs, body, 201, func(t *testing.T, r *testResponse) {
			o := r.obj(t)
			if o["from_document_id"] != fork || o["document_id"] != f.doc || o["title"] != "Merge main of fork 1 into main" ||
				o["mergeable"] != true || o["merge_base"] != f.h0 {
				t.Fatalf("request from a fork %v", o)
			}
			path = f.mrs + "/" + fmt.Sprint(o["number"])
		}},
		{"one open request from the fork's branch", f.alice, "POST", f.mrs, body, 409, nil},
		{"the fork's head is not in the origin yet", f.alice, "GET", f.c.rev(forkHead), nil, 404, nil},
	})
	r := e.must(200, f.alice, "POST", path+"/merge", nil).obj(t)
	head := f.c.head(t, "main")
	if r["status"] != "merged" || r["merge_revision"].(map[string]any)["hash"] != head {
		t.Fatalf("merged %v", r)
	}
	if cells := f.c.cells(t, head); cells[f.clauses[0]+"/"+f.note] != "from the fork" || cells[f.clauses[1]+"/"+f.note] != "on the origin" {
		t.Fatalf("cells %v", cells)
	}
	// the second parent is the origin's copy of the fork's head
	parents := f.revisionOf(t, head)["parents"].([]any)
	copied := f.revisionOf(t, forkHead)
	if len(parents) != 2 || parents[1] != copied["id"] || copied["document_id"] != f.doc {
		t.Fatalf("parents %v, the fork's head in the origin %v", parents, copied)
	}
	// the next change on the fork merges from the fork's head, now shared
	setOn(fc, f.clauses[2], "later")
	next := e.must(201, f.alice, "POST", f.mrs, body).obj(t)
	if next["merge_base"] != forkHead || next["mergeable"] != true {
		t.Fatalf("second request from the fork %v", next)
	}
	nextPath := f.mrs + "/" + fmt.Sprint(next["number"])
	e.must(200, f.alice, "DELETE", fc.doc, nil)
	e.run(t, []scenario{
		{"a deleted fork", f.bob, "GET", nextPath, nil, 200, func(t *testing.T, r *testResponse) {
			if o := r.obj(t); o["mergeable"] != false || o["reason"] == nil {
				t.Fatalf("request of a deleted fork %v", o)
			}
		}},
		{"a deleted fork does not merge", f.alice, "POST", nextPath + "/merge", nil, 400, nil},
	})
}

// TestStrictBranchChangeFlow: the strict policy also holds for a change
// made on an old base of a strict (unprotected) branch: another cell of a
// clause the head changed is 409 (kind clause), where the loose policy
// merges it.
func TestStrictBranchChangeFlow(t *testing.T) {
	t.Parallel()
	f := newMRFixture(t)
	e := f.e
	base := f.h0
	f.set(t, "main", f.clauses[0], f.note, "head")
	edit := func() *testResponse {
		return e.do(f.alice, "PATCH", f.c.rev(base)+"/fields", map[string]any{"clause_id": f.clauses[0], "column_id": f.qty, "value": "7"})
	}
	e.must(200, f.alice, "PATCH", f.c.doc+"/branches/main", map[string]any{"strict": true})
	if r := edit(); r.Status != 409 || r.obj(t)["conflicts"].([]any)[0].(map[string]any)["kind"] != "clause" {
		t.Fatalf("strict change on an old base: %d %s", r.Status, r.Body)
	}
	// another clause still merges under the strict policy
	if r := e.do(f.alice, "PATCH", f.c.rev(base)+"/fields", map[string]any{"clause_id": f.clauses[1], "column_id": f.qty, "value": "1"}); r.Status != 200 {
		t.Fatalf("strict change of another clause: %d %s", r.Status, r.Body)
	}
	e.must(200, f.alice, "PATCH", f.c.doc+"/branches/main", map[string]any{"strict": false})
	if r := edit(); r.Status != 200 {
		t.Fatalf("loose change on an old base: %d %s", r.Status, r.Body)
	}
	if cells := f.c.cells(t, f.c.head(t, "main")); cells[f.clauses[0]+"/"+f.note] != "head" || cells[f.clauses[0]+"/"+f.qty] != "7" {
		t.Fatalf("cells %v", cells)
	}
}

// TestMergeRequestShareHolder: a recipient of an accepted share with
// scope_view reads requests, with scope_edit opens, closes and merges them
// into unprotected branches; merging into a protected branch, and setting
// the strict policy, stay with members; a revoked recipient loses all of it
// at once.
func TestMergeRequestShareHolder(t *testing.T) {
	t.Parallel()
	f := newMRFixture(t)
	e := f.e
	carol := e.user("carol")
	e.org(carol, "Carol Co")
	e.sharesFromAnyone(carol)
	share := e.must(201, f.alice, "POST", f.c.doc+"/shares", map[string]any{"user_id": carol.ID, "scope_view": true, "scope_edit": true}).obj(t)["id"].(string)
	e.must(200, carol, "POST", "/users/@me/document-shares/"+share+"/accept", nil)
	f.branch(t, "c1")
	f.branch(t, "c2")
	f.set(t, "c1", f.clauses[0], f.note, "carol")
	f.set(t, "c2", f.clauses[1], f.note, "carol too")
	var first, second string
	e.run(t, []scenario{
		{"holder opens a request", carol, "POST", f.mrs, map[string]any{"from_branch": "c1", "to_branch": "main"}, 201, func(t *testing.T, r *testResponse) {
			first = fmt.Sprint(r.obj(t)["number"])
		}},
		{"holder lists", carol, "GET", f.mrs, nil, 200, wantLen(1)},
		{"holder cannot set the strict policy", carol, "PATCH", f.c.doc + "/branches/main", map[string]any{"strict": true}, 403, nil},
		{"holder tags", carol, "POST", f.c.doc + "/tags", map[string]any{"revision": f.h0, "label": "carol"}, 201, nil},
	})
	e.run(t, []scenario{
		{"holder merges into an unprotected branch", carol, "POST", f.mrs + "/" + first + "/merge", nil, 200, wantKey("status", "merged")},
		{"protect main", f.alice, "PATCH", f.c.doc + "/branches/main", map[string]any{"protected": true}, 200, nil},
		{"holder opens another", carol, "POST", f.mrs, map[string]any{"from_branch": "c2", "to_branch": "main"}, 201, func(t *testing.T, r *testResponse) {
			second = fmt.Sprint(r.obj(t)["number"])
		}},
	})
	e.run(t, []scenario{
		{"holder cannot merge into a protected branch", carol, "POST", f.mrs + "/" + second + "/merge", nil, 403, nil},
		{"revoke", f.alice, "DELETE", f.c.doc + "/shares/" + share, nil, 204, nil},
		{"revoked: get", carol, "GET", f.mrs + "/" + second, nil, 403, nil},
		{"revoked: list", carol, "GET", f.mrs, nil, 403, nil},
		{"revoked: close", carol, "POST", f.mrs + "/" + second + "/close", nil, 403, nil},
		{"revoked: open", carol, "POST", f.mrs, map[string]any{"from_branch": "c1", "to_branch": "c2"}, 403, nil},
		{"revoked: tags", carol, "GET", f.c.doc + "/tags", nil, 403, nil},
		{"a member merges into the protected branch", f.alice, "POST", f.mrs + "/" + second + "/merge", nil, 200, nil},
	})
}
