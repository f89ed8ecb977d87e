package server

import (
	"context"
	"net/http"
	"time"

	"workspace/db"
)

// Schedules: time slots with invitees, standalone or held by a toolbox or a
// work item (operations-data.md, Schedules). Decisions in docs/toolboxes.md.

const (
	inviteeInvited   = "invited"
	inviteeCheckedIn = "checked_in"
	inviteeAttending = "attending"
	inviteeDeclined  = "declined"
)

type inviteeJSON struct {
	User      *userJSON `json:"user"`
	Status    string    `json:"status"`
	Latitude  *float64  `json:"latitude"`
	Longitude *float64  `json:"longitude"`
	UpdatedAt string    `json:"updated_at"`
}

type scheduleJSON struct {
	ID                db.ID         `json:"id"`
	OrganisationID    db.ID         `json:"organisation_id"`
	WorkItemID        *db.ID        `json:"work_item_id"`
	ToolboxID         *db.ID        `json:"toolbox_id"`
	ScheduledStartAt  string        `json:"scheduled_start_at"`
	ScheduledFinishAt string        `json:"scheduled_finish_at"`
	ActualStartAt     *string       `json:"actual_start_at"`
	ActualFinishAt    *string       `json:"actual_finish_at"`
	Invitees          []inviteeJSON `json:"invitees"`
	CreatedAt         string        `json:"created_at"`
	UpdatedAt         string        `json:"updated_at"`
}

// schedulesJSON renders schedules with their invitees, reading all invitees
// and their user objects in two queries.
func schedulesJSON(ctx context.Context, q *db.Queries, list []db.Schedule) ([]scheduleJSON, error) {
	out := make([]scheduleJSON, 0, len(list))
	if len(list) == 0 {
		return out, nil
	}
	ids := make([]int64, len(list))
	for i, sc := range list {
		ids[i] = sc.ID
	}
	invitees, err := q.ScheduleInviteeListForSchedules(ctx, idsJSON(ids))
	if err != nil {
		return nil, err
	}
	userIDs := make([]*int64, len(invitees))
	for i := range invitees {
		userIDs[i] = &invitees[i].UserID
	}
	users, err := userObjects(ctx, q, userIDs...)
	if err != nil {
		return nil, err
	}
	byID := map[int64][]inviteeJSON{}
	for _, in := range invitees {
		byID[in.ScheduleID] = append(byID[in.ScheduleID], inviteeJSON{User: userRef(users, &in.UserID), Status: in.Status,
			Latitude: in.Latitude, Longitude: in.Longitude, UpdatedAt: in.UpdatedAt})
	}
	for _, sc := range list {
		inv := byID[sc.ID]
		if inv == nil {
			inv = []inviteeJSON{}
		}
		out = append(out, scheduleJSON{ID: db.ID(sc.ID), OrganisationID: db.ID(sc.OrganisationID), WorkItemID: optID(sc.WorkItemID),
			ToolboxID: optID(sc.ToolboxID), ScheduledStartAt: sc.ScheduledStartAt, ScheduledFinishAt: sc.ScheduledFinishAt,
			ActualStartAt: sc.ActualStartAt, ActualFinishAt: sc.ActualFinishAt, Invitees: inv, CreatedAt: sc.CreatedAt, UpdatedAt: sc.UpdatedAt})
	}
	return out, nil
}

func scheduleOne(ctx context.Context, q *db.Queries, sc db.Schedule) (scheduleJSON, error) {
	list, err := schedulesJSON(ctx, q, []db.Schedule{sc})
	if err != nil {
		return scheduleJSON{}, err
	}
	return list[0], nil
}

var scheduleReadOnly = []string{"id", "organisation_id", "work_item_id", "toolbox_id", "invitees", "created_at", "updated_at"}

