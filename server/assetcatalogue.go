package server

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"workspace/db"
)

// The asset catalogue (spec: Assets): statuses, zones, fields with their
// enum values, and types with the fields and zones attached to them.
// Decisions in docs/assets.md.

const (
	defaultAssetStatusName = "new asset status"
	defaultAssetZoneName   = "new asset zone"
	defaultAssetTypeName   = "new asset type"
	maxUnits               = 20
	maxAssetEnumValues     = 200
	maxEnumValue           = 100
)

// Asset field types (operations-data.md "Assets").
const (
	fieldText int64 = iota
	fieldNumber
	fieldBoolean
	fieldDate
	fieldEnum
	fieldUser
	fieldLocation
	fieldTypeEnd
)

// Asset group ephemerality (spec: integer values).
const (
	ephemeralSingle int64 = iota
	ephemeralTemporary
	ephemeralPermanent
)

// catalogueRow loads one catalogue row by id and the caller's access in
// its organisation; a missing row (or organisation) is 404 with what.
func catalogueRow[T any](ctx context.Context, q *db.Queries, userID, id int64, what string,
	get func(context.Context, int64) (T, error), org func(T) int64) (T, Access, error) {
	row, err := get(ctx, id)
	if db.IsNotFound(err) {
		return row, Access{}, notFound("The %s does not exist.", what)
	}
	if err != nil {
		return row, Access{}, err
	}
	a, err := authorize(ctx, q, userID, org(row), Scopes{})
	if db.IsNotFound(err) {
		return row, Access{}, notFound("The %s does not exist.", what)
	}
	return row, a, err
}

var nameFilter = db.FilterField{Column: "name", Kind: db.FieldString, CaseInsensitive: true}

// ---- Statuses

type assetStatusJSON struct {
	ID             db.ID  `json:"id"`
	OrganisationID db.ID  `json:"organisation_id"`
	Active         bool   `json:"active"`
	Name           string `json:"name"`
	Description    string `json:"description"`
}

func toAssetStatus(st db.AssetStatus) assetStatusJSON {
	return assetStatusJSON{ID: db.ID(st.ID), OrganisationID: db.ID(st.OrganisationID), Active: st.Active, Name: st.Name, Description: st.Description}
}

type assetStatusBody struct {
	Name        *string `json:"name"`
	Description *string `json:"description"`
	Active      *bool   `json:"active"`
}

func (b *assetStatusBody) validate() error {
	p := problems{}
	checkAssetName(p, "name", b.Name)
	optText(p, "description", b.Description, maxDescriptionLen)
	return p.err()
}

func (s *Server) assetStatusCreate(rq *request) error {
	orgID, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var b assetStatusBody
	if err := rq.decodeCreate(&b, "id", "organisation_id"); err != nil {
		return err
	}
	if err := b.validate(); err != nil {
		return err
	}
	active := true
	setIf(&active, b.Active)
	var out assetStatusJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		if _, err := orgAccess(rq, q, orgID, http.StatusBadRequest, ManageFleets); err != nil {
			return err
		}
		st, err := q.AssetStatusCreate(rq.ctx, db.AssetStatusCreateParams{ID: s.store.IDs.Next(), OrganisationID: orgID,
			Name: orDefault(b.Name, defaultAssetStatusName), Description: orDefault(b.Description, ""), Active: active, CreatedAt: s.nowText()})
		if err != nil {
			return err
		}
		out = toAssetStatus(st)
		return nil
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusCreated, out)
}

func (s *Server) assetStatusList(rq *request) error {
	return listPage(s, rq, listSpec[assetStatusJSON]{Path: "id",
		Fields: db.FilterFields{"name": nameFilter, "active": {Column: "active", Kind: db.FieldBool}},
		Scope:  orgScope(rq, 0, "asset_statuses", ""),
		Rows:   byIDs((*db.Queries).AssetStatusListByIDs, each(toAssetStatus))})
}

