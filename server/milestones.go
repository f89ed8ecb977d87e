package server

import (
	"context"
	"database/sql"
	"net/http"
	"time"

	"workspace/db"
)

// milestoneJSON is the project milestone object.
type milestoneJSON struct {
	ID                  db.ID                        `json:"id"`
	OrganisationID      db.ID                        `json:"organisation_id"`
	ProjectID           db.ID                        `json:"project_id"`
	Name                string                       `json:"name"`
	Description         string                       `json:"description"`
	DueAt               *string                      `json:"due_at"`
	Status              string                       `json:"status"`
	OpenWorkItemCount   int64                        `json:"open_work_item_count"`
	ClosedWorkItemCount int64                        `json:"closed_work_item_count"`
	WorkItemTypesCount  map[string]workItemTypeCount `json:"work_item_types_count"`
	CreatedAt           string                       `json:"created_at"`
	CreatedBy           *userJSON                    `json:"created_by"`
	ClosedAt            *string                      `json:"closed_at"`
	ClosedBy            *userJSON                    `json:"closed_by"`
}

func toMilestone(m db.ProjectMilestone, users map[int64]userJSON) milestoneJSON {
	return milestoneJSON{
		ID: db.ID(m.ID), OrganisationID: db.ID(m.OrganisationID), ProjectID: db.ID(m.ProjectID),
		Name: m.Name, Description: m.Description, DueAt: m.DueAt, Status: m.Status,
		OpenWorkItemCount: m.OpenWorkItemCount, ClosedWorkItemCount: m.ClosedWorkItemCount,
		WorkItemTypesCount: map[string]workItemTypeCount{},
		CreatedAt:          m.CreatedAt, CreatedBy: userRef(users, &m.CreatedBy),
		ClosedAt: m.ClosedAt, ClosedBy: userRef(users, m.ClosedBy),
	}
}

func fullMilestone(ctx context.Context, q *db.Queries, m db.ProjectMilestone) (milestoneJSON, error) {
	users, err := userObjects(ctx, q, &m.CreatedBy, m.ClosedBy)
	if err != nil {
		return milestoneJSON{}, err
	}
	out := toMilestone(m, users)
	out.WorkItemTypesCount, err = typeCounts(ctx, q, m.ID, m.OpenWorkItemCount, m.ClosedWorkItemCount)
	return out, err
}

// maxMilestoneNameLen: the spec gives no limit; projects' and packages' 200.
const maxMilestoneNameLen = 200

var milestoneReadOnly = []string{
	"id", "organisation_id", "project_id", "open_work_item_count", "closed_work_item_count",
	"work_item_types_count", "created_at", "created_by", "closed_at", "closed_by",
}

type milestoneBody struct {
	Name        *string     `json:"name"`
	Description *string     `json:"description"`
	Status      *string     `json:"status"`
	DueAt       Opt[string] `json:"due_at"`
}

// validate checks the fields and returns due_at in the stored layout (nil
// when absent or null).
func (b *milestoneBody) validate() (*string, error) {
	p := problems{}
	checkName(p, "name", b.Name, maxMilestoneNameLen)
	optText(p, "description", b.Description, maxDescriptionLen)
	checkStatus(p, b.Status)
	var due *string
	if b.DueAt.Set && !b.DueAt.Null {
		t, err := time.Parse(time.RFC3339Nano, b.DueAt.Value)
		// An offset can push a year-9999 time into year 10000 (or year 0
		// into -1), which the stored layout cannot order as text.
		if y := t.UTC().Year(); err != nil || y < 0 || y > 9999 {
			p.add("due_at", "must be an ISO 8601 timestamp such as 2026-11-21T09:30:00.000Z")
		} else {
			s := db.FormatTime(t)
			due = &s
		}
	}
	return due, p.err()
}

// milestoneCreate: ADMIN_PROJECTS on the project. An open milestone cannot
// join a closed project, which keeps "closed projects have no open
// milestones" true.
func (s *Server) milestoneCreate(rq *request) error {
	projectID, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var b milestoneBody
	if err := rq.decodeCreate(&b, milestoneReadOnly...); err != nil {
		return err
	}
	due, err := b.validate()
	if err != nil {
		return err
	}
	status := orDefault(b.Status, statusOpen)
	var out milestoneJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		p, a, err := projectAccess(rq.ctx, q, rq.user.ID, projectID, projectAbsent(http.StatusBadRequest))
		if err != nil {
			return err
		}
		if err := a.Require(AdminProjects); err != nil {
			return err
		}
		if status == statusOpen && p.Status == statusClosed {
			return fieldError("status", "cannot be open in a closed project")
		}
		now := s.nowText()
		params := db.MilestoneCreateParams{
			ID: s.store.IDs.Next(), OrganisationID: p.OrganisationID, ProjectID: p.ID,
			Name: orDefault(b.Name, "new milestone"), Description: orDefault(b.Description, ""),
			DueAt: due, Status: status, CreatedAt: now, CreatedBy: rq.user.ID,
		}
		if status == statusClosed {
			params.ClosedAt, params.ClosedBy = &now, &rq.user.ID
		}
		m, err := q.MilestoneCreate(rq.ctx, params)
		if err != nil {
			return err
		}
		if err := q.ProjectMilestoneCountsRefresh(rq.ctx, db.ProjectMilestoneCountsRefreshParams{ID: p.ID, OrganisationID: p.OrganisationID}); err != nil {
			return err
		}
		out, err = fullMilestone(rq.ctx, q, m)
		return err
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusCreated, out)
}

