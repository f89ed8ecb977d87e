package server

import (
	"context"
	"net/http"

	"workspace/db"
)

// Fleet shares and fleet subscriptions (operations-data.md "Fleets and
// fleet shares"; decisions in docs/assets.md). An accepted share lets its
// recipient read the fleet's assets and asset groups and the owning
// organisation's locations, sub locations and systems, nothing else;
// revoking ends that on the next request.

type fleetShareJSON struct {
	ID    db.ID            `json:"id"`
	Fleet fleetPartialJSON `json:"fleet"`
	shareParties
	WorkItemType *workItemTypeRefJSON `json:"work_item_type"`
	Status       int64                `json:"status"`
	CreatedAt    string               `json:"created_at"`
	RespondedAt  *string              `json:"responded_at"`
}

// fleetShares is the share lifecycle of fleets (server/shares.go).
var fleetShares = &shareKind[db.FleetShare, db.Fleet, fleetShareJSON]{
	what:        "fleet share",
	respondPerm: ManageFleets,
	row: func(r db.FleetShare) shareRow {
		return shareRow{OrganisationID: r.OrganisationID, SubjectID: r.FleetID, RecipientOrganisationID: r.RecipientOrganisationID,
			RecipientUserID: r.RecipientUserID, Status: r.Status, SharedBy: r.SharedBy}
	},
	get:        (*db.Queries).FleetShareGet,
	forSubject: (*db.Queries).FleetShareListForFleet,
	forUser:    (*db.Queries).FleetSharesForUser,
	setStatus: func(q *db.Queries, ctx context.Context, sh db.FleetShare, status int64, at string, by int64) (db.FleetShare, error) {
		return q.FleetShareSetStatus(ctx, db.FleetShareSetStatusParams{ID: sh.ID, Status: status, RespondedAt: &at, RespondedBy: &by})
	},
	subjects:  (*db.Queries).FleetListByIDs,
	subjectID: func(f db.Fleet) int64 { return f.ID },
	manage: func(rq *request, q *db.Queries) (int64, error) {
		id, err := rq.pathID("id")
		if err != nil {
			return 0, err
		}
		f, a, err := fleetAccess(rq.ctx, q, rq.user.ID, id, http.StatusNotFound)
		if err != nil {
			return 0, err
		}
		return f.ID, a.Require(ManageFleets)
	},
	render: func(ctx context.Context, q *db.Queries, r db.FleetShare, f db.Fleet, parties shareParties) (fleetShareJSON, error) {
		sh := fleetShareJSON{ID: db.ID(r.ID), Fleet: fleetPartialJSON{ID: db.ID(f.ID), OrganisationID: db.ID(f.OrganisationID), Name: f.Name},
			shareParties: parties, Status: r.Status, CreatedAt: r.CreatedAt, RespondedAt: r.RespondedAt}
		var err error
		sh.WorkItemType, err = workItemTypeRef(ctx, q, r.WorkItemTypeID)
		return sh, err
	},
}

type fleetShareBody struct {
	shareRecipient
	WorkItemTypeID refID `json:"work_item_type_id"`
}

// fleetShareCreate shares a fleet with another organisation or one user:
// MANAGE_FLEETS on the fleet; exactly one recipient; not the owning
// organisation; a work item type of the owning organisation; no second
// pending or accepted share to the same recipient (400).
func (s *Server) fleetShareCreate(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var b fleetShareBody
	if err := rq.decodeCreate(&b, "id", "status", "fleet", "shared_by", "created_at"); err != nil {
		return err
	}
	var out fleetShareJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		f, a, err := fleetAccess(rq.ctx, q, rq.user.ID, id, http.StatusNotFound)
		if err != nil {
			return err
		}
		if err := a.Require(ManageFleets); err != nil {
			return err
		}
		if err := b.check(rq.ctx, q, rq.user.ID, f.OrganisationID, "fleet"); err != nil {
			return err
		}
		if b.WorkItemTypeID.ID != 0 {
			ok, err := q.WorkItemTypeOfOrganisation(rq.ctx, db.WorkItemTypeOfOrganisationParams{ID: b.WorkItemTypeID.ID, OrganisationID: f.OrganisationID})
			if err != nil {
				return err
			}
			if !ok {
				return fieldError("work_item_type_id", "names no work item type of the fleet's organisation")
			}
		}
		dup, err := q.FleetShareOpenExists(rq.ctx, db.FleetShareOpenExistsParams{FleetID: f.ID, RecipientOrganisationID: b.OrganisationID.ptr(), RecipientUserID: b.UserID.ptr()})
		if err != nil {
			return err
		}
		if dup {
			return badRequest("The fleet is already shared with that recipient (pending or accepted).")
		}
		sh, err := q.FleetShareCreate(rq.ctx, db.FleetShareCreateParams{ID: s.store.IDs.Next(), OrganisationID: f.OrganisationID, FleetID: f.ID,
			RecipientOrganisationID: b.OrganisationID.ptr(), RecipientUserID: b.UserID.ptr(), WorkItemTypeID: b.WorkItemTypeID.ptr(),
			SharedBy: rq.user.ID, CreatedAt: s.nowText()})
		if err != nil {
			return err
		}
		if err := s.notifyShareWaiting(rq.ctx, q, sh.RecipientUserID, f.OrganisationID, rq.user.ID, "the fleet "+quoted(f.Name)); err != nil {
			return err
		}
		out, err = fleetShares.renderOne(s, rq.ctx, q, rq.user.ID, sh)
		return err
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusCreated, out)
}