func (s *Server) assetStatusGet(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	st, a, err := catalogueRow(rq.ctx, s.store.R, rq.user.ID, id, "asset status", s.store.R.AssetStatusGet, func(r db.AssetStatus) int64 { return r.OrganisationID })
	if err != nil {
		return err
	}
	if err := a.Require(0); err != nil {
		return err
	}
	return rq.json(http.StatusOK, toAssetStatus(st))
}

// assetStatusPatch: the spec's row asks membership only (docs/assets.md).
func (s *Server) assetStatusPatch(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var b assetStatusBody
	ro, err := rq.decodePatch(&b, "id", "organisation_id")
	if err != nil {
		return err
	}
	if err := b.validate(); err != nil {
		return err
	}
	var out assetStatusJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		st, a, err := catalogueRow(rq.ctx, q, rq.user.ID, id, "asset status", q.AssetStatusGet, func(r db.AssetStatus) int64 { return r.OrganisationID })
		if err != nil {
			return err
		}
		if err := a.Require(0); err != nil {
			return err
		}
		if err := ro.check(toAssetStatus(st)); err != nil {
			return err
		}
		setIf(&st.Active, b.Active)
		st, err = q.AssetStatusUpdate(rq.ctx, db.AssetStatusUpdateParams{ID: st.ID, OrganisationID: st.OrganisationID,
			Name: orDefault(b.Name, st.Name), Description: orDefault(b.Description, st.Description), Active: st.Active})
		if err != nil {
			return err
		}
		out = toAssetStatus(st)
		return nil
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

// ---- Zones

type assetZoneJSON struct {
	ID             db.ID  `json:"id"`
	OrganisationID db.ID  `json:"organisation_id"`
	Name           string `json:"name"`
	Code           string `json:"code"`
	Description    string `json:"description"`
}

func toAssetZone(z db.AssetZone) assetZoneJSON {
	return assetZoneJSON{ID: db.ID(z.ID), OrganisationID: db.ID(z.OrganisationID), Name: z.Name, Code: z.Code, Description: z.Description}
}

type assetZoneBody struct {
	Name        *string `json:"name"`
	Code        *string `json:"code"`
	Description *string `json:"description"`
}

func (b *assetZoneBody) validate() error {
	p := problems{}
	checkAssetName(p, "name", b.Name)
	optText(p, "code", b.Code, maxCode)
	optText(p, "description", b.Description, maxDescriptionLen)
	return p.err()
}

func (s *Server) assetZoneCreate(rq *request) error {
	orgID, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var b assetZoneBody
	if err := rq.decodeCreate(&b, "id", "organisation_id"); err != nil {
		return err
	}
	if err := b.validate(); err != nil {
		return err
	}
	var out assetZoneJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		if _, err := orgAccess(rq, q, orgID, http.StatusBadRequest, ManageFleets); err != nil {
			return err
		}
		z, err := q.AssetZoneCreate(rq.ctx, db.AssetZoneCreateParams{ID: s.store.IDs.Next(), OrganisationID: orgID,
			Name: orDefault(b.Name, defaultAssetZoneName), Code: orDefault(b.Code, ""), Description: orDefault(b.Description, ""), CreatedAt: s.nowText()})
		if err != nil {
			return err
		}
		out = toAssetZone(z)
		return nil
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusCreated, out)
}

// assetZoneList: type (zones attached to that type) and name (a
// case-insensitive part of the name) filters, and $filter.
func (s *Server) assetZoneList(rq *request) error {
	where, args := []string{}, []any{}
	qv := rq.r.URL.Query()
	if v := qv.Get("type"); v != "" {
		id, ok := db.ParseID(v)
		if !ok {
			return fieldError("type", "must be a snowflake id")
		}
		where = append(where, "id IN (SELECT zone_id FROM asset_type_zones WHERE type_id = ?)")
		args = append(args, int64(id))
	}
	if v := qv.Get("name"); v != "" {
		where = append(where, "instr("+db.CaseFoldFunc+"(name), ?) > 0")
		args = append(args, strings.ToLower(v))
	}
	return listPage(s, rq, listSpec[assetZoneJSON]{Path: "id",
		Fields: db.FilterFields{"name": nameFilter, "code": {Column: "code", Kind: db.FieldString, CaseInsensitive: true}},
		Scope:  orgScope(rq, 0, "asset_zones", strings.Join(where, " AND "), args...),
		Rows:   byIDs((*db.Queries).AssetZoneListByIDs, each(toAssetZone))})
}

