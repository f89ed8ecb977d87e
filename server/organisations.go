package server

import (
	"context"
	"net/http"
	"strconv"
	"strings"

	"workspace/db"
)

// everyoneRank ranks the @everyone role below every other role.
const everyoneRank = 1<<31 - 1

type idJSON struct {
	ID db.ID `json:"id"`
}

// orgJSON is the organisation object.
type orgJSON struct {
	ID                  db.ID   `json:"id"`
	Name                string  `json:"name"`
	Description         string  `json:"description"`
	Location            string  `json:"location"`
	Code                string  `json:"code"`
	DefaultBranchName   string  `json:"default_branch_name"`
	MemberCount         int64   `json:"member_count"`
	IconHash            *string `json:"icon_hash"`
	BannerHash          *string `json:"banner_hash"`
	LogoHash            *string `json:"logo_hash"`
	StorageUsage        int64   `json:"storage_usage"`
	CreatedAt           string  `json:"created_at"`
	OwnedBy             idJSON  `json:"owned_by"`
	IsProtected         bool    `json:"is_protected"`
	IsVerified          bool    `json:"is_verified"`
	MemberApproval      bool    `json:"member_approval"`
	RestrictEmailDomain bool    `json:"restrict_email_domain"`
	IsDeleted           bool    `json:"is_deleted"`
	DeletedAt           *string `json:"deleted_at"`
	DeletedBy           *idJSON `json:"deleted_by"`
}

// orgPartialJSON is the organisation's partial form.
type orgPartialJSON struct {
	ID          db.ID   `json:"id"`
	Name        string  `json:"name"`
	Description string  `json:"description"`
	IconHash    *string `json:"icon_hash"`
}

func toOrg(o db.Organisation, memberCount int64) orgJSON {
	out := orgJSON{
		ID: db.ID(o.ID), Name: o.Name, Description: o.Description, Location: o.Location, Code: o.Code,
		DefaultBranchName: o.DefaultBranchName, MemberCount: memberCount, IconHash: o.IconHash,
		BannerHash: o.BannerHash, LogoHash: o.LogoHash, StorageUsage: o.StorageUsage, CreatedAt: o.CreatedAt,
		OwnedBy: idJSON{db.ID(o.OwnedBy)}, IsProtected: o.IsProtected, IsVerified: o.IsVerified,
		MemberApproval: o.MemberApproval, RestrictEmailDomain: o.RestrictEmailDomain,
		IsDeleted: o.DeletedAt != nil, DeletedAt: o.DeletedAt,
	}
	if o.DeletedBy != nil {
		out.DeletedBy = &idJSON{db.ID(*o.DeletedBy)}
	}
	return out
}

func toOrgPartial(o db.Organisation) orgPartialJSON {
	return orgPartialJSON{ID: db.ID(o.ID), Name: o.Name, Description: o.Description, IconHash: o.IconHash}
}

type orgCreateBody struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Location    string `json:"location"`
	Code        string `json:"code"`
}

