package server

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"
)

// reqFixture: a document whose main has an enum column Req bound to a
// required item field (Approval) and an enum column Opt bound to the
// fixture's Status field (not required), and three clauses: c0 and c1 with
// Req filled, c2 with Req empty and Opt set. base is main's head then.
type reqFixture struct {
	*docFixture
	c                    content
	mrs                  string
	approval, yes, no    string // the required field and its values
	req, opt             string // column ids
	clauses              []string
	base                 string
	sheet                string
	branchSeq, clauseSeq int
}

func newReqFixture(t *testing.T) *reqFixture {
	f := &reqFixture{docFixture: newDocFixture(t)}
	e := f.e
	f.c = content{f: f.docFixture, doc: "/documents/" + f.doc}
	f.mrs = f.c.doc + "/merge-requests"
	fld := e.must(201, f.alice, "POST", "/organisations/"+f.acme+"/document-fields", map[string]any{"name": "Approval", "type": 4,
		"required": true, "values": []map[string]any{{"value": "Yes"}, {"value": "No"}}}).obj(t)
	f.approval = fld["id"].(string)
	f.yes = fld["values"].([]any)[0].(map[string]any)["id"].(string)
	f.no = fld["values"].([]any)[1].(map[string]any)["id"].(string)
	h := f.c.head(t, "main")
	h = f.c.change(t, "POST", f.c.rev(h)+"/columns", map[string]any{"name": "Req", "type": "enum", "field_id": f.approval})
	h = f.c.change(t, "POST", f.c.rev(h)+"/columns", map[string]any{"name": "Opt", "type": "enum", "field_id": f.enumID})
	for _, col := range e.must(200, f.alice, "GET", f.c.rev(h)+"/columns", nil).arr(t) {
		if col["name"] == "Req" {
			f.req = col["column_id"].(string)
		} else {
			f.opt = col["column_id"].(string)
		}
	}
	for _, txt := range []string{"c0\n", "c1\n", "c2\n"} {
		h = f.c.change(t, "POST", f.c.rev(h)+"/clauses", map[string]any{"text": txt})
	}
	f.clauses = f.c.clauseIDs(t, h)
	for _, set := range [][3]string{{f.clauses[0], f.req, f.yes}, {f.clauses[1], f.req, f.yes}, {f.clauses[2], f.opt, f.valueA}} {
		h = f.c.change(t, "PATCH", f.c.rev(h)+"/fields", map[string]any{"clause_id": set[0], "column_id": set[1], "value": set[2]})
	}
	f.base = h
	f.sheet = e.must(200, f.alice, "GET", f.c.rev(h)+"/clauses?$top=1", nil).arr(t)[0]["sheet_id"].(string)
	return f
}

// pair makes two new branches from base.
func (f *reqFixture) pair(t *testing.T) (string, string) {
	t.Helper()
	f.branchSeq++
	x, y := fmt.Sprintf("x%d", f.branchSeq), fmt.Sprintf("y%d", f.branchSeq)
	for _, b := range []string{x, y} {
		f.e.must(201, f.alice, "POST", f.c.doc+"/branches", map[string]any{"name": b, "revision": f.base})
	}
	return x, y
}

// edit is one change on a branch's head.
type edit func(t *testing.T, f *reqFixture, branch string)

func setCell(clause int, col func(f *reqFixture) string, v func(f *reqFixture) string) edit {
	return func(t *testing.T, f *reqFixture, branch string) {
		if clause == lastAdd {
			clause = len(f.clauses) - 1
		}
		h := f.c.head(t, branch)
		f.e.must(200, f.alice, "PATCH", f.c.rev(h)+"/fields?branch="+branch,
			map[string]any{"clause_id": f.clauses[clause], "column_id": col(f), "value": v(f)})
	}
}

func setText(clause int, text string) edit {
	return func(t *testing.T, f *reqFixture, branch string) {
		h := f.c.head(t, branch)
		f.e.must(200, f.alice, "PATCH", f.c.rev(h)+"/clauses/"+f.clauses[clause]+"?branch="+branch, map[string]any{"text": text})
	}
}