// fleetShareList: every share of the fleet, whatever its status
// (MANAGE_FLEETS on it).
func (s *Server) fleetShareList(rq *request) error { return fleetShares.list(s, rq) }

// fleetShareRevoke: DELETE revokes (status 3) a pending or accepted share;
// the recipient's reads end on its next request.
func (s *Server) fleetShareRevoke(rq *request) error { return fleetShares.revoke(s, rq) }

// fleetShareRespond is POST /users/@me/fleet-shares/{id}/accept|reject: a
// pending share addressed to the caller, or to an organisation where the
// caller holds MANAGE_FLEETS. Another's share is 404; one no longer
// pending is 400.
func (s *Server) fleetShareRespond(accept bool) handlerFunc {
	return func(rq *request) error { return fleetShares.respond(s, rq, accept) }
}

// userFleetShares: pending and accepted shares addressed to the caller or
// to an organisation it is a member of.
func (s *Server) userFleetShares(rq *request) error { return fleetShares.mine(s, rq) }

// shareItemJSON is one row of GET /users/@me/shares: the share's kind and
// the share object of that kind.
type shareItemJSON struct {
	Type  string `json:"type"`
	Share any    `json:"share"`
}

// userShares lists the shares addressed to the caller, pending or
// accepted, of every kind: project, fleet and document shares
// (server/projectshares.go, server/documentshares.go).
func (s *Server) userShares(rq *request) error {
	out := []shareItemJSON{}
	err := s.store.ReadTx(rq.ctx, func(q *db.Queries) error {
		projects, err := projectShares.forUserShares(s, rq.ctx, q, rq.user.ID)
		if err != nil {
			return err
		}
		fleets, err := fleetShares.forUserShares(s, rq.ctx, q, rq.user.ID)
		if err != nil {
			return err
		}
		docs, err := documentShares.forUserShares(s, rq.ctx, q, rq.user.ID)
		if err != nil {
			return err
		}
		out = appendShareItems(appendShareItems(appendShareItems(out, "project", projects), "fleet", fleets), "document", docs)
		return nil
	})
	if err != nil {
		return err
	}
	setTotalCount(rq.w, int64(len(out)))
	return rq.json(http.StatusOK, out)
}

func appendShareItems[J any](out []shareItemJSON, kind string, shares []J) []shareItemJSON {
	for _, sh := range shares {
		out = append(out, shareItemJSON{Type: kind, Share: sh})
	}
	return out
}

// userFleets: fleets shared with the caller personally (no organisation),
// accepted.
func (s *Server) userFleets(rq *request) error {
	out := []fleetJSON{}
	err := s.store.ReadTx(rq.ctx, func(q *db.Queries) error {
		rows, err := q.FleetsSharedWithUser(rq.ctx, &rq.user.ID)
		if err != nil {
			return err
		}
		for _, f := range rows {
			out = append(out, toFleet(f))
		}
		return nil
	})
	if err != nil {
		return err
	}
	setTotalCount(rq.w, int64(len(out)))
	return rq.json(http.StatusOK, out)
}

// ---- Fleet subscriptions

type fleetSubscriptionJSON struct {
	ID           db.ID                `json:"id"`
	FleetID      db.ID                `json:"fleet_id"`
	Location     *locationJSON        `json:"location"`
	WorkItemType *workItemTypeRefJSON `json:"work_item_type"`
	CreatedAt    string               `json:"created_at"`
}

// fleetForSubscriber loads a fleet the caller may follow: a member of its
// organisation or a holder of an accepted share of it; else 404.
func fleetForSubscriber(ctx context.Context, q *db.Queries, userID, id int64) (db.Fleet, error) {
	f, a, err := fleetAccess(ctx, q, userID, id, http.StatusNotFound)
	if err != nil {
		return f, err
	}
	if a.IsMember() {
		return f, nil
	}
	ok, err := holdsFleetShare(ctx, q, userID, f.ID)
	if err != nil {
		return f, err
	}
	if !ok {
		return f, notFound("The fleet does not exist.")
	}
	return f, nil
}

