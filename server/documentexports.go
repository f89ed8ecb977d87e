package server

import (
	"bytes"
	"context"
	"fmt"
	_ "image/jpeg" // logos are JPEG or PNG (orgidentity.go)
	_ "image/png"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/nguyenthenguyen/docx"
	"github.com/xuri/excelize/v2"

	"workspace/db"
	"workspace/server/docengine"
	"workspace/server/render"
	"workspace/web"
)

// Exports of a revision (documents.md "Export"): GET
// /documents/{id}/revisions/{hash}/export.docx and .xlsx. Both read the
// revision in one snapshot, number the clauses per the revision's
// clause_prefix_format, show cells as the clauses endpoint does (calculated
// formulas, data formats, enum value texts, background colours) and carry
// the organisation's logo in the page header. The DOCX fills the default
// template web/templates/document-export.docx with nguyenthenguyen/docx
// (sheet block and table rows cloned from the template's own XML, as the
// toolbox report does); the XLSX is written with excelize's stream writer,
// one worksheet per sheet. PATCH /documents/{id}/revisions/{hash} sets the
// numbering (a change through the change flow).

const (
	// maxExportBytes bounds the text and cell bytes one export holds in
	// memory; a larger revision is 400 (export a sheet-sized branch).
	maxExportBytes = 64 << 20
	// exportPage is how many clauses one engine read takes.
	exportPage        = 1000
	maxPrefixFormat   = 50
	maxClauseDigits   = 10
	documentTokenName = "{document}"
)

// exportCell is one cell as exported: shown is the text a reader sees;
// number, boolean and date hold the typed value for the XLSX when the cell
// is one.
type exportCell struct {
	shown   string
	number  *float64
	boolean *bool
	date    *time.Time
	colour  string // #RRGGBB or ""
}

type exportRow struct {
	number string
	text   string
	cells  []exportCell // aligned with exportData.columns
}

type exportSheet struct {
	name string
	rows []exportRow
}

type exportData struct {
	org     db.Organisation
	doc     db.Document
	rev     db.DocumentRevision
	hash    docengine.Hash
	meta    docengine.Meta
	columns []docengine.Column
	sheets  []exportSheet
	logo    *db.Blob
}

// exportTitle is the document's title as the revision has it.
func (x *exportData) title() string {
	if x.meta.Title != "" {
		return x.meta.Title
	}
	return x.doc.Title
}

// subtitle: the document number and the revision.
func (x *exportData) subtitle() string {
	num := x.doc.FormattedNumber
	if num == "" {
		num = strconv.FormatInt(x.doc.Number, 10)
	}
	return "Document " + num + ", revision " + x.hash.String()[:12] + " of " + x.rev.CreatedAt
}

func (x *exportData) fileName(ext string) string {
	name := strings.Map(func(r rune) rune {
		if strings.ContainsRune(`/\:*?"<>|`, r) || r < 0x20 {
			return '_'
		}
		return r
	}, x.title())
	return name + " " + x.hash.String()[:12] + "." + ext
}

// clauseNumberer numbers clauses 1, 2, ... in document order through the
// revision's clause_prefix_format ({number} zero-padded to clause_digits,
// {document} the document's formatted number); without a format, the
// format of the clause_prefix_id prefix; else the plain number.
func clauseNumberer(meta docengine.Meta, d db.Document, prefix *db.Prefix) func(n int) string {
	format := meta.ClausePrefixFormat
	var digits *int64
	if meta.ClauseDigits > 0 {
		digits = &meta.ClauseDigits
	}
	if format == "" && prefix != nil {
		format = prefix.NumberFormat
		if digits == nil {
			digits = prefix.NumberDigits
		}
	}
	if format == "" {
		format = numberToken
	}
	format = strings.ReplaceAll(format, documentTokenName, d.FormattedNumber)
	return func(n int) string { return formatNumber(format, digits, int64(n)) }
}

