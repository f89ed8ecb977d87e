package server

import (
	"archive/zip"
	"bytes"
	"io"
	"regexp"
	"strings"
	"testing"
	"workspace/server/render"

	"github.com/xuri/excelize/v2"
)

// exportFixture is a document with typed columns, a formula, conditional
// formatting, an enum, two sheets, numbering and the organisation's logo.
type exportFixture struct {
	*docFixture
	c    content
	hash string
	cols map[string]string // column name -> id
	ids  []string          // clause ids of the first sheet
}

func newExportFixture(t *testing.T) *exportFixture {
	f := &exportFixture{docFixture: newDocFixture(t), cols: map[string]string{}}
	e := f.e
	f.c = content{f: f.docFixture, doc: "/documents/" + f.doc}
	h := f.c.head(t, "main")
	for _, col := range []map[string]any{
		{"name": "Qty", "type": "number", "data_format": 1},
		{"name": "Rate", "type": "number", "data_format": 2},
		{"name": "Total", "type": "formula", "formula": "Qty * Rate", "conditional_formatting": `Total > 100 ? "#FF0000" : ""`},
		{"name": "Status", "type": "enum", "field_id": f.enumID},
		{"name": "Done", "type": "boolean"},
		{"name": "Due", "type": "date"},
		{"name": "Note", "type": "text"},
		{"name": "Secs", "type": "number", "data_format": 4},
	} {
		h = f.c.change(t, "POST", f.c.rev(h)+"/columns", col)
	}
	for _, c := range e.must(200, f.alice, "GET", f.c.rev(h)+"/columns", nil).arr(t) {
		f.cols[c["name"].(string)] = c["column_id"].(string)
	}
	for _, text := range []string{"Supply & fix <pipes>", "=HYPERLINK(\"http://evil\")\nsecond line", "+1 plain"} {
		h = f.c.change(t, "POST", f.c.rev(h)+"/clauses", map[string]any{"text": text})
	}
	f.ids = f.c.clauseIDs(t, h)
	set := func(clause, col, v string) {
		h = f.c.change(t, "PATCH", f.c.rev(h)+"/fields", map[string]any{"clause_id": clause, "column_id": f.cols[col], "value": v})
	}
	set(f.ids[0], "Qty", "12.5")
	set(f.ids[0], "Rate", "10")
	set(f.ids[0], "Status", f.valueA)
	set(f.ids[0], "Done", "true")
	set(f.ids[0], "Due", "2026-12-01")
	set(f.ids[0], "Note", "=1+1")
	set(f.ids[0], "Secs", "90061")
	set(f.ids[1], "Qty", "2")
	set(f.ids[1], "Rate", "3")
	set(f.ids[1], "Done", "false")
	h = f.c.change(t, "POST", f.c.rev(h)+"/sheets", map[string]any{"name": "Annex [1]"})
	sheets := e.must(200, f.alice, "GET", f.c.rev(h)+"/sheets", nil).arr(t)
	h = f.c.change(t, "POST", f.c.rev(h)+"/clauses", map[string]any{"sheet_id": sheets[1]["sheet_id"], "text": "In the annex"})
	h = f.c.change(t, "PATCH", f.c.rev(h), map[string]any{"clause_prefix_format": "{document}-C{number}", "clause_digits": 3})
	if r := e.serve(multipartReq(t, f.alice, "PUT", "/organisations/"+f.acme+"/logo", nil, map[string][]byte{"file": pngBytes(t, 64, 32)})); r.Status != 200 {
		t.Fatalf("logo: %d %s", r.Status, r.Body)
	}
	f.hash = h
	return f
}

func unzipped(t *testing.T, data []byte) map[string]string {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatalf("not a zip: %v", err)
	}
	out := map[string]string{}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(rc)
		rc.Close()
		out[f.Name] = string(b)
	}
	return out
}

