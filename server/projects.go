package server

import (
	"context"
	"database/sql"
	"encoding/json"
	"net/http"
	"slices"

	"workspace/db"
)

// Limits of the projects area the spec does not give (docs/projects.md).
const (
	maxNameLen        = 200
	maxDescriptionLen = 4000
	maxReadmeLen      = 64000
)

const (
	statusOpen   = "open"
	statusClosed = "closed"
)

// projectPartialJSON is the project's partial form, as lists return it.
type projectPartialJSON struct {
	ID                   db.ID  `json:"id"`
	OrganisationID       db.ID  `json:"organisation_id"`
	Code                 string `json:"code"`
	Name                 string `json:"name"`
	Description          string `json:"description"`
	Status               string `json:"status"`
	OpenMilestoneCount   int64  `json:"open_milestone_count"`
	ClosedMilestoneCount int64  `json:"closed_milestone_count"`
	OpenWorkItemCount    int64  `json:"open_work_item_count"`
	ClosedWorkItemCount  int64  `json:"closed_work_item_count"`
	DocumentCount        int64  `json:"document_count"`
}

// workItemTypeCount is one entry of work_item_types_count (filled from the
// work items area's kept counts by typeCounts).
type workItemTypeCount struct {
	OpenCount   int64 `json:"open_count"`
	ClosedCount int64 `json:"closed_count"`
}

// projectJSON is the project's full form.
type projectJSON struct {
	projectPartialJSON
	Readme             string                       `json:"readme"`
	WorkItemTypesCount map[string]workItemTypeCount `json:"work_item_types_count"`
	CreatedAt          string                       `json:"created_at"`
	CreatedBy          *userJSON                    `json:"created_by"`
	ClosedAt           *string                      `json:"closed_at"`
	ClosedBy           *userJSON                    `json:"closed_by"`
	Permissions        PermBools                    `json:"permissions"`
}

func toProjectPartial(p db.Project) projectPartialJSON {
	return projectPartialJSON{
		ID: db.ID(p.ID), OrganisationID: db.ID(p.OrganisationID), Code: p.Code, Name: p.Name,
		Description: p.Description, Status: p.Status,
		OpenMilestoneCount: p.OpenMilestoneCount, ClosedMilestoneCount: p.ClosedMilestoneCount,
		OpenWorkItemCount: p.OpenWorkItemCount, ClosedWorkItemCount: p.ClosedWorkItemCount,
		DocumentCount: p.DocumentCount,
	}
}

func toProject(p db.Project, users map[int64]userJSON, a Access) projectJSON {
	return projectJSON{
		projectPartialJSON: toProjectPartial(p),
		Readme:             p.Readme,
		WorkItemTypesCount: map[string]workItemTypeCount{},
		CreatedAt:          p.CreatedAt,
		CreatedBy:          userRef(users, &p.CreatedBy),
		ClosedAt:           p.ClosedAt,
		ClosedBy:           userRef(users, p.ClosedBy),
		Permissions:        a.Permissions().Bools(ProjectPermissions),
	}
}

// fullProject renders a project with its users and the caller's permissions.
func fullProject(ctx context.Context, q *db.Queries, p db.Project, a Access) (projectJSON, error) {
	users, err := userObjects(ctx, q, &p.CreatedBy, p.ClosedBy)
	if err != nil {
		return projectJSON{}, err
	}
	out := toProject(p, users, a)
	out.WorkItemTypesCount, err = typeCounts(ctx, q, p.ID, p.OpenWorkItemCount, p.ClosedWorkItemCount)
	return out, err
}

