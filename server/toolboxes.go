package server

import (
	"context"
	"database/sql"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/pquerna/otp/totp"

	"workspace/db"
)

// Toolbox meetings (spec: Toolboxes): the meeting, its sections and topics,
// conduct, archive. Signing is in toolboxsign.go, the report in
// toolboxreport.go. Decisions in docs/toolboxes.md.

const (
	maxToolboxTitle  = 200
	maxSectionTitle  = 200
	maxTopicBody     = 10000
	maxTopicComments = 10000
	unarchiveWindow  = 24 * time.Hour
	maxToolboxLimit  = 1000
)

type toolboxSectionJSON struct {
	ID             db.ID              `json:"id"`
	OrganisationID db.ID              `json:"organisation_id"`
	ToolboxID      db.ID              `json:"toolbox_id"`
	Title          string             `json:"title"`
	Order          int64              `json:"order"`
	Topics         []toolboxTopicJSON `json:"topics"`
	CreatedAt      string             `json:"created_at"`
	CreatedBy      *userJSON          `json:"created_by"`
	UpdatedAt      string             `json:"updated_at"`
	UpdatedBy      *userJSON          `json:"updated_by"`
}

type toolboxTopicJSON struct {
	ID             db.ID     `json:"id"`
	OrganisationID db.ID     `json:"organisation_id"`
	ToolboxID      db.ID     `json:"toolbox_id"`
	SectionID      *db.ID    `json:"section_id"`
	Body           string    `json:"body"`
	Comments       string    `json:"comments"`
	ReviewResponse *bool     `json:"review_response"`
	Order          int64     `json:"order"`
	ReviewedAt     *string   `json:"reviewed_at"`
	ReviewedBy     *userJSON `json:"reviewed_by"`
	CreatedAt      string    `json:"created_at"`
	CreatedBy      *userJSON `json:"created_by"`
	UpdatedAt      string    `json:"updated_at"`
	UpdatedBy      *userJSON `json:"updated_by"`
}

type toolboxUserJSON struct {
	ID           db.ID     `json:"id"`
	ToolboxID    db.ID     `json:"toolbox_id"`
	ScheduleID   *db.ID    `json:"schedule_id"`
	UserID       *db.ID    `json:"user_id"`
	User         *userJSON `json:"user"`
	FirstName    string    `json:"first_name"`
	LastName     string    `json:"last_name"`
	Email        string    `json:"email"`
	PhoneNumber  *string   `json:"phone_number"`
	Company      string    `json:"company"`
	Position     string    `json:"position"`
	Signature    *string   `json:"signature"`
	SignedAt     string    `json:"signed_at"`
	SignedMethod string    `json:"signed_method"`
	RecordedBy   *userJSON `json:"recorded_by"`
	// DuplicateOf: the person's first signature on this talk when two
	// offices recorded one apart (docs/sync.md); both are kept.
	DuplicateOf *db.ID `json:"duplicate_of"`
}

type toolboxJSON struct {
	ID             db.ID                `json:"id"`
	OrganisationID db.ID                `json:"organisation_id"`
	WorkgroupID    *db.ID               `json:"workgroup_id"`
	Workgroup      *workgroupJSON       `json:"workgroup"`
	TOTPToken      string               `json:"totp_token,omitempty"`
	SignToken      string               `json:"sign_token,omitempty"`
	IsTemplate     bool                 `json:"is_template"`
	LocationID     *db.ID               `json:"location_id"`
	Location       *locationJSON        `json:"location"`
	Latitude       *float64             `json:"latitude"`
	Longitude      *float64             `json:"longitude"`
	WithinGeofence *bool                `json:"within_geofence"`
	Title          string               `json:"title"`
	Sections       []toolboxSectionJSON `json:"sections"`
	Topics         []toolboxTopicJSON   `json:"topics"`
	Users          []toolboxUserJSON    `json:"users"`
	Archived       bool                 `json:"archived"`
	ConductedAt    *string              `json:"conducted_at"`
	ConductedBy    *userJSON            `json:"conducted_by"`
	ArchivedAt     *string              `json:"archived_at"`
	ArchivedBy     *userJSON            `json:"archived_by"`
	CreatedAt      string               `json:"created_at"`
	CreatedBy      *userJSON            `json:"created_by"`
	UpdatedAt      string               `json:"updated_at"`
	UpdatedBy      *userJSON            `json:"updated_by"`
	Schedules      []scheduleJSON       `json:"schedules"`
}

