package docengine

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
)

// Root is the content root of a revision; its hash is the revision hash.
// Labels, authors, times, messages and parents are outside it.
type Root struct {
	_       struct{} `cbor:",toarray"`
	Version uint
	Meta    Meta
	Sheets  []Sheet  // in order key order
	Columns []Column // in order key order
	Fields  []int64  // attached item field ids, ascending
	Clauses Hash     // clause tree: clauseKey -> clause object hash
	Index   Hash     // id index: clause id -> clauseKey
}

// Meta is the document-wide part of the content.
type Meta struct {
	_                  struct{} `cbor:",toarray"`
	Title              string
	ClausePrefixFormat string
	ClausePrefixID     int64
	ClauseDigits       int64
	TemplateName       string
	TemplateHash       string
	TemplateNameXLSX   string
	TemplateHashXLSX   string
}

// Sheet is a named group of clauses.
type Sheet struct {
	_     struct{} `cbor:",toarray"`
	ID    int64
	Order string
	Name  string
}

// Column is a column of the clause table.
type Column struct {
	_                     struct{} `cbor:",toarray"`
	ID                    int64
	Order                 string
	Name                  string
	Description           string
	Type                  string
	DataFormat            int64
	Formula               string
	ConditionalFormatting string
	FieldID               int64 // the item field of an enum column
}

// Clause is one row: its text (inline, or the hash of a text blob when
// large) and its cells keyed by column id.
type Clause struct {
	_        struct{} `cbor:",toarray"`
	Text     string
	TextHash []byte
	Cells    map[int64]string
}

// inlineText is the largest text kept inside the clause object.
const inlineText = 1024

// Errors of operations; the server maps them to 400 or 404.
var (
	ErrNoSheet      = errors.New("no such sheet")
	ErrNoColumn     = errors.New("no such column")
	ErrNoClause     = errors.New("no such clause")
	ErrLastSheet    = errors.New("the last sheet cannot be deleted")
	ErrSheetName    = errors.New("a sheet of that name exists")
	ErrColumnName   = errors.New("a column of that name exists")
	ErrBadPosition  = errors.New("the clause to place next to is in another sheet")
	ErrSelfPosition = errors.New("a clause cannot be placed next to itself")
)

// clauseKey is (sheet id, order key, clause id): order keys never contain
// a zero byte, so byte order is document order within a sheet.
func clauseKey(sheet int64, order string, id int64) []byte {
	b := make([]byte, 0, 17+len(order))
	b = u64(b, uint64(sheet))
	b = append(b, order...)
	b = append(b, 0)
	return u64(b, uint64(id))
}

// ClausePos is where a clause is.
type ClausePos struct {
	Sheet int64
	Order string
	ID    int64
}

func parseClauseKey(k []byte) (ClausePos, error) {
	if len(k) < 17 || k[len(k)-9] != 0 {
		return ClausePos{}, fmt.Errorf("docengine: bad clause key")
	}
	return ClausePos{
		Sheet: int64(binary.BigEndian.Uint64(k[:8])),
		Order: string(k[8 : len(k)-9]),
		ID:    int64(binary.BigEndian.Uint64(k[len(k)-8:])),
	}, nil
}

func (p ClausePos) key() []byte { return clauseKey(p.Sheet, p.Order, p.ID) }

func idKey(id int64) []byte { return u64(nil, uint64(id)) }

func sheetPrefix(sheet int64) []byte { return u64(nil, uint64(sheet)) }

// Root reads a content root.
func (s *Stage) Root(h Hash) (*Root, error) {
	b, err := s.get(h)
	if err != nil {
		return nil, err
	}
	r := &Root{}
	if err := decode(b, r); err != nil {
		return nil, err
	}
	if r.Version != FormatVersion {
		return nil, fmt.Errorf("docengine: unknown format version %d", r.Version)
	}
	return r, nil
}

// PutRoot stores a content root and returns the revision hash.
func (s *Stage) PutRoot(r *Root) (Hash, error) {
	r.Version = FormatVersion
	return s.put(r)
}

