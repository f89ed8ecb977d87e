package server

import (
	"context"
	"net/http"
	"strings"

	"workspace/db"
)

// Work item types (operations-data.md, Work items): name 2-20, colour as
// #RRGGBB, an optional prefix of the same organisation that numbers the
// type's work items. Decisions in docs/workitems.md.

const (
	minWorkItemTypeName = 2
	maxWorkItemTypeName = 20
)

type workItemTypeJSON struct {
	ID             db.ID  `json:"id"`
	OrganisationID db.ID  `json:"organisation_id"`
	Name           string `json:"name"`
	Description    string `json:"description"`
	Colour         string `json:"colour"`
	PrefixID       *db.ID `json:"prefix_id"`
	Enabled        bool   `json:"enabled"`
}

func toWorkItemType(t db.WorkItemType) workItemTypeJSON {
	return workItemTypeJSON{ID: db.ID(t.ID), OrganisationID: db.ID(t.OrganisationID), Name: t.Name,
		Description: t.Description, Colour: t.Colour, PrefixID: optID(t.PrefixID), Enabled: t.Enabled}
}

var workItemTypeReadOnly = []string{"id", "organisation_id"}

type workItemTypeBody struct {
	Name        *string    `json:"name"`
	Description *string    `json:"description"`
	Colour      *string    `json:"colour"`
	PrefixID    Opt[db.ID] `json:"prefix_id"`
	Enabled     *bool      `json:"enabled"`
}

// apply validates the body and writes it over t (defaults or the current row).
func (b *workItemTypeBody) apply(t *db.WorkItemType, p problems) error {
	if b.Name != nil {
		t.Name = strings.TrimSpace(*b.Name)
		p.length("name", t.Name, minWorkItemTypeName, maxWorkItemTypeName)
	}
	if b.Description != nil {
		t.Description = *b.Description
		p.length("description", t.Description, 0, maxDescriptionLen)
	}
	if b.Colour != nil {
		if !colourRE.MatchString(*b.Colour) {
			p.add("colour", "must be a colour as #RRGGBB")
		} else {
			t.Colour = strings.ToUpper(*b.Colour)
		}
	}
	if b.PrefixID.Set {
		if b.PrefixID.Null {
			t.PrefixID = nil
		} else {
			id := int64(b.PrefixID.Value)
			t.PrefixID = &id
		}
	}
	if b.Enabled != nil {
		t.Enabled = *b.Enabled
	}
	return p.err()
}

// checkPrefix: a type's prefix must be one of its organisation's (400).
func checkPrefix(ctx context.Context, q *db.Queries, orgID int64, prefixID *int64) error {
	if prefixID == nil {
		return nil
	}
	pr, err := q.PrefixGet(ctx, *prefixID)
	if db.IsNotFound(err) || (err == nil && pr.OrganisationID != orgID) {
		return fieldError("prefix_id", "names no prefix of this organisation")
	}
	return err
}

// workItemTypeAccess loads a type and the caller's access; absent is the
// row's status for a missing type.
func workItemTypeAccess(ctx context.Context, q *db.Queries, userID, id int64, absent int) (db.WorkItemType, Access, error) {
	t, err := q.WorkItemTypeGet(ctx, id)
	if db.IsNotFound(err) {
		return t, Access{}, errorf(absent, "The work item type does not exist.")
	}
	if err != nil {
		return t, Access{}, err
	}
	a, err := authorize(ctx, q, userID, t.OrganisationID, Scopes{})
	if db.IsNotFound(err) {
		return t, Access{}, errorf(absent, "The work item type does not exist.")
	}
	return t, a, err
}

