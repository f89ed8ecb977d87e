package server

import (
	"context"
	"net/http"
	"regexp"
	"strings"

	"workspace/db"
)

// Workgroups and their teams (spec: Workgroups and teams; decisions.md for
// the workgroup creation and list rows). Decisions: docs/structure.md.

const (
	maxWorkgroupName = 50
	minTeamName      = 2
	maxTeamName      = 20
	defaultTeamName  = "new team"
)

var colourRE = regexp.MustCompile(`^#[0-9A-Fa-f]{6}$`)

type workgroupJSON struct {
	ID             db.ID  `json:"id"`
	OrganisationID db.ID  `json:"organisation_id"`
	Name           string `json:"name"`
	Description    string `json:"description"`
}

func toWorkgroup(w db.Workgroup) workgroupJSON {
	return workgroupJSON{ID: db.ID(w.ID), OrganisationID: db.ID(w.OrganisationID), Name: w.Name, Description: w.Description}
}

// teamJSON carries the colour under both spellings, as locations do: the
// spec's object says color, its requests colour.
type teamJSON struct {
	ID             db.ID  `json:"id"`
	OrganisationID db.ID  `json:"organisation_id"`
	WorkgroupID    db.ID  `json:"workgroup_id"`
	Name           string `json:"name"`
	Description    string `json:"description"`
	Color          string `json:"color"`
	Colour         string `json:"colour"`
}

func toTeam(t db.Team) teamJSON {
	return teamJSON{ID: db.ID(t.ID), OrganisationID: db.ID(t.OrganisationID), WorkgroupID: db.ID(t.WorkgroupID),
		Name: t.Name, Description: t.Description, Color: t.Color, Colour: t.Color}
}

type teamMemberJSON struct {
	User     any    `json:"user"`
	IsLeader bool   `json:"is_leader"`
	JoinedAt string `json:"joined_at"`
}

var workgroupReadOnly = []string{"id", "organisation_id"}
var teamReadOnly = []string{"id", "organisation_id", "workgroup_id", "description"}

var workgroupFilter = db.FilterFields{
	"name": {Column: "name", Kind: db.FieldString, CaseInsensitive: true},
}

type workgroupBody struct {
	Name        *string `json:"name"`
	Description *string `json:"description"`
}

func (b *workgroupBody) validate(creating bool) error {
	p := problems{}
	if creating && b.Name == nil {
		p.add("name", "is required")
	}
	checkName(p, "name", b.Name, maxWorkgroupName)
	optText(p, "description", b.Description, maxDescriptionLen)
	return p.err()
}

// workgroupAccess loads a workgroup and the caller's access in its
// organisation. absent is the row's answer for a missing workgroup.
func workgroupAccess(ctx context.Context, q *db.Queries, userID, id int64, absent int) (db.Workgroup, Access, error) {
	w, err := q.WorkgroupGet(ctx, id)
	if db.IsNotFound(err) {
		return w, Access{}, errorf(absent, "The workgroup does not exist.")
	}
	if err != nil {
		return w, Access{}, err
	}
	a, err := authorize(ctx, q, userID, w.OrganisationID, Scopes{})
	if db.IsNotFound(err) {
		return w, Access{}, errorf(absent, "The workgroup does not exist.")
	}
	return w, a, err
}

// teamAccess loads a team and the caller's access; with wantWorkgroup
// non-zero the team must belong to that workgroup.
func teamAccess(ctx context.Context, q *db.Queries, userID, id, wantWorkgroup int64, absent int) (db.Team, Access, error) {
	t, err := q.TeamGet(ctx, id)
	if db.IsNotFound(err) || (err == nil && wantWorkgroup != 0 && t.WorkgroupID != wantWorkgroup) {
		return db.Team{}, Access{}, errorf(absent, "The team does not exist.")
	}
	if err != nil {
		return t, Access{}, err
	}
	a, err := authorize(ctx, q, userID, t.OrganisationID, Scopes{})
	if db.IsNotFound(err) {
		return t, Access{}, errorf(absent, "The team does not exist.")
	}
	return t, a, err
}

