package server

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"workspace/db"
)

// Fleets (operations-data.md "Fleets and fleet shares"; decisions in
// docs/assets.md). A fleet is a grant layer: MANAGE_FLEETS may be granted
// on one fleet (Scopes.Fleet), and asset writes are checked in the fleet
// of the asset.

const (
	minAssetName = 2
	maxAssetName = 20 // spec Limits: asset, group, type, status, zone, field names
)

// FleetPermissions are the keys a fleet's permissions object carries.
const FleetPermissions = ManageFleets

// refID is a reference in a body: a snowflake, or null, 0 or "0" for none
// (the spec's "fleet_id? (default 0)"). Set says the key was present.
type refID struct {
	Set bool
	ID  int64
}

func (r *refID) UnmarshalJSON(b []byte) error {
	r.Set = true
	s := strings.Trim(string(b), `"`)
	if s == "null" || s == "0" || s == "" {
		r.ID = 0
		return nil
	}
	var id db.ID
	if err := json.Unmarshal(b, &id); err != nil {
		return err
	}
	r.ID = int64(id)
	return nil
}

// ptrOrNil is the stored form of a reference: nil for none.
func (r refID) ptr() *int64 {
	if r.ID == 0 {
		return nil
	}
	id := r.ID
	return &id
}

// checkAssetName validates an optional catalogue name: 2-20 characters
// after trimming.
func checkAssetName(p problems, field string, s *string) {
	if s == nil {
		return
	}
	*s = strings.TrimSpace(*s)
	p.length(field, *s, minAssetName, maxAssetName)
}

type fleetJSON struct {
	ID             db.ID  `json:"id"`
	OrganisationID db.ID  `json:"organisation_id"`
	Name           string `json:"name"`
	Description    string `json:"description"`
	PrefixID       *db.ID `json:"prefix_id"`
}

func toFleet(f db.Fleet) fleetJSON {
	return fleetJSON{ID: db.ID(f.ID), OrganisationID: db.ID(f.OrganisationID), Name: f.Name, Description: f.Description, PrefixID: optID(f.PrefixID)}
}

// fleetPartialJSON is the fleet inside a share.
type fleetPartialJSON struct {
	ID             db.ID  `json:"id"`
	OrganisationID db.ID  `json:"organisation_id"`
	Name           string `json:"name"`
}

var fleetReadOnly = []string{"id", "organisation_id"}

type fleetBody struct {
	Name        *string `json:"name"`
	Description *string `json:"description"`
	PrefixID    refID   `json:"prefix_id"`
}

func (b *fleetBody) validate(create bool) error {
	p := problems{}
	if create && b.Name == nil {
		p.add("name", "is required")
	}
	checkAssetName(p, "name", b.Name)
	optText(p, "description", b.Description, maxDescriptionLen)
	return p.err()
}

// fleetAccess loads a fleet and the caller's access in it.
func fleetAccess(ctx context.Context, q *db.Queries, userID, id int64, absent int) (db.Fleet, Access, error) {
	f, err := q.FleetGet(ctx, id)
	if db.IsNotFound(err) {
		return f, Access{}, errorf(absent, "The fleet does not exist.")
	}
	if err != nil {
		return f, Access{}, err
	}
	a, err := authorize(ctx, q, userID, f.OrganisationID, Scopes{Fleet: f.ID})
	if db.IsNotFound(err) {
		return f, Access{}, errorf(absent, "The fleet does not exist.")
	}
	return f, a, err
}

// fleetInOrg checks a fleet reference of a body: it must be a fleet of the
// organisation (400 naming field otherwise).
func fleetInOrg(ctx context.Context, q *db.Queries, orgID int64, field string, r refID) error {
	if r.ID == 0 {
		return nil
	}
	f, err := q.FleetGet(ctx, r.ID)
	if db.IsNotFound(err) || (err == nil && f.OrganisationID != orgID) {
		return fieldError(field, "names no fleet of this organisation")
	}
	return err
}

func (s *Server) fleetCreate(rq *request) error {
	orgID, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var b fleetBody
	if err := rq.decodeCreate(&b, fleetReadOnly...); err != nil {
		return err
	}
	if err := b.validate(true); err != nil {
		return err
	}
	var out fleetJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		if _, err := orgAccess(rq, q, orgID, http.StatusBadRequest, ManageFleets); err != nil {
			return err
		}
		if err := checkPrefix(rq.ctx, q, orgID, b.PrefixID.ptr()); err != nil {
			return err
		}
		f, err := q.FleetCreate(rq.ctx, db.FleetCreateParams{
			ID: s.store.IDs.Next(), OrganisationID: orgID, Name: *b.Name, Description: orDefault(b.Description, ""),
			PrefixID: b.PrefixID.ptr(), CreatedAt: s.nowText(), CreatedBy: rq.user.ID,
		})
		if err != nil {
			return err
		}
		out = toFleet(f)
		return nil
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusCreated, out)
}

