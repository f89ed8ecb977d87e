package server

import (
	"context"
	"fmt"
	"math"

	"workspace/db"
	"workspace/server/perm"
)

// The permission catalogue and its resolver are server/perm's (no
// database there); these names keep the server's code as it was.
type (
	// Permission is one bit of the permission catalogue.
	Permission = perm.Permission
	// PermSet is a set of permissions.
	PermSet = perm.Set
)

const (
	CreateInvite       = perm.CreateInvite
	RevokeInvite       = perm.RevokeInvite
	CreateProjects     = perm.CreateProjects
	AdminProjects      = perm.AdminProjects
	ViewProjects       = perm.ViewProjects
	ShareProjects      = perm.ShareProjects
	ViewWorkitems      = perm.ViewWorkitems
	CreateWorkitems    = perm.CreateWorkitems
	ViewDocuments      = perm.ViewDocuments
	EditDocuments      = perm.EditDocuments
	ManageOrganisation = perm.ManageOrganisation
	ManageRoles        = perm.ManageRoles
	ManageTeams        = perm.ManageTeams
	ManageWorkgroups   = perm.ManageWorkgroups
	ManageLocations    = perm.ManageLocations
	ManageSystems      = perm.ManageSystems
	ManageInductions   = perm.ManageInductions
	ManageFleets       = perm.ManageFleets
	AllPermissions     = perm.All
)

// ProjectPermissions are the keys a project's permissions object carries.
const ProjectPermissions = ViewProjects | AdminProjects | ShareProjects | ViewWorkitems |
	CreateWorkitems | ViewDocuments | EditDocuments

// DefaultEveryone is what @everyone may do in a new organisation.
const DefaultEveryone = ViewProjects | ViewWorkitems | ViewDocuments

// PermBools is a permissions object (perm.Bools): each permission of a
// set's keys, by name, true when the set holds it.
type PermBools = perm.Bools

// Scope is a layer of grants, most specific first (perm.Scope).
type Scope = perm.Scope

const (
	ScopePackage      = perm.ScopePackage
	ScopeProject      = perm.ScopeProject
	ScopeFleet        = perm.ScopeFleet
	ScopeOrganisation = perm.ScopeOrganisation
)

// scopeNames maps the stored scope_type to its layer. A layer stored in
// permission_grants but missing here makes grantOf fail, so a new layer
// cannot be silently read as the organisation's (fail closed).
var scopeNames = map[string]Scope{
	"package": ScopePackage, "project": ScopeProject, "fleet": ScopeFleet, "organisation": ScopeOrganisation,
}

// Target is who a grant is for (perm.Target).
type Target = perm.Target

const (
	TargetUser     = perm.TargetUser
	TargetRole     = perm.TargetRole
	TargetEveryone = perm.TargetEveryone
)

// targetNames maps the stored target_type to its target; "organisation" is
// @everyone (the organisation's own id names it).
var targetNames = map[string]Target{
	"user": TargetUser, "role": TargetRole, "organisation": TargetEveryone,
}

// grantOf is the one conversion of a stored grant row into a Grant. An
// unknown scope or target is an error, never a guess.
func grantOf(scopeType, targetType string, rank, allow, deny int64) (Grant, error) {
	sc, ok := scopeNames[scopeType]
	if !ok {
		return Grant{}, fmt.Errorf("authz: grant of unknown scope %q", scopeType)
	}
	tg, ok := targetNames[targetType]
	if !ok {
		return Grant{}, fmt.Errorf("authz: grant for unknown target %q", targetType)
	}
	return Grant{Scope: sc, Target: tg, Rank: rank, Allow: PermSet(allow), Deny: PermSet(deny)}, nil
}

// Grant is one explicit grant that applies to the caller (perm.Grant).
type Grant = perm.Grant

// Effective is perm.Effective: the caller's permissions from the grants
// that apply to it.
func Effective(grants []Grant) PermSet { return perm.Effective(grants) }

// noRoles is the rank of a caller who holds no role: below every real role.
const noRoles = math.MaxInt64

// Scopes are the layers below the organisation a request acts in; a zero id
// is an absent layer. A new layer (workgroup, document, fleet) is a field
// here, a Scope with its scopeNames row, and its id in ids: nothing else.
type Scopes struct {
	Project int64
	Package int64
	Fleet   int64
	// Document is the document a request acts on. Documents carry no
	// grants (no layer in ids); it is what a non-member's accepted shares
	// are looked up by (Access.RequireDoc, docs/documents.md "Shares").
	Document int64
}