func (s *Server) assetZoneGet(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	z, a, err := catalogueRow(rq.ctx, s.store.R, rq.user.ID, id, "asset zone", s.store.R.AssetZoneGet, func(r db.AssetZone) int64 { return r.OrganisationID })
	if err != nil {
		return err
	}
	if err := a.Require(0); err != nil {
		return err
	}
	return rq.json(http.StatusOK, toAssetZone(z))
}

func (s *Server) assetZonePatch(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var b assetZoneBody
	ro, err := rq.decodePatch(&b, "id", "organisation_id")
	if err != nil {
		return err
	}
	if err := b.validate(); err != nil {
		return err
	}
	var out assetZoneJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		z, a, err := catalogueRow(rq.ctx, q, rq.user.ID, id, "asset zone", q.AssetZoneGet, func(r db.AssetZone) int64 { return r.OrganisationID })
		if err != nil {
			return err
		}
		if err := a.Require(ManageFleets); err != nil {
			return err
		}
		if err := ro.check(toAssetZone(z)); err != nil {
			return err
		}
		z, err = q.AssetZoneUpdate(rq.ctx, db.AssetZoneUpdateParams{ID: z.ID, OrganisationID: z.OrganisationID,
			Name: orDefault(b.Name, z.Name), Code: orDefault(b.Code, z.Code), Description: orDefault(b.Description, z.Description)})
		if err != nil {
			return err
		}
		out = toAssetZone(z)
		return nil
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

// ---- Fields

type enumValueJSON struct {
	ID           db.ID  `json:"id"`
	AssetFieldID db.ID  `json:"asset_field_id"`
	Value        string `json:"value"`
}

type assetFieldJSON struct {
	ID             db.ID           `json:"id"`
	OrganisationID db.ID           `json:"organisation_id"`
	Name           string          `json:"name"`
	Description    string          `json:"description"`
	Type           int64           `json:"type"`
	Units          *string         `json:"units"`
	EnumValues     []enumValueJSON `json:"enum_values"`
}

func toAssetField(f db.AssetField, values []db.AssetFieldEnumValue) assetFieldJSON {
	out := assetFieldJSON{ID: db.ID(f.ID), OrganisationID: db.ID(f.OrganisationID), Name: f.Name, Description: f.Description,
		Type: f.Type, Units: f.Units, EnumValues: []enumValueJSON{}}
	for _, v := range values {
		out.EnumValues = append(out.EnumValues, enumValueJSON{ID: db.ID(v.ID), AssetFieldID: db.ID(v.AssetFieldID), Value: v.Value})
	}
	return out
}

// enumValuesOf reads the enum values of fields, by field id.
func enumValuesOf(ctx context.Context, q *db.Queries, fieldIDs []int64) (map[int64][]db.AssetFieldEnumValue, error) {
	rows, err := q.AssetFieldEnumValuesFor(ctx, idsJSON(fieldIDs))
	if err != nil {
		return nil, err
	}
	out := map[int64][]db.AssetFieldEnumValue{}
	for _, r := range rows {
		out[r.AssetFieldID] = append(out[r.AssetFieldID], r)
	}
	return out, nil
}

type assetFieldBody struct {
	Name        *string     `json:"name"`
	Description *string     `json:"description"`
	Type        *int64      `json:"type"`
	Units       Opt[string] `json:"units"`
	Values      *[]string   `json:"values"`
}

var assetFieldReadOnly = []string{"id", "organisation_id", "enum_values"}

func (b *assetFieldBody) validate(create bool) error {
	p := problems{}
	if create && b.Name == nil {
		p.add("name", "is required")
	}
	checkAssetName(p, "name", b.Name)
	optText(p, "description", b.Description, maxDescriptionLen)
	switch {
	case create && b.Type == nil:
		p.add("type", "is required")
	case b.Type != nil && (*b.Type < 0 || *b.Type >= fieldTypeEnd):
		p.add("type", fmt.Sprintf("must be a field type from 0 to %d", fieldTypeEnd-1))
	}
	if b.Units.Set && !b.Units.Null {
		p.length("units", b.Units.Value, 0, maxUnits)
	}
	if b.Values != nil {
		if len(*b.Values) > maxAssetEnumValues {
			p.add("values", fmt.Sprintf("must hold at most %d values", maxAssetEnumValues))
		}
		seen := map[string]bool{}
		for i, v := range *b.Values {
			v = strings.TrimSpace(v)
			(*b.Values)[i] = v
			switch {
			case v == "" || len([]rune(v)) > maxEnumValue:
				p.add("values", fmt.Sprintf("must be 1-%d characters each", maxEnumValue))
			case seen[v]:
				p.add("values", "must not repeat a value")
			}
			seen[v] = true
		}
	}
	return p.err()
}

// setEnumValues makes a field's enum values the given list in order:
// values kept by text keep their ids, new ones get new ids, the rest go.
func (s *Server) setEnumValues(ctx context.Context, q *db.Queries, f db.AssetField, current []db.AssetFieldEnumValue, values []string) error {
	byText := map[string]db.AssetFieldEnumValue{}
	for _, v := range current {
		byText[v.Value] = v
	}
	keep := map[int64]bool{}
	// Moves first to positions past the end, so a value taking another's
	// place never meets it.
	for i, text := range values {
		if v, ok := byText[text]; ok {
			keep[v.ID] = true
			if err := q.AssetFieldEnumValueMove(ctx, db.AssetFieldEnumValueMoveParams{ID: v.ID, AssetFieldID: f.ID, Position: int64(i)}); err != nil {
				return err
			}
		}
	}
	for _, v := range current {
		if !keep[v.ID] {
			if err := q.AssetFieldEnumValueDelete(ctx, db.AssetFieldEnumValueDeleteParams{ID: v.ID, AssetFieldID: f.ID}); err != nil {
				return err
			}
		}
	}
	for i, text := range values {
		if _, ok := byText[text]; ok {
			continue
		}
		if _, err := q.AssetFieldEnumValueCreate(ctx, db.AssetFieldEnumValueCreateParams{ID: s.store.IDs.Next(),
			OrganisationID: f.OrganisationID, AssetFieldID: f.ID, Value: text, Position: int64(i)}); err != nil {
			return err
		}
	}
	return nil
}

func (s *Server) assetFieldCreate(rq *request) error {
	orgID, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var b assetFieldBody
	if err := rq.decodeCreate(&b, assetFieldReadOnly...); err != nil {
		return err
	}
	if err := b.validate(true); err != nil {
		return err
	}
	if b.Values != nil && *b.Type != fieldEnum && len(*b.Values) > 0 {
		return fieldError("values", "are only for enum fields (type 4)")
	}
	var units *string
	if b.Units.Set && !b.Units.Null {
		units = &b.Units.Value
	}
	var out assetFieldJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		if _, err := orgAccess(rq, q, orgID, http.StatusBadRequest, ManageFleets); err != nil {
			return err
		}
		f, err := q.AssetFieldCreate(rq.ctx, db.AssetFieldCreateParams{ID: s.store.IDs.Next(), OrganisationID: orgID,
			Name: *b.Name, Description: orDefault(b.Description, ""), Type: *b.Type, Units: units, CreatedAt: s.nowText()})
		if err != nil {
			return err
		}
		if b.Values != nil {
			if err := s.setEnumValues(rq.ctx, q, f, nil, *b.Values); err != nil {
				return err
			}
		}
		vals, err := enumValuesOf(rq.ctx, q, []int64{f.ID})
		if err != nil {
			return err
		}
		out = toAssetField(f, vals[f.ID])
		return nil
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusCreated, out)
}