func (s *Server) workgroupCreate(rq *request) error {
	orgID, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var b workgroupBody
	if err := rq.decodeCreate(&b, workgroupReadOnly...); err != nil {
		return err
	}
	if err := b.validate(true); err != nil {
		return err
	}
	var out workgroupJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		if _, err := orgAccess(rq, q, orgID, http.StatusBadRequest, ManageWorkgroups); err != nil {
			return err
		}
		w, err := q.WorkgroupCreate(rq.ctx, db.WorkgroupCreateParams{
			ID: s.store.IDs.Next(), OrganisationID: orgID, Name: *b.Name, Description: orDefault(b.Description, ""),
			CreatedAt: s.nowText(), CreatedBy: rq.user.ID,
		})
		if err != nil {
			return err
		}
		out = toWorkgroup(w)
		return nil
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusCreated, out)
}

func (s *Server) workgroupList(rq *request) error {
	return listPage(s, rq, listSpec[workgroupJSON]{Path: "id", Fields: workgroupFilter,
		Scope: orgScope(rq, 0, "workgroups", ""),
		Rows:  byIDs((*db.Queries).WorkgroupListByIDs, each(toWorkgroup))})
}

func (s *Server) workgroupGet(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	w, a, err := workgroupAccess(rq.ctx, s.store.R, rq.user.ID, id, http.StatusNotFound)
	if err != nil {
		return err
	}
	if err := a.Require(0); err != nil {
		return err
	}
	return rq.json(http.StatusOK, toWorkgroup(w))
}

// workgroupPatch changes name and description only.
func (s *Server) workgroupPatch(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var b workgroupBody
	ro, err := rq.decodePatch(&b, workgroupReadOnly...)
	if err != nil {
		return err
	}
	if err := b.validate(false); err != nil {
		return err
	}
	var out workgroupJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		w, a, err := workgroupAccess(rq.ctx, q, rq.user.ID, id, http.StatusBadRequest)
		if err != nil {
			return err
		}
		if err := a.Require(ManageWorkgroups); err != nil {
			return err
		}
		if err := ro.check(toWorkgroup(w)); err != nil {
			return err
		}
		w, err = q.WorkgroupUpdate(rq.ctx, db.WorkgroupUpdateParams{
			ID: w.ID, OrganisationID: w.OrganisationID, Name: orDefault(b.Name, w.Name), Description: orDefault(b.Description, w.Description),
		})
		if err != nil {
			return err
		}
		out = toWorkgroup(w)
		return nil
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

// workgroupDelete removes the workgroup with its teams, their members and
// every grant on or for them.
func (s *Server) workgroupDelete(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		w, a, err := workgroupAccess(rq.ctx, q, rq.user.ID, id, http.StatusBadRequest)
		if err != nil {
			return err
		}
		if err := a.Require(ManageWorkgroups); err != nil {
			return err
		}
		if err := q.WorkgroupTeamMembersDelete(rq.ctx, w.ID); err != nil {
			return err
		}
		if err := q.WorkgroupGrantsDelete(rq.ctx, db.WorkgroupGrantsDeleteParams{OrganisationID: w.OrganisationID, WorkgroupID: w.ID}); err != nil {
			return err
		}
		if err := q.WorkgroupTeamsDelete(rq.ctx, w.ID); err != nil {
			return err
		}
		// Toolboxes outlive their workgroup: they stay in the organisation.
		if err := q.ToolboxesClearWorkgroup(rq.ctx, &w.ID); err != nil {
			return err
		}
		return q.WorkgroupDelete(rq.ctx, db.WorkgroupDeleteParams{ID: w.ID, OrganisationID: w.OrganisationID})
	})
	if err != nil {
		return err
	}
	return rq.noContent()
}

// teamBody accepts the colour under both spellings.
type teamBody struct {
	Name   *string `json:"name"`
	Colour *string `json:"colour"`
	Color  *string `json:"color"`
}

