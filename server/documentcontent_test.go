package server

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"workspace/db"
	"workspace/server/docengine"
)

// content is a document of the doc fixture seen through HTTP.
type content struct {
	f   *docFixture
	doc string // /documents/{id}
}

func (c content) head(t *testing.T, branch string) string {
	t.Helper()
	return c.f.e.must(200, c.f.alice, "GET", c.doc+"/branches/"+branch, nil).obj(t)["hash"].(string)
}

func (c content) rev(h string) string { return c.doc + "/revisions/" + h }

// change sends a change and returns the new hash.
func (c content) change(t *testing.T, method, path string, body any) string {
	t.Helper()
	return c.f.e.must(200, c.f.alice, method, path, body).obj(t)["hash"].(string)
}

func (c content) clauseIDs(t *testing.T, h string) []string {
	t.Helper()
	var ids []string
	for _, cl := range c.f.e.must(200, c.f.alice, "GET", c.rev(h)+"/clauses?$top=1000", nil).arr(t) {
		ids = append(ids, cl["clause_id"].(string))
	}
	return ids
}

func (c content) cells(t *testing.T, h string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, cl := range c.f.e.must(200, c.f.alice, "GET", c.rev(h)+"/clauses?$top=1000", nil).arr(t) {
		for _, fv := range cl["fields"].([]any) {
			m := fv.(map[string]any)
			out[cl["clause_id"].(string)+"/"+m["column_id"].(string)] = m["value"].(string)
		}
	}
	return out
}

