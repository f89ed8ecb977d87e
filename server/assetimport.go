package server

import (
	"archive/zip"
	"bytes"
	"context"
	"database/sql"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/xuri/excelize/v2"

	"workspace/db"
	"workspace/server/render"
)

// Asset import and export (operations-data.md "Assets"; docs/assets.md):
// CSV or XLSX, one asset a row, columns by header name; the import upserts
// by number, is all or nothing, and a dry run reports row by row.

const (
	maxImportBytes = 16 << 20
	maxImportRows  = 50_000
	xlsxType       = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
)

// Built-in columns; any other header names an asset field.
var assetColumns = []string{"number", "name", "description", "type", "status", "fleet", "location", "sub_location", "active"}

// ---- Export

// exportData is everything an export writes: the header and the rows
// (typed: active a boolean, number fields numbers, the rest text).
func (s *Server) assetExportData(rq *request) (render.Table, error) {
	var t render.Table
	orgID, err := rq.pathID("id")
	if err != nil {
		return t, err
	}
	err = s.store.ReadTx(rq.ctx, func(q *db.Queries) error {
		if _, err := orgAccess(rq, q, orgID, http.StatusBadRequest, 0); err != nil {
			return err
		}
		cat, err := loadCatalogue(rq.ctx, q, orgID)
		if err != nil {
			return err
		}
		assets, err := q.AssetsOfOrganisation(rq.ctx, orgID)
		if err != nil {
			return err
		}
		ids := make([]int64, len(assets))
		for i, a := range assets {
			ids[i] = a.ID
		}
		values, err := q.AssetFieldValuesOf(rq.ctx, idsJSON(ids))
		if err != nil {
			return err
		}
		byAsset := map[int64]map[int64]db.AssetFieldValue{}
		for _, v := range values {
			if byAsset[v.GroupID] == nil {
				byAsset[v.GroupID] = map[int64]db.AssetFieldValue{}
			}
			byAsset[v.GroupID][v.FieldID] = v
		}
		t.Header = append(append([]string{}, assetColumns...), cat.fieldNames...)
		for _, a := range assets {
			row := []any{derefText(a.FormattedNumber), a.Name, a.Description, cat.typeName[a.TypeID], cat.name(cat.statusName, a.StatusID),
				cat.name(cat.fleetName, a.FleetID), cat.name(cat.locationName, a.LocationID), cat.name(cat.subName, a.SubLocationID),
				a.Active}
			for _, fname := range cat.fieldNames {
				f := cat.fieldByName[strings.ToLower(fname)]
				v, ok := byAsset[a.ID][f.ID]
				if !ok {
					row = append(row, nil)
					continue
				}
				var n float64
				if f.Type != fieldEnum && json.Unmarshal([]byte(v.Value), &n) == nil {
					row = append(row, n)
					continue
				}
				row = append(row, cat.showValue(f, v.Value))
			}
			t.Rows = append(t.Rows, row)
		}
		return nil
	})
	return t, err
}

