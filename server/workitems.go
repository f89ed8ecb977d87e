package server

import (
	"context"
	"database/sql"
	"net/http"
	"strconv"
	"strings"
	"time"

	"workspace/db"
)

// Work items (operations-data.md, Work items; decisions in
// docs/workitems.md). Access is VIEW_WORKITEMS to read and CREATE_WORKITEMS
// to write, resolved on the project layer when the work item has a project.

const (
	minWorkItemTitle = 2
	maxWorkItemTitle = 200
	maxAssignees     = 100
	workItemCounter  = "work_item"
)

type workItemTypeRefJSON struct {
	ID       db.ID  `json:"id"`
	Name     string `json:"name"`
	Colour   string `json:"colour"`
	PrefixID *db.ID `json:"prefix_id"`
	Enabled  bool   `json:"enabled"`
}

type workItemTrackingJSON struct {
	CreatedAt string    `json:"created_at"`
	CreatedBy *userJSON `json:"created_by"`
	UpdatedAt string    `json:"updated_at"`
	UpdatedBy *userJSON `json:"updated_by"`
	ClosedAt  *string   `json:"closed_at"`
	ClosedBy  *userJSON `json:"closed_by"`
}

type workItemJSON struct {
	ID              db.ID                `json:"id"`
	OrganisationID  db.ID                `json:"organisation_id"`
	Number          int64                `json:"number"`
	FormattedNumber string               `json:"formatted_number"`
	TypeID          db.ID                `json:"type_id"`
	Type            workItemTypeRefJSON  `json:"type"`
	Title           string               `json:"title"`
	Description     string               `json:"description"`
	Status          string               `json:"status"`
	ProjectID       *db.ID               `json:"project_id"`
	MilestoneID     *db.ID               `json:"milestone_id"`
	PackageID       *db.ID               `json:"package_id"`
	DocumentID      *db.ID               `json:"document_id"`
	AssetGroupID    *db.ID               `json:"asset_group_id"`
	FleetID         *db.ID               `json:"fleet_id"`
	LocationID      *db.ID               `json:"location_id"`
	SubLocationID   *db.ID               `json:"sub_location_id"`
	StartAt         *string              `json:"start_at"`
	FinishAt        *string              `json:"finish_at"`
	Assignees       []userJSON           `json:"assignees"`
	Schedules       []scheduleJSON       `json:"schedules"`
	Tracking        workItemTrackingJSON `json:"tracking"`
}

var workItemReadOnly = []string{"id", "organisation_id", "number", "formatted_number", "type", "assignees", "schedules", "tracking"}

// workItemView is what rendering a set of work items needs besides their rows.
type workItemView struct {
	types     map[int64]db.WorkItemType
	assignees map[int64][]int64
	users     map[int64]userJSON
	schedules map[int64][]scheduleJSON
}

// loadWorkItemView reads the types, assignees and users of the work items.
func loadWorkItemView(ctx context.Context, q *db.Queries, items []db.WorkItem) (workItemView, error) {
	v := workItemView{types: map[int64]db.WorkItemType{}, assignees: map[int64][]int64{}, schedules: map[int64][]scheduleJSON{}}
	if len(items) == 0 {
		v.users = map[int64]userJSON{}
		return v, nil
	}
	ids, typeIDs := make([]int64, len(items)), []int64{}
	var userIDs []*int64
	for i := range items {
		w := &items[i]
		ids[i] = w.ID
		typeIDs = append(typeIDs, w.TypeID)
		userIDs = append(userIDs, &w.CreatedBy, &w.UpdatedBy, w.ClosedBy)
	}
	types, err := q.WorkItemTypeListByIDs(ctx, idsJSON(typeIDs))
	if err != nil {
		return v, err
	}
	for _, t := range types {
		v.types[t.ID] = t
	}
	as, err := q.WorkItemAssigneesOf(ctx, idsJSON(ids))
	if err != nil {
		return v, err
	}
	for _, a := range as {
		v.assignees[a.WorkItemID] = append(v.assignees[a.WorkItemID], a.UserID)
		userIDs = append(userIDs, &a.UserID)
	}
	v.users, err = userObjects(ctx, q, userIDs...)
	if err != nil {
		return v, err
	}
	scs, err := q.WorkItemSchedulesOf(ctx, idsJSON(ids))
	if err != nil {
		return v, err
	}
	rendered, err := schedulesJSON(ctx, q, scs)
	if err != nil {
		return v, err
	}
	for _, sc := range rendered {
		v.schedules[int64(*sc.WorkItemID)] = append(v.schedules[int64(*sc.WorkItemID)], sc)
	}
	return v, nil
}