func TestDocumentContentChanges(t *testing.T) {
	t.Parallel()
	f := newDocFixture(t)
	e := f.e
	c := content{f: f, doc: "/documents/" + f.doc}
	h0 := c.head(t, "main")
	evilHead := content{f: f, doc: "/documents/" + f.evilDoc}
	evilHash := e.must(200, f.mallory, "GET", evilHead.doc+"/branches/main", nil).obj(t)["hash"].(string)

	r := e.must(200, f.alice, "POST", c.rev(h0)+"/columns", map[string]any{"name": "Qty", "type": "number"}).obj(t)
	if br := r["branch"].(map[string]any); br["name"] != "main" || r["hash"] == h0 {
		t.Fatalf("column change answered %v", r)
	}
	h1 := r["hash"].(string)
	qty := e.must(200, f.alice, "GET", c.rev(h1)+"/columns", nil).arr(t)[0]["column_id"].(string)
	h2 := c.change(t, "POST", c.rev(h1)+"/columns", nil) // default name
	cols := e.must(200, f.alice, "GET", c.rev(h2)+"/columns", nil).arr(t)
	if len(cols) != 2 || cols[1]["name"] != "Column 2" {
		t.Fatalf("columns %v", cols)
	}
	h := h2
	for i := 0; i < 3; i++ {
		h = c.change(t, "POST", c.rev(h)+"/clauses", map[string]any{"text": fmt.Sprint("clause ", i)})
	}
	ids := c.clauseIDs(t, h)
	if len(ids) != 3 {
		t.Fatalf("clauses %v", ids)
	}
	sheets := e.must(200, f.alice, "GET", c.rev(h)+"/sheets", nil).arr(t)
	sheet1 := sheets[0]["sheet_id"].(string)
	enumCol := ""
	rev := c.rev(h)
	e.run(t, []scenario{
		{"member without EDIT_DOCUMENTS", f.bob, "POST", rev + "/clauses", map[string]any{"text": "x"}, 403, nil},
		{"foreign member", f.mallory, "POST", rev + "/clauses", map[string]any{"text": "x"}, 403, nil},
		{"foreign member reads nothing", f.mallory, "GET", rev + "/clauses", nil, 403, nil},
		{"no organisation", f.nobody, "GET", rev, nil, 403, nil},
		{"no token", nil, "GET", rev, nil, 401, nil},
		{"member reads", f.bob, "GET", rev + "/clauses", nil, 200, wantLen(3)},
		{"foreign: revision", f.mallory, "GET", rev, nil, 403, nil},
		{"foreign: sheets", f.mallory, "GET", rev + "/sheets", nil, 403, nil},
		{"foreign: columns", f.mallory, "GET", rev + "/columns", nil, 403, nil},
		{"foreign: history", f.mallory, "GET", c.doc + "/revisions", nil, 403, nil},
		{"foreign: branch", f.mallory, "GET", c.doc + "/branches/main", nil, 403, nil},
		{"foreign: add a sheet", f.mallory, "POST", rev + "/sheets", map[string]any{"name": "Mine"}, 403, nil},
		{"foreign: rename a sheet", f.mallory, "PATCH", rev + "/sheets/" + sheet1, map[string]any{"name": "Mine"}, 403, nil},
		{"foreign: delete a sheet", f.mallory, "DELETE", rev + "/sheets/" + sheet1, nil, 403, nil},
		{"foreign: add a column", f.mallory, "POST", rev + "/columns", nil, 403, nil},
		{"foreign: patch a column", f.mallory, "PATCH", rev + "/columns/" + qty, map[string]any{"name": "Mine"}, 403, nil},
		{"foreign: delete a column", f.mallory, "DELETE", rev + "/columns/" + qty, nil, 403, nil},
		{"foreign: move a clause", f.mallory, "PATCH", rev + "/clauses/" + ids[0], map[string]any{"after": ids[1]}, 403, nil},
		{"foreign: delete a clause", f.mallory, "DELETE", rev + "/clauses/" + ids[0], nil, 403, nil},
		{"foreign: set a cell", f.mallory, "PATCH", rev + "/fields", map[string]any{"clause_id": ids[0], "column_id": qty, "value": "1"}, 403, nil},
		{"foreign, own base hash on our document", f.mallory, "POST", c.rev(evilHash) + "/clauses", map[string]any{}, 403, nil},
		{"member: delete a clause", f.bob, "DELETE", rev + "/clauses/" + ids[0], nil, 403, nil},
		{"member: set a cell", f.bob, "PATCH", rev + "/fields", map[string]any{"clause_id": ids[0], "column_id": qty, "value": "1"}, 403, nil},
		{"base hash of another document", f.alice, "POST", c.rev(evilHash) + "/clauses", map[string]any{}, 404, nil},
		{"read a hash of another document", f.alice, "GET", c.rev(evilHash), nil, 404, nil},
		{"malformed hash", f.alice, "POST", c.rev("abc") + "/clauses", map[string]any{}, 400, nil},
		{"unknown branch", f.alice, "POST", rev + "/clauses?branch=nope", map[string]any{}, 404, nil},
		{"absent document", f.alice, "GET", "/documents/777/revisions/" + h, nil, 404, nil},
		{"sheet name required", f.alice, "POST", rev + "/sheets", map[string]any{}, 400, wantField("name")},
		{"sheet name too short", f.alice, "POST", rev + "/sheets", map[string]any{"name": "S"}, 400, wantField("name")},
		{"sheet name over 20", f.alice, "POST", rev + "/sheets", map[string]any{"name": strings.Repeat("s", 21)}, 400, wantField("name")},
		{"sheet order negative", f.alice, "POST", rev + "/sheets", map[string]any{"name": "Later", "order": -1}, 400, wantField("order")},
		{"sheet name taken", f.alice, "POST", rev + "/sheets", map[string]any{"name": "Sheet 1"}, 400, wantField("name")},
		{"last sheet", f.alice, "DELETE", rev + "/sheets/" + sheet1, nil, 400, nil},
		{"absent sheet", f.alice, "PATCH", rev + "/sheets/123", map[string]any{"name": "Renamed"}, 404, nil},
		{"column type", f.alice, "POST", rev + "/columns", map[string]any{"type": "colour"}, 400, wantField("type")},
		{"column name taken", f.alice, "POST", rev + "/columns", map[string]any{"name": "Qty"}, 400, wantField("name")},
		{"enum column needs a field", f.alice, "POST", rev + "/columns", map[string]any{"name": "State", "type": "enum"}, 400, wantField("field_id")},
		{"enum column with a text field", f.alice, "POST", rev + "/columns", map[string]any{"name": "State", "type": "enum", "field_id": f.textID}, 400, wantField("field_id")},
		{"data_format out of range", f.alice, "PATCH", rev + "/columns/" + qty, map[string]any{"data_format": 9}, 400, wantField("data_format")},
		{"column order below 0", f.alice, "PATCH", rev + "/columns/" + qty, map[string]any{"order": -1}, 400, wantField("order")},
		{"column order of wrong type", f.alice, "PATCH", rev + "/columns/" + qty, map[string]any{"order": "first"}, 400, wantField("order")},
		{"absent column", f.alice, "DELETE", rev + "/columns/55", nil, 404, nil},
		{"two positions", f.alice, "POST", rev + "/clauses", map[string]any{"after": ids[0], "before": ids[1]}, 400, nil},
		{"below and after", f.alice, "PATCH", rev + "/clauses/" + ids[0], map[string]any{"after": ids[1], "below": ids[2]}, 400, nil},
		{"after an absent clause", f.alice, "POST", rev + "/clauses", map[string]any{"after": "999"}, 404, nil},
		{"next to itself", f.alice, "PATCH", rev + "/clauses/" + ids[0], map[string]any{"after": ids[0]}, 400, nil},
		{"absent clause", f.alice, "DELETE", rev + "/clauses/999", nil, 404, nil},
		{"text of wrong type", f.alice, "POST", rev + "/clauses", map[string]any{"text": 5}, 400, wantField("text")},
		{"malformed", f.alice, "POST", rev + "/clauses", `{"text":`, 400, nil},
		{"cell needs its fields", f.alice, "PATCH", rev + "/fields", map[string]any{}, 400, wantField("clause_id")},
		{"cell of a number column", f.alice, "PATCH", rev + "/fields", map[string]any{"clause_id": ids[0], "column_id": qty, "value": "many"}, 400, wantField("value")},
		{"cell of an absent column", f.alice, "PATCH", rev + "/fields", map[string]any{"clause_id": ids[0], "column_id": "1", "value": "1"}, 404, nil},
		{"cell of an absent clause", f.alice, "PATCH", rev + "/fields", map[string]any{"clause_id": "1", "column_id": qty, "value": "1"}, 404, nil},
		{"enum column", f.alice, "POST", rev + "/columns", map[string]any{"name": "State", "type": "enum", "field_id": f.enumID}, 200, nil},
	})
	h = c.head(t, "main")
	for _, col := range e.must(200, f.alice, "GET", c.rev(h)+"/columns", nil).arr(t) {
		if col["name"] == "State" {
			enumCol = col["column_id"].(string)
		}
	}
	e.run(t, []scenario{
		{"enum cell names a value", f.alice, "PATCH", c.rev(h) + "/fields", map[string]any{"clause_id": ids[0], "column_id": enumCol, "value": f.valueA}, 200, func(t *testing.T, r *testResponse) {
			fs := r.obj(t)["fields"].([]any)
			// the value's text comes with its id (formatted_value)
			if len(fs) != 1 || fs[0].(map[string]any)["value"] != f.valueA || fs[0].(map[string]any)["formatted_value"] != "Draft" {
				t.Fatalf("fields %v", fs)
			}
		}},
		{"enum cell of no value", f.alice, "PATCH", c.rev(h) + "/fields", map[string]any{"clause_id": ids[0], "column_id": enumCol, "value": "123"}, 400, wantField("value")},
	})

	// an enum cell reads with its value's text, also once the value is retired
	readEnum := func(h string) string {
		t.Helper()
		for _, fv := range e.must(200, f.alice, "GET", c.rev(h)+"/clauses?$top=1", nil).arr(t)[0]["fields"].([]any) {
			if m := fv.(map[string]any); m["column_id"] == enumCol {
				return fmt.Sprint(m["formatted_value"])
			}
		}
		return ""
	}
	h = c.head(t, "main")
	if got := readEnum(h); got != "Draft" {
		t.Fatalf("enum cell reads %q", got)
	}
	e.must(200, f.alice, "PATCH", "/document-fields/"+f.enumID, map[string]any{"values": []map[string]any{{"value": "Final"}}})
	if got := readEnum(h); got != "Draft" {
		t.Fatalf("enum cell of a retired value reads %q", got)
	}
	if tr := e.must(200, f.alice, "GET", c.rev(h)+"?tree=true", nil).obj(t)["tree"].(map[string]any); !strings.Contains(fmt.Sprint(tr["clauses"]), "formatted_value:Draft") {
		t.Fatalf("tree clauses %v", tr["clauses"])
	}

	// moving a column: only its place changes
	h = c.change(t, "PATCH", c.rev(h)+"/columns/"+enumCol, map[string]any{"order": 0})
	var names []string
	for _, col := range e.must(200, f.alice, "GET", c.rev(h)+"/columns", nil).arr(t) {
		names = append(names, fmt.Sprint(col["name"], col["order"]))
	}
	if fmt.Sprint(names) != "[State0 Qty1 Column 22]" {
		t.Fatalf("columns after moving State first %v", names)
	}
	h = c.change(t, "PATCH", c.rev(h)+"/columns/"+enumCol, map[string]any{"order": 99, "name": "Stage"})
	names = nil
	for _, col := range e.must(200, f.alice, "GET", c.rev(h)+"/columns", nil).arr(t) {
		names = append(names, fmt.Sprint(col["name"]))
	}
	if fmt.Sprint(names) != "[Qty Column 2 Stage]" {
		t.Fatalf("columns after moving Stage last %v", names)
	}

	// a move on an old base merges with a rename on the head; two different
	// moves of one column conflict (move_move) and change nothing
	old := h
	h = c.change(t, "PATCH", c.rev(old)+"/columns/"+qty, map[string]any{"name": "Quantity"})
	h = c.change(t, "PATCH", c.rev(old)+"/columns/"+enumCol, map[string]any{"order": 0})
	names = nil
	for _, col := range e.must(200, f.alice, "GET", c.rev(h)+"/columns", nil).arr(t) {
		names = append(names, fmt.Sprint(col["name"]))
	}
	if fmt.Sprint(names) != "[Stage Quantity Column 2]" {
		t.Fatalf("columns after a move merged with a rename %v", names)
	}
	old = h
	c.change(t, "PATCH", c.rev(old)+"/columns/"+enumCol, map[string]any{"order": 2})
	e.run(t, []scenario{
		{"two moves of one column", f.alice, "PATCH", c.rev(old) + "/columns/" + enumCol, map[string]any{"order": 1}, 409, nil},
	})
	h = c.change(t, "PATCH", c.rev(c.head(t, "main"))+"/columns/"+qty, map[string]any{"name": "Qty"})

	// moving a clause, renaming and adding sheets, deleting a column
	h = c.change(t, "PATCH", c.rev(h)+"/clauses/"+ids[0], map[string]any{"below": ids[2], "text": "moved"})
	if got := c.clauseIDs(t, h); fmt.Sprint(got) != fmt.Sprint([]string{ids[1], ids[2], ids[0]}) {
		t.Fatalf("order after move %v", got)
	}
	h = c.change(t, "POST", c.rev(h)+"/sheets", map[string]any{"name": "Annex"})
	sheets = e.must(200, f.alice, "GET", c.rev(h)+"/sheets", nil).arr(t)
	annex := sheets[1]["sheet_id"].(string)
	h = c.change(t, "PATCH", c.rev(h)+"/clauses/"+ids[1], map[string]any{"sheet_id": annex})
	page := e.must(200, f.alice, "GET", c.rev(h)+"/clauses?sheet_id="+annex, nil)
	if a := page.arr(t); len(a) != 1 || a[0]["clause_id"] != ids[1] || page.Header.Get("X-Total-Count") != "1" {
		t.Fatalf("annex page %s", page.Body)
	}
	h = c.change(t, "PATCH", c.rev(h)+"/sheets/"+annex, map[string]any{"name": "Appendix", "order": 0})
	if s := e.must(200, f.alice, "GET", c.rev(h)+"/sheets", nil).arr(t); s[0]["name"] != "Appendix" {
		t.Fatalf("sheets %v", s)
	}
	// a new sheet's order places it, as a PATCH would (without one it goes last)
	h = c.change(t, "POST", c.rev(h)+"/sheets", map[string]any{"name": "Front", "order": 0})
	s := e.must(200, f.alice, "GET", c.rev(h)+"/sheets", nil).arr(t)
	if len(s) != 3 || s[0]["name"] != "Front" || s[1]["name"] != "Appendix" {
		t.Fatalf("sheets after adding one at 0: %v", s)
	}
	h = c.change(t, "DELETE", c.rev(h)+"/sheets/"+s[0]["sheet_id"].(string), nil)
	h = c.change(t, "DELETE", c.rev(h)+"/columns/"+enumCol, nil)
	h = c.change(t, "DELETE", c.rev(h)+"/sheets/"+annex, nil)
	if got := c.clauseIDs(t, h); len(got) != 2 {
		t.Fatalf("clauses after deleting the sheet %v", got)
	}
	h = c.change(t, "DELETE", c.rev(h)+"/clauses/"+ids[2], nil)

	// the tree, history and diff
	tr := e.must(200, f.bob, "GET", c.rev(h)+"?tree=true", nil).obj(t)
	tree := tr["tree"].(map[string]any)
	if len(tree["sheets"].([]any)) != 1 || len(tree["columns"].([]any)) != 2 || len(tree["clauses"].([]any)) != 1 || tr["hash"] != h {
		t.Fatalf("tree %v", tr)
	}
	if _, ok := e.must(200, f.bob, "GET", c.rev(h), nil).obj(t)["tree"]; ok {
		t.Fatal("tree without ?tree=true")
	}
	hist := e.must(200, f.bob, "GET", c.doc+"/revisions?$top=3", nil)
	if a := hist.arr(t); len(a) != 3 || a[0]["hash"] != h || a[0]["title"] != "Main spec" || hist.Header.Get("X-Total-Count") != "23" {
		t.Fatalf("history %s (total %s)", hist.Body, hist.Header.Get("X-Total-Count"))
	}
	all := e.must(200, f.bob, "GET", c.doc+"/revisions?$top=100", nil).arr(t)
	if len(all) != 23 || all[22]["hash"] != h0 || len(all[22]["parents"].([]any)) != 0 || all[0]["parents"].([]any)[0] != all[1]["id"] {
		t.Fatalf("full history %d: first %v", len(all), all[len(all)-1])
	}
	diff := e.must(200, f.bob, "GET", c.rev(h0)+"/diff/"+h, nil).obj(t)
	var kinds []string
	for _, ch := range diff["changes"].([]any) {
		kinds = append(kinds, ch.(map[string]any)["kind"].(string))
	}
	if got := strings.Join(kinds, ","); got != "column_added,column_added,clause_added" {
		t.Fatalf("diff kinds %s", got)
	}
	e.run(t, []scenario{
		{"diff with a hash of another document", f.alice, "GET", c.rev(h0) + "/diff/" + evilHash, nil, 404, nil},
		{"foreign diff", f.mallory, "GET", c.rev(h0) + "/diff/" + h, nil, 403, nil},
		{"bad tree flag", f.alice, "GET", c.rev(h) + "?tree=maybe", nil, 400, nil},
	})
}