func derefText(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func (s *Server) assetExportCSV(rq *request) error {
	t, err := s.assetExportData(rq)
	if err != nil {
		return err
	}
	h := rq.w.Header()
	h.Set("Content-Type", "text/csv; charset=utf-8")
	h.Set("Content-Disposition", contentDisposition("assets.csv"))
	rq.w.WriteHeader(http.StatusOK)
	return render.WriteCSV(rq.w, t)
}

func (s *Server) assetExportXLSX(rq *request) error {
	t, err := s.assetExportData(rq)
	if err != nil {
		return err
	}
	f, err := render.TableXLSX(t, "Assets")
	if err != nil {
		return err
	}
	defer f.Close()
	h := rq.w.Header()
	h.Set("Content-Type", xlsxType)
	h.Set("Content-Disposition", contentDisposition("assets.xlsx"))
	rq.w.WriteHeader(http.StatusOK)
	_, err = f.WriteTo(rq.w)
	return err
}

// ---- The assetCatalogue by name

// assetCatalogue is an organisation's statuses, types, fleets, locations, sub
// locations and fields by id and by (lower-cased) name, for import and
// export.
type assetCatalogue struct {
	typeName, statusName, fleetName, locationName, subName map[int64]string
	types                                                  map[string]db.AssetType
	statuses, fleets, locations                            map[string]int64
	subs                                                   map[string]db.SubLocation
	fieldNames                                             []string
	fieldByName                                            map[string]db.AssetField
	enums                                                  map[int64][]db.AssetFieldEnumValue
	typeFields                                             map[int64]map[int64]bool
}

func (c *assetCatalogue) name(m map[int64]string, id *int64) string {
	if id == nil {
		return ""
	}
	return m[*id]
}

func loadCatalogue(ctx context.Context, q *db.Queries, orgID int64) (*assetCatalogue, error) {
	c := &assetCatalogue{typeName: map[int64]string{}, statusName: map[int64]string{}, fleetName: map[int64]string{}, locationName: map[int64]string{},
		subName: map[int64]string{}, types: map[string]db.AssetType{}, statuses: map[string]int64{}, fleets: map[string]int64{},
		locations: map[string]int64{}, subs: map[string]db.SubLocation{}, fieldByName: map[string]db.AssetField{}, typeFields: map[int64]map[int64]bool{}}
	key := func(s string) string { return strings.ToLower(strings.TrimSpace(s)) }
	types, err := q.AssetTypesOfOrganisation(ctx, orgID)
	if err != nil {
		return nil, err
	}
	typeIDs := []int64{}
	for _, t := range types {
		c.typeName[t.ID] = t.Name
		if t.Ephemerality == ephemeralSingle {
			c.types[key(t.Name)] = t
			typeIDs = append(typeIDs, t.ID)
		}
	}
	tfs, err := q.AssetTypeFieldsFor(ctx, idsJSON(typeIDs))
	if err != nil {
		return nil, err
	}
	fieldIDs := []int64{}
	for _, tf := range tfs {
		if c.typeFields[tf.TypeID] == nil {
			c.typeFields[tf.TypeID] = map[int64]bool{}
		}
		c.typeFields[tf.TypeID][tf.AssetField.ID] = true
		if _, ok := c.fieldByName[key(tf.AssetField.Name)]; !ok {
			c.fieldByName[key(tf.AssetField.Name)] = tf.AssetField
			c.fieldNames = append(c.fieldNames, tf.AssetField.Name)
			fieldIDs = append(fieldIDs, tf.AssetField.ID)
		}
	}
	if c.enums, err = enumValuesOf(ctx, q, fieldIDs); err != nil {
		return nil, err
	}
	statuses, err := q.AssetStatusesOfOrganisation(ctx, orgID)
	if err != nil {
		return nil, err
	}
	for _, st := range statuses {
		c.statusName[st.ID], c.statuses[key(st.Name)] = st.Name, st.ID
	}
	fleets, err := q.FleetsOfOrganisation(ctx, orgID)
	if err != nil {
		return nil, err
	}
	for _, f := range fleets {
		c.fleetName[f.ID], c.fleets[key(f.Name)] = f.Name, f.ID
	}
	locs, err := q.LocationList(ctx, db.LocationListParams{OrganisationID: orgID, DeliveryFilter: -1})
	if err != nil {
		return nil, err
	}
	for _, l := range locs {
		c.locationName[l.ID], c.locations[key(l.Name)] = l.Name, l.ID
	}
	subs, err := q.SubLocationListForOrganisation(ctx, orgID)
	if err != nil {
		return nil, err
	}
	for _, sl := range subs {
		c.subName[sl.ID], c.subs[key(sl.Name)] = sl.Name, sl
	}
	return c, nil
}

// showValue renders a stored field value as a cell: enum values by their
// text, the rest as their JSON scalar.
func (c *assetCatalogue) showValue(f db.AssetField, stored string) string {
	var v any
	if json.Unmarshal([]byte(stored), &v) != nil {
		return stored
	}
	if f.Type == fieldEnum {
		for _, e := range c.enums[f.ID] {
			if enumStored(e.ID) == stored {
				return e.Value
			}
		}
	}
	switch x := v.(type) {
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return fmt.Sprint(v)
}

// ---- Import

type importRowReport struct {
	Row    int               `json:"row"`
	Number string            `json:"number"`
	Action string            `json:"action"` // create, update, or none when the row is invalid
	Errors map[string]string `json:"errors,omitempty"`
}

type importReport struct {
	DryRun  bool              `json:"dry_run"`
	Applied bool              `json:"applied"`
	Created int               `json:"created"`
	Updated int               `json:"updated"`
	Invalid int               `json:"invalid"`
	Rows    []importRowReport `json:"rows"`
}

// errImportRollback rolls back a dry run or an import with invalid rows:
// the report is the answer.
var errImportRollback = errors.New("import rolled back")

// xlsxLimits bound an uploaded workbook (render/zip.go): worksheets are
// streamed from temporary files row by row, so they may be larger than the
// parts excelize holds in memory (shared strings, styles, the workbook);
// the shared strings are parsed whole, so they are bounded tighter. The
// figures hold a 50,000-row sheet of a few dozen columns; larger data goes
// as CSV (docs/assets.md).
var xlsxLimits = render.ZipLimits{
	Entries:    1000,
	EntryBytes: 4 << 20,
	TotalBytes: 64 << 20,
	Named:      map[string]int64{"xl/worksheets/": 48 << 20, "xl/sharedstrings.xml": 8 << 20},
}

// xlsxOptions: the worksheets and shared strings are always inflated to
// temporary files and read from there (UnzipXMLSizeLimit 1): a sheet is
// then streamed, and the shared strings are indexed by offset (tens of
// bytes a string) instead of parsed into memory (about a kilobyte a
// string). The total is bounded again by excelize, as openZip did.
var xlsxOptions = excelize.Options{UnzipSizeLimit: xlsxLimits.TotalBytes, UnzipXMLSizeLimit: 1}

// readSheet reads the body as XLSX (by content type or its ZIP signature)
// or CSV; the first row is the header. It stops reading at the row limit.
//
// A raw body is bounded like any JSON body (1 MiB by default); a larger file
// comes as multipart/form-data in the part "file", bounded like uploads.
func readSheet(r *http.Request) ([][]string, error) {
	var src io.Reader = r.Body
	contentType := r.Header.Get("Content-Type")
	if strings.HasPrefix(contentType, "multipart/") {
		mr, err := r.MultipartReader()
		if err != nil {
			return nil, badRequest("The multipart body is malformed.")
		}
		for {
			part, err := mr.NextPart()
			if err == io.EOF {
				return nil, fieldError("file", "is required")
			}
			if err != nil {
				return nil, multipartError(err)
			}
			if part.FormName() == "file" {
				src, contentType = part, part.Header.Get("Content-Type")
				break
			}
		}
	}
	// One buffer sized from the declared length: io.ReadAll's growth
	// would allocate the upload twice over.
	var buf bytes.Buffer
	if r.ContentLength > 0 {
		buf.Grow(int(min(r.ContentLength, maxImportBytes) + bytes.MinRead))
	}
	if _, err := buf.ReadFrom(io.LimitReader(src, maxImportBytes+1)); err != nil {
		return nil, badRequest("The body could not be read.")
	}
	data := buf.Bytes()
	if len(data) > maxImportBytes {
		return nil, errorf(http.StatusRequestEntityTooLarge, "The file is larger than 16 MiB.")
	}
	var rows [][]string
	if strings.HasPrefix(contentType, xlsxType) || bytes.HasPrefix(data, []byte("PK\x03\x04")) {
		var err error
		if rows, err = readXLSX(data); err != nil {
			return nil, err
		}
	} else {
		cr := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(data, []byte(render.CSVBOM))))
		cr.FieldsPerRecord = -1
		for {
			rec, err := cr.Read()
			if err == io.EOF {
				break
			}
			if err != nil {
				return nil, badRequest("The body is not valid CSV: %v", err)
			}
			if len(rows) > maxImportRows {
				return nil, tooManyRows()
			}
			rows = append(rows, rec)
		}
		for _, r := range rows {
			for i := range r {
				r[i] = render.UnsafeCell(r[i]) // only CSV is escaped (render/sheets.go)
			}
		}
	}
	if len(rows) == 0 {
		return nil, badRequest("The file has no header row.")
	}
	return rows, nil
}