func (b *teamBody) validate(creating bool) (colour *string, err error) {
	p := problems{}
	if b.Name != nil {
		*b.Name = strings.TrimSpace(*b.Name)
		p.length("name", *b.Name, minTeamName, maxTeamName)
	}
	colour, field := b.Colour, "colour"
	if colour == nil {
		colour, field = b.Color, "color"
	}
	switch {
	case colour == nil && creating:
		p.add("colour", "is required (#RRGGBB)")
	case colour != nil && !colourRE.MatchString(*colour):
		p.add(field, "must be a colour as #RRGGBB")
	case b.Colour != nil && b.Color != nil && !strings.EqualFold(*b.Colour, *b.Color):
		p.add("color", "must equal colour when both are given")
	}
	return colour, p.err()
}

func (s *Server) teamCreate(rq *request) error {
	wgID, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var b teamBody
	if err := rq.decodeCreate(&b, teamReadOnly...); err != nil {
		return err
	}
	colour, err := b.validate(true)
	if err != nil {
		return err
	}
	var out teamJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		w, a, err := workgroupAccess(rq.ctx, q, rq.user.ID, wgID, http.StatusBadRequest)
		if err != nil {
			return err
		}
		if err := a.Require(ManageTeams); err != nil {
			return err
		}
		t, err := q.TeamCreate(rq.ctx, db.TeamCreateParams{
			ID: s.store.IDs.Next(), OrganisationID: w.OrganisationID, WorkgroupID: w.ID,
			Name: orDefault(b.Name, defaultTeamName), Color: strings.ToUpper(*colour), CreatedAt: s.nowText(),
		})
		if err != nil {
			return err
		}
		out = toTeam(t)
		return nil
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusCreated, out)
}

func (s *Server) teamList(rq *request) error {
	wgID, err := rq.pathID("id")
	if err != nil {
		return err
	}
	out := []teamJSON{}
	err = s.store.ReadTx(rq.ctx, func(q *db.Queries) error {
		w, a, err := workgroupAccess(rq.ctx, q, rq.user.ID, wgID, http.StatusNotFound)
		if err != nil {
			return err
		}
		if err := a.Require(0); err != nil {
			return err
		}
		rows, err := q.TeamList(rq.ctx, w.ID)
		if err != nil {
			return err
		}
		for _, t := range rows {
			out = append(out, toTeam(t))
		}
		return nil
	})
	if err != nil {
		return err
	}
	setTotalCount(rq.w, int64(len(out)))
	return rq.json(http.StatusOK, out)
}

func (s *Server) teamGet(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	t, a, err := teamAccess(rq.ctx, s.store.R, rq.user.ID, id, 0, http.StatusNotFound)
	if err != nil {
		return err
	}
	if err := a.Require(0); err != nil {
		return err
	}
	return rq.json(http.StatusOK, toTeam(t))
}

// teamPatch changes name and colour only.
func (s *Server) teamPatch(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var b teamBody
	ro, err := rq.decodePatch(&b, teamReadOnly...)
	if err != nil {
		return err
	}
	colour, err := b.validate(false)
	if err != nil {
		return err
	}
	var out teamJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		t, a, err := teamAccess(rq.ctx, q, rq.user.ID, id, 0, http.StatusBadRequest)
		if err != nil {
			return err
		}
		if err := a.Require(ManageTeams); err != nil {
			return err
		}
		if err := ro.check(toTeam(t)); err != nil {
			return err
		}
		c := t.Color
		if colour != nil {
			c = strings.ToUpper(*colour)
		}
		t, err = q.TeamUpdate(rq.ctx, db.TeamUpdateParams{ID: t.ID, OrganisationID: t.OrganisationID, Name: orDefault(b.Name, t.Name), Color: c})
		if err != nil {
			return err
		}
		out = toTeam(t)
		return nil
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

// teamDelete removes the team, its members and every grant on or for it.
func (s *Server) teamDelete(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		t, a, err := teamAccess(rq.ctx, q, rq.user.ID, id, 0, http.StatusBadRequest)
		if err != nil {
			return err
		}
		if err := a.Require(ManageTeams); err != nil {
			return err
		}
		if err := q.TeamMembersDelete(rq.ctx, t.ID); err != nil {
			return err
		}
		if err := q.TeamGrantsDelete(rq.ctx, db.TeamGrantsDeleteParams{OrganisationID: t.OrganisationID, TeamID: t.ID}); err != nil {
			return err
		}
		return q.TeamDelete(rq.ctx, db.TeamDeleteParams{ID: t.ID, OrganisationID: t.OrganisationID})
	})
	if err != nil {
		return err
	}
	return rq.noContent()
}