// userObjects loads the user objects of the given ids (nil ids and repeats
// skipped) in one query, deleted accounts included so history still names
// them. A list whose rows share one author reads one row by primary key.
// shownUsers is userObjects on the reader pool through the server's cache
// of shown users (see genCache): the same creators are shown again and again.
func (s *Server) shownUsers(ctx context.Context, ids ...*int64) (map[int64]userJSON, error) {
	out := make(map[int64]userJSON, len(ids))
	for _, id := range ids {
		if id == nil {
			continue
		}
		if _, ok := out[*id]; ok {
			continue
		}
		gen := s.store.WriteGeneration()
		u, ok := s.shown.get(*id, gen)
		if !ok {
			var err error
			u, err = s.store.R.ProjectUserGet(ctx, *id)
			if db.IsNotFound(err) {
				continue
			}
			if err != nil {
				return nil, err
			}
			s.shown.put(*id, u, gen)
		}
		out[*id] = toUser(u)
	}
	return out, nil
}

func userObjects(ctx context.Context, q *db.Queries, ids ...*int64) (map[int64]userJSON, error) {
	var list []int64
	for _, id := range ids {
		if id != nil && !slices.Contains(list, *id) {
			list = append(list, *id)
		}
	}
	out := make(map[int64]userJSON, len(list))
	switch len(list) {
	case 0:
		return out, nil
	case 1: // the usual case (an open project): a plain primary-key read
		u, err := q.ProjectUserGet(ctx, list[0])
		if err != nil && !db.IsNotFound(err) {
			return nil, err
		}
		if err == nil {
			out[u.ID] = toUser(u)
		}
		return out, nil
	}
	rows, err := q.ProjectUserList(ctx, idsJSON(list))
	if err != nil {
		return nil, err
	}
	for _, u := range rows {
		out[u.ID] = toUser(u)
	}
	return out, nil
}

// userRef is the user object for id, or null. An id with no user row left
// still names the user by id.
func userRef(users map[int64]userJSON, id *int64) *userJSON {
	if id == nil {
		return nil
	}
	if u, ok := users[*id]; ok {
		return &u
	}
	return &userJSON{ID: db.ID(*id), Roles: []roleJSON{}, Organisations: []orgPartialJSON{}}
}

// viewBits are the permissions that let a caller see a project or package:
// administering a project includes seeing it (docs/projects.md).
const viewBits = ViewProjects | AdminProjects

// projectAccess loads a project and the caller's access in it. absent is the
// answer for a missing project, which the spec's rows give as 400 or 404.
func projectAccess(ctx context.Context, q *db.Queries, userID, projectID int64, absent *Error) (db.Project, Access, error) {
	p, err := q.ProjectGet(ctx, projectID)
	if db.IsNotFound(err) {
		return db.Project{}, Access{}, absent
	}
	if err != nil {
		return db.Project{}, Access{}, err
	}
	a, err := authorize(ctx, q, userID, p.OrganisationID, Scopes{Project: p.ID})
	if db.IsNotFound(err) { // the organisation was deleted: its projects went with it
		return db.Project{}, Access{}, absent
	}
	return p, a, err
}

func projectAbsent(status int) *Error { return errorf(status, "The project does not exist.") }

var projectReadOnly = []string{
	"id", "organisation_id", "open_milestone_count", "closed_milestone_count", "open_work_item_count",
	"closed_work_item_count", "document_count", "work_item_types_count", "created_at", "created_by",
	"closed_at", "closed_by", "permissions",
}

// checkStatus validates an optional status field.
func checkStatus(p problems, s *string) {
	if s != nil && *s != statusOpen && *s != statusClosed {
		p.add("status", `must be "open" or "closed"`)
	}
}

type projectBody struct {
	Code        *string `json:"code"`
	Name        *string `json:"name"`
	Description *string `json:"description"`
	Readme      *string `json:"readme"`
	Status      *string `json:"status"`
}

func (b *projectBody) validate() error {
	p := problems{}
	optText(p, "code", b.Code, maxCode)
	checkName(p, "name", b.Name, maxNameLen)
	optText(p, "description", b.Description, maxDescriptionLen)
	optText(p, "readme", b.Readme, maxReadmeLen)
	checkStatus(p, b.Status)
	return p.err()
}