// TestDocumentChangeFlow: a change on an old base lands on the head when
// it does not conflict, is 409 with the conflicts when it does, and a
// change that changes nothing answers the head.
func TestDocumentChangeFlow(t *testing.T) {
	t.Parallel()
	f := newDocFixture(t)
	e := f.e
	c := content{f: f, doc: "/documents/" + f.doc}
	h := c.head(t, "main")
	h = c.change(t, "POST", c.rev(h)+"/columns", map[string]any{"name": "Note"})
	col := e.must(200, f.alice, "GET", c.rev(h)+"/columns", nil).arr(t)[0]["column_id"].(string)
	h = c.change(t, "POST", c.rev(h)+"/clauses", map[string]any{"text": "a"})
	base := c.change(t, "POST", c.rev(h)+"/clauses", map[string]any{"text": "b"})
	ids := c.clauseIDs(t, base)
	set := func(from, clause, v string) *testResponse {
		return e.do(f.alice, "PATCH", c.rev(from)+"/fields", map[string]any{"clause_id": clause, "column_id": col, "value": v})
	}
	r1 := set(base, ids[0], "one")
	if r1.Status != 200 {
		t.Fatalf("first edit %d %s", r1.Status, r1.Body)
	}
	// another clause from the old base: lands on the head, keeping both
	r2 := set(base, ids[1], "two")
	if r2.Status != 200 {
		t.Fatalf("edit on an old base %d %s", r2.Status, r2.Body)
	}
	head := c.head(t, "main")
	if head != r2.obj(t)["hash"] {
		t.Fatal("the merged change is not the head")
	}
	if cells := c.cells(t, head); cells[ids[0]+"/"+col] != "one" || cells[ids[1]+"/"+col] != "two" {
		t.Fatalf("cells after merging %v", cells)
	}
	// the same cell from the old base: 409 with the conflict, nothing changes
	r3 := set(base, ids[0], "uno")
	if r3.Status != 409 {
		t.Fatalf("conflicting edit %d %s", r3.Status, r3.Body)
	}
	body := r3.obj(t)
	cs := body["conflicts"].([]any)
	if body["code"] != float64(4090) || body["conflict_count"] != float64(1) || body["head"].(map[string]any)["hash"] != head ||
		cs[0].(map[string]any)["kind"] != "cell" || cs[0].(map[string]any)["clause_id"] != ids[0] || cs[0].(map[string]any)["ours"] != "one" || cs[0].(map[string]any)["theirs"] != "uno" {
		t.Fatalf("409 body %v", body)
	}
	if c.head(t, "main") != head {
		t.Fatal("a conflict moved the head")
	}
	// a change that changes nothing answers the head, no new revision
	count := e.must(200, f.alice, "GET", c.doc+"/branches/main", nil).obj(t)["branch"].(map[string]any)["commit_count"]
	r4 := set(head, ids[0], "one")
	if r4.Status != 200 || r4.obj(t)["hash"] != head {
		t.Fatalf("no-op answered %d %s", r4.Status, r4.Body)
	}
	if got := e.must(200, f.alice, "GET", c.doc+"/branches/main", nil).obj(t)["branch"].(map[string]any)["commit_count"]; got != count {
		t.Fatalf("commit_count %v after a no-op, was %v", got, count)
	}
	// an edit that restores old content gets a new revision of that hash
	r5 := set(head, ids[0], "")
	r6 := set(r5.obj(t)["hash"].(string), ids[0], "one")
	if r6.obj(t)["hash"] != head || r6.obj(t)["id"] == r4.obj(t)["id"] {
		t.Fatalf("restored content: %s", r6.Body)
	}
	// deleting a clause the other side edited: delete_modify
	r7 := e.do(f.alice, "DELETE", c.rev(base)+"/clauses/"+ids[1], nil)
	if r7.Status != 409 || r7.obj(t)["conflicts"].([]any)[0].(map[string]any)["kind"] != "delete_modify" {
		t.Fatalf("delete vs modify %d %s", r7.Status, r7.Body)
	}
}