// addClause appends a clause (its id becomes f.clauses[3], [4]...).
func addClause(t *testing.T, f *reqFixture, branch string) {
	before := map[string]bool{}
	h := f.c.head(t, branch)
	for _, id := range f.c.clauseIDs(t, h) {
		before[id] = true
	}
	f.clauseSeq++
	h = f.c.change(t, "POST", f.c.rev(h)+"/clauses?branch="+branch, map[string]any{"text": fmt.Sprintf("added %d\n", f.clauseSeq)})
	for _, id := range f.c.clauseIDs(t, h) {
		if !before[id] {
			f.clauses = append(f.clauses, id)
		}
	}
}

func rebind(col func(f *reqFixture) string, field func(f *reqFixture) string) edit {
	return func(t *testing.T, f *reqFixture, branch string) {
		h := f.c.head(t, branch)
		f.e.must(200, f.alice, "PATCH", f.c.rev(h)+"/columns/"+col(f)+"?branch="+branch, map[string]any{"field_id": field(f)})
	}
}

func deleteColumn(col func(f *reqFixture) string) edit {
	return func(t *testing.T, f *reqFixture, branch string) {
		h := f.c.head(t, branch)
		f.e.must(200, f.alice, "DELETE", f.c.rev(h)+"/columns/"+col(f)+"?branch="+branch, nil)
	}
}

var (
	reqCol = func(f *reqFixture) string { return f.req }
	optCol = func(f *reqFixture) string { return f.opt }
	yes    = func(f *reqFixture) string { return f.yes }
	no     = func(f *reqFixture) string { return f.no }
	empty  = func(f *reqFixture) string { return "" }
	reqFld = func(f *reqFixture) string { return f.approval }
)

const lastAdd = -1 // a clause index: the last clause added

// conflictKeys lists a request's conflicts as kind/clause index/column
// name ("required" conflicts also check the id's form).
func (f *reqFixture) conflictKeys(t *testing.T, o map[string]any) []string {
	t.Helper()
	idx := map[string]string{}
	for i, id := range f.clauses {
		idx[id] = fmt.Sprint(i)
	}
	cols := map[string]string{f.req: "Req", f.opt: "Opt"}
	keys := []string{}
	for _, x := range o["conflicts"].([]any) {
		c := x.(map[string]any)
		clause, _ := c["clause_id"].(string)
		col, _ := c["column_id"].(string)
		id := c["id"].(string)
		kind := c["kind"].(string)
		if strings.HasSuffix(id, ":required") {
			if want := fmt.Sprintf("constraint:%s:%s:%s:required", f.sheet, clause, col); id != want || kind != "constraint" {
				t.Fatalf("conflict id %s kind %s, want %s", id, kind, want)
			}
			kind = "required"
		}
		keys = append(keys, kind+"/"+idx[clause]+"/"+cols[col])
	}
	sort.Strings(keys)
	if o["conflict_count"] != float64(len(keys)) {
		t.Fatalf("conflict_count %v for %v", o["conflict_count"], keys)
	}
	return keys
}

