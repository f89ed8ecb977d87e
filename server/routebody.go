package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"workspace/db"
)

// Routes whose scope or alternative the body names (issue 34): the route's
// check reads the fields it needs before the handler validates anything,
// so a caller without access is refused whatever else the body holds.
// The body is read under the limit ServeHTTP set (its MaxBytesReader) and
// before the check's transaction, so a slow sender holds no read
// transaction open; the handler decodes the same bytes.

// peekBody reads the whole body once and puts it back for the handler. A
// body that cannot be read is left as the error it gives, for the handler
// to answer (413, 408 or 400) as it always has.
func (rq *request) peekBody() {
	if rq.r.Body == nil || rq.peeked != nil {
		return
	}
	body, err := io.ReadAll(rq.r.Body)
	if err != nil {
		rq.r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), bodyReadErr{err}))
		return
	}
	rq.r.Body = io.NopCloser(bytes.NewReader(body))
	rq.peeked = body
}

type bodyReadErr struct{ err error }

func (e bodyReadErr) Read([]byte) (int, error) { return 0, e.err }

// bodyFields decodes the peeked body into dst, a struct of the fields the
// check needs (the others are ignored). false: no body, or one that is not
// a JSON object of the right types there, which names no scope: the check
// then asks what the route asks of a body that names none, and the
// handler answers the body.
func (rq *request) bodyFields(dst any) bool {
	body := bytes.TrimSpace(rq.peeked)
	if len(body) == 0 || body[0] != '{' {
		return false
	}
	return json.Unmarshal(body, dst) == nil
}

// inOrg reports whether the row get loads (by id) lives in organisation
// orgID: a body's reference to another organisation's row names no scope
// here (the handler refuses the reference).
func inOrg[T any](ctx context.Context, id, orgID int64, get func(context.Context, int64) (T, error), orgOf func(T) int64) (bool, error) {
	if id == 0 {
		return false, nil
	}
	row, err := get(ctx, id)
	if db.IsNotFound(err) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	return orgOf(row) == orgID, nil
}

// fromBody marks a route whose check reads the body (bodyFields).
func (a access) fromBody() access { a.body = true; return a }

// idIn is the id an optional reference names, 0 for none.
func idIn(o Opt[db.ID]) int64 {
	if !o.Set || o.Null {
		return 0
	}
	return int64(o.Value)
}

// requireIn: perm on the organisation's layer, or on the finer scope sc
// (a project, a fleet) the body names; a holder at the organisation needs
// nothing finer.
func requireIn(rq *request, q *db.Queries, a Access, sc Scopes, perm Permission) error {
	if err := a.Require(0); err != nil || a.Can(perm) || sc == (Scopes{}) {
		if err != nil {
			return err
		}
		return a.Require(perm)
	}
	f, err := authorize(rq.ctx, q, rq.user.ID, a.OrganisationID, sc)
	if err != nil {
		return err
	}
	return f.Require(perm)
}

func projectOrg(p db.Project) int64        { return p.OrganisationID }
func fleetOrg(f db.Fleet) int64            { return f.OrganisationID }
func packageOrg(p db.ProjectPackage) int64 { return p.OrganisationID }