func (v workItemView) render(w db.WorkItem) workItemJSON {
	t := v.types[w.TypeID]
	out := workItemJSON{
		ID: db.ID(w.ID), OrganisationID: db.ID(w.OrganisationID), Number: w.Number, FormattedNumber: w.FormattedNumber,
		TypeID: db.ID(w.TypeID),
		Type:   workItemTypeRefJSON{ID: db.ID(w.TypeID), Name: t.Name, Colour: t.Colour, PrefixID: optID(t.PrefixID), Enabled: t.Enabled},
		Title:  w.Title, Description: w.Description, Status: w.Status,
		ProjectID: optID(w.ProjectID), MilestoneID: optID(w.MilestoneID), PackageID: optID(w.PackageID),
		DocumentID: optID(w.DocumentID), AssetGroupID: optID(w.AssetGroupID), FleetID: optID(w.FleetID),
		LocationID: optID(w.LocationID), SubLocationID: optID(w.SubLocationID), StartAt: w.StartAt, FinishAt: w.FinishAt,
		Assignees: []userJSON{}, Schedules: v.schedules[w.ID],
		Tracking: workItemTrackingJSON{
			CreatedAt: w.CreatedAt, CreatedBy: userRef(v.users, &w.CreatedBy), UpdatedAt: w.UpdatedAt,
			UpdatedBy: userRef(v.users, &w.UpdatedBy), ClosedAt: w.ClosedAt, ClosedBy: userRef(v.users, w.ClosedBy),
		},
	}
	if out.Schedules == nil { // an item without schedules answers [], not null
		out.Schedules = []scheduleJSON{}
	}
	for _, id := range v.assignees[w.ID] {
		out.Assignees = append(out.Assignees, *userRef(v.users, &id))
	}
	return out
}

func renderWorkItems(ctx context.Context, q *db.Queries, items []db.WorkItem) ([]workItemJSON, error) {
	v, err := loadWorkItemView(ctx, q, items)
	if err != nil {
		return nil, err
	}
	out := make([]workItemJSON, len(items))
	for i, w := range items {
		out[i] = v.render(w)
	}
	return out, nil
}

func fullWorkItem(ctx context.Context, q *db.Queries, w db.WorkItem) (workItemJSON, error) {
	out, err := renderWorkItems(ctx, q, []db.WorkItem{w})
	if err != nil {
		return workItemJSON{}, err
	}
	return out[0], nil
}

type workItemBody struct {
	TypeID        *db.ID      `json:"type_id"`
	Title         *string     `json:"title"`
	Description   *string     `json:"description"`
	Status        *string     `json:"status"`
	ProjectID     Opt[db.ID]  `json:"project_id"`
	MilestoneID   Opt[db.ID]  `json:"milestone_id"`
	PackageID     Opt[db.ID]  `json:"package_id"`
	DocumentID    Opt[db.ID]  `json:"document_id"`
	AssetGroupID  Opt[db.ID]  `json:"asset_group_id"`
	FleetID       Opt[db.ID]  `json:"fleet_id"`
	LocationID    Opt[db.ID]  `json:"location_id"`
	SubLocationID Opt[db.ID]  `json:"sub_location_id"`
	StartAt       Opt[string] `json:"start_at"`
	FinishAt      Opt[string] `json:"finish_at"`
	AssigneeIDs   *[]db.ID    `json:"assignee_ids"`
}