// TestMergeRequestRequiredFields: a merge request merges only when every
// clause the source added or changed since the merge base fills each
// column bound to a required item field (docs/documents.md, merge
// requests); each case opens the request both ways between two branches
// made from one base.
func TestMergeRequestRequiredFields(t *testing.T) {
	t.Parallel()
	f := newReqFixture(t)
	e := f.e
	cases := []struct {
		name   string
		x, y   []edit
		xToY   []string // conflicts of the request x -> y
		yToX   []string // of y -> x
		extraX []edit   // then on x: the request x -> y is mergeable
	}{
		{name: "the source clears a filled required cell; the other side only edits text",
			x: []edit{setCell(0, reqCol, empty)}, y: []edit{setText(1, "c1 y\n")},
			xToY: []string{"required/0/Req"}, yToX: []string{},
			extraX: []edit{setCell(0, reqCol, no)}},
		{name: "filled on one side, cleared on the other: a cell conflict, never a silent empty",
			x: []edit{setCell(0, reqCol, no)}, y: []edit{setCell(0, reqCol, empty)},
			xToY: []string{"cell/0/Req"}, yToX: []string{"cell/0/Req"}},
		{name: "cleared on one side while the other edits the clause: the merged clause is checked",
			x: []edit{setText(0, "c0 x\n")}, y: []edit{setCell(0, reqCol, empty)},
			xToY: []string{"required/0/Req"}, yToX: []string{"required/0/Req"}},
		{name: "a clause added without the required cell, then filled",
			x: []edit{addClause}, y: []edit{setText(1, "c1 y\n")},
			xToY: []string{"required/3/Req"}, yToX: []string{},
			extraX: []edit{setCell(lastAdd, reqCol, yes)}},
		{name: "a clause already empty and untouched by the source is not checked",
			x: []edit{setText(1, "c1 x\n")}, y: []edit{setText(0, "c0 y\n")},
			xToY: []string{}, yToX: []string{}},
		{name: "filling a required cell of an empty clause merges both ways",
			x: []edit{setCell(2, reqCol, yes)}, y: []edit{setText(2, "c2 y\n")},
			xToY: []string{}, yToX: []string{}},
		{name: "a column bound to the required field on the other side counts for the source's clauses",
			x: []edit{addClause, setCell(lastAdd, reqCol, yes)}, y: []edit{rebind(optCol, reqFld)},
			xToY: []string{"required/3/Opt"}, yToX: []string{}},
		{name: "a column bound to the required field on the source's own side counts too",
			x: []edit{rebind(optCol, reqFld), setText(1, "c1 x\n")}, y: []edit{setText(0, "c0 y\n")},
			xToY: []string{"required/1/Opt"}, yToX: []string{"required/0/Opt"}},
		{name: "a column deleted by the source is no edit of the clauses that had cells in it",
			x: []edit{deleteColumn(optCol)}, y: []edit{setText(1, "c1 y\n")},
			xToY: []string{}, yToX: []string{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f.clauses = f.clauses[:3]
			x, y := f.pair(t)
			for _, ed := range tc.x {
				ed(t, f, x)
			}
			for _, ed := range tc.y {
				ed(t, f, y)
			}
			for _, dir := range []struct {
				from, to string
				want     []string
			}{{x, y, tc.xToY}, {y, x, tc.yToX}} {
				r := e.must(201, f.alice, "POST", f.mrs, map[string]any{"from_branch": dir.from, "to_branch": dir.to}).obj(t)
				path := f.mrs + "/" + fmt.Sprint(r["number"])
				o := e.must(200, f.bob, "GET", path, nil).obj(t)
				got := f.conflictKeys(t, o)
				if fmt.Sprint(got) != fmt.Sprint(dir.want) || o["mergeable"] != (len(dir.want) == 0) {
					t.Fatalf("%s -> %s: mergeable %v, conflicts %v, want %v", dir.from, dir.to, o["mergeable"], got, dir.want)
				}
				if dir.from == x && tc.extraX != nil {
					for _, ed := range tc.extraX {
						ed(t, f, x)
					}
					o = e.must(200, f.bob, "GET", path, nil).obj(t)
					if got := f.conflictKeys(t, o); len(got) != 0 || o["mergeable"] != true {
						t.Fatalf("after filling on %s: mergeable %v, conflicts %v", x, o["mergeable"], got)
					}
				}
			}
		})
	}
}

