package server

import (
	"fmt"
	"strings"
	"testing"
)

// enumField creates an enum item field of acme and answers its id and
// value ids by text.
func enumField(t *testing.T, f *docFixture, name string, values ...string) (string, map[string]string) {
	t.Helper()
	var vs []map[string]any
	for _, v := range values {
		vs = append(vs, map[string]any{"value": v})
	}
	fld := f.e.must(201, f.alice, "POST", "/organisations/"+f.acme+"/document-fields", map[string]any{"name": name, "type": 4, "values": vs}).obj(t)
	ids := map[string]string{}
	for _, v := range fld["values"].([]any) {
		v := v.(map[string]any)
		ids[v["value"].(string)] = v["id"].(string)
	}
	return fld["id"].(string), ids
}

// columnNamed is the id of the column named name at revision h.
func (c content) columnNamed(t *testing.T, h, name string) string {
	t.Helper()
	for _, col := range c.f.e.must(200, c.f.alice, "GET", c.rev(h)+"/columns", nil).arr(t) {
		if col["name"] == name {
			return col["column_id"].(string)
		}
	}
	t.Fatalf("no column %s at %s", name, h)
	return ""
}

// lastCells reads the filled cells of the last clause at h, by column id.
func (c content) lastCells(t *testing.T, h string) map[string]string {
	t.Helper()
	cls := c.f.e.must(200, c.f.alice, "GET", c.rev(h)+"/clauses?$top=1000", nil).arr(t)
	out := map[string]string{}
	for _, fv := range cls[len(cls)-1]["fields"].([]any) {
		if m := fv.(map[string]any); m["value"] != "" {
			out[m["column_id"].(string)] = m["value"].(string)
		}
	}
	return out
}

// TestDocumentFieldTypeChange: a field's type cannot change while a column
// of a live branch head of any document (a fork's too) is bound to it.
func TestDocumentFieldTypeChange(t *testing.T) {
	t.Parallel()
	f := newDocFixture(t)
	e := f.e
	c := content{f: f, doc: "/documents/" + f.doc}
	phase, _ := enumField(t, f, "Phase", "One", "Two")
	fld := "/document-fields/" + phase
	toText := map[string]any{"type": 0, "values": []any{}}
	toEnum := map[string]any{"type": 4, "values": []map[string]any{{"value": "One"}}}

	e.run(t, []scenario{
		{"unbound: the type changes", f.alice, "PATCH", fld, toText, 200, wantKey("type", 0)},
		{"and back", f.alice, "PATCH", fld, toEnum, 200, wantKey("type", 4)},
	})
	h := c.change(t, "POST", c.rev(c.head(t, "main"))+"/columns", map[string]any{"name": "Phase", "type": "enum", "field_id": phase})
	col := c.columnNamed(t, h, "Phase")
	e.must(201, f.alice, "POST", c.doc+"/branches", map[string]any{"name": "side"})

	// mallory's own field bound in mallory's document: refused for mallory,
	// and nothing of it reaches acme's fields
	evil := content{f: f, doc: "/documents/" + f.evilDoc}
	evilFld := e.must(201, f.mallory, "POST", "/organisations/"+f.evil+"/document-fields",
		map[string]any{"name": "Evil", "type": 4, "values": []map[string]any{{"value": "X"}}}).obj(t)["id"].(string)
	evilHead := e.must(200, f.mallory, "GET", evil.doc+"/branches/main", nil).obj(t)["hash"].(string)
	e.must(200, f.mallory, "POST", evil.rev(evilHead)+"/columns", map[string]any{"name": "Evil", "type": "enum", "field_id": evilFld})

	e.run(t, []scenario{
		{"bound on two branches: refused", f.alice, "PATCH", fld, toText, 400, wantField("type")},
		{"the same type is no change", f.alice, "PATCH", fld, map[string]any{"type": 4, "name": "Phase 2"}, 200, wantKey("name", "Phase 2")},
		{"foreign organisation", f.mallory, "PATCH", fld, toText, 403, nil},
		{"member without MANAGE_ORGANISATION", f.bob, "PATCH", fld, toText, 403, nil},
		{"a foreign field cannot be bound", f.mallory, "POST", evil.rev(evilHead) + "/columns",
			map[string]any{"name": "Theirs", "type": "enum", "field_id": phase}, 400, wantField("field_id")},
		{"the foreign organisation's bound field is refused to it", f.mallory, "PATCH", "/document-fields/" + evilFld, toText, 400, wantField("type")},
	})
	if got := e.must(200, f.alice, "GET", fld, nil).obj(t); got["type"] != float64(4) || len(got["values"].([]any)) != 1 {
		t.Fatalf("refused change changed the field: %v", got)
	}

	// unbound on main, still bound on side
	c.change(t, "DELETE", c.rev(c.head(t, "main"))+"/columns/"+col, nil)
	e.run(t, []scenario{{"still bound on a branch", f.alice, "PATCH", fld, toText, 400, wantField("type")}})
	// rebound by a column's field change on side, unbound there by a type change
	side := c.head(t, "side")
	e.must(200, f.alice, "PATCH", c.rev(side)+"/columns/"+col+"?branch=side", map[string]any{"type": "text"})

	// a fork in the organisation carries its origin's bindings
	h = c.change(t, "POST", c.rev(c.head(t, "main"))+"/columns", map[string]any{"name": "Again", "type": "enum", "field_id": phase})
	fork := e.must(201, f.alice, "POST", c.doc, nil).obj(t)["id"].(string)
	c.change(t, "DELETE", c.rev(h)+"/columns/"+c.columnNamed(t, h, "Again"), nil)
	e.run(t, []scenario{{"bound in a fork", f.alice, "PATCH", fld, toText, 400, wantField("type")}})
	fc := content{f: f, doc: "/documents/" + fork}
	fh := fc.head(t, "main")
	fc.change(t, "DELETE", fc.rev(fh)+"/columns/"+fc.columnNamed(t, fh, "Again"), nil)
	// a deleted branch binds nothing
	e.must(201, f.alice, "POST", fc.doc+"/branches", map[string]any{"name": "old", "revision": fh})
	e.run(t, []scenario{{"bound on a live branch of the fork", f.alice, "PATCH", fld, toText, 400, wantField("type")}})
	e.must(204, f.alice, "DELETE", fc.doc+"/branches/old", nil)

	e.run(t, []scenario{
		{"bound nowhere any more: the type changes", f.alice, "PATCH", fld, toText, 200, wantKey("type", 0)},
		{"a text field cannot be bound", f.alice, "POST", c.rev(c.head(t, "main")) + "/columns",
			map[string]any{"name": "Text", "type": "enum", "field_id": phase}, 400, wantField("field_id")},
	})
}