// workItemTime reads an RFC 3339 time (years 0-9999 in UTC) into the stored layout.
func workItemTime(p problems, field, s string) *string {
	t, err := time.Parse(time.RFC3339Nano, s)
	if y := t.UTC().Year(); err != nil || y < 0 || y > 9999 {
		p.add(field, "must be an ISO 8601 timestamp such as 2026-11-21T09:30:00.000Z")
		return nil
	}
	v := db.FormatTime(t)
	return &v
}

func setRef(dst **int64, o Opt[db.ID]) {
	switch {
	case !o.Set:
	case o.Null:
		*dst = nil
	default:
		v := int64(o.Value)
		*dst = &v
	}
}

// apply validates the body and writes it over w (a new item or the current
// row); it returns the assignee ids when the body sets them.
func (b *workItemBody) apply(w *db.WorkItem, p problems) ([]int64, error) {
	if b.TypeID != nil {
		w.TypeID = int64(*b.TypeID)
	}
	if b.Title != nil {
		w.Title = strings.TrimSpace(*b.Title)
		p.length("title", w.Title, minWorkItemTitle, maxWorkItemTitle)
	}
	if b.Description != nil {
		w.Description = *b.Description
		p.length("description", w.Description, 0, maxDescriptionLen)
	}
	checkStatus(p, b.Status)
	if b.Status != nil {
		w.Status = *b.Status
	}
	setRef(&w.ProjectID, b.ProjectID)
	setRef(&w.MilestoneID, b.MilestoneID)
	setRef(&w.PackageID, b.PackageID)
	setRef(&w.DocumentID, b.DocumentID)
	setRef(&w.AssetGroupID, b.AssetGroupID)
	setRef(&w.FleetID, b.FleetID)
	setRef(&w.LocationID, b.LocationID)
	setRef(&w.SubLocationID, b.SubLocationID)
	for _, f := range []struct {
		name string
		o    Opt[string]
		dst  **string
	}{{"start_at", b.StartAt, &w.StartAt}, {"finish_at", b.FinishAt, &w.FinishAt}} {
		switch {
		case !f.o.Set:
		case f.o.Null:
			*f.dst = nil
		default:
			*f.dst = workItemTime(p, f.name, f.o.Value)
		}
	}
	if w.StartAt != nil && w.FinishAt != nil && *w.FinishAt < *w.StartAt {
		p.add("finish_at", "must not be before start_at")
	}
	var assignees []int64
	if b.AssigneeIDs != nil {
		if len(*b.AssigneeIDs) > maxAssignees {
			p.add("assignee_ids", "must name at most "+strconv.Itoa(maxAssignees)+" users")
		}
		seen := map[int64]bool{}
		assignees = []int64{}
		for _, id := range *b.AssigneeIDs {
			if !seen[int64(id)] {
				seen[int64(id)] = true
				assignees = append(assignees, int64(id))
			}
		}
	}
	return assignees, p.err()
}