// quotaLeft refuses with 429 when the organisation holds its quota of open
// projects. Run inside the write transaction: writes are serialised, so
// concurrent creates cannot both see the last free place.
func (s *Server) quotaLeft(ctx context.Context, q *db.Queries, orgID int64) error {
	if s.cfg.MaxProjectsPerOrg <= 0 {
		return nil
	}
	n, err := q.ProjectStatusCount(ctx, db.ProjectStatusCountParams{OrganisationID: orgID, Status: statusOpen})
	if err != nil {
		return err
	}
	if n >= int64(s.cfg.MaxProjectsPerOrg) {
		return errorf(http.StatusTooManyRequests, "The organisation has reached its quota of %d open projects.", s.cfg.MaxProjectsPerOrg)
	}
	return nil
}

// projectCreate: CREATE_PROJECTS; the creator gets ADMIN_PROJECTS on the new
// project as a user grant at project scope.
func (s *Server) projectCreate(rq *request) error {
	orgID, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var b projectBody
	if err := rq.decodeCreate(&b, projectReadOnly...); err != nil {
		return err
	}
	if err := b.validate(); err != nil {
		return err
	}
	status := orDefault(b.Status, statusOpen)
	var out projectJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		a, err := orgAccess(rq, q, orgID, http.StatusBadRequest, CreateProjects)
		if err != nil {
			return err
		}
		if status == statusOpen {
			if err := s.quotaLeft(rq.ctx, q, orgID); err != nil {
				return err
			}
		}
		now := s.nowText()
		params := db.ProjectCreateParams{
			ID: s.store.IDs.Next(), OrganisationID: orgID, Code: orDefault(b.Code, ""),
			Name: orDefault(b.Name, "new project"), Description: orDefault(b.Description, ""),
			Readme: orDefault(b.Readme, ""), Status: status, CreatedAt: now, CreatedBy: rq.user.ID,
		}
		if status == statusClosed {
			params.ClosedAt, params.ClosedBy = &now, &rq.user.ID
		}
		if err := q.ProjectCreate(rq.ctx, params); err != nil {
			return err
		}
		p := db.Project{ID: params.ID, OrganisationID: orgID, Code: params.Code, Name: params.Name,
			Description: params.Description, Readme: params.Readme, Status: status, CreatedAt: now,
			CreatedBy: rq.user.ID, ClosedAt: params.ClosedAt, ClosedBy: params.ClosedBy}
		// A new project has no grant to merge with: saved as it is.
		if err := q.GrantPut(rq.ctx, db.GrantPutParams{OrganisationID: orgID, ScopeType: "project", ScopeID: p.ID,
			TargetType: "user", TargetID: rq.user.ID, AllowMask: int64(AdminProjects)}); err != nil {
			return err
		}
		if err := s.emit(rq.ctx, q, orgID, "project", "created", projectEvent{toProjectPartial(p)}); err != nil {
			return err
		}
		// The new project's only grant is the one just saved, so the
		// caller's access in it is the organisation's plus ADMIN_PROJECTS:
		// no second resolution.
		a.perms = withProjectImplications(Scopes{Project: p.ID}, a.perms|AdminProjects)
		// Its creator is the caller, read when the request was
		// authenticated, and it has no work items yet: nothing to read.
		out = toProject(p, map[int64]userJSON{rq.user.ID: toUser(rq.user)}, a)
		out.WorkItemTypesCount = map[string]workItemTypeCount{}
		return nil
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusCreated, out)
}

// projectRow reads a project on the reader pool through s.projects (see
// genCache: an entry is served only while nothing has been written since it
// was read).
func (s *Server) projectRow(ctx context.Context, id int64) (db.Project, error) {
	gen := s.store.WriteGeneration()
	if p, ok := s.projects.get(id, gen); ok {
		return p, nil
	}
	p, err := s.store.R.ProjectGet(ctx, id)
	if err != nil {
		return p, err
	}
	s.projects.put(id, p, gen)
	return p, nil
}