var (
	// workItemCreating: CREATE_WORKITEMS on the project the body names
	// (workItemScopes), or on the organisation.
	workItemCreating = org(0).whole("CREATE_WORKITEMS on the organisation, or on the project the body names", func(rq *request, q *db.Queries, a Access) error {
		var b struct {
			ProjectID Opt[db.ID] `json:"project_id"`
		}
		sc := Scopes{}
		if rq.bodyFields(&b) {
			ok, err := inOrg(rq.ctx, idIn(b.ProjectID), a.OrganisationID, q.ProjectGet, projectOrg)
			if err != nil {
				return err
			}
			if ok {
				sc.Project = idIn(b.ProjectID)
			}
		}
		return requireIn(rq, q, a, sc, CreateWorkitems)
	}).fromBody()

	// assetCreating: MANAGE_FLEETS on the organisation, or on the fleet
	// the body names (fleet_id, else its type's fleet): requireOrgOrFleet.
	assetCreating = org(0).whole("MANAGE_FLEETS on the organisation, or on the fleet the body names (fleet_id, else the type's fleet)", func(rq *request, q *db.Queries, a Access) error {
		return requireBodyFleet(rq, q, a, true)
	}).fromBody()
	// groupCreating: MANAGE_FLEETS on the organisation, or on the body's
	// fleet_id.
	groupCreating = org(0).whole("MANAGE_FLEETS on the organisation, or on the fleet the body names (fleet_id)", func(rq *request, q *db.Queries, a Access) error {
		return requireBodyFleet(rq, q, a, false)
	}).fromBody()

	// inviteeMoving: checking in or declining oneself needs membership;
	// for another (the body's user_id), the schedule's writer
	// (scheduleWriter), as moveInvitee asks.
	inviteeMoving = schedule(0).whole("member, for oneself; for another invitee (the body's user_id), MANAGE_TEAMS (CREATE_WORKITEMS for a work item's schedule)", func(rq *request, q *db.Queries, a Access) error {
		if err := a.Require(0); err != nil {
			return err
		}
		var b struct {
			UserID *db.ID `json:"user_id"`
		}
		if !rq.bodyFields(&b) || b.UserID == nil || int64(*b.UserID) == rq.user.ID {
			return nil
		}
		return loadOrNil(rq, "id", q.ScheduleGet, func(sc db.Schedule) error {
			return a.Require(scheduleWriter(sc))
		})
	}).fromBody()

	// documentCreating: EDIT_DOCUMENTS in the organisation the body names,
	// on the layer of the project (and package) it names, as
	// documentCreate asks. A body that names no organisation is the
	// handler's to answer (organisation_id is required).
	documentCreating = access{auth: true, scope: "organisation (the body's organisation_id)", perm: EditDocuments,
		rule: "on the project (and package) the body names", body: true, scopeInBody: true,
		load: func(rq *request, q *db.Queries) (Access, error) {
			var b struct {
				OrganisationID *db.ID     `json:"organisation_id"`
				ProjectID      Opt[db.ID] `json:"project_id"`
				PackageID      Opt[db.ID] `json:"package_id"`
			}
			if !rq.bodyFields(&b) || b.OrganisationID == nil {
				return Access{}, absentHere
			}
			orgID := int64(*b.OrganisationID)
			sc := Scopes{}
			if ok, err := inOrg(rq.ctx, idIn(b.ProjectID), orgID, q.ProjectGet, projectOrg); err != nil {
				return Access{}, err
			} else if ok {
				sc.Project = idIn(b.ProjectID)
			}
			if sc.Project != 0 && idIn(b.PackageID) != 0 {
				pk, err := q.PackageGet(rq.ctx, idIn(b.PackageID))
				if err != nil && !db.IsNotFound(err) {
					return Access{}, err
				}
				if err == nil && pk.OrganisationID == orgID && pk.ProjectID == sc.Project {
					sc.Package = pk.ID
				}
			}
			return authorize(rq.ctx, q, rq.user.ID, orgID, sc)
		}}
)

// requireBodyFleet: MANAGE_FLEETS on the organisation, or on the fleet
// the body names (with byType, the type's fleet when fleet_id is absent).
func requireBodyFleet(rq *request, q *db.Queries, a Access, byType bool) error {
	var b struct {
		TypeID  refID `json:"type_id"`
		FleetID refID `json:"fleet_id"`
	}
	sc := Scopes{}
	if rq.bodyFields(&b) {
		fleet := b.FleetID.ID
		if byType && !b.FleetID.Set && b.TypeID.ID != 0 {
			t, err := q.AssetTypeGet(rq.ctx, b.TypeID.ID)
			if err != nil && !db.IsNotFound(err) {
				return err
			}
			if err == nil && t.OrganisationID == a.OrganisationID && t.FleetID != nil {
				fleet = *t.FleetID
			}
		}
		ok, err := inOrg(rq.ctx, fleet, a.OrganisationID, q.FleetGet, fleetOrg)
		if err != nil {
			return err
		}
		if ok {
			sc.Fleet = fleet
		}
	}
	return requireIn(rq, q, a, sc, ManageFleets)
}

