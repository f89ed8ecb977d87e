package server

import (
	"context"
	"net/http"

	"workspace/db"
)

// Project shares (operations-data.md: POST|GET /projects/{id}/shares,
// DELETE /projects/{id}/shares/{id} with SHARE_PROJECTS, accepted like
// document shares). An accepted share grants its recipient VIEW_PROJECTS
// and VIEW_DOCUMENTS on that project (authorize, ProjectSharePermissions);
// revoking ends that on the next request. Decisions in docs/projects.md.

type projectShareJSON struct {
	ID      db.ID              `json:"id"`
	Project projectPartialJSON `json:"project"`
	shareParties
	Status      int64   `json:"status"`
	CreatedAt   string  `json:"created_at"`
	RespondedAt *string `json:"responded_at"`
}

// projectShares is the share lifecycle of projects (server/shares.go).
var projectShares = &shareKind[db.ProjectShare, db.Project, projectShareJSON]{
	what:        "project share",
	respondPerm: ManageOrganisation,
	row: func(r db.ProjectShare) shareRow {
		return shareRow{OrganisationID: r.OrganisationID, SubjectID: r.ProjectID, RecipientOrganisationID: r.RecipientOrganisationID,
			RecipientUserID: r.RecipientUserID, Status: r.Status, SharedBy: r.SharedBy}
	},
	get:        (*db.Queries).ProjectShareGet,
	forSubject: (*db.Queries).ProjectShareListForProject,
	forUser:    (*db.Queries).ProjectSharesForUser,
	setStatus: func(q *db.Queries, ctx context.Context, sh db.ProjectShare, status int64, at string, by int64) (db.ProjectShare, error) {
		return q.ProjectShareSetStatus(ctx, db.ProjectShareSetStatusParams{ID: sh.ID, Status: status, RespondedAt: &at, RespondedBy: &by})
	},
	subjects:  (*db.Queries).ShareProjectsByIDs,
	subjectID: func(p db.Project) int64 { return p.ID },
	manage: func(rq *request, q *db.Queries) (int64, error) {
		id, err := rq.pathID("id")
		if err != nil {
			return 0, err
		}
		p, err := projectForSharing(rq.ctx, q, rq.user.ID, id)
		return p.ID, err
	},
	render: func(_ context.Context, _ *db.Queries, r db.ProjectShare, p db.Project, parties shareParties) (projectShareJSON, error) {
		return projectShareJSON{ID: db.ID(r.ID), Project: toProjectPartial(p), shareParties: parties, Status: r.Status,
			CreatedAt: r.CreatedAt, RespondedAt: r.RespondedAt}, nil
	},
}

// projectForSharing loads a project whose shares the caller manages:
// SHARE_PROJECTS on it. An absent project is 404.
func projectForSharing(ctx context.Context, q *db.Queries, userID, id int64) (db.Project, error) {
	p, a, err := projectAccess(ctx, q, userID, id, projectAbsent(http.StatusNotFound))
	if err != nil {
		return p, err
	}
	return p, a.Require(ShareProjects)
}

// projectShareCreate shares a project with another organisation or one
// user: SHARE_PROJECTS on the project; exactly one recipient, not the
// owning organisation; no second pending or accepted share to the same
// recipient (400).
func (s *Server) projectShareCreate(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var b shareRecipient
	if err := rq.decodeCreate(&b, "id", "status", "project", "shared_by", "created_at"); err != nil {
		return err
	}
	var out projectShareJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		p, err := projectForSharing(rq.ctx, q, rq.user.ID, id)
		if err != nil {
			return err
		}
		if err := b.check(rq.ctx, q, rq.user.ID, p.OrganisationID, "project"); err != nil {
			return err
		}
		dup, err := q.ProjectShareOpenExists(rq.ctx, db.ProjectShareOpenExistsParams{ProjectID: p.ID, RecipientOrganisationID: b.OrganisationID.ptr(), RecipientUserID: b.UserID.ptr()})
		if err != nil {
			return err
		}
		if dup {
			return badRequest("The project is already shared with that recipient (pending or accepted).")
		}
		sh, err := q.ProjectShareCreate(rq.ctx, db.ProjectShareCreateParams{ID: s.store.IDs.Next(), OrganisationID: p.OrganisationID, ProjectID: p.ID,
			RecipientOrganisationID: b.OrganisationID.ptr(), RecipientUserID: b.UserID.ptr(), SharedBy: rq.user.ID, CreatedAt: s.nowText()})
		if err != nil {
			return err
		}
		if err := s.notifyShareWaiting(rq.ctx, q, sh.RecipientUserID, p.OrganisationID, rq.user.ID, "the project "+quoted(p.Name)); err != nil {
			return err
		}
		out, err = projectShares.renderOne(s, rq.ctx, q, rq.user.ID, sh)
		return err
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusCreated, out)
}

// projectShareList: every share of the project, whatever its status
// (SHARE_PROJECTS on it).
func (s *Server) projectShareList(rq *request) error { return projectShares.list(s, rq) }

// projectShareRevoke: DELETE revokes (status 3) a pending or accepted
// share; the recipient's access ends on its next request. Revoking a share
// that is already over changes nothing (204).
func (s *Server) projectShareRevoke(rq *request) error { return projectShares.revoke(s, rq) }

// projectShareRespond is POST /users/@me/project-shares/{id}/accept|reject:
// a pending share addressed to the caller, or to an organisation where the
// caller holds MANAGE_ORGANISATION. Another's share is 404; one no longer
// pending is 400.
func (s *Server) projectShareRespond(accept bool) handlerFunc {
	return func(rq *request) error { return projectShares.respond(s, rq, accept) }
}

// userProjectShares: pending and accepted project shares addressed to the
// caller or to an organisation it is a member of.
func (s *Server) userProjectShares(rq *request) error { return projectShares.mine(s, rq) }
