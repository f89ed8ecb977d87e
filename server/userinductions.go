package server

import (
	"context"
	"net/http"
	"time"

	"workspace/db"
)

// Induction assignments (spec: the induction user rows and the Users
// table's induction rows); completion records in inductionrecords.go.

type userInductionJSON struct {
	ID            db.ID         `json:"id"`
	InductionID   db.ID         `json:"induction_id"`
	InductionHash string        `json:"induction_hash"`
	User          any           `json:"user"`
	DueAt         *string       `json:"due_at"`
	CreatedBy     idJSON        `json:"created_by"`
	CreatedAt     string        `json:"created_at"`
	Induction     inductionJSON `json:"induction"`
	Record        any           `json:"record"`
	completed     bool          // a valid, unexpired record on the current revision
}

func (s *Server) toUserInduction(ctx context.Context, q *db.Queries, ui db.UserInduction, viewerID int64) (userInductionJSON, error) {
	i, err := q.InductionGet(ctx, ui.InductionID)
	if err != nil {
		return userInductionJSON{}, err
	}
	r, err := q.InductionRevisionGet(ctx, i.RevisionID)
	if err != nil {
		return userInductionJSON{}, err
	}
	ij, err := toInduction(i, r, false)
	if err != nil {
		return userInductionJSON{}, err
	}
	u, err := s.revealUser(ctx, q, ui.UserID, viewerID, false)
	if err != nil {
		return userInductionJSON{}, err
	}
	out := userInductionJSON{ID: db.ID(ui.ID), InductionID: db.ID(ui.InductionID), InductionHash: r.Hash, User: u,
		DueAt: ui.DueAt, CreatedBy: idJSON{db.ID(ui.CreatedBy)}, CreatedAt: ui.CreatedAt, Induction: ij}
	rec, err := q.InductionRecordLatest(ctx, db.InductionRecordLatestParams{InductionID: ui.InductionID, UserID: ui.UserID})
	if db.IsNotFound(err) {
		return out, nil
	} else if err != nil {
		return out, err
	}
	rj, err := s.toRecord(ctx, q, rec, viewerID, false)
	if err != nil {
		return out, err
	}
	out.Record = rj
	out.completed = s.validRecord(rec, r.Hash)
	return out, nil
}

type assignBody struct {
	DueAt Opt[int64] `json:"due_at"`
}

// inductionAssign: MANAGE_INDUCTIONS, or a member assigning themself. The
// user must be a (non-pending) member; an existing assignment is returned
// (200) rather than duplicated (201 for a new one).
func (s *Server) inductionAssign(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	userID, err := rq.pathID("user")
	if err != nil {
		return err
	}
	var b assignBody
	if err := rq.decode(&b); err != nil {
		return err
	}
	var due *string
	if b.DueAt.Set && !b.DueAt.Null {
		if b.DueAt.Value < 0 || b.DueAt.Value > 253402300799 { // up to 9999-12-31
			return fieldError("due_at", "must be a unix timestamp")
		}
		d := db.FormatTime(time.Unix(b.DueAt.Value, 0))
		due = &d
	}
	status := http.StatusCreated
	var out userInductionJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		i, rev, a, err := inductionAccess(rq.ctx, q, rq.user.ID, id)
		if err != nil {
			return err
		}
		if err := a.RequireSelfOr(userID, ManageInductions); err != nil {
			return err
		}
		if err := requireMember(rq.ctx, q, i.OrganisationID, userID, "user"); err != nil {
			return err
		}
		ui, err := q.UserInductionGet(rq.ctx, db.UserInductionGetParams{InductionID: i.ID, UserID: userID})
		if db.IsNotFound(err) {
			ui, err = q.UserInductionCreate(rq.ctx, db.UserInductionCreateParams{ID: s.store.IDs.Next(), OrganisationID: i.OrganisationID,
				InductionID: i.ID, UserID: userID, DueAt: due, CreatedAt: s.nowText(), CreatedBy: rq.user.ID})
			if err == nil {
				err = s.notifyInductionAssigned(rq.ctx, q, i, rev, ui, rq.user.ID)
			}
		} else if err == nil {
			status = http.StatusOK
		}
		if err != nil {
			return err
		}
		out, err = s.toUserInduction(rq.ctx, q, ui, rq.user.ID)
		return err
	})
	if err != nil {
		return err
	}
	return rq.json(status, out)
}

