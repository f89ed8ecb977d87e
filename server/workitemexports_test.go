package server

import (
	"bytes"
	"encoding/csv"
	"net/url"
	"testing"
	"workspace/server/render"

	"github.com/xuri/excelize/v2"
)

// TestWorkItemExports: CSV and XLSX of the list with its filter (project),
// only what the caller may view, the foreign organisation refused.
func TestWorkItemExports(t *testing.T) {
	t.Parallel()
	f := newWIFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	e.must(201, f.alice, "POST", acme+"/workitems", map[string]any{"type_id": f.task, "title": "=Fix the pump", "project_id": f.project,
		"start_at": "2026-12-01T08:00:00Z", "assignee_ids": []string{f.bob.ID}})
	e.must(201, f.alice, "POST", acme+"/workitems", map[string]any{"type_id": f.defect, "title": "Elsewhere", "project_id": f.other})
	e.must(201, f.alice, "POST", acme+"/workitems", map[string]any{"type_id": f.task, "title": "No project"})
	// bob may not view the other project's items
	e.must(200, f.alice, "PATCH", "/projects/"+f.other+"/permissions/"+f.acme,
		map[string]any{"permissions": map[string]string{"VIEW_WORKITEMS": "deny"}})
	csvPath := acme + "/workitems/export.csv"
	xlsxPath := acme + "/workitems/export.xlsx"
	inProject := "?$filter=" + url.QueryEscape("project_id eq '"+f.project+"'")
	rowsOf := func(t *testing.T, r *testResponse) [][]string {
		if !bytes.HasPrefix(r.Body, []byte(render.CSVBOM)) {
			t.Fatalf("no byte-order mark: %q", r.Body)
		}
		recs, err := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(r.Body, []byte(render.CSVBOM)))).ReadAll()
		if err != nil || len(recs) == 0 || recs[0][0] != "number" {
			t.Fatalf("csv %q %v", recs, err)
		}
		return recs[1:]
	}
	titles := func(want ...string) func(t *testing.T, r *testResponse) {
		return func(t *testing.T, r *testResponse) {
			rows := rowsOf(t, r)
			got := []string{}
			for _, row := range rows {
				got = append(got, row[1])
			}
			if len(got) != len(want) {
				t.Fatalf("titles %q, want %q", got, want)
			}
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("titles %q, want %q", got, want)
				}
			}
		}
	}
	e.run(t, []scenario{
		{"owner: every item", f.alice, "GET", csvPath, nil, 200, titles("'=Fix the pump", "Elsewhere", "No project")},
		{"filtered by project", f.alice, "GET", csvPath + inProject, nil, 200, func(t *testing.T, r *testResponse) {
			rows := rowsOf(t, r)
			if len(rows) != 1 || rows[0][1] != "'=Fix the pump" || rows[0][3] != "open" || rows[0][4] != "Plant" || rows[0][6] != "2026-12-01 08:00" {
				t.Fatalf("rows %q", rows)
			}
		}},
		{"member: the denied project left out", f.bob, "GET", csvPath, nil, 200, titles("'=Fix the pump", "No project")},
		{"bad filter", f.alice, "GET", csvPath + "?$filter=" + url.QueryEscape("colour eq 'red'"), nil, 400, nil},
		{"other organisation", f.mallory, "GET", csvPath, nil, 403, nil},
		{"other organisation xlsx", f.mallory, "GET", xlsxPath, nil, 403, nil},
		{"pending member", f.pen, "GET", xlsxPath, nil, 403, nil},
		{"no token", nil, "GET", xlsxPath, nil, 401, nil},
		{"absent organisation", f.alice, "GET", "/organisations/123456789/workitems/export.csv", nil, 400, nil},
	})
	x := e.must(200, f.alice, "GET", xlsxPath+inProject, nil)
	book, err := excelize.OpenReader(bytes.NewReader(x.Body))
	if err != nil {
		t.Fatal(err)
	}
	rows, _ := book.GetRows("Work items")
	if len(rows) != 2 || rows[1][1] != "=Fix the pump" || rows[1][5] == "" {
		t.Fatalf("xlsx rows %q", rows)
	}
	checkXLSXLayout(t, x.Body, book, "Work items", map[string]string{"B2": "text", "G2": "date", "I2": "date"})
}