// loadExport reads everything an export shows, in the caller's snapshot.
func loadExport(rq *request, q *db.Queries, h docengine.Hash) (*exportData, error) {
	d, rev, doc, err := readContentFor(rq, q, h, DocExport)
	if err != nil {
		return nil, err
	}
	org, err := q.OrganisationGet(rq.ctx, d.OrganisationID)
	if err != nil {
		return nil, err
	}
	x := &exportData{org: org, doc: d, rev: rev, hash: h, meta: doc.R.Meta, columns: doc.R.Columns}
	if x.logo, err = orgLogo(rq.ctx, q, org); err != nil {
		return nil, err
	}
	var prefix *db.Prefix
	if x.meta.ClausePrefixID != 0 && x.meta.ClausePrefixFormat == "" {
		p, err := q.PrefixGetInOrg(rq.ctx, db.PrefixGetInOrgParams{ID: x.meta.ClausePrefixID, OrganisationID: d.OrganisationID})
		if err == nil {
			prefix = &p
		} else if !db.IsNotFound(err) {
			return nil, err
		}
	}
	number := clauseNumberer(x.meta, d, prefix)
	enums, err := enumTexts(rq.ctx, q, x.columns)
	if err != nil {
		return nil, err
	}
	plan, _ := planCalc(x.columns) // a stored revision's plan compiles (checked on save)
	budget := maxExportBytes
	n := 0
	for _, sh := range doc.R.Sheets {
		es := exportSheet{name: sh.Name}
		for skip := 0; ; skip += exportPage {
			rows, total, err := doc.Clauses(sh.ID, skip, exportPage)
			if err != nil {
				return nil, err
			}
			for _, r := range rows {
				n++
				row := exportRow{number: number(n), text: r.Text, cells: make([]exportCell, len(x.columns))}
				budget -= len(r.Text)
				byCol := map[db.ID]cellJSON{}
				for _, c := range cellsOf(plan, x.columns, r.Cells, enums) {
					byCol[c.ColumnID] = c
				}
				for i, col := range x.columns {
					c, ok := byCol[db.ID(col.ID)]
					if !ok {
						continue
					}
					budget -= len(c.Value)
					row.cells[i] = exportCellOf(col, c, enums)
				}
				if budget < 0 {
					return nil, badRequest("The revision is too large to export (over %d MiB of text).", maxExportBytes>>20)
				}
				es.rows = append(es.rows, row)
			}
			if skip+exportPage >= total {
				break
			}
		}
		x.sheets = append(x.sheets, es)
	}
	return x, nil
}

// blobData is a blob's bytes; nil for none (an organisation without a logo).
func blobData(b *db.Blob) []byte {
	if b == nil {
		return nil
	}
	return b.Data
}

// orgLogo is the organisation's logo image, nil when it has none (or its
// blob is gone): the page header of the DOCX exports and reports shows it.
func orgLogo(ctx context.Context, q *db.Queries, org db.Organisation) (*db.Blob, error) {
	if org.LogoHash == nil || *org.LogoHash == "" {
		return nil, nil
	}
	b, err := q.BlobGet(ctx, *org.LogoHash)
	if db.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &b, nil
}

// enumTexts maps the enum value ids the columns may hold to their texts,
// retired values included (cells keep naming them).
func enumTexts(ctx context.Context, q *db.Queries, cols []docengine.Column) (map[string]string, error) {
	var ids []int64
	for _, c := range cols {
		if c.Type == "enum" && c.FieldID != 0 {
			ids = append(ids, c.FieldID)
		}
	}
	out := map[string]string{}
	if len(ids) == 0 {
		return out, nil
	}
	vals, err := q.DocumentFieldValuesAll(ctx, idsJSON(ids))
	if err != nil {
		return nil, err
	}
	for _, v := range vals {
		out[db.ID(v.ID).String()] = v.Value
	}
	return out, nil
}

