package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"workspace/db"
)

// Document types and document item fields (documents.md "Rows the spec
// leaves open"): organisation settings managed with MANAGE_ORGANISATION,
// read by members. Decisions in docs/documents.md.

const (
	maxDocTypeName   = 20
	maxFieldName     = 200
	maxFieldUnits    = 50
	maxEnumValueText = 200
	maxFieldValues   = 200
	defaultRevFormat = 5 // alphabet
	maxRevFormat     = 6
)

// Item field types: the asset catalogue's field type values (text 0,
// number 1, boolean 2, date 3, enum 4); documents use the first five.

type documentTypeJSON struct {
	ID             db.ID  `json:"id"`
	OrganisationID db.ID  `json:"organisation_id"`
	Name           string `json:"name"`
	Description    string `json:"description"`
	LastNumber     int64  `json:"last_number"`
	NumberFormat   string `json:"number_format"`
	RevisionFormat int64  `json:"revision_format"`
}

func toDocumentType(t db.DocumentType) documentTypeJSON {
	return documentTypeJSON{ID: db.ID(t.ID), OrganisationID: db.ID(t.OrganisationID), Name: t.Name, Description: t.Description,
		LastNumber: t.LastNumber, NumberFormat: t.NumberFormat, RevisionFormat: t.RevisionFormat}
}

type documentTypeBody struct {
	Name           *string `json:"name"`
	Description    *string `json:"description"`
	NumberFormat   *string `json:"number_format"`
	RevisionFormat *int64  `json:"revision_format"`
}

var documentTypeReadOnly = []string{"id", "organisation_id", "last_number"}

func (b *documentTypeBody) apply(t *db.DocumentType) error {
	p := problems{}
	if b.Name != nil {
		t.Name = strings.TrimSpace(*b.Name)
		p.length("name", t.Name, 2, maxDocTypeName)
	}
	if b.Description != nil {
		t.Description = *b.Description
		p.length("description", t.Description, 0, maxDescriptionLen)
	}
	if b.NumberFormat != nil {
		t.NumberFormat = *b.NumberFormat
		if t.NumberFormat != "" && !strings.Contains(t.NumberFormat, numberToken) {
			p.add("number_format", "must contain "+numberToken+" (or be empty for the plain number)")
		}
		p.length("number_format", t.NumberFormat, 0, maxNumberFormat)
	}
	if b.RevisionFormat != nil {
		t.RevisionFormat = *b.RevisionFormat
		if t.RevisionFormat < 0 || t.RevisionFormat > maxRevFormat {
			p.add("revision_format", fmt.Sprintf("must be from 0 to %d", maxRevFormat))
		}
	}
	return p.err()
}

func documentTypeAccess(ctx context.Context, q *db.Queries, userID, id int64) (db.DocumentType, Access, error) {
	absent := notFound("The document type does not exist.")
	t, err := q.DocumentTypeGet(ctx, id)
	if db.IsNotFound(err) {
		return t, Access{}, absent
	}
	if err != nil {
		return t, Access{}, err
	}
	a, err := authorize(ctx, q, userID, t.OrganisationID, Scopes{})
	if db.IsNotFound(err) {
		return t, Access{}, absent
	}
	return t, a, err
}

func (s *Server) documentTypeCreate(rq *request) error {
	orgID, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var b documentTypeBody
	if err := rq.decodeCreate(&b, documentTypeReadOnly...); err != nil {
		return err
	}
	t := db.DocumentType{RevisionFormat: defaultRevFormat}
	if b.Name == nil {
		return fieldError("name", "is required")
	}
	if err := b.apply(&t); err != nil {
		return err
	}
	var out documentTypeJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		if _, err := orgAccess(rq, q, orgID, http.StatusBadRequest, ManageOrganisation); err != nil {
			return err
		}
		created, err := q.DocumentTypeCreate(rq.ctx, db.DocumentTypeCreateParams{ID: s.store.IDs.Next(), OrganisationID: orgID,
			Name: t.Name, Description: t.Description, NumberFormat: t.NumberFormat, RevisionFormat: t.RevisionFormat, CreatedAt: s.nowText()})
		if err != nil {
			return err
		}
		out = toDocumentType(created)
		return nil
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusCreated, out)
}

func (s *Server) documentTypeList(rq *request) error {
	return listPage(s, rq, listSpec[documentTypeJSON]{Path: "id",
		Fields: db.FilterFields{"name": {Column: "name", Kind: db.FieldString, CaseInsensitive: true}},
		Scope:  orgScope(rq, 0, "document_types", ""),
		Rows:   byIDs((*db.Queries).DocumentTypeListByIDs, each(toDocumentType))})
}

