package docengine

import (
	"fmt"
	"sort"
	"strconv"
)

// Conflict kinds (docs/documents.md).
const (
	KindCell             = "cell"
	KindAttribute        = "attribute"
	KindText             = "text"
	KindDeleteModify     = "delete_modify"
	KindContainerDeleted = "container_deleted"
	KindColumnDeleted    = "column_deleted"
	KindMoveMove         = "move_move"
	KindConstraint       = "constraint"
	// KindClause: under the strict policy, both sides changed one clause
	// (any change: text, a cell, its place) in different ways.
	KindClause = "clause"
)

// Take says how a resolution settles one conflict: the side called ours,
// the side called theirs, the base, or a value the caller gives (only for
// text and cell conflicts).
type Take string

const (
	TakeOurs   Take = "ours"
	TakeTheirs Take = "theirs"
	TakeBase   Take = "base"
	TakeValue  Take = "value"
)

// Resolution settles the conflict of its id (Conflict.ID).
type Resolution struct {
	Take  Take
	Value string
}

// MergeOptions adjust a merge. Strict makes any change of one clause on
// both sides a conflict (KindClause), as a protected branch may ask;
// Resolve settles conflicts by id instead of reporting them.
type MergeOptions struct {
	Strict  bool
	Resolve map[string]Resolution
}

// ResolutionError is a resolution that cannot apply to its conflict (a
// value for a conflict that takes none).
type ResolutionError struct {
	ID, Msg string
}

func (e *ResolutionError) Error() string { return "resolution " + e.ID + ": " + e.Msg }

// Conflict is one reason a merge cannot be made. Base, Ours and Theirs
// are the three values of the attribute in question (nil when absent).
type Conflict struct {
	ID       string
	Kind     string
	SheetID  int64
	ClauseID int64
	ColumnID int64
	Base     any
	Ours     any
	Theirs   any
}

type merger struct {
	s         *Stage
	b, o, t   *Root
	opt       MergeOptions
	conflicts []Conflict
	bad       *ResolutionError
}

func conflictID(c Conflict, attr string) string {
	return fmt.Sprintf("%s:%d:%d:%d:%s", c.Kind, c.SheetID, c.ClauseID, c.ColumnID, attr)
}

func (m *merger) conflict(c Conflict, attr string) {
	c.ID = conflictID(c, attr)
	m.conflicts = append(m.conflicts, c)
}

// settle looks up a resolution for the conflict; without one (or with a
// value where none can apply, valued false) the conflict is recorded.
func (m *merger) settle(c Conflict, attr string, valued bool) (Resolution, bool) {
	r, ok := m.opt.Resolve[conflictID(c, attr)]
	if ok && r.Take == TakeValue && !valued {
		if m.bad == nil {
			m.bad = &ResolutionError{ID: conflictID(c, attr), Msg: "a " + c.Kind + " conflict takes ours, theirs or base, not a value"}
		}
		ok = false
	}
	if !ok {
		m.conflict(c, attr)
	}
	return r, ok
}

// lookup finds a resolution for a conflict checked after the merge of a
// clause, without recording the conflict (the caller decides).
func (m *merger) lookup(c Conflict, attr string, valued bool) (Resolution, bool) {
	r, ok := m.opt.Resolve[conflictID(c, attr)]
	if ok && r.Take == TakeValue && !valued {
		if m.bad == nil {
			m.bad = &ResolutionError{ID: conflictID(c, attr), Msg: "a " + c.Kind + " conflict takes ours, theirs or base, not a value"}
		}
		return r, false
	}
	return r, ok
}

// chooseValue is choose, or the given value.
func chooseValue(r Resolution, b, o, t string) string {
	if r.Take == TakeValue {
		return r.Value
	}
	return choose(r, b, o, t)
}

// choose is the side a resolution takes.
func choose[T any](r Resolution, b, o, t T) T {
	switch r.Take {
	case TakeTheirs:
		return t
	case TakeBase:
		return b
	}
	return o
}