func TestDocumentBranches(t *testing.T) {
	t.Parallel()
	f := newDocFixture(t)
	e := f.e
	c := content{f: f, doc: "/documents/" + f.doc}
	h0 := c.head(t, "main")
	evilHash := e.must(200, f.mallory, "GET", "/documents/"+f.evilDoc+"/branches/main", nil).obj(t)["hash"].(string)
	br := c.doc + "/branches"
	e.run(t, []scenario{
		{"create from the default head", f.alice, "POST", br, map[string]any{"name": "feature"}, 201, func(t *testing.T, r *testResponse) {
			o := r.obj(t)
			if o["name"] != "feature" || o["revision"].(map[string]any)["hash"] != h0 || o["commit_count"] != float64(1) {
				t.Fatalf("branch %v", o)
			}
		}},
		{"name taken", f.alice, "POST", br, map[string]any{"name": "feature"}, 409, nil},
		{"name required", f.alice, "POST", br, map[string]any{}, 400, wantField("name")},
		{"name too short", f.alice, "POST", br, map[string]any{"name": "f"}, 400, wantField("name")},
		{"name over 50", f.alice, "POST", br, map[string]any{"name": strings.Repeat("b", 51)}, 400, wantField("name")},
		{"name with a slash", f.alice, "POST", br, map[string]any{"name": "a/b"}, 400, wantField("name")},
		{"malformed revision", f.alice, "POST", br, map[string]any{"name": "other", "revision": "xyz"}, 400, wantField("revision")},
		{"revision of another document", f.alice, "POST", br, map[string]any{"name": "other", "revision": evilHash}, 404, nil},
		{"member cannot branch", f.bob, "POST", br, map[string]any{"name": "bobs"}, 403, nil},
		{"foreign cannot branch", f.mallory, "POST", br, map[string]any{"name": "evil"}, 403, nil},
		{"list", f.bob, "GET", br, nil, 200, wantLen(2)},
		{"foreign list", f.mallory, "GET", br, nil, 403, nil},
		{"get latest revision", f.bob, "GET", br + "/feature", nil, 200, wantKey("hash", h0)},
		{"absent branch", f.bob, "GET", br + "/nope", nil, 404, nil},
	})
	// a change on the feature branch leaves main alone
	fh := e.must(200, f.alice, "POST", c.rev(h0)+"/clauses?branch=feature", map[string]any{"text": "on feature"}).obj(t)
	if fh["branch"].(map[string]any)["name"] != "feature" || c.head(t, "main") != h0 || c.head(t, "feature") != fh["hash"] {
		t.Fatalf("feature change %v", fh)
	}
	e.run(t, []scenario{
		{"rename", f.alice, "PATCH", br + "/feature", map[string]any{"name": "feature-2"}, 200, wantKey("name", "feature-2")},
		{"rename onto a taken name", f.alice, "PATCH", br + "/feature-2", map[string]any{"name": "main"}, 409, nil},
		{"read-only commit_count", f.alice, "PATCH", br + "/feature-2", map[string]any{"commit_count": 9}, 400, wantField("commit_count")},
		{"member cannot protect", f.bob, "PATCH", br + "/feature-2", map[string]any{"protected": true}, 403, nil},
		{"foreign cannot protect", f.mallory, "PATCH", br + "/feature-2", map[string]any{"protected": true}, 403, nil},
		{"protect", f.alice, "PATCH", br + "/feature-2", map[string]any{"protected": true}, 200, wantKey("protected", true)},
		{"protected refuses changes", f.alice, "POST", c.rev(h0) + "/clauses?branch=feature-2", map[string]any{}, 403, nil},
		{"protected refuses deletion", f.alice, "DELETE", br + "/feature-2", nil, 403, nil},
		{"unprotect", f.alice, "PATCH", br + "/feature-2", map[string]any{"protected": false}, 200, nil},
		{"foreign cannot delete", f.mallory, "DELETE", br + "/feature-2", nil, 403, nil},
		{"delete", f.alice, "DELETE", br + "/feature-2", nil, 204, nil},
		{"gone", f.alice, "GET", br + "/feature-2", nil, 404, nil},
		{"default branch stays", f.alice, "DELETE", br + "/main", nil, 400, nil},
		{"document shows one branch", f.alice, "GET", c.doc, nil, 200, wantKey("branch_count", 1)},
		{"a deleted document has no content", f.alice, "DELETE", c.doc, nil, 200, nil},
		{"content of a deleted document", f.alice, "GET", br, nil, 404, nil},
	})
}