func (s *Server) teamMembers(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var out []teamMemberJSON
	err = s.store.ReadTx(rq.ctx, func(q *db.Queries) error {
		t, a, err := teamAccess(rq.ctx, q, rq.user.ID, id, 0, http.StatusNotFound)
		if err != nil {
			return err
		}
		if err := a.Require(0); err != nil {
			return err
		}
		out, err = s.teamMemberList(rq.ctx, q, t.ID, rq.user.ID)
		return err
	})
	if err != nil {
		return err
	}
	setTotalCount(rq.w, int64(len(out)))
	return rq.json(http.StatusOK, out)
}

func (s *Server) teamMemberList(ctx context.Context, q *db.Queries, teamID, viewerID int64) ([]teamMemberJSON, error) {
	rows, err := q.TeamMemberList(ctx, teamID)
	if err != nil {
		return nil, err
	}
	out := make([]teamMemberJSON, len(rows))
	for i, r := range rows {
		u, err := s.userView(ctx, q, r.User, viewerID)
		if err != nil {
			return nil, err
		}
		out[i] = teamMemberJSON{User: u, IsLeader: r.IsLeader, JoinedAt: r.JoinedAt}
	}
	return out, nil
}

// teamPlace is a team member route's path, team and the caller's standing:
// its access and whether it leads the team.
type teamPlace struct {
	team     db.Team
	access   Access
	userID   int64
	isLeader bool // the caller leads this team
}

func (s *Server) loadTeamPlace(rq *request, q *db.Queries) (teamPlace, error) {
	wgID, err := rq.pathID("id")
	if err != nil {
		return teamPlace{}, err
	}
	teamID, err := rq.pathID("team")
	if err != nil {
		return teamPlace{}, err
	}
	userID, err := rq.pathID("user")
	if err != nil {
		return teamPlace{}, err
	}
	if _, err := q.WorkgroupGet(rq.ctx, wgID); db.IsNotFound(err) {
		return teamPlace{}, badRequest("The workgroup does not exist.")
	} else if err != nil {
		return teamPlace{}, err
	}
	t, a, err := teamAccess(rq.ctx, q, rq.user.ID, teamID, wgID, http.StatusBadRequest)
	if err != nil {
		return teamPlace{}, err
	}
	if err := a.Require(0); err != nil {
		return teamPlace{}, err
	}
	tp := teamPlace{team: t, access: a, userID: userID}
	if m, err := q.TeamMemberGet(rq.ctx, db.TeamMemberGetParams{TeamID: t.ID, UserID: rq.user.ID}); err == nil {
		tp.isLeader = m.IsLeader
	} else if !db.IsNotFound(err) {
		return teamPlace{}, err
	}
	return tp, nil
}

