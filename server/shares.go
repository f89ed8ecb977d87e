package server

import (
	"context"

	"workspace/db"
)

// What every kind of share (fleet, project) has in common: one recipient,
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
// than the owner, or an existing user.
func (r shareRecipient) check(ctx context.Context, q *db.Queries, ownerOrgID int64, own string) error {
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
	if _, err := q.UserGet(ctx, r.UserID.ID); db.IsNotFound(err) {
		return fieldError("user_id", "names no user")
	} else if err != nil {
		return err
	}
	return nil
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