func (s *Server) projectGet(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	// The hottest read: single statements on the reader pool, no BEGIN and
	// ROLLBACK around them; no snapshot is needed across these lookups.
	// Access and the user objects come from the caches between writes.
	p, err := s.projectRow(rq.ctx, id)
	if db.IsNotFound(err) {
		return projectAbsent(http.StatusBadRequest)
	}
	if err != nil {
		return err
	}
	a, err := authorize(rq.ctx, s.store.R, rq.user.ID, p.OrganisationID, Scopes{Project: p.ID})
	if db.IsNotFound(err) { // the organisation was deleted: its projects went with it
		return projectAbsent(http.StatusBadRequest)
	}
	if err != nil {
		return err
	}
	if err := a.Require(ViewProjects); err != nil {
		return err
	}
	users, err := s.shownUsers(rq.ctx, &p.CreatedBy, p.ClosedBy)
	if err != nil {
		return err
	}
	out := toProject(p, users, a)
	if out.WorkItemTypesCount, err = typeCounts(rq.ctx, s.store.R, p.ID, p.OpenWorkItemCount, p.ClosedWorkItemCount); err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

// projectPatch: ADMIN_PROJECTS. Closing needs every milestone closed;
// reopening needs a free place in the quota.
func (s *Server) projectPatch(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var b projectBody
	ro, err := rq.decodePatch(&b, projectReadOnly...)
	if err != nil {
		return err
	}
	if err := b.validate(); err != nil {
		return err
	}
	var out projectJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		p, a, err := projectAccess(rq.ctx, q, rq.user.ID, id, projectAbsent(http.StatusBadRequest))
		if err != nil {
			return err
		}
		if err := a.Require(AdminProjects); err != nil {
			return err
		}
		if err := ro.checkLoaded(func() (any, error) { return fullProject(rq.ctx, q, p, a) }); err != nil {
			return err
		}
		u := db.ProjectUpdateParams{
			ID: p.ID, OrganisationID: p.OrganisationID, Code: orDefault(b.Code, p.Code),
			Name: orDefault(b.Name, p.Name), Description: orDefault(b.Description, p.Description),
			Readme: orDefault(b.Readme, p.Readme), Status: orDefault(b.Status, p.Status),
			ClosedAt: p.ClosedAt, ClosedBy: p.ClosedBy,
		}
		switch {
		case u.Status == statusClosed && p.Status == statusOpen:
			n, err := q.MilestoneOpenCount(rq.ctx, db.MilestoneOpenCountParams{ProjectID: p.ID, OrganisationID: p.OrganisationID})
			if err != nil {
				return err
			}
			if n > 0 {
				return fieldError("status", "cannot be closed while the project has open milestones")
			}
			now := s.nowText()
			u.ClosedAt, u.ClosedBy = &now, &rq.user.ID
		case u.Status == statusOpen && p.Status == statusClosed:
			if err := s.quotaLeft(rq.ctx, q, p.OrganisationID); err != nil {
				return err
			}
			u.ClosedAt, u.ClosedBy = nil, nil
		}
		event := "updated"
		if u.Status == statusClosed && p.Status == statusOpen {
			event = "closed"
		}
		p, err = q.ProjectUpdate(rq.ctx, u)
		if err != nil {
			return err
		}
		if err := s.emit(rq.ctx, q, p.OrganisationID, "project", event, projectEvent{toProjectPartial(p)}); err != nil {
			return err
		}
		out, err = fullProject(rq.ctx, q, p, a)
		return err
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

// projectFilter is the $filter whitelist of the project list: only the
// fields its row names (decisions.md, Lists).
var projectFilter = db.FilterFields{
	"status": {Column: "status", Kind: db.FieldEnum, Values: []string{statusOpen, statusClosed}},
}

// projectList returns the projects the caller may view. Visibility is not
// resolved per row: the organisation layer is resolved once, the few project
// grants that could change it for this caller are resolved in Go, and the
// result becomes one id condition in SQL.
func (s *Server) projectList(rq *request) error {
	return listPage(s, rq, listSpec[[]byte]{Path: "id", Fields: projectFilter,
		Scope: func(tx *sql.Tx, q *db.Queries, orgID int64, lq listQuery) (listSQL, error) {
			a, err := orgAccess(rq, q, orgID, http.StatusBadRequest, 0)
			if err != nil {
				return listSQL{}, err
			}
			vis, err := visibleIn(rq.ctx, q, a, 0, "project")
			if err != nil || vis.none() {
				return listSQL{}, err
			}
			kept, err := projectTotal(rq.ctx, tx, q, orgID, vis, lq)
			if err != nil {
				return listSQL{}, err
			}
			where, args := vis.where("organisation_id = ?", orgID)
			return listSQL{From: "projects", Where: where, Args: args, Total: &kept}, nil
		},
		Rows: s.projectPartials})
}

// projectTotal is X-Total-Count of a project list. With no $filter or a
// single status equality, and visibility "all but a few", it reads the
// trigger-kept counts and subtracts the hidden projects that match, instead
// of counting thousands of rows on every page. Anything else is counted.
func projectTotal(ctx context.Context, tx *sql.Tx, q *db.Queries, orgID int64, vis visibility, lq listQuery) (int64, error) {
	var total int64
	status, byStatus := statusOnly(lq)
	if !vis.except || (lq.Where != "" && !byStatus) {
		where, args := vis.where("organisation_id = ?", orgID)
		where, args = lq.and(where, args)
		err := tx.QueryRowContext(ctx, "SELECT count(*) FROM projects WHERE "+where, args...).Scan(&total)
		return total, err
	}
	var err error
	if byStatus {
		total, err = q.ProjectStatusCount(ctx, db.ProjectStatusCountParams{OrganisationID: orgID, Status: status})
	} else {
		total, err = q.ProjectTotalCount(ctx, orgID)
	}
	if err != nil || len(vis.ids) == 0 {
		return total, err
	}
	where, args := lq.and("organisation_id = ? AND id IN (SELECT value FROM json_each(?))", []any{orgID, idsJSON(vis.ids)})
	var hidden int64
	if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM projects WHERE "+where, args...).Scan(&hidden); err != nil {
		return 0, err
	}
	return total - hidden, nil
}

// statusOnly reports whether the compiled $filter is exactly one equality on
// status (the compiler's form for "status eq '...'"), and the status. Should
// the compiler's form differ, the list just counts rows: totals stay right.
func statusOnly(lq listQuery) (string, bool) {
	if lq.Where != "status = ?" || len(lq.Args) != 1 {
		return "", false
	}
	s, ok := lq.Args[0].(string)
	return s, ok
}

// visibility says which projects (or packages of one project) a caller may
// view: every one except ids, or (when except is false) only ids.
type visibility struct {
	except bool
	ids    []int64
}

func (v visibility) none() bool { return !v.except && len(v.ids) == 0 }

// where adds the visibility condition on id to a base condition.
func (v visibility) where(base string, args ...any) (string, []any) {
	switch {
	case v.except && len(v.ids) == 0:
		return base, args
	case v.except:
		return base + " AND id NOT IN (SELECT value FROM json_each(?))", append(args, idsJSON(v.ids))
	default:
		return base + " AND id IN (SELECT value FROM json_each(?))", append(args, idsJSON(v.ids))
	}
}

// visibleIn resolves which scopes of scopeType ("project", or "package"
// within projectID) the caller may view. a is the caller's access in the
// parent (the organisation, or the project). Only scopes with a grant for the
// caller that could change the parent's answer are resolved one by one.
func visibleIn(ctx context.Context, q *db.Queries, a Access, projectID int64, scopeType string) (visibility, error) {
	return visibleFor(ctx, q, a, projectID, scopeType, viewBits)
}

// visibleFor is visibleIn for any of the permissions in bits (work items
// ask it for VIEW_WORKITEMS on projects).
func visibleFor(ctx context.Context, q *db.Queries, a Access, projectID int64, scopeType string, viewBits PermSet) (visibility, error) {
	if a.Owner {
		return visibility{except: true}, nil
	}
	parentSees := a.Permissions()&viewBits != 0
	// Every page of a list asks the same: keep the answer between writes
	// (grants and roles are all it reads). Its ids are shared: read only.
	key := visibilityKey{a.UserID, a.OrganisationID, projectID, scopeType, viewBits, parentSees}
	c, gen := cachedAccess(ctx, q)
	if c != nil {
		if v, ok := c.visible.get(key, gen); ok {
			return v, nil
		}
	}
	v, err := readVisibility(ctx, q, a, projectID, scopeType, viewBits, parentSees)
	if err == nil && c != nil {
		c.visible.put(key, v, gen)
	}
	return v, err
}

type visibilityKey struct {
	userID, orgID, projectID int64
	scopeType                string
	bits                     PermSet
	parentSees               bool
}

// readVisibility is visibleFor from the database.
func readVisibility(ctx context.Context, q *db.Queries, a Access, projectID int64, scopeType string, viewBits PermSet, parentSees bool) (visibility, error) {
	var cands []int64
	var err error
	if parentSees {
		cands, err = q.ScopeGrantDenyingIDs(ctx, db.ScopeGrantDenyingIDsParams{OrganisationID: a.OrganisationID, ScopeType: scopeType, Bits: int64(viewBits), UserID: a.UserID})
	} else {
		cands, err = q.ScopeGrantAllowingIDs(ctx, db.ScopeGrantAllowingIDsParams{OrganisationID: a.OrganisationID, ScopeType: scopeType, Bits: int64(viewBits), UserID: a.UserID})
	}
	if err != nil || len(cands) == 0 {
		return visibility{except: parentSees}, err
	}
	parent, err := q.AccessGrants(ctx, db.AccessGrantsParams{OrganisationID: a.OrganisationID, ScopeIdsJson: idsJSON(Scopes{Project: projectID}.ids(a.OrganisationID)), UserID: a.UserID})
	if err != nil {
		return visibility{}, err
	}
	rows, err := q.ScopeGrantsForUser(ctx, db.ScopeGrantsForUserParams{OrganisationID: a.OrganisationID, ScopeIdsJson: idsJSON(cands), UserID: a.UserID})
	if err != nil {
		return visibility{}, err
	}
	base := make([]Grant, 0, len(parent)+4)
	for _, r := range parent {
		g, err := grantOf(r.ScopeType, r.TargetType, r.RoleRank, r.AllowMask, r.DenyMask)
		if err != nil {
			return visibility{}, err
		}
		base = append(base, g)
	}
	own := map[int64][]Grant{}
	for _, r := range rows {
		g, err := grantOf(r.ScopeType, r.TargetType, r.RoleRank, r.AllowMask, r.DenyMask)
		if err != nil {
			return visibility{}, err
		}
		own[r.ScopeID] = append(own[r.ScopeID], g)
	}
	v := visibility{except: parentSees}
	for _, id := range cands {
		if sees := Effective(append(own[id], base...))&viewBits != 0; sees != parentSees {
			v.ids = append(v.ids, id)
		}
	}
	return v, nil
}

// grantPatch changes one target's explicit grants on a project or package
// the caller administers. scopeAccess loads the scope and the caller's access
// in it.
func (s *Server) grantPatch(rq *request, scopeType string, scopeAccess func(q *db.Queries, id int64) (Access, error)) error {
	scopeID, err := rq.pathID("id")
	if err != nil {
		return err
	}
	targetID, err := rq.pathID("roleId")
	if err != nil {
		return err
	}
	var b grantBody
	if err := rq.decode(&b); err != nil {
		return err
	}
	change, err := parseGrantChange("permissions", b.Permissions, ProjectPermissions)
	if err != nil {
		return err
	}
	var out grantJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		a, err := scopeAccess(q, scopeID)
		if err != nil {
			return err
		}
		if err := a.Require(AdminProjects); err != nil {
			return err
		}
		out, err = changeGrant(rq.ctx, q, a, scopeType, scopeID, targetID, change, rankRolesOnly)
		return err
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

// scopeGrantList lists the explicit grants on a project or package.
func (s *Server) scopeGrantList(rq *request, scopeAccess func(q *db.Queries, id int64) (Access, error)) error {
	scopeID, err := rq.pathID("id")
	if err != nil {
		return err
	}
	out := []grantJSON{}
	err = s.store.ReadTx(rq.ctx, func(q *db.Queries) error {
		a, err := scopeAccess(q, scopeID)
		if err != nil {
			return err
		}
		if err := a.Require(AdminProjects); err != nil {
			return err
		}
		gs, err := q.GrantListForScope(rq.ctx, scopeID)
		if err != nil {
			return err
		}
		for _, g := range gs {
			out = append(out, toGrant(g))
		}
		return nil
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

// projectGrantPatch: 404 when the project is absent, as the row says.
func (s *Server) projectGrantPatch(rq *request) error {
	return s.grantPatch(rq, "project", func(q *db.Queries, id int64) (Access, error) {
		_, a, err := projectAccess(rq.ctx, q, rq.user.ID, id, projectAbsent(http.StatusNotFound))
		return a, err
	})
}

// projectGrantList: 400 when the project is absent (the row lists 400, 403).
func (s *Server) projectGrantList(rq *request) error {
	return s.scopeGrantList(rq, func(q *db.Queries, id int64) (Access, error) {
		_, a, err := projectAccess(rq.ctx, q, rq.user.ID, id, projectAbsent(http.StatusBadRequest))
		return a, err
	})
}

// projectPartials reads list rows by id in the given order, each as its
// encoded JSON, through the cache of rows already read and encoded between
// writes (see genCache) when q may use it: a page of 50 repeats rows an
// earlier page showed, and encoding them is most of a cached page's cost.
func (s *Server) projectPartials(ctx context.Context, q *db.Queries, ids []int64) ([][]byte, error) {
	gen, cached := s.store.ReadGeneration(q)
	out := make([][]byte, len(ids))
	var missing []int64
	for i, id := range ids {
		if b, ok := s.access.rows.get(id, gen); cached && ok {
			out[i] = b
		} else {
			missing = append(missing, id)
		}
	}
	if len(missing) == 0 {
		return out, nil
	}
	rows, err := q.ProjectListByIDs(ctx, idsJSON(missing))
	if err != nil {
		return nil, err
	}
	read := make(map[int64][]byte, len(rows))
	for _, r := range rows {
		b, err := json.Marshal(projectPartialJSON{
			ID: db.ID(r.ID), OrganisationID: db.ID(r.OrganisationID), Code: r.Code, Name: r.Name,
			Description: r.Description, Status: r.Status, OpenMilestoneCount: r.OpenMilestoneCount,
			ClosedMilestoneCount: r.ClosedMilestoneCount, OpenWorkItemCount: r.OpenWorkItemCount,
			ClosedWorkItemCount: r.ClosedWorkItemCount, DocumentCount: r.DocumentCount,
		})
		if err != nil {
			return nil, err
		}
		read[r.ID] = b
		if cached {
			s.access.rows.put(r.ID, b, gen)
		}
	}
	kept := out[:0]
	for i, id := range ids {
		if b, ok := read[id]; ok {
			kept = append(kept, b)
		} else if out[i] != nil {
			kept = append(kept, out[i])
		}
	}
	return kept, nil
}

// projectEvent is a project as integrations receive it.
type projectEvent struct{ projectPartialJSON }

func (e projectEvent) summary() string { return e.Name }