func (s *Stage) clause(h Hash) (*Clause, error) {
	if c, ok := s.clauses[h]; ok {
		return c, nil
	}
	b, err := s.get(h)
	if err != nil {
		return nil, err
	}
	c := &Clause{}
	if err := decode(b, c); err != nil {
		return nil, err
	}
	s.clauses[h] = c
	return c, nil
}

// ClauseText is a clause's full text.
func (s *Stage) ClauseText(c *Clause) (string, error) {
	if len(c.TextHash) == 0 {
		return c.Text, nil
	}
	b, err := s.get(Hash(c.TextHash))
	return string(b), err
}

func (s *Stage) putClause(text string, cells map[int64]string) (Hash, error) {
	c := &Clause{Cells: map[int64]string{}}
	for k, v := range cells {
		if v != "" {
			c.Cells[k] = v // an empty cell is an absent cell: one content, one hash
		}
	}
	if len(text) > inlineText {
		h := s.putBytes([]byte(text))
		c.TextHash = h[:]
	} else {
		c.Text = text
	}
	h, err := s.put(c)
	if err == nil {
		s.clauses[h] = c
	}
	return h, err
}

// Doc is a content root being read or changed in one stage.
type Doc struct {
	S *Stage
	R Root
}

// Open reads a revision for reading or changing.
func (s *Stage) Open(h Hash) (*Doc, error) {
	r, err := s.Root(h)
	if err != nil {
		return nil, err
	}
	d := &Doc{S: s, R: *r}
	d.R.Sheets = append([]Sheet(nil), r.Sheets...)
	d.R.Columns = append([]Column(nil), r.Columns...)
	d.R.Fields = append([]int64(nil), r.Fields...)
	return d, nil
}

// New is the content of a new document: one sheet, nothing else.
func (s *Stage) New(meta Meta, sheetID int64, sheetName string) *Doc {
	return &Doc{S: s, R: Root{Version: FormatVersion, Meta: meta, Sheets: []Sheet{{ID: sheetID, Order: "a0", Name: sheetName}}}}
}

// Save stores the root and returns its hash.
func (d *Doc) Save() (Hash, error) {
	return d.S.PutRoot(&d.R)
}

func (d *Doc) sheetIdx(id int64) int {
	for i, sh := range d.R.Sheets {
		if sh.ID == id {
			return i
		}
	}
	return -1
}

func (d *Doc) columnIdx(id int64) int {
	for i, c := range d.R.Columns {
		if c.ID == id {
			return i
		}
	}
	return -1
}

// Sheet returns a sheet by id.
func (d *Doc) Sheet(id int64) (Sheet, bool) {
	if i := d.sheetIdx(id); i >= 0 {
		return d.R.Sheets[i], true
	}
	return Sheet{}, false
}

// Column returns a column by id.
func (d *Doc) Column(id int64) (Column, bool) {
	if i := d.columnIdx(id); i >= 0 {
		return d.R.Columns[i], true
	}
	return Column{}, false
}

// orderAt is the order key for position pos (0-based) of a list of keys.
func orderAt(keys []string, pos int) (string, error) {
	if pos < 0 || pos > len(keys) {
		pos = len(keys)
	}
	a, b := "", ""
	if pos > 0 {
		a = keys[pos-1]
	}
	if pos < len(keys) {
		b = keys[pos]
	}
	return KeyBetween(a, b)
}

func sortSheets(sh []Sheet) {
	sort.Slice(sh, func(i, j int) bool {
		if sh[i].Order != sh[j].Order {
			return sh[i].Order < sh[j].Order
		}
		return sh[i].ID < sh[j].ID
	})
}

func sortColumns(cs []Column) {
	sort.Slice(cs, func(i, j int) bool {
		if cs[i].Order != cs[j].Order {
			return cs[i].Order < cs[j].Order
		}
		return cs[i].ID < cs[j].ID
	})
}