// layered reports whether a grant layer below the organisation applies.
func (sc Scopes) layered() bool { return sc.Project != 0 || sc.Package != 0 || sc.Fleet != 0 }

// ids are the scope ids whose grants apply, the organisation's included.
func (sc Scopes) ids(orgID int64) []int64 {
	ids := []int64{orgID}
	for _, id := range []int64{sc.Project, sc.Package, sc.Fleet} {
		if id != 0 {
			ids = append(ids, id)
		}
	}
	return ids
}

// where names the innermost layer, for refusal messages.
func (sc Scopes) where() string {
	switch {
	case sc.Package != 0:
		return "on this package"
	case sc.Project != 0:
		return "on this project"
	case sc.Fleet != 0:
		return "on this fleet"
	}
	return "in this organisation"
}

// Access is what one caller may do in one organisation (and optionally
// further scopes of it), computed once per request and asked many times.
// It carries the organisation row, so handlers need not read it again.
type Access struct {
	Org            db.Organisation
	OrganisationID int64
	UserID         int64
	Owner          bool
	Member         bool // a member, pending or not
	Pending        bool
	TopRank        int64 // rank of the caller's highest role; noRoles if none
	Scopes         Scopes
	// Shared: the scopes a non-member holds on Scopes.Document through
	// accepted shares; zero for members (their permissions decide).
	Shared DocScope
	perms  PermSet
	// viaShare is what a non-member holds through an accepted share of the
	// project it acts on (ProjectSharePermissions), read afresh each time.
	viaShare PermSet
}

// ProjectSharePermissions is what an accepted project share grants its
// recipient on that project and its documents (operations-data.md).
const ProjectSharePermissions = perm.ProjectShare

// IsMember: a pending member counts as no member.
func (a Access) IsMember() bool { return a.standing().IsMember() }

// standing is the caller's standing as the resolver (server/perm) takes it.
func (a Access) standing() perm.Standing {
	return perm.Standing{Owner: a.Owner, Member: a.Member, Pending: a.Pending, Perms: a.perms, Shared: a.viaShare}
}

// Can reports whether the caller holds p. The owner holds everything.
func (a Access) Can(p Permission) bool { return a.standing().Holds(p) }

// Require is Can as an answer: nil, or 403 saying what is missing. Every
// refusal of the permission engine is worded here. Require(0) asks for
// membership only.
func (a Access) Require(p Permission) error {
	if !a.IsMember() {
		if a.Can(p) {
			return nil
		}
		return forbidden("You are not a member of this organisation.")
	}
	if !a.Can(p) {
		return forbidden("You need the %s permission %s.", p.Name(), a.Scopes.where())
	}
	return nil
}

// RequireOr passes a member for whom alt holds, or who holds p: rules such
// as "a team leader or MANAGE_TEAMS".
func (a Access) RequireOr(alt bool, p Permission) error {
	if alt && a.IsMember() {
		return nil
	}
	return a.Require(p)
}

// RequireSelfOr passes the user concerned, or a holder of p: rules such as
// "the user themself or MANAGE_INDUCTIONS".
func (a Access) RequireSelfOr(userID int64, p Permission) error {
	return a.RequireOr(userID == a.UserID, p)
}

// DocScope is one scope of a document share (documents.md: view, edit,
// branch, fork, revisions, export). Members reach a document through their
// permissions, one per scope (docScopePermission); a non-member only
// through the scopes of its accepted shares of that very document.
type DocScope uint8

const (
	DocView DocScope = 1 << iota
	DocEdit
	DocBranch
	DocFork
	DocRevisions
	DocExport
)

// docScopeNames names each scope as the share object's field does.
var docScopeNames = []struct {
	Scope DocScope
	Name  string
}{
	{DocView, "scope_view"}, {DocEdit, "scope_edit"}, {DocBranch, "scope_branch"},
	{DocFork, "scope_fork"}, {DocRevisions, "scope_revisions"}, {DocExport, "scope_export"},
}

