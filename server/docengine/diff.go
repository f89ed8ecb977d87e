package docengine

import "sort"

// Change is one entity- or cell-level difference between two revisions.
type Change struct {
	Kind     string `json:"kind"`
	SheetID  int64  `json:"sheet_id,string,omitempty"`
	ClauseID int64  `json:"clause_id,string,omitempty"`
	ColumnID int64  `json:"column_id,string,omitempty"`
	Attr     string `json:"attribute,omitempty"`
	From     any    `json:"from"`
	To       any    `json:"to"`
}

// DiffRevisions lists what changed from revision a to revision b: sheets,
// columns, then clauses in id order (added, deleted, moved, text, cells).
// It reads only the subtrees that differ.
func (s *Stage) DiffRevisions(a, b Hash) ([]Change, error) {
	ra, err := s.Root(a)
	if err != nil {
		return nil, err
	}
	rb, err := s.Root(b)
	if err != nil {
		return nil, err
	}
	var out []Change
	if ra.Meta != rb.Meta {
		out = append(out, Change{Kind: "meta_changed", From: ra.Meta, To: rb.Meta})
	}
	sa, sb := map[int64]Sheet{}, map[int64]Sheet{}
	for _, x := range ra.Sheets {
		sa[x.ID] = x
	}
	for _, x := range rb.Sheets {
		sb[x.ID] = x
	}
	for _, x := range ra.Sheets {
		y, ok := sb[x.ID]
		switch {
		case !ok:
			out = append(out, Change{Kind: "sheet_deleted", SheetID: x.ID, From: x.Name})
		default:
			if x.Name != y.Name {
				out = append(out, Change{Kind: "sheet_changed", SheetID: x.ID, Attr: "name", From: x.Name, To: y.Name})
			}
			if x.Order != y.Order {
				out = append(out, Change{Kind: "sheet_moved", SheetID: x.ID})
			}
		}
	}
	for _, y := range rb.Sheets {
		if _, ok := sa[y.ID]; !ok {
			out = append(out, Change{Kind: "sheet_added", SheetID: y.ID, To: y.Name})
		}
	}
	ca, cb := map[int64]Column{}, map[int64]Column{}
	for _, x := range ra.Columns {
		ca[x.ID] = x
	}
	for _, x := range rb.Columns {
		cb[x.ID] = x
	}
	for _, x := range ra.Columns {
		y, ok := cb[x.ID]
		if !ok {
			out = append(out, Change{Kind: "column_deleted", ColumnID: x.ID, From: x.Name})
			continue
		}
		attrs := []struct {
			name string
			a, b any
		}{{"name", x.Name, y.Name}, {"description", x.Description, y.Description}, {"type", x.Type, y.Type},
			{"data_format", x.DataFormat, y.DataFormat}, {"formula", x.Formula, y.Formula},
			{"conditional_formatting", x.ConditionalFormatting, y.ConditionalFormatting}, {"field_id", x.FieldID, y.FieldID}}
		for _, at := range attrs {
			if at.a != at.b {
				out = append(out, Change{Kind: "column_changed", ColumnID: x.ID, Attr: at.name, From: at.a, To: at.b})
			}
		}
		if x.Order != y.Order {
			out = append(out, Change{Kind: "column_moved", ColumnID: x.ID})
		}
	}
	for _, y := range rb.Columns {
		if _, ok := ca[y.ID]; !ok {
			out = append(out, Change{Kind: "column_added", ColumnID: y.ID, To: y.Name})
		}
	}
	m := &merger{s: s}
	ch, err := m.changes(ra.Clauses, rb.Clauses)
	if err != nil {
		return nil, err
	}
	ids := make([]int64, 0, len(ch))
	for id := range ch {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		x, y := ch[id][0], ch[id][1]
		switch {
		case !x.present:
			out = append(out, Change{Kind: "clause_added", SheetID: y.pos.Sheet, ClauseID: id})
			continue
		case !y.present:
			out = append(out, Change{Kind: "clause_deleted", SheetID: x.pos.Sheet, ClauseID: id})
			continue
		}
		if x.pos != y.pos {
			out = append(out, Change{Kind: "clause_moved", SheetID: y.pos.Sheet, ClauseID: id, From: x.pos.Sheet, To: y.pos.Sheet})
		}
		if x.val == y.val {
			continue
		}
		cx, err := s.clause(x.val)
		if err != nil {
			return nil, err
		}
		cy, err := s.clause(y.val)
		if err != nil {
			return nil, err
		}
		tx, err := s.ClauseText(cx)
		if err != nil {
			return nil, err
		}
		ty, err := s.ClauseText(cy)
		if err != nil {
			return nil, err
		}
		if tx != ty {
			out = append(out, Change{Kind: "clause_text", SheetID: y.pos.Sheet, ClauseID: id, From: tx, To: ty})
		}
		cols := map[int64]bool{}
		for k := range cx.Cells {
			cols[k] = true
		}
		for k := range cy.Cells {
			cols[k] = true
		}
		colIDs := make([]int64, 0, len(cols))
		for k := range cols {
			colIDs = append(colIDs, k)
		}
		sort.Slice(colIDs, func(i, j int) bool { return colIDs[i] < colIDs[j] })
		for _, k := range colIDs {
			if cx.Cells[k] != cy.Cells[k] {
				out = append(out, Change{Kind: "cell", SheetID: y.pos.Sheet, ClauseID: id, ColumnID: k, From: cx.Cells[k], To: cy.Cells[k]})
			}
		}
	}
	return out, nil
}