type scheduleBody struct {
	ScheduledStartAt  *string     `json:"scheduled_start_at"`
	ScheduledFinishAt *string     `json:"scheduled_finish_at"`
	ActualStartAt     Opt[string] `json:"actual_start_at"`
	ActualFinishAt    Opt[string] `json:"actual_finish_at"`
	InviteeIDs        []db.ID     `json:"invitee_ids"`
}

// parseTimestamp reads an RFC 3339 time and returns it in the stored layout.
func parseTimestamp(p problems, field, v string) string {
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		p.add(field, "must be an RFC 3339 date and time")
		return ""
	}
	return db.FormatTime(t)
}

// apply validates the body over sc (defaults or the current row): both
// scheduled times are required on create, and each finish is not before its
// start.
func (b *scheduleBody) apply(sc *db.Schedule, creating bool) error {
	p := problems{}
	if b.ScheduledStartAt != nil {
		sc.ScheduledStartAt = parseTimestamp(p, "scheduled_start_at", *b.ScheduledStartAt)
	} else if creating {
		p.add("scheduled_start_at", "is required")
	}
	if b.ScheduledFinishAt != nil {
		sc.ScheduledFinishAt = parseTimestamp(p, "scheduled_finish_at", *b.ScheduledFinishAt)
	} else if creating {
		p.add("scheduled_finish_at", "is required")
	}
	for _, f := range []struct {
		name string
		o    Opt[string]
		dst  **string
	}{{"actual_start_at", b.ActualStartAt, &sc.ActualStartAt}, {"actual_finish_at", b.ActualFinishAt, &sc.ActualFinishAt}} {
		if !f.o.Set {
			continue
		}
		if f.o.Null {
			*f.dst = nil
			continue
		}
		v := parseTimestamp(p, f.name, f.o.Value)
		*f.dst = &v
	}
	if len(p) == 0 {
		if sc.ScheduledFinishAt < sc.ScheduledStartAt {
			p.add("scheduled_finish_at", "must not be before scheduled_start_at")
		}
		if sc.ActualStartAt != nil && sc.ActualFinishAt != nil && *sc.ActualFinishAt < *sc.ActualStartAt {
			p.add("actual_finish_at", "must not be before actual_start_at")
		}
	}
	if len(b.InviteeIDs) > 500 {
		p.add("invitee_ids", "must list at most 500 users")
	}
	return p.err()
}

// scheduleWriter is the permission a schedule's writes need: a work item's
// schedules belong to those who create work items, the rest to MANAGE_TEAMS.
func scheduleWriter(sc db.Schedule) Permission {
	if sc.WorkItemID != nil {
		return CreateWorkitems
	}
	return ManageTeams
}

// scheduleAccess loads a schedule and the caller's access in its organisation.
func scheduleAccess(ctx context.Context, q *db.Queries, userID, id int64) (db.Schedule, Access, error) {
	sc, err := q.ScheduleGet(ctx, id)
	if db.IsNotFound(err) {
		return sc, Access{}, notFound("The schedule does not exist.")
	}
	if err != nil {
		return sc, Access{}, err
	}
	// A work item's schedule is resolved where the work item is: on its
	// project's layer when it has one.
	scopes := Scopes{}
	if sc.WorkItemID != nil {
		w, err := q.WorkItemGet(ctx, *sc.WorkItemID)
		if err != nil && !db.IsNotFound(err) {
			return sc, Access{}, err
		}
		if err == nil {
			scopes = workItemScopes(w)
		}
	}
	a, err := authorize(ctx, q, userID, sc.OrganisationID, scopes)
	if db.IsNotFound(err) {
		return sc, Access{}, notFound("The schedule does not exist.")
	}
	return sc, a, err
}

// requireMember refuses (400 naming field) a user who is not an approved
// member of the organisation.
func requireMember(ctx context.Context, q *db.Queries, orgID, userID int64, field string) error {
	m, err := q.MemberGet(ctx, db.MemberGetParams{OrganisationID: orgID, UserID: userID})
	if db.IsNotFound(err) || (err == nil && m.Pending) {
		return fieldError(field, "must be a member of the organisation")
	}
	return err
}