// toolboxParts is everything a toolbox object shows, loaded in one snapshot.
type toolboxParts struct {
	t         db.Toolbox
	sections  []db.ToolboxSection
	topics    []db.ToolboxTopic
	users     []db.ToolboxUser
	schedules []scheduleJSON
	location  *locationJSON
	workgroup *workgroupJSON
	people    map[int64]userJSON
}

func loadToolboxParts(ctx context.Context, q *db.Queries, t db.Toolbox) (toolboxParts, error) {
	parts, err := loadToolboxPartsMany(ctx, q, []db.Toolbox{t})
	if err != nil {
		return toolboxParts{}, err
	}
	return parts[0], nil
}

// loadToolboxPartsMany loads the parts of several toolboxes with one read
// per kind of part (and per distinct location and workgroup), so a list
// page costs the same few reads whatever its length.
func loadToolboxPartsMany(ctx context.Context, q *db.Queries, list []db.Toolbox) ([]toolboxParts, error) {
	ids := make([]int64, len(list))
	parts := make([]toolboxParts, len(list))
	at := make(map[int64]*toolboxParts, len(list))
	for i, t := range list {
		ids[i] = t.ID
		parts[i].t = t
		at[t.ID] = &parts[i]
	}
	idList := idsJSON(ids)
	sections, err := q.ToolboxSectionListFor(ctx, idList)
	if err != nil {
		return nil, err
	}
	for _, sec := range sections {
		at[sec.ToolboxID].sections = append(at[sec.ToolboxID].sections, sec)
	}
	topics, err := q.ToolboxTopicListFor(ctx, idList)
	if err != nil {
		return nil, err
	}
	for _, tp := range topics {
		at[tp.ToolboxID].topics = append(at[tp.ToolboxID].topics, tp)
	}
	users, err := q.ToolboxUserListFor(ctx, idList)
	if err != nil {
		return nil, err
	}
	for _, u := range users {
		at[u.ToolboxID].users = append(at[u.ToolboxID].users, u)
	}
	scheds, err := q.ScheduleListByToolboxes(ctx, idList)
	if err != nil {
		return nil, err
	}
	schedJSON, err := schedulesJSON(ctx, q, scheds)
	if err != nil {
		return nil, err
	}
	for i, sc := range scheds {
		at[*sc.ToolboxID].schedules = append(at[*sc.ToolboxID].schedules, schedJSON[i])
	}
	locations := map[int64]*locationJSON{}
	workgroups := map[int64]*workgroupJSON{}
	var people []*int64
	for i := range parts {
		p, t := &parts[i], list[i]
		if p.schedules == nil {
			p.schedules = []scheduleJSON{}
		}
		if t.LocationID != nil {
			if p.location = locations[*t.LocationID]; p.location == nil {
				l, err := q.LocationGet(ctx, *t.LocationID)
				if err != nil {
					return nil, err
				}
				subs, err := q.SubLocationList(ctx, l.ID)
				if err != nil {
					return nil, err
				}
				lj := toLocation(l, subs)
				p.location, locations[l.ID] = &lj, &lj
			}
		}
		if t.WorkgroupID != nil {
			if p.workgroup = workgroups[*t.WorkgroupID]; p.workgroup == nil {
				w, err := q.WorkgroupGet(ctx, *t.WorkgroupID)
				if err != nil {
					return nil, err
				}
				wj := toWorkgroup(w)
				p.workgroup, workgroups[w.ID] = &wj, &wj
			}
		}
		people = append(people, &p.t.CreatedBy, &p.t.UpdatedBy, p.t.ConductedBy, p.t.ArchivedBy)
		for j := range p.sections {
			people = append(people, &p.sections[j].CreatedBy, &p.sections[j].UpdatedBy)
		}
		for j := range p.topics {
			people = append(people, &p.topics[j].CreatedBy, &p.topics[j].UpdatedBy, p.topics[j].ReviewedBy)
		}
		for j := range p.users {
			people = append(people, p.users[j].UserID, recordedBy(p.users[j]))
		}
	}
	objects, err := userObjects(ctx, q, people...)
	if err != nil {
		return nil, err
	}
	for i := range parts {
		parts[i].people = objects
	}
	return parts, nil
}