func (s *Server) assetFieldList(rq *request) error {
	return listPage(s, rq, listSpec[assetFieldJSON]{Path: "id",
		Fields: db.FilterFields{"name": nameFilter, "type": {Column: "type", Kind: db.FieldNumber}},
		Scope:  orgScope(rq, 0, "asset_fields", ""),
		Rows: func(ctx context.Context, q *db.Queries, ids []int64) ([]assetFieldJSON, error) {
			vals, err := enumValuesOf(ctx, q, ids)
			if err != nil {
				return nil, err
			}
			return byIDs((*db.Queries).AssetFieldListByIDs, each(func(r db.AssetField) assetFieldJSON {
				return toAssetField(r, vals[r.ID])
			}))(ctx, q, ids)
		}})
}

func (s *Server) assetFieldGet(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var out assetFieldJSON
	err = s.store.ReadTx(rq.ctx, func(q *db.Queries) error {
		f, a, err := catalogueRow(rq.ctx, q, rq.user.ID, id, "asset field", q.AssetFieldGet, func(r db.AssetField) int64 { return r.OrganisationID })
		if err != nil {
			return err
		}
		if err := a.Require(0); err != nil {
			return err
		}
		vals, err := enumValuesOf(rq.ctx, q, []int64{f.ID})
		if err != nil {
			return err
		}
		out = toAssetField(f, vals[f.ID])
		return nil
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

// assetFieldPatch: a field's type changes only while no asset holds a value
// of it; an enum value in use cannot be removed.
func (s *Server) assetFieldPatch(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var b assetFieldBody
	ro, err := rq.decodePatch(&b, assetFieldReadOnly...)
	if err != nil {
		return err
	}
	if err := b.validate(false); err != nil {
		return err
	}
	var out assetFieldJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		f, a, err := catalogueRow(rq.ctx, q, rq.user.ID, id, "asset field", q.AssetFieldGet, func(r db.AssetField) int64 { return r.OrganisationID })
		if err != nil {
			return err
		}
		if err := a.Require(ManageFleets); err != nil {
			return err
		}
		vals, err := enumValuesOf(rq.ctx, q, []int64{f.ID})
		if err != nil {
			return err
		}
		if err := ro.check(toAssetField(f, vals[f.ID])); err != nil {
			return err
		}
		typ := f.Type
		if b.Type != nil && *b.Type != f.Type {
			used, err := fieldInUse(rq.ctx, q, f.ID)
			if err != nil {
				return err
			}
			if used {
				return fieldError("type", "cannot change while assets hold values of this field")
			}
			typ = *b.Type
		}
		if b.Values != nil && typ != fieldEnum && len(*b.Values) > 0 {
			return fieldError("values", "are only for enum fields (type 4)")
		}
		units := f.Units
		if b.Units.Set {
			units = nil
			if !b.Units.Null {
				units = &b.Units.Value
			}
		}
		if b.Values != nil || typ != fieldEnum {
			next := []string{}
			if b.Values != nil {
				next = *b.Values
			}
			if err := checkEnumRemovals(rq.ctx, q, vals[f.ID], next); err != nil {
				return err
			}
			if err := s.setEnumValues(rq.ctx, q, f, vals[f.ID], next); err != nil {
				return err
			}
		}
		f, err = q.AssetFieldUpdate(rq.ctx, db.AssetFieldUpdateParams{ID: f.ID, OrganisationID: f.OrganisationID,
			Name: orDefault(b.Name, f.Name), Description: orDefault(b.Description, f.Description), Type: typ, Units: units})
		if err != nil {
			return err
		}
		vals, err = enumValuesOf(rq.ctx, q, []int64{f.ID})
		if err != nil {
			return err
		}
		out = toAssetField(f, vals[f.ID])
		return nil
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

// ---- Types

type typeFieldJSON struct {
	TypeID     db.ID           `json:"type_id"`
	Field      assetFieldJSON  `json:"field"`
	EnumValues []enumValueJSON `json:"enum_values"`
}

type assetTypeJSON struct {
	ID             db.ID           `json:"id"`
	OrganisationID db.ID           `json:"organisation_id"`
	FleetID        *db.ID          `json:"fleet_id"`
	PrefixID       *db.ID          `json:"prefix_id"`
	Ephemerality   int64           `json:"ephemerality"`
	Name           string          `json:"name"`
	Description    string          `json:"description"`
	Fields         []typeFieldJSON `json:"fields"`
	Zones          []assetZoneJSON `json:"zones"`
}

// renderTypes renders types with their attached fields (and enum values)
// and zones, in three reads however many types there are.
func renderTypes(ctx context.Context, q *db.Queries, types []db.AssetType) ([]assetTypeJSON, error) {
	ids := make([]int64, len(types))
	for i, t := range types {
		ids[i] = t.ID
	}
	fields, err := q.AssetTypeFieldsFor(ctx, idsJSON(ids))
	if err != nil {
		return nil, err
	}
	fieldIDs := make([]int64, len(fields))
	for i, f := range fields {
		fieldIDs[i] = f.AssetField.ID
	}
	vals, err := enumValuesOf(ctx, q, fieldIDs)
	if err != nil {
		return nil, err
	}
	zones, err := q.AssetTypeZonesFor(ctx, idsJSON(ids))
	if err != nil {
		return nil, err
	}
	byType := map[int64]*assetTypeJSON{}
	out := make([]assetTypeJSON, len(types))
	for i, t := range types {
		out[i] = assetTypeJSON{ID: db.ID(t.ID), OrganisationID: db.ID(t.OrganisationID), FleetID: optID(t.FleetID), PrefixID: optID(t.PrefixID),
			Ephemerality: t.Ephemerality, Name: t.Name, Description: t.Description, Fields: []typeFieldJSON{}, Zones: []assetZoneJSON{}}
		byType[t.ID] = &out[i]
	}
	for _, f := range fields {
		fj := toAssetField(f.AssetField, vals[f.AssetField.ID])
		byType[f.TypeID].Fields = append(byType[f.TypeID].Fields, typeFieldJSON{TypeID: db.ID(f.TypeID), Field: fj, EnumValues: fj.EnumValues})
	}
	for _, z := range zones {
		byType[z.TypeID].Zones = append(byType[z.TypeID].Zones, toAssetZone(z.AssetZone))
	}
	return out, nil
}

func renderType(ctx context.Context, q *db.Queries, t db.AssetType) (assetTypeJSON, error) {
	out, err := renderTypes(ctx, q, []db.AssetType{t})
	if err != nil {
		return assetTypeJSON{}, err
	}
	return out[0], nil
}

type assetTypeBody struct {
	FleetID      refID   `json:"fleet_id"`
	PrefixID     refID   `json:"prefix_id"`
	Ephemerality *int64  `json:"ephemerality"`
	Name         *string `json:"name"`
	Description  *string `json:"description"`
}

var assetTypeReadOnly = []string{"id", "organisation_id", "ephemerality", "fields", "zones"}

func (b *assetTypeBody) validate() error {
	p := problems{}
	checkAssetName(p, "name", b.Name)
	optText(p, "description", b.Description, maxDescriptionLen)
	return p.err()
}

func (s *Server) assetTypeCreate(rq *request) error {
	orgID, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var b assetTypeBody
	if err := rq.decodeCreate(&b, "id", "organisation_id", "fields", "zones"); err != nil {
		return err
	}
	p := problems{}
	if b.Ephemerality == nil {
		p.add("ephemerality", "is required")
	} else if *b.Ephemerality < ephemeralSingle || *b.Ephemerality > ephemeralPermanent {
		p.add("ephemerality", "must be 0 (single), 1 (temporary) or 2 (permanent)")
	}
	if err := p.err(); err != nil {
		return err
	}
	if err := b.validate(); err != nil {
		return err
	}
	var out assetTypeJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		if _, err := orgAccess(rq, q, orgID, http.StatusBadRequest, ManageFleets); err != nil {
			return err
		}
		if err := fleetInOrg(rq.ctx, q, orgID, "fleet_id", b.FleetID); err != nil {
			return err
		}
		if err := checkPrefix(rq.ctx, q, orgID, b.PrefixID.ptr()); err != nil {
			return err
		}
		t, err := q.AssetTypeCreate(rq.ctx, db.AssetTypeCreateParams{ID: s.store.IDs.Next(), OrganisationID: orgID,
			FleetID: b.FleetID.ptr(), PrefixID: b.PrefixID.ptr(), Ephemerality: *b.Ephemerality,
			Name: orDefault(b.Name, defaultAssetTypeName), Description: orDefault(b.Description, ""), CreatedAt: s.nowText()})
		if err != nil {
			return err
		}
		out, err = renderType(rq.ctx, q, t)
		return err
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusCreated, out)
}

// assetTypeList: the ephemerality query filter, and $filter.
func (s *Server) assetTypeList(rq *request) error {
	where, args := "", []any{}
	if v := rq.r.URL.Query().Get("ephemerality"); v != "" {
		switch v {
		case "0", "1", "2":
			where, args = "ephemerality = ?", []any{int64(v[0] - '0')}
		default:
			return fieldError("ephemerality", "must be 0, 1 or 2")
		}
	}
	return listPage(s, rq, listSpec[assetTypeJSON]{Path: "id",
		Fields: db.FilterFields{"name": nameFilter, "ephemerality": {Column: "ephemerality", Kind: db.FieldNumber}, "fleet_id": {Column: "fleet_id", Kind: db.FieldID}},
		Scope:  orgScope(rq, 0, "asset_types", where, args...),
		Rows:   byIDs((*db.Queries).AssetTypeListByIDs, renderTypes)})
}

func assetTypeAccess(ctx context.Context, q *db.Queries, userID, id int64) (db.AssetType, Access, error) {
	return catalogueRow(ctx, q, userID, id, "asset type", q.AssetTypeGet, func(r db.AssetType) int64 { return r.OrganisationID })
}

func (s *Server) assetTypeGet(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var out assetTypeJSON
	err = s.store.ReadTx(rq.ctx, func(q *db.Queries) error {
		t, a, err := assetTypeAccess(rq.ctx, q, rq.user.ID, id)
		if err != nil {
			return err
		}
		if err := a.Require(0); err != nil {
			return err
		}
		out, err = renderType(rq.ctx, q, t)
		return err
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

func (s *Server) assetTypePatch(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var b assetTypeBody
	ro, err := rq.decodePatch(&b, assetTypeReadOnly...)
	if err != nil {
		return err
	}
	if err := b.validate(); err != nil {
		return err
	}
	var out assetTypeJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		t, a, err := assetTypeAccess(rq.ctx, q, rq.user.ID, id)
		if err != nil {
			return err
		}
		if err := a.Require(ManageFleets); err != nil {
			return err
		}
		if err := ro.checkLoaded(func() (any, error) { return renderType(rq.ctx, q, t) }); err != nil {
			return err
		}
		if b.FleetID.Set {
			if err := fleetInOrg(rq.ctx, q, t.OrganisationID, "fleet_id", b.FleetID); err != nil {
				return err
			}
			t.FleetID = b.FleetID.ptr()
		}
		if b.PrefixID.Set {
			if err := checkPrefix(rq.ctx, q, t.OrganisationID, b.PrefixID.ptr()); err != nil {
				return err
			}
			t.PrefixID = b.PrefixID.ptr()
		}
		t, err = q.AssetTypeUpdate(rq.ctx, db.AssetTypeUpdateParams{ID: t.ID, OrganisationID: t.OrganisationID,
			Name: orDefault(b.Name, t.Name), Description: orDefault(b.Description, t.Description), FleetID: t.FleetID, PrefixID: t.PrefixID})
		if err != nil {
			return err
		}
		out, err = renderType(rq.ctx, q, t)
		return err
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

// assetTypeAttach is PUT and DELETE of /api/assettype/{id}/asset-fields/
// {fieldId} and /asset-zones/{zoneId}: MANAGE_FLEETS; the attached row
// must exist (404) and be of the type's organisation (403); detaching what
// is not attached is 400. Answers the type.
func (s *Server) assetTypeAttach(zone, attach bool) handlerFunc {
	param, what := "fieldId", "asset field"
	if zone {
		param, what = "zoneId", "asset zone"
	}
	return func(rq *request) error {
		id, err := rq.pathID("id")
		if err != nil {
			return err
		}
		otherID, err := rq.pathID(param)
		if err != nil {
			return err
		}
		var out assetTypeJSON
		err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
			t, a, err := assetTypeAccess(rq.ctx, q, rq.user.ID, id)
			if err != nil {
				return err
			}
			if err := a.Require(ManageFleets); err != nil {
				return err
			}
			var otherOrg int64
			if zone {
				z, err := q.AssetZoneGet(rq.ctx, otherID)
				if db.IsNotFound(err) {
					return notFound("The %s does not exist.", what)
				}
				if err != nil {
					return err
				}
				otherOrg = z.OrganisationID
			} else {
				f, err := q.AssetFieldGet(rq.ctx, otherID)
				if db.IsNotFound(err) {
					return notFound("The %s does not exist.", what)
				}
				if err != nil {
					return err
				}
				otherOrg = f.OrganisationID
			}
			if otherOrg != t.OrganisationID {
				return forbidden("The %s belongs to another organisation.", what)
			}
			var n int64
			switch {
			case zone && attach:
				err = q.AssetTypeZoneAttach(rq.ctx, db.AssetTypeZoneAttachParams{TypeID: t.ID, ZoneID: otherID, OrganisationID: t.OrganisationID})
			case zone:
				n, err = q.AssetTypeZoneDetach(rq.ctx, db.AssetTypeZoneDetachParams{TypeID: t.ID, ZoneID: otherID})
			case attach:
				err = q.AssetTypeFieldAttach(rq.ctx, db.AssetTypeFieldAttachParams{TypeID: t.ID, FieldID: otherID, OrganisationID: t.OrganisationID})
			default:
				n, err = q.AssetTypeFieldDetach(rq.ctx, db.AssetTypeFieldDetachParams{TypeID: t.ID, FieldID: otherID})
			}
			if err != nil {
				return err
			}
			if !attach && n == 0 {
				return badRequest("The %s is not attached to this type.", what)
			}
			out, err = renderType(rq.ctx, q, t)
			return err
		})
		if err != nil {
			return err
		}
		return rq.json(http.StatusOK, out)
	}
}

func fieldInUse(ctx context.Context, q *db.Queries, fieldID int64) (bool, error) {
	return q.AssetFieldInUse(ctx, fieldID)
}

// checkEnumRemovals refuses to remove an enum value some asset or group
// holds (400 naming values).
func checkEnumRemovals(ctx context.Context, q *db.Queries, current []db.AssetFieldEnumValue, next []string) error {
	keep := map[string]bool{}
	for _, v := range next {
		keep[v] = true
	}
	for _, v := range current {
		if keep[v.Value] {
			continue
		}
		used, err := q.AssetEnumValueInUse(ctx, db.AssetEnumValueInUseParams{FieldID: v.AssetFieldID, Value: enumStored(v.ID)})
		if err != nil {
			return err
		}
		if used {
			return fieldError("values", fmt.Sprintf("cannot drop %q: assets hold it", v.Value))
		}
	}
	return nil
}

// enumStored is how an enum value is stored in asset_field_values: its id
// as a JSON string.
func enumStored(id int64) string { return `"` + db.ID(id).String() + `"` }