// createSchedule inserts a schedule and invites its first invitees, inside
// the caller's transaction; sc carries the organisation and owner ids.
func (s *Server) createSchedule(ctx context.Context, q *db.Queries, sc db.Schedule, inviteeIDs []db.ID, userID int64) (scheduleJSON, error) {
	now := s.nowText()
	created, err := q.ScheduleCreate(ctx, db.ScheduleCreateParams{
		ID: s.store.IDs.Next(), OrganisationID: sc.OrganisationID, WorkItemID: sc.WorkItemID, ToolboxID: sc.ToolboxID,
		ScheduledStartAt: sc.ScheduledStartAt, ScheduledFinishAt: sc.ScheduledFinishAt, ActualStartAt: sc.ActualStartAt,
		ActualFinishAt: sc.ActualFinishAt, CreatedAt: now, CreatedBy: userID,
	})
	if err != nil {
		return scheduleJSON{}, err
	}
	for _, uid := range inviteeIDs {
		if err := requireMember(ctx, q, sc.OrganisationID, int64(uid), "invitee_ids"); err != nil {
			return scheduleJSON{}, err
		}
		if _, err := q.ScheduleInviteePut(ctx, db.ScheduleInviteePutParams{ScheduleID: created.ID, UserID: int64(uid), UpdatedAt: now}); err != nil {
			return scheduleJSON{}, err
		}
		if err := s.notifyToolboxInvite(ctx, q, created, int64(uid), userID); err != nil {
			return scheduleJSON{}, err
		}
	}
	return scheduleOne(ctx, q, created)
}

func (s *Server) scheduleCreate(rq *request) error {
	orgID, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var b scheduleBody
	if err := rq.decodeCreate(&b, scheduleReadOnly...); err != nil {
		return err
	}
	sc := db.Schedule{OrganisationID: orgID}
	if err := b.apply(&sc, true); err != nil {
		return err
	}
	var out scheduleJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		if _, err := orgAccess(rq, q, orgID, http.StatusBadRequest, ManageTeams); err != nil {
			return err
		}
		out, err = s.createSchedule(rq.ctx, q, sc, b.InviteeIDs, rq.user.ID)
		return err
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusCreated, out)
}