func (p toolboxParts) topic(t db.ToolboxTopic) toolboxTopicJSON {
	return toolboxTopicJSON{ID: db.ID(t.ID), OrganisationID: db.ID(t.OrganisationID), ToolboxID: db.ID(t.ToolboxID),
		SectionID: optID(t.SectionID), Body: t.Body, Comments: t.Comments, ReviewResponse: t.ReviewResponse, Order: t.Position,
		ReviewedAt: t.ReviewedAt, ReviewedBy: userRef(p.people, t.ReviewedBy), CreatedAt: t.CreatedAt,
		CreatedBy: userRef(p.people, &t.CreatedBy), UpdatedAt: t.UpdatedAt, UpdatedBy: userRef(p.people, &t.UpdatedBy)}
}

func (p toolboxParts) section(s db.ToolboxSection) toolboxSectionJSON {
	out := toolboxSectionJSON{ID: db.ID(s.ID), OrganisationID: db.ID(s.OrganisationID), ToolboxID: db.ID(s.ToolboxID),
		Title: s.Title, Order: s.Position, Topics: []toolboxTopicJSON{}, CreatedAt: s.CreatedAt,
		CreatedBy: userRef(p.people, &s.CreatedBy), UpdatedAt: s.UpdatedAt, UpdatedBy: userRef(p.people, &s.UpdatedBy)}
	for _, t := range p.topics {
		if t.SectionID != nil && *t.SectionID == s.ID {
			out.Topics = append(out.Topics, p.topic(t))
		}
	}
	return out
}

func (p toolboxParts) signer(u db.ToolboxUser) toolboxUserJSON {
	out := toolboxUserJSON{ID: db.ID(u.ID), ToolboxID: db.ID(u.ToolboxID), ScheduleID: optID(u.ScheduleID), UserID: optID(u.UserID),
		FirstName: u.FirstName, LastName: u.LastName, Email: u.Email, PhoneNumber: u.PhoneNumber, Company: u.Company,
		Position: u.Position, Signature: u.Signature, SignedAt: u.SignedAt, SignedMethod: u.SignedMethod,
		DuplicateOf: optID(u.DuplicateOf)}
	if u.UserID != nil {
		out.User = userRef(p.people, u.UserID)
	}
	out.RecordedBy = userRef(p.people, recordedBy(u))
	return out
}

func (p toolboxParts) json() toolboxJSON {
	t := p.t
	out := toolboxJSON{ID: db.ID(t.ID), OrganisationID: db.ID(t.OrganisationID), WorkgroupID: optID(t.WorkgroupID),
		Workgroup: p.workgroup, IsTemplate: t.IsTemplate, LocationID: optID(t.LocationID), Location: p.location,
		Latitude: t.Latitude, Longitude: t.Longitude, WithinGeofence: t.WithinGeofence, Title: t.Title,
		Sections: []toolboxSectionJSON{}, Topics: []toolboxTopicJSON{}, Users: []toolboxUserJSON{},
		Archived: t.ArchivedAt != nil, ConductedAt: t.ConductedAt, ConductedBy: userRef(p.people, t.ConductedBy),
		ArchivedAt: t.ArchivedAt, ArchivedBy: userRef(p.people, t.ArchivedBy), CreatedAt: t.CreatedAt,
		CreatedBy: userRef(p.people, &t.CreatedBy), UpdatedAt: t.UpdatedAt, UpdatedBy: userRef(p.people, &t.UpdatedBy),
		Schedules: p.schedules}
	for _, s := range p.sections {
		out.Sections = append(out.Sections, p.section(s))
	}
	for _, tp := range p.topics {
		if tp.SectionID == nil {
			out.Topics = append(out.Topics, p.topic(tp))
		}
	}
	for _, u := range p.users {
		out.Users = append(out.Users, p.signer(u))
	}
	return out
}