// organisationCreate makes the caller owner and first member, with the
// @everyone role (id = organisation id) allowed its default permissions.
func (s *Server) organisationCreate(rq *request) error {
	var b orgCreateBody
	if err := rq.decode(&b); err != nil {
		return err
	}
	b.Name = strings.TrimSpace(b.Name)
	p := problems{}
	p.length("name", b.Name, 2, 100)
	p.length("code", b.Code, 0, 12)
	p.length("description", b.Description, 0, 4000)
	p.length("location", b.Location, 0, 200)
	if err := p.err(); err != nil {
		return err
	}
	var org db.Organisation
	now := s.nowText()
	err := s.store.InTx(rq.ctx, func(q *db.Queries) error {
		var err error
		org, err = q.OrganisationCreate(rq.ctx, db.OrganisationCreateParams{
			ID: s.store.IDs.Next(), Name: b.Name, Description: b.Description, Location: b.Location,
			Code: b.Code, OwnedBy: rq.user.ID, CreatedAt: now,
		})
		if err != nil {
			return err
		}
		noteAuditOrg(rq.ctx, org.ID) // the new organisation's chain starts with its creation
		if err := q.MemberCreate(rq.ctx, db.MemberCreateParams{OrganisationID: org.ID, UserID: rq.user.ID, JoinedAt: now}); err != nil {
			return err
		}
		if _, err := q.RoleCreate(rq.ctx, db.RoleCreateParams{
			ID: org.ID, OrganisationID: org.ID, Name: "@everyone", SortOrder: everyoneRank, CreatedAt: now,
		}); err != nil {
			return err
		}
		return q.GrantPut(rq.ctx, db.GrantPutParams{
			OrganisationID: org.ID, ScopeType: "organisation", ScopeID: org.ID,
			TargetType: "organisation", TargetID: org.ID, AllowMask: int64(DefaultEveryone),
		})
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusCreated, toOrg(org, 1))
}

// orgAccess resolves the caller's access in an organisation and refuses a
// caller who is not a member (a pending member is none) or lacks perm (0:
// membership is enough); perm undecided refuses no one, for a handler whose
// rule a permission cannot state (a member or a share's recipient). absent
// is the status an absent or deleted organisation answers with: the rows
// that list "400 organisation absent" pass 400, the others 404.
func orgAccess(rq *request, q *db.Queries, orgID int64, absent int, perm Permission) (Access, error) {
	a, err := authorize(rq.ctx, q, rq.user.ID, orgID, Scopes{})
	if db.IsNotFound(err) {
		return a, errorf(absent, "The organisation was not found.")
	}
	if err != nil || perm == undecided {
		return a, err
	}
	return a, a.Require(perm)
}

// undecided is no permission (outside the catalogue): orgAccess asks
// nothing and the handler decides.
const undecided Permission = 1 << 31

func (s *Server) organisationGet(rq *request) error {
	orgID, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var out orgJSON
	err = s.store.ReadTx(rq.ctx, func(q *db.Queries) error {
		if _, err := orgAccess(rq, q, orgID, http.StatusNotFound, 0); err != nil {
			return err
		}
		out, err = loadOrg(rq.ctx, q, orgID)
		return err
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

// loadOrg reads a live organisation with its member count.
func loadOrg(ctx context.Context, q *db.Queries, orgID int64) (orgJSON, error) {
	o, err := q.OrganisationGet(ctx, orgID)
	if err != nil {
		return orgJSON{}, db.Classify(err)
	}
	n, err := q.OrganisationMemberCount(ctx, orgID)
	if err != nil {
		return orgJSON{}, err
	}
	return toOrg(o, n), nil
}

type orgPatchBody struct {
	Name                *string `json:"name"`
	Description         *string `json:"description"`
	Location            *string `json:"location"`
	Code                *string `json:"code"`
	DefaultBranchName   *string `json:"default_branch_name"`
	MemberApproval      *bool   `json:"member_approval"`
	RestrictEmailDomain *bool   `json:"restrict_email_domain"`
}

// orgReadOnly are the organisation fields a PATCH may not change.
var orgReadOnly = []string{"id", "owned_by", "is_verified", "is_protected", "member_count", "created_at",
	"storage_usage", "icon_hash", "banner_hash", "logo_hash", "is_deleted", "deleted_at", "deleted_by"}

func (s *Server) organisationPatch(rq *request) error {
	orgID, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var b orgPatchBody
	ro, err := rq.decodePatch(&b, orgReadOnly...)
	if err != nil {
		return err
	}
	p := problems{}
	if b.Name != nil {
		*b.Name = strings.TrimSpace(*b.Name)
		p.length("name", *b.Name, 2, 100)
	}
	if b.Description != nil {
		p.length("description", *b.Description, 0, 4000)
	}
	if b.Location != nil {
		p.length("location", *b.Location, 0, 200)
	}
	if b.Code != nil {
		p.length("code", *b.Code, 0, 12)
	}
	if b.DefaultBranchName != nil {
		*b.DefaultBranchName = strings.TrimSpace(*b.DefaultBranchName)
		p.length("default_branch_name", *b.DefaultBranchName, 2, 50)
	}
	if err := p.err(); err != nil {
		return err
	}
	var out orgJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		a, err := orgAccess(rq, q, orgID, http.StatusNotFound, ManageOrganisation)
		if err != nil {
			return err
		}
		o := a.Org
		if err := ro.checkLoaded(func() (any, error) { return loadOrg(rq.ctx, q, orgID) }); err != nil {
			return err
		}
		arg := db.OrganisationUpdateParams{
			ID: orgID, Name: o.Name, Description: o.Description, Location: o.Location, Code: o.Code,
			DefaultBranchName: o.DefaultBranchName, MemberApproval: o.MemberApproval, RestrictEmailDomain: o.RestrictEmailDomain,
		}
		setIf(&arg.Name, b.Name)
		setIf(&arg.Description, b.Description)
		setIf(&arg.Location, b.Location)
		setIf(&arg.Code, b.Code)
		setIf(&arg.DefaultBranchName, b.DefaultBranchName)
		setIf(&arg.MemberApproval, b.MemberApproval)
		setIf(&arg.RestrictEmailDomain, b.RestrictEmailDomain)
		if arg.RestrictEmailDomain && !o.RestrictEmailDomain {
			// Nobody could join through an invite without an approved domain.
			n, err := q.DomainApprovedCount(rq.ctx, orgID)
			if err != nil {
				return err
			}
			if n == 0 {
				return fieldError("restrict_email_domain", "needs at least one verified and approved domain")
			}
		}
		o, err = q.OrganisationUpdate(rq.ctx, arg)
		if err != nil {
			return err
		}
		n, err := q.OrganisationMemberCount(rq.ctx, orgID)
		if err != nil {
			return err
		}
		out = toOrg(o, n)
		return nil
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

// organisationDelete soft-deletes: the row stays, with deleted_at and
// deleted_by, and every endpoint then treats the organisation as absent.
func (s *Server) organisationDelete(rq *request) error {
	orgID, err := rq.pathID("id")
	if err != nil {
		return err
	}
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		a, err := orgAccess(rq, q, orgID, http.StatusNotFound, 0)
		if err != nil {
			return err
		}
		if !a.Owner {
			return forbidden("Only the owner may delete the organisation.")
		}
		if a.Org.IsProtected {
			return badRequest("The organisation is protected; ask Staff to lift the protection first.")
		}
		by := rq.user.ID
		return q.OrganisationSoftDelete(rq.ctx, db.OrganisationSoftDeleteParams{ID: orgID, DeletedAt: ptr(s.nowText()), DeletedBy: &by})
	})
	if err != nil {
		return err
	}
	return rq.noContent()
}

func ptr[T any](v T) *T { return &v }

// memberJSON is the organisation member object; roles lists the ids of the
// member's roles, highest first.
type memberJSON struct {
	User     userJSON `json:"user"`
	IsOwner  bool     `json:"is_owner"`
	Pending  bool     `json:"pending"`
	JoinedAt string   `json:"joined_at"`
	Roles    []db.ID  `json:"roles"`
}

func toMember(o db.Organisation, u db.User, pending bool, joinedAt string, roleIDs []int64) memberJSON {
	roles := make([]db.ID, len(roleIDs))
	for i, id := range roleIDs {
		roles[i] = db.ID(id)
	}
	return memberJSON{User: toUser(u), IsOwner: o.OwnedBy == u.ID, Pending: pending, JoinedAt: joinedAt, Roles: roles}
}

// memberList lists members, pending ones included (so they can be
// approved); filter is a case-insensitive prefix of first name, last name
// or e-mail.
func (s *Server) memberList(rq *request) error {
	orgID, err := rq.pathID("id")
	if err != nil {
		return err
	}
	filter := strings.TrimSpace(rq.r.URL.Query().Get("filter"))
	if len(filter) > 200 {
		return badRequest("The filter must be at most 200 characters.")
	}
	var out []memberJSON
	err = s.store.ReadTx(rq.ctx, func(q *db.Queries) error {
		a, err := orgAccess(rq, q, orgID, http.StatusNotFound, 0)
		if err != nil {
			return err
		}
		o := a.Org
		rows, err := q.MemberList(rq.ctx, db.MemberListParams{OrganisationID: orgID, Prefix: filter})
		if err != nil {
			return err
		}
		assigned, err := q.MemberRoleIDsForOrganisation(rq.ctx, orgID)
		if err != nil {
			return err
		}
		roles := map[int64][]int64{}
		for _, a := range assigned {
			roles[a.UserID] = append(roles[a.UserID], a.RoleID)
		}
		out = make([]memberJSON, len(rows))
		for i, r := range rows {
			out[i] = toMember(o, r.User, r.Pending, r.JoinedAt, roles[r.User.ID])
		}
		return nil
	})
	if err != nil {
		return err
	}
	rq.w.Header().Set("X-Total-Count", strconv.Itoa(len(out)))
	return rq.json(http.StatusOK, out)
}

// memberPath reads the organisation and user ids of a member path.
func memberPath(rq *request) (orgID, userID int64, err error) {
	if orgID, err = rq.pathID("id"); err != nil {
		return 0, 0, err
	}
	userID, err = rq.pathID("user")
	return orgID, userID, err
}

func (s *Server) memberGet(rq *request) error {
	orgID, userID, err := memberPath(rq)
	if err != nil {
		return err
	}
	var out memberJSON
	err = s.store.ReadTx(rq.ctx, func(q *db.Queries) error {
		if _, err := orgAccess(rq, q, orgID, http.StatusNotFound, 0); err != nil {
			return err
		}
		out, err = loadMember(rq.ctx, q, orgID, userID)
		return err
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

func loadMember(ctx context.Context, q *db.Queries, orgID, userID int64) (memberJSON, error) {
	o, err := q.OrganisationGet(ctx, orgID)
	if err != nil {
		return memberJSON{}, db.Classify(err)
	}
	m, err := q.MemberGet(ctx, db.MemberGetParams{OrganisationID: orgID, UserID: userID})
	if db.IsNotFound(err) {
		return memberJSON{}, notFound("The user is not a member of this organisation.")
	}
	if err != nil {
		return memberJSON{}, err
	}
	roles, err := q.MemberRoleIDs(ctx, db.MemberRoleIDsParams{OrganisationID: orgID, UserID: userID})
	if err != nil {
		return memberJSON{}, err
	}
	return toMember(o, m.User, m.Pending, m.JoinedAt, roles), nil
}

type memberPatchBody struct {
	Pending *bool `json:"pending"`
}

// memberPatch approves a pending member with {"pending": false}. A member
// cannot be made pending again.
func (s *Server) memberPatch(rq *request) error {
	orgID, userID, err := memberPath(rq)
	if err != nil {
		return err
	}
	var b memberPatchBody
	ro, err := rq.decodePatch(&b, "user", "is_owner", "joined_at", "roles")
	if err != nil {
		return err
	}
	if b.Pending != nil && *b.Pending {
		return fieldError("pending", "can only be set to false (approve)")
	}
	var out memberJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		if _, err := orgAccess(rq, q, orgID, http.StatusNotFound, ManageOrganisation); err != nil {
			return err
		}
		out, err = loadMember(rq.ctx, q, orgID, userID)
		if err != nil {
			return err
		}
		if err := ro.check(out); err != nil {
			return err
		}
		if b.Pending == nil {
			return nil
		}
		out.Pending = false
		return q.MemberApprove(rq.ctx, db.MemberApproveParams{OrganisationID: orgID, UserID: userID})
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

// removeMember drops the membership with the member's roles and every grant
// naming them, so a later return starts from nothing.
func removeMember(ctx context.Context, q *db.Queries, orgID, userID int64) (bool, error) {
	n, err := q.MemberDelete(ctx, db.MemberDeleteParams{OrganisationID: orgID, UserID: userID})
	if err != nil {
		return false, err
	}
	if err := q.MemberRolesDeleteForUser(ctx, db.MemberRolesDeleteForUserParams{OrganisationID: orgID, UserID: userID}); err != nil {
		return false, err
	}
	if err := q.GrantDeleteForTarget(ctx, db.GrantDeleteForTargetParams{OrganisationID: orgID, TargetID: userID}); err != nil {
		return false, err
	}
	if err := q.TeamMembersDeleteForUser(ctx, db.TeamMembersDeleteForUserParams{OrganisationID: orgID, UserID: userID}); err != nil {
		return false, err
	}
	if err := q.UserInductionsDeleteForUser(ctx, db.UserInductionsDeleteForUserParams{OrganisationID: orgID, UserID: userID}); err != nil {
		return false, err
	}
	return n > 0, nil
}

func (s *Server) memberDelete(rq *request) error {
	orgID, userID, err := memberPath(rq)
	if err != nil {
		return err
	}
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		a, err := orgAccess(rq, q, orgID, http.StatusNotFound, ManageOrganisation)
		if err != nil {
			return err
		}
		o := a.Org
		if o.OwnedBy == userID {
			return badRequest("The owner cannot be removed from the organisation.")
		}
		removed, err := removeMember(rq.ctx, q, orgID, userID)
		if err != nil {
			return err
		}
		if !removed {
			return notFound("The user is not a member of this organisation.")
		}
		return nil
	})
	if err != nil {
		return err
	}
	return rq.noContent()
}

// banJSON is the organisation user ban object.
type banJSON struct {
	User     any    `json:"user"` // userJSON or userIDJSON (revealUser)
	Reason   string `json:"reason"`
	BannedAt string `json:"banned_at"`
}

func (s *Server) banList(rq *request) error {
	orgID, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var out []banJSON
	err = s.store.ReadTx(rq.ctx, func(q *db.Queries) error {
		if _, err := orgAccess(rq, q, orgID, http.StatusNotFound, ManageOrganisation); err != nil {
			return err
		}
		rows, err := q.BanList(rq.ctx, db.BanListParams{OrganisationID: orgID, ViewerID: rq.user.ID})
		if err != nil {
			return err
		}
		out = make([]banJSON, len(rows))
		for i, r := range rows {
			u, err := s.revealUser(rq.ctx, q, r.UserID, rq.user.ID, r.Visible)
			if err != nil {
				return err
			}
			out[i] = banJSON{User: u, Reason: r.Reason, BannedAt: r.BannedAt}
		}
		return nil
	})
	if err != nil {
		return err
	}
	rq.w.Header().Set("X-Total-Count", strconv.Itoa(len(out)))
	return rq.json(http.StatusOK, out)
}

type banBody struct {
	Reason string `json:"reason"`
}

// banPut bans a user (member or not) and removes any membership. Banning
// again updates the reason and keeps the first banned_at. Any id may be
// banned, also one no account holds, and the answer shows only what the
// caller may know of the user (revealUser), so a ban neither leaks a
// stranger's profile nor tells whether an id exists.
func (s *Server) banPut(rq *request) error {
	orgID, userID, err := memberPath(rq)
	if err != nil {
		return err
	}
	var b banBody
	if err := rq.decode(&b); err != nil {
		return err
	}
	p := problems{}
	p.length("reason", b.Reason, 0, 1000)
	if err := p.err(); err != nil {
		return err
	}
	var out banJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		a, err := orgAccess(rq, q, orgID, http.StatusNotFound, ManageOrganisation)
		if err != nil {
			return err
		}
		o := a.Org
		if o.OwnedBy == userID {
			return badRequest("The owner cannot be banned.")
		}
		wasMember, err := removeMember(rq.ctx, q, orgID, userID)
		if err != nil {
			return err
		}
		ban, err := q.BanPut(rq.ctx, db.BanPutParams{OrganisationID: orgID, UserID: userID, Reason: b.Reason, BannedAt: s.nowText(), BannedBy: rq.user.ID, WasMember: wasMember})
		if err != nil {
			return err
		}
		u, err := s.revealUser(rq.ctx, q, userID, rq.user.ID, ban.WasMember)
		if err != nil {
			return err
		}
		out = banJSON{User: u, Reason: ban.Reason, BannedAt: ban.BannedAt}
		return nil
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

func (s *Server) banDelete(rq *request) error {
	orgID, userID, err := memberPath(rq)
	if err != nil {
		return err
	}
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		if _, err := orgAccess(rq, q, orgID, http.StatusNotFound, ManageOrganisation); err != nil {
			return err
		}
		n, err := q.BanDelete(rq.ctx, db.BanDeleteParams{OrganisationID: orgID, UserID: userID})
		if err != nil {
			return err
		}
		if n == 0 {
			return notFound("The user is not banned.")
		}
		return nil
	})
	if err != nil {
		return err
	}
	return rq.noContent()
}

// orgContextJSON is the organisation with the caller's subscription and
// permission context.
type orgContextJSON struct {
	orgJSON
	Features         map[string]any `json:"features"`
	Permissions      PermBools      `json:"permissions"`
	OrganisationUser orgUserJSON    `json:"organisation_user"`
}

type orgUserJSON struct {
	IsOwner             bool   `json:"is_owner"`
	Pending             bool   `json:"pending"`
	JoinedAt            string `json:"joined_at"`
	NotificationEmailID *db.ID `json:"notification_email_id"`
}

// orgContext builds the context form for one membership.
func orgContext(a Access, o orgJSON, features map[string]any, joinedAt string, notify *int64) orgContextJSON {
	out := orgContextJSON{
		orgJSON: o, Features: features, Permissions: a.Permissions().Bools(AllPermissions),
		OrganisationUser: orgUserJSON{IsOwner: a.Owner, Pending: a.Pending, JoinedAt: joinedAt},
	}
	if notify != nil {
		out.OrganisationUser.NotificationEmailID = ptr(db.ID(*notify))
	}
	return out
}

// myOrganisations lists the caller's organisations, pending memberships
// included (with every permission false).
func (s *Server) myOrganisations(rq *request) error {
	var out []orgContextJSON
	err := s.store.ReadTx(rq.ctx, func(q *db.Queries) error {
		rows, err := q.OrganisationListForUser(rq.ctx, rq.user.ID)
		if err != nil {
			return err
		}
		access, err := accessAll(rq.ctx, q, rq.user.ID)
		if err != nil {
			return err
		}
		out = make([]orgContextJSON, len(rows))
		for i, r := range rows {
			features, err := s.orgFeatures(rq.ctx, q, r.Organisation.ID, r.MemberCount)
			if err != nil {
				return err
			}
			out[i] = orgContext(access[r.Organisation.ID], toOrg(r.Organisation, r.MemberCount), features, r.JoinedAt, r.NotificationEmailID)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}
