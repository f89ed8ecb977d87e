package server

import (
	"archive/zip"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"workspace/server/render"

	"github.com/xuri/excelize/v2"
)

// checkXLSXLayout reads an exported sheet back: the cells' types ("text",
// "number", "bool", "date": a number with a date format), a bold frozen
// header row with a filter, fitted column widths in order, print titles.
func checkXLSXLayout(t *testing.T, raw []byte, f *excelize.File, sheet string, types map[string]string) {
	t.Helper()
	for cell, want := range types {
		ct, err := f.GetCellType(sheet, cell)
		if err != nil {
			t.Fatal(err)
		}
		got := map[excelize.CellType]string{excelize.CellTypeInlineString: "text", excelize.CellTypeSharedString: "text",
			excelize.CellTypeNumber: "number", excelize.CellTypeUnset: "number", excelize.CellTypeBool: "bool"}[ct]
		if got == "number" {
			st, _ := f.GetCellStyle(sheet, cell)
			if s, _ := f.GetStyle(st); s != nil && s.CustomNumFmt != nil && strings.Contains(*s.CustomNumFmt, "yyyy") {
				got = "date"
			}
		}
		if v, _ := f.GetCellValue(sheet, cell); strings.HasPrefix(v, "'") {
			t.Errorf("%s %s shows an apostrophe: %q", sheet, cell, v)
		}
		if got != want {
			t.Errorf("%s %s is %q (%v), want %q", sheet, cell, got, ct, want)
		}
	}
	st, _ := f.GetCellStyle(sheet, "A1")
	if s, _ := f.GetStyle(st); s == nil || s.Font == nil || !s.Font.Bold {
		t.Errorf("%s: header not bold", sheet)
	}
	panes, err := f.GetPanes(sheet)
	if err != nil || !panes.Freeze || panes.YSplit != 1 {
		t.Errorf("%s: header not frozen: %+v %v", sheet, panes, err)
	}
	names := map[string]bool{}
	for _, d := range f.GetDefinedName() {
		if d.Scope == sheet {
			names[d.Name] = true
		}
	}
	if !names["_xlnm._FilterDatabase"] || !names["_xlnm.Print_Titles"] {
		t.Errorf("%s: filter or print titles missing: %v", sheet, names)
	}
	// printed landscape on A4, every column on the page width
	props, err := f.GetSheetProps(sheet)
	layout, err2 := f.GetPageLayout(sheet)
	if err != nil || err2 != nil || props.FitToPage == nil || !*props.FitToPage || layout.Orientation == nil || *layout.Orientation != "landscape" ||
		layout.Size == nil || *layout.Size != 9 || layout.FitToWidth == nil || *layout.FitToWidth != 1 || layout.FitToHeight == nil || *layout.FitToHeight != 0 {
		t.Errorf("%s: not printed landscape fitted to the page width: %+v %+v %v %v", sheet, props, layout, err, err2)
	}
	cols, _ := f.GetCols(sheet)
	for i := range cols {
		name, _ := excelize.ColumnNumberToName(i + 1)
		w, err := f.GetColWidth(sheet, name)
		if err != nil || w < render.XLSXMinWidth || w > render.XLSXMaxWidth {
			t.Errorf("%s: column %s width %v %v", sheet, name, w, err)
		}
	}
	// column entries in order (Excel repairs a file whose <col> entries
	// are not ascending)
	checkColsOrdered(t, raw)
}

// checkColsOrdered: every worksheet's <col> entries ascend without overlap.
func checkColsOrdered(t *testing.T, xlsx []byte) {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(xlsx), int64(len(xlsx)))
	if err != nil {
		t.Fatal(err)
	}
	colRE := regexp.MustCompile(`<col [^>]*?min="(\d+)" max="(\d+)"`)
	for _, zf := range zr.File {
		if !strings.HasPrefix(zf.Name, "xl/worksheets/sheet") {
			continue
		}
		rc, _ := zf.Open()
		data, _ := io.ReadAll(rc)
		rc.Close()
		last := 0
		ms := colRE.FindAllStringSubmatch(string(data), -1)
		if len(ms) == 0 {
			t.Errorf("%s: no column widths", zf.Name)
		}
		for _, m := range ms {
			lo, _ := strconv.Atoi(m[1])
			hi, _ := strconv.Atoi(m[2])
			if lo <= last || hi < lo {
				t.Errorf("%s: column entries out of order: %q", zf.Name, ms)
				break
			}
			last = hi
		}
	}
}

// goldenFile compares bytes with testdata/server/<name> (rewritten with
// -update).
func goldenFile(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "server", name)
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
		t.Fatalf("%s: %v (run with -update to write it)", name, err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file:\n got %q\nwant %q", name, got, want)
	}
}

// TestAssetCSVRoundTrip: the CSV export is UTF-8 with a byte-order mark
// and CRLF lines, neutralises = + - @ and escapes a leading apostrophe, so
// importing it gives back exactly the exported text (issue 32: an asset
// named '=quoted name came back as =quoted name).
func TestAssetCSVRoundTrip(t *testing.T) {
	t.Parallel()
	f := newAssetFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	names := []string{"'=quoted name", "'plain quote", "''two", "=SUM(A1)", "+1", "-minus", "@at", "Siobhán Ó Briain", "a, \"b\"\nc"}
	ids := make([]string, len(names))
	for i, n := range names {
		ids[i] = e.must(201, f.alice, "POST", acme+"/assets", map[string]any{"type_id": f.truck, "name": n}).obj(t)["id"].(string)
	}
	exp := e.must(200, f.alice, "GET", acme+"/assets/export.csv", nil)
	goldenFile(t, "assets-export.csv", exp.Body)
	if !bytes.HasPrefix(exp.Body, []byte("\xef\xbb\xbf")) || bytes.Count(exp.Body, []byte("\n")) != bytes.Count(exp.Body, []byte("\r\n")) {
		t.Fatalf("not BOM + CRLF: %q", exp.Body)
	}
	// Rename them all, then import the export: every name comes back.
	for _, id := range ids {
		e.must(200, f.alice, "PATCH", "/api/assets/"+id, map[string]any{"name": "changed"})
	}
	back := e.importFile(f.alice, acme+"/assets/import", exp.Body, "text/csv")
	if back.Status != 200 {
		t.Fatalf("re-import: %d %s", back.Status, back.Body)
	}
	for i, id := range ids {
		if got := e.must(200, f.alice, "GET", "/api/assets/"+id, nil).obj(t)["name"]; got != names[i] {
			t.Errorf("name %q came back as %q", names[i], got)
		}
	}
}