// checkWorkItemRefs checks that every reference of w names a row of w's
// organisation that fits the others (400 naming the field). A milestone or
// package must belong to the work item's project; a sub location to its
// location. A disabled type or a deleted document takes no new work items
// (prev, the row before a PATCH, says what is new).
func checkWorkItemRefs(ctx context.Context, q *db.Queries, w *db.WorkItem, prev *db.WorkItem) error {
	typeChanged := prev == nil || prev.TypeID != w.TypeID
	documentChanged := prev == nil || !sameRef(prev.DocumentID, w.DocumentID)
	org := w.OrganisationID
	p := problems{}
	t, err := q.WorkItemTypeGet(ctx, w.TypeID)
	switch {
	case db.IsNotFound(err) || (err == nil && t.OrganisationID != org):
		p.add("type_id", "names no work item type of this organisation")
	case err != nil:
		return err
	case typeChanged && !t.Enabled:
		p.add("type_id", "names a disabled work item type")
	}
	if w.ProjectID != nil {
		pr, err := q.ProjectGet(ctx, *w.ProjectID)
		if db.IsNotFound(err) || (err == nil && pr.OrganisationID != org) {
			p.add("project_id", "names no project of this organisation")
		} else if err != nil {
			return err
		}
	}
	if w.MilestoneID != nil {
		m, err := q.MilestoneGet(ctx, *w.MilestoneID)
		switch {
		case db.IsNotFound(err) || (err == nil && m.OrganisationID != org):
			p.add("milestone_id", "names no milestone of this organisation")
		case err != nil:
			return err
		case w.ProjectID == nil || *w.ProjectID != m.ProjectID:
			p.add("milestone_id", "must be a milestone of the work item's project")
		}
	}
	if w.PackageID != nil {
		pk, err := q.PackageGet(ctx, *w.PackageID)
		switch {
		case db.IsNotFound(err) || (err == nil && pk.OrganisationID != org):
			p.add("package_id", "names no package of this organisation")
		case err != nil:
			return err
		case w.ProjectID == nil || *w.ProjectID != pk.ProjectID:
			p.add("package_id", "must be a package of the work item's project")
		}
	}
	if w.LocationID != nil {
		l, err := q.LocationGet(ctx, *w.LocationID)
		if db.IsNotFound(err) || (err == nil && l.OrganisationID != org) {
			p.add("location_id", "names no location of this organisation")
		} else if err != nil {
			return err
		}
	}
	if w.SubLocationID != nil {
		sl, err := q.WorkItemRefSubLocation(ctx, *w.SubLocationID)
		switch {
		case db.IsNotFound(err) || (err == nil && sl.OrganisationID != org):
			p.add("sub_location_id", "names no sub location of this organisation")
		case err != nil:
			return err
		case w.LocationID == nil || *w.LocationID != sl.LocationID:
			p.add("sub_location_id", "must be a sub location of the work item's location")
		}
	}
	if w.AssetGroupID != nil {
		g, err := q.WorkItemRefAssetGroup(ctx, *w.AssetGroupID)
		if db.IsNotFound(err) || (err == nil && g.OrganisationID != org) {
			p.add("asset_group_id", "names no asset group of this organisation")
		} else if err != nil {
			return err
		}
	}
	if w.FleetID != nil {
		fo, err := q.WorkItemRefFleet(ctx, *w.FleetID)
		if db.IsNotFound(err) || (err == nil && fo != org) {
			p.add("fleet_id", "names no fleet of this organisation")
		} else if err != nil {
			return err
		}
	}
	if w.DocumentID != nil {
		d, err := q.WorkItemRefDocument(ctx, *w.DocumentID)
		// A work item keeps a document deleted after it was linked.
		if db.IsNotFound(err) || (err == nil && (d.OrganisationID != org || (d.DeletedAt != nil && documentChanged))) {
			p.add("document_id", "names no document of this organisation")
		} else if err != nil {
			return err
		}
	}
	return p.err()
}

// setAssignees replaces the work item's assignees; each must be a member
// (not pending) of its organisation.
// It returns the ids that were not assigned before (to notify them).
func setAssignees(ctx context.Context, q *db.Queries, w db.WorkItem, ids []int64) ([]int64, error) {
	if len(ids) > 0 {
		members, err := q.WorkItemMembersAmong(ctx, db.WorkItemMembersAmongParams{OrganisationID: w.OrganisationID, IdsJson: idsJSON(ids)})
		if err != nil {
			return nil, err
		}
		if len(members) != len(ids) {
			return nil, fieldError("assignee_ids", "must name members of the organisation")
		}
	}
	before, err := q.WorkItemAssigneesOf(ctx, idsJSON([]int64{w.ID}))
	if err != nil {
		return nil, err
	}
	had := map[int64]bool{}
	for _, a := range before {
		had[a.UserID] = true
	}
	if err := q.WorkItemAssigneesClear(ctx, w.ID); err != nil {
		return nil, err
	}
	var added []int64
	for _, id := range ids {
		if err := q.WorkItemAssigneeAdd(ctx, db.WorkItemAssigneeAddParams{WorkItemID: w.ID, UserID: id}); err != nil {
			return nil, err
		}
		if !had[id] {
			added = append(added, id)
		}
	}
	return added, nil
}

