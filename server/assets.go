package server

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"workspace/db"
)

// Assets and asset groups (spec: Assets; operations-data.md "Assets";
// decisions in docs/assets.md). An asset is its single group: one row of
// asset_groups with ephemerality 0, whose id is the asset's id.

const (
	defaultAssetName = "new asset"
	maxTextValue     = 1000
)

type assetFieldValueJSON struct {
	Value any     `json:"value"`
	Units *string `json:"units"`
}

type assetJSON struct {
	ID              db.ID                          `json:"id"`
	OrganisationID  db.ID                          `json:"organisation_id"`
	FleetID         *db.ID                         `json:"fleet_id"`
	Type            *assetTypeJSON                 `json:"type"`
	Status          *assetStatusJSON               `json:"status"`
	Location        *locationJSON                  `json:"location"`
	SubLocationID   *db.ID                         `json:"sub_location_id"`
	GroupID         *db.ID                         `json:"group_id"`
	Position        int64                          `json:"position"`
	Name            string                         `json:"name"`
	Description     string                         `json:"description"`
	Number          *int64                         `json:"number"`
	FormattedNumber *string                        `json:"formatted_number"`
	PrefixID        *db.ID                         `json:"prefix_id"`
	SubscriptionID  *db.ID                         `json:"subscription_id"`
	Active          bool                           `json:"active"`
	Fields          map[string]assetFieldValueJSON `json:"fields"`
	CreatedAt       string                         `json:"created_at"`
	UpdatedAt       string                         `json:"updated_at"`
}

type groupMemberJSON struct {
	Asset    assetJSON `json:"asset"`
	Position int64     `json:"position"`
}

type assetGroupJSON struct {
	ID                  db.ID                          `json:"id"`
	OrganisationID      db.ID                          `json:"organisation_id"`
	Type                *assetTypeJSON                 `json:"type"`
	Ephemerality        int64                          `json:"ephemerality"`
	Active              bool                           `json:"active"`
	Name                string                         `json:"name"`
	Description         string                         `json:"description"`
	FleetID             *db.ID                         `json:"fleet_id"`
	Status              *assetStatusJSON               `json:"status"`
	Location            *locationJSON                  `json:"location"`
	SubLocationID       *db.ID                         `json:"sub_location_id"`
	Assets              []groupMemberJSON              `json:"assets"`
	OpenWorkItemCount   int64                          `json:"open_work_item_count"`
	ClosedWorkItemCount int64                          `json:"closed_work_item_count"`
	Fields              map[string]assetFieldValueJSON `json:"fields"`
}

// assetView is what rendering a set of groups needs, read in a fixed number
// of queries however many rows there are.
type assetView struct {
	types       map[int64]assetTypeJSON
	statuses    map[int64]assetStatusJSON
	locations   map[int64]locationJSON
	values      map[int64]map[string]assetFieldValueJSON
	memberships map[int64][]db.AssetMembershipsOfRow // by asset id
}