func (s *Server) documentTypeGet(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var out documentTypeJSON
	err = s.store.ReadTx(rq.ctx, func(q *db.Queries) error {
		t, a, err := documentTypeAccess(rq.ctx, q, rq.user.ID, id)
		if err != nil {
			return err
		}
		out = toDocumentType(t)
		return a.Require(0)
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

func (s *Server) documentTypePatch(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var b documentTypeBody
	ro, err := rq.decodePatch(&b, documentTypeReadOnly...)
	if err != nil {
		return err
	}
	var out documentTypeJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		t, a, err := documentTypeAccess(rq.ctx, q, rq.user.ID, id)
		if err != nil {
			return err
		}
		if err := a.Require(ManageOrganisation); err != nil {
			return err
		}
		if err := ro.check(toDocumentType(t)); err != nil {
			return err
		}
		if err := b.apply(&t); err != nil {
			return err
		}
		t, err = q.DocumentTypeUpdate(rq.ctx, db.DocumentTypeUpdateParams{ID: t.ID, Name: t.Name, Description: t.Description,
			NumberFormat: t.NumberFormat, RevisionFormat: t.RevisionFormat})
		if err != nil {
			return err
		}
		out = toDocumentType(t)
		return nil
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

// documentTypeDelete deletes a type (MANAGE_ORGANISATION, 204). Refused
// with 400 while any document of the organisation, a soft-deleted one too
// (it can be restored), has the type: the documents are changed first, so
// a delete never leaves a document naming a missing type.
func (s *Server) documentTypeDelete(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		t, a, err := documentTypeAccess(rq.ctx, q, rq.user.ID, id)
		if err != nil {
			return err
		}
		if err := a.Require(ManageOrganisation); err != nil {
			return err
		}
		used, err := q.DocumentTypeInUse(rq.ctx, &t.ID)
		if err != nil {
			return err
		}
		if used {
			return errorf(http.StatusBadRequest, "Documents have the type %s: give them another type before deleting it.", t.Name)
		}
		return q.DocumentTypeDelete(rq.ctx, db.DocumentTypeDeleteParams{ID: t.ID, OrganisationID: t.OrganisationID})
	})
	if err != nil {
		return err
	}
	return rq.noContent()
}

// Item fields.

type fieldValueJSON struct {
	ID              db.ID  `json:"id"`
	Value           string `json:"value"`
	UpdatedAt       string `json:"updated_at"`
	DocumentFieldID db.ID  `json:"document_field_id"`
	UpdatedBy       idJSON `json:"updated_by"`
}

type documentFieldJSON struct {
	ID             db.ID            `json:"id"`
	OrganisationID db.ID            `json:"organisation_id"`
	Required       bool             `json:"required"`
	Name           string           `json:"name"`
	Description    string           `json:"description"`
	Type           int64            `json:"type"`
	Units          string           `json:"units"`
	MultiLine      bool             `json:"multi_line"`
	MaxLength      *int64           `json:"max_length,omitempty"`
	DefaultValue   json.RawMessage  `json:"default_value"`
	Values         []fieldValueJSON `json:"values"`
	Enabled        bool             `json:"enabled"`
}

func toDocumentField(f db.DocumentField, values []db.DocumentFieldValue) documentFieldJSON {
	out := documentFieldJSON{ID: db.ID(f.ID), OrganisationID: db.ID(f.OrganisationID), Required: f.Required, Name: f.Name,
		Description: f.Description, Type: f.Type, Units: f.Units, MultiLine: f.MultiLine, MaxLength: f.MaxLength,
		DefaultValue: json.RawMessage(f.DefaultValue), Values: []fieldValueJSON{}, Enabled: f.Enabled}
	for _, v := range values {
		if v.FieldID == f.ID {
			out.Values = append(out.Values, fieldValueJSON{ID: db.ID(v.ID), Value: v.Value, UpdatedAt: v.UpdatedAt,
				DocumentFieldID: db.ID(f.ID), UpdatedBy: idJSON{db.ID(v.UpdatedBy)}})
		}
	}
	return out
}

// fieldValueBody is an enum value as sent: an existing id keeps the value
// (and its id) while its text is unchanged; new text gets a new id.
type fieldValueBody struct {
	ID    *db.ID `json:"id"`
	Value string `json:"value"`
}

type documentFieldBody struct {
	Required     *bool            `json:"required"`
	Name         *string          `json:"name"`
	Description  *string          `json:"description"`
	Type         *int64           `json:"type"`
	Units        *string          `json:"units"`
	MultiLine    *bool            `json:"multi_line"`
	MaxLength    Opt[int64]       `json:"max_length"`
	DefaultValue json.RawMessage  `json:"default_value"`
	Values       []fieldValueBody `json:"values"`
	Enabled      *bool            `json:"enabled"`
}

var documentFieldReadOnly = []string{"id", "organisation_id"}

func (b *documentFieldBody) apply(f *db.DocumentField, p problems) {
	if b.Name != nil {
		f.Name = strings.TrimSpace(*b.Name)
		p.length("name", f.Name, 2, maxFieldName)
	}
	if b.Description != nil {
		f.Description = *b.Description
		p.length("description", f.Description, 0, maxDescriptionLen)
	}
	if b.Units != nil {
		f.Units = *b.Units
		p.length("units", f.Units, 0, maxFieldUnits)
	}
	setIf(&f.Required, b.Required)
	setIf(&f.MultiLine, b.MultiLine)
	setIf(&f.Enabled, b.Enabled)
	if b.Type != nil {
		if *b.Type != f.Type && b.DefaultValue == nil {
			f.DefaultValue = "null" // the old type's default means nothing in the new one
		}
		f.Type = *b.Type
		if f.Type < fieldText || f.Type > fieldEnum {
			p.add("type", "must be 0 (text), 1 (number), 2 (boolean), 3 (date) or 4 (enum)")
		}
	}
	if b.MaxLength.Set {
		if b.MaxLength.Null {
			f.MaxLength = nil
		} else if b.MaxLength.Value < 1 {
			p.add("max_length", "must be at least 1 (or null for unlimited)")
		} else {
			v := b.MaxLength.Value
			f.MaxLength = &v
		}
	}
	if b.DefaultValue != nil {
		f.DefaultValue = string(b.DefaultValue)
	}
	if len(b.Values) > maxFieldValues {
		p.add("values", fmt.Sprintf("must have at most %d values", maxFieldValues))
	}
	for i, v := range b.Values {
		p.length(fmt.Sprintf("values[%d].value", i), strings.TrimSpace(v.Value), 1, maxEnumValueText)
	}
}

// setFieldValues replaces a field's enum values: an id whose text is
// unchanged keeps its row, anything else is a new value id; values left out
// are retired (documents keep naming them, lists stop showing them). It
// answers the renamed values: old id -> the new id of its new text.
func (s *Server) setFieldValues(ctx context.Context, q *db.Queries, f db.DocumentField, body []fieldValueBody, userID int64) (map[int64]int64, error) {
	cur, err := q.DocumentFieldValues(ctx, idsJSON([]int64{f.ID}))
	if err != nil {
		return nil, err
	}
	renamed := map[int64]int64{}
	byID := map[int64]db.DocumentFieldValue{}
	for _, v := range cur {
		byID[v.ID] = v
	}
	if err := q.DocumentFieldValuesRetire(ctx, f.ID); err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for i, v := range body {
		text := strings.TrimSpace(v.Value)
		if seen[text] {
			return nil, fieldError(fmt.Sprintf("values[%d].value", i), "repeats another value")
		}
		seen[text] = true
		var renames int64
		if v.ID != nil {
			old, ok := byID[int64(*v.ID)]
			if ok && old.Value == text {
				if err := q.DocumentFieldValueUnretire(ctx, db.DocumentFieldValueUnretireParams{ID: old.ID, FieldID: f.ID, Position: int64(i)}); err != nil {
					return nil, err
				}
				continue
			}
			if ok {
				renames = old.ID
			}
		}
		id := s.store.IDs.Next()
		if err := q.DocumentFieldValueCreate(ctx, db.DocumentFieldValueCreateParams{ID: id, FieldID: f.ID,
			Position: int64(i), Value: text, UpdatedAt: s.nowText(), UpdatedBy: userID}); err != nil {
			return nil, err
		}
		if renames != 0 {
			renamed[renames] = id
		}
	}
	return renamed, nil
}

func documentFieldAccess(ctx context.Context, q *db.Queries, userID, id int64) (db.DocumentField, Access, error) {
	absent := notFound("The document field does not exist.")
	f, err := q.DocumentFieldGet(ctx, id)
	if db.IsNotFound(err) {
		return f, Access{}, absent
	}
	if err != nil {
		return f, Access{}, err
	}
	a, err := authorize(ctx, q, userID, f.OrganisationID, Scopes{})
	if db.IsNotFound(err) {
		return f, Access{}, absent
	}
	return f, a, err
}

func loadField(ctx context.Context, q *db.Queries, f db.DocumentField) (documentFieldJSON, error) {
	vals, err := q.DocumentFieldValues(ctx, idsJSON([]int64{f.ID}))
	return toDocumentField(f, vals), err
}

func (s *Server) documentFieldCreate(rq *request) error {
	orgID, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var b documentFieldBody
	if err := rq.decodeCreate(&b, documentFieldReadOnly...); err != nil {
		return err
	}
	f := db.DocumentField{Enabled: true, DefaultValue: "null"}
	p := problems{}
	if b.Name == nil {
		p.add("name", "is required")
	}
	b.apply(&f, p)
	if err := p.err(); err != nil {
		return err
	}
	var out documentFieldJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		if _, err := orgAccess(rq, q, orgID, http.StatusBadRequest, ManageOrganisation); err != nil {
			return err
		}
		// created without its default, which may name a value made below
		created, err := q.DocumentFieldCreate(rq.ctx, db.DocumentFieldCreateParams{ID: s.store.IDs.Next(), OrganisationID: orgID,
			Required: f.Required, Name: f.Name, Description: f.Description, Type: f.Type, Units: f.Units, MultiLine: f.MultiLine,
			MaxLength: f.MaxLength, DefaultValue: "null", Enabled: f.Enabled, CreatedAt: s.nowText()})
		if err != nil {
			return err
		}
		if _, err := s.setFieldValues(rq.ctx, q, created, b.Values, rq.user.ID); err != nil {
			return err
		}
		created.DefaultValue = f.DefaultValue
		if err := settleDefault(rq.ctx, q, &created, nil); err != nil {
			return err
		}
		if created.DefaultValue != "null" {
			if created, err = q.DocumentFieldUpdate(rq.ctx, fieldUpdateParams(created)); err != nil {
				return err
			}
		}
		out, err = loadField(rq.ctx, q, created)
		return err
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusCreated, out)
}

func (s *Server) documentFieldList(rq *request) error {
	return listPage(s, rq, listSpec[documentFieldJSON]{Path: "id",
		Fields: db.FilterFields{"enabled": {Column: "enabled", Kind: db.FieldBool},
			"name": {Column: "name", Kind: db.FieldString, CaseInsensitive: true}},
		Scope: orgScope(rq, 0, "document_fields", ""),
		Rows: func(ctx context.Context, q *db.Queries, ids []int64) ([]documentFieldJSON, error) {
			rows, err := q.DocumentFieldListByIDs(ctx, idsJSON(ids))
			if err != nil {
				return nil, err
			}
			vals, err := q.DocumentFieldValues(ctx, idsJSON(ids))
			if err != nil {
				return nil, err
			}
			return each(func(r db.DocumentField) documentFieldJSON { return toDocumentField(r, vals) })(ctx, q, rows)
		}})
}

func (s *Server) documentFieldGet(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var out documentFieldJSON
	err = s.store.ReadTx(rq.ctx, func(q *db.Queries) error {
		f, a, err := documentFieldAccess(rq.ctx, q, rq.user.ID, id)
		if err != nil {
			return err
		}
		if err := a.Require(0); err != nil {
			return err
		}
		out, err = loadField(rq.ctx, q, f)
		return err
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

func (s *Server) documentFieldPatch(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var b documentFieldBody
	ro, err := rq.decodePatch(&b, documentFieldReadOnly...)
	if err != nil {
		return err
	}
	var out documentFieldJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		f, a, err := documentFieldAccess(rq.ctx, q, rq.user.ID, id)
		if err != nil {
			return err
		}
		if err := a.Require(ManageOrganisation); err != nil {
			return err
		}
		if err := ro.check(toDocumentField(f, nil)); err != nil {
			return err
		}
		oldType := f.Type
		p := problems{}
		b.apply(&f, p)
		if err := p.err(); err != nil {
			return err
		}
		if f.Type != oldType {
			// cells of bound columns hold values of the old type
			bound, err := fieldBound(rq.ctx, q, f.ID)
			if err != nil {
				return err
			}
			if bound {
				return fieldError("type", "cannot change while document columns are bound to the field: unbind or delete those columns on every branch first, or make a new field")
			}
		}
		var renamed map[int64]int64
		if b.Values != nil {
			if renamed, err = s.setFieldValues(rq.ctx, q, f, b.Values, rq.user.ID); err != nil {
				return err
			}
		}
		// a stored default is checked again when what it must fit changes
		if b.DefaultValue != nil || b.Type != nil || b.Values != nil || b.MaxLength.Set || b.MultiLine != nil {
			if err := settleDefault(rq.ctx, q, &f, renamed); err != nil {
				return err
			}
		}
		if f, err = q.DocumentFieldUpdate(rq.ctx, fieldUpdateParams(f)); err != nil {
			return err
		}
		out, err = loadField(rq.ctx, q, f)
		return err
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

func fieldUpdateParams(f db.DocumentField) db.DocumentFieldUpdateParams {
	return db.DocumentFieldUpdateParams{ID: f.ID, Required: f.Required, Name: f.Name, Description: f.Description, Type: f.Type,
		Units: f.Units, MultiLine: f.MultiLine, MaxLength: f.MaxLength, DefaultValue: f.DefaultValue, Enabled: f.Enabled}
}