// TestDocumentConcurrentEdits: 20 clients editing one branch from one
// base: edits of different clauses all land; edits of one cell give one
// winner and 409s, never a lost update.
func TestDocumentConcurrentEdits(t *testing.T) {
	t.Parallel()
	f := newDocFixture(t)
	e := f.e
	c := content{f: f, doc: "/documents/" + f.doc}
	h := c.head(t, "main")
	h = c.change(t, "POST", c.rev(h)+"/columns", map[string]any{"name": "Val"})
	col := e.must(200, f.alice, "GET", c.rev(h)+"/columns", nil).arr(t)[0]["column_id"].(string)
	const n = 20
	for i := 0; i < n; i++ {
		h = c.change(t, "POST", c.rev(h)+"/clauses", map[string]any{"text": fmt.Sprint("c", i)})
	}
	ids := c.clauseIDs(t, h)
	base := h
	run := func(clause func(i int) string) []*testResponse {
		out := make([]*testResponse, n)
		var wg sync.WaitGroup
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				out[i] = e.do(f.alice, "PATCH", c.rev(base)+"/fields", map[string]any{"clause_id": clause(i), "column_id": col, "value": fmt.Sprint("v", i)})
			}(i)
		}
		wg.Wait()
		return out
	}
	for i, r := range run(func(i int) string { return ids[i] }) {
		if r.Status != 200 {
			t.Fatalf("edit %d of its own clause: %d %s", i, r.Status, r.Body)
		}
	}
	cells := c.cells(t, c.head(t, "main"))
	for i := 0; i < n; i++ {
		if cells[ids[i]+"/"+col] != fmt.Sprint("v", i) {
			t.Fatalf("lost update of clause %d: %v", i, cells)
		}
	}
	// now all on one cell of a fresh clause, from one base
	base = c.change(t, "POST", c.rev(c.head(t, "main"))+"/clauses", map[string]any{"text": "contested"})
	target := c.clauseIDs(t, base)[n]
	winner := ""
	for i, r := range run(func(int) string { return target }) {
		switch r.Status {
		case 200:
			if winner != "" {
				t.Fatalf("two edits of one cell from one base both landed")
			}
			winner = fmt.Sprint("v", i)
		case 409:
		default:
			t.Fatalf("edit %d: %d %s", i, r.Status, r.Body)
		}
	}
	if got := c.cells(t, c.head(t, "main"))[target+"/"+col]; winner == "" || got != winner {
		t.Fatalf("cell %q, winner %q", got, winner)
	}
}

