package server

import (
	"context"
	"database/sql"
	"errors"
	"net/http"

	"workspace/db"
)

// What every kind of share (fleet, project, document) has in common: one recipient,
// a user or another organisation, and a pending share the recipient
// accepts or rejects (operations-data.md). Statuses are stored as numbers.
const (
	sharePending int64 = iota
	shareAccepted
	shareRejected
	shareRevoked
)

// shareRecipient is the recipient part of a share's create body.
type shareRecipient struct {
	OrganisationID refID `json:"organisation_id"`
	UserID         refID `json:"user_id"`
}

// check validates the recipient against the sharing organisation: exactly
// one of organisation_id and user_id, naming an existing organisation other
// than the owner, or an existing user who accepts shares from the sharer
// (shareGate, 403 otherwise).
func (r shareRecipient) check(ctx context.Context, q *db.Queries, sharerID, ownerOrgID int64, own string) error {
	if (r.OrganisationID.ID == 0) == (r.UserID.ID == 0) {
		return fieldError("organisation_id", "give exactly one of organisation_id and user_id")
	}
	if r.OrganisationID.ID != 0 {
		if r.OrganisationID.ID == ownerOrgID {
			return fieldError("organisation_id", "is the "+own+"'s own organisation")
		}
		if _, err := q.OrganisationGet(ctx, r.OrganisationID.ID); db.IsNotFound(err) {
			return fieldError("organisation_id", "names no organisation")
		} else if err != nil {
			return err
		}
		return nil
	}
	u, err := q.UserGet(ctx, r.UserID.ID)
	if db.IsNotFound(err) {
		return fieldError("user_id", "names no user")
	} else if err != nil {
		return err
	}
	return recipientGate(ctx, q, sharerID, u)
}

// recipientGate is shareGate for a share being made to a user: the same 403
// and message, also naming user_id in errors, the field that chose the
// recipient, so a form says it there (docs/users.md "Who may share with a
// user"). The lookup's refusal names no field: it has no user_id.
func recipientGate(ctx context.Context, q *db.Queries, sharerID int64, target db.User) error {
	err := shareGate(ctx, q, sharerID, target)
	var e *Error
	if errors.As(err, &e) && e.Status == http.StatusForbidden {
		return &Error{Status: e.Status, Code: e.Code, Message: e.Message, Fields: map[string]string{"user_id": e.Message}}
	}
	return err
}

// Allow-shares-from values (spec "Allow Request From"; users' allow_shares_from).
const (
	sharesFromNoOne      int64 = 0x00
	sharesFromEveryone   int64 = 0xFF
	shareGateNoOne             = "This user accepts shares from no one."
	shareGateFleetManage       = "You need MANAGE_FLEETS in an organisation you share with this user."
)

// shareGate is the one rule of who may share with a user, by the user's
// allow_shares_from: 0 no one; 1 (members of the same organisation) and 2
// (connections, which do not exist yet, so as 1) a sharer holding
// MANAGE_FLEETS in an organisation both are members of, as the spec states
// for GET /users/lookup; 255 anyone signed in. A refusal is 403, the
// lookup's status and message. The lookup and every share naming a user_id
// (fleet, project and document shares) ask it, so knowing a user's id opens
// nothing the lookup refuses (docs/users.md "Who may share with a user").
func shareGate(ctx context.Context, q *db.Queries, sharerID int64, target db.User) error {
	switch target.AllowSharesFrom {
	case sharesFromEveryone:
		return nil
	case sharesFromNoOne:
		return forbidden(shareGateNoOne)
	}
	orgs, err := q.UserSharedOrganisations(ctx, db.UserSharedOrganisationsParams{UserID: target.ID, ViewerID: sharerID})
	if err != nil || len(orgs) == 0 {
		if err != nil {
			return err
		}
		return forbidden(shareGateFleetManage)
	}
	all, err := accessAll(ctx, q, sharerID)
	if err != nil {
		return err
	}
	for _, o := range orgs {
		if a, ok := all[o.ID]; ok && a.Can(ManageFleets) {
			return nil
		}
	}
	return forbidden(shareGateFleetManage)
}

// mayRespond lets the caller accept or reject a share: one addressed to it,
// or to an organisation where it holds perm. Anyone else's share is absent.
func mayRespond(ctx context.Context, q *db.Queries, userID int64, toUser, toOrg *int64, perm Permission, absent *Error) error {
	if toUser != nil {
		if *toUser != userID {
			return absent
		}
		return nil
	}
	a, err := authorize(ctx, q, userID, *toOrg, Scopes{})
	if db.IsNotFound(err) || (err == nil && !a.IsMember()) {
		return absent
	}
	if err != nil {
		return err
	}
	return a.Require(perm)
}

// respondStatus is the status accepting or rejecting moves a pending share
// to; a share no longer pending is 400.
func respondStatus(current int64, accept bool, what string) (int64, error) {
	if current != sharePending {
		return 0, badRequest("The %s is no longer pending.", what)
	}
	if accept {
		return shareAccepted, nil
	}
	return shareRejected, nil
}