// toolboxEvent is the data of a toolbox integration event.
type toolboxEvent struct {
	ID             db.ID   `json:"id"`
	OrganisationID db.ID   `json:"organisation_id"`
	Title          string  `json:"title"`
	LocationID     *db.ID  `json:"location_id"`
	WorkgroupID    *db.ID  `json:"workgroup_id"`
	IsTemplate     bool    `json:"is_template"`
	ConductedAt    *string `json:"conducted_at"`
	Archived       bool    `json:"archived"`
	Signer         string  `json:"signer,omitempty"`
}

func (e toolboxEvent) summary() string {
	if e.Signer != "" {
		return e.Title + " signed by " + e.Signer
	}
	return e.Title
}

// emitToolbox queues the integrations' deliveries of a toolbox change, in
// the change's transaction.
func (s *Server) emitToolbox(ctx context.Context, q *db.Queries, t db.Toolbox, event, signer string) error {
	return s.emit(ctx, q, t.OrganisationID, "toolbox", event, toolboxEvent{ID: db.ID(t.ID), OrganisationID: db.ID(t.OrganisationID),
		Title: t.Title, LocationID: optID(t.LocationID), WorkgroupID: optID(t.WorkgroupID), IsTemplate: t.IsTemplate,
		ConductedAt: t.ConductedAt, Archived: t.ArchivedAt != nil, Signer: signer})
}

func toolboxFull(ctx context.Context, q *db.Queries, t db.Toolbox) (toolboxJSON, error) {
	p, err := loadToolboxParts(ctx, q, t)
	if err != nil {
		return toolboxJSON{}, err
	}
	return p.json(), nil
}

// toolboxAccess loads a toolbox and the caller's access in its organisation.
func toolboxAccess(ctx context.Context, q *db.Queries, userID, id int64) (db.Toolbox, Access, error) {
	t, err := q.ToolboxGet(ctx, id)
	if db.IsNotFound(err) {
		return t, Access{}, notFound("The toolbox does not exist.")
	}
	if err != nil {
		return t, Access{}, err
	}
	a, err := authorize(ctx, q, userID, t.OrganisationID, Scopes{})
	if db.IsNotFound(err) {
		return t, Access{}, notFound("The toolbox does not exist.")
	}
	return t, a, err
}

// toolboxForEdit loads a toolbox for a change: a member's, not archived
// (spec: archived toolboxes refuse every edit with 403).
func toolboxForEdit(rq *request, q *db.Queries, id int64) (db.Toolbox, error) {
	t, a, err := toolboxAccess(rq.ctx, q, rq.user.ID, id)
	if err != nil {
		return t, err
	}
	if err := a.Require(0); err != nil {
		return t, err
	}
	if t.ArchivedAt != nil {
		return t, forbidden("The toolbox is archived.")
	}
	return t, nil
}

// refuseHeld keeps a held talk what it was (issue 29): once conducted, its
// sections, the wording and order of its topics, its sessions and who is
// invited to them no longer change (409, a state conflict, not a permission:
// the same change was fine before the meeting). Reviews, comments,
// check-ins and signatures are the meeting itself and go on.
func refuseHeld(t db.Toolbox, what string) error {
	if t.ConductedAt != nil {
		return errorf(http.StatusConflict, "The talk has been held, so its %s no longer change.", what)
	}
	return nil
}

// newTOTPSecret makes a toolbox's own TOTP secret (decisions.md: a screen at
// the meeting draws its rotating code as a QR code).
func newTOTPSecret() (string, error) {
	k, err := totp.Generate(totp.GenerateOpts{Issuer: "workspace", AccountName: "toolbox"})
	if err != nil {
		return "", err
	}
	return k.Secret(), nil
}

var toolboxReadOnly = []string{"id", "organisation_id", "workgroup", "location", "latitude", "longitude", "within_geofence",
	"sections", "topics", "users", "archived", "conducted_at", "conducted_by", "archived_at", "archived_by",
	"created_at", "created_by", "updated_at", "updated_by", "schedules", "totp_token", "sign_token"}

type toolboxBody struct {
	Title       *string    `json:"title"`
	IsTemplate  *bool      `json:"is_template"`
	LocationID  Opt[db.ID] `json:"location_id"`
	WorkgroupID Opt[db.ID] `json:"workgroup_id"`
	ScheduleID  *db.ID     `json:"schedule_id"`
	TemplateID  *db.ID     `json:"template_id"`
}