func (s *Server) fleetList(rq *request) error {
	return listPage(s, rq, listSpec[fleetJSON]{Path: "id",
		Fields: db.FilterFields{"name": {Column: "name", Kind: db.FieldString, CaseInsensitive: true}},
		Scope:  orgScope(rq, 0, "fleets", ""),
		Rows:   byIDs((*db.Queries).FleetListByIDs, each(toFleet))})
}

func (s *Server) fleetGet(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	f, a, err := fleetAccess(rq.ctx, s.store.R, rq.user.ID, id, http.StatusNotFound)
	if err != nil {
		return err
	}
	if err := a.Require(0); err != nil {
		return err
	}
	return rq.json(http.StatusOK, fleetFullJSON{toFleet(f), a.Permissions().Bools(ManageFleets)})
}

// fleetFullJSON is one fleet as GET /fleets/{id} answers it: with what the
// caller may do on it, MANAGE_FLEETS being grantable on the fleet itself
// (a member may manage one fleet without managing every fleet).
type fleetFullJSON struct {
	fleetJSON
	Permissions PermBools `json:"permissions"`
}

func (s *Server) fleetPatch(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var b fleetBody
	ro, err := rq.decodePatch(&b, fleetReadOnly...)
	if err != nil {
		return err
	}
	if err := b.validate(false); err != nil {
		return err
	}
	var out fleetJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		f, a, err := fleetAccess(rq.ctx, q, rq.user.ID, id, http.StatusNotFound)
		if err != nil {
			return err
		}
		if err := a.Require(ManageFleets); err != nil {
			return err
		}
		if err := ro.check(toFleet(f)); err != nil {
			return err
		}
		prefix := f.PrefixID
		if b.PrefixID.Set {
			if err := checkPrefix(rq.ctx, q, f.OrganisationID, b.PrefixID.ptr()); err != nil {
				return err
			}
			prefix = b.PrefixID.ptr()
		}
		f, err = q.FleetUpdate(rq.ctx, db.FleetUpdateParams{ID: f.ID, OrganisationID: f.OrganisationID,
			Name: orDefault(b.Name, f.Name), Description: orDefault(b.Description, f.Description), PrefixID: prefix})
		if err != nil {
			return err
		}
		out = toFleet(f)
		return nil
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

// fleetDelete: only an empty fleet (no asset type, asset or group refers to
// it); its grants and shares go with it.
func (s *Server) fleetDelete(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		f, a, err := fleetAccess(rq.ctx, q, rq.user.ID, id, http.StatusNotFound)
		if err != nil {
			return err
		}
		if err := a.Require(ManageFleets); err != nil {
			return err
		}
		inUse, err := q.FleetInUse(rq.ctx, &f.ID)
		if err != nil {
			return err
		}
		if inUse {
			return badRequest("The fleet still has asset types, assets or asset groups and cannot be deleted.")
		}
		if err := q.FleetSharesDelete(rq.ctx, f.ID); err != nil {
			return err
		}
		if err := q.FleetSubscriptionsDelete(rq.ctx, f.ID); err != nil {
			return err
		}
		if err := q.FleetGrantsDelete(rq.ctx, db.FleetGrantsDeleteParams{ScopeID: f.ID, OrganisationID: f.OrganisationID}); err != nil {
			return err
		}
		return q.FleetDelete(rq.ctx, db.FleetDeleteParams{ID: f.ID, OrganisationID: f.OrganisationID})
	})
	if err != nil {
		return err
	}
	return rq.noContent()
}

// fleetGrantPatch sets a role's, member's or @everyone's explicit grant on
// a fleet: MANAGE_FLEETS on the fleet, outranking a role target, holding
// what is changed (changeGrant's rules).
func (s *Server) fleetGrantPatch(rq *request) error {
	fleetID, err := rq.pathID("id")
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
	change, err := parseGrantChange("permissions", b.Permissions, FleetPermissions)
	if err != nil {
		return err
	}
	var out grantJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		_, a, err := fleetAccess(rq.ctx, q, rq.user.ID, fleetID, http.StatusNotFound)
		if err != nil {
			return err
		}
		if err := a.Require(ManageFleets); err != nil {
			return err
		}
		out, err = changeGrant(rq.ctx, q, a, "fleet", fleetID, targetID, change, rankRolesOnly)
		return err
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

func (s *Server) fleetGrantList(rq *request) error {
	fleetID, err := rq.pathID("id")
	if err != nil {
		return err
	}
	out := []grantJSON{}
	err = s.store.ReadTx(rq.ctx, func(q *db.Queries) error {
		_, a, err := fleetAccess(rq.ctx, q, rq.user.ID, fleetID, http.StatusNotFound)
		if err != nil {
			return err
		}
		if err := a.Require(ManageFleets); err != nil {
			return err
		}
		gs, err := q.GrantListForScope(rq.ctx, fleetID)
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