// docScopePermission is the permission a member needs for one scope:
// reading (view, revisions, export) VIEW_DOCUMENTS; changing (edit, branch,
// fork) EDIT_DOCUMENTS. Anything else, a combination included, has none
// (false): it is refused, never guessed.
func docScopePermission(s DocScope) (Permission, bool) {
	switch s {
	case DocView, DocRevisions, DocExport:
		return ViewDocuments, true
	case DocEdit, DocBranch, DocFork:
		return EditDocuments, true
	}
	return 0, false
}

// RequireDoc is Require for one scope of the document in a.Scopes: a
// member needs the scope's permission; a non-member needs an accepted
// document share that grants the scope, or the scope's permission through
// a project share (Require knows those).
func (a Access) RequireDoc(s DocScope) error {
	p, ok := docScopePermission(s)
	if !ok {
		return forbidden("That is not a document scope.")
	}
	if a.IsMember() || a.Shared == 0 {
		return a.Require(p)
	}
	if a.Shared&s == s || a.Can(p) {
		return nil
	}
	for _, n := range docScopeNames {
		if n.Scope == s {
			return forbidden("Your share of this document does not include %s.", n.Name)
		}
	}
	return forbidden("That is not a document scope.")
}

// CanDoc is RequireDoc as a boolean.
func (a Access) CanDoc(s DocScope) bool { return a.RequireDoc(s) == nil }

// Permissions is the caller's whole effective set.
func (a Access) Permissions() PermSet { return a.standing().Permissions() }

// Outranks reports whether the caller ranks strictly above a role of the
// given rank, which it must to change or assign that role.
func (a Access) Outranks(rank int64) bool {
	return a.Owner || a.TopRank < rank
}

// newAccess is the caller's standing in an organisation before its grants
// are resolved; topRank < 0 means it holds no role.
func newAccess(orgID, userID int64, owner, member, pending bool, topRank int64) Access {
	if topRank < 0 {
		topRank = noRoles
	}
	return Access{OrganisationID: orgID, UserID: userID, Owner: owner, Member: member, Pending: pending, TopRank: topRank}
}

// needsGrants reports whether the permissions come from grants: the owner
// holds everything and a non-member (or pending member) nothing.
func (a Access) needsGrants() bool { return !a.Owner && a.IsMember() }

// authorize is the one access entry point: the caller's access in an
// organisation and the given scopes of it. An absent or deleted
// organisation is db.ErrNotFound; the caller's loader maps it to the row's
// status. Handlers then ask Require (or Can) of the result.
func authorize(ctx context.Context, q *db.Queries, userID, orgID int64, sc Scopes) (Access, error) {
	noteAuditOrg(ctx, orgID)
	if a, ok := reusedRouteAccess(ctx, q, userID, orgID, sc); ok {
		return a, nil
	}
	a, err := resolveAuthorize(ctx, q, userID, orgID, sc)
	if err == nil {
		keepRouteAccess(ctx, q, userID, orgID, sc, a)
	}
	return a, err
}

// resolveAuthorize is authorize's answer resolved afresh (through the
// access cache where it may serve).
func resolveAuthorize(ctx context.Context, q *db.Queries, userID, orgID int64, sc Scopes) (Access, error) {
	var a Access
	var err error
	if c, gen := cachedAccess(ctx, q); c != nil {
		a, err = c.authorize(ctx, q, gen, userID, orgID, sc)
	} else if c := writeAccessCache(ctx, q); c != nil && !sc.layered() {
		var st standing
		if st, err = c.writeStanding(ctx, q, userID, orgID); err == nil {
			a = st.access
			a.Scopes = sc
		}
	} else {
		a, err = resolveAccess(ctx, q, userID, orgID, sc)
	}
	if err != nil || a.IsMember() {
		return a, err
	}
	// What a non-member holds through shares is read afresh on every
	// request, never cached: revoking a share ends its access on the very
	// next one.
	if sc.Project != 0 {
		held, err := q.ProjectShareHeld(ctx, db.ProjectShareHeldParams{ProjectID: sc.Project, UserID: &userID})
		if err != nil {
			return a, err
		}
		if held {
			a.viaShare = ProjectSharePermissions
		}
	}
	if sc.Document != 0 {
		a.Shared, err = sharedScopes(ctx, q, userID, sc.Document)
	}
	return a, err
}