func (s *Server) renderFleetSubscriptions(ctx context.Context, q *db.Queries, rows []db.FleetSubscription) ([]fleetSubscriptionJSON, error) {
	out := make([]fleetSubscriptionJSON, 0, len(rows))
	for _, r := range rows {
		sj := fleetSubscriptionJSON{ID: db.ID(r.ID), FleetID: db.ID(r.FleetID), CreatedAt: r.CreatedAt}
		if r.LocationID != nil {
			l, err := q.LocationGet(ctx, *r.LocationID)
			if err != nil && !db.IsNotFound(err) {
				return nil, err
			}
			if err == nil {
				lj := toLocation(l, nil)
				sj.Location = &lj
			}
		}
		wt, err := workItemTypeRef(ctx, q, r.WorkItemTypeID)
		if err != nil {
			return nil, err
		}
		sj.WorkItemType = wt
		out = append(out, sj)
	}
	return out, nil
}

func (s *Server) userFleetSubscriptions(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var out []fleetSubscriptionJSON
	err = s.store.ReadTx(rq.ctx, func(q *db.Queries) error {
		f, err := fleetForSubscriber(rq.ctx, q, rq.user.ID, id)
		if err != nil {
			return err
		}
		rows, err := q.FleetSubscriptionList(rq.ctx, db.FleetSubscriptionListParams{UserID: rq.user.ID, FleetID: f.ID})
		if err != nil {
			return err
		}
		out, err = s.renderFleetSubscriptions(rq.ctx, q, rows)
		return err
	})
	if err != nil {
		return err
	}
	setTotalCount(rq.w, int64(len(out)))
	return rq.json(http.StatusOK, out)
}

// userFleetSubscriptionCreate: follow new work items on a fleet, optionally
// only at a location and of a work item type, both of the fleet's
// organisation.
func (s *Server) userFleetSubscriptionCreate(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var b fleetSubscriptionBody
	if err := rq.decodeCreate(&b, fleetSubscriptionReadOnly...); err != nil {
		return err
	}
	var out fleetSubscriptionJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		f, err := fleetForSubscriber(rq.ctx, q, rq.user.ID, id)
		if err != nil {
			return err
		}
		if err := b.check(rq.ctx, q, f.OrganisationID); err != nil {
			return err
		}
		sub, err := q.FleetSubscriptionCreate(rq.ctx, db.FleetSubscriptionCreateParams{ID: s.store.IDs.Next(), UserID: rq.user.ID, FleetID: f.ID,
			LocationID: b.LocationID.ptr(), WorkItemTypeID: b.WorkItemTypeID.ptr(), CreatedAt: s.nowText()})
		if err != nil {
			return err
		}
		subs, err := s.renderFleetSubscriptions(rq.ctx, q, []db.FleetSubscription{sub})
		if err != nil {
			return err
		}
		out = subs[0]
		return nil
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusCreated, out)
}

// fleetSubscriptionBody is a subscription's filters; null (or 0) is "any".
type fleetSubscriptionBody struct {
	LocationID     refID `json:"location_id"`
	WorkItemTypeID refID `json:"work_item_type_id"`
}

var fleetSubscriptionReadOnly = []string{"id", "fleet_id", "location", "work_item_type", "created_at"}

// check validates the filters given: a location and a work item type of the
// fleet's organisation.
func (b fleetSubscriptionBody) check(ctx context.Context, q *db.Queries, orgID int64) error {
	if b.LocationID.ID != 0 {
		l, err := q.LocationGet(ctx, b.LocationID.ID)
		if db.IsNotFound(err) || (err == nil && l.OrganisationID != orgID) {
			return fieldError("location_id", "names no location of the fleet's organisation")
		} else if err != nil {
			return err
		}
	}
	if b.WorkItemTypeID.ID != 0 {
		ok, err := q.WorkItemTypeOfOrganisation(ctx, db.WorkItemTypeOfOrganisationParams{ID: b.WorkItemTypeID.ID, OrganisationID: orgID})
		if err != nil {
			return err
		}
		if !ok {
			return fieldError("work_item_type_id", "names no work item type of the fleet's organisation")
		}
	}
	return nil
}