func tooManyRows() *Error {
	return badRequest("The file has more than 50,000 rows. Split it into files of at most 50,000 rows and import each.")
}

// readXLSX reads the first sheet of a workbook, checked by openZip first
// and then streamed row by row (excelize's Rows), stopping at the limit.
func readXLSX(data []byte) ([][]string, error) {
	zr, err := render.OpenZip(data, xlsxLimits)
	if err == nil {
		err = render.VerifyZip(zr, xlsxLimits)
	}
	if err == nil {
		err = countSharedStrings(zr)
	}
	if err != nil {
		var big *render.ZipTooLargeError
		if errors.As(err, &big) {
			return nil, badRequest("%s Split the rows over smaller files, or import them as CSV.", big.Msg)
		}
		return nil, badRequest("The body is not a readable XLSX workbook.")
	}
	// excelize opens the archive again; its declared sizes are now known
	// to be true and bounded.
	f, err := excelize.OpenReader(bytes.NewReader(data), xlsxOptions)
	if err != nil {
		if errors.Is(err, excelize.ErrOptionsUnzipSizeLimit) || strings.Contains(err.Error(), "unzip size exceeds") {
			return nil, badRequest("The file unpacks to more than %s.", render.Mebibytes(xlsxLimits.TotalBytes))
		}
		return nil, badRequest("The body is not a readable XLSX workbook.")
	}
	defer f.Close()
	sheets := f.GetSheetList()
	if len(sheets) == 0 {
		return nil, badRequest("The workbook has no sheet.")
	}
	it, err := f.Rows(sheets[0])
	if err != nil {
		return nil, badRequest("The first sheet could not be read.")
	}
	defer it.Close()
	// Empty rows count only when data follows them, as with GetRows: a
	// sheet's formatting below its data is not rows. They are held as a
	// count, so that a million of them cost nothing.
	var rows [][]string
	empty := 0
	for it.Next() {
		cells, err := it.Columns()
		if err != nil {
			return nil, badRequest("The first sheet could not be read.")
		}
		if allEmpty(cells) {
			empty++
			continue
		}
		if len(rows)+empty > maxImportRows {
			return nil, tooManyRows()
		}
		for ; empty > 0; empty-- {
			rows = append(rows, nil)
		}
		rows = append(rows, cells)
	}
	if it.Error() != nil {
		return nil, badRequest("The first sheet could not be read.")
	}
	return rows, nil
}

