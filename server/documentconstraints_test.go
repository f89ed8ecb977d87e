package server

import (
	"testing"
)

// TestMergeEnumConstraint: a merge that leaves an enum cell naming no value
// of its column's (changed) item field is a constraint conflict, in the
// change flow in both directions and in a merge request.
func TestMergeEnumConstraint(t *testing.T) {
	t.Parallel()
	f := newDocFixture(t)
	e := f.e
	c := content{f: f, doc: "/documents/" + f.doc}
	colour := e.must(201, f.alice, "POST", "/organisations/"+f.acme+"/document-fields",
		map[string]any{"name": "Colour", "type": 4, "values": []map[string]any{{"value": "Red"}, {"value": "Blue"}}}).obj(t)
	colourID := colour["id"].(string)
	red := colour["values"].([]any)[0].(map[string]any)["id"].(string)
	blue := colour["values"].([]any)[1].(map[string]any)["id"].(string)

	h := c.head(t, "main")
	h = c.change(t, "POST", c.rev(h)+"/columns", map[string]any{"name": "Status", "type": "enum", "field_id": f.enumID})
	col := e.must(200, f.alice, "GET", c.rev(h)+"/columns", nil).arr(t)[0]["column_id"].(string)
	h = c.change(t, "POST", c.rev(h)+"/clauses", map[string]any{"text": "one"})
	h = c.change(t, "POST", c.rev(h)+"/clauses", map[string]any{"text": "two"})
	ids := c.clauseIDs(t, h)
	base := h

	wantConflict := func(clause string) func(t *testing.T, r *testResponse) {
		return func(t *testing.T, r *testResponse) {
			t.Helper()
			o := r.obj(t)
			cs := o["conflicts"].([]any)
			if o["conflict_count"] != float64(1) || len(cs) != 1 {
				t.Fatalf("conflicts %v", o)
			}
			cf := cs[0].(map[string]any)
			if cf["kind"] != "constraint" || cf["clause_id"] != clause || cf["column_id"] != col {
				t.Fatalf("conflict %v", cf)
			}
		}
	}
	// Ours: the column now names Colour. Theirs, on the old base, sets a
	// Status value: 409, nothing changes.
	hA := c.change(t, "PATCH", c.rev(base)+"/columns/"+col, map[string]any{"field_id": colourID})
	e.run(t, []scenario{
		{"a value of the old field on the old base", f.alice, "PATCH", c.rev(base) + "/fields",
			map[string]any{"clause_id": ids[0], "column_id": col, "value": f.valueA}, 409, wantConflict(ids[0])},
		{"head unchanged", f.alice, "GET", c.doc + "/branches/main", nil, 200, wantKey("hash", hA)},
		{"a value of the old field is refused on the new head itself", f.alice, "PATCH", c.rev(hA) + "/fields",
			map[string]any{"clause_id": ids[0], "column_id": col, "value": f.valueA}, 400, wantField("value")},
		{"an unrelated change on the old base merges", f.alice, "PATCH", c.rev(base) + "/clauses/" + ids[0],
			map[string]any{"text": "one!"}, 200, nil},
		{"a value of the new field on the head", f.alice, "PATCH", c.rev(hA) + "/fields",
			map[string]any{"clause_id": ids[0], "column_id": col, "value": red}, 200, nil},
		{"foreign member cannot try", f.mallory, "PATCH", c.rev(base) + "/fields",
			map[string]any{"clause_id": ids[0], "column_id": col, "value": red}, 403, nil},
	})
	// The other direction: the head sets a Colour value; a change of the
	// column back to Status on an older base conflicts on that cell.
	base2 := c.head(t, "main")
	c.change(t, "PATCH", c.rev(base2)+"/fields", map[string]any{"clause_id": ids[1], "column_id": col, "value": blue})
	e.run(t, []scenario{
		{"the column's field changed on the old base", f.alice, "PATCH", c.rev(base2) + "/columns/" + col,
			map[string]any{"field_id": f.enumID}, 409, wantConflict(ids[1])},
	})

	// A merge request: a Colour value on a branch, the column back to
	// Status on main.
	head := c.head(t, "main")
	e.must(201, f.alice, "POST", c.doc+"/branches", map[string]any{"name": "draft"})
	c.change(t, "PATCH", c.rev(head)+"/fields?branch=draft", map[string]any{"clause_id": ids[0], "column_id": col, "value": blue})
	c.change(t, "PATCH", c.rev(head)+"/columns/"+col, map[string]any{"field_id": f.enumID})
	mr := e.must(201, f.alice, "POST", c.doc+"/merge-requests", map[string]any{"from_branch": "draft", "to_branch": "main"}).obj(t)
	if mr["mergeable"] != false {
		t.Fatalf("merge request %v", mr)
	}
	cs := mr["conflicts"].([]any)
	if len(cs) != 1 || cs[0].(map[string]any)["kind"] != "constraint" || cs[0].(map[string]any)["clause_id"] != ids[0] {
		t.Fatalf("merge request conflicts %v", cs)
	}
}