// inductionUnassign: MANAGE_INDUCTIONS or self; 200 whether or not there
// was an assignment.
func (s *Server) inductionUnassign(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	userID, err := rq.pathID("user")
	if err != nil {
		return err
	}
	var removed int64
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		i, _, a, err := inductionAccess(rq.ctx, q, rq.user.ID, id)
		if err != nil {
			return err
		}
		if err := a.RequireSelfOr(userID, ManageInductions); err != nil {
			return err
		}
		removed, err = q.UserInductionDelete(rq.ctx, db.UserInductionDeleteParams{InductionID: i.ID, UserID: userID})
		return err
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, map[string]bool{"removed": removed > 0})
}

// inductionUser: one assignment (MANAGE_INDUCTIONS); 404 when none.
func (s *Server) inductionUser(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	userID, err := rq.pathID("user")
	if err != nil {
		return err
	}
	var out userInductionJSON
	err = s.store.ReadTx(rq.ctx, func(q *db.Queries) error {
		i, _, a, err := inductionAccess(rq.ctx, q, rq.user.ID, id)
		if err != nil {
			return err
		}
		if err := a.Require(ManageInductions); err != nil {
			return err
		}
		ui, err := q.UserInductionGet(rq.ctx, db.UserInductionGetParams{InductionID: i.ID, UserID: userID})
		if db.IsNotFound(err) {
			return notFound("The user is not assigned this induction.")
		} else if err != nil {
			return err
		}
		out, err = s.toUserInduction(rq.ctx, q, ui, rq.user.ID)
		return err
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

// inductionUsers: every assignment (MANAGE_INDUCTIONS).
func (s *Server) inductionUsers(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	out := []userInductionJSON{}
	err = s.store.ReadTx(rq.ctx, func(q *db.Queries) error {
		i, _, a, err := inductionAccess(rq.ctx, q, rq.user.ID, id)
		if err != nil {
			return err
		}
		if err := a.Require(ManageInductions); err != nil {
			return err
		}
		rows, err := q.UserInductionList(rq.ctx, i.ID)
		if err != nil {
			return err
		}
		for _, ui := range rows {
			uj, err := s.toUserInduction(rq.ctx, q, ui, rq.user.ID)
			if err != nil {
				return err
			}
			out = append(out, uj)
		}
		return nil
	})
	if err != nil {
		return err
	}
	setTotalCount(rq.w, int64(len(out)))
	return rq.json(http.StatusOK, out)
}

// userInductions lists the caller's assignments in organisations where they
// are a member that are not completed (no valid, unexpired record on the
// current revision).
func (s *Server) userInductions(rq *request) error {
	out := []userInductionJSON{}
	err := s.store.ReadTx(rq.ctx, func(q *db.Queries) error {
		rows, err := q.UserInductionsForUser(rq.ctx, rq.user.ID)
		if err != nil {
			return err
		}
		for _, ui := range rows {
			uj, err := s.toUserInduction(rq.ctx, q, ui, rq.user.ID)
			if err != nil {
				return err
			}
			if !uj.completed {
				out = append(out, uj)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	setTotalCount(rq.w, int64(len(out)))
	return rq.json(http.StatusOK, out)
}

// userInductionGet is the caller's assignment of one induction; 404 when
// there is none or it is completed.
func (s *Server) userInductionGet(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var out userInductionJSON
	err = s.store.ReadTx(rq.ctx, func(q *db.Queries) error {
		ui, err := q.UserInductionGet(rq.ctx, db.UserInductionGetParams{InductionID: id, UserID: rq.user.ID})
		if db.IsNotFound(err) {
			return notFound("No such induction assigned to you.")
		} else if err != nil {
			return err
		}
		// Only while the caller is still a member of its organisation.
		a, err := authorize(rq.ctx, q, rq.user.ID, ui.OrganisationID, Scopes{})
		if db.IsNotFound(err) || (err == nil && !a.IsMember()) {
			return notFound("No such induction assigned to you.")
		} else if err != nil {
			return err
		}
		out, err = s.toUserInduction(rq.ctx, q, ui, rq.user.ID)
		if err == nil && out.completed {
			return notFound("The induction is completed.")
		} else if err != nil {
			return err
		}
		// The assignee answers the current revision's questions, so they
		// see them here (the induction itself shows them to managers only).
		i, err := q.InductionGet(rq.ctx, ui.InductionID)
		if err != nil {
			return err
		}
		r, err := q.InductionRevisionGet(rq.ctx, i.RevisionID)
		if err != nil {
			return err
		}
		rev, err := toRevision(r, true)
		if err != nil {
			return err
		}
		out.Induction.Questions = rev.Questions
		return nil
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}