// userFleetSubscriptionPatch changes the filters of one of the caller's
// subscriptions (so a web page edits one in place rather than deleting and
// creating): a key given replaces its filter, null (or 0) makes it "any",
// an absent key keeps it. Only while the caller may still follow the fleet
// (404 otherwise, as for creating); another's subscription is 404.
func (s *Server) userFleetSubscriptionPatch(rq *request) error {
	id, subID, err := rq.pathIDs("id", "subscription")
	if err != nil {
		return err
	}
	var b fleetSubscriptionBody
	ro, err := rq.decodePatch(&b, fleetSubscriptionReadOnly...)
	if err != nil {
		return err
	}
	var out fleetSubscriptionJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		f, err := fleetForSubscriber(rq.ctx, q, rq.user.ID, id)
		if err != nil {
			return err
		}
		sub, err := q.FleetSubscriptionGet(rq.ctx, db.FleetSubscriptionGetParams{ID: subID, UserID: rq.user.ID, FleetID: f.ID})
		if db.IsNotFound(err) {
			return notFound("The fleet subscription does not exist.")
		} else if err != nil {
			return err
		}
		if err := ro.checkLoaded(func() (any, error) {
			cur, err := s.renderFleetSubscriptions(rq.ctx, q, []db.FleetSubscription{sub})
			if err != nil {
				return nil, err
			}
			return cur[0], nil
		}); err != nil {
			return err
		}
		if err := b.check(rq.ctx, q, f.OrganisationID); err != nil {
			return err
		}
		params := db.FleetSubscriptionSetFiltersParams{ID: sub.ID, LocationID: sub.LocationID, WorkItemTypeID: sub.WorkItemTypeID}
		if b.LocationID.Set {
			params.LocationID = b.LocationID.ptr()
		}
		if b.WorkItemTypeID.Set {
			params.WorkItemTypeID = b.WorkItemTypeID.ptr()
		}
		if sub, err = q.FleetSubscriptionSetFilters(rq.ctx, params); err != nil {
			return err
		}
		subs, err := s.renderFleetSubscriptions(rq.ctx, q, []db.FleetSubscription{sub})
		if err != nil {
			return err
		}
		out = subs[0]
		return nil
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

func (s *Server) userFleetSubscriptionDelete(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	subID, err := rq.pathID("subscription")
	if err != nil {
		return err
	}
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		n, err := q.FleetSubscriptionDelete(rq.ctx, db.FleetSubscriptionDeleteParams{ID: subID, UserID: rq.user.ID, FleetID: id})
		if err != nil {
			return err
		}
		if n == 0 {
			return notFound("The fleet subscription does not exist.")
		}
		return nil
	})
	if err != nil {
		return err
	}
	return rq.noContent()
}

// workItemTypeRef shows a work item type a share or subscription names (nil
// when none, or when it is gone).
func workItemTypeRef(ctx context.Context, q *db.Queries, id *int64) (*workItemTypeRefJSON, error) {
	if id == nil {
		return nil, nil
	}
	t, err := q.WorkItemTypeGet(ctx, *id)
	if db.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &workItemTypeRefJSON{ID: db.ID(t.ID), Name: t.Name, Colour: t.Colour, PrefixID: optID(t.PrefixID), Enabled: t.Enabled}, nil
}

// notifyFleetSubscribers tells the fleet's subscribers whose location and
// work item type match a new work item, in its creation's transaction (the
// outbox row commits with it). A member is told only when it may view the
// work item where it sits; a share holder subscribed through its share, which
// is what following a shared fleet is for (docs/assets.md).
func (s *Server) notifyFleetSubscribers(ctx context.Context, q *db.Queries, w db.WorkItem, actorID int64) error {
	if w.FleetID == nil {
		return nil
	}
	rows, err := q.FleetSubscribersToNotify(ctx, db.FleetSubscribersToNotifyParams{OrganisationID: w.OrganisationID, ActorID: actorID,
		FleetID: *w.FleetID, LocationID: w.LocationID, TypeID: &w.TypeID})
	if err != nil {
		return err
	}
	var actor db.User
	var o db.Organisation
	for _, r := range rows {
		if r.IsMember {
			a, err := authorize(ctx, q, r.ID, w.OrganisationID, workItemScopes(w))
			if err != nil {
				return err
			}
			if !a.Can(ViewWorkitems) {
				continue
			}
		}
		if actor.ID == 0 {
			if actor, o, err = mailActorOrg(ctx, q, actorID, w.OrganisationID); err != nil {
				return err
			}
		}
		// In the app as well as by mail (the mail obeys the person's
		// preference like every other notification). A share holder is not
		// a member: its notification needs no membership to be opened.
		var orgID int64
		if r.IsMember {
			orgID = w.OrganisationID
		}
		m := s.mailFleetWorkItem("", actor, o, w)
		err := s.notify(ctx, q, notification{UserID: r.ID, ActorID: actorID, OrgID: orgID, Kind: notifyFleetWorkItem,
			Title: m.Subject, Body: personName(actor) + " created the work item " + w.FormattedNumber + " " + quoted(w.Title) + " on a fleet you follow.",
			Link: "/app/workitems/" + db.ID(w.ID).String(), Mail: &m})
		if err != nil {
			return err
		}
	}
	return nil
}
