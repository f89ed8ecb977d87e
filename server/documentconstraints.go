package server

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"workspace/db"
	"workspace/server/docengine"
)

// Constraints checked after a merge (documents.md "Merge rules": a
// violation is a `constraint` conflict, and no revision is made). The
// engine checks what the content alone decides (unique names); these need
// the organisation's data or the calculations: expressions still compile
// without a formula cycle, and enum cells name a value of their column's
// item field.

// The sync's merge of document heads on the hub checks the same (db cannot
// import server, so it is handed over when this package is linked in).
func init() { db.SyncMergeCheck = mergeConstraints }

// mergeConstraints lists the constraint conflicts of merged, the merge of
// ours and theirs from base.
func mergeConstraints(ctx context.Context, q *db.Queries, st *docengine.Stage, base, ours, theirs, merged docengine.Hash) ([]docengine.Conflict, error) {
	mr, err := st.Root(merged)
	if err != nil {
		return nil, err
	}
	var pe *calcPlanError
	if _, err := planCalc(mr.Columns); errors.As(err, &pe) {
		return []docengine.Conflict{{ID: fmt.Sprintf("constraint:0:0:%d:%s", pe.columnID, pe.field),
			Kind: docengine.KindConstraint, ColumnID: pe.columnID, Ours: pe.msg}}, nil
	}
	return enumConflicts(ctx, q, st, mr, base, ours, theirs, merged)
}