// TestMergeRequestRequiredMerge: the merge endpoint refuses a request the
// gate refuses (409 with the constraint conflicts, nothing changes; a
// resolution cannot settle one), merges it once the source fills the
// cell; taking the empty side of a cell conflict is refused likewise;
// the field's required and enabled flags count as they are now; the
// change flow (a change on an old base) is not gated; foreign callers are
// refused.
func TestMergeRequestRequiredMerge(t *testing.T) {
	t.Parallel()
	f := newReqFixture(t)
	e := f.e
	x, y := f.pair(t)
	addClause(t, f, x)
	added := f.clauses[3]
	path := f.mrs + "/" + fmt.Sprint(e.must(201, f.alice, "POST", f.mrs, map[string]any{"from_branch": x, "to_branch": y}).obj(t)["number"])
	yHead := f.c.head(t, y)
	reqID := fmt.Sprintf("constraint:%s:%s:%s:required", f.sheet, added, f.req)
	wantRefused := func(t *testing.T, r *testResponse) {
		o := r.obj(t)
		cs := o["conflicts"].([]any)
		if o["conflict_count"] != float64(1) || len(cs) != 1 || cs[0].(map[string]any)["id"] != reqID ||
			cs[0].(map[string]any)["kind"] != "constraint" || o["head"].(map[string]any)["hash"] != yHead {
			t.Fatalf("refused merge %s", r.Body)
		}
	}
	e.run(t, []scenario{
		{"get: foreign organisation", f.mallory, "GET", path, nil, 403, nil},
		{"get: in no organisation", f.nobody, "GET", path, nil, 403, nil},
		{"get: not mergeable", f.bob, "GET", path, nil, 200, func(t *testing.T, r *testResponse) {
			if o := r.obj(t); o["mergeable"] != false || len(o["conflicts"].([]any)) != 1 || o["conflicts"].([]any)[0].(map[string]any)["id"] != reqID {
				t.Fatalf("request %s", r.Body)
			}
		}},
		{"merge: foreign organisation", f.mallory, "POST", path + "/merge", nil, 403, nil},
		{"merge: member without EDIT_DOCUMENTS", f.bob, "POST", path + "/merge", nil, 403, nil},
		{"merge: refused with the constraint", f.alice, "POST", path + "/merge", nil, 409, wantRefused},
		{"merge: a resolution cannot settle it", f.alice, "POST", path + "/merge",
			map[string]any{"resolutions": []any{map[string]any{"id": reqID, "take": "theirs"}}}, 400, wantField("resolutions[0].id")},
		{"target unchanged", f.alice, "GET", f.c.doc + "/branches/" + y, nil, 200, wantKey("hash", yHead)},
		{"the field no longer required: mergeable", f.alice, "PATCH", "/document-fields/" + f.approval, map[string]any{"required": false}, 200, nil},
		{"get: mergeable", f.bob, "GET", path, nil, 200, wantKey("mergeable", true)},
		{"required again", f.alice, "PATCH", "/document-fields/" + f.approval, map[string]any{"required": true}, 200, nil},
		{"get: refused again", f.bob, "GET", path, nil, 200, wantKey("mergeable", false)},
		{"a disabled field requires nothing", f.alice, "PATCH", "/document-fields/" + f.approval, map[string]any{"enabled": false}, 200, nil},
		{"get: mergeable while disabled", f.bob, "GET", path, nil, 200, wantKey("mergeable", true)},
		{"enabled again", f.alice, "PATCH", "/document-fields/" + f.approval, map[string]any{"enabled": true}, 200, nil},
	})
	// the change flow is not gated: a clause added on an old base of y
	// lands on its head with the required cell empty
	setText(1, "c1 y\n")(t, f, y)
	e.must(200, f.alice, "POST", f.c.rev(f.base)+"/clauses?branch="+y, map[string]any{"text": "old base\n"})
	yHead = f.c.head(t, y)
	if ps := e.must(200, f.alice, "GET", f.c.rev(yHead), nil).obj(t)["parents"].([]any); len(ps) != 1 || len(f.c.clauseIDs(t, yHead)) != 4 {
		t.Fatalf("the change on an old base did not land on the head: parents %v", ps)
	}
	e.run(t, []scenario{{"merge: still refused", f.alice, "POST", path + "/merge", nil, 409, wantRefused}})
	setCell(3, reqCol, yes)(t, f, x)
	e.run(t, []scenario{{"merge: once the source fills the cell", f.alice, "POST", path + "/merge", nil, 200, wantKey("status", "merged")}})
	if cells := f.c.cells(t, f.c.head(t, y)); cells[added+"/"+f.req] != f.yes {
		t.Fatalf("merged cells %v", cells)
	}

	// a cell conflict between a filled and an empty required cell: taking
	// the empty side leaves a constraint (409), taking the filled one merges
	a, b := f.pair(t)
	setCell(0, reqCol, no)(t, f, a)
	setCell(0, reqCol, empty)(t, f, b)
	p2 := f.mrs + "/" + fmt.Sprint(e.must(201, f.alice, "POST", f.mrs, map[string]any{"from_branch": a, "to_branch": b}).obj(t)["number"])
	cellID := e.must(200, f.bob, "GET", p2, nil).obj(t)["conflicts"].([]any)[0].(map[string]any)["id"].(string)
	r := e.do(f.alice, "POST", p2+"/merge", map[string]any{"resolutions": []any{map[string]any{"id": cellID, "take": "ours"}}})
	if r.Status != http.StatusConflict || !strings.Contains(string(r.Body), fmt.Sprintf("constraint:%s:%s:%s:required", f.sheet, f.clauses[0], f.req)) {
		t.Fatalf("taking the empty side: %d %s", r.Status, r.Body)
	}
	e.run(t, []scenario{{"taking the filled side merges", f.alice, "POST", p2 + "/merge",
		map[string]any{"resolutions": []any{map[string]any{"id": cellID, "take": "theirs"}}}, 200, wantKey("status", "merged")}})
}
