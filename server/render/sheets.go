package render

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/xuri/excelize/v2"
)

// Spreadsheet exports (issue 32): one table shape written as CSV or XLSX.
// A table's values are typed: string, float64, int64, bool, time.Time
// (a local wall-clock time: XLSX has no time zones) or nil (an empty cell).

// Table is one sheet of typed values under a header row.
type Table struct {
	Header []string
	Rows   [][]any
	// DateOnly columns show their times as dates (yyyy-mm-dd).
	DateOnly map[int]bool
}

const (
	CSVBOM         = "\ufeff"
	xlsxDateFmt    = "yyyy-mm-dd"
	xlsxDateTime   = "yyyy-mm-dd hh:mm"
	XLSXMaxWidth   = 60 // characters: longer text wraps
	XLSXMinWidth   = 8
	XLSXLineHeight = 15.0 // points per line of the default 11 pt font
	xlsxMaxHeight  = 409  // Excel's row height limit
)

// SpreadsheetSafe keeps a CSV cell from being run as a formula: one
// starting with =, +, -, @, tab or CR gets a leading apostrophe (OWASP's
// advice). A cell starting with an apostrophe gets one more, so the escape
// is reversible: UnsafeCell drops exactly one leading apostrophe, and
// any text comes back as it was exported. XLSX does not need it: a text
// cell there never runs.
func SpreadsheetSafe(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r'", rune(s[0])) {
		return "'" + s
	}
	return s
}

// UnsafeCell undoes SpreadsheetSafe on an imported CSV cell.
func UnsafeCell(s string) string {
	if strings.HasPrefix(s, "'") {
		return s[1:]
	}
	return s
}

// csvText is a value as CSV text.
func csvText(v any, dateOnly bool) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return SpreadsheetSafe(x)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case int64:
		return strconv.FormatInt(x, 10)
	case bool:
		return strconv.FormatBool(x)
	case time.Time:
		if dateOnly {
			return x.Format("2006-01-02")
		}
		return x.Format("2006-01-02 15:04")
	}
	return SpreadsheetSafe(fmt.Sprint(v))
}

