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

func projectShareAbsent() *Error { return notFound("The project share does not exist.") }

// renderProjectShares renders shares for the viewer.
func (s *Server) renderProjectShares(ctx context.Context, q *db.Queries, viewerID int64, rows []db.ProjectShare) ([]projectShareJSON, error) {
	out := make([]projectShareJSON, 0, len(rows))
	parties := s.shareParties(ctx, q, viewerID)
	for _, r := range rows {
		p, err := q.ProjectGet(ctx, r.ProjectID)
		if err != nil {
			return nil, err
		}
		sh := projectShareJSON{ID: db.ID(r.ID), Project: toProjectPartial(p), Status: r.Status, CreatedAt: r.CreatedAt, RespondedAt: r.RespondedAt}
		if sh.shareParties, err = parties.render(r.OrganisationID, r.RecipientOrganisationID, r.RecipientUserID, r.SharedBy); err != nil {
			return nil, err
		}
		out = append(out, sh)
	}
	return out, nil
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
		if err := b.check(rq.ctx, q, p.OrganisationID, "project"); err != nil {
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
		shares, err := s.renderProjectShares(rq.ctx, q, rq.user.ID, []db.ProjectShare{sh})
		if err != nil {
			return err
		}
		out = shares[0]
		return nil
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusCreated, out)
}

// projectShareList: every share of the project, whatever its status.
func (s *Server) projectShareList(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var out []projectShareJSON
	err = s.store.ReadTx(rq.ctx, func(q *db.Queries) error {
		p, err := projectForSharing(rq.ctx, q, rq.user.ID, id)
		if err != nil {
			return err
		}
		rows, err := q.ProjectShareListForProject(rq.ctx, p.ID)
		if err != nil {
			return err
		}
		out, err = s.renderProjectShares(rq.ctx, q, rq.user.ID, rows)
		return err
	})
	if err != nil {
		return err
	}
	setTotalCount(rq.w, int64(len(out)))
	return rq.json(http.StatusOK, out)
}

// projectShareRevoke: DELETE revokes (status 3) a pending or accepted
// share; the recipient's access ends on its next request. Revoking a share
// that is already over changes nothing (204).
func (s *Server) projectShareRevoke(rq *request) error {
	id, shareID, err := rq.pathIDs("id", "share")
	if err != nil {
		return err
	}
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		p, err := projectForSharing(rq.ctx, q, rq.user.ID, id)
		if err != nil {
			return err
		}
		sh, err := q.ProjectShareGet(rq.ctx, shareID)
		if db.IsNotFound(err) || (err == nil && sh.ProjectID != p.ID) {
			return projectShareAbsent()
		}
		if err != nil {
			return err
		}
		if sh.Status == shareRevoked || sh.Status == shareRejected {
			return nil
		}
		return q.ProjectShareSetStatus(rq.ctx, db.ProjectShareSetStatusParams{ID: sh.ID, Status: shareRevoked, RespondedAt: ptr(s.nowText()), RespondedBy: &rq.user.ID})
	})
	if err != nil {
		return err
	}
	return rq.noContent()
}

// projectShareRespond is POST /users/@me/project-shares/{id}/accept|reject:
// a pending share addressed to the caller, or to an organisation where the
// caller holds MANAGE_ORGANISATION. Another's share is 404; one no longer
// pending is 400.
func (s *Server) projectShareRespond(accept bool) handlerFunc {
	return func(rq *request) error {
		id, err := rq.pathID("id")
		if err != nil {
			return err
		}
		var out projectShareJSON
		err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
			sh, err := q.ProjectShareGet(rq.ctx, id)
			if db.IsNotFound(err) {
				return projectShareAbsent()
			}
			if err != nil {
				return err
			}
			if err := mayRespond(rq.ctx, q, rq.user.ID, sh.RecipientUserID, sh.RecipientOrganisationID, ManageOrganisation, projectShareAbsent()); err != nil {
				return err
			}
			if sh.Status, err = respondStatus(sh.Status, accept, "project share"); err != nil {
				return err
			}
			if err := q.ProjectShareSetStatus(rq.ctx, db.ProjectShareSetStatusParams{ID: sh.ID, Status: sh.Status, RespondedAt: ptr(s.nowText()), RespondedBy: &rq.user.ID}); err != nil {
				return err
			}
			shares, err := s.renderProjectShares(rq.ctx, q, rq.user.ID, []db.ProjectShare{sh})
			if err != nil {
				return err
			}
			out = shares[0]
			return nil
		})
		if err != nil {
			return err
		}
		return rq.json(http.StatusOK, out)
	}
}

// userProjectShares: pending and accepted project shares addressed to the
// caller or to an organisation it is a member of.
func (s *Server) userProjectShares(rq *request) error {
	var out []projectShareJSON
	err := s.store.ReadTx(rq.ctx, func(q *db.Queries) error {
		var err error
		out, err = s.projectSharesForUser(rq.ctx, q, rq.user.ID)
		return err
	})
	if err != nil {
		return err
	}
	setTotalCount(rq.w, int64(len(out)))
	return rq.json(http.StatusOK, out)
}

func (s *Server) projectSharesForUser(ctx context.Context, q *db.Queries, userID int64) ([]projectShareJSON, error) {
	rows, err := q.ProjectSharesForUser(ctx, &userID)
	if err != nil {
		return nil, err
	}
	return s.renderProjectShares(ctx, q, userID, rows)
}
