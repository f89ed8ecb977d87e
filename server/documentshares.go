package server

import (
	"context"
	"net/http"

	"workspace/db"
)

// Document shares (spec: Document share object, GET
// /users/@me/document-shares; documents.md "Shares"; decisions in
// docs/documents.md). A document is shared with one user or with an
// organisation other than its own; once accepted the share grants exactly
// its scopes, resolved by authorize on every request (sharedScopes in
// authz.go), so revoking ends access on the very next request. The
// lifecycle copies fleet shares': pending -> accepted | rejected by the
// recipient, pending | accepted -> revoked by the sharer.

// shareStatusNames are the wire names of share statuses (the spec's status
// string; numbers as stored, shared with fleet shares).
var shareStatusNames = map[int64]string{sharePending: "pending", shareAccepted: "accepted", shareRejected: "rejected", shareRevoked: "revoked"}

// documentRefJSON is the document a share names: enough to decide whether
// to accept it, shown whatever the viewer's access.
type documentRefJSON struct {
	ID              db.ID  `json:"id"`
	OrganisationID  db.ID  `json:"organisation_id"`
	Number          int64  `json:"number"`
	FormattedNumber string `json:"formatted_number"`
	Title           string `json:"title"`
	IsDeleted       bool   `json:"is_deleted"`
}

type documentShareJSON struct {
	ID         db.ID           `json:"id"`
	Type       string          `json:"type"`
	DocumentID db.ID           `json:"document_id"`
	Document   documentRefJSON `json:"document"`
	shareParties
	Status                   string  `json:"status"`
	ScopeView                bool    `json:"scope_view"`
	ScopeEdit                bool    `json:"scope_edit"`
	ScopeBranch              bool    `json:"scope_branch"`
	ScopeFork                bool    `json:"scope_fork"`
	ScopeRevisions           bool    `json:"scope_revisions"`
	ScopeExport              bool    `json:"scope_export"`
	ShareToUsersOrganisation bool    `json:"share_to_users_organisation"`
	CreatedAt                string  `json:"created_at"`
	UpdatedAt                string  `json:"updated_at"`
	RespondedAt              *string `json:"responded_at"`
}

var documentShareReadOnly = []string{"id", "type", "document_id", "document", "owner_organisation", "organisation", "user",
	"status", "shared_by", "created_at", "updated_at", "responded_at"}

// documentShares is the share lifecycle of documents (server/shares.go).
var documentShares = &shareKind[db.DocumentShare, db.Document, documentShareJSON]{
	what:        "document share",
	respondPerm: ManageOrganisation,
	row: func(r db.DocumentShare) shareRow {
		return shareRow{OrganisationID: r.OrganisationID, SubjectID: r.DocumentID, RecipientOrganisationID: r.RecipientOrganisationID,
			RecipientUserID: r.RecipientUserID, Status: r.Status, SharedBy: r.SharedBy}
	},
	get:        (*db.Queries).DocumentShareGet,
	forSubject: (*db.Queries).DocumentShareListForDocument,
	forUser:    (*db.Queries).DocumentSharesForUser,
	setStatus: func(q *db.Queries, ctx context.Context, sh db.DocumentShare, status int64, at string, by int64) (db.DocumentShare, error) {
		return q.DocumentShareSetStatus(ctx, db.DocumentShareSetStatusParams{ID: sh.ID, Status: status, RespondedAt: &at, RespondedBy: &by})
	},
	subjects:  (*db.Queries).DocumentListByIDs,
	subjectID: func(d db.Document) int64 { return d.ID },
	manage: func(rq *request, q *db.Queries) (int64, error) {
		d, err := documentForSharing(rq, q)
		return d.ID, err
	},
	render: func(_ context.Context, _ *db.Queries, r db.DocumentShare, d db.Document, parties shareParties) (documentShareJSON, error) {
		return documentShareJSON{ID: db.ID(r.ID), Type: "document", DocumentID: db.ID(r.DocumentID),
			Document: documentRefJSON{ID: db.ID(d.ID), OrganisationID: db.ID(d.OrganisationID), Number: d.Number,
				FormattedNumber: d.FormattedNumber, Title: d.Title, IsDeleted: d.DeletedAt != nil},
			shareParties: parties, Status: shareStatusNames[r.Status], ScopeView: r.ScopeView, ScopeEdit: r.ScopeEdit,
			ScopeBranch: r.ScopeBranch, ScopeFork: r.ScopeFork, ScopeRevisions: r.ScopeRevisions, ScopeExport: r.ScopeExport,
			ShareToUsersOrganisation: r.ShareToUsersOrganisation, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
			RespondedAt: r.RespondedAt}, nil
	},
}