// TestDocumentLargeClauseText: clause text past the 1 MiB JSON limit up to
// 16 MiB is taken (kept as a blob, read back whole); more is 400.
func TestDocumentLargeClauseText(t *testing.T) {
	t.Parallel()
	f := newDocFixture(t)
	e := f.e
	c := content{f: f, doc: "/documents/" + f.doc}
	h := c.head(t, "main")
	big := strings.Repeat("0123456789abcdef", 3<<15) // 1.5 MiB
	h = c.change(t, "POST", c.rev(h)+"/clauses", map[string]any{"text": big})
	got := e.must(200, f.bob, "GET", c.rev(h)+"/clauses", nil).arr(t)
	if len(got) != 1 || got[0]["text"] != big {
		t.Fatalf("large text not kept whole (%d clauses)", len(got))
	}
	e.run(t, []scenario{
		{"other JSON bodies keep the 1 MiB limit", f.alice, "PATCH", c.doc, map[string]any{"title": strings.Repeat("t", 2<<20)}, 413, nil},
	})
	// the 16 MiB rule itself, without pushing 16 MiB of JSON through the
	// race detector
	if err := checkClauseText(ptr(strings.Repeat("x", 16<<20+1))); err == nil {
		t.Fatal("text over 16 MiB taken")
	}
	if err := checkClauseText(ptr(strings.Repeat("x", 16<<20))); err != nil {
		t.Fatal("text of 16 MiB refused")
	}
}