func (s *Server) workItemTypeCreate(rq *request) error {
	orgID, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var b workItemTypeBody
	if err := rq.decodeCreate(&b, workItemTypeReadOnly...); err != nil {
		return err
	}
	t := db.WorkItemType{Colour: defaultColour, Enabled: true}
	p := problems{}
	if b.Name == nil {
		p.add("name", "is required")
	}
	if err := b.apply(&t, p); err != nil {
		return err
	}
	var out workItemTypeJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		if _, err := orgAccess(rq, q, orgID, http.StatusBadRequest, ManageOrganisation); err != nil {
			return err
		}
		if err := checkPrefix(rq.ctx, q, orgID, t.PrefixID); err != nil {
			return err
		}
		created, err := q.WorkItemTypeCreate(rq.ctx, db.WorkItemTypeCreateParams{
			ID: s.store.IDs.Next(), OrganisationID: orgID, Name: t.Name, Description: t.Description,
			Colour: t.Colour, PrefixID: t.PrefixID, Enabled: t.Enabled, CreatedAt: s.nowText(),
		})
		if err != nil {
			return err
		}
		out = toWorkItemType(created)
		return nil
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusCreated, out)
}

var workItemTypeFilter = db.FilterFields{
	"enabled": {Column: "enabled", Kind: db.FieldBool},
	"name":    {Column: "name", Kind: db.FieldString, CaseInsensitive: true},
}

// workItemTypeList: members read their organisation's types in id order.
func (s *Server) workItemTypeList(rq *request) error {
	return listPage(s, rq, listSpec[workItemTypeJSON]{Path: "id", Fields: workItemTypeFilter,
		Scope: orgScope(rq, 0, "work_item_types", ""),
		Rows:  byIDs((*db.Queries).WorkItemTypeListByIDs, each(toWorkItemType))})
}

func (s *Server) workItemTypeGet(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	t, a, err := workItemTypeAccess(rq.ctx, s.store.R, rq.user.ID, id, http.StatusNotFound)
	if err != nil {
		return err
	}
	if err := a.Require(0); err != nil {
		return err
	}
	return rq.json(http.StatusOK, toWorkItemType(t))
}

func (s *Server) workItemTypePatch(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var b workItemTypeBody
	ro, err := rq.decodePatch(&b, workItemTypeReadOnly...)
	if err != nil {
		return err
	}
	var out workItemTypeJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		t, a, err := workItemTypeAccess(rq.ctx, q, rq.user.ID, id, http.StatusNotFound)
		if err != nil {
			return err
		}
		if err := a.Require(ManageOrganisation); err != nil {
			return err
		}
		if err := ro.check(toWorkItemType(t)); err != nil {
			return err
		}
		if err := b.apply(&t, problems{}); err != nil {
			return err
		}
		if err := checkPrefix(rq.ctx, q, t.OrganisationID, t.PrefixID); err != nil {
			return err
		}
		t, err = q.WorkItemTypeUpdate(rq.ctx, db.WorkItemTypeUpdateParams{
			ID: t.ID, OrganisationID: t.OrganisationID, Name: t.Name, Description: t.Description,
			Colour: t.Colour, PrefixID: t.PrefixID, Enabled: t.Enabled,
		})
		if err != nil {
			return err
		}
		out = toWorkItemType(t)
		return nil
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

// typeCounts is work_item_types_count of a project or milestone, read from
// the trigger-kept work_item_type_counts; nothing is read when the scope
// holds no work items (its open and closed counts are zero).
func typeCounts(ctx context.Context, q *db.Queries, scopeID, open, closed int64) (map[string]workItemTypeCount, error) {
	out := map[string]workItemTypeCount{}
	if open == 0 && closed == 0 {
		return out, nil
	}
	rows, err := q.WorkItemTypeCountsOf(ctx, scopeID)
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		out[db.ID(r.TypeID).String()] = workItemTypeCount{OpenCount: r.OpenCount, ClosedCount: r.ClosedCount}
	}
	return out, nil
}

// documentWorkItemCounts is a document's open and closed work item counts and
// work_item_types_count, all from its trigger-kept work_item_type_counts
// entries (migration 0022): the documents table carries no counters.
func documentWorkItemCounts(ctx context.Context, q *db.Queries, documentID int64) (open, closed int64, types map[string]any, err error) {
	types = map[string]any{}
	rows, err := q.WorkItemTypeCountsOf(ctx, documentID)
	if err != nil {
		return 0, 0, nil, err
	}
	for _, r := range rows {
		open += r.OpenCount
		closed += r.ClosedCount
		types[db.ID(r.TypeID).String()] = workItemTypeCount{OpenCount: r.OpenCount, ClosedCount: r.ClosedCount}
	}
	return open, closed, types, nil
}