// exportCellOf types a cell for the exports.
func exportCellOf(col docengine.Column, c cellJSON, enums map[string]string) exportCell {
	out := exportCell{shown: c.Value}
	if c.BackgroundColour != nil {
		out.colour = *c.BackgroundColour
	}
	switch col.Type {
	case "number", "formula":
		if c.FormattedValue != nil {
			out.shown = *c.FormattedValue
		}
		if f, err := strconv.ParseFloat(c.Value, 64); err == nil && (col.DataFormat <= 3) {
			out.number = &f
		}
	case "boolean":
		b := c.Value == "true"
		out.boolean = &b
		out.shown = "No"
		if b {
			out.shown = "Yes"
		}
	case "date":
		if t, err := time.Parse(time.DateOnly, c.Value); err == nil {
			out.date = &t
		}
	case "enum":
		if t, ok := enums[c.Value]; ok {
			out.shown = t
		}
	}
	return out
}

func (s *Server) exportDOCX(rq *request) error {
	h, err := rq.pathHash("hash")
	if err != nil {
		return err
	}
	var x *exportData
	err = s.store.ReadTx(rq.ctx, func(q *db.Queries) (err error) {
		x, err = loadExport(rq, q, h)
		return err
	})
	if err != nil {
		return err
	}
	out, err := renderDocumentDOCX(x, s.now())
	if err != nil {
		return err
	}
	rq.w.Header().Set("Content-Type", docxType)
	rq.w.Header().Set("Content-Disposition", contentDisposition(x.fileName("docx")))
	rq.w.WriteHeader(http.StatusOK)
	_, err = rq.w.Write(out)
	return err
}

// renderDocumentDOCX fills the default template: the {SHEET_NAME}
// paragraph and the table after it are cloned per sheet, the {HEADER} cell
// per heading, the {CELL} row per clause and its cell per value.
func renderDocumentDOCX(x *exportData, now time.Time) ([]byte, error) {
	tmpl, err := web.Templates.ReadFile("templates/document-export.docx")
	if err != nil {
		return nil, err
	}
	if err := render.CheckDocx(tmpl); err != nil {
		return nil, fmt.Errorf("%s: %w", "export template", err)
	}
	r, err := docx.ReadDocxFromMemory(bytes.NewReader(tmpl), int64(len(tmpl)))
	if err != nil {
		return nil, fmt.Errorf("export template: %w", err)
	}
	defer r.Close()
	d := r.Editable()
	content := d.GetContent()

	_, blockStart, _, err := render.Element(content, "w:p", "{SHEET_NAME}")
	if err != nil {
		return nil, err
	}
	_, _, blockEnd, err := render.Element(content, "w:tbl", "{CELL}")
	if err != nil {
		return nil, err
	}
	block := content[blockStart:blockEnd]
	sheetHeading, _, _, err := render.Element(block, "w:p", "{SHEET_NAME}")
	if err != nil {
		return nil, err
	}
	headerCell, _, _, err := render.Element(block, "w:tc", "{HEADER}")
	if err != nil {
		return nil, err
	}
	headerRow, _, _, err := render.Element(block, "w:tr", "{HEADER}")
	if err != nil {
		return nil, err
	}
	bodyRow, _, _, err := render.Element(block, "w:tr", "{CELL}")
	if err != nil {
		return nil, err
	}
	bodyCell, _, _, err := render.Element(bodyRow, "w:tc", "{CELL}")
	if err != nil {
		return nil, err
	}
	grid, _, _, err := render.Element(block, "w:tblGrid", "<w:gridCol")
	if err != nil {
		return nil, err
	}
	// Column widths: number, clause text (wide), then the columns, in
	// fiftieths of a percent of the page width.
	widths := []int{600, 2400}
	for range x.columns {
		widths = append(widths, 1200)
	}
	var gridXML strings.Builder
	gridXML.WriteString("<w:tblGrid>")
	for _, w := range widths {
		fmt.Fprintf(&gridXML, `<w:gridCol w:w="%d"/>`, w)
	}
	gridXML.WriteString("</w:tblGrid>")

	cell := func(tmpl, marker, text, colour string) string {
		c := strings.Replace(tmpl, marker, render.XMLText(text), 1)
		if render.IsRTL(text) {
			c = render.MarkRTL(c) // as the toolbox report's lines
		}
		if colour != "" {
			shd := `<w:shd w:val="clear" w:color="auto" w:fill="` + strings.TrimPrefix(colour, "#") + `"/>`
			c = strings.Replace(c, "</w:tcPr>", shd+"</w:tcPr>", 1)
		}
		return c
	}
	var heads strings.Builder
	for _, hname := range append([]string{"No.", "Clause"}, columnNames(x.columns)...) {
		heads.WriteString(cell(headerCell, "{HEADER}", hname, ""))
	}
	headRowXML := strings.Replace(headerRow, headerCell, heads.String(), 1)

	var sheets strings.Builder
	for _, sh := range x.sheets {
		var rows strings.Builder
		for _, row := range sh.rows {
			var cells strings.Builder
			cells.WriteString(cell(bodyCell, "{CELL}", row.number, ""))
			cells.WriteString(cell(bodyCell, "{CELL}", row.text, ""))
			for _, c := range row.cells {
				cells.WriteString(cell(bodyCell, "{CELL}", c.shown, c.colour))
			}
			rows.WriteString(strings.Replace(bodyRow, bodyCell, cells.String(), 1))
		}
		b := block
		if render.IsRTL(sh.name) {
			b = strings.Replace(b, sheetHeading, render.MarkRTL(sheetHeading), 1)
		}
		b = strings.Replace(b, "{SHEET_NAME}", render.XMLText(sh.name), 1)
		b = strings.Replace(b, grid, gridXML.String(), 1)
		b = strings.Replace(b, bodyRow, rows.String(), 1)
		b = strings.Replace(b, headerRow, headRowXML, 1)
		sheets.WriteString(b)
	}
	content = content[:blockStart] + sheets.String() + content[blockEnd:]
	if render.IsRTL(x.title()) {
		title, start, end, err := render.Element(content, "w:p", "{TITLE}")
		if err != nil {
			return nil, err
		}
		content = content[:start] + render.MarkRTL(title) + content[end:]
	}
	d.SetContent(content)

	for k, v := range map[string]string{
		"{TITLE}": x.title(), "{SUBTITLE}": x.subtitle(),
		"{GENERATED}": "Exported " + now.UTC().Format("2 Jan 2006 15:04 MST"),
	} {
		if err := d.Replace(k, strings.Join(strings.Fields(v), " "), -1); err != nil {
			return nil, err
		}
	}
	if err := d.ReplaceHeader("{ORGANISATION}", strings.Join(strings.Fields(" "+x.org.Name), " ")); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := d.Write(&buf); err != nil {
		return nil, err
	}
	return render.WithLogo(buf.Bytes(), blobData(x.logo), render.IsRTL(x.org.Name))
}