// TestDocumentCalculations: formula columns compute on read and in the
// field update's answer, conditional formatting gives colours, and bad
// expressions and cycles are refused when saved.
func TestDocumentCalculations(t *testing.T) {
	t.Parallel()
	f := newDocFixture(t)
	e := f.e
	c := content{f: f, doc: "/documents/" + f.doc}
	h := c.head(t, "main")
	for _, col := range []map[string]any{
		{"name": "qty", "type": "number", "data_format": 1},
		{"name": "rate", "type": "number"},
		{"name": "note", "type": "text", "conditional_formatting": `qty > 10 ? "#ff0000" : ""`},
		{"name": "total", "type": "formula", "formula": "qty * rate"},
		{"name": "double", "type": "formula", "formula": "total * 2"},
		{"name": "broken", "type": "formula", "formula": "note * 2"},
	} {
		h = c.change(t, "POST", c.rev(h)+"/columns", col)
	}
	ids := map[string]string{}
	for _, col := range e.must(200, f.alice, "GET", c.rev(h)+"/columns", nil).arr(t) {
		ids[col["name"].(string)] = col["column_id"].(string)
	}
	h = c.change(t, "POST", c.rev(h)+"/clauses", map[string]any{"text": "priced"})
	clause := c.clauseIDs(t, h)[0]
	h = c.change(t, "PATCH", c.rev(h)+"/fields", map[string]any{"clause_id": clause, "column_id": ids["qty"], "value": "12"})
	r := e.must(200, f.alice, "PATCH", c.rev(h)+"/fields", map[string]any{"clause_id": clause, "column_id": ids["rate"], "value": "2.5"}).obj(t)
	got := map[string]string{}
	colour := ""
	for _, fv := range r["fields"].([]any) {
		m := fv.(map[string]any)
		got[m["column_id"].(string)] = m["value"].(string)
		if m["column_id"] == ids["note"] && m["background_colour"] != nil {
			colour = m["background_colour"].(string)
		}
	}
	for _, fv := range r["fields"].([]any) {
		if m := fv.(map[string]any); m["column_id"] == ids["qty"] && m["formatted_value"] != "12.0000" {
			t.Fatalf("qty in its data format: %v", m)
		}
	}
	if got[ids["total"]] != "30" || got[ids["double"]] != "60" || got[ids["broken"]] != "" || colour != "#FF0000" {
		t.Fatalf("calculated fields %v (colour %q): %v", got, colour, r)
	}
	h = r["hash"].(string)
	read := c.cells(t, h)
	if read[clause+"/"+ids["total"]] != "30" {
		t.Fatalf("calculated on read: %v", read)
	}
	rev := c.rev(h)
	e.run(t, []scenario{
		{"formula that does not compile", f.alice, "POST", rev + "/columns", map[string]any{"name": "bad", "type": "formula", "formula": "qty *"}, 400, wantField("formula")},
		{"formula naming no column", f.alice, "POST", rev + "/columns", map[string]any{"name": "bad", "type": "formula", "formula": "nope * 2"}, 400, wantField("formula")},
		{"formula column without a formula", f.alice, "POST", rev + "/columns", map[string]any{"name": "bad", "type": "formula"}, 400, wantField("formula")},
		{"formatting that does not compile", f.alice, "PATCH", rev + "/columns/" + ids["note"], map[string]any{"conditional_formatting": "(("}, 400, wantField("conditional_formatting")},
		{"a cycle", f.alice, "PATCH", rev + "/columns/" + ids["total"], map[string]any{"formula": "double + 1"}, 400, wantField("formula")},
		{"a formula naming itself", f.alice, "PATCH", rev + "/columns/" + ids["total"], map[string]any{"formula": "total + 1"}, 400, wantField("formula")},
		{"a formula cell cannot be set", f.alice, "PATCH", rev + "/fields", map[string]any{"clause_id": clause, "column_id": ids["total"], "value": "1"}, 400, wantField("value")},
		{"a column a formula uses", f.alice, "DELETE", rev + "/columns/" + ids["rate"], nil, 400, nil},
		{"expr builtins are not column names", f.alice, "POST", rev + "/columns", map[string]any{"name": "rounded", "type": "formula", "formula": "round(rate)"}, 200, nil},
		{"a column by id", f.alice, "PATCH", rev + "/columns/" + ids["double"], map[string]any{"formula": "c" + ids["total"] + " * 3"}, 200, nil},
	})
	if v := c.cells(t, c.head(t, "main"))[clause+"/"+ids["double"]]; v != "90" {
		t.Fatalf("formula by column id gave %q", v)
	}
}