// Merge makes the three-way merge of ours and theirs from their base. It
// is symmetric in ours and theirs; any conflict means no result (Zero).
func (s *Stage) Merge(base, ours, theirs Hash) (Hash, []Conflict, error) {
	return s.MergeWith(base, ours, theirs, MergeOptions{})
}

// MergeWith is Merge with options: the strict policy and resolutions.
// Symmetric as Merge is, with ours and theirs swapped in resolutions too.
// A resolution that cannot apply is a *ResolutionError.
func (s *Stage) MergeWith(base, ours, theirs Hash, opt MergeOptions) (Hash, []Conflict, error) {
	if ours == theirs || theirs == base {
		return ours, nil, nil
	}
	if ours == base {
		return theirs, nil, nil
	}
	m := merger{s: s, opt: opt}
	var err error
	if m.b, err = s.Root(base); err != nil {
		return Zero, nil, err
	}
	if m.o, err = s.Root(ours); err != nil {
		return Zero, nil, err
	}
	if m.t, err = s.Root(theirs); err != nil {
		return Zero, nil, err
	}
	out := *m.o
	out.Meta = m.meta()
	out.Sheets = m.sheets()
	out.Columns = m.columns()
	out.Fields = mergeIDSet(m.b.Fields, m.o.Fields, m.t.Fields)
	if err := m.clauses(&out); err != nil {
		return Zero, nil, err
	}
	m.constraints(&out)
	if m.bad != nil {
		return Zero, nil, m.bad
	}
	if len(m.conflicts) > 0 {
		sort.Slice(m.conflicts, func(i, j int) bool { return m.conflicts[i].ID < m.conflicts[j].ID })
		return Zero, m.conflicts, nil
	}
	h, err := s.PutRoot(&out)
	return h, nil, err
}

// pick3 merges one attribute: equal sides agree, an unchanged side takes
// the other's change, different changes conflict (ok false).
func pick3[T comparable](b, o, t T) (T, bool) {
	switch {
	case o == t:
		return o, true
	case o == b:
		return t, true
	case t == b:
		return o, true
	}
	return o, false
}

func (m *merger) meta() Meta {
	b, o, t := m.b.Meta, m.o.Meta, m.t.Meta
	out := o
	attr := func(name string, bv, ov, tv any, dst func(any)) {
		if ov == tv || tv == bv {
			return
		}
		if ov == bv {
			dst(tv)
			return
		}
		if r, ok := m.settle(Conflict{Kind: KindAttribute, Base: bv, Ours: ov, Theirs: tv}, "meta."+name, false); ok {
			dst(choose(r, bv, ov, tv))
		}
	}
	attr("title", b.Title, o.Title, t.Title, func(v any) { out.Title = v.(string) })
	attr("clause_prefix_format", b.ClausePrefixFormat, o.ClausePrefixFormat, t.ClausePrefixFormat, func(v any) { out.ClausePrefixFormat = v.(string) })
	attr("clause_prefix_id", b.ClausePrefixID, o.ClausePrefixID, t.ClausePrefixID, func(v any) { out.ClausePrefixID = v.(int64) })
	attr("clause_digits", b.ClauseDigits, o.ClauseDigits, t.ClauseDigits, func(v any) { out.ClauseDigits = v.(int64) })
	attr("template_name", b.TemplateName, o.TemplateName, t.TemplateName, func(v any) { out.TemplateName = v.(string) })
	attr("template_hash", b.TemplateHash, o.TemplateHash, t.TemplateHash, func(v any) { out.TemplateHash = v.(string) })
	attr("template_name_xlsx", b.TemplateNameXLSX, o.TemplateNameXLSX, t.TemplateNameXLSX, func(v any) { out.TemplateNameXLSX = v.(string) })
	attr("template_hash_xlsx", b.TemplateHashXLSX, o.TemplateHashXLSX, t.TemplateHashXLSX, func(v any) { out.TemplateHashXLSX = v.(string) })
	return out
}