// drawWorkItemNumber numbers a new work item from its type's prefix, else
// from the organisation's work item counter, inside the caller's write
// transaction (gap-free, never repeated).
func drawWorkItemNumber(ctx context.Context, q *db.Queries, w *db.WorkItem) error {
	t, err := q.WorkItemTypeGet(ctx, w.TypeID)
	if err != nil {
		return err
	}
	if t.PrefixID != nil {
		n, formatted, err := drawNumber(ctx, q, w.OrganisationID, *t.PrefixID)
		if e, ok := err.(*Error); ok && e.Status == http.StatusBadRequest {
			return fieldError("type_id", "numbers from a disabled prefix")
		}
		if err != nil {
			return err
		}
		w.PrefixID, w.Number, w.FormattedNumber = t.PrefixID, n, formatted
		return nil
	}
	n, err := counterNext(ctx, q, w.OrganisationID, workItemCounter)
	if err != nil {
		return err
	}
	w.PrefixID, w.Number, w.FormattedNumber = nil, n, plainNumber(n)
	return nil
}

// countAssetGroups keeps the asset groups' open and closed work item counts
// when a work item is created (old nil) or changes status or asset group.
// Projects and milestones are counted by triggers (migration 0021); asset
// groups cannot be (queries/workitems.sql says why).
func countAssetGroups(ctx context.Context, q *db.Queries, old *db.WorkItem, w db.WorkItem) error {
	if old != nil && sameRef(old.AssetGroupID, w.AssetGroupID) && old.Status == w.Status {
		return nil
	}
	add := func(groupID *int64, status string, d int64) error {
		if groupID == nil {
			return nil
		}
		p := db.AssetGroupWorkItemCountAddParams{ID: *groupID, OrganisationID: w.OrganisationID}
		if status == statusOpen {
			p.OpenDelta = d
		} else {
			p.ClosedDelta = d
		}
		return q.AssetGroupWorkItemCountAdd(ctx, p)
	}
	if old != nil {
		if err := add(old.AssetGroupID, old.Status, -1); err != nil {
			return err
		}
	}
	return add(w.AssetGroupID, w.Status, 1)
}

// workItemEvent is a work item as integrations receive it.
type workItemEvent struct{ workItemJSON }

func (e workItemEvent) summary() string { return e.FormattedNumber + " " + e.Title }

