package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"workspace/db"
	"workspace/server/docengine"
)

// Item fields' types and defaults (docs/documents.md, "Item fields: type
// and default"): a field's type cannot change while a column of a branch
// head is bound to it, and its default_value is checked against the field
// when saved and written into the bound cells of every new clause.

// fieldValueProblem checks one value (a document's custom field value, or
// a field's default) against its field: text a string within max_length
// and one line unless multi_line, number a JSON number, boolean true or
// false, date YYYY-MM-DD, enum the id of a live value of the field (or,
// with byText, a live value's text). It answers the value as stored (enum:
// the value id as a string; others compacted), or a problem.
func fieldValueProblem(ctx context.Context, q *db.Queries, f db.DocumentField, raw json.RawMessage, byText bool) (json.RawMessage, string, error) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, "must be a JSON value", nil
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, raw); err != nil {
		return nil, "must be a JSON value", nil
	}
	switch f.Type {
	case fieldText:
		s, ok := v.(string)
		switch {
		case !ok:
			return nil, "must be a string", nil
		case f.MaxLength != nil && int64(len([]rune(s))) > *f.MaxLength:
			return nil, fmt.Sprintf("must be at most %d characters", *f.MaxLength), nil
		case len([]rune(s)) > maxFieldValueChars:
			return nil, fmt.Sprintf("must be at most %d characters", maxFieldValueChars), nil
		case !f.MultiLine && strings.ContainsAny(s, "\r\n"):
			return nil, "must be one line", nil
		}
	case fieldNumber:
		if _, ok := v.(float64); !ok {
			return nil, "must be a number", nil
		}
	case fieldBoolean:
		if _, ok := v.(bool); !ok {
			return nil, "must be true or false", nil
		}
	case fieldDate:
		if s, ok := v.(string); !ok || !validDate(s) {
			return nil, "must be a date as YYYY-MM-DD", nil
		}
	case fieldEnum:
		s, _ := v.(string)
		vals, err := q.DocumentFieldValues(ctx, idsJSON([]int64{f.ID}))
		if err != nil {
			return nil, "", err
		}
		vid, isID := db.ParseID(s)
		for _, x := range vals {
			if isID && x.ID == int64(vid) {
				out, _ := json.Marshal(s)
				return out, "", nil
			}
		}
		if byText && s != "" {
			for _, x := range vals {
				if x.Value == strings.TrimSpace(s) {
					out, _ := json.Marshal(db.ID(x.ID).String())
					return out, "", nil
				}
			}
			return nil, "must be one of the field's values (its id or its text)", nil
		}
		return nil, "must be the id of one of the field's values", nil
	}
	return compact.Bytes(), "", nil
}

// settleDefault checks and normalises a field's default_value once its
// type and values are as they will be saved (after setFieldValues): null is
// no default; anything else must fit the field (fieldValueProblem, an enum
// value by id or text), else 400 naming default_value. renamed maps the
// value ids a change renamed to their new ids, so a default follows its
// value's rename.
func settleDefault(ctx context.Context, q *db.Queries, f *db.DocumentField, renamed map[int64]int64) error {
	if f.DefaultValue == "" || f.DefaultValue == "null" {
		f.DefaultValue = "null"
		return nil
	}
	raw := json.RawMessage(f.DefaultValue)
	if f.Type == fieldEnum && len(renamed) > 0 {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			if id, ok := db.ParseID(s); ok {
				if to, ok := renamed[int64(id)]; ok {
					raw, _ = json.Marshal(db.ID(to).String())
				}
			}
		}
	}
	stored, problem, err := fieldValueProblem(ctx, q, *f, raw, true)
	if err != nil {
		return err
	}
	if problem != "" {
		return fieldError("default_value", problem)
	}
	f.DefaultValue = string(stored)
	return nil
}

// fieldTypeColumn is the column type whose cells hold a field type's values.
var fieldTypeColumn = map[int64]string{fieldText: "text", fieldNumber: "number", fieldBoolean: "boolean", fieldDate: "date", fieldEnum: "enum"}

// defaultCell is a stored default as a cell value ("" when there is none).
func defaultCell(f db.DocumentField) string {
	var v any
	if json.Unmarshal([]byte(f.DefaultValue), &v) != nil {
		return ""
	}
	switch x := v.(type) {
	case string:
		return x
	case bool:
		if x {
			return "true"
		}
		return "false"
	case float64:
		return f.DefaultValue // the number as written (compacted when saved)
	}
	return ""
}

// applyDefaults writes the defaults of the item fields bound to doc's
// columns into the empty cells of the new clause (the change flow calls it
// on the change's final content, after any merge onto the head, so the
// columns are the ones the new revision has). Only enabled fields of the
// document's organisation count, and only when the column's type holds the
// field's type.
func applyDefaults(ctx context.Context, q *db.Queries, orgID int64, doc *docengine.Doc, clauseID int64) error {
	var ids []int64
	for _, c := range doc.R.Columns {
		if c.FieldID != 0 {
			ids = append(ids, c.FieldID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	_, cl, err := doc.ClauseAt(clauseID)
	if errors.Is(err, docengine.ErrNoClause) {
		return nil
	}
	if err != nil {
		return err
	}
	fields, err := q.DocumentFieldListByIDs(ctx, idsJSON(ids))
	if err != nil {
		return err
	}
	// each default checked again as a value of its field: a default saved
	// before defaults were checked, or an enum value retired since, is left out
	cellOf := map[int64]string{}
	for _, f := range fields {
		if f.OrganisationID != orgID || !f.Enabled || f.DefaultValue == "null" {
			continue
		}
		stored, problem, err := fieldValueProblem(ctx, q, f, json.RawMessage(f.DefaultValue), false)
		if err != nil {
			return err
		}
		if problem == "" {
			f.DefaultValue = string(stored)
			if v := defaultCell(f); v != "" {
				cellOf[f.ID] = v
			}
		}
	}
	types := map[int64]int64{}
	for _, f := range fields {
		types[f.ID] = f.Type
	}
	for _, c := range doc.R.Columns {
		v, ok := cellOf[c.FieldID]
		if !ok || fieldTypeColumn[types[c.FieldID]] != c.Type || cl.Cells[c.ID] != "" {
			continue
		}
		if err := doc.SetCell(clauseID, c.ID, v); err != nil {
			return err
		}
	}
	return nil
}

// fieldBound says whether a column of a live branch head of any document
// that ever bound the field (document_field_bindings) is bound to it now.
// It reads only those documents' head roots (one chunk each, shared hashes
// once), so its cost follows the documents that used the field, not the
// organisation's.
func fieldBound(ctx context.Context, q *db.Queries, fieldID int64) (bool, error) {
	heads, err := q.DocumentFieldBoundHeads(ctx, fieldID)
	if err != nil {
		return false, err
	}
	st := docengine.NewStage(chunkStore{ctx, q})
	for _, h := range heads {
		r, err := st.Root(hashOf(h))
		if err != nil {
			return false, err
		}
		for _, c := range r.Columns {
			if c.FieldID == fieldID {
				return true, nil
			}
		}
	}
	return false, nil
}