func TestDocumentExportDOCX(t *testing.T) {
	t.Parallel()
	f := newExportFixture(t)
	e := f.e
	r := e.must(200, f.bob, "GET", f.c.rev(f.hash)+"/export.docx", nil)
	if ct := r.Header.Get("Content-Type"); ct != docxType {
		t.Fatalf("content type %q", ct)
	}
	if cd := r.Header.Get("Content-Disposition"); !strings.HasPrefix(cd, "attachment;") || !strings.Contains(cd, "Main spec") {
		t.Fatalf("disposition %q", cd)
	}
	files := unzipped(t, r.Body)
	doc := files["word/document.xml"]
	for _, want := range []string{
		"Main spec", "1-C001", "1-C002", "1-C003", "1-C004", // numbered through the sheets
		"Supply &amp; fix &lt;pipes&gt;", "second line", "Annex [1]", "In the annex",
		"12.5000", "1.0000x10^1", "125", "Draft", "Yes", "No", "2026-12-01", "=1+1", "01:01:01:01",
		`w:fill="FF0000"`, // Total 125 > 100
		"Qty", "Rate", "Total", "Status",
	} {
		if !strings.Contains(doc, want) {
			t.Errorf("document.xml lacks %q", want)
		}
	}
	for _, gone := range []string{"{SHEET_NAME}", "{CELL}", "{HEADER}", "{TITLE}", "{SUBTITLE}"} {
		if strings.Contains(doc, gone) {
			t.Errorf("document.xml keeps the placeholder %s", gone)
		}
	}
	if strings.Count(doc, "<w:tbl>") != 2 {
		t.Errorf("want one table per sheet, got %d", strings.Count(doc, "<w:tbl>"))
	}
	if hdr := files["word/header1.xml"]; !strings.Contains(hdr, `r:embed="rIdLogo"`) || !strings.Contains(hdr, "Acme") || strings.Contains(hdr, "{LOGO}") {
		t.Errorf("header: %s", hdr)
	}
	if _, ok := files["word/media/logo.png"]; !ok || !strings.Contains(files["word/_rels/header1.xml.rels"], "media/logo.png") {
		t.Errorf("logo not embedded: %v", files["word/_rels/header1.xml.rels"])
	}
	convertWithLibreOffice(t, r.Body)

	// Without a logo the header keeps the organisation's name only.
	e.must(204, f.alice, "DELETE", "/organisations/"+f.acme+"/logo", nil)
	files = unzipped(t, e.must(200, f.alice, "GET", f.c.rev(f.hash)+"/export.docx", nil).Body)
	if hdr := files["word/header1.xml"]; strings.Contains(hdr, "rIdLogo") || strings.Contains(hdr, "{LOGO}") {
		t.Errorf("header without a logo: %s", hdr)
	}
}