// maxSharedStrings bounds the workbook's table of distinct texts: excelize
// decodes each once to index it (about a kilobyte of garbage and a few
// microseconds a string), so its size in bytes alone (a one-letter string
// is 17) does not bound the cost. 50,000 rows with four columns of
// distinct text fit; repeated texts (types, statuses) are stored once.
const maxSharedStrings = 200_000

// countSharedStrings counts the table's entries (each starts "<si")
// while inflating it, before excelize parses it.
func countSharedStrings(zr *zip.Reader) error {
	for _, f := range zr.File {
		if !strings.EqualFold(strings.ReplaceAll(f.Name, "\\", "/"), "xl/sharedStrings.xml") {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			return render.ErrNotZip
		}
		defer rc.Close()
		n, err := countTag(rc, []byte("<si"), maxSharedStrings)
		if err != nil {
			return render.ErrNotZip
		}
		if n > maxSharedStrings {
			return &render.ZipTooLargeError{Msg: "The file has more than 200,000 different texts in its cells."}
		}
	}
	return nil
}

// countTag counts the occurrences of tag in r, stopping past limit.
func countTag(r io.Reader, tag []byte, limit int) (int, error) {
	buf := make([]byte, 64<<10)
	carry := 0 // bytes of the previous chunk kept so that a tag across chunks counts
	n := 0
	for n <= limit {
		m, err := r.Read(buf[carry:])
		end := carry + m
		n += bytes.Count(buf[:end], tag)
		// Keep the last len(tag)-1 bytes: too few to hold a whole tag,
		// so nothing counted is counted twice.
		keep := min(len(tag)-1, end)
		copy(buf, buf[end-keep:end])
		carry = keep
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

func allEmpty(cells []string) bool {
	for _, c := range cells {
		if c != "" {
			return false
		}
	}
	return true
}

// assetImport: POST /organisations/{id}/assets/import[?dry_run=true], the
// body a CSV or XLSX file. MANAGE_FLEETS. Rows whose number names an asset
// update it; others create one (numbered from the type's prefix when the
// number is empty). Any invalid row: nothing is written and the answer is
// 400 with the report; a dry run writes nothing and answers 200.
func (s *Server) assetImport(rq *request) error {
	orgID, err := rq.pathID("id")
	if err != nil {
		return err
	}
	dry, err := rq.queryBool("dry_run", false)
	if err != nil {
		return err
	}
	rows, err := readSheet(rq.r)
	if err != nil {
		return err
	}
	header := make([]string, len(rows[0]))
	seen := map[string]bool{}
	for i, h := range rows[0] {
		header[i] = strings.ToLower(strings.TrimSpace(h))
		if header[i] == "" || seen[header[i]] {
			return fieldError("header", fmt.Sprintf("column %d is empty or repeated", i+1))
		}
		seen[header[i]] = true
	}
	report := importReport{DryRun: dry, Rows: []importRowReport{}}
	err = s.store.InTxSQL(rq.ctx, func(tx *sql.Tx, q *db.Queries) error {
		if _, err := orgAccess(rq, q, orgID, http.StatusBadRequest, ManageFleets); err != nil {
			return err
		}
		cat, err := loadCatalogue(rq.ctx, q, orgID)
		if err != nil {
			return err
		}
		for _, h := range header {
			if _, ok := cat.fieldByName[h]; !ok && !isAssetColumn(h) {
				return fieldError("header", fmt.Sprintf("%q is neither an asset column nor a field of an asset type", h))
			}
		}
		for i, cells := range rows[1:] {
			rr := s.importRow(rq.ctx, tx, q, rq.user.ID, orgID, cat, header, cells)
			rr.Row = i + 2
			switch {
			case rr.Errors != nil:
				report.Invalid++
			case rr.Action == "create":
				report.Created++
			default:
				report.Updated++
			}
			report.Rows = append(report.Rows, rr)
		}
		if dry || report.Invalid > 0 {
			return errImportRollback
		}
		noteAuditCount(rq.ctx, report.Created+report.Updated) // "imported 5 assets"
		return nil
	})
	switch {
	case errors.Is(err, errImportRollback) && report.Invalid > 0:
		return rq.json(http.StatusBadRequest, map[string]any{"code": http.StatusBadRequest,
			"message": fmt.Sprintf("%d rows are invalid: nothing was imported.", report.Invalid), "report": report})
	case errors.Is(err, errImportRollback):
		return rq.json(http.StatusOK, report)
	case err != nil:
		return err
	}
	report.Applied = true
	return rq.json(http.StatusOK, report)
}

func isAssetColumn(h string) bool {
	for _, c := range assetColumns {
		if c == h {
			return true
		}
	}
	return false
}

// importRow applies one row inside the import's transaction, each row in
// its own savepoint so that a refused row leaves nothing behind and the
// next rows still see a consistent state.
func (s *Server) importRow(ctx context.Context, tx *sql.Tx, q *db.Queries, userID, orgID int64, cat *assetCatalogue, header, cells []string) importRowReport {
	rr := importRowReport{}
	cell := map[string]string{}
	for i, h := range header {
		if i < len(cells) {
			cell[h] = strings.TrimSpace(cells[i])
		}
	}
	rr.Number = cell["number"]
	p := problems{}
	b := assetBody{}
	var existing *db.AssetGroup
	if rr.Number != "" {
		g, err := q.AssetByNumber(ctx, db.AssetByNumberParams{OrganisationID: orgID, FormattedNumber: &rr.Number})
		if err == nil {
			existing = &g
		} else if !db.IsNotFound(err) {
			p.add("number", "could not be read")
		}
	}
	typ, hasType := cat.types[strings.ToLower(cell["type"])]
	switch {
	case cell["type"] != "" && !hasType:
		p.add("type", "names no asset type of this organisation")
	case cell["type"] == "" && existing == nil:
		p.add("type", "is required for a new asset")
	case hasType:
		b.TypeID = refID{Set: true, ID: typ.ID}
	}
	typeID := typ.ID
	if existing != nil && !hasType {
		typeID = existing.TypeID
	}
	if v, ok := cell["name"]; ok && v != "" {
		b.Name = &v
	}
	if v, ok := cell["description"]; ok {
		b.Description = &v
	}
	ref := func(col string, m map[string]int64, dst *refID) {
		v, ok := cell[col]
		if !ok {
			return
		}
		if v == "" {
			*dst = refID{Set: true}
			return
		}
		id, found := m[strings.ToLower(v)]
		if !found {
			p.add(col, "names none of this organisation")
			return
		}
		*dst = refID{Set: true, ID: id}
	}
	ref("status", cat.statuses, &b.StatusID)
	ref("fleet", cat.fleets, &b.FleetID)
	ref("location", cat.locations, &b.LocationID)
	if v, ok := cell["sub_location"]; ok {
		if v == "" {
			b.SubLocationID = refID{Set: true}
		} else if sl, found := cat.subs[strings.ToLower(v)]; found {
			b.SubLocationID = refID{Set: true, ID: sl.ID}
		} else {
			p.add("sub_location", "names none of this organisation")
		}
	}
	if v, ok := cell["active"]; ok && v != "" {
		a, ok := cellBool(v)
		if !ok {
			p.add("active", "must be yes or no (also true/false, 1/0)")
		}
		b.Active = &a
	}
	b.Fields, b.fieldNames = map[string]json.RawMessage{}, map[string]string{}
	for h, v := range cell {
		f, ok := cat.fieldByName[h]
		if !ok {
			continue
		}
		if !cat.typeFields[typeID][f.ID] {
			if v != "" {
				p.add(h, "is not a field of this asset's type")
			}
			continue
		}
		b.fieldNames[db.ID(f.ID).String()] = h
		if v == "" {
			b.Fields[db.ID(f.ID).String()] = json.RawMessage("null")
			continue
		}
		b.Fields[db.ID(f.ID).String()] = assetCellJSON(f, v)
	}
	if existing == nil && rr.Number != "" && hasType {
		n, ok := numberFromCell(q, ctx, orgID, typ, rr.Number)
		if !ok {
			p.add("number", "is neither an asset's number nor a number of the type's prefix format")
		}
		b.Number = Opt[int64]{Set: true, Value: n}
	}
	if err := b.validate(); err != nil {
		mergeProblems(p, err)
	}
	if len(p) > 0 {
		rr.Errors = p
		return rr
	}
	err := inSavepoint(ctx, tx, func() error {
		if existing == nil {
			g, err := s.createAsset(ctx, q, userID, orgID, &b)
			if err == nil {
				rr.Number = derefText(g.FormattedNumber)
			}
			return err
		}
		_, err := s.patchGroup(ctx, q, userID, *existing, &b)
		return err
	})
	if err != nil {
		var e *Error
		if !errors.As(err, &e) {
			rr.Errors = map[string]string{"row": "could not be written"}
			return rr
		}
		rr.Errors = map[string]string{}
		for k, v := range e.Fields {
			rr.Errors[k] = v
		}
		if len(rr.Errors) == 0 {
			rr.Errors["row"] = e.Message
		}
		return rr
	}
	rr.Action = "update"
	if existing == nil {
		rr.Action = "create"
	}
	return rr
}

// inSavepoint runs fn in a savepoint of tx, rolled back when fn fails.
func inSavepoint(ctx context.Context, tx *sql.Tx, fn func() error) error {
	if _, err := tx.ExecContext(ctx, "SAVEPOINT import_row"); err != nil {
		return err
	}
	if err := fn(); err != nil {
		if _, rerr := tx.ExecContext(ctx, "ROLLBACK TO import_row"); rerr != nil {
			return rerr
		}
		_, _ = tx.ExecContext(ctx, "RELEASE import_row")
		return err
	}
	_, err := tx.ExecContext(ctx, "RELEASE import_row")
	return err
}

// assetCellJSON turns a cell into the JSON value its field's type expects.
func assetCellJSON(f db.AssetField, v string) json.RawMessage {
	switch f.Type {
	case fieldNumber:
		if _, err := strconv.ParseFloat(v, 64); err == nil {
			return json.RawMessage(v)
		}
	case fieldBoolean:
		if b, ok := cellBool(v); ok {
			return json.RawMessage(strconv.FormatBool(b))
		}
	}
	out, _ := json.Marshal(v)
	return out
}

// cellBool reads a yes/no cell as people write them in a spreadsheet: yes,
// no, y, n, true, false, t, f, 1, 0, in any case (issue 29: "yes" was refused).
func cellBool(v string) (bool, bool) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "yes", "y", "true", "t", "1":
		return true, true
	case "no", "n", "false", "f", "0":
		return false, true
	}
	return false, false
}