func (s *Server) workItemCreate(rq *request) error {
	orgID, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var b workItemBody
	if err := rq.decodeCreate(&b, workItemReadOnly...); err != nil {
		return err
	}
	w := db.WorkItem{OrganisationID: orgID, Status: statusOpen}
	p := problems{}
	if b.TypeID == nil {
		p.add("type_id", "is required")
	}
	if b.Title == nil {
		p.add("title", "is required")
	}
	assignees, err := b.apply(&w, p)
	if err != nil {
		return err
	}
	var out workItemJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		if _, err := orgAccess(rq, q, orgID, http.StatusBadRequest, 0); err != nil {
			return err
		}
		if err := checkWorkItemRefs(rq.ctx, q, &w, nil); err != nil {
			return err
		}
		a, err := authorize(rq.ctx, q, rq.user.ID, orgID, workItemScopes(w))
		if err != nil {
			return err
		}
		if err := a.Require(CreateWorkitems); err != nil {
			return err
		}
		if err := drawWorkItemNumber(rq.ctx, q, &w); err != nil {
			return err
		}
		now := s.nowText()
		params := db.WorkItemCreateParams{
			ID: s.store.IDs.Next(), OrganisationID: orgID, TypeID: w.TypeID, PrefixID: w.PrefixID, Number: w.Number,
			FormattedNumber: w.FormattedNumber, Title: w.Title, Description: w.Description, Status: w.Status,
			ProjectID: w.ProjectID, MilestoneID: w.MilestoneID, PackageID: w.PackageID, DocumentID: w.DocumentID,
			AssetGroupID: w.AssetGroupID, FleetID: w.FleetID, LocationID: w.LocationID, SubLocationID: w.SubLocationID,
			StartAt: w.StartAt, FinishAt: w.FinishAt, CreatedAt: now, CreatedBy: rq.user.ID, UpdatedAt: now, UpdatedBy: rq.user.ID,
		}
		if w.Status == statusClosed {
			params.ClosedAt, params.ClosedBy = &now, &rq.user.ID
		}
		created, err := q.WorkItemCreate(rq.ctx, params)
		if err != nil {
			return err
		}
		added, err := setAssignees(rq.ctx, q, created, assignees)
		if err != nil {
			return err
		}
		if err := s.notifyAssignees(rq.ctx, q, created, added, rq.user.ID); err != nil {
			return err
		}
		if err := countAssetGroups(rq.ctx, q, nil, created); err != nil {
			return err
		}
		if out, err = fullWorkItem(rq.ctx, q, created); err != nil {
			return err
		}
		if err := s.notifyFleetSubscribers(rq.ctx, q, created, rq.user.ID); err != nil {
			return err
		}
		return s.emit(rq.ctx, q, orgID, "work_item", "created", workItemEvent{out})
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusCreated, out)
}

// workItemScopes: the layers a work item's access is resolved on.
func workItemScopes(w db.WorkItem) Scopes {
	if w.ProjectID == nil {
		return Scopes{}
	}
	return Scopes{Project: *w.ProjectID}
}

func workItemAbsent(status int) *Error { return errorf(status, "The work item does not exist.") }

// workItemAccess loads a work item and the caller's access on its layer.
func workItemAccess(ctx context.Context, q *db.Queries, userID, id int64, absent *Error) (db.WorkItem, Access, error) {
	w, err := q.WorkItemGet(ctx, id)
	if db.IsNotFound(err) {
		return w, Access{}, absent
	}
	if err != nil {
		return w, Access{}, err
	}
	a, err := authorize(ctx, q, userID, w.OrganisationID, workItemScopes(w))
	if db.IsNotFound(err) {
		return w, Access{}, absent
	}
	return w, a, err
}

// requireView: VIEW_WORKITEMS, or being one of the work item's assignees or
// (not declined) schedule invitees, who find it in GET /users/@me/work-items.
func requireView(a Access, v workItemView, w db.WorkItem) error {
	mine := false
	for _, id := range v.assignees[w.ID] {
		mine = mine || id == a.UserID
	}
	for _, sc := range v.schedules[w.ID] {
		for _, in := range sc.Invitees {
			mine = mine || (in.User != nil && int64(in.User.ID) == a.UserID && in.Status != inviteeDeclined)
		}
	}
	return a.RequireOr(mine, ViewWorkitems)
}