// documentShareBody is the create and PATCH body: the scopes and the
// propagation flag; on create also the recipient.
type documentShareBody struct {
	OrganisationID           refID `json:"organisation_id"`
	UserID                   refID `json:"user_id"`
	ScopeView                *bool `json:"scope_view"`
	ScopeEdit                *bool `json:"scope_edit"`
	ScopeBranch              *bool `json:"scope_branch"`
	ScopeFork                *bool `json:"scope_fork"`
	ScopeRevisions           *bool `json:"scope_revisions"`
	ScopeExport              *bool `json:"scope_export"`
	ShareToUsersOrganisation *bool `json:"share_to_users_organisation"`
}

// apply writes the body's scopes over r and checks the share still makes
// sense: at least one scope, propagation only to an organisation.
func (b documentShareBody) apply(r *db.DocumentShare) error {
	setIf(&r.ScopeView, b.ScopeView)
	setIf(&r.ScopeEdit, b.ScopeEdit)
	setIf(&r.ScopeBranch, b.ScopeBranch)
	setIf(&r.ScopeFork, b.ScopeFork)
	setIf(&r.ScopeRevisions, b.ScopeRevisions)
	setIf(&r.ScopeExport, b.ScopeExport)
	setIf(&r.ShareToUsersOrganisation, b.ShareToUsersOrganisation)
	p := problems{}
	if shareScopes(*r) == 0 {
		p.add("scope_view", "a share grants at least one scope")
	}
	if r.ShareToUsersOrganisation && r.RecipientOrganisationID == nil {
		p.add("share_to_users_organisation", "applies only to a share with an organisation")
	}
	return p.err()
}

// documentForSharing loads a live document the caller may share: a member
// holding SHARE_PROJECTS on the document's layer, or MANAGE_ORGANISATION.
// A share holder cannot share further.
func documentForSharing(rq *request, q *db.Queries) (db.Document, error) {
	d, _, err := docContentCheck(rq, q, func(a Access) error {
		return a.RequireOr(a.Can(ManageOrganisation), ShareProjects)
	})
	return d, err
}