// teamMemberAdd: MANAGE_TEAMS or a leader of the team; the user must be a
// (non-pending) member of the organisation. A stranger's id and an id no
// account holds are refused alike (revealUser's rule).
func (s *Server) teamMemberAdd(rq *request) error {
	var out teamMemberJSON
	err := s.store.InTx(rq.ctx, func(q *db.Queries) error {
		tp, err := s.loadTeamPlace(rq, q)
		if err != nil {
			return err
		}
		if err := tp.access.RequireOr(tp.isLeader, ManageTeams); err != nil {
			return err
		}
		m, err := q.MemberGet(rq.ctx, db.MemberGetParams{OrganisationID: tp.team.OrganisationID, UserID: tp.userID})
		if db.IsNotFound(err) || (err == nil && m.Pending) {
			return fieldError("user", "is not a member of the organisation")
		} else if err != nil {
			return err
		}
		if _, err := q.TeamMemberGet(rq.ctx, db.TeamMemberGetParams{TeamID: tp.team.ID, UserID: tp.userID}); err == nil {
			return fieldError("user", "is already a member of the team")
		} else if !db.IsNotFound(err) {
			return err
		}
		now := s.nowText()
		if err := q.TeamMemberAdd(rq.ctx, db.TeamMemberAddParams{TeamID: tp.team.ID, UserID: tp.userID, OrganisationID: tp.team.OrganisationID, JoinedAt: now}); err != nil {
			return err
		}
		u, err := s.userView(rq.ctx, q, m.User, rq.user.ID)
		if err != nil {
			return err
		}
		out = teamMemberJSON{User: u, JoinedAt: now}
		return nil
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

// teamLeaderBody accepts the flag as decisions.md spells it and as the spec
// does.
type teamLeaderBody struct {
	IsLeader     *bool `json:"is_leader"`
	IsLeaderSpec *bool `json:"IsLeader"`
}

func (b *teamLeaderBody) value() (bool, error) {
	switch {
	case b.IsLeader != nil && b.IsLeaderSpec != nil && *b.IsLeader != *b.IsLeaderSpec:
		return false, fieldError("is_leader", "and IsLeader disagree")
	case b.IsLeader != nil:
		return *b.IsLeader, nil
	case b.IsLeaderSpec != nil:
		return *b.IsLeaderSpec, nil
	}
	return false, fieldError("is_leader", "is required")
}

// teamMemberPatch sets or clears leadership: MANAGE_TEAMS or a leader; a
// leader without MANAGE_TEAMS cannot change their own leadership (400).
func (s *Server) teamMemberPatch(rq *request) error {
	var b teamLeaderBody
	if err := rq.decode(&b); err != nil {
		return err
	}
	leader, err := b.value()
	if err != nil {
		return err
	}
	var out teamMemberJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		tp, err := s.loadTeamPlace(rq, q)
		if err != nil {
			return err
		}
		if err := tp.access.RequireOr(tp.isLeader, ManageTeams); err != nil {
			return err
		}
		if tp.userID == rq.user.ID && !tp.access.Can(ManageTeams) {
			return fieldError("is_leader", "you cannot change your own leadership without MANAGE_TEAMS")
		}
		m, err := q.TeamMemberGet(rq.ctx, db.TeamMemberGetParams{TeamID: tp.team.ID, UserID: tp.userID})
		if db.IsNotFound(err) {
			return fieldError("user", "is not a member of the team")
		} else if err != nil {
			return err
		}
		if err := q.TeamMemberSetLeader(rq.ctx, db.TeamMemberSetLeaderParams{IsLeader: leader, TeamID: tp.team.ID, UserID: tp.userID}); err != nil {
			return err
		}
		u, err := q.UserGet(rq.ctx, tp.userID)
		if err != nil {
			return err
		}
		view, err := s.userView(rq.ctx, q, u, rq.user.ID)
		if err != nil {
			return err
		}
		out = teamMemberJSON{User: view, IsLeader: leader, JoinedAt: m.JoinedAt}
		return nil
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

// teamMemberRemove: MANAGE_TEAMS or a leader; a leader cannot remove
// another leader without MANAGE_TEAMS (403).
func (s *Server) teamMemberRemove(rq *request) error {
	err := s.store.InTx(rq.ctx, func(q *db.Queries) error {
		tp, err := s.loadTeamPlace(rq, q)
		if err != nil {
			return err
		}
		if err := tp.access.RequireOr(tp.isLeader, ManageTeams); err != nil {
			return err
		}
		m, err := q.TeamMemberGet(rq.ctx, db.TeamMemberGetParams{TeamID: tp.team.ID, UserID: tp.userID})
		if db.IsNotFound(err) {
			return fieldError("user", "is not a member of the team")
		} else if err != nil {
			return err
		}
		if m.IsLeader && tp.userID != rq.user.ID && !tp.access.Can(ManageTeams) {
			return forbidden("Removing another leader needs the MANAGE_TEAMS permission.")
		}
		return q.TeamMemberRemove(rq.ctx, db.TeamMemberRemoveParams{TeamID: tp.team.ID, UserID: tp.userID})
	})
	if err != nil {
		return err
	}
	return rq.noContent()
}