// numberFromCell reads a new asset's number from a cell: plain digits, or
// the type's prefix format with digits in place of {number}.
func numberFromCell(q *db.Queries, ctx context.Context, orgID int64, t db.AssetType, cell string) (int64, bool) {
	if n, err := strconv.ParseInt(cell, 10, 64); err == nil && n > 0 {
		return n, true
	}
	if t.PrefixID == nil {
		return 0, false
	}
	p, err := q.PrefixGetInOrg(ctx, db.PrefixGetInOrgParams{ID: *t.PrefixID, OrganisationID: orgID})
	if err != nil {
		return 0, false
	}
	parts := strings.SplitN(p.NumberFormat, numberToken, 2)
	if len(parts) != 2 {
		return 0, false
	}
	re := regexp.MustCompile("^" + regexp.QuoteMeta(parts[0]) + `(\d{1,18})` + regexp.QuoteMeta(parts[1]) + "$")
	m := re.FindStringSubmatch(cell)
	if m == nil {
		return 0, false
	}
	n, err := strconv.ParseInt(m[1], 10, 64)
	return n, err == nil && n > 0
}

func mergeProblems(p problems, err error) {
	var e *Error
	if errors.As(err, &e) {
		for k, v := range e.Fields {
			p.add(k, v)
		}
	}
}