// documentShareCreate is POST /documents/{id}/shares.
func (s *Server) documentShareCreate(rq *request) error {
	var b documentShareBody
	if err := rq.decodeCreate(&b, documentShareReadOnly...); err != nil {
		return err
	}
	if (b.OrganisationID.ID == 0) == (b.UserID.ID == 0) {
		return fieldError("user_id", "give exactly one of user_id and organisation_id")
	}
	r := db.DocumentShare{RecipientOrganisationID: b.OrganisationID.ptr(), RecipientUserID: b.UserID.ptr()}
	if err := b.apply(&r); err != nil {
		return err
	}
	var out documentShareJSON
	err := s.store.InTx(rq.ctx, func(q *db.Queries) error {
		d, err := documentForSharing(rq, q)
		if err != nil {
			return err
		}
		if r.RecipientOrganisationID != nil {
			if *r.RecipientOrganisationID == d.OrganisationID {
				return fieldError("organisation_id", "is the document's own organisation (its members' access comes from permissions)")
			}
			if _, err := q.OrganisationGet(rq.ctx, *r.RecipientOrganisationID); db.IsNotFound(err) {
				return fieldError("organisation_id", "names no organisation")
			} else if err != nil {
				return err
			}
		} else {
			u, err := q.UserGet(rq.ctx, *r.RecipientUserID)
			if db.IsNotFound(err) {
				return fieldError("user_id", "names no user")
			} else if err != nil {
				return err
			}
			ra, err := resolveAccess(rq.ctx, q, *r.RecipientUserID, d.OrganisationID, Scopes{})
			if err != nil {
				return err
			}
			if ra.IsMember() {
				return fieldError("user_id", "is a member of the document's organisation (its access comes from permissions)")
			}
			if err := recipientGate(rq.ctx, q, rq.user.ID, u); err != nil {
				return err
			}
		}
		dup, err := q.DocumentShareOpenExists(rq.ctx, db.DocumentShareOpenExistsParams{DocumentID: d.ID,
			RecipientOrganisationID: r.RecipientOrganisationID, RecipientUserID: r.RecipientUserID})
		if err != nil {
			return err
		}
		if dup {
			return badRequest("The document is already shared with that recipient (pending or accepted).")
		}
		sh, err := q.DocumentShareCreate(rq.ctx, db.DocumentShareCreateParams{ID: s.store.IDs.Next(), OrganisationID: d.OrganisationID,
			DocumentID: d.ID, RecipientOrganisationID: r.RecipientOrganisationID, RecipientUserID: r.RecipientUserID,
			ScopeView: r.ScopeView, ScopeEdit: r.ScopeEdit, ScopeBranch: r.ScopeBranch, ScopeFork: r.ScopeFork,
			ScopeRevisions: r.ScopeRevisions, ScopeExport: r.ScopeExport, ShareToUsersOrganisation: r.ShareToUsersOrganisation,
			SharedBy: rq.user.ID, CreatedAt: s.nowText()})
		if err != nil {
			return err
		}
		if err := s.notifyShareWaiting(rq.ctx, q, sh.RecipientUserID, d.OrganisationID, rq.user.ID, "the document "+d.FormattedNumber+" "+quoted(d.Title)); err != nil {
			return err
		}
		out, err = documentShares.renderOne(s, rq.ctx, q, rq.user.ID, sh)
		return err
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusCreated, out)
}

// documentShareList is GET /documents/{id}/shares: every share of the
// document, whatever its status, for those who may share it.
func (s *Server) documentShareList(rq *request) error { return documentShares.list(s, rq) }

// documentShareOf reads the {share} share of the document d (404 when it
// is another document's).
func documentShareOf(rq *request, q *db.Queries, d db.Document) (db.DocumentShare, error) {
	id, err := rq.pathID("share")
	if err != nil {
		return db.DocumentShare{}, err
	}
	return documentShares.shareOf(rq, q, d.ID, id)
}

// documentSharePatch changes a pending or accepted share's scopes (and
// propagation); an accepted share grants the new scopes at once.
func (s *Server) documentSharePatch(rq *request) error {
	var b documentShareBody
	ro, err := rq.decodePatch(&b, append(documentShareReadOnly, "organisation_id", "user_id")...)
	if err != nil {
		return err
	}
	if _, err := rq.pathID("share"); err != nil {
		return err
	}
	var out documentShareJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		d, err := documentForSharing(rq, q)
		if err != nil {
			return err
		}
		sh, err := documentShareOf(rq, q, d)
		if err != nil {
			return err
		}
		cur, err := documentShares.renderOne(s, rq.ctx, q, rq.user.ID, sh)
		if err != nil {
			return err
		}
		if err := ro.check(cur); err != nil {
			return err
		}
		if sh.Status != sharePending && sh.Status != shareAccepted {
			return badRequest("The document share is %s; only a pending or accepted share changes.", shareStatusNames[sh.Status])
		}
		if err := b.apply(&sh); err != nil {
			return err
		}
		if sh, err = q.DocumentShareUpdate(rq.ctx, db.DocumentShareUpdateParams{ID: sh.ID, ScopeView: sh.ScopeView, ScopeEdit: sh.ScopeEdit,
			ScopeBranch: sh.ScopeBranch, ScopeFork: sh.ScopeFork, ScopeRevisions: sh.ScopeRevisions, ScopeExport: sh.ScopeExport,
			ShareToUsersOrganisation: sh.ShareToUsersOrganisation, UpdatedAt: s.nowText()}); err != nil {
			return err
		}
		out, err = documentShares.renderOne(s, rq.ctx, q, rq.user.ID, sh)
		return err
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

// documentShareRevoke: DELETE revokes (status revoked) a pending or
// accepted share; the recipient's access ends on its next request. A share
// already rejected or revoked stays as it is (204).
func (s *Server) documentShareRevoke(rq *request) error { return documentShares.revoke(s, rq) }

// documentShareRespond is POST /users/@me/document-shares/{id}/accept|reject:
// a pending share addressed to the caller, or to an organisation where the
// caller holds MANAGE_ORGANISATION. Another's share is 404; one no longer
// pending is 400.
func (s *Server) documentShareRespond(accept bool) handlerFunc {
	return func(rq *request) error { return documentShares.respond(s, rq, accept) }
}

// userDocumentShares is GET /users/@me/document-shares: pending and
// accepted shares addressed to the caller or to an organisation it is a
// member of, each with its document, organisations and shared-by user.
func (s *Server) userDocumentShares(rq *request) error { return documentShares.mine(s, rq) }