// TestDocumentFieldDefaults: default_value is checked against the field's
// type when saved, follows its enum value's rename, is cleared by a type
// change, and fills the bound cells of new clauses.
func TestDocumentFieldDefaults(t *testing.T) {
	t.Parallel()
	f := newDocFixture(t)
	e := f.e
	fields := "/organisations/" + f.acme + "/document-fields"
	phase, vals := enumField(t, f, "Phase", "One", "Two", "Three")
	fld := "/document-fields/" + phase
	_, evilVals := func() (string, map[string]string) {
		fl := e.must(201, f.mallory, "POST", "/organisations/"+f.evil+"/document-fields",
			map[string]any{"name": "Evil", "type": 4, "values": []map[string]any{{"value": "One"}}}).obj(t)
		return fl["id"].(string), map[string]string{"One": fl["values"].([]any)[0].(map[string]any)["id"].(string)}
	}()
	note := "/document-fields/" + f.textID // text, max_length 5
	def := func(typ int, v any) map[string]any {
		return map[string]any{"name": fmt.Sprint("F", typ), "type": typ, "default_value": v}
	}
	e.run(t, []scenario{
		{"text: too long", f.alice, "POST", fields, map[string]any{"name": "T1", "max_length": 3, "default_value": "abcd"}, 400, wantField("default_value")},
		{"text: two lines in a one-line field", f.alice, "POST", fields, def(0, "a\nb"), 400, wantField("default_value")},
		{"text: not a string", f.alice, "POST", fields, def(0, 5), 400, wantField("default_value")},
		{"text: two lines in a multi-line field", f.alice, "POST", fields, map[string]any{"name": "T2", "multi_line": true, "default_value": "a\nb"}, 201, wantKey("default_value", "a\nb")},
		{"number: not a number", f.alice, "POST", fields, def(1, "12"), 400, wantField("default_value")},
		{"number", f.alice, "POST", fields, def(1, 12.5), 201, wantKey("default_value", 12.5)},
		{"boolean: not a boolean", f.alice, "POST", fields, def(2, "yes"), 400, wantField("default_value")},
		{"boolean", f.alice, "POST", fields, def(2, true), 201, wantKey("default_value", true)},
		{"date: not a date", f.alice, "POST", fields, def(3, "2026-13-01"), 400, wantField("default_value")},
		{"date", f.alice, "POST", fields, def(3, "2026-11-26"), 201, wantKey("default_value", "2026-11-26")},
		{"enum: no such value", f.alice, "POST", fields, map[string]any{"name": "E1", "type": 4, "values": []map[string]any{{"value": "A"}}, "default_value": "B"}, 400, wantField("default_value")},
		{"enum: not a string", f.alice, "POST", fields, map[string]any{"name": "E1", "type": 4, "values": []map[string]any{{"value": "A"}}, "default_value": 1}, 400, wantField("default_value")},
		{"enum: a value named by its text on create is stored by id", f.alice, "POST", fields,
			map[string]any{"name": "E2", "type": 4, "values": []map[string]any{{"value": "A"}, {"value": "B"}}, "default_value": "B"}, 201,
			func(t *testing.T, r *testResponse) {
				o := r.obj(t)
				if b := o["values"].([]any)[1].(map[string]any); o["default_value"] != b["id"] {
					t.Fatalf("default %v, values %v", o["default_value"], o["values"])
				}
			}},
		{"enum: a value of another field", f.alice, "PATCH", fld, map[string]any{"default_value": "123"}, 400, wantField("default_value")},
		{"enum: a value of a foreign organisation's field", f.alice, "PATCH", fld, map[string]any{"default_value": evilVals["One"]}, 400, wantField("default_value")},
		{"enum: by id", f.alice, "PATCH", fld, map[string]any{"default_value": vals["Two"]}, 200, wantKey("default_value", vals["Two"])},
		{"enum: retiring the default is refused", f.alice, "PATCH", fld,
			map[string]any{"values": []map[string]any{{"id": vals["One"], "value": "One"}, {"id": vals["Three"], "value": "Three"}}}, 400, wantField("default_value")},
		{"enum: renaming the default's value moves the default to the new value", f.alice, "PATCH", fld,
			map[string]any{"values": []map[string]any{{"id": vals["One"], "value": "One"}, {"id": vals["Two"], "value": "Second"}, {"id": vals["Three"], "value": "Three"}}}, 200,
			func(t *testing.T, r *testResponse) {
				o := r.obj(t)
				second := o["values"].([]any)[1].(map[string]any)
				if second["value"] != "Second" || second["id"] == vals["Two"] || o["default_value"] != second["id"] {
					t.Fatalf("default %v, values %v", o["default_value"], o["values"])
				}
				vals["Second"] = second["id"].(string)
			}},
		{"enum: a retired value", f.alice, "PATCH", fld, map[string]any{"default_value": vals["Two"]}, 400, wantField("default_value")},
		{"text: a default within max_length", f.alice, "PATCH", note, map[string]any{"default_value": "abc"}, 200, wantKey("default_value", "abc")},
		{"text: lowering max_length below the default is refused", f.alice, "PATCH", note, map[string]any{"max_length": 2}, 400, wantField("default_value")},
		{"text: a change that leaves the default fitting", f.alice, "PATCH", note, map[string]any{"max_length": 3, "name": "Note 2"}, 200, wantKey("default_value", "abc")},
		{"a type change without a default clears it", f.alice, "PATCH", note, map[string]any{"type": 1}, 200, wantKey("default_value", nil)},
		{"a type change with a default checks it", f.alice, "PATCH", note, map[string]any{"type": 2, "default_value": "x"}, 400, wantField("default_value")},
		{"a type change with a fitting default", f.alice, "PATCH", note, map[string]any{"type": 2, "default_value": false}, 200, wantKey("default_value", false)},
		{"null clears", f.alice, "PATCH", note, map[string]any{"default_value": nil}, 200, wantKey("default_value", nil)},
		{"foreign organisation", f.mallory, "PATCH", fld, map[string]any{"default_value": vals["One"]}, 403, nil},
		{"member without MANAGE_ORGANISATION", f.bob, "PATCH", fld, map[string]any{"default_value": vals["One"]}, 403, nil},
		{"a document's custom field value is still checked", f.alice, "PATCH", "/documents/" + f.doc,
			map[string]any{"fields": map[string]any{phase: "Second"}}, 400, wantField("fields." + phase)},
		{"and stored by id", f.alice, "PATCH", "/documents/" + f.doc, map[string]any{"fields": map[string]any{phase: vals["One"]}}, 200, nil},
	})
	if got := e.must(200, f.alice, "GET", fld, nil).obj(t); got["default_value"] != vals["Second"] || len(got["values"].([]any)) != 3 {
		t.Fatalf("field after the refusals: %v", got)
	}

	// applied: a new clause's bound cells start with the default
	c := content{f: f, doc: "/documents/" + f.doc}
	h := c.change(t, "POST", c.rev(c.head(t, "main"))+"/columns", map[string]any{"name": "Phase", "type": "enum", "field_id": phase})
	h = c.change(t, "POST", c.rev(h)+"/columns", map[string]any{"name": "Plain"})
	col, plain := c.columnNamed(t, h, "Phase"), c.columnNamed(t, h, "Plain")
	h = c.change(t, "POST", c.rev(h)+"/clauses", map[string]any{"text": "first"})
	if cells := c.lastCells(t, h); cells[col] != vals["Second"] || cells[plain] != "" {
		t.Fatalf("new clause cells %v, want Phase %s", cells, vals["Second"])
	}
	first := c.clauseIDs(t, h)[0]
	var formatted string
	for _, fv := range e.must(200, f.alice, "GET", c.rev(h)+"/clauses", nil).arr(t)[0]["fields"].([]any) {
		if m := fv.(map[string]any); m["column_id"] == col {
			formatted = fmt.Sprint(m["formatted_value"])
		}
	}
	if formatted != "Second" {
		t.Fatalf("default cell reads %q", formatted)
	}
	// the default is a value like any other: the cell is cleared and stays so
	h = e.must(200, f.alice, "PATCH", c.rev(h)+"/fields", map[string]any{"clause_id": first, "column_id": col, "value": ""}).obj(t)["hash"].(string)
	if cells := c.lastCells(t, h); cells[col] != "" {
		t.Fatalf("cleared cell %v", cells)
	}
	// a changed default applies to clauses made after it, not before
	e.must(200, f.alice, "PATCH", fld, map[string]any{"default_value": "Three"})
	h = c.change(t, "POST", c.rev(h)+"/clauses", map[string]any{"text": "second"})
	if cells := c.lastCells(t, h); cells[col] != vals["Three"] {
		t.Fatalf("second clause cells %v", cells)
	}
	if got := c.cells(t, h)[first+"/"+col]; got != "" {
		t.Fatalf("the first clause changed with the default: %q", got)
	}

	// a clause inserted on an old base gets the default of a column the
	// head bound since (the default is set on the merged content)
	old := h
	h = c.change(t, "POST", c.rev(h)+"/columns", map[string]any{"name": "Later", "type": "enum", "field_id": phase})
	later := c.columnNamed(t, h, "Later")
	h = c.change(t, "POST", c.rev(old)+"/clauses", map[string]any{"text": "third"})
	if cells := c.lastCells(t, h); cells[later] != vals["Three"] || cells[col] != vals["Three"] {
		t.Fatalf("clause on an old base: cells %v", cells)
	}
	// the head deleting a bound column while an old base inserts: no conflict
	old = h
	h = c.change(t, "DELETE", c.rev(h)+"/columns/"+later, nil)
	h = c.change(t, "POST", c.rev(old)+"/clauses", map[string]any{"text": "fourth"})
	if cells := c.lastCells(t, h); len(cells) != 1 || cells[col] != vals["Three"] {
		t.Fatalf("clause after the column's deletion: cells %v", cells)
	}

	// a disabled field defaults nothing; no default, nothing
	e.must(200, f.alice, "PATCH", fld, map[string]any{"enabled": false})
	h = c.change(t, "POST", c.rev(h)+"/clauses", map[string]any{"text": "fifth"})
	if cells := c.lastCells(t, h); len(cells) != 0 {
		t.Fatalf("disabled field: cells %v", cells)
	}
	e.must(200, f.alice, "PATCH", fld, map[string]any{"enabled": true, "default_value": nil})
	h = c.change(t, "POST", c.rev(h)+"/clauses", map[string]any{"text": "sixth"})
	if cells := c.lastCells(t, h); len(cells) != 0 {
		t.Fatalf("no default: cells %v", cells)
	}
	if n := len(c.clauseIDs(t, h)); n != 6 || strings.Count(fmt.Sprint(c.cells(t, h)), vals["Three"]) != 3 {
		t.Fatalf("%d clauses, cells %v", n, c.cells(t, h))
	}
}