func (d *Doc) sheetOrders(skip int64) []string {
	var ks []string
	for _, sh := range d.R.Sheets {
		if sh.ID != skip {
			ks = append(ks, sh.Order)
		}
	}
	return ks
}

// AddSheet appends a sheet.
func (d *Doc) AddSheet(id int64, name string) error {
	for _, sh := range d.R.Sheets {
		if sh.Name == name {
			return ErrSheetName
		}
	}
	o, err := orderAt(d.sheetOrders(0), -1)
	if err != nil {
		return err
	}
	d.R.Sheets = append(d.R.Sheets, Sheet{ID: id, Order: o, Name: name})
	return nil
}

// PatchSheet renames and/or moves a sheet to position *pos (0-based).
func (d *Doc) PatchSheet(id int64, name *string, pos *int) error {
	i := d.sheetIdx(id)
	if i < 0 {
		return ErrNoSheet
	}
	if name != nil {
		for _, sh := range d.R.Sheets {
			if sh.Name == *name && sh.ID != id {
				return ErrSheetName
			}
		}
		d.R.Sheets[i].Name = *name
	}
	if pos != nil && *pos != i {
		o, err := orderAt(d.sheetOrders(id), *pos)
		if err != nil {
			return err
		}
		d.R.Sheets[i].Order = o
		sortSheets(d.R.Sheets)
	}
	return nil
}

// DeleteSheet removes a sheet and its clauses.
func (d *Doc) DeleteSheet(id int64) error {
	i := d.sheetIdx(id)
	if i < 0 {
		return ErrNoSheet
	}
	if len(d.R.Sheets) == 1 {
		return ErrLastSheet
	}
	var ce, ie []Edit
	prefix := sheetPrefix(id)
	err := d.S.Iter(d.R.Clauses, prefix, func(k, _ []byte) (bool, error) {
		if !bytes.HasPrefix(k, prefix) {
			return false, nil
		}
		p, err := parseClauseKey(k)
		if err != nil {
			return false, err
		}
		ce = append(ce, Edit{Key: append([]byte(nil), k...), Del: true})
		ie = append(ie, Edit{Key: idKey(p.ID), Del: true})
		return true, nil
	})
	if err != nil {
		return err
	}
	if err := d.apply(ce, ie); err != nil {
		return err
	}
	d.R.Sheets = append(d.R.Sheets[:i:i], d.R.Sheets[i+1:]...)
	return nil
}

func (d *Doc) apply(ce, ie []Edit) error {
	var err error
	if d.R.Clauses, err = d.S.Apply(d.R.Clauses, ce); err != nil {
		return err
	}
	d.R.Index, err = d.S.Apply(d.R.Index, ie)
	return err
}

// AddColumn appends a column (c.ID and fields set by the caller).
func (d *Doc) AddColumn(c Column) error {
	for _, x := range d.R.Columns {
		if x.Name == c.Name {
			return ErrColumnName
		}
	}
	var ks []string
	for _, x := range d.R.Columns {
		ks = append(ks, x.Order)
	}
	o, err := orderAt(ks, -1)
	if err != nil {
		return err
	}
	c.Order = o
	d.R.Columns = append(d.R.Columns, c)
	return nil
}

// PatchColumn replaces a column's attributes (not its id or order).
func (d *Doc) PatchColumn(c Column) error {
	i := d.columnIdx(c.ID)
	if i < 0 {
		return ErrNoColumn
	}
	for _, x := range d.R.Columns {
		if x.Name == c.Name && x.ID != c.ID {
			return ErrColumnName
		}
	}
	c.Order = d.R.Columns[i].Order
	d.R.Columns[i] = c
	return nil
}