func TestDocumentExportXLSX(t *testing.T) {
	t.Parallel()
	f := newExportFixture(t)
	e := f.e
	r := e.must(200, f.bob, "GET", f.c.rev(f.hash)+"/export.xlsx", nil)
	if ct := r.Header.Get("Content-Type"); ct != xlsxType {
		t.Fatalf("content type %q", ct)
	}
	x, err := excelize.OpenReader(bytes.NewReader(r.Body))
	if err != nil {
		t.Fatalf("excelize cannot read the export: %v", err)
	}
	defer x.Close()
	if got := x.GetSheetList(); len(got) != 2 || got[0] != "Sheet 1" || got[1] != "Annex _1_" {
		t.Fatalf("sheets %v", got)
	}
	head := []string{"No.", "Clause", "Qty", "Rate", "Total", "Status", "Done", "Due", "Note", "Secs"}
	want := map[string][][]string{
		"Sheet 1": {
			head,
			{"1-C001", "Supply & fix <pipes>", "12.5000", "1.0000E+01", "125", "Draft", "TRUE", "2026-12-01", "=1+1", "01:01:01:01"},
			{"1-C002", "=HYPERLINK(\"http://evil\")\nsecond line", "2.0000", "3.0000E+00", "6", "", "FALSE"},
			{"1-C003", "+1 plain"}, // Qty * Rate of empty cells is blank, as the clauses read it
		},
		"Annex _1_": {head, {"1-C004", "In the annex"}},
	}
	for sheet, rows := range want {
		got, err := x.GetRows(sheet)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(rows) {
			t.Fatalf("%s: %d rows, want %d: %q", sheet, len(got), len(rows), got)
		}
		for i := range rows {
			if strings.Join(got[i], "|") != strings.Join(rows[i], "|") {
				t.Errorf("%s row %d:\n got %q\nwant %q", sheet, i+1, got[i], rows[i])
			}
		}
	}
	// Layout: typed cells, bold frozen filtered header, fitted ordered
	// widths; printed landscape on A4, fitted to the page width, the header
	// repeated on every page; a two-line clause gets a two-line row.
	for _, sheet := range []string{"Sheet 1", "Annex _1_"} {
		checkXLSXLayout(t, r.Body, x, sheet, map[string]string{"A2": "text", "B2": "text"})
		pl, err := x.GetPageLayout(sheet)
		if err != nil || pl.Orientation == nil || *pl.Orientation != "landscape" || pl.FitToWidth == nil || *pl.FitToWidth != 1 ||
			pl.FitToHeight == nil || *pl.FitToHeight != 0 || pl.Size == nil || *pl.Size != 9 {
			t.Errorf("%s page layout %+v %v", sheet, pl, err)
		}
		if props, _ := x.GetSheetProps(sheet); props.FitToPage == nil || !*props.FitToPage {
			t.Errorf("%s not fitted to the page", sheet)
		}
	}
	checkXLSXLayout(t, r.Body, x, "Sheet 1", map[string]string{"C2": "number", "G2": "bool", "H2": "date", "I2": "text"})
	if h, _ := x.GetRowHeight("Sheet 1", 3); h < 2*render.XLSXLineHeight {
		t.Errorf("a two-line clause has a row %v high", h)
	}
	// Raw values: numbers are numbers (the format only shows them), texts
	// that look like formulas are plain strings, never formulas.
	raw := func(cell string) string {
		v, err := x.GetCellValue("Sheet 1", cell, excelize.Options{RawCellValue: true})
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	if raw("C2") != "12.5" || raw("D2") != "10" || raw("E2") != "125" {
		t.Errorf("raw numbers %q %q %q", raw("C2"), raw("D2"), raw("E2"))
	}
	for _, cell := range []string{"B3", "I2", "B4"} {
		if fm, _ := x.GetCellFormula("Sheet 1", cell); fm != "" {
			t.Errorf("%s is a formula %q", cell, fm)
		}
		if ct, _ := x.GetCellType("Sheet 1", cell); ct != excelize.CellTypeSharedString && ct != excelize.CellTypeInlineString {
			t.Errorf("%s has type %v, want a string", cell, ct)
		}
	}
	if ct, _ := x.GetCellType("Sheet 1", "C2"); ct != excelize.CellTypeNumber && ct != excelize.CellTypeUnset {
		t.Errorf("C2 has type %v, want a number", ct)
	}
	st, _ := x.GetCellStyle("Sheet 1", "E2")
	if style, err := x.GetStyle(st); err != nil || style.Fill.Color == nil || style.Fill.Color[0] != "FF0000" {
		t.Errorf("Total 125 has no red fill: %+v %v", style, err)
	}
	if hf, err := x.GetHeaderFooter("Sheet 1"); err != nil || !strings.Contains(hf.OddHeader, "&G") || !strings.Contains(hf.OddHeader, "Main spec") {
		t.Errorf("header %+v %v: want the logo (&G) and the title", hf, err)
	}
}

func TestDocumentExportAccess(t *testing.T) {
	t.Parallel()
	f := newExportFixture(t)
	e := f.e
	rev := f.c.rev(f.hash)
	evil := "/documents/" + f.evilDoc
	evilHash := e.must(200, f.mallory, "GET", evil+"/branches/main", nil).obj(t)["hash"].(string)
	prefix := e.must(201, f.alice, "POST", "/organisations/"+f.acme+"/prefixes", map[string]any{"number_format": "CL-{number}", "number_digits": 2}).obj(t)["id"].(string)
	evilPrefix := e.must(201, f.mallory, "POST", "/organisations/"+f.evil+"/prefixes", map[string]any{"number_format": "EV-{number}"}).obj(t)["id"].(string)
	var h2 string
	e.run(t, []scenario{
		{"docx: foreign organisation", f.mallory, "GET", rev + "/export.docx", nil, 403, nil},
		{"xlsx: foreign organisation", f.mallory, "GET", rev + "/export.xlsx", nil, 403, nil},
		{"docx: no organisation", f.nobody, "GET", rev + "/export.docx", nil, 403, nil},
		{"xlsx: pending member", f.pen, "GET", rev + "/export.xlsx", nil, 403, nil},
		{"docx: no token", nil, "GET", rev + "/export.docx", nil, 401, nil},
		{"docx: malformed hash", f.alice, "GET", f.c.doc + "/revisions/xyz/export.docx", nil, 400, nil},
		{"xlsx: hash of another document", f.alice, "GET", f.c.rev(evilHash) + "/export.xlsx", nil, 404, nil},
		{"docx: absent document", f.alice, "GET", "/documents/123456789/revisions/" + f.hash + "/export.docx", nil, 404, nil},
		{"docx: foreign member exports own", f.mallory, "GET", evil + "/revisions/" + evilHash + "/export.docx", nil, 200, nil},

		{"numbering: member without EDIT_DOCUMENTS", f.bob, "PATCH", rev, map[string]any{"clause_digits": 2}, 403, nil},
		{"numbering: foreign organisation", f.mallory, "PATCH", rev, map[string]any{"clause_digits": 2}, 403, nil},
		{"numbering: format without {number}", f.alice, "PATCH", rev, map[string]any{"clause_prefix_format": "C-"}, 400, wantField("clause_prefix_format")},
		{"numbering: format over 50", f.alice, "PATCH", rev, map[string]any{"clause_prefix_format": strings.Repeat("x", 51) + "{number}"}, 400, wantField("clause_prefix_format")},
		{"numbering: digits over 10", f.alice, "PATCH", rev, map[string]any{"clause_digits": 11}, 400, wantField("clause_digits")},
		{"numbering: negative digits", f.alice, "PATCH", rev, map[string]any{"clause_digits": -1}, 400, wantField("clause_digits")},
		{"numbering: wrong type", f.alice, "PATCH", rev, map[string]any{"clause_digits": "3"}, 400, wantField("clause_digits")},
		{"numbering: malformed JSON", f.alice, "PATCH", rev, `{"clause_digits":`, 400, nil},
		{"numbering: read-only hash", f.alice, "PATCH", rev, map[string]any{"hash": "x"}, 400, wantField("hash")},
		{"numbering: prefix of another organisation", f.alice, "PATCH", rev, map[string]any{"clause_prefix_id": evilPrefix}, 400, wantField("clause_prefix_id")},
		{"numbering: a prefix of the organisation, format cleared", f.alice, "PATCH", rev,
			map[string]any{"clause_prefix_id": prefix, "clause_prefix_format": "", "clause_digits": nil, "unknown": 1}, 200, func(t *testing.T, r *testResponse) {
				h2 = r.obj(t)["hash"].(string)
			}},
	})
	// A numbering change on the old base that the head changed otherwise
	// is a conflict, not a silent overwrite.
	if r := e.do(f.alice, "PATCH", rev, map[string]any{"clause_digits": 5}); r.Status != 409 {
		t.Fatalf("numbering changed on an old base: status %d: %s", r.Status, r.Body)
	}
	g := e.must(200, f.alice, "GET", f.c.rev(h2), nil).obj(t)
	if g["clause_prefix_id"] != prefix || g["clause_prefix_format"] != nil || g["clause_digits"] != nil {
		t.Fatalf("revision meta %v", g)
	}
	doc := unzipped(t, e.must(200, f.alice, "GET", f.c.rev(h2)+"/export.docx", nil).Body)["word/document.xml"]
	if !strings.Contains(doc, "CL-01") || !strings.Contains(doc, "CL-04") || strings.Contains(doc, "1-C001") {
		t.Errorf("numbering from the prefix: %s", doc)
	}
	// The old revision keeps its own numbering.
	if doc := unzipped(t, e.must(200, f.alice, "GET", rev+"/export.docx", nil).Body)["word/document.xml"]; !strings.Contains(doc, "1-C001") {
		t.Errorf("old revision lost its numbering")
	}
	// A deleted document exports nothing.
	e.must(200, f.alice, "DELETE", f.c.doc, nil)
	e.must(404, f.alice, "GET", rev+"/export.xlsx", nil)
}

// TestRevisionPatchEchoesReadBody: a client may send back the revision it
// read (GET, ?tree included) with a numbering change; the read-only fields
// it echoes, a released revision's label among them, are compared with the
// revision as GET shows it. A read-only field changed is still 400.
func TestRevisionPatchEchoesReadBody(t *testing.T) {
	t.Parallel()
	f := newDocFixture(t)
	e := f.e
	c := content{f: f, doc: "/documents/" + f.doc}
	h := c.change(t, "POST", c.rev(c.head(t, "main"))+"/clauses", map[string]any{"text": "first"})
	e.must(201, f.alice, "POST", c.doc+"/tags", map[string]any{"revision": h, "release": true})
	read := e.must(200, f.alice, "GET", c.rev(h)+"?tree=true", nil).obj(t)
	if read["revision"] == "" || read["tree"] == nil {
		t.Fatalf("a released revision shows its label and tree: %v", read)
	}
	with := func(changes map[string]any) map[string]any {
		out := map[string]any{}
		for k, v := range read {
			out[k] = v
		}
		for k, v := range changes {
			out[k] = v
		}
		return out
	}
	evil := "/documents/" + f.evilDoc
	evilHash := e.must(200, f.mallory, "GET", evil+"/branches/main", nil).obj(t)["hash"].(string)
	e.run(t, []scenario{
		{"foreign organisation", f.mallory, "PATCH", c.rev(h), with(map[string]any{"clause_digits": 2}), 403, nil},
		{"revision of another organisation's document", f.alice, "PATCH", evil + "/revisions/" + evilHash, with(map[string]any{"clause_digits": 2}), 403, nil},
		{"a changed label is read-only", f.alice, "PATCH", c.rev(h), with(map[string]any{"revision": "Z", "clause_digits": 2}), 400, wantField("revision")},
		{"a changed message is read-only", f.alice, "PATCH", c.rev(h), with(map[string]any{"message": "rewritten", "clause_digits": 2}), 400, wantField("message")},
		{"a changed signed flag is read-only", f.alice, "PATCH", c.rev(h), with(map[string]any{"signed": true, "clause_digits": 2}), 400, wantField("signed")},
		{"the read body echoed with a numbering change", f.alice, "PATCH", c.rev(h), with(map[string]any{"clause_digits": 2}), 200, func(t *testing.T, r *testResponse) {
			nh, _ := r.obj(t)["hash"].(string)
			if nh == "" || nh == h {
				t.Fatalf("no new revision: %s", r.Body)
			}
			if got := e.must(200, f.alice, "GET", c.rev(nh), nil).obj(t); got["clause_digits"] != float64(2) {
				t.Errorf("new revision %v", got)
			}
		}},
	})
}

// TestDocxDocumentRTL: in the document DOCX export a paragraph whose text
// is right to left (its first strong letter Hebrew or Arabic: clause text,
// cell, sheet name, title) is marked so, paragraph and runs, as the
// toolbox report's lines are; left-to-right ones are not. LibreOffice
// opens it.
func TestDocxDocumentRTL(t *testing.T) {
	t.Parallel()
	f := newDocFixture(t)
	e := f.e
	doc := e.must(201, f.alice, "POST", "/documents", map[string]any{"organisation_id": f.acme, "title": "مواصفات الموقع"}).obj(t)["id"].(string)
	c := content{f: f, doc: "/documents/" + doc}
	h := c.change(t, "POST", c.rev(c.head(t, "main"))+"/columns", map[string]any{"name": "Note", "type": "text"})
	h = c.change(t, "POST", c.rev(h)+"/columns", map[string]any{"name": "ملاحظات", "type": "text"})
	note := c.columnNamed(t, h, "Note")
	for _, text := range []string{"שימו לב: קסדה חובה", "Supply pipes", "12 تعليمات السلامة"} {
		h = c.change(t, "POST", c.rev(h)+"/clauses", map[string]any{"text": text})
	}
	ids := c.clauseIDs(t, h)
	h = c.change(t, "PATCH", c.rev(h)+"/fields", map[string]any{"clause_id": ids[0], "column_id": note, "value": "OK"})
	h = c.change(t, "PATCH", c.rev(h)+"/fields", map[string]any{"clause_id": ids[1], "column_id": note, "value": "ملاحظة\nسطر ثان"})
	h = c.change(t, "POST", c.rev(h)+"/sheets", map[string]any{"name": "ملحق"})
	e.run(t, []scenario{
		{"foreign organisation cannot export", f.mallory, "GET", c.rev(h) + "/export.docx", nil, 403, nil},
	})
	r := e.must(200, f.bob, "GET", c.rev(h)+"/export.docx", nil)
	body := unzipped(t, r.Body)["word/document.xml"]
	if err := wellFormed(body); err != nil {
		t.Fatalf("document.xml is not well-formed: %v", err)
	}
	texts := regexp.MustCompile(`<w:t[^>]*>([^<]*)</w:t>`)
	marked := map[string]bool{}
	for _, p := range regexp.MustCompile(`<w:p>.*?</w:p>`).FindAllString(body, -1) {
		var text strings.Builder
		for _, m := range texts.FindAllStringSubmatch(p, -1) {
			text.WriteString(m[1])
		}
		runs, rtlRuns := strings.Count(p, "<w:r>"), strings.Count(p, "<w:rtl/>")
		bidi := regexp.MustCompile(`^<w:p><w:pPr>(<w:pStyle w:val="[^"]+"/>)?<w:bidi/>`).MatchString(p)
		switch {
		case bidi && rtlRuns == runs && strings.Count(p, "<w:bidi/>") == 1:
			marked[text.String()] = true
		case !bidi && rtlRuns == 0 && !strings.Contains(p, "<w:bidi/>"):
			marked[text.String()] = false
		default:
			t.Errorf("paragraph half marked right to left: %s", p)
		}
	}
	for text, rtl := range map[string]bool{
		"مواصفات الموقع": true, "שימו לב: קסדה חובה": true, "12 تعليمات السلامة": true, "ملاحظةسطر ثان": true, "ملحق": true, "ملاحظات": true,
		"Supply pipes": false, "OK": false, "No.": false, "Clause": false, "Note": false, "Sheet 1": false,
	} {
		if got, ok := marked[text]; !ok || got != rtl {
			t.Errorf("%q: marked right to left %v (found %v), want %v", text, got, ok, rtl)
		}
	}
	// the exact markup of a right-to-left cell and sheet heading
	for _, want := range []string{
		`<w:p><w:pPr><w:bidi/></w:pPr><w:r><w:rPr><w:sz w:val="20"/><w:rtl/></w:rPr><w:t xml:space="preserve">שימו לב: קסדה חובה</w:t></w:r></w:p>`,
		`<w:p><w:pPr><w:pStyle w:val="Heading2"/><w:bidi/></w:pPr><w:r><w:rPr><w:rtl/></w:rPr><w:t xml:space="preserve">ملحق</w:t></w:r></w:p>`,
		`<w:p><w:pPr><w:pStyle w:val="Heading1"/><w:bidi/></w:pPr><w:r><w:rPr><w:rtl/></w:rPr><w:t xml:space="preserve">مواصفات الموقع</w:t></w:r></w:p>`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("document.xml lacks %s", want)
		}
	}
	// LibreOffice lays the marked headings out right to left: aligned to
	// the right margin (pdftotext -layout keeps the indent), the others left.
	_, pages := officePDF(t, r.Body, "docx")
	all := strings.Join(pages, "\n")
	indent := func(s string) int {
		for _, line := range strings.Split(all, "\n") {
			if strings.Contains(line, s) {
				return len(line) - len(strings.TrimLeft(line, " "))
			}
		}
		t.Errorf("LibreOffice's PDF lacks %q:\n%s", s, all)
		return -1
	}
	for s, right := range map[string]bool{"الموقع": true, "ملحق": true, "Document ": false, "Sheet 1": false, "Supply pipes": false} {
		if n := indent(s); n >= 0 && (n > 40) != right {
			t.Errorf("%q starts %d columns in, want right-aligned %v:\n%s", s, n, right, all)
		}
	}
}