func loadAssetView(ctx context.Context, q *db.Queries, rows []db.AssetGroup) (*assetView, error) {
	v := &assetView{types: map[int64]assetTypeJSON{}, statuses: map[int64]assetStatusJSON{}, locations: map[int64]locationJSON{},
		values: map[int64]map[string]assetFieldValueJSON{}, memberships: map[int64][]db.AssetMembershipsOfRow{}}
	ids := make([]int64, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	ms, err := q.AssetMembershipsOf(ctx, idsJSON(ids))
	if err != nil {
		return nil, err
	}
	all := append([]db.AssetGroup(nil), rows...)
	for _, m := range ms {
		v.memberships[m.AssetID] = append(v.memberships[m.AssetID], m)
		all = append(all, m.AssetGroup)
	}
	typeIDs, statusIDs, locIDs := set64{}, set64{}, set64{}
	for _, r := range all {
		typeIDs.add(&r.TypeID)
		statusIDs.add(r.StatusID)
		locIDs.add(r.LocationID)
	}
	types, err := q.AssetTypeListByIDs(ctx, idsJSON(typeIDs.list()))
	if err != nil {
		return nil, err
	}
	rendered, err := renderTypes(ctx, q, types)
	if err != nil {
		return nil, err
	}
	for _, t := range rendered {
		v.types[int64(t.ID)] = t
	}
	statuses, err := q.AssetStatusListByIDs(ctx, idsJSON(statusIDs.list()))
	if err != nil {
		return nil, err
	}
	for _, st := range statuses {
		v.statuses[st.ID] = toAssetStatus(st)
	}
	locs, err := q.LocationsByIDs(ctx, idsJSON(locIDs.list()))
	if err != nil {
		return nil, err
	}
	subs, err := q.SubLocationsOfLocations(ctx, idsJSON(locIDs.list()))
	if err != nil {
		return nil, err
	}
	byLoc := map[int64][]db.SubLocation{}
	for _, sl := range subs {
		byLoc[sl.LocationID] = append(byLoc[sl.LocationID], sl)
	}
	for _, l := range locs {
		v.locations[l.ID] = toLocation(l, byLoc[l.ID])
	}
	vals, err := q.AssetFieldValuesOf(ctx, idsJSON(ids))
	if err != nil {
		return nil, err
	}
	for _, fv := range vals {
		m := v.values[fv.GroupID]
		if m == nil {
			m = map[string]assetFieldValueJSON{}
			v.values[fv.GroupID] = m
		}
		var val any
		if err := json.Unmarshal([]byte(fv.Value), &val); err != nil {
			return nil, err
		}
		m[db.ID(fv.FieldID).String()] = assetFieldValueJSON{Value: val, Units: fv.Units}
	}
	return v, nil
}

type set64 map[int64]bool

func (s set64) add(id *int64) {
	if id != nil {
		s[*id] = true
	}
}

func (s set64) list() []int64 {
	out := make([]int64, 0, len(s))
	for id := range s {
		out = append(out, id)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

func (v *assetView) typeOf(id int64) *assetTypeJSON {
	if t, ok := v.types[id]; ok {
		return &t
	}
	return nil
}

func (v *assetView) statusOf(id *int64) *assetStatusJSON {
	if id == nil {
		return nil
	}
	if st, ok := v.statuses[*id]; ok {
		return &st
	}
	return nil
}

func (v *assetView) locationOf(id *int64) *locationJSON {
	if id == nil {
		return nil
	}
	if l, ok := v.locations[*id]; ok {
		return &l
	}
	return nil
}

func (v *assetView) fieldsOf(id int64) map[string]assetFieldValueJSON {
	if m := v.values[id]; m != nil {
		return m
	}
	return map[string]assetFieldValueJSON{}
}

// activeGroup is the active temporary or permanent group of an asset, if
// any, and its position there.
func (v *assetView) activeGroup(assetID int64) (*db.AssetGroup, int64) {
	for _, m := range v.memberships[assetID] {
		if m.AssetGroup.Active {
			g := m.AssetGroup
			return &g, m.Position
		}
	}
	return nil, 0
}

// asset renders an asset: an active group it belongs to gives it its
// location (spec), when that group has one.
func (v *assetView) asset(g db.AssetGroup) assetJSON {
	out := assetJSON{ID: db.ID(g.ID), OrganisationID: db.ID(g.OrganisationID), FleetID: optID(g.FleetID), Type: v.typeOf(g.TypeID),
		Status: v.statusOf(g.StatusID), Location: v.locationOf(g.LocationID), SubLocationID: optID(g.SubLocationID),
		Name: g.Name, Description: g.Description, Number: g.Number, FormattedNumber: g.FormattedNumber, PrefixID: optID(g.PrefixID),
		SubscriptionID: optID(g.SubscriptionID), Active: g.Active, Fields: v.fieldsOf(g.ID), CreatedAt: g.CreatedAt, UpdatedAt: g.UpdatedAt}
	if ag, pos := v.activeGroup(g.ID); ag != nil {
		out.GroupID, out.Position = optID(&ag.ID), pos
		if ag.LocationID != nil {
			out.Location, out.SubLocationID = v.locationOf(ag.LocationID), optID(ag.SubLocationID)
		}
	} else if ms := v.memberships[g.ID]; len(ms) > 0 {
		out.GroupID, out.Position = optID(&ms[0].AssetGroup.ID), ms[0].Position
	}
	return out
}

func renderAssets(ctx context.Context, q *db.Queries, rows []db.AssetGroup) ([]assetJSON, error) {
	v, err := loadAssetView(ctx, q, rows)
	if err != nil {
		return nil, err
	}
	out := make([]assetJSON, len(rows))
	for i, r := range rows {
		out[i] = v.asset(r)
	}
	return out, nil
}

// renderGroups renders groups with their assets in order; a single group's
// only asset is itself.
func renderGroups(ctx context.Context, q *db.Queries, rows []db.AssetGroup) ([]assetGroupJSON, error) {
	ids := make([]int64, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	members, err := q.AssetGroupMembersOf(ctx, idsJSON(ids))
	if err != nil {
		return nil, err
	}
	memberIDs := set64{}
	for _, m := range members {
		memberIDs.add(&m.AssetID)
	}
	for _, r := range rows {
		if r.Ephemerality == ephemeralSingle {
			memberIDs.add(&r.ID)
		}
	}
	assetRows, err := q.AssetGroupListByIDs(ctx, idsJSON(memberIDs.list()))
	if err != nil {
		return nil, err
	}
	assets, err := renderAssets(ctx, q, assetRows)
	if err != nil {
		return nil, err
	}
	byID := map[int64]assetJSON{}
	for _, a := range assets {
		byID[int64(a.ID)] = a
	}
	v, err := loadAssetView(ctx, q, rows)
	if err != nil {
		return nil, err
	}
	byGroup := map[int64][]groupMemberJSON{}
	for _, m := range members {
		byGroup[m.GroupID] = append(byGroup[m.GroupID], groupMemberJSON{Asset: byID[m.AssetID], Position: m.Position})
	}
	out := make([]assetGroupJSON, len(rows))
	for i, g := range rows {
		gm := byGroup[g.ID]
		if g.Ephemerality == ephemeralSingle {
			gm = []groupMemberJSON{{Asset: byID[g.ID], Position: 0}}
		}
		if gm == nil {
			gm = []groupMemberJSON{}
		}
		out[i] = assetGroupJSON{ID: db.ID(g.ID), OrganisationID: db.ID(g.OrganisationID), Type: v.typeOf(g.TypeID), Ephemerality: g.Ephemerality,
			Active: g.Active, Name: g.Name, Description: g.Description, FleetID: optID(g.FleetID), Status: v.statusOf(g.StatusID),
			Location: v.locationOf(g.LocationID), SubLocationID: optID(g.SubLocationID), Assets: gm,
			OpenWorkItemCount: g.OpenWorkItemCount, ClosedWorkItemCount: g.ClosedWorkItemCount, Fields: v.fieldsOf(g.ID)}
	}
	return out, nil
}

func renderAsset(ctx context.Context, q *db.Queries, g db.AssetGroup) (assetJSON, error) {
	out, err := renderAssets(ctx, q, []db.AssetGroup{g})
	if err != nil {
		return assetJSON{}, err
	}
	return out[0], nil
}

func renderGroup(ctx context.Context, q *db.Queries, g db.AssetGroup) (assetGroupJSON, error) {
	out, err := renderGroups(ctx, q, []db.AssetGroup{g})
	if err != nil {
		return assetGroupJSON{}, err
	}
	return out[0], nil
}

// normaliseName is the form the name filter matches: lower case, runs of
// white space as one space.
func normaliseName(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), " ")) }

// ---- Bodies

// assetBody is the body of asset and group creates and patches.
type assetBody struct {
	TypeID         refID                      `json:"type_id"`
	Name           *string                    `json:"name"`
	Description    *string                    `json:"description"`
	FleetID        refID                      `json:"fleet_id"`
	LocationID     refID                      `json:"location_id"`
	SubLocationID  refID                      `json:"sub_location_id"`
	StatusID       refID                      `json:"status_id"`
	GroupID        refID                      `json:"group_id"`
	PrefixID       refID                      `json:"prefix_id"`
	SubscriptionID refID                      `json:"subscription_id"`
	Number         Opt[int64]                 `json:"number"`
	Active         *bool                      `json:"active"`
	Fields         map[string]json.RawMessage `json:"fields"`
	// fieldNames, for PATCH .../fields: the name each field id was sent
	// under, so a refusal names the key the caller sent.
	fieldNames map[string]string
}

// fieldKey is how a refusal names the value sent for field id key.
func (b *assetBody) fieldKey(key string) string {
	if name, ok := b.fieldNames[key]; ok {
		return name
	}
	return "fields." + key
}

var assetReadOnly = []string{"id", "organisation_id", "type", "status", "location", "position", "formatted_number", "created_at", "updated_at"}
var groupReadOnly = []string{"id", "organisation_id", "type", "status", "location", "ephemerality", "assets", "open_work_item_count", "closed_work_item_count"}

func (b *assetBody) validate() error {
	p := problems{}
	checkAssetName(p, "name", b.Name)
	optText(p, "description", b.Description, maxDescriptionLen)
	if b.Number.Set && !b.Number.Null && b.Number.Value < 1 {
		p.add("number", "must be a positive integer")
	}
	return p.err()
}

// applyRefs checks the body's references against the organisation and
// writes them over g (a new row's defaults or the current row): fleet,
// status, location and sub location (a sub location gives its location;
// a full sub location is 429 for an asset), name, description, active.
func applyRefs(ctx context.Context, q *db.Queries, g *db.AssetGroup, b *assetBody) error {
	org := g.OrganisationID
	if b.FleetID.Set {
		if err := fleetInOrg(ctx, q, org, "fleet_id", b.FleetID); err != nil {
			return err
		}
		g.FleetID = b.FleetID.ptr()
	}
	if b.StatusID.Set {
		if b.StatusID.ID != 0 {
			st, err := q.AssetStatusGet(ctx, b.StatusID.ID)
			if db.IsNotFound(err) || (err == nil && st.OrganisationID != org) {
				return fieldError("status_id", "names no asset status of this organisation")
			} else if err != nil {
				return err
			}
		}
		g.StatusID = b.StatusID.ptr()
	}
	if b.LocationID.Set {
		if b.LocationID.ID != 0 {
			l, err := q.LocationGet(ctx, b.LocationID.ID)
			if db.IsNotFound(err) || (err == nil && l.OrganisationID != org) {
				return fieldError("location_id", "names no location of this organisation")
			} else if err != nil {
				return err
			}
		}
		if g.LocationID == nil || b.LocationID.ID != *g.LocationID {
			g.SubLocationID = nil // a sub location belongs to its location
		}
		g.LocationID = b.LocationID.ptr()
	}
	oldSub := g.SubLocationID
	if b.SubLocationID.Set {
		g.SubLocationID = nil
		if b.SubLocationID.ID != 0 {
			sl, err := q.SubLocationGet(ctx, b.SubLocationID.ID)
			if db.IsNotFound(err) || (err == nil && sl.OrganisationID != org) {
				return fieldError("sub_location_id", "names no sub location of this organisation")
			} else if err != nil {
				return err
			}
			if b.LocationID.Set && b.LocationID.ID != 0 && b.LocationID.ID != sl.LocationID {
				return fieldError("sub_location_id", "is not a sub location of location_id")
			}
			g.LocationID, g.SubLocationID = &sl.LocationID, &sl.ID
		}
	}
	if g.Ephemerality == ephemeralSingle && g.SubLocationID != nil && (oldSub == nil || *oldSub != *g.SubLocationID) {
		if err := checkSubLocationRoom(ctx, q, *g.SubLocationID); err != nil {
			return err
		}
	}
	if b.Name != nil {
		g.Name, g.NormalisedName = *b.Name, normaliseName(*b.Name)
	}
	setIf(&g.Description, b.Description)
	setIf(&g.Active, b.Active)
	return nil
}

// checkSubLocationRoom: a sub location's asset_capacity bounds the assets
// allocated to it (429 when full, like a full subscription).
func checkSubLocationRoom(ctx context.Context, q *db.Queries, subID int64) error {
	sl, err := q.SubLocationGet(ctx, subID)
	if err != nil || sl.AssetCapacity == nil {
		return err
	}
	n, err := q.SubLocationAssetCount(ctx, &subID)
	if err != nil {
		return err
	}
	if n >= *sl.AssetCapacity {
		return errorf(http.StatusTooManyRequests, "The sub location holds its capacity of %d assets.", *sl.AssetCapacity)
	}
	return nil
}

// allocate moves an asset to another subscription: the new pool must have
// room (429), the old one gets its place back.
func allocate(ctx context.Context, q *db.Queries, g *db.AssetGroup, r refID) error {
	if !r.Set || (g.SubscriptionID != nil && *g.SubscriptionID == r.ID) || (g.SubscriptionID == nil && r.ID == 0) {
		return nil
	}
	if r.ID != 0 {
		sub, err := q.AssetSubscriptionGet(ctx, r.ID)
		if db.IsNotFound(err) || (err == nil && sub.OrganisationID != g.OrganisationID) {
			return fieldError("subscription_id", "names no asset subscription of this organisation")
		} else if err != nil {
			return err
		}
		_, err = q.AssetSubscriptionAllocate(ctx, db.AssetSubscriptionAllocateParams{ID: r.ID, OrganisationID: g.OrganisationID})
		if db.IsNotFound(err) {
			return errorf(http.StatusTooManyRequests, "The asset subscription has no room left (capacity %d).", sub.Capacity)
		} else if err != nil {
			return err
		}
	}
	if g.SubscriptionID != nil {
		if err := q.AssetSubscriptionRelease(ctx, *g.SubscriptionID); err != nil {
			return err
		}
	}
	g.SubscriptionID = r.ptr()
	return nil
}

// typeOfKind loads a type of the organisation whose ephemerality is one of
// kinds (400 naming type_id otherwise).
func typeOfKind(ctx context.Context, q *db.Queries, orgID, id int64, kinds ...int64) (db.AssetType, error) {
	t, err := q.AssetTypeGet(ctx, id)
	if db.IsNotFound(err) || (err == nil && t.OrganisationID != orgID) {
		return t, fieldError("type_id", "names no asset type of this organisation")
	}
	if err != nil {
		return t, err
	}
	for _, k := range kinds {
		if t.Ephemerality == k {
			return t, nil
		}
	}
	if kinds[0] == ephemeralSingle {
		return t, fieldError("type_id", "must be a type of assets (ephemerality 0)")
	}
	return t, fieldError("type_id", "must be a type of temporary or permanent groups (ephemerality 1 or 2)")
}

// ---- Field values

// fieldInput reads a field value as sent: an asset field value object
// {value, units?} or the bare value. null removes the value.
func fieldInput(raw json.RawMessage) (value json.RawMessage, units *string, remove bool, err error) {
	raw = bytes.TrimSpace(raw)
	if string(raw) == "null" {
		return nil, nil, true, nil
	}
	if len(raw) > 0 && raw[0] == '{' {
		var obj struct {
			Value json.RawMessage `json:"value"`
			Units *string         `json:"units"`
		}
		if err := json.Unmarshal(raw, &obj); err != nil {
			return nil, nil, false, err
		}
		if obj.Value == nil || string(obj.Value) == "null" {
			return nil, nil, true, nil
		}
		return obj.Value, obj.Units, false, nil
	}
	return raw, nil, false, nil
}

// checkFieldValue checks one value against its field's type and returns
// the stored JSON, or a problem.
func checkFieldValue(ctx context.Context, q *db.Queries, orgID int64, f db.AssetField, enums []db.AssetFieldEnumValue, raw json.RawMessage) (string, string, error) {
	var s string
	isString := json.Unmarshal(raw, &s) == nil
	switch f.Type {
	case fieldText:
		if !isString || len([]rune(s)) > maxTextValue {
			return "", fmt.Sprintf("must be text of at most %d characters", maxTextValue), nil
		}
		if problem := textProblem(s); problem != "" {
			return "", problem, nil
		}
	case fieldNumber:
		var n float64
		if json.Unmarshal(raw, &n) != nil {
			return "", "must be a number", nil
		}
		return strconv.FormatFloat(n, 'g', -1, 64), "", nil
	case fieldBoolean:
		var v bool
		if json.Unmarshal(raw, &v) != nil {
			return "", "must be true or false", nil
		}
		return strconv.FormatBool(v), "", nil
	case fieldDate:
		if !isString || !validDate(s) {
			return "", "must be a date (YYYY-MM-DD or RFC 3339)", nil
		}
	case fieldEnum:
		if isString {
			for _, v := range enums {
				if v.Value == s || db.ID(v.ID).String() == s {
					return enumStored(v.ID), "", nil
				}
			}
		}
		return "", "must be one of the field's enum values (by id or value)", nil
	case fieldUser:
		id, ok := db.ParseID(s)
		if !isString || !ok {
			return "", "must be the id of a member of the organisation", nil
		}
		member, err := q.AssetUserIsMember(ctx, db.AssetUserIsMemberParams{OrganisationID: orgID, UserID: int64(id)})
		if err != nil {
			return "", "", err
		}
		if !member {
			return "", "must be the id of a member of the organisation", nil
		}
		return `"` + id.String() + `"`, "", nil
	case fieldLocation:
		id, ok := db.ParseID(s)
		if !isString || !ok {
			return "", "must be the id of a location of the organisation", nil
		}
		l, err := q.LocationGet(ctx, int64(id))
		if db.IsNotFound(err) || (err == nil && l.OrganisationID != orgID) {
			return "", "must be the id of a location of the organisation", nil
		}
		if err != nil {
			return "", "", err
		}
		return `"` + id.String() + `"`, "", nil
	}
	b, _ := json.Marshal(s)
	return string(b), "", nil
}

// typeFields are the fields attached to a type, by id, with enum values.
type typeFields struct {
	byID   map[int64]db.AssetField
	byName map[string]db.AssetField
	enums  map[int64][]db.AssetFieldEnumValue
}

func loadTypeFields(ctx context.Context, q *db.Queries, typeID int64) (typeFields, error) {
	tf := typeFields{byID: map[int64]db.AssetField{}, byName: map[string]db.AssetField{}}
	rows, err := q.AssetTypeFieldsFor(ctx, idsJSON([]int64{typeID}))
	if err != nil {
		return tf, err
	}
	ids := make([]int64, 0, len(rows))
	for _, r := range rows {
		tf.byID[r.AssetField.ID] = r.AssetField
		tf.byName[strings.ToLower(r.AssetField.Name)] = r.AssetField
		ids = append(ids, r.AssetField.ID)
	}
	tf.enums, err = enumValuesOf(ctx, q, ids)
	return tf, err
}

// writeFields checks every value of fields (keyed by field id) against the
// group's type and writes them; one 400 names every field at fault.
func writeFields(ctx context.Context, q *db.Queries, g db.AssetGroup, b *assetBody) error {
	fields := b.Fields
	if len(fields) == 0 {
		return nil
	}
	tf, err := loadTypeFields(ctx, q, g.TypeID)
	if err != nil {
		return err
	}
	p := problems{}
	type write struct {
		id     int64
		value  string
		units  *string
		remove bool
	}
	var writes []write
	for key, raw := range fields {
		name := b.fieldKey(key)
		id, ok := db.ParseID(key)
		f, attached := tf.byID[int64(id)]
		if !ok || !attached {
			p.add(name, "is not a field of this asset's type")
			continue
		}
		value, units, remove, err := fieldInput(raw)
		if err != nil {
			p.add(name, "must be a field value {value, units?}")
			continue
		}
		if remove {
			writes = append(writes, write{id: f.ID, remove: true})
			continue
		}
		if units != nil && len([]rune(*units)) > maxUnits {
			p.add(name, fmt.Sprintf("units must be at most %d characters", maxUnits))
			continue
		}
		if units == nil {
			units = f.Units
		}
		stored, problem, err := checkFieldValue(ctx, q, g.OrganisationID, f, tf.enums[f.ID], value)
		if err != nil {
			return err
		}
		if problem != "" {
			p.add(name, problem)
			continue
		}
		writes = append(writes, write{id: f.ID, value: stored, units: units})
	}
	if err := p.err(); err != nil {
		return err
	}
	for _, w := range writes {
		if w.remove {
			err = q.AssetFieldValueDelete(ctx, db.AssetFieldValueDeleteParams{GroupID: g.ID, FieldID: w.id})
		} else {
			err = q.AssetFieldValuePut(ctx, db.AssetFieldValuePutParams{GroupID: g.ID, FieldID: w.id, OrganisationID: g.OrganisationID, Value: w.value, Units: w.units})
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// ---- Group membership

// joinGroup puts an asset into a temporary or permanent group at its end:
// the group must be of the organisation, in the asset's fleet when it has
// one, and an asset is in at most one active such group (400 naming field).
func joinGroup(ctx context.Context, q *db.Queries, asset db.AssetGroup, groupID int64, field string) (db.AssetGroup, error) {
	g, err := q.AssetGroupGet(ctx, groupID)
	if db.IsNotFound(err) || (err == nil && (g.OrganisationID != asset.OrganisationID || g.Ephemerality == ephemeralSingle)) {
		return g, fieldError(field, "names no temporary or permanent asset group of this organisation")
	}
	if err != nil {
		return g, err
	}
	if g.FleetID != nil && (asset.FleetID == nil || *asset.FleetID != *g.FleetID) {
		return g, fieldError(field, "is a group of another fleet than the asset's")
	}
	if _, err := q.AssetGroupMemberGet(ctx, db.AssetGroupMemberGetParams{GroupID: g.ID, AssetID: asset.ID}); err == nil {
		return g, nil // already there
	} else if !db.IsNotFound(err) {
		return g, err
	}
	if g.Active {
		ms, err := q.AssetMembershipsOf(ctx, idsJSON([]int64{asset.ID}))
		if err != nil {
			return g, err
		}
		for _, m := range ms {
			if m.AssetGroup.Active {
				return g, fieldError(field, "the asset is already in an active group; take it out first")
			}
		}
	}
	return g, q.AssetGroupMemberAdd(ctx, db.AssetGroupMemberAddParams{GroupID: g.ID, AssetID: asset.ID, OrganisationID: g.OrganisationID})
}

// leaveGroup takes an asset out of a group and closes the gap.
func leaveGroup(ctx context.Context, q *db.Queries, groupID, assetID int64) (bool, error) {
	m, err := q.AssetGroupMemberGet(ctx, db.AssetGroupMemberGetParams{GroupID: groupID, AssetID: assetID})
	if db.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if err := q.AssetGroupMemberRemove(ctx, db.AssetGroupMemberRemoveParams{GroupID: groupID, AssetID: assetID}); err != nil {
		return false, err
	}
	return true, q.AssetGroupMembersCloseGap(ctx, db.AssetGroupMembersCloseGapParams{GroupID: groupID, Position: m.Position})
}

// setAssetGroup makes groupID (0: none) the asset's only temporary or
// permanent group.
func setAssetGroup(ctx context.Context, q *db.Queries, asset db.AssetGroup, groupID int64) error {
	ms, err := q.AssetMembershipsOf(ctx, idsJSON([]int64{asset.ID}))
	if err != nil {
		return err
	}
	for _, m := range ms {
		if m.AssetGroup.ID == groupID {
			continue
		}
		if _, err := leaveGroup(ctx, q, m.AssetGroup.ID, asset.ID); err != nil {
			return err
		}
	}
	if groupID == 0 {
		return nil
	}
	_, err = joinGroup(ctx, q, asset, groupID, "group_id")
	return err
}

// ---- Access

// assetGroupAccess loads a group (an asset is a group) and the caller's
// access in its fleet; assetsOnly: only single groups (the asset endpoints).
func assetGroupAccess(ctx context.Context, q *db.Queries, userID, id int64, assetsOnly bool) (db.AssetGroup, Access, error) {
	what := "asset group"
	if assetsOnly {
		what = "asset"
	}
	g, err := q.AssetGroupGet(ctx, id)
	if db.IsNotFound(err) || (err == nil && assetsOnly && g.Ephemerality != ephemeralSingle) {
		return g, Access{}, notFound("The %s does not exist.", what)
	}
	if err != nil {
		return g, Access{}, err
	}
	var fleet int64
	if g.FleetID != nil {
		fleet = *g.FleetID
	}
	a, err := authorize(ctx, q, userID, g.OrganisationID, Scopes{Fleet: fleet})
	if db.IsNotFound(err) {
		return g, Access{}, notFound("The %s does not exist.", what)
	}
	return g, a, err
}

// requireFleetWrite: MANAGE_FLEETS in the organisation or on the fleet the
// group is in and, when the body moves it, on the fleet it goes to.
func requireFleetWrite(ctx context.Context, q *db.Queries, a Access, userID int64, to refID) error {
	if err := a.Require(ManageFleets); err != nil {
		return err
	}
	if !to.Set || to.ID == 0 || to.ID == a.Scopes.Fleet {
		return nil
	}
	b, err := authorize(ctx, q, userID, a.OrganisationID, Scopes{Fleet: to.ID})
	if err != nil {
		return err
	}
	return b.Require(ManageFleets)
}

// ---- Asset handlers

// createAsset makes one asset in the caller's write transaction: the type
// must be an asset type (ephemerality 0); the number comes from the given
// prefix (which must be the type's when the type has one), else the type's,
// else the fleet's, else the organisation's asset counter; an explicit
// number overrides the draw. Shared by POST and the import.
func (s *Server) createAsset(ctx context.Context, q *db.Queries, userID, orgID int64, b *assetBody) (db.AssetGroup, error) {
	if !b.TypeID.Set || b.TypeID.ID == 0 {
		return db.AssetGroup{}, fieldError("type_id", "is required")
	}
	t, err := typeOfKind(ctx, q, orgID, b.TypeID.ID, ephemeralSingle)
	if err != nil {
		return db.AssetGroup{}, err
	}
	now := s.nowText()
	g := db.AssetGroup{ID: s.store.IDs.Next(), OrganisationID: orgID, TypeID: t.ID, Ephemerality: ephemeralSingle,
		FleetID: t.FleetID, Name: defaultAssetName, NormalisedName: normaliseName(defaultAssetName), Active: true}
	if err := applyRefs(ctx, q, &g, b); err != nil {
		return g, err
	}
	if err := allocate(ctx, q, &g, b.SubscriptionID); err != nil {
		return g, err
	}
	prefixID := t.PrefixID
	if b.PrefixID.Set && b.PrefixID.ID != 0 {
		if t.PrefixID != nil && *t.PrefixID != b.PrefixID.ID {
			return g, fieldError("prefix_id", "must be the asset type's prefix")
		}
		prefixID = &b.PrefixID.ID
	}
	if prefixID == nil && g.FleetID != nil {
		f, err := q.FleetGet(ctx, *g.FleetID)
		if err != nil {
			return g, err
		}
		prefixID = f.PrefixID
	}
	if err := s.numberAsset(ctx, q, &g, prefixID, b.Number); err != nil {
		return g, err
	}
	g, err = q.AssetGroupCreate(ctx, db.AssetGroupCreateParams{ID: g.ID, OrganisationID: orgID, TypeID: g.TypeID, Ephemerality: ephemeralSingle,
		FleetID: g.FleetID, StatusID: g.StatusID, LocationID: g.LocationID, SubLocationID: g.SubLocationID, SubscriptionID: g.SubscriptionID,
		PrefixID: g.PrefixID, Number: g.Number, FormattedNumber: g.FormattedNumber, Name: g.Name, NormalisedName: g.NormalisedName,
		Description: g.Description, Active: g.Active, CreatedAt: now, CreatedBy: userID})
	if err != nil {
		return g, err
	}
	if err := writeFields(ctx, q, g, b); err != nil {
		return g, err
	}
	if b.GroupID.Set && b.GroupID.ID != 0 {
		if _, err := joinGroup(ctx, q, g, b.GroupID.ID, "group_id"); err != nil {
			return g, err
		}
	}
	return g, nil
}

// numberAsset gives g its number: drawn from the prefix inside the write
// transaction (distinct and gap-free under concurrency), or the explicit
// one, which must be free when the prefix has unique_number and moves the
// prefix's counter up to it.
func (s *Server) numberAsset(ctx context.Context, q *db.Queries, g *db.AssetGroup, prefixID *int64, explicit Opt[int64]) error {
	given := explicit.Set && !explicit.Null
	if prefixID == nil {
		var n int64
		if given {
			n = explicit.Value
		} else {
			var err error
			if n, err = counterNext(ctx, q, g.OrganisationID, "asset"); err != nil {
				return err
			}
		}
		f := plainNumber(n)
		g.Number, g.FormattedNumber = &n, &f
		return nil
	}
	if !given {
		n, f, err := drawNumber(ctx, q, g.OrganisationID, *prefixID)
		if err != nil {
			return err
		}
		g.PrefixID, g.Number, g.FormattedNumber = prefixID, &n, &f
		return nil
	}
	p, err := q.PrefixGetInOrg(ctx, db.PrefixGetInOrgParams{ID: *prefixID, OrganisationID: g.OrganisationID})
	if db.IsNotFound(err) || (err == nil && !p.Enabled) {
		return fieldError("prefix_id", "names no enabled prefix of this organisation")
	}
	if err != nil {
		return err
	}
	n := explicit.Value
	if p.UniqueNumber {
		taken, err := q.AssetNumberTaken(ctx, db.AssetNumberTakenParams{PrefixID: prefixID, Number: &n})
		if err != nil {
			return err
		}
		if taken {
			return fieldError("number", "is already taken on this prefix")
		}
	}
	if err := q.PrefixRaise(ctx, db.PrefixRaiseParams{Number: n, ID: p.ID, OrganisationID: p.OrganisationID}); err != nil {
		return err
	}
	f := formatNumber(p.NumberFormat, p.NumberDigits, n)
	g.PrefixID, g.Number, g.FormattedNumber = prefixID, &n, &f
	return nil
}

func (s *Server) assetCreate(rq *request) error {
	orgID, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var b assetBody
	if err := rq.decodeCreate(&b, assetReadOnly...); err != nil {
		return err
	}
	if err := b.validate(); err != nil {
		return err
	}
	var out assetJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		a, err := orgAccess(rq, q, orgID, http.StatusBadRequest, 0)
		if err != nil {
			return err
		}
		fleet := b.FleetID
		if !fleet.Set && b.TypeID.ID != 0 {
			if t, err := q.AssetTypeGet(rq.ctx, b.TypeID.ID); err == nil && t.OrganisationID == orgID && t.FleetID != nil {
				fleet = refID{Set: true, ID: *t.FleetID}
			}
		}
		if err := requireOrgOrFleet(rq.ctx, q, a, rq.user.ID, fleet); err != nil {
			return err
		}
		g, err := s.createAsset(rq.ctx, q, rq.user.ID, orgID, &b)
		if err != nil {
			return err
		}
		out, err = renderAsset(rq.ctx, q, g)
		return err
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusCreated, out)
}

// requireOrgOrFleet: MANAGE_FLEETS in the organisation, or on the fleet
// the new row goes into.
func requireOrgOrFleet(ctx context.Context, q *db.Queries, a Access, userID int64, fleet refID) error {
	if a.Can(ManageFleets) || fleet.ID == 0 {
		return a.Require(ManageFleets)
	}
	f, err := authorize(ctx, q, userID, a.OrganisationID, Scopes{Fleet: fleet.ID})
	if err != nil {
		return err
	}
	return f.Require(ManageFleets)
}

func (s *Server) assetGet(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var out assetJSON
	err = s.store.ReadTx(rq.ctx, func(q *db.Queries) error {
		g, a, err := assetGroupAccess(rq.ctx, q, rq.user.ID, id, true)
		if err != nil {
			return err
		}
		if err := requireAssetRead(rq.ctx, q, a, g); err != nil {
			return err
		}
		out, err = renderAsset(rq.ctx, q, g)
		return err
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

// patchGroup applies a PATCH body to an asset or a group in the caller's
// transaction.
func (s *Server) patchGroup(ctx context.Context, q *db.Queries, userID int64, g db.AssetGroup, b *assetBody) (db.AssetGroup, error) {
	if b.TypeID.Set && b.TypeID.ID != g.TypeID {
		kinds := []int64{ephemeralSingle}
		if g.Ephemerality != ephemeralSingle {
			kinds = []int64{ephemeralTemporary, ephemeralPermanent}
		}
		t, err := typeOfKind(ctx, q, g.OrganisationID, b.TypeID.ID, kinds...)
		if err != nil {
			return g, err
		}
		if t.Ephemerality != g.Ephemerality {
			return g, fieldError("type_id", "must have the group's ephemerality")
		}
		g.TypeID = t.ID
	}
	wasActive, wasFleet := g.Active, g.FleetID
	if err := applyRefs(ctx, q, &g, b); err != nil {
		return g, err
	}
	if g.Ephemerality != ephemeralSingle && g.Active && !wasActive {
		n, err := q.AssetGroupClashes(ctx, g.ID)
		if err != nil {
			return g, err
		}
		if n > 0 {
			return g, fieldError("active", "some of the group's assets are in another active group")
		}
	}
	if err := allocate(ctx, q, &g, b.SubscriptionID); err != nil {
		return g, err
	}
	g, err := q.AssetGroupUpdate(ctx, db.AssetGroupUpdateParams{ID: g.ID, OrganisationID: g.OrganisationID, TypeID: g.TypeID, FleetID: g.FleetID,
		StatusID: g.StatusID, LocationID: g.LocationID, SubLocationID: g.SubLocationID, SubscriptionID: g.SubscriptionID, Name: g.Name,
		NormalisedName: g.NormalisedName, Description: g.Description, Active: g.Active, UpdatedAt: s.nowText(), UpdatedBy: userID})
	if err != nil {
		return g, err
	}
	if err := q.AssetFieldValuesPrune(ctx, db.AssetFieldValuesPruneParams{GroupID: g.ID, TypeID: g.TypeID}); err != nil {
		return g, err
	}
	if err := writeFields(ctx, q, g, b); err != nil {
		return g, err
	}
	if b.GroupID.Set && g.Ephemerality == ephemeralSingle {
		if err := setAssetGroup(ctx, q, g, b.GroupID.ID); err != nil {
			return g, err
		}
	}
	if !sameRef(wasFleet, g.FleetID) {
		// After group_id: an asset may move to a group of its new fleet in
		// the same PATCH. A refusal rolls the whole PATCH back.
		if err := groupFleetsAgree(ctx, q, g); err != nil {
			return g, err
		}
	}
	return g, nil
}

// groupFleetsAgree keeps what joinGroup checks true when a fleet changes: a
// group with a fleet holds only assets of that fleet. A group's new fleet
// must be all its assets', an asset's new fleet that of every group with a
// fleet it is in (400 naming fleet_id, as joining names its field).
func groupFleetsAgree(ctx context.Context, q *db.Queries, g db.AssetGroup) error {
	if g.Ephemerality == ephemeralSingle {
		ms, err := q.AssetMembershipsOf(ctx, idsJSON([]int64{g.ID}))
		if err != nil {
			return err
		}
		for _, m := range ms {
			if m.AssetGroup.FleetID != nil && !sameRef(m.AssetGroup.FleetID, g.FleetID) {
				return fieldError("fleet_id", "the asset is in a group of another fleet; take it out first")
			}
		}
		return nil
	}
	if g.FleetID == nil {
		return nil
	}
	n, err := q.AssetGroupMembersOutsideFleet(ctx, db.AssetGroupMembersOutsideFleetParams{GroupID: g.ID, FleetID: g.FleetID})
	if err != nil {
		return err
	}
	if n > 0 {
		return fieldError("fleet_id", "the group holds assets of another fleet; take them out first")
	}
	return nil
}

func (s *Server) assetPatch(rq *request) error { return s.groupPatchWith(rq, true) }

// groupPatchWith is PATCH of an asset (assetsOnly) or a group, and of their
// /fields form (one key per field name or built-in field).
func (s *Server) groupPatchWith(rq *request, assetsOnly bool) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var b assetBody
	ro := readOnlySet{}
	byName := map[string]json.RawMessage(nil)
	if strings.HasSuffix(rq.r.URL.Path, "/fields") {
		if byName, err = rq.decodeKeys(&struct{}{}); err != nil {
			return err
		}
	} else {
		readOnly := groupReadOnly
		if assetsOnly {
			readOnly = assetReadOnly
		}
		if ro, err = rq.decodePatch(&b, readOnly...); err != nil {
			return err
		}
		if !assetsOnly && (b.GroupID.Set || b.PrefixID.Set || b.Number.Set || b.SubscriptionID.Set) {
			return badRequest("group_id, prefix_id, number and subscription_id are asset fields, not group fields.")
		}
		if assetsOnly && (b.PrefixID.Set || b.Number.Set) {
			return badRequest("prefix_id and number are set when an asset is created.")
		}
	}
	if err := b.validate(); err != nil {
		return err
	}
	var out any
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		g, a, err := assetGroupAccess(rq.ctx, q, rq.user.ID, id, assetsOnly)
		if err != nil {
			return err
		}
		if err := requireFleetWrite(rq.ctx, q, a, rq.user.ID, b.FleetID); err != nil {
			return err
		}
		if !assetsOnly && g.Ephemerality == ephemeralSingle {
			return badRequest("A single group is its asset: change it through /api/assets/{id}.")
		}
		if byName != nil {
			if err := fieldsByName(rq.ctx, q, g, byName, &b); err != nil {
				return err
			}
			if err := b.validate(); err != nil {
				return err
			}
			if err := requireFleetWrite(rq.ctx, q, a, rq.user.ID, b.FleetID); err != nil {
				return err
			}
		}
		if err := ro.checkLoaded(func() (any, error) {
			if assetsOnly {
				return renderAsset(rq.ctx, q, g)
			}
			return renderGroup(rq.ctx, q, g)
		}); err != nil {
			return err
		}
		if g, err = s.patchGroup(rq.ctx, q, rq.user.ID, g, &b); err != nil {
			return err
		}
		if assetsOnly {
			var a assetJSON
			a, err = renderAsset(rq.ctx, q, g)
			noteAssetValues(rq.ctx, &b, a.Name, a.Status, a.Location)
			out = a
		} else {
			var gr assetGroupJSON
			gr, err = renderGroup(rq.ctx, q, g)
			noteAssetValues(rq.ctx, &b, gr.Name, gr.Status, gr.Location)
			out = gr
		}
		return err
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

// noteAssetValues gives the audit log's sentence the new name, status and
// location in words ("changed the status of 20kVA generator to In repair").
func noteAssetValues(ctx context.Context, b *assetBody, name string, status *assetStatusJSON, location *locationJSON) {
	if b.Name != nil {
		noteAuditValue(ctx, "name", name)
	}
	if b.StatusID.Set {
		v := "none"
		if status != nil {
			v = status.Name
		}
		noteAuditValue(ctx, "status", v)
	}
	if b.LocationID.Set {
		v := "none"
		if location != nil {
			v = location.Name
		}
		noteAuditValue(ctx, "location", v)
	}
}

// builtinFields are the keys PATCH .../fields accepts besides field names,
// mapped to the body field they set.
var builtinFields = map[string]string{
	"name": "name", "description": "description", "fleet": "fleet_id", "fleet_id": "fleet_id", "location": "location_id",
	"location_id": "location_id", "sub_location": "sub_location_id", "sub_location_id": "sub_location_id",
	"status": "status_id", "status_id": "status_id", "active": "active",
}

// fieldsByName turns a PATCH .../fields body (one key per field name, or a
// built-in field) into an assetBody.
func fieldsByName(ctx context.Context, q *db.Queries, g db.AssetGroup, keys map[string]json.RawMessage, b *assetBody) error {
	tf, err := loadTypeFields(ctx, q, g.TypeID)
	if err != nil {
		return err
	}
	builtins := map[string]json.RawMessage{}
	b.Fields, b.fieldNames = map[string]json.RawMessage{}, map[string]string{}
	p := problems{}
	for key, raw := range keys {
		if f, ok := tf.byName[strings.ToLower(strings.TrimSpace(key))]; ok {
			b.Fields[db.ID(f.ID).String()] = raw
			b.fieldNames[db.ID(f.ID).String()] = key
		} else if name, ok := builtinFields[key]; ok {
			builtins[name] = raw
		} else {
			p.add(key, "is not a field of this type nor a built-in field")
		}
	}
	if err := p.err(); err != nil {
		return err
	}
	enc, _ := json.Marshal(builtins)
	if err := json.Unmarshal(enc, b); err != nil {
		return jsonProblem(err)
	}
	return nil
}

// requireAssetRead: a member reads the organisation's assets and groups;
// so does the holder of an accepted share of the group's fleet.
func requireAssetRead(ctx context.Context, q *db.Queries, a Access, g db.AssetGroup) error {
	if a.IsMember() {
		return nil
	}
	if g.FleetID != nil {
		ok, err := holdsFleetShare(ctx, q, a.UserID, *g.FleetID)
		if err != nil || ok {
			return err
		}
	}
	return a.Require(0)
}

// ---- Lists

// idList reads a filter of snowflakes, given repeated or comma-separated.
func idList(rq *request, name string) ([]int64, bool, error) {
	vals, ok := rq.r.URL.Query()[name]
	if !ok {
		return nil, false, nil
	}
	var out []int64
	for _, v := range vals {
		for _, part := range strings.Split(v, ",") {
			id, ok := db.ParseID(strings.TrimSpace(part))
			if !ok {
				return nil, false, fieldError(name, "must be snowflake ids, comma-separated")
			}
			out = append(out, int64(id))
		}
	}
	return out, true, nil
}

// effectiveLocation is the SQL of an asset's location: its active group's
// when that has one, else its own.
const effectiveLocation = `coalesce((SELECT g2.location_id FROM asset_group_members m2 JOIN asset_groups g2 ON g2.id = m2.group_id
    WHERE m2.asset_id = asset_groups.id AND g2.active AND g2.location_id IS NOT NULL LIMIT 1), location_id)`

// groupFilters turns the spec's list filters into SQL over asset_groups.
func groupFilters(rq *request, assets bool) (string, []any, error) {
	var where []string
	var args []any
	in := func(name, column string) error {
		ids, ok, err := idList(rq, name)
		if err != nil || !ok {
			return err
		}
		where = append(where, column+" IN (SELECT value FROM json_each(?))")
		args = append(args, idsJSON(ids))
		return nil
	}
	loc := "location_id"
	if assets {
		loc = effectiveLocation
	}
	for _, f := range [][2]string{{"types", "type_id"}, {"fleets", "fleet_id"}, {"status", "status_id"}, {"locations", loc}} {
		if err := in(f[0], f[1]); err != nil {
			return "", nil, err
		}
	}
	if assets {
		ids, ok, err := idList(rq, "asset_groups")
		if err != nil {
			return "", nil, err
		}
		if ok {
			where = append(where, "(id IN (SELECT asset_id FROM asset_group_members WHERE group_id IN (SELECT value FROM json_each(?))) OR id IN (SELECT value FROM json_each(?)))")
			args = append(args, idsJSON(ids), idsJSON(ids))
		}
	} else {
		if v := rq.r.URL.Query().Get("ephemerality"); v != "" {
			if v != "0" && v != "1" && v != "2" {
				return "", nil, fieldError("ephemerality", "must be 0, 1 or 2")
			}
			where = append(where, "ephemerality = ?")
			args = append(args, int64(v[0]-'0'))
		}
		if _, ok := rq.r.URL.Query()["active"]; ok {
			active, err := rq.queryBool("active", true)
			if err != nil {
				return "", nil, err
			}
			where = append(where, "active = ?")
			args = append(args, active)
		}
	}
	if v := rq.r.URL.Query().Get("name"); v != "" {
		n := normaliseName(v)
		where = append(where, "normalised_name >= ? AND normalised_name < ?")
		args = append(args, n, n+"\U0010FFFF")
	}
	return strings.Join(where, " AND "), args, nil
}

var groupFilterFields = db.FilterFields{
	"name": nameFilter, "active": {Column: "active", Kind: db.FieldBool}, "ephemerality": {Column: "ephemerality", Kind: db.FieldNumber},
	"fleet_id": {Column: "fleet_id", Kind: db.FieldID}, "type_id": {Column: "type_id", Kind: db.FieldID},
	"status_id": {Column: "status_id", Kind: db.FieldID}, "location_id": {Column: "location_id", Kind: db.FieldID},
	"number": {Column: "number", Kind: db.FieldNumber}, "formatted_number": {Column: "formatted_number", Kind: db.FieldString},
}

// groupList lists assets (assets) or groups of an organisation: a member
// sees the organisation's and those of fleets shared with it (accepted); a
// holder of accepted shares of the organisation's fleets sees those
// fleets' only.
func (s *Server) groupList(assets bool) handlerFunc {
	return func(rq *request) error {
		var filters string
		var fargs []any
		query := func(int64) (listQuery, error) {
			lq, err := parseListQuery(rq.r, groupFilterFields)
			if err != nil {
				return lq, err
			}
			filters, fargs, err = groupFilters(rq, assets)
			return lq, err
		}
		scope := func(_ *sql.Tx, q *db.Queries, orgID int64, _ listQuery) (listSQL, error) {
			a, err := orgAccess(rq, q, orgID, http.StatusBadRequest, undecided)
			if err != nil {
				return listSQL{}, err
			}
			where, args, err := listScope(rq.ctx, q, a)
			if err != nil {
				return listSQL{}, err
			}
			if assets {
				where += " AND ephemerality = 0"
			}
			if filters != "" {
				where += " AND " + filters
				args = append(args, fargs...)
			}
			return listSQL{From: "asset_groups", Where: where, Args: args}, nil
		}
		if assets {
			return listPage(s, rq, listSpec[assetJSON]{Path: "id", Query: query, Scope: scope,
				Rows: byIDs((*db.Queries).AssetGroupListByIDs, renderAssets)})
		}
		return listPage(s, rq, listSpec[assetGroupJSON]{Path: "id", Query: query, Scope: scope,
			Rows: byIDs((*db.Queries).AssetGroupListByIDs, renderGroups)})
	}
}

// ---- Group handlers

func (s *Server) assetGroupCreate(rq *request) error {
	orgID, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var b assetBody
	if err := rq.decodeCreate(&b, append(groupReadOnly, "group_id", "prefix_id", "number", "subscription_id")...); err != nil {
		return err
	}
	if err := b.validate(); err != nil {
		return err
	}
	p := problems{}
	if !b.TypeID.Set || b.TypeID.ID == 0 {
		p.add("type_id", "is required")
	}
	if b.Name == nil {
		p.add("name", "is required")
	}
	if err := p.err(); err != nil {
		return err
	}
	var out assetGroupJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		a, err := orgAccess(rq, q, orgID, http.StatusBadRequest, 0)
		if err != nil {
			return err
		}
		if err := requireOrgOrFleet(rq.ctx, q, a, rq.user.ID, b.FleetID); err != nil {
			return err
		}
		t, err := typeOfKind(rq.ctx, q, orgID, b.TypeID.ID, ephemeralTemporary, ephemeralPermanent)
		if err != nil {
			return err
		}
		g := db.AssetGroup{OrganisationID: orgID, TypeID: t.ID, Ephemerality: t.Ephemerality, FleetID: t.FleetID, Active: true}
		if err := applyRefs(rq.ctx, q, &g, &b); err != nil {
			return err
		}
		g, err = q.AssetGroupCreate(rq.ctx, db.AssetGroupCreateParams{ID: s.store.IDs.Next(), OrganisationID: orgID, TypeID: t.ID,
			Ephemerality: t.Ephemerality, FleetID: g.FleetID, StatusID: g.StatusID, LocationID: g.LocationID, SubLocationID: g.SubLocationID,
			Name: g.Name, NormalisedName: g.NormalisedName, Description: g.Description, Active: g.Active, CreatedAt: s.nowText(), CreatedBy: rq.user.ID})
		if err != nil {
			return err
		}
		if err := writeFields(rq.ctx, q, g, &b); err != nil {
			return err
		}
		out, err = renderGroup(rq.ctx, q, g)
		return err
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusCreated, out)
}

func (s *Server) assetGroupGet(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var out assetGroupJSON
	err = s.store.ReadTx(rq.ctx, func(q *db.Queries) error {
		g, a, err := assetGroupAccess(rq.ctx, q, rq.user.ID, id, false)
		if err != nil {
			return err
		}
		if err := requireAssetRead(rq.ctx, q, a, g); err != nil {
			return err
		}
		out, err = renderGroup(rq.ctx, q, g)
		return err
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

func (s *Server) assetGroupPatch(rq *request) error {
	return s.groupPatchWith(rq, false)
}

// assetGroupMember is PUT, PATCH and DELETE of
// /api/assetgroups/{id}/assets/{assetId}: members of the organisation
// (spec), with the spec's 400s.
func (s *Server) assetGroupMember(method string) handlerFunc {
	return func(rq *request) error {
		id, err := rq.pathID("id")
		if err != nil {
			return err
		}
		assetID, err := rq.pathID("assetId")
		if err != nil {
			return err
		}
		var order *int64
		if method == http.MethodPatch {
			var b struct {
				Order *int64 `json:"order"`
			}
			if err := rq.decode(&b); err != nil {
				return err
			}
			if b.Order == nil {
				return fieldError("order", "is required")
			}
			order = b.Order
		}
		var out assetGroupJSON
		err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
			g, a, err := assetGroupAccess(rq.ctx, q, rq.user.ID, id, false)
			if err != nil {
				return err
			}
			if err := a.Require(0); err != nil {
				return err
			}
			asset, err := q.AssetGroupGet(rq.ctx, assetID)
			if db.IsNotFound(err) || (err == nil && (asset.OrganisationID != g.OrganisationID || asset.Ephemerality != ephemeralSingle)) {
				return notFound("The asset does not exist.")
			} else if err != nil {
				return err
			}
			switch {
			case g.Ephemerality == ephemeralSingle:
				return badRequest("A single group holds only its own asset.")
			case method != http.MethodPatch && g.Ephemerality != ephemeralTemporary:
				return badRequest("Assets join and leave only temporary groups here; set group_id on the asset for a permanent group.")
			}
			switch method {
			case http.MethodPut:
				if _, err := joinGroup(rq.ctx, q, asset, g.ID, "assetId"); err != nil {
					return err
				}
			case http.MethodDelete:
				left, err := leaveGroup(rq.ctx, q, g.ID, asset.ID)
				if err != nil {
					return err
				}
				if !left {
					return badRequest("The asset is not in this group.")
				}
			default:
				m, err := q.AssetGroupMemberGet(rq.ctx, db.AssetGroupMemberGetParams{GroupID: g.ID, AssetID: asset.ID})
				if db.IsNotFound(err) {
					return badRequest("The asset is not in this group.")
				} else if err != nil {
					return err
				}
				n, err := q.AssetGroupMemberCount(rq.ctx, g.ID)
				if err != nil {
					return err
				}
				if *order < 0 || *order >= n {
					return fieldError("order", fmt.Sprintf("must be from 0 to %d", n-1))
				}
				if err := q.AssetGroupMemberMove(rq.ctx, db.AssetGroupMemberMoveParams{AssetID: asset.ID, To: *order, From: m.Position, GroupID: g.ID}); err != nil {
					return err
				}
			}
			out, err = renderGroup(rq.ctx, q, g)
			return err
		})
		if err != nil {
			return err
		}
		return rq.json(http.StatusOK, out)
	}
}

// holdsFleetShare: the user holds an accepted share of the fleet.
func holdsFleetShare(ctx context.Context, q *db.Queries, userID, fleetID int64) (bool, error) {
	return q.FleetShareHeld(ctx, db.FleetShareHeldParams{FleetID: fleetID, UserID: &userID})
}

// requireMemberOrShare passes a member of the organisation, or a holder of
// an accepted share of one of its fleets (the spec's "member or accepted
// fleet share" reads: locations, sub locations, systems).
func requireMemberOrShare(ctx context.Context, q *db.Queries, a Access) error {
	if a.IsMember() {
		return nil
	}
	fleets, err := q.FleetSharesHeldFrom(ctx, db.FleetSharesHeldFromParams{OrganisationID: a.OrganisationID, UserID: &a.UserID})
	if err != nil || len(fleets) > 0 {
		return err
	}
	return a.Require(0)
}

// listScope is the base condition of the asset and group lists over
// asset_groups: a member sees the organisation's rows and those of fleets
// shared with the organisation; a share holder, the shared fleets' rows.
func listScope(ctx context.Context, q *db.Queries, a Access) (string, []any, error) {
	if a.IsMember() {
		shared, err := q.FleetSharesTo(ctx, &a.OrganisationID)
		if err != nil {
			return "", nil, err
		}
		if len(shared) == 0 {
			return "organisation_id = ?", []any{a.OrganisationID}, nil
		}
		return "(organisation_id = ? OR fleet_id IN (SELECT value FROM json_each(?)))", []any{a.OrganisationID, idsJSON(shared)}, nil
	}
	fleets, err := q.FleetSharesHeldFrom(ctx, db.FleetSharesHeldFromParams{OrganisationID: a.OrganisationID, UserID: &a.UserID})
	if err != nil {
		return "", nil, err
	}
	if len(fleets) == 0 {
		return "", nil, a.Require(0)
	}
	return "organisation_id = ? AND fleet_id IN (SELECT value FROM json_each(?))", []any{a.OrganisationID, idsJSON(fleets)}, nil
}