func (b *toolboxBody) validate(creating bool) error {
	p := problems{}
	if b.Title == nil && creating {
		p.add("title", "is required")
	}
	checkName(p, "title", b.Title, maxToolboxTitle)
	return p.err()
}

// references checks that the body's location and workgroup are of the
// toolbox's organisation (400 otherwise) and writes them over t.
func (b *toolboxBody) references(ctx context.Context, q *db.Queries, t *db.Toolbox) error {
	if b.LocationID.Set {
		t.LocationID = nil
		if !b.LocationID.Null {
			l, err := q.LocationGet(ctx, int64(b.LocationID.Value))
			if db.IsNotFound(err) || (err == nil && l.OrganisationID != t.OrganisationID) {
				return fieldError("location_id", "must name a location of the organisation")
			} else if err != nil {
				return err
			}
			t.LocationID = &l.ID
		}
	}
	if b.WorkgroupID.Set {
		t.WorkgroupID = nil
		if !b.WorkgroupID.Null {
			w, err := q.WorkgroupGet(ctx, int64(b.WorkgroupID.Value))
			if db.IsNotFound(err) || (err == nil && w.OrganisationID != t.OrganisationID) {
				return fieldError("workgroup_id", "must name a workgroup of the organisation")
			} else if err != nil {
				return err
			}
			t.WorkgroupID = &w.ID
		}
	}
	return nil
}

func (s *Server) toolboxCreate(rq *request) error {
	orgID, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var b toolboxBody
	if err := rq.decodeCreate(&b, toolboxReadOnly...); err != nil {
		return err
	}
	if err := b.validate(true); err != nil {
		return err
	}
	secret, err := newTOTPSecret()
	if err != nil {
		return err
	}
	var out toolboxJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		if _, err := orgAccess(rq, q, orgID, http.StatusBadRequest, 0); err != nil {
			return err
		}
		t := db.Toolbox{OrganisationID: orgID}
		if err := b.references(rq.ctx, q, &t); err != nil {
			return err
		}
		var sched db.Schedule
		if b.ScheduleID != nil {
			sched, err = q.ScheduleGet(rq.ctx, int64(*b.ScheduleID))
			if db.IsNotFound(err) || (err == nil && sched.OrganisationID != orgID) {
				return fieldError("schedule_id", "must name a schedule of the organisation")
			} else if err != nil {
				return err
			}
			if sched.ToolboxID != nil {
				return fieldError("schedule_id", "names a schedule that already has a toolbox")
			}
		}
		var template db.Toolbox
		if b.TemplateID != nil {
			template, err = q.ToolboxGet(rq.ctx, int64(*b.TemplateID))
			if db.IsNotFound(err) || (err == nil && (template.OrganisationID != orgID || !template.IsTemplate)) {
				return fieldError("template_id", "must name a toolbox template of the organisation")
			} else if err != nil {
				return err
			}
		}
		now := s.nowText()
		created, err := q.ToolboxCreate(rq.ctx, db.ToolboxCreateParams{ID: s.store.IDs.Next(), OrganisationID: orgID,
			WorkgroupID: t.WorkgroupID, LocationID: t.LocationID, Title: strings.TrimSpace(*b.Title),
			IsTemplate: b.IsTemplate != nil && *b.IsTemplate, TotpSecret: secret, CreatedAt: now, CreatedBy: rq.user.ID})
		if err != nil {
			return err
		}
		if b.ScheduleID != nil {
			if err := q.ScheduleSetToolbox(rq.ctx, db.ScheduleSetToolboxParams{ToolboxID: &created.ID, ID: sched.ID, OrganisationID: orgID}); err != nil {
				return err
			}
		}
		if b.TemplateID != nil {
			if err := s.copyToolboxContent(rq, q, template, created, now); err != nil {
				return err
			}
		}
		if err := s.emitToolbox(rq.ctx, q, created, "created", ""); err != nil {
			return err
		}
		out, err = toolboxFull(rq.ctx, q, created)
		return err
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusCreated, out)
}