func mergeIDSet(b, o, t []int64) []int64 {
	in := func(xs []int64) map[int64]bool {
		m := map[int64]bool{}
		for _, x := range xs {
			m[x] = true
		}
		return m
	}
	bm, om, tm := in(b), in(o), in(t)
	var out []int64
	for _, x := range append(append(append([]int64(nil), b...), o...), t...) {
		keep := (om[x] && tm[x]) || (!bm[x] && (om[x] || tm[x]))
		if keep {
			out = append(out, x)
			om[x], tm[x], bm[x] = false, false, true // once
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// keyed merges lists of entities by id; attrs compares and merges the
// content of one entity present on all sides.
func mergeKeyed[E any](m *merger, kind string, b, o, t []E, id func(E) int64, order func(E) string,
	content func(b, o, t E) (E, bool)) []E {
	idx := func(xs []E) map[int64]E {
		r := map[int64]E{}
		for _, x := range xs {
			r[id(x)] = x
		}
		return r
	}
	bm, om, tm := idx(b), idx(o), idx(t)
	seen := map[int64]bool{}
	var out []E
	var ids []int64
	for _, xs := range [][]E{b, o, t} {
		for _, x := range xs {
			if !seen[id(x)] {
				seen[id(x)] = true
				ids = append(ids, id(x))
			}
		}
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, k := range ids {
		bx, inB := bm[k]
		ox, inO := om[k]
		tx, inT := tm[k]
		switch {
		case !inB && inO && inT:
			if equalContent(ox, tx, content, order) {
				out = append(out, ox)
			} else if r, ok := m.settle(Conflict{Kind: KindAttribute, SheetID: sheetOf(kind, k), ColumnID: columnOf(kind, k), Ours: ox, Theirs: tx}, kind+".add", false); ok && r.Take != TakeBase {
				out = append(out, choose(r, ox, ox, tx))
			}
		case !inB:
			if inO {
				out = append(out, ox)
			} else if inT {
				out = append(out, tx)
			}
		case !inO && !inT:
		case !inO || !inT:
			// deleted on one side: a content change on the other conflicts;
			// a move alone loses to the delete
			other := ox
			if !inO {
				other = tx
			}
			if !equalContent(bx, other, content, order) {
				r, ok := m.settle(Conflict{Kind: KindDeleteModify, SheetID: sheetOf(kind, k), ColumnID: columnOf(kind, k),
					Base: bx, Ours: valOrNil(inO, ox), Theirs: valOrNil(inT, tx)}, kind, false)
				if ok && choose(r, true, inO, inT) {
					out = append(out, choose(r, bx, ox, tx))
				}
			}
		default:
			r, _ := content(bx, ox, tx) // content reports its own conflicts
			ro, moved := pick3(order(bx), order(ox), order(tx))
			if !moved {
				if r, ok := m.settle(Conflict{Kind: KindMoveMove, SheetID: sheetOf(kind, k), ColumnID: columnOf(kind, k),
					Base: order(bx), Ours: order(ox), Theirs: order(tx)}, kind+".order", false); ok {
					ro = choose(r, order(bx), order(ox), order(tx))
				}
			}
			out = append(out, withOrder(r, ro, order))
		}
	}
	return out
}

func valOrNil[E any](in bool, x E) any {
	if in {
		return x
	}
	return nil
}

// withOrder and equalContent work through the concrete entity types.
func withOrder[E any](x E, o string, _ func(E) string) E {
	switch v := any(&x).(type) {
	case *Sheet:
		v.Order = o
	case *Column:
		v.Order = o
	}
	return x
}

func equalContent[E any](a, b E, _ func(b, o, t E) (E, bool), order func(E) string) bool {
	return any(withOrder(a, "", order)) == any(withOrder(b, "", order))
}

func sheetOf(kind string, id int64) int64 {
	if kind == "sheet" {
		return id
	}
	return 0
}

func columnOf(kind string, id int64) int64 {
	if kind == "column" {
		return id
	}
	return 0
}

func (m *merger) sheets() []Sheet {
	out := mergeKeyed(m, "sheet", m.b.Sheets, m.o.Sheets, m.t.Sheets,
		func(s Sheet) int64 { return s.ID }, func(s Sheet) string { return s.Order },
		func(b, o, t Sheet) (Sheet, bool) {
			r := o
			var ok bool
			if r.Name, ok = pick3(b.Name, o.Name, t.Name); !ok {
				if res, settled := m.settle(Conflict{Kind: KindAttribute, SheetID: b.ID, Base: b.Name, Ours: o.Name, Theirs: t.Name}, "sheet.name", false); settled {
					r.Name, ok = choose(res, b.Name, o.Name, t.Name), true
				}
			}
			return r, ok
		})
	sortSheets(out)
	return out
}

func (m *merger) columns() []Column {
	out := mergeKeyed(m, "column", m.b.Columns, m.o.Columns, m.t.Columns,
		func(c Column) int64 { return c.ID }, func(c Column) string { return c.Order },
		func(b, o, t Column) (Column, bool) {
			r := o
			all := true
			str := func(name string, bv, ov, tv string, dst *string) {
				v, ok := pick3(bv, ov, tv)
				if !ok {
					if r, settled := m.settle(Conflict{Kind: KindAttribute, ColumnID: b.ID, Base: bv, Ours: ov, Theirs: tv}, "column."+name, false); settled {
						v = choose(r, bv, ov, tv)
					} else {
						all = false
					}
				}
				*dst = v
			}
			num := func(name string, bv, ov, tv int64, dst *int64) {
				v, ok := pick3(bv, ov, tv)
				if !ok {
					if r, settled := m.settle(Conflict{Kind: KindAttribute, ColumnID: b.ID, Base: bv, Ours: ov, Theirs: tv}, "column."+name, false); settled {
						v = choose(r, bv, ov, tv)
					} else {
						all = false
					}
				}
				*dst = v
			}
			str("name", b.Name, o.Name, t.Name, &r.Name)
			str("description", b.Description, o.Description, t.Description, &r.Description)
			str("type", b.Type, o.Type, t.Type, &r.Type)
			num("data_format", b.DataFormat, o.DataFormat, t.DataFormat, &r.DataFormat)
			str("formula", b.Formula, o.Formula, t.Formula, &r.Formula)
			str("conditional_formatting", b.ConditionalFormatting, o.ConditionalFormatting, t.ConditionalFormatting, &r.ConditionalFormatting)
			num("field_id", b.FieldID, o.FieldID, t.FieldID, &r.FieldID)
			return r, all
		})
	sortColumns(out)
	return out
}

// clauseState is a clause on one side: absent, or where and what.
type clauseState struct {
	present bool
	pos     ClausePos
	val     Hash
}

func stateOf(k, v []byte) (clauseState, error) {
	if v == nil {
		return clauseState{}, nil
	}
	p, err := parseClauseKey(k)
	return clauseState{present: true, pos: p, val: Hash(v)}, err
}

type sideChanges map[int64][2]clauseState // id -> (base, side)

func (m *merger) changes(base, side Hash) (sideChanges, error) {
	out := sideChanges{}
	err := m.s.Diff(base, side, func(c TreeChange) error {
		p, err := parseClauseKey(c.Key)
		if err != nil {
			return err
		}
		cur := out[p.ID]
		if c.A != nil {
			if cur[0], err = stateOf(c.Key, c.A); err != nil {
				return err
			}
		}
		if c.B != nil {
			if cur[1], err = stateOf(c.Key, c.B); err != nil {
				return err
			}
		}
		out[p.ID] = cur
		return nil
	})
	return out, err
}

func (m *merger) clauses(out *Root) error {
	oc, err := m.changes(m.b.Clauses, m.o.Clauses)
	if err != nil {
		return err
	}
	tc, err := m.changes(m.b.Clauses, m.t.Clauses)
	if err != nil {
		return err
	}
	sheets := map[int64]bool{}
	for _, sh := range out.Sheets {
		sheets[sh.ID] = true
	}
	deletedSheet := func(r *Root, id int64) bool {
		for _, sh := range r.Sheets {
			if sh.ID == id {
				return false
			}
		}
		return true
	}
	columns := map[int64]bool{}
	for _, c := range out.Columns {
		columns[c.ID] = true
	}
	var ids []int64
	for id := range tc {
		ids = append(ids, id)
	}
	for id := range oc {
		if _, ok := tc[id]; !ok {
			ids = append(ids, id)
		}
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	var ce, ie []Edit
	var results []merged
	for _, id := range ids {
		var b, o, t clauseState
		oSide, inO := oc[id]
		tSide, inT := tc[id]
		if inO {
			b, o = oSide[0], oSide[1]
		}
		if inT {
			b, t = tSide[0], tSide[1]
		}
		if !inO {
			o = b
		}
		if !inT {
			t = b
		}
		res, ok, err := m.clause(id, b, o, t, deletedSheet)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		if res.present && !sheets[res.pos.Sheet] {
			// a resolution may take the side that dropped the clause (or
			// one that keeps it in a live sheet); else it conflicts
			c := Conflict{Kind: KindContainerDeleted, SheetID: res.pos.Sheet, ClauseID: id}
			if r, ok := m.lookup(c, "clause", false); ok {
				if st := choose(r, b, o, t); !st.present || sheets[st.pos.Sheet] {
					res = st
				}
			}
			if res.present && !sheets[res.pos.Sheet] {
				m.conflict(c, "clause")
				continue
			}
		}
		if res.present && res.val != b.val {
			// a cell kept in a column the merge deletes was set by the
			// side that kept the column: never dropped silently (a
			// resolution may take a side where the cell is empty)
			c, err := m.s.clause(res.val)
			if err != nil {
				return err
			}
			hit := false
			var drop []int64
			for col := range c.Cells {
				if columns[col] {
					continue
				}
				cf := Conflict{Kind: KindColumnDeleted, SheetID: res.pos.Sheet, ClauseID: id, ColumnID: col, Theirs: c.Cells[col]}
				if r, ok := m.lookup(cf, "cell", true); ok {
					var vs [3]string
					for i, st := range []clauseState{b, o, t} {
						if vs[i], err = m.cellOf(st, col); err != nil {
							return err
						}
					}
					if chooseValue(r, vs[0], vs[1], vs[2]) == "" {
						drop = append(drop, col)
						continue
					}
				}
				hit = true
				m.conflict(cf, "cell")
			}
			if hit {
				continue
			}
			if len(drop) > 0 {
				text, err := m.s.ClauseText(c)
				if err != nil {
					return err
				}
				cells := copyCells(c.Cells)
				for _, col := range drop {
					delete(cells, col)
				}
				if res.val, err = m.s.putClause(text, cells); err != nil {
					return err
				}
			}
		}
		results = append(results, merged{id: id, o: o, res: res, added: !b.present && !(o.present && t.present)})
	}
	if len(m.conflicts) > 0 {
		return nil
	}
	if err := m.contiguousRuns(results); err != nil {
		return err
	}
	for _, r := range results {
		id, o, res := r.id, r.o, r.res
		if res == o {
			continue
		}
		if o.present {
			ce = append(ce, Edit{Key: o.pos.key(), Del: true})
		}
		if res.present {
			ce = append(ce, Edit{Key: res.pos.key(), Val: append([]byte(nil), res.val[:]...)})
			if !o.present || o.pos != res.pos {
				ie = append(ie, Edit{Key: idKey(id), Val: res.pos.key()})
			}
		} else {
			ie = append(ie, Edit{Key: idKey(id), Del: true})
		}
	}
	if len(m.conflicts) > 0 {
		return nil
	}
	if out.Clauses, err = m.s.Apply(m.o.Clauses, ce); err != nil {
		return err
	}
	out.Index, err = m.s.Apply(m.o.Index, ie)
	return err
}

// merged is one clause's merge: ours, the result, and whether one side
// added it.
type merged struct {
	id       int64
	o, res   clauseState
	added    bool
	fromOurs bool
}

// contiguousRuns applies "inserts into the same gap stay as contiguous
// runs, the run with the smaller first id first": when both sides added
// clauses between the same two base clauses, the run that goes second is
// re-keyed to follow the first run whole. Deciding by ids keeps the merge
// symmetric.
func (m *merger) contiguousRuns(results []merged) error {
	type gapKey struct {
		sheet int64
		pred  string // order key of the base clause before, "" at the start
	}
	type gap struct {
		next      string // order key of the base clause after, "" at the end
		ours, the []int
	}
	gaps := map[gapKey]*gap{}
	var order []gapKey
	for i, r := range results {
		if !r.added || !r.res.present {
			continue
		}
		pred, next, err := m.baseNeighbours(r.res.pos)
		if err != nil {
			return err
		}
		k := gapKey{r.res.pos.Sheet, pred}
		g, ok := gaps[k]
		if !ok {
			g = &gap{next: next}
			gaps[k] = g
			order = append(order, k)
		}
		if r.o.present {
			g.ours = append(g.ours, i)
		} else {
			g.the = append(g.the, i)
		}
	}
	less := func(a, b merged) bool {
		if a.res.pos.Order != b.res.pos.Order {
			return a.res.pos.Order < b.res.pos.Order
		}
		return a.id < b.id
	}
	for _, k := range order {
		g := gaps[k]
		if len(g.ours) == 0 || len(g.the) == 0 {
			continue
		}
		for _, run := range [][]int{g.ours, g.the} {
			sort.Slice(run, func(i, j int) bool { return less(results[run[i]], results[run[j]]) })
		}
		first, second := g.ours, g.the
		if results[g.the[0]].id < results[g.ours[0]].id {
			first, second = g.the, g.ours
		}
		prev := results[first[len(first)-1]].res.pos.Order
		for _, i := range second {
			o, err := KeyBetween(prev, g.next)
			if err != nil {
				return err
			}
			results[i].res.pos.Order = o
			prev = o
		}
	}
	return nil
}

// baseNeighbours are the order keys of the base clauses around a
// position in its sheet ("" at either end).
func (m *merger) baseNeighbours(p ClausePos) (string, string, error) {
	d := &Doc{S: m.s, R: *m.b}
	k := p.key()
	prev, err := d.neighbour(p.Sheet, k, -1)
	if err != nil {
		return "", "", err
	}
	next, err := d.neighbour(p.Sheet, k, 1)
	return prev, next, err
}

// clause merges one clause; ok false means it conflicted.
func (m *merger) clause(id int64, b, o, t clauseState, deletedSheet func(*Root, int64) bool) (clauseState, bool, error) {
	if o == t {
		return o, true, nil
	}
	if o == b {
		return t, true, nil
	}
	if t == b {
		return o, true, nil
	}
	if m.opt.Strict {
		// the strict policy: any change of the clause on both sides (text,
		// a cell, its place, its removal) conflicts as a whole
		sheet := b.pos.Sheet
		if !b.present {
			sheet = o.pos.Sheet
		}
		r, ok := m.settle(Conflict{Kind: KindClause, SheetID: sheet, ClauseID: id, Base: stateString(b),
			Ours: stateString(o), Theirs: stateString(t)}, "clause", false)
		if !ok {
			return clauseState{}, false, nil
		}
		return choose(r, b, o, t), true, nil
	}
	if !b.present {
		// both added the same id differently: merge as from an empty clause
		b = clauseState{present: true, pos: o.pos}
	}
	if !o.present || !t.present {
		del, other, delRoot := o, t, m.o
		if !t.present {
			del, other, delRoot = t, o, m.t
		}
		_ = del
		if other.val == b.val {
			return clauseState{}, true, nil // only moved: the delete wins
		}
		kind := KindDeleteModify
		if deletedSheet(delRoot, b.pos.Sheet) {
			kind = KindContainerDeleted
		}
		r, ok := m.settle(Conflict{Kind: kind, SheetID: b.pos.Sheet, ClauseID: id, Base: b.val.String(),
			Ours: stateString(o), Theirs: stateString(t)}, "clause", false)
		if !ok {
			return clauseState{}, false, nil
		}
		return choose(r, b, o, t), true, nil
	}
	pos, ok := pick3(b.pos, o.pos, t.pos)
	if !ok {
		var r Resolution
		if r, ok = m.settle(Conflict{Kind: KindMoveMove, SheetID: b.pos.Sheet, ClauseID: id, Base: posString(b.pos),
			Ours: posString(o.pos), Theirs: posString(t.pos)}, "clause.order", false); ok {
			pos = choose(r, b.pos, o.pos, t.pos)
		}
	}
	val, same := pick3(b.val, o.val, t.val)
	if !same {
		v, good, err := m.clauseContent(id, b, o, t)
		if err != nil || !good {
			return clauseState{}, false, err
		}
		val = v
	}
	return clauseState{present: true, pos: pos, val: val}, ok, nil
}

// cellOf is a clause's cell on one side ("" when absent).
func (m *merger) cellOf(s clauseState, col int64) (string, error) {
	if !s.present || s.val.IsZero() {
		return "", nil
	}
	c, err := m.s.clause(s.val)
	if err != nil {
		return "", err
	}
	return c.Cells[col], nil
}

func stateString(s clauseState) any {
	if !s.present {
		return nil
	}
	return s.val.String()
}

func posString(p ClausePos) string {
	return strconv.FormatInt(p.Sheet, 10) + "/" + p.Order
}

func (m *merger) clauseContent(id int64, b, o, t clauseState) (Hash, bool, error) {
	load := func(s clauseState) (string, map[int64]string, error) {
		if s.val.IsZero() {
			return "", map[int64]string{}, nil
		}
		c, err := m.s.clause(s.val)
		if err != nil {
			return "", nil, err
		}
		text, err := m.s.ClauseText(c)
		return text, c.Cells, err
	}
	bt, bc, err := load(b)
	if err != nil {
		return Zero, false, err
	}
	ot, occ, err := load(o)
	if err != nil {
		return Zero, false, err
	}
	tt, tcc, err := load(t)
	if err != nil {
		return Zero, false, err
	}
	good := true
	text, ok := Merge3Text(bt, ot, tt)
	if !ok {
		if r, settled := m.settle(Conflict{Kind: KindText, SheetID: b.pos.Sheet, ClauseID: id, Base: bt, Ours: ot, Theirs: tt}, "text", true); settled {
			text = chooseValue(r, bt, ot, tt)
		} else {
			good = false
		}
	}
	cols := map[int64]bool{}
	for _, cc := range []map[int64]string{bc, occ, tcc} {
		for k := range cc {
			cols[k] = true
		}
	}
	colIDs := make([]int64, 0, len(cols))
	for k := range cols {
		colIDs = append(colIDs, k)
	}
	sort.Slice(colIDs, func(i, j int) bool { return colIDs[i] < colIDs[j] })
	cells := map[int64]string{}
	hasCol := func(r *Root, id int64) bool {
		for _, c := range r.Columns {
			if c.ID == id {
				return true
			}
		}
		return false
	}
	for _, col := range colIDs {
		v, ok := pick3(bc[col], occ[col], tcc[col])
		if !ok {
			kind := KindCell
			if !hasCol(m.o, col) || !hasCol(m.t, col) {
				kind = KindColumnDeleted
			}
			r, settled := m.settle(Conflict{Kind: kind, SheetID: b.pos.Sheet, ClauseID: id, ColumnID: col,
				Base: bc[col], Ours: occ[col], Theirs: tcc[col]}, "cell", true)
			if !settled {
				good = false
				continue
			}
			v = chooseValue(r, bc[col], occ[col], tcc[col])
		}
		cells[col] = v
	}
	if !good {
		return Zero, false, nil
	}
	h, err := m.s.putClause(text, cells)
	return h, true, err
}

// constraints checks the merged result: names unique per document.
func (m *merger) constraints(out *Root) {
	seen := map[string]int64{}
	for _, sh := range out.Sheets {
		if other, dup := seen[sh.Name]; dup {
			m.conflict(Conflict{Kind: KindConstraint, SheetID: sh.ID, Ours: sh.Name, Theirs: other}, "sheet.name.unique")
		}
		seen[sh.Name] = sh.ID
	}
	seen = map[string]int64{}
	for _, c := range out.Columns {
		if other, dup := seen[c.Name]; dup {
			m.conflict(Conflict{Kind: KindConstraint, ColumnID: c.ID, Ours: c.Name, Theirs: other}, "column.name.unique")
		}
		seen[c.Name] = c.ID
	}
}