// sharedScopes is what a non-member holds on a document through its
// accepted shares: the union of the scopes of those addressed to it, and of
// those addressed to an organisation it is a member of, when the share
// propagates to the organisation's users or the caller holds
// MANAGE_ORGANISATION there (docs/documents.md "Shares"). Read afresh on
// every request, never cached, so a revoked share ends access at once.
func sharedScopes(ctx context.Context, q *db.Queries, userID, docID int64) (DocScope, error) {
	rows, err := q.DocumentShareGrantsFor(ctx, db.DocumentShareGrantsForParams{DocumentID: docID, UserID: &userID})
	if err != nil {
		return 0, err
	}
	var held DocScope
	for _, r := range rows {
		if r.RecipientOrganisationID != nil && !r.ShareToUsersOrganisation {
			ra, err := resolveAccess(ctx, q, userID, *r.RecipientOrganisationID, Scopes{})
			if db.IsNotFound(err) {
				continue
			}
			if err != nil {
				return 0, err
			}
			if !ra.Can(ManageOrganisation) {
				continue
			}
		}
		held |= shareScopes(r)
	}
	return held, nil
}

// shareScopes are the scopes a share row grants: its six columns, nothing
// else.
func shareScopes(r db.DocumentShare) DocScope {
	var s DocScope
	for _, c := range []struct {
		on    bool
		scope DocScope
	}{{r.ScopeView, DocView}, {r.ScopeEdit, DocEdit}, {r.ScopeBranch, DocBranch}, {r.ScopeFork, DocFork},
		{r.ScopeRevisions, DocRevisions}, {r.ScopeExport, DocExport}} {
		if c.on {
			s |= c.scope
		}
	}
	return s
}

// resolveAccess reads and resolves what authorize returns.
func resolveAccess(ctx context.Context, q *db.Queries, userID, orgID int64, sc Scopes) (Access, error) {
	m, err := q.AccessMembership(ctx, db.AccessMembershipParams{UserID: userID, OrganisationID: orgID})
	if err != nil {
		return Access{}, db.Classify(err)
	}
	a := newAccess(orgID, userID, m.IsOwner, m.IsMember, m.Pending, m.TopRank)
	a.Org, a.Scopes = m.Organisation, sc
	if !a.needsGrants() {
		return a, nil
	}
	rows, err := q.AccessGrants(ctx, db.AccessGrantsParams{OrganisationID: orgID, ScopeIdsJson: idsJSON(sc.ids(orgID)), UserID: userID})
	if err != nil {
		return Access{}, err
	}
	grants := make([]Grant, len(rows))
	for i, r := range rows {
		if grants[i], err = grantOf(r.ScopeType, r.TargetType, r.RoleRank, r.AllowMask, r.DenyMask); err != nil {
			return Access{}, err
		}
	}
	a.perms = withProjectImplications(sc, Effective(grants))
	return a, nil
}

// withProjectImplications is perm.WithProjectImplications for a request
// acting in sc.
func withProjectImplications(sc Scopes, p PermSet) PermSet {
	return perm.WithProjectImplications(sc.Project != 0 || sc.Package != 0, p)
}

// accessAll resolves the caller's organisation-level access in every live
// organisation it belongs to (pending memberships included), in two reads
// however many there are: for lists that would otherwise call accessIn once
// per organisation.
func accessAll(ctx context.Context, q *db.Queries, userID int64) (map[int64]Access, error) {
	ms, err := q.AccessMembershipsForUser(ctx, userID)
	if err != nil {
		return nil, err
	}
	rows, err := q.AccessGrantsForUser(ctx, userID)
	if err != nil {
		return nil, err
	}
	grants := map[int64][]Grant{}
	for _, r := range rows {
		g, err := grantOf("organisation", r.TargetType, r.RoleRank, r.AllowMask, r.DenyMask)
		if err != nil {
			return nil, err
		}
		grants[r.OrganisationID] = append(grants[r.OrganisationID], g)
	}
	out := make(map[int64]Access, len(ms))
	for _, m := range ms {
		a := newAccess(m.Organisation.ID, userID, m.IsOwner, true, m.Pending, m.TopRank)
		a.Org = m.Organisation
		if a.needsGrants() {
			a.perms = Effective(grants[m.Organisation.ID])
		}
		out[m.Organisation.ID] = a
	}
	return out, nil
}