// copyToolboxContent copies a template's sections and topics (their text,
// not the meeting's comments or review responses) into a new toolbox.
func (s *Server) copyToolboxContent(rq *request, q *db.Queries, from, to db.Toolbox, now string) error {
	sections, err := q.ToolboxSectionList(rq.ctx, from.ID)
	if err != nil {
		return err
	}
	newSection := map[int64]int64{}
	for _, sec := range sections {
		c, err := q.ToolboxSectionCreate(rq.ctx, db.ToolboxSectionCreateParams{ID: s.store.IDs.Next(), OrganisationID: to.OrganisationID,
			ToolboxID: to.ID, Title: sec.Title, CreatedAt: now, CreatedBy: rq.user.ID})
		if err != nil {
			return err
		}
		newSection[sec.ID] = c.ID
	}
	topics, err := q.ToolboxTopicList(rq.ctx, from.ID)
	if err != nil {
		return err
	}
	for _, tp := range topics {
		var section *int64
		if tp.SectionID != nil {
			id := newSection[*tp.SectionID]
			section = &id
		}
		if _, err := q.ToolboxTopicCreate(rq.ctx, db.ToolboxTopicCreateParams{ID: s.store.IDs.Next(), OrganisationID: to.OrganisationID,
			ToolboxID: to.ID, SectionID: section, Body: tp.Body, CreatedAt: now, CreatedBy: rq.user.ID}); err != nil {
			return err
		}
	}
	return nil
}

// toolboxList: filters is_template, title (case-insensitive substring),
// location, workgroup, archived; paging start (default 0) and limit (default
// 50); newest first; X-Total-Count before paging.
func (s *Server) toolboxList(rq *request) error {
	var where []string
	var args []any
	return listPage(s, rq, listSpec[toolboxJSON]{Path: "id",
		// toolboxes page by start and limit, not $skip and $top
		Query: func(orgID int64) (listQuery, error) {
			qs := rq.r.URL.Query()
			where, args = []string{"organisation_id = ?"}, []any{orgID}
			p := problems{}
			for _, f := range []struct{ param, cond string }{{"is_template", "is_template = ?"}, {"archived", "(archived_at IS NOT NULL) = ?"}} {
				if v := qs.Get(f.param); v != "" {
					b, err := strconv.ParseBool(v)
					if err != nil {
						p.add(f.param, "must be true or false")
						continue
					}
					where, args = append(where, f.cond), append(args, b)
				}
			}
			for _, f := range []struct{ param, cond string }{{"location", "location_id = ?"}, {"workgroup", "workgroup_id = ?"}} {
				if v := qs.Get(f.param); v != "" {
					id, ok := db.ParseID(v)
					if !ok {
						p.add(f.param, "must be a snowflake id")
						continue
					}
					where, args = append(where, f.cond), append(args, int64(id))
				}
			}
			if v := qs.Get("title"); v != "" {
				p.length("title", v, 1, maxToolboxTitle)
				where, args = append(where, `title LIKE ? ESCAPE '\'`), append(args, "%"+likeEscape(v)+"%")
			}
			lq := listQuery{Top: defaultTop}
			if v := qs.Get("start"); v != "" {
				n, err := strconv.Atoi(v)
				if err != nil || n < 0 {
					p.add("start", "must be a non-negative integer")
				}
				lq.Skip = n
			}
			if v := qs.Get("limit"); v != "" {
				n, err := strconv.Atoi(v)
				if err != nil || n < 0 || n > maxToolboxLimit {
					p.add("limit", "must be an integer from 0 to 1000")
				}
				lq.Top = n
			}
			return lq, p.err()
		},
		Scope: func(_ *sql.Tx, q *db.Queries, orgID int64, _ listQuery) (listSQL, error) {
			_, err := orgAccess(rq, q, orgID, http.StatusBadRequest, 0)
			return listSQL{From: "toolboxes", Where: strings.Join(where, " AND "), Args: args, OrderBy: "id DESC"}, err
		},
		Rows: func(ctx context.Context, q *db.Queries, ids []int64) ([]toolboxJSON, error) {
			rows, err := q.ToolboxListByIDs(ctx, idsJSON(ids))
			if err != nil {
				return nil, err
			}
			parts, err := loadToolboxPartsMany(ctx, q, rows)
			if err != nil {
				return nil, err
			}
			out := make([]toolboxJSON, 0, len(parts))
			for _, p := range parts {
				out = append(out, p.json())
			}
			return out, nil
		}})
}