func (s *Server) scheduleGet(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var out scheduleJSON
	err = s.store.ReadTx(rq.ctx, func(q *db.Queries) error {
		sc, a, err := scheduleAccess(rq.ctx, q, rq.user.ID, id)
		if err != nil {
			return err
		}
		if err := a.Require(0); err != nil {
			return err
		}
		out, err = scheduleOne(rq.ctx, q, sc)
		return err
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

// scheduleForWrite loads a schedule for a change: the writer permission, and
// a held toolbox that is archived refuses every edit.
func scheduleForWrite(rq *request, q *db.Queries, id int64) (db.Schedule, Access, error) {
	sc, a, err := scheduleAccess(rq.ctx, q, rq.user.ID, id)
	if err != nil {
		return sc, a, err
	}
	if err := a.Require(scheduleWriter(sc)); err != nil {
		return sc, a, err
	}
	return sc, a, refuseArchivedToolbox(rq.ctx, q, sc.ToolboxID)
}

func refuseArchivedToolbox(ctx context.Context, q *db.Queries, toolboxID *int64) error {
	if toolboxID == nil {
		return nil
	}
	t, err := q.ToolboxGet(ctx, *toolboxID)
	if err != nil {
		return err
	}
	if t.ArchivedAt != nil {
		return forbidden("The toolbox is archived.")
	}
	return nil
}

// refuseHeldSchedule: a session of a held talk keeps its times and its
// invitees (refuseHeld); schedules of work items have no such moment.
func refuseHeldSchedule(ctx context.Context, q *db.Queries, sc db.Schedule, what string) error {
	if sc.ToolboxID == nil {
		return nil
	}
	t, err := q.ToolboxGet(ctx, *sc.ToolboxID)
	if err != nil {
		return err
	}
	return refuseHeld(t, what)
}

func (s *Server) schedulePatch(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var b scheduleBody
	ro, err := rq.decodePatch(&b, scheduleReadOnly...)
	if err != nil {
		return err
	}
	if b.InviteeIDs != nil {
		return fieldError("invitee_ids", "is set through PUT and DELETE /schedules/{id}/invitees/{user}")
	}
	var out scheduleJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		sc, _, err := scheduleForWrite(rq, q, id)
		if err != nil {
			return err
		}
		cur, err := scheduleOne(rq.ctx, q, sc)
		if err != nil {
			return err
		}
		if err := ro.check(cur); err != nil {
			return err
		}
		before := sc
		if err := b.apply(&sc, false); err != nil {
			return err
		}
		// The actual times of a held session are what the meeting records.
		if sc.ScheduledStartAt != before.ScheduledStartAt || sc.ScheduledFinishAt != before.ScheduledFinishAt {
			if err := refuseHeldSchedule(rq.ctx, q, sc, "sessions"); err != nil {
				return err
			}
		}
		sc, err = q.ScheduleUpdate(rq.ctx, db.ScheduleUpdateParams{ScheduledStartAt: sc.ScheduledStartAt, ScheduledFinishAt: sc.ScheduledFinishAt,
			ActualStartAt: sc.ActualStartAt, ActualFinishAt: sc.ActualFinishAt, UpdatedAt: s.nowText(), UpdatedBy: rq.user.ID,
			ID: sc.ID, OrganisationID: sc.OrganisationID})
		if err != nil {
			return err
		}
		out, err = scheduleOne(rq.ctx, q, sc)
		return err
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

// scheduleDelete removes a schedule with its invitees. Signatures made
// through it stay, unlinked from it.
func (s *Server) scheduleDelete(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		sc, _, err := scheduleForWrite(rq, q, id)
		if err != nil {
			return err
		}
		if err := refuseHeldSchedule(rq.ctx, q, sc, "sessions"); err != nil {
			return err
		}
		if err := q.ToolboxUserUnlinkSchedule(rq.ctx, &sc.ID); err != nil {
			return err
		}
		return q.ScheduleDelete(rq.ctx, db.ScheduleDeleteParams{ID: sc.ID, OrganisationID: sc.OrganisationID})
	})
	if err != nil {
		return err
	}
	return rq.noContent()
}

func (s *Server) scheduleInviteePut(rq *request) error {
	id, userID, err := rq.pathIDs("id", "user")
	if err != nil {
		return err
	}
	var out scheduleJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		sc, _, err := scheduleForWrite(rq, q, id)
		if err != nil {
			return err
		}
		if err := refuseHeldSchedule(rq.ctx, q, sc, "invitations"); err != nil {
			return err
		}
		if err := requireMember(rq.ctx, q, sc.OrganisationID, userID, "user"); err != nil {
			return err
		}
		_, err = q.ScheduleInviteeGet(rq.ctx, db.ScheduleInviteeGetParams{ScheduleID: sc.ID, UserID: userID})
		invited := err == nil // inviting again notifies no one
		if err != nil && !db.IsNotFound(err) {
			return err
		}
		if _, err := q.ScheduleInviteePut(rq.ctx, db.ScheduleInviteePutParams{ScheduleID: sc.ID, UserID: userID, UpdatedAt: s.nowText()}); err != nil {
			return err
		}
		if !invited {
			if err := s.notifyToolboxInvite(rq.ctx, q, sc, userID, rq.user.ID); err != nil {
				return err
			}
		}
		out, err = scheduleOne(rq.ctx, q, sc)
		return err
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

func (s *Server) scheduleInviteeDelete(rq *request) error {
	id, userID, err := rq.pathIDs("id", "user")
	if err != nil {
		return err
	}
	var out scheduleJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		sc, _, err := scheduleForWrite(rq, q, id)
		if err != nil {
			return err
		}
		if err := refuseHeldSchedule(rq.ctx, q, sc, "invitations"); err != nil {
			return err
		}
		n, err := q.ScheduleInviteeDelete(rq.ctx, db.ScheduleInviteeDeleteParams{ScheduleID: sc.ID, UserID: userID})
		if err != nil {
			return err
		}
		if n == 0 {
			return notFound("The user is not invited to this schedule.")
		}
		out, err = scheduleOne(rq.ctx, q, sc)
		return err
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

type inviteeStatusBody struct {
	UserID    *db.ID       `json:"user_id"`
	Latitude  Opt[float64] `json:"latitude"`
	Longitude Opt[float64] `json:"longitude"`
}

// moveInvitee changes an invitee's status: the invitee themself, or a holder
// of the schedule's writer permission for user_id. Moves allowed:
// invited/declined -> checked_in, invited/checked_in -> declined; an
// attending invitee has signed and stays attending.
func (s *Server) moveInvitee(rq *request, to string) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var b inviteeStatusBody
	if err := rq.decode(&b); err != nil {
		return err
	}
	p := problems{}
	lat, lon := coordinates(p, b.Latitude, b.Longitude, false)
	if to == inviteeDeclined && (lat != nil || lon != nil) {
		p.add("latitude", "is only given when checking in")
	}
	if err := p.err(); err != nil {
		return err
	}
	var out scheduleJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		sc, a, err := scheduleAccess(rq.ctx, q, rq.user.ID, id)
		if err != nil {
			return err
		}
		userID := rq.user.ID
		if b.UserID != nil && int64(*b.UserID) != rq.user.ID {
			userID = int64(*b.UserID)
			err = a.Require(scheduleWriter(sc))
		} else {
			err = a.Require(0)
		}
		if err != nil {
			return err
		}
		if err := refuseArchivedToolbox(rq.ctx, q, sc.ToolboxID); err != nil {
			return err
		}
		in, err := q.ScheduleInviteeGet(rq.ctx, db.ScheduleInviteeGetParams{ScheduleID: sc.ID, UserID: userID})
		if db.IsNotFound(err) {
			return fieldError("user_id", "is not invited to this schedule")
		} else if err != nil {
			return err
		}
		if in.Status == inviteeAttending {
			return badRequest("The invitee has signed and is attending.")
		}
		if _, err := q.ScheduleInviteeSetStatus(rq.ctx, db.ScheduleInviteeSetStatusParams{Status: to, Latitude: lat, Longitude: lon,
			UpdatedAt: s.nowText(), ScheduleID: sc.ID, UserID: userID}); err != nil {
			return err
		}
		out, err = scheduleOne(rq.ctx, q, sc)
		return err
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

func (s *Server) scheduleCheckIn(rq *request) error { return s.moveInvitee(rq, inviteeCheckedIn) }
func (s *Server) scheduleDecline(rq *request) error { return s.moveInvitee(rq, inviteeDeclined) }

// coordinates validates an optional (or, with required, mandatory) pair of
// latitude and longitude given together.
func coordinates(p problems, lat, lon Opt[float64], required bool) (*float64, *float64) {
	has := func(o Opt[float64]) bool { return o.Set && !o.Null }
	if !has(lat) && !has(lon) {
		if required {
			p.add("latitude", "is required")
			p.add("longitude", "is required")
		}
		return nil, nil
	}
	if has(lat) != has(lon) {
		p.add("latitude", "and longitude must be given together")
		return nil, nil
	}
	ok := true
	if lat.Value < -90 || lat.Value > 90 {
		p.add("latitude", "must be from -90 to 90")
		ok = false
	}
	if lon.Value < -180 || lon.Value > 180 {
		p.add("longitude", "must be from -180 to 180")
		ok = false
	}
	if !ok {
		return nil, nil
	}
	a, o := lat.Value, lon.Value
	return &a, &o
}