// MoveColumn moves a column to position pos (0-based; past the end: last).
// Only its order key changes, so a merge sees a move of that column alone.
func (d *Doc) MoveColumn(id int64, pos int) error {
	i := d.columnIdx(id)
	if i < 0 {
		return ErrNoColumn
	}
	if pos == i {
		return nil
	}
	var ks []string
	for _, x := range d.R.Columns {
		if x.ID != id {
			ks = append(ks, x.Order)
		}
	}
	o, err := orderAt(ks, pos)
	if err != nil {
		return err
	}
	d.R.Columns[i].Order = o
	sortColumns(d.R.Columns)
	return nil
}

// DeleteColumn removes a column and its cells from every clause.
func (d *Doc) DeleteColumn(id int64) error {
	i := d.columnIdx(id)
	if i < 0 {
		return ErrNoColumn
	}
	var ce []Edit
	err := d.S.Iter(d.R.Clauses, nil, func(k, v []byte) (bool, error) {
		c, err := d.S.clause(Hash(v))
		if err != nil {
			return false, err
		}
		if _, ok := c.Cells[id]; !ok {
			return true, nil
		}
		cells := copyCells(c.Cells)
		delete(cells, id)
		text, err := d.S.ClauseText(c)
		if err != nil {
			return false, err
		}
		h, err := d.S.putClause(text, cells)
		ce = append(ce, Edit{Key: append([]byte(nil), k...), Val: h[:]})
		return true, err
	})
	if err != nil {
		return err
	}
	if err := d.apply(ce, nil); err != nil {
		return err
	}
	d.R.Columns = append(d.R.Columns[:i:i], d.R.Columns[i+1:]...)
	return nil
}