func columnNames(cols []docengine.Column) []string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = c.Name
	}
	return out
}

func (s *Server) exportXLSX(rq *request) error {
	h, err := rq.pathHash("hash")
	if err != nil {
		return err
	}
	var x *exportData
	err = s.store.ReadTx(rq.ctx, func(q *db.Queries) (err error) {
		x, err = loadExport(rq, q, h)
		return err
	})
	if err != nil {
		return err
	}
	f, err := renderDocumentXLSX(x)
	if err != nil {
		return err
	}
	defer f.Close()
	rq.w.Header().Set("Content-Type", xlsxType)
	rq.w.Header().Set("Content-Disposition", contentDisposition(x.fileName("xlsx")))
	rq.w.WriteHeader(http.StatusOK)
	_, err = f.WriteTo(rq.w)
	return err
}

// xlsxNumFmts are the data formats Excel can show itself (custom number
// formats); Time and Unixtime cells are written as their formatted text.
var xlsxNumFmts = map[int64]string{1: "0.0000", 2: "0.0000E+00", 3: "##0.0000E+0"}

// renderDocumentXLSX writes one worksheet per sheet: a heading row (No.,
// Clause, the columns) and a row per clause. Every text goes in as a
// string cell (never a formula, whatever it starts with); numbers, booleans
// and dates as typed cells with the column's number format; the logo and
// the title in the printed page header.
func renderDocumentXLSX(x *exportData) (*excelize.File, error) {
	f := excelize.NewFile()
	ok := false
	defer func() {
		if !ok {
			f.Close()
		}
	}()
	if err := f.SetDocProps(&excelize.DocProperties{Title: x.title(), Subject: x.subtitle(), Creator: x.org.Name}); err != nil {
		return nil, err
	}
	bold, err := f.NewStyle(&excelize.Style{Font: &excelize.Font{Bold: true}, Alignment: &excelize.Alignment{Vertical: "top", WrapText: true}, Fill: excelize.Fill{Type: "pattern", Pattern: 1, Color: []string{"E7E6E6"}}})
	if err != nil {
		return nil, err
	}
	wrap, err := f.NewStyle(&excelize.Style{Alignment: &excelize.Alignment{WrapText: true, Vertical: "top"}})
	if err != nil {
		return nil, err
	}
	styles := map[string]int{}
	// styleFor is the style of a cell: the column's number format (or a
	// date format) and the background colour.
	styleFor := func(numFmt, colour string) (int, error) {
		key := numFmt + "|" + colour
		if id, ok := styles[key]; ok {
			return id, nil
		}
		st := &excelize.Style{Alignment: &excelize.Alignment{Vertical: "top", WrapText: true}}
		if numFmt != "" {
			st.CustomNumFmt = &numFmt
		}
		if colour != "" {
			st.Fill = excelize.Fill{Type: "pattern", Pattern: 1, Color: []string{strings.TrimPrefix(colour, "#")}}
		}
		id, err := f.NewStyle(st)
		if err != nil {
			return 0, err
		}
		styles[key] = id
		return id, nil
	}
	used := map[string]bool{}
	heads := append([]string{"No.", "Clause"}, columnNames(x.columns)...)
	for i, sh := range x.sheets {
		name := render.XLSXSheetName(sh.name, used)
		if i == 0 {
			if err := f.SetSheetName("Sheet1", name); err != nil {
				return nil, err
			}
		} else if _, err := f.NewSheet(name); err != nil {
			return nil, err
		}
		header := "&L&G&C&\"-,Bold\"" + render.XLSXHeaderText(x.title()) + "&R" + render.XLSXHeaderText(sh.name)
		if x.logo == nil {
			header = "&C&\"-,Bold\"" + render.XLSXHeaderText(x.title()) + "&R" + render.XLSXHeaderText(sh.name)
		}
		if err := f.SetHeaderFooter(name, &excelize.HeaderFooterOptions{OddHeader: header, OddFooter: "&L" + render.XLSXHeaderText(x.subtitle()) + "&RPage &P of &N"}); err != nil {
			return nil, err
		}
		if x.logo != nil {
			if err := render.AddXLSXLogo(f, name, blobData(x.logo)); err != nil {
				return nil, err
			}
		}
		// widths fitted to what the cells show (the clause text wraps at 60)
		shown := make([][]any, len(sh.rows))
		for r, cl := range sh.rows {
			shown[r] = make([]any, 0, len(heads))
			shown[r] = append(shown[r], cl.number, cl.text)
			for _, c := range cl.cells {
				shown[r] = append(shown[r], c.shown)
			}
		}
		widths := render.FitWidths(heads, shown, nil)
		sw, err := render.StartXLSXSheet(f, name, widths, len(sh.rows))
		if err != nil {
			return nil, err
		}
		row := make([]any, len(heads))
		for j, hname := range heads {
			row[j] = excelize.Cell{StyleID: bold, Value: hname}
		}
		if err := sw.SetRow("A1", row, excelize.RowOpts{Height: render.RowHeight(row, widths, nil)}); err != nil {
			return nil, err
		}
		for r, cl := range sh.rows {
			row := make([]any, 0, len(heads))
			row = append(row, excelize.Cell{StyleID: wrap, Value: cl.number}, excelize.Cell{StyleID: wrap, Value: cl.text})
			for j, c := range cl.cells {
				var v any = c.shown
				numFmt := ""
				switch {
				case c.number != nil:
					v, numFmt = *c.number, xlsxNumFmts[x.columns[j].DataFormat]
				case c.boolean != nil:
					v = *c.boolean
				case c.date != nil:
					v, numFmt = *c.date, "yyyy-mm-dd"
				}
				id, err := styleFor(numFmt, c.colour)
				if err != nil {
					return nil, err
				}
				row = append(row, excelize.Cell{StyleID: id, Value: v})
			}
			cellName, _ := excelize.CoordinatesToCellName(1, r+2)
			if err := sw.SetRow(cellName, row, excelize.RowOpts{Height: render.RowHeight(shown[r], widths, nil)}); err != nil {
				return nil, err
			}
		}
		if err := sw.Flush(); err != nil {
			return nil, err
		}
	}
	ok = true
	return f, nil
}