// enumConflicts: each side checked its enum cells against its own column
// when it wrote them, so a cell can only be wrong in the merge where the
// other side changed the column (its item field, or its type to enum).
// For each side whose enum column differs from the merged one, the cells
// that side set (and the clauses it added) in that column are checked
// against the merged column's field. Only the changed cells are read.
func enumConflicts(ctx context.Context, q *db.Queries, st *docengine.Stage, mr *docengine.Root, base, ours, theirs, merged docengine.Hash) ([]docengine.Conflict, error) {
	enums := map[int64]docengine.Column{}
	for _, c := range mr.Columns {
		if c.Type == "enum" {
			enums[c.ID] = c
		}
	}
	if len(enums) == 0 {
		return nil, nil
	}
	type cellRef struct{ clause, column int64 }
	suspect := map[cellRef]bool{}
	for _, side := range []docengine.Hash{ours, theirs} {
		sr, err := st.Root(side)
		if err != nil {
			return nil, err
		}
		changed := map[int64]bool{} // merged enum columns this side sees otherwise
		for id, c := range enums {
			changed[id] = true
			for _, sc := range sr.Columns {
				if sc.ID == id && sc.Type == c.Type && sc.FieldID == c.FieldID {
					changed[id] = false
				}
			}
		}
		anyChanged := false
		for _, v := range changed {
			anyChanged = anyChanged || v
		}
		if !anyChanged {
			continue
		}
		diff, err := st.DiffRevisions(base, side)
		if err != nil {
			return nil, err
		}
		for _, ch := range diff {
			switch ch.Kind {
			case "cell":
				if changed[ch.ColumnID] {
					suspect[cellRef{ch.ClauseID, ch.ColumnID}] = true
				}
			case "clause_added":
				for id, v := range changed {
					if v {
						suspect[cellRef{ch.ClauseID, id}] = true
					}
				}
			}
		}
	}
	if len(suspect) == 0 {
		return nil, nil
	}
	doc, err := st.Open(merged)
	if err != nil {
		return nil, err
	}
	var fieldIDs []int64
	for _, c := range enums {
		fieldIDs = append(fieldIDs, c.FieldID)
	}
	vals, err := q.DocumentFieldValues(ctx, idsJSON(fieldIDs))
	if err != nil {
		return nil, err
	}
	valid := map[int64]map[string]bool{} // field -> value ids
	for _, v := range vals {
		if valid[v.FieldID] == nil {
			valid[v.FieldID] = map[string]bool{}
		}
		valid[v.FieldID][db.ID(v.ID).String()] = true
	}
	var out []docengine.Conflict
	for ref := range suspect {
		pos, cl, err := doc.ClauseAt(ref.clause)
		if errors.Is(err, docengine.ErrNoClause) {
			continue // deleted in the merge
		}
		if err != nil {
			return nil, err
		}
		v := cl.Cells[ref.column]
		col := enums[ref.column]
		if v == "" || valid[col.FieldID][v] {
			continue
		}
		out = append(out, docengine.Conflict{ID: fmt.Sprintf("constraint:%d:%d:%d:enum", pos.Sheet, ref.clause, ref.column),
			Kind: docengine.KindConstraint, SheetID: pos.Sheet, ClauseID: ref.clause, ColumnID: ref.column, Ours: v,
			Theirs: "is no value of the column's item field"})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// requiredConflicts is the merge request gate for "required fields
// filled" (documents.md "Merge rules"; docs/documents.md): every clause the
// source added or changed since base (its text, or a cell of a column the
// source still has) must have a value in each column of merged bound to an
// enabled, required item field of the organisation orgID. The columns are
// the merged ones, so a binding made on either side counts, and `required`
// is read as it is now. Only the source's changed clauses are read:
// O(changes). It is not run for a change on an old base (the change flow):
// a new clause starts with empty cells there, and refusing that merge
// would refuse what the change may do on the head itself.
func requiredConflicts(ctx context.Context, q *db.Queries, st *docengine.Stage, orgID int64, base, source, merged docengine.Hash) ([]docengine.Conflict, error) {
	mr, err := st.Root(merged)
	if err != nil {
		return nil, err
	}
	var fieldIDs []int64
	for _, c := range mr.Columns {
		if c.Type == "enum" && c.FieldID != 0 {
			fieldIDs = append(fieldIDs, c.FieldID)
		}
	}
	if len(fieldIDs) == 0 {
		return nil, nil
	}
	fields, err := q.DocumentFieldListByIDs(ctx, idsJSON(fieldIDs))
	if err != nil {
		return nil, err
	}
	requiredName := map[int64]string{} // field id -> name
	for _, f := range fields {
		if f.OrganisationID == orgID && f.Required && f.Enabled {
			requiredName[f.ID] = f.Name
		}
	}
	var cols []docengine.Column // bound to a required field, in column order
	for _, c := range mr.Columns {
		if _, ok := requiredName[c.FieldID]; ok && c.Type == "enum" {
			cols = append(cols, c)
		}
	}
	if len(cols) == 0 {
		return nil, nil
	}
	sr, err := st.Root(source)
	if err != nil {
		return nil, err
	}
	kept := map[int64]bool{} // the source's columns: a cell gone with its column is no edit of the clause
	for _, c := range sr.Columns {
		kept[c.ID] = true
	}
	diff, err := st.DiffRevisions(base, source)
	if err != nil {
		return nil, err
	}
	touched := map[int64]bool{}
	var order []int64
	for _, ch := range diff {
		switch {
		case ch.Kind == "clause_added", ch.Kind == "clause_text", ch.Kind == "cell" && kept[ch.ColumnID]:
			if !touched[ch.ClauseID] {
				touched[ch.ClauseID] = true
				order = append(order, ch.ClauseID)
			}
		}
	}
	if len(order) == 0 {
		return nil, nil
	}
	doc, err := st.Open(merged)
	if err != nil {
		return nil, err
	}
	var out []docengine.Conflict
	for _, id := range order {
		pos, cl, err := doc.ClauseAt(id)
		if errors.Is(err, docengine.ErrNoClause) {
			continue // deleted in the merge
		}
		if err != nil {
			return nil, err
		}
		for _, c := range cols {
			if cl.Cells[c.ID] != "" {
				continue
			}
			out = append(out, docengine.Conflict{ID: fmt.Sprintf("constraint:%d:%d:%d:required", pos.Sheet, id, c.ID),
				Kind: docengine.KindConstraint, SheetID: pos.Sheet, ClauseID: id, ColumnID: c.ID, Ours: "",
				Theirs: "is empty in a clause the source changed: the column's item field " + requiredName[c.FieldID] + " is required"})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}