func copyCells(m map[int64]string) map[int64]string {
	out := make(map[int64]string, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	return out
}

// Locate finds a clause by id.
func (d *Doc) Locate(id int64) (ClausePos, bool, error) {
	v, ok, err := d.S.Get(d.R.Index, idKey(id))
	if err != nil || !ok {
		return ClausePos{}, false, err
	}
	p, err := parseClauseKey(v)
	return p, err == nil, err
}

// ClauseAt reads a clause by id.
func (d *Doc) ClauseAt(id int64) (ClausePos, *Clause, error) {
	p, ok, err := d.Locate(id)
	if err != nil {
		return p, nil, err
	}
	if !ok {
		return p, nil, ErrNoClause
	}
	v, ok, err := d.S.Get(d.R.Clauses, p.key())
	if err != nil {
		return p, nil, err
	}
	if !ok {
		return p, nil, fmt.Errorf("docengine: index names a clause the tree lacks")
	}
	c, err := d.S.clause(Hash(v))
	return p, c, err
}

// neighbour returns the order key of the clause before (dir < 0) or after
// (dir > 0) key k within sheet, or "".
func (d *Doc) neighbour(sheet int64, k []byte, dir int) (string, error) {
	prefix := sheetPrefix(sheet)
	if dir > 0 {
		out := ""
		err := d.S.Iter(d.R.Clauses, k, func(kk, _ []byte) (bool, error) {
			if bytes.Equal(kk, k) {
				return true, nil
			}
			if bytes.HasPrefix(kk, prefix) {
				p, err := parseClauseKey(kk)
				out = p.Order
				return false, err
			}
			return false, nil
		})
		return out, err
	}
	r, err := d.S.Rank(d.R.Clauses, k)
	if err != nil || r == 0 {
		return "", err
	}
	out := ""
	err = d.S.IterAt(d.R.Clauses, r-1, func(kk, _ []byte) (bool, error) {
		if bytes.HasPrefix(kk, prefix) {
			p, err := parseClauseKey(kk)
			out = p.Order
			return false, err
		}
		return false, nil
	})
	return out, err
}

// Place says where a clause goes: after or before a clause, or at the end
// of a sheet (Sheet) or of the first sheet (all zero).
type Place struct {
	After, Before, Sheet int64
}

func (d *Doc) place(pl Place, self int64) (int64, string, error) {
	if (pl.After != 0 && pl.After == self) || (pl.Before != 0 && pl.Before == self) {
		return 0, "", ErrSelfPosition
	}
	if pl.After != 0 || pl.Before != 0 {
		ref := pl.After
		if ref == 0 {
			ref = pl.Before
		}
		p, ok, err := d.Locate(ref)
		if err != nil {
			return 0, "", err
		}
		if !ok {
			return 0, "", ErrNoClause
		}
		if pl.Sheet != 0 && pl.Sheet != p.Sheet {
			return 0, "", ErrBadPosition
		}
		var o string
		if pl.After != 0 {
			next, err := d.neighbour(p.Sheet, p.key(), 1)
			if err != nil {
				return 0, "", err
			}
			o, err = KeyBetween(p.Order, next)
			if err != nil {
				return 0, "", err
			}
		} else {
			prev, err := d.neighbour(p.Sheet, p.key(), -1)
			if err != nil {
				return 0, "", err
			}
			if o, err = KeyBetween(prev, p.Order); err != nil {
				return 0, "", err
			}
		}
		return p.Sheet, o, nil
	}
	sheet := pl.Sheet
	if sheet == 0 {
		sheet = d.R.Sheets[0].ID
	} else if d.sheetIdx(sheet) < 0 {
		return 0, "", ErrNoSheet
	}
	// the end of the sheet: the last key before the next sheet's prefix
	last, err := d.lastOrder(sheet)
	if err != nil {
		return 0, "", err
	}
	o, err := KeyBetween(last, "")
	return sheet, o, err
}

func (d *Doc) lastOrder(sheet int64) (string, error) {
	end := sheetPrefix(sheet + 1)
	r, err := d.S.Rank(d.R.Clauses, end)
	if err != nil || r == 0 {
		return "", err
	}
	out := ""
	err = d.S.IterAt(d.R.Clauses, r-1, func(k, _ []byte) (bool, error) {
		if bytes.HasPrefix(k, sheetPrefix(sheet)) {
			p, err := parseClauseKey(k)
			out = p.Order
			return false, err
		}
		return false, nil
	})
	return out, err
}

// InsertClause adds a clause.
func (d *Doc) InsertClause(id int64, pl Place, text string) error {
	sheet, o, err := d.place(pl, id)
	if err != nil {
		return err
	}
	h, err := d.S.putClause(text, nil)
	if err != nil {
		return err
	}
	k := clauseKey(sheet, o, id)
	return d.apply([]Edit{{Key: k, Val: h[:]}}, []Edit{{Key: idKey(id), Val: k}})
}

// PatchClause moves a clause (when pl is set) and/or sets its text.
func (d *Doc) PatchClause(id int64, pl *Place, text *string) error {
	p, c, err := d.ClauseAt(id)
	if err != nil {
		return err
	}
	val, _, err := d.S.Get(d.R.Clauses, p.key())
	if err != nil {
		return err
	}
	if text != nil {
		cur, err := d.S.ClauseText(c)
		if err != nil {
			return err
		}
		if cur != *text {
			h, err := d.S.putClause(*text, c.Cells)
			if err != nil {
				return err
			}
			val = h[:]
		}
	}
	np := p
	if pl != nil {
		if np.Sheet, np.Order, err = d.place(*pl, id); err != nil {
			return err
		}
	}
	ce := []Edit{{Key: np.key(), Val: val}}
	var ie []Edit
	if !bytes.Equal(np.key(), p.key()) {
		ce = append(ce, Edit{Key: p.key(), Del: true})
		ie = []Edit{{Key: idKey(id), Val: np.key()}}
	}
	return d.apply(ce, ie)
}

// DeleteClause removes a clause.
func (d *Doc) DeleteClause(id int64) error {
	p, ok, err := d.Locate(id)
	if err != nil {
		return err
	}
	if !ok {
		return ErrNoClause
	}
	return d.apply([]Edit{{Key: p.key(), Del: true}}, []Edit{{Key: idKey(id), Del: true}})
}

// SetCell sets one cell ("" clears it).
func (d *Doc) SetCell(clauseID, columnID int64, value string) error {
	if d.columnIdx(columnID) < 0 {
		return ErrNoColumn
	}
	p, c, err := d.ClauseAt(clauseID)
	if err != nil {
		return err
	}
	if c.Cells[columnID] == value {
		return nil
	}
	cells := copyCells(c.Cells)
	cells[columnID] = value
	text, err := d.S.ClauseText(c)
	if err != nil {
		return err
	}
	h, err := d.S.putClause(text, cells)
	if err != nil {
		return err
	}
	return d.apply([]Edit{{Key: p.key(), Val: h[:]}}, nil)
}

// ClauseRow is a clause as read.
type ClauseRow struct {
	ClausePos
	Text  string
	Cells map[int64]string
}

// Clauses pages clauses in document order (sheet order, then clause
// order), optionally within one sheet.
func (d *Doc) Clauses(sheet int64, skip, top int) ([]ClauseRow, int, error) {
	var out []ClauseRow
	total := 0
	sheets := d.R.Sheets
	if sheet != 0 {
		i := d.sheetIdx(sheet)
		if i < 0 {
			return nil, 0, ErrNoSheet
		}
		sheets = sheets[i : i+1]
	}
	for _, sh := range sheets {
		lo, err := d.S.Rank(d.R.Clauses, sheetPrefix(sh.ID))
		if err != nil {
			return nil, 0, err
		}
		hi, err := d.S.Rank(d.R.Clauses, sheetPrefix(sh.ID+1))
		if err != nil {
			return nil, 0, err
		}
		n := int(hi - lo)
		start := total
		total += n
		if len(out) >= top || skip >= total {
			continue
		}
		from := 0
		if skip > start {
			from = skip - start
		}
		want := top - len(out)
		err = d.S.IterAt(d.R.Clauses, lo+uint64(from), func(k, v []byte) (bool, error) {
			if !bytes.HasPrefix(k, sheetPrefix(sh.ID)) || want == 0 {
				return false, nil
			}
			p, err := parseClauseKey(k)
			if err != nil {
				return false, err
			}
			c, err := d.S.clause(Hash(v))
			if err != nil {
				return false, err
			}
			text, err := d.S.ClauseText(c)
			out = append(out, ClauseRow{ClausePos: p, Text: text, Cells: c.Cells})
			want--
			return want > 0, err
		})
		if err != nil {
			return nil, 0, err
		}
	}
	return out, total, nil
}

// SheetPosition is a clause's 0-based position within its sheet.
func (d *Doc) SheetPosition(p ClausePos) (int, error) {
	lo, err := d.S.Rank(d.R.Clauses, sheetPrefix(p.Sheet))
	if err != nil {
		return 0, err
	}
	r, err := d.S.Rank(d.R.Clauses, p.key())
	return int(r - lo), err
}

// NewClause is a clause to append in bulk.
type NewClause struct {
	ID    int64
	Text  string
	Cells map[int64]string
}

// AppendClauses adds clauses at the end of a sheet (0: the first) in one
// tree update: the same content, and so the same hash, as inserting them
// one by one, for imports and seeding.
func (d *Doc) AppendClauses(sheet int64, items []NewClause) error {
	if sheet == 0 {
		sheet = d.R.Sheets[0].ID
	} else if d.sheetIdx(sheet) < 0 {
		return ErrNoSheet
	}
	last, err := d.lastOrder(sheet)
	if err != nil {
		return err
	}
	ce := make([]Edit, 0, len(items))
	ie := make([]Edit, 0, len(items))
	for _, it := range items {
		for col := range it.Cells {
			if d.columnIdx(col) < 0 {
				return ErrNoColumn
			}
		}
		if last, err = KeyBetween(last, ""); err != nil {
			return err
		}
		h, err := d.S.putClause(it.Text, it.Cells)
		if err != nil {
			return err
		}
		k := clauseKey(sheet, last, it.ID)
		ce = append(ce, Edit{Key: k, Val: h[:]})
		ie = append(ie, Edit{Key: idKey(it.ID), Val: k})
	}
	return d.apply(ce, ie)
}