// workItemViewing: VIEW_WORKITEMS, or an assignee or invitee of the :id
// work item (workItemForViewer), decided before anything else.
var workItemViewing = workItem(0).whole("VIEW_WORKITEMS, or an assignee or invitee", func(rq *request, q *db.Queries, _ Access) error {
	id, err := rq.pathID("id")
	if err != nil {
		return nil
	}
	_, _, err = workItemForViewer(rq.ctx, q, rq.user.ID, id)
	var e *Error
	if errors.As(err, &e) && e.Status == http.StatusNotFound {
		return nil // the handler answers an absent work item
	}
	return err
})

// toolboxOpening: GET /users/@me/toolboxes/:id opens a toolbox for
// signing to an invitee of one of its schedules, or to anyone giving a
// code (?token=): the toolbox's current code (scanned in the room, so a
// stranger may sign) or the caller's own. The handler checks and spends
// the code under its guess limit; the route refuses a caller who is
// neither invited nor gives one, as the handler always has (400).
var toolboxOpening = access{auth: true, scope: "toolbox", wholeRule: true,
	rule: "an invitee of one of the toolbox's schedules, or anyone giving a code (?token=): the toolbox's current code or the caller's own, checked and spent by the handler",
	load: func(*request, *db.Queries) (Access, error) { return Access{}, nil },
	check: func(rq *request, q *db.Queries, _ Access) error {
		if strings.TrimSpace(rq.r.URL.Query().Get("token")) != "" {
			return nil
		}
		return loadOrNil(rq, "id", q.ToolboxGet, func(t db.Toolbox) error {
			invited, err := q.ScheduleInvitedToToolbox(rq.ctx, db.ScheduleInvitedToToolboxParams{ToolboxID: &t.ID, UserID: rq.user.ID})
			if err != nil || invited {
				return err
			}
			return badRequest("You are not invited to this toolbox: scan its QR code or give your TOTP code as token.")
		})
	}}

// toolboxSigning: the proof is in the body: the signing token
// userToolboxGet gave the caller for this toolbox (jwt), or a schedule of
// this toolbox (schedule_id) whose invitee the caller is, checked in (the
// handler weighs the invitee's state and answers in the signing answer's
// shape). A body with neither is the handler's (jwt is required).
func (s *Server) toolboxSigning() access {
	return access{auth: true, scope: "toolbox", wholeRule: true, body: true, scopeInBody: true,
		rule: "the signing token GET /users/@me/toolboxes/{id} gave the caller (jwt), or a schedule of the toolbox the caller is checked in to (schedule_id)",
		load: func(*request, *db.Queries) (Access, error) { return Access{}, nil },
		check: func(rq *request, q *db.Queries, _ Access) error {
			var b struct {
				JWT        *string `json:"jwt"`
				ScheduleID *db.ID  `json:"schedule_id"`
			}
			if !rq.bodyFields(&b) {
				return nil
			}
			return loadOrNil(rq, "id", q.ToolboxGet, func(t db.Toolbox) error {
				if b.JWT != nil && strings.TrimSpace(*b.JWT) != "" {
					_, err := s.checkSignToken(strings.TrimSpace(*b.JWT), rq.user.ID, signObject("toolbox", t.ID))
					return err
				}
				if b.ScheduleID != nil {
					sc, err := q.ScheduleGet(rq.ctx, int64(*b.ScheduleID))
					if db.IsNotFound(err) || (err == nil && (sc.ToolboxID == nil || *sc.ToolboxID != t.ID)) {
						return notFound("The schedule does not exist for this toolbox.")
					}
					return err
				}
				return nil
			})
		}}
}