// The numbering of a revision: PATCH /documents/{id}/revisions/{hash}.

type revisionMetaBody struct {
	ClausePrefixFormat *string    `json:"clause_prefix_format"`
	ClausePrefixID     Opt[db.ID] `json:"clause_prefix_id"`
	ClauseDigits       Opt[int64] `json:"clause_digits"`
}

// revisionReadOnly: every field of the revision as GET shows it except the
// numbering this PATCH changes (the label, message, title and templates
// change through their own endpoints). Echoed unchanged they pass.
var revisionReadOnly = []string{"id", "hash", "document_id", "user", "created_by", "created_at", "parents", "message", "signed",
	"totp_token", "revision", "title", "template_name", "template_hash", "template_name_xlsx", "template_hash_xlsx", "tree"}

// revisionPatch changes the clause numbering of the content (a change
// through the change flow: a new revision on the branch).
func (s *Server) revisionPatch(rq *request) error {
	var b revisionMetaBody
	ro, err := rq.decodePatch(&b, revisionReadOnly...)
	if err != nil {
		return err
	}
	base, err := rq.pathHash("hash")
	if err != nil {
		return err
	}
	p := problems{}
	if b.ClausePrefixFormat != nil {
		*b.ClausePrefixFormat = strings.TrimSpace(*b.ClausePrefixFormat)
		p.length("clause_prefix_format", *b.ClausePrefixFormat, 0, maxPrefixFormat)
		if *b.ClausePrefixFormat != "" && !strings.Contains(*b.ClausePrefixFormat, numberToken) {
			p.add("clause_prefix_format", "must contain "+numberToken)
		}
	}
	if b.ClauseDigits.Set && !b.ClauseDigits.Null && (b.ClauseDigits.Value < 0 || b.ClauseDigits.Value > maxClauseDigits) {
		p.add("clause_digits", fmt.Sprintf("must be from 0 to %d", maxClauseDigits))
	}
	if err := p.err(); err != nil {
		return err
	}
	return s.answerChange(rq, func(q *db.Queries, d db.Document, doc *docengine.Doc) error {
		rev, err := revisionIn(rq.ctx, q, d.ID, base)
		if err != nil {
			return err
		}
		// Compared with the revision as GET shows it (its label; its tree
		// only when one was sent back: building it reads every clause).
		_, withTree := ro["tree"]
		if err := ro.checkLoaded(func() (any, error) { return revisionShown(rq.ctx, q, rev, doc, withTree) }); err != nil {
			return err
		}
		m := &doc.R.Meta
		setIf(&m.ClausePrefixFormat, b.ClausePrefixFormat)
		if b.ClauseDigits.Set {
			m.ClauseDigits = b.ClauseDigits.Value // null: 0, no padding
		}
		if b.ClausePrefixID.Set {
			m.ClausePrefixID = 0
			if !b.ClausePrefixID.Null {
				id := int64(b.ClausePrefixID.Value)
				if _, err := q.PrefixGetInOrg(rq.ctx, db.PrefixGetInOrgParams{ID: id, OrganisationID: d.OrganisationID}); db.IsNotFound(err) {
					return fieldError("clause_prefix_id", "names no prefix of this organisation")
				} else if err != nil {
					return err
				}
				m.ClausePrefixID = id
			}
		}
		return nil
	})
}