// shareParties are the organisations and people every kind of share shows.
type shareParties struct {
	OwnerOrganisation *orgPartialJSON `json:"owner_organisation"`
	Organisation      *orgPartialJSON `json:"organisation"`
	User              any             `json:"user"`
	SharedBy          any             `json:"shared_by"`
}

// partyRenderer renders shareParties for one viewer (users through
// revealUser), reading each organisation once however many shares name it.
type partyRenderer struct {
	s        *Server
	ctx      context.Context
	q        *db.Queries
	viewerID int64
	orgs     map[int64]*orgPartialJSON
}

func (s *Server) shareParties(ctx context.Context, q *db.Queries, viewerID int64) *partyRenderer {
	return &partyRenderer{s: s, ctx: ctx, q: q, viewerID: viewerID, orgs: map[int64]*orgPartialJSON{}}
}

func (r *partyRenderer) org(id int64) (*orgPartialJSON, error) {
	if o, ok := r.orgs[id]; ok {
		return o, nil
	}
	o, err := r.q.OrganisationGet(r.ctx, id)
	if db.IsNotFound(err) { // a deleted organisation shows as null
		r.orgs[id] = nil
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	p := toOrgPartial(o)
	r.orgs[id] = &p
	return &p, nil
}

// render is a share's parties: the owning organisation, its recipient (an
// organisation or a user) and who shared it.
func (r *partyRenderer) render(ownerOrgID int64, toOrg, toUser *int64, sharedBy int64) (shareParties, error) {
	var out shareParties
	var err error
	if out.OwnerOrganisation, err = r.org(ownerOrgID); err != nil {
		return out, err
	}
	if toOrg != nil {
		if out.Organisation, err = r.org(*toOrg); err != nil {
			return out, err
		}
	}
	if toUser != nil {
		if out.User, err = r.s.revealUser(r.ctx, r.q, *toUser, r.viewerID, false); err != nil {
			return out, err
		}
	}
	out.SharedBy, err = r.s.revealUser(r.ctx, r.q, sharedBy, r.viewerID, false)
	return out, err
}

// The lifecycle every kind of share (project, fleet, document) has in
// common, written once: list a subject's shares, revoke one, accept or
// reject one as its recipient, list the caller's. Each area supplies a
// shareKind: its queries, how it authorises managing a subject's shares,
// and how a share is shown; creating and changing a share stay with the
// area (their bodies differ).

// shareRow is what the shell reads of a stored share of any kind.
type shareRow struct {
	OrganisationID          int64 // the owning organisation
	SubjectID               int64 // the project, fleet or document shared
	RecipientOrganisationID *int64
	RecipientUserID         *int64
	Status                  int64
	SharedBy                int64
}

// shareKind is one kind of share: R its stored row, S its subject's row,
// J the share as answered. Queries take (q, ctx, ...) so sqlc's methods fit
// as method expressions.
type shareKind[R, S, J any] struct {
	what        string     // "fleet share", in messages
	respondPerm Permission // what a member of a recipient organisation needs to answer for it
	row         func(R) shareRow
	get         func(*db.Queries, context.Context, int64) (R, error)
	forSubject  func(*db.Queries, context.Context, int64) ([]R, error)
	forUser     func(*db.Queries, context.Context, *int64) ([]R, error)
	// setStatus stores a status (accepted, rejected, revoked) and answers
	// the share as the area shows it afterwards.
	setStatus func(q *db.Queries, ctx context.Context, sh R, status int64, at string, by int64) (R, error)
	// subjects reads the subjects of a page of shares at once (idsJSON).
	subjects  func(*db.Queries, context.Context, any) ([]S, error)
	subjectID func(S) int64
	// manage authorises the caller to manage the shares of the path's {id}
	// subject and answers its id.
	manage func(rq *request, q *db.Queries) (int64, error)
	// render shows one share, its subject and parties given.
	render func(ctx context.Context, q *db.Queries, sh R, subject S, parties shareParties) (J, error)
}

func (k *shareKind[R, S, J]) absent() *Error { return notFound("The %s does not exist.", k.what) }

// renderAll shows shares to the viewer: their subjects read in one query,
// each organisation once (shareParties), users through revealUser.
func (k *shareKind[R, S, J]) renderAll(s *Server, ctx context.Context, q *db.Queries, viewerID int64, rows []R) ([]J, error) {
	out := make([]J, 0, len(rows))
	if len(rows) == 0 {
		return out, nil
	}
	var ids []int64
	seen := map[int64]bool{}
	for _, r := range rows {
		if id := k.row(r).SubjectID; !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	list, err := k.subjects(q, ctx, idsJSON(ids))
	if err != nil {
		return nil, err
	}
	subjects := make(map[int64]S, len(list))
	for _, sub := range list {
		subjects[k.subjectID(sub)] = sub
	}
	parties := s.shareParties(ctx, q, viewerID)
	for _, r := range rows {
		m := k.row(r)
		sub, ok := subjects[m.SubjectID]
		if !ok {
			return nil, sql.ErrNoRows // as reading the one subject answered
		}
		p, err := parties.render(m.OrganisationID, m.RecipientOrganisationID, m.RecipientUserID, m.SharedBy)
		if err != nil {
			return nil, err
		}
		j, err := k.render(ctx, q, r, sub, p)
		if err != nil {
			return nil, err
		}
		out = append(out, j)
	}
	return out, nil
}

// renderOne shows one share.
func (k *shareKind[R, S, J]) renderOne(s *Server, ctx context.Context, q *db.Queries, viewerID int64, r R) (J, error) {
	out, err := k.renderAll(s, ctx, q, viewerID, []R{r})
	if err != nil {
		var zero J
		return zero, err
	}
	return out[0], nil
}

// list is GET /{subjects}/{id}/shares: every share of the subject, whatever
// its status, for those who may manage them.
func (k *shareKind[R, S, J]) list(s *Server, rq *request) error {
	if _, err := rq.pathID("id"); err != nil {
		return err
	}
	var out []J
	err := s.store.ReadTx(rq.ctx, func(q *db.Queries) error {
		id, err := k.manage(rq, q)
		if err != nil {
			return err
		}
		rows, err := k.forSubject(q, rq.ctx, id)
		if err != nil {
			return err
		}
		out, err = k.renderAll(s, rq.ctx, q, rq.user.ID, rows)
		return err
	})
	if err != nil {
		return err
	}
	setTotalCount(rq.w, int64(len(out)))
	return rq.json(http.StatusOK, out)
}

// shareOf reads the {share} share of the subject (absent when it is
// another subject's).
func (k *shareKind[R, S, J]) shareOf(rq *request, q *db.Queries, subjectID, shareID int64) (R, error) {
	sh, err := k.get(q, rq.ctx, shareID)
	if db.IsNotFound(err) || (err == nil && k.row(sh).SubjectID != subjectID) {
		return sh, k.absent()
	}
	return sh, err
}

// revoke is DELETE /{subjects}/{id}/shares/{share}: a pending or accepted
// share becomes revoked, ending the recipient's access on its next
// request; one already rejected or revoked stays as it is (204 either way).
func (k *shareKind[R, S, J]) revoke(s *Server, rq *request) error {
	_, shareID, err := rq.pathIDs("id", "share")
	if err != nil {
		return err
	}
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		id, err := k.manage(rq, q)
		if err != nil {
			return err
		}
		sh, err := k.shareOf(rq, q, id, shareID)
		if err != nil {
			return err
		}
		if st := k.row(sh).Status; st == shareRevoked || st == shareRejected {
			return nil
		}
		_, err = k.setStatus(q, rq.ctx, sh, shareRevoked, s.nowText(), rq.user.ID)
		return err
	})
	if err != nil {
		return err
	}
	return rq.noContent()
}