// ToolboxPermissions are the keys a toolbox's permissions object carries:
// its sessions (schedules) are written with MANAGE_TEAMS; its content by
// every member while it is not archived.
const ToolboxPermissions = ManageTeams

// toolboxFullJSON is one toolbox with the caller's permissions on it, so a
// client shows only the controls the API would accept (issue 29).
type toolboxFullJSON struct {
	toolboxJSON
	Permissions PermBools `json:"permissions"`
}

// toolboxGet: include_totp_token=true adds the toolbox's own TOTP secret
// (decisions.md: returned only when asked for).
func (s *Server) toolboxGet(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	withTOTP, err := rq.queryBool("include_totp_token", false)
	if err != nil {
		return err
	}
	var out toolboxFullJSON
	err = s.store.ReadTx(rq.ctx, func(q *db.Queries) error {
		t, a, err := toolboxAccess(rq.ctx, q, rq.user.ID, id)
		if err != nil {
			return err
		}
		if err := a.Require(0); err != nil {
			return err
		}
		out.toolboxJSON, err = toolboxFull(rq.ctx, q, t)
		if err != nil {
			return err
		}
		out.Permissions = a.Permissions().Bools(ToolboxPermissions)
		if withTOTP {
			if !runsMeeting(t, a) {
				return forbidden("Only whoever runs the meeting (who created or conducted the talk, or a member who manages teams) can open its meeting screen.")
			}
			out.TOTPToken = t.TotpSecret
		}
		return nil
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

func (s *Server) toolboxPatch(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var b toolboxBody
	ro, err := rq.decodePatch(&b, append(toolboxReadOnly, "schedule_id", "template_id")...)
	if err != nil {
		return err
	}
	if err := b.validate(false); err != nil {
		return err
	}
	var out toolboxJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		t, err := toolboxForEdit(rq, q, id)
		if err != nil {
			return err
		}
		if err := ro.checkLoaded(func() (any, error) { return toolboxFull(rq.ctx, q, t) }); err != nil {
			return err
		}
		if err := b.references(rq.ctx, q, &t); err != nil {
			return err
		}
		if b.Title != nil {
			t.Title = strings.TrimSpace(*b.Title)
		}
		setIf(&t.IsTemplate, b.IsTemplate)
		t, err = q.ToolboxUpdate(rq.ctx, db.ToolboxUpdateParams{Title: t.Title, IsTemplate: t.IsTemplate, LocationID: t.LocationID,
			WorkgroupID: t.WorkgroupID, UpdatedAt: s.nowText(), UpdatedBy: rq.user.ID, ID: t.ID, OrganisationID: t.OrganisationID})
		if err != nil {
			return err
		}
		if err := s.emitToolbox(rq.ctx, q, t, "updated", ""); err != nil {
			return err
		}
		out, err = toolboxFull(rq.ctx, q, t)
		return err
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

type conductBody struct {
	Latitude  Opt[float64] `json:"latitude"`
	Longitude Opt[float64] `json:"longitude"`
}

// toolboxConduct records the meeting as held, once, with where it was held
// and whether that is inside the location's geofence (stored, never a
// refusal: a meeting held at the gate is still a meeting).
func (s *Server) toolboxConduct(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var b conductBody
	if err := rq.decode(&b); err != nil {
		return err
	}
	p := problems{}
	lat, lon := coordinates(p, b.Latitude, b.Longitude, true)
	if err := p.err(); err != nil {
		return err
	}
	var out toolboxJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		t, err := toolboxForEdit(rq, q, id)
		if err != nil {
			return err
		}
		if t.ConductedAt != nil {
			return forbidden("The toolbox has already been conducted.")
		}
		var within *bool
		if t.LocationID != nil {
			l, err := q.LocationGet(rq.ctx, *t.LocationID)
			if err != nil {
				return err
			}
			within = insideGeofence(l, *lat, *lon)
		}
		now := s.nowText()
		t, err = q.ToolboxConduct(rq.ctx, db.ToolboxConductParams{ConductedAt: &now, ConductedBy: &rq.user.ID, Latitude: lat,
			Longitude: lon, WithinGeofence: within, ID: t.ID, OrganisationID: t.OrganisationID})
		if err != nil {
			return err
		}
		if err := s.emitToolbox(rq.ctx, q, t, "conducted", ""); err != nil {
			return err
		}
		out, err = toolboxFull(rq.ctx, q, t)
		return err
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

// insideGeofence says whether a point lies within the location's circle;
// nil when the location has no geofence.
func insideGeofence(l db.Location, lat, lon float64) *bool {
	if l.Latitude == nil || l.Longitude == nil || l.Radius == nil {
		return nil
	}
	in := haversineMetres(*l.Latitude, *l.Longitude, lat, lon) <= *l.Radius
	return &in
}

func haversineMetres(lat1, lon1, lat2, lon2 float64) float64 {
	const earthRadius = 6371008.8
	rad := math.Pi / 180
	dLat, dLon := (lat2-lat1)*rad, (lon2-lon1)*rad
	h := math.Sin(dLat/2)*math.Sin(dLat/2) + math.Cos(lat1*rad)*math.Cos(lat2*rad)*math.Sin(dLon/2)*math.Sin(dLon/2)
	return 2 * earthRadius * math.Asin(math.Min(1, math.Sqrt(h)))
}

func (s *Server) toolboxArchive(rq *request) error {
	return s.setArchived(rq, true)
}

func (s *Server) toolboxUnarchive(rq *request) error {
	return s.setArchived(rq, false)
}

// setArchived archives (403 when already archived) or unarchives (403 when
// not archived or archived more than 24 hours ago).
func (s *Server) setArchived(rq *request, archive bool) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var out toolboxJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		t, a, err := toolboxAccess(rq.ctx, q, rq.user.ID, id)
		if err != nil {
			return err
		}
		if err := a.Require(0); err != nil {
			return err
		}
		now := s.now()
		params := db.ToolboxArchiveParams{UpdatedAt: db.FormatTime(now), UpdatedBy: rq.user.ID, ID: t.ID, OrganisationID: t.OrganisationID}
		switch {
		case archive && t.ArchivedAt != nil:
			return forbidden("The toolbox is already archived.")
		case archive:
			params.ArchivedAt, params.ArchivedBy = &params.UpdatedAt, &rq.user.ID
		case t.ArchivedAt == nil:
			return forbidden("The toolbox is not archived.")
		default:
			at, err := db.ParseTime(*t.ArchivedAt)
			if err != nil {
				return err
			}
			if now.Sub(at) > unarchiveWindow {
				return forbidden("The toolbox was archived more than 24 hours ago and can no longer be unarchived.")
			}
		}
		t, err = q.ToolboxArchive(rq.ctx, params)
		if err != nil {
			return err
		}
		event := "unarchived"
		if archive {
			event = "archived"
		}
		if err := s.emitToolbox(rq.ctx, q, t, event, ""); err != nil {
			return err
		}
		out, err = toolboxFull(rq.ctx, q, t)
		return err
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

// toolboxScheduleCreate adds a schedule held by the toolbox (MANAGE_TEAMS).
func (s *Server) toolboxScheduleCreate(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var b scheduleBody
	if err := rq.decodeCreate(&b, scheduleReadOnly...); err != nil {
		return err
	}
	sc := db.Schedule{}
	if err := b.apply(&sc, true); err != nil {
		return err
	}
	var out scheduleJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		t, a, err := toolboxAccess(rq.ctx, q, rq.user.ID, id)
		if err != nil {
			return err
		}
		if err := a.Require(ManageTeams); err != nil {
			return err
		}
		if t.ArchivedAt != nil {
			return forbidden("The toolbox is archived.")
		}
		if err := refuseHeld(t, "sessions"); err != nil {
			return err
		}
		sc.OrganisationID, sc.ToolboxID = t.OrganisationID, &t.ID
		out, err = s.createSchedule(rq.ctx, q, sc, b.InviteeIDs, rq.user.ID)
		return err
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusCreated, out)
}