// milestoneAccess loads a milestone, its project and the caller's access.
func milestoneAccess(ctx context.Context, q *db.Queries, userID, id int64, absent *Error) (db.ProjectMilestone, db.Project, Access, error) {
	m, err := q.MilestoneGet(ctx, id)
	if db.IsNotFound(err) {
		return m, db.Project{}, Access{}, absent
	}
	if err != nil {
		return m, db.Project{}, Access{}, err
	}
	p, a, err := projectAccess(ctx, q, userID, m.ProjectID, absent)
	return m, p, a, err
}

func milestoneAbsent(status int) *Error { return errorf(status, "The milestone does not exist.") }

func (s *Server) milestoneGet(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var out milestoneJSON
	err = s.store.ReadTx(rq.ctx, func(q *db.Queries) error {
		m, _, a, err := milestoneAccess(rq.ctx, q, rq.user.ID, id, milestoneAbsent(http.StatusNotFound))
		if err != nil {
			return err
		}
		if err := a.Require(ViewProjects); err != nil {
			return err
		}
		out, err = fullMilestone(rq.ctx, q, m)
		return err
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

// milestonePatch: ADMIN_PROJECTS on the owning project; reopening in a
// closed project is refused (400).
func (s *Server) milestonePatch(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var b milestoneBody
	ro, err := rq.decodePatch(&b, milestoneReadOnly...)
	if err != nil {
		return err
	}
	due, err := b.validate()
	if err != nil {
		return err
	}
	var out milestoneJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		m, p, a, err := milestoneAccess(rq.ctx, q, rq.user.ID, id, milestoneAbsent(http.StatusBadRequest))
		if err != nil {
			return err
		}
		if err := a.Require(AdminProjects); err != nil {
			return err
		}
		if err := ro.checkLoaded(func() (any, error) { return fullMilestone(rq.ctx, q, m) }); err != nil {
			return err
		}
		u := db.MilestoneUpdateParams{
			ID: m.ID, OrganisationID: m.OrganisationID, Name: orDefault(b.Name, m.Name),
			Description: orDefault(b.Description, m.Description), DueAt: m.DueAt,
			Status: orDefault(b.Status, m.Status), ClosedAt: m.ClosedAt, ClosedBy: m.ClosedBy,
		}
		if b.DueAt.Set {
			u.DueAt = due
		}
		if u.Status == statusOpen && p.Status == statusClosed {
			return fieldError("status", "cannot be open while the project is closed")
		}
		switch {
		case u.Status == statusClosed && m.Status == statusOpen:
			now := s.nowText()
			u.ClosedAt, u.ClosedBy = &now, &rq.user.ID
		case u.Status == statusOpen && m.Status == statusClosed:
			u.ClosedAt, u.ClosedBy = nil, nil
		}
		m, err = q.MilestoneUpdate(rq.ctx, u)
		if err != nil {
			return err
		}
		if err := q.ProjectMilestoneCountsRefresh(rq.ctx, db.ProjectMilestoneCountsRefreshParams{ID: p.ID, OrganisationID: p.OrganisationID}); err != nil {
			return err
		}
		out, err = fullMilestone(rq.ctx, q, m)
		return err
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

// milestoneFilter is the $filter whitelist of the milestone list.
var milestoneFilter = db.FilterFields{
	"status": {Column: "status", Kind: db.FieldEnum, Values: []string{statusOpen, statusClosed}},
	"due_at": {Column: "due_at", Kind: db.FieldTime},
}

// milestoneList: VIEW_PROJECTS on the project; full milestones in id order.
func (s *Server) milestoneList(rq *request) error {
	return listPage(s, rq, listSpec[milestoneJSON]{Path: "id", Fields: milestoneFilter,
		Scope: func(_ *sql.Tx, q *db.Queries, projectID int64, _ listQuery) (listSQL, error) {
			p, a, err := projectAccess(rq.ctx, q, rq.user.ID, projectID, projectAbsent(http.StatusBadRequest))
			if err != nil {
				return listSQL{}, err
			}
			return listSQL{From: "project_milestones", Where: "project_id = ? AND organisation_id = ?", Args: []any{p.ID, p.OrganisationID}},
				a.Require(ViewProjects)
		},
		Rows: func(ctx context.Context, q *db.Queries, ids []int64) ([]milestoneJSON, error) {
			ms, err := q.MilestoneListByIDs(ctx, idsJSON(ids))
			if err != nil {
				return nil, err
			}
			var userIDs []*int64
			for i := range ms {
				userIDs = append(userIDs, &ms[i].CreatedBy, ms[i].ClosedBy)
			}
			users, err := userObjects(ctx, q, userIDs...)
			if err != nil {
				return nil, err
			}
			counts, err := q.WorkItemTypeCountsOfMany(ctx, idsJSON(ids))
			if err != nil {
				return nil, err
			}
			out := make([]milestoneJSON, 0, len(ms))
			for _, m := range ms {
				out = append(out, toMilestone(m, users))
			}
			for _, c := range counts {
				for i := range out {
					if int64(out[i].ID) == c.ScopeID {
						out[i].WorkItemTypesCount[db.ID(c.TypeID).String()] = workItemTypeCount{OpenCount: c.OpenCount, ClosedCount: c.ClosedCount}
					}
				}
			}
			return out, nil
		}})
}