// respond is POST /users/@me/{kind}-shares/{id}/accept|reject: a pending
// share addressed to the caller, or to an organisation where the caller
// holds respondPerm. Another's share is 404; one no longer pending is 400.
func (k *shareKind[R, S, J]) respond(s *Server, rq *request, accept bool) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var out J
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		sh, err := k.get(q, rq.ctx, id)
		if db.IsNotFound(err) {
			return k.absent()
		}
		if err != nil {
			return err
		}
		m := k.row(sh)
		if err := mayRespond(rq.ctx, q, rq.user.ID, m.RecipientUserID, m.RecipientOrganisationID, k.respondPerm, k.absent()); err != nil {
			return err
		}
		status, err := respondStatus(m.Status, accept, k.what)
		if err != nil {
			return err
		}
		if sh, err = k.setStatus(q, rq.ctx, sh, status, s.nowText(), rq.user.ID); err != nil {
			return err
		}
		if out, err = k.renderOne(s, rq.ctx, q, rq.user.ID, sh); err != nil {
			return err
		}
		// A user answering a share addressed to them acts in no
		// organisation: the answer changes the subject's organisation's
		// share, so it is audited on that organisation's chain (noted last,
		// after anything that authorizes elsewhere). An organisation's
		// answer stays on the recipient organisation's chain, where
		// mayRespond authorized it.
		if m.RecipientUserID != nil {
			noteAuditOrg(rq.ctx, m.OrganisationID)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

// forUserShares lists the pending and accepted shares addressed to the user or
// to an organisation it is a member of.
func (k *shareKind[R, S, J]) forUserShares(s *Server, ctx context.Context, q *db.Queries, userID int64) ([]J, error) {
	rows, err := k.forUser(q, ctx, &userID)
	if err != nil {
		return nil, err
	}
	return k.renderAll(s, ctx, q, userID, rows)
}

// mine is GET /users/@me/{kind}-shares.
func (k *shareKind[R, S, J]) mine(s *Server, rq *request) error {
	var out []J
	err := s.store.ReadTx(rq.ctx, func(q *db.Queries) error {
		var err error
		out, err = k.forUserShares(s, rq.ctx, q, rq.user.ID)
		return err
	})
	if err != nil {
		return err
	}
	setTotalCount(rq.w, int64(len(out)))
	return rq.json(http.StatusOK, out)
}