// TestCalcBlankInputs: an empty input is blank as a spreadsheet treats it
// (0 in arithmetic, "" in text); a formula whose inputs are all blank is
// blank, never #ERROR; a real failure still is.
func TestCalcBlankInputs(t *testing.T) {
	t.Parallel()
	cols := []docengine.Column{
		{ID: 1, Name: "Menge", Type: "number"},
		{ID: 2, Name: "Preis", Type: "number"},
		{ID: 3, Name: "note", Type: "text"},
		{ID: 4, Name: "total", Type: "formula", Formula: "Menge * Preis"},
		{ID: 5, Name: "label", Type: "formula", Formula: `note + "!"`},
		{ID: 6, Name: "twice", Type: "formula", Formula: "total * 2"},
		{ID: 7, Name: "bad", Type: "formula", Formula: "note * 2"},
		{ID: 8, Name: "sum", Type: "formula", Formula: "Menge + Preis"},
	}
	p, err := planCalc(cols)
	if err != nil {
		t.Fatal(err)
	}
	rows := []struct {
		name  string
		cells map[int64]string
		want  map[int64]string
	}{
		{"all empty", map[int64]string{}, map[int64]string{4: "", 5: "", 6: "", 7: "", 8: ""}},
		{"price missing", map[int64]string{1: "3"}, map[int64]string{4: "0", 6: "0", 8: "3", 5: "", 7: ""}},
		{"both", map[int64]string{1: "3", 2: "2.5"}, map[int64]string{4: "7.5", 6: "15", 8: "5.5"}},
		{"text", map[int64]string{3: "ok"}, map[int64]string{5: "ok!", 7: "#ERROR", 4: ""}},
		{"blank text", map[int64]string{3: "  "}, map[int64]string{5: "", 7: ""}},
	}
	for _, r := range rows {
		got, _ := p.row(r.cells)
		for id, want := range r.want {
			if got[id] != want {
				t.Errorf("%s: column %d = %q, want %q (all %v)", r.name, id, got[id], want, got)
			}
		}
	}
}

func TestFormatData(t *testing.T) {
	t.Parallel()
	rows := []struct {
		format int64
		in     string
		want   string
		ok     bool
	}{
		{0, "12.5", "", false},
		{1, "12.5", "12.5000", true},
		{1, "abc", "", false},
		{2, "12345", "1.2345x10^4", true},
		{2, "0.00012", "1.2000x10^-4", true},
		{2, "0", "0.0000x10^0", true},
		{3, "12345", "12.3450x10^3", true},
		{3, "0.00012", "120.0000x10^-6", true},
		{4, "93784", "01:02:03:04", true},
		{4, "-61", "-00:00:01:01", true},
		{5, "0", "1970-01-01T00:00:00Z", true},
		{5, "1700000000", "2023-11-14T22:13:20Z", true},
		{5, "1700000000000", "2023-11-14T22:13:20Z", true},
		{9, "1", "", false},
	}
	for _, r := range rows {
		got, ok := formatData(r.format, r.in)
		if got != r.want || ok != r.ok {
			t.Errorf("formatData(%d, %q) = %q %v, want %q %v", r.format, r.in, got, ok, r.want, r.ok)
		}
	}
}

// TestDocumentSheetLimit: the 201st sheet is refused.
func TestDocumentSheetLimit(t *testing.T) {
	t.Parallel()
	f := newDocFixture(t)
	c := content{f: f, doc: "/documents/" + f.doc}
	id, _ := db.ParseID(f.doc)
	ctx := context.Background()
	// 199 more sheets straight through the engine, then one over HTTP
	err := f.e.store.InTx(ctx, func(q *db.Queries) error {
		d, err := q.DocumentGet(ctx, int64(id))
		if err != nil {
			return err
		}
		br, _ := q.BranchGet(ctx, *d.DefaultBranchID)
		rev, _ := q.RevisionGet(ctx, br.RevisionID)
		st := docengine.NewStage(chunkStore{ctx, q})
		doc, err := st.Open(hashOf(rev.Hash))
		if err != nil {
			return err
		}
		for i := 2; i <= maxSheets; i++ {
			if err := doc.AddSheet(f.e.store.IDs.Next(), fmt.Sprint("S", i)); err != nil {
				return err
			}
		}
		h, _ := doc.Save()
		if _, err := st.Flush(h); err != nil {
			return err
		}
		nr, err := q.RevisionCreate(ctx, db.RevisionCreateParams{ID: f.e.store.IDs.Next(), DocumentID: d.ID, Hash: h[:], ParentID: &rev.ID,
			Parents: "[]", Generation: 1, CreatedAt: f.e.srv.nowText(), CreatedBy: rev.CreatedBy})
		if err != nil {
			return err
		}
		_, err = q.BranchMove(ctx, db.BranchMoveParams{ID: br.ID, RevisionID: nr.ID, OldRevisionID: rev.ID})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	f.e.run(t, []scenario{
		{"sheet over the limit", f.alice, "POST", c.rev(c.head(t, "main")) + "/sheets", map[string]any{"name": "One more"}, 400, nil},
	})
}