// WriteCSV writes UTF-8 with a byte-order mark and CRLF lines: what Excel
// (double-click) and LibreOffice open without asking for an encoding.
func WriteCSV(w io.Writer, t Table) error {
	if _, err := io.WriteString(w, CSVBOM); err != nil {
		return err
	}
	cw := csv.NewWriter(w)
	cw.UseCRLF = true
	head := make([]string, len(t.Header))
	for i, h := range t.Header {
		head[i] = SpreadsheetSafe(h)
	}
	if err := cw.Write(head); err != nil {
		return err
	}
	for _, r := range t.Rows {
		rec := make([]string, len(r))
		for i, v := range r {
			rec[i] = csvText(v, t.DateOnly[i])
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// textWidth is the widest line of a cell, in characters.
func textWidth(s string) int {
	w := 0
	for _, line := range strings.Split(s, "\n") {
		w = max(w, utf8.RuneCountInString(line))
	}
	return w
}

// shownText is how long a value reads in a cell.
func shownText(v any, dateOnly bool) string {
	switch x := v.(type) {
	case string:
		return x
	case excelize.Cell:
		return shownText(x.Value, dateOnly)
	case time.Time:
		if dateOnly {
			return "2006-01-02"
		}
		return "2006-01-02 15:04"
	case bool:
		return "FALSE"
	}
	return csvText(v, dateOnly)
}

// FitWidths fits each column to its widest line (header included),
// between XLSXMinWidth and XLSXMaxWidth characters.
func FitWidths(header []string, rows [][]any, dateOnly map[int]bool) []float64 {
	w := make([]float64, len(header))
	for i, h := range header {
		w[i] = float64(textWidth(h) + 2)
	}
	for _, r := range rows {
		for i, v := range r {
			if i < len(w) {
				w[i] = max(w[i], float64(textWidth(shownText(v, dateOnly[i]))+2))
			}
		}
	}
	for i := range w {
		w[i] = min(max(w[i], XLSXMinWidth), XLSXMaxWidth)
	}
	return w
}

// RowHeight is the height a row needs for its wrapped text (0: the
// default single line).
func RowHeight(row []any, widths []float64, dateOnly map[int]bool) float64 {
	lines := 1
	for i, v := range row {
		if i >= len(widths) {
			break
		}
		s, ok := v.(string)
		if c, isCell := v.(excelize.Cell); isCell {
			s, ok = c.Value.(string)
		}
		if !ok {
			continue
		}
		n := 0
		per := max(int(widths[i])-1, 1)
		for _, line := range strings.Split(s, "\n") {
			n += max(1, int(math.Ceil(float64(utf8.RuneCountInString(line))/float64(per))))
		}
		lines = max(lines, n)
	}
	if lines == 1 {
		return 0
	}
	return min(float64(lines)*XLSXLineHeight, xlsxMaxHeight)
}

// xlsxStyles are the styles every export shares.
type xlsxStyles struct {
	header, text, date, dateTime, number int
}

func newXLSXStyles(f *excelize.File) (xlsxStyles, error) {
	var s xlsxStyles
	var err error
	top := &excelize.Alignment{WrapText: true, Vertical: "top"}
	mk := func(st *excelize.Style) int {
		if err != nil {
			return 0
		}
		var id int
		id, err = f.NewStyle(st)
		return id
	}
	df, dtf := xlsxDateFmt, xlsxDateTime
	s.header = mk(&excelize.Style{Font: &excelize.Font{Bold: true}, Alignment: top,
		Fill: excelize.Fill{Type: "pattern", Pattern: 1, Color: []string{"E7E6E6"}}})
	s.text = mk(&excelize.Style{Alignment: top})
	s.date = mk(&excelize.Style{Alignment: top, CustomNumFmt: &df})
	s.dateTime = mk(&excelize.Style{Alignment: top, CustomNumFmt: &dtf})
	s.number = mk(&excelize.Style{Alignment: top})
	return s, err
}

// StartXLSXSheet sets the filter on the header row and the header as the
// print titles (repeated on every page), then opens the stream writer of
// the sheet with its column widths and the header row frozen. The stream
// writer keeps what was set on the sheet before it and writes over what is
// set after (an AutoFilter after Flush is lost), so page setup comes first.
// Every export prints landscape, fitted to the page width (a register's
// last column printed on a page of its own before).
func StartXLSXSheet(f *excelize.File, sheet string, widths []float64, rows int) (*excelize.StreamWriter, error) {
	last, err := excelize.CoordinatesToCellName(max(len(widths), 1), rows+1)
	if err != nil {
		return nil, err
	}
	if err := f.AutoFilter(sheet, "A1:"+last, nil); err != nil {
		return nil, err
	}
	// after AutoFilter: it replaces the sheet's properties (fit to page)
	if err := SetLandscapeFitWidth(f, sheet); err != nil {
		return nil, err
	}
	if err := f.SetDefinedName(&excelize.DefinedName{Name: "_xlnm.Print_Titles",
		RefersTo: "'" + strings.ReplaceAll(sheet, "'", "''") + "'!$1:$1", Scope: sheet}); err != nil {
		return nil, err
	}
	sw, err := f.NewStreamWriter(sheet)
	if err != nil {
		return nil, err
	}
	// Last column first: excelize puts each new <col> entry before the
	// ones already set, and Excel repairs a file whose entries descend.
	for i := len(widths) - 1; i >= 0; i-- {
		if err := sw.SetColWidth(i+1, i+1, widths[i]); err != nil {
			return nil, err
		}
	}
	err = sw.SetPanes(&excelize.Panes{Freeze: true, YSplit: 1, TopLeftCell: "A2", ActivePane: "bottomLeft",
		Selection: []excelize.Selection{{SQRef: "A2", ActiveCell: "A2", Pane: "bottomLeft"}}})
	return sw, err
}

// writeXLSXSheet writes a table as one worksheet: a bold frozen header
// with a filter, typed cells, fitted widths, wrapped text with row heights.
func writeXLSXSheet(f *excelize.File, sheet string, st xlsxStyles, t Table) error {
	widths := FitWidths(t.Header, t.Rows, t.DateOnly)
	sw, err := StartXLSXSheet(f, sheet, widths, len(t.Rows))
	if err != nil {
		return err
	}
	head := make([]any, len(t.Header))
	for i, h := range t.Header {
		head[i] = excelize.Cell{StyleID: st.header, Value: h}
	}
	if err := sw.SetRow("A1", head, excelize.RowOpts{Height: RowHeight(head, widths, nil)}); err != nil {
		return err
	}
	for r, row := range t.Rows {
		cells := make([]any, len(row))
		for i, v := range row {
			c := excelize.Cell{StyleID: st.text, Value: v}
			switch x := v.(type) {
			case time.Time:
				c.StyleID = st.dateTime
				if t.DateOnly[i] {
					c.StyleID = st.date
				}
				// the wall-clock time as shown, without a zone
				c.Value = time.Date(x.Year(), x.Month(), x.Day(), x.Hour(), x.Minute(), x.Second(), 0, time.UTC)
			case float64, int64, bool:
				c.StyleID = st.number
			}
			cells[i] = c
		}
		cell, _ := excelize.CoordinatesToCellName(1, r+2)
		if err := sw.SetRow(cell, cells, excelize.RowOpts{Height: RowHeight(row, widths, t.DateOnly)}); err != nil {
			return err
		}
	}
	return sw.Flush()
}

// TableXLSX is a workbook of one sheet holding t.
func TableXLSX(t Table, title string) (*excelize.File, error) {
	f := excelize.NewFile()
	if err := f.SetSheetName("Sheet1", title); err != nil {
		f.Close()
		return nil, err
	}
	st, err := newXLSXStyles(f)
	if err == nil {
		err = writeXLSXSheet(f, title, st, t)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// SetLandscapeFitWidth prints a sheet landscape on A4, all columns on the
// page width and as many pages down as it takes (the document's first page
// held only the No. column before).
func SetLandscapeFitWidth(f *excelize.File, sheet string) error {
	fit, landscape, a4, one, auto := true, "landscape", 9, 1, 0
	if err := f.SetSheetProps(sheet, &excelize.SheetPropsOptions{FitToPage: &fit}); err != nil {
		return err
	}
	return f.SetPageLayout(sheet, &excelize.PageLayoutOptions{Size: &a4, Orientation: &landscape, FitToWidth: &one, FitToHeight: &auto})
}