func (s *Server) workItemGet(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var out workItemJSON
	err = s.store.ReadTx(rq.ctx, func(q *db.Queries) error {
		w, a, err := workItemAccess(rq.ctx, q, rq.user.ID, id, workItemAbsent(http.StatusNotFound))
		if err != nil {
			return err
		}
		if err := a.Require(0); err != nil {
			return err
		}
		v, err := loadWorkItemView(rq.ctx, q, []db.WorkItem{w})
		if err != nil {
			return err
		}
		if err := requireView(a, v, w); err != nil {
			return err
		}
		out = v.render(w)
		return nil
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

// workItemPatch: CREATE_WORKITEMS where the work item is, and where it
// moves to. A new project without a milestone or package in the body
// leaves the old project's milestone and package behind.
func (s *Server) workItemPatch(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var b workItemBody
	ro, err := rq.decodePatch(&b, workItemReadOnly...)
	if err != nil {
		return err
	}
	var out workItemJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		w, a, err := workItemAccess(rq.ctx, q, rq.user.ID, id, workItemAbsent(http.StatusNotFound))
		if err != nil {
			return err
		}
		if err := a.Require(CreateWorkitems); err != nil {
			return err
		}
		if err := ro.checkLoaded(func() (any, error) { return fullWorkItem(rq.ctx, q, w) }); err != nil {
			return err
		}
		old := w
		assignees, err := b.apply(&w, problems{})
		if err != nil {
			return err
		}
		moved := !sameRef(old.ProjectID, w.ProjectID)
		if moved && !b.MilestoneID.Set {
			w.MilestoneID = nil
		}
		if moved && !b.PackageID.Set {
			w.PackageID = nil
		}
		if err := checkWorkItemRefs(rq.ctx, q, &w, &old); err != nil {
			return err
		}
		if moved {
			na, err := authorize(rq.ctx, q, rq.user.ID, w.OrganisationID, workItemScopes(w))
			if err != nil {
				return err
			}
			if err := na.Require(CreateWorkitems); err != nil {
				return err
			}
		}
		now := s.nowText()
		switch {
		case w.Status == statusClosed && old.Status == statusOpen:
			w.ClosedAt, w.ClosedBy = &now, &rq.user.ID
		case w.Status == statusOpen && old.Status == statusClosed:
			w.ClosedAt, w.ClosedBy = nil, nil
		}
		w, err = q.WorkItemUpdate(rq.ctx, db.WorkItemUpdateParams{
			ID: w.ID, OrganisationID: w.OrganisationID, TypeID: w.TypeID, Title: w.Title, Description: w.Description,
			Status: w.Status, ProjectID: w.ProjectID, MilestoneID: w.MilestoneID, PackageID: w.PackageID,
			DocumentID: w.DocumentID, AssetGroupID: w.AssetGroupID, FleetID: w.FleetID, LocationID: w.LocationID,
			SubLocationID: w.SubLocationID, StartAt: w.StartAt, FinishAt: w.FinishAt, UpdatedAt: now, UpdatedBy: rq.user.ID,
			ClosedAt: w.ClosedAt, ClosedBy: w.ClosedBy,
		})
		if err != nil {
			return err
		}
		if err := countAssetGroups(rq.ctx, q, &old, w); err != nil {
			return err
		}
		if assignees != nil {
			added, err := setAssignees(rq.ctx, q, w, assignees)
			if err != nil {
				return err
			}
			if err := s.notifyAssignees(rq.ctx, q, w, added, rq.user.ID); err != nil {
				return err
			}
		}
		if out, err = fullWorkItem(rq.ctx, q, w); err != nil {
			return err
		}
		// the log's sentence: "changed the status of the work item ... to closed"
		if w.Status != old.Status {
			noteAuditValue(rq.ctx, "status", w.Status)
		}
		if w.Title != old.Title {
			noteAuditValue(rq.ctx, "title", w.Title)
		}
		event := "updated"
		if w.Status == statusClosed && old.Status == statusOpen {
			event = "closed"
		}
		if err := s.emit(rq.ctx, q, w.OrganisationID, "work_item", event, workItemEvent{out}); err != nil {
			return err
		}
		if w.Status != old.Status {
			return s.notifyFollowers(rq.ctx, q, w, rq.user.ID)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

func sameRef(a, b *int64) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// notifyFollowers mails the work item's followers (but not the one who
// made the change) that its status changed, in the change's transaction,
// so the outbox row commits with it.
func (s *Server) notifyFollowers(ctx context.Context, q *db.Queries, w db.WorkItem, actorID int64) error {
	rows, err := q.WorkItemFollowersToNotify(ctx, db.WorkItemFollowersToNotifyParams{
		OrganisationID: w.OrganisationID, WorkItemID: w.ID, ActorID: actorID})
	if err != nil {
		return err
	}
	if len(rows) == 0 {
		return nil
	}
	actor, o, err := mailActorOrg(ctx, q, actorID, w.OrganisationID)
	if err != nil {
		return err
	}
	for _, r := range rows {
		m := s.mailWorkItemStatus(r.Email, actor, o, w)
		err := s.notify(ctx, q, notification{UserID: r.ID, ActorID: actorID, OrgID: w.OrganisationID, Kind: notifyWorkItemChange,
			Title: m.Subject, Body: personName(actor) + " changed the status of " + w.FormattedNumber + " " + quoted(w.Title) + " to " + w.Status + ".",
			Link: "/app/workitems/" + db.ID(w.ID).String(), Mail: &m})
		if err != nil {
			return err
		}
	}
	return nil
}

// workItemFilter is the $filter whitelist of GET /organisations/{id}/workitems.
var workItemFilter = db.FilterFields{
	"status":         {Column: "status", Kind: db.FieldEnum, Values: []string{statusOpen, statusClosed}},
	"type_id":        {Column: "type_id", Kind: db.FieldID},
	"project_id":     {Column: "project_id", Kind: db.FieldID},
	"milestone_id":   {Column: "milestone_id", Kind: db.FieldID},
	"document_id":    {Column: "document_id", Kind: db.FieldID},
	"asset_group_id": {Column: "asset_group_id", Kind: db.FieldID},
	"location_id":    {Column: "location_id", Kind: db.FieldID},
	"start_at":       {Column: "start_at", Kind: db.FieldTime},
	"finish_at":      {Column: "finish_at", Kind: db.FieldTime},
}

// workItemList: the organisation's work items the caller may view
// (VIEW_WORKITEMS in the organisation for those without a project, on the
// project for the others), in id order.
func (s *Server) workItemList(rq *request) error {
	return listPage(s, rq, s.workItemPage(rq, nil))
}

// workItemPage is the list of the organisation's work items the caller may
// view; with projects, the page's rows also fill in the names of their
// projects (the export).
func (s *Server) workItemPage(rq *request, projects map[int64]string) listSpec[workItemJSON] {
	var orgID int64
	return listSpec[workItemJSON]{
		// the path id is read after the list parameters (their errors come first)
		Query: func(int64) (listQuery, error) {
			lq, err := parseListQuery(rq.r, workItemFilter)
			if err != nil {
				return lq, err
			}
			orgID, err = rq.pathID("id")
			return lq, err
		},
		Scope: func(_ *sql.Tx, q *db.Queries, _ int64, _ listQuery) (listSQL, error) {
			a, err := orgAccess(rq, q, orgID, http.StatusBadRequest, 0)
			if err != nil {
				return listSQL{}, err
			}
			vis, err := visibleFor(rq.ctx, q, a, 0, "project", ViewWorkitems)
			if err != nil {
				return listSQL{}, err
			}
			where, args := "organisation_id = ?", []any{orgID}
			switch {
			case vis.except && len(vis.ids) == 0:
			case vis.except:
				where += " AND (project_id IS NULL OR project_id NOT IN (SELECT value FROM json_each(?)))"
				args = append(args, idsJSON(vis.ids))
			case len(vis.ids) == 0:
				return listSQL{}, nil
			default:
				where += " AND project_id IN (SELECT value FROM json_each(?))"
				args = append(args, idsJSON(vis.ids))
			}
			return listSQL{From: "work_items", Where: where, Args: args}, nil
		},
		Rows: func(ctx context.Context, q *db.Queries, ids []int64) ([]workItemJSON, error) {
			rows, err := q.WorkItemListByIDs(ctx, idsJSON(ids))
			if err != nil {
				return nil, err
			}
			out, err := renderWorkItems(ctx, q, rows)
			if err != nil || projects == nil {
				return out, err
			}
			var pids []int64
			for _, r := range rows {
				if r.ProjectID != nil {
					pids = append(pids, *r.ProjectID)
				}
			}
			ps, err := q.ProjectListByIDs(ctx, idsJSON(pids))
			for _, p := range ps {
				projects[p.ID] = p.Name
			}
			return out, err
		}}
}
