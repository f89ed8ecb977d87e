package server

import (
	"context"
	"math"
	"sort"

	"workspace/db"
)

// Permission is one bit of the permission catalogue. Bit positions are stored
// in permission_grants masks: never reorder, only append.
type Permission uint32

// PermSet is a set of permissions.
type PermSet = Permission

const (
	CreateInvite Permission = 1 << iota
	RevokeInvite
	CreateProjects
	AdminProjects
	ViewProjects
	ShareProjects
	ViewWorkitems
	CreateWorkitems
	ViewDocuments
	EditDocuments
	ManageOrganisation
	ManageRoles
	ManageTeams
	ManageWorkgroups
	ManageLocations
	ManageSystems
	ManageInductions
	ManageFleets

	permissionEnd
	AllPermissions = permissionEnd - 1
)

// permissionNames is the catalogue in wire form, in bit order.
var permissionNames = []string{
	"CREATE_INVITE", "REVOKE_INVITE", "CREATE_PROJECTS", "ADMIN_PROJECTS", "VIEW_PROJECTS",
	"SHARE_PROJECTS", "VIEW_WORKITEMS", "CREATE_WORKITEMS", "VIEW_DOCUMENTS", "EDIT_DOCUMENTS",
	"MANAGE_ORGANISATION", "MANAGE_ROLES", "MANAGE_TEAMS", "MANAGE_WORKGROUPS", "MANAGE_LOCATIONS",
	"MANAGE_SYSTEMS", "MANAGE_INDUCTIONS", "MANAGE_FLEETS",
}

var permissionByName = func() map[string]Permission {
	m := make(map[string]Permission, len(permissionNames))
	for i, n := range permissionNames {
		m[n] = 1 << i
	}
	return m
}()

// ProjectPermissions are the keys a project's permissions object carries.
const ProjectPermissions = ViewProjects | AdminProjects | ShareProjects | ViewWorkitems |
	CreateWorkitems | ViewDocuments | EditDocuments

// DefaultEveryone is what @everyone may do in a new organisation.
const DefaultEveryone = ViewProjects | ViewWorkitems | ViewDocuments

func (p Permission) Name() string {
	for i, n := range permissionNames {
		if p == 1<<i {
			return n
		}
	}
	return ""
}

// Each calls fn for every permission in the set, in catalogue order.
func (p PermSet) Each(fn func(Permission)) {
	for i := range permissionNames {
		if bit := Permission(1) << i; p&bit != 0 {
			fn(bit)
		}
	}
}

// Bools returns {NAME: bool} for every permission in keys.
func (p PermSet) Bools(keys PermSet) map[string]bool {
	out := make(map[string]bool)
	keys.Each(func(k Permission) { out[k.Name()] = p&k != 0 })
	return out
}

// Scope is a layer of grants, most specific first.
type Scope int

const (
	ScopePackage Scope = iota
	ScopeProject
	ScopeOrganisation
)

// Target is who a grant is for, in the order a layer consults them.
type Target int

const (
	TargetUser Target = iota
	TargetRole
	TargetEveryone
)

// Grant is one explicit grant that applies to the caller.
type Grant struct {
	Scope  Scope
	Target Target
	Rank   int64 // role rank, 0 highest; only for TargetRole
	Allow  PermSet
	Deny   PermSet
}

// Effective resolves the caller's permissions from the grants that apply to
// them. For each permission: in each layer (package, project, organisation),
// the user's own grant decides if it sets it; else the highest-ranked role
// that sets it; else @everyone; else the next layer. Unset everywhere: denied.
func Effective(grants []Grant) PermSet {
	sorted := append([]Grant(nil), grants...)
	sort.SliceStable(sorted, func(i, j int) bool {
		a, b := sorted[i], sorted[j]
		if a.Scope != b.Scope {
			return a.Scope < b.Scope
		}
		if a.Target != b.Target {
			return a.Target < b.Target
		}
		return a.Rank < b.Rank
	})
	var decided, allowed PermSet
	for _, g := range sorted {
		set := (g.Allow | g.Deny) &^ decided
		allowed |= g.Allow & set
		decided |= set
	}
	return allowed
}

// noRoles is the rank of a caller who holds no role: below every real role.
const noRoles = math.MaxInt64

// Access is what one caller may do in one organisation (and optionally one
// project and package), computed once per request and asked many times.
type Access struct {
	OrganisationID int64
	UserID         int64
	Owner          bool
	Member         bool // a member, pending or not
	Pending        bool
	TopRank        int64 // rank of the caller's highest role; noRoles if none
	perms          PermSet
}

// IsMember: a pending member counts as no member.
func (a Access) IsMember() bool { return a.Owner || (a.Member && !a.Pending) }

// Can reports whether the caller holds p. The owner holds everything.
func (a Access) Can(p Permission) bool {
	return a.Owner || (a.IsMember() && a.perms&p == p)
}

// Permissions is the caller's whole effective set.
func (a Access) Permissions() PermSet {
	if a.Owner {
		return AllPermissions
	}
	if !a.IsMember() {
		return 0
	}
	return a.perms
}

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

// accessIn loads and resolves the caller's access in an organisation, and in
// a project and package of it when those ids are non-zero. An absent or
// deleted organisation is db.ErrNotFound.
func accessIn(ctx context.Context, q *db.Queries, userID, orgID, projectID, packageID int64) (Access, error) {
	m, err := q.AccessMembership(ctx, db.AccessMembershipParams{UserID: userID, OrganisationID: orgID})
	if err != nil {
		return Access{}, db.Classify(err)
	}
	a := newAccess(orgID, userID, m.IsOwner, m.IsMember, m.Pending, m.TopRank)
	if !a.needsGrants() {
		return a, nil
	}
	rows, err := q.AccessGrants(ctx, db.AccessGrantsParams{OrganisationID: orgID, ProjectID: projectID, PackageID: packageID, UserID: userID})
	if err != nil {
		return Access{}, err
	}
	grants := make([]Grant, len(rows))
	for i, r := range rows {
		grants[i] = Grant{Scope: scopeOf(r.ScopeType), Target: targetOf(r.TargetType), Rank: r.RoleRank, Allow: PermSet(r.AllowMask), Deny: PermSet(r.DenyMask)}
	}
	a.perms = Effective(grants)
	if projectID != 0 || packageID != 0 {
		a.perms = withProjectImplications(a.perms)
	}
	return a, nil
}

// withProjectImplications: on a project or package, administering it
// implies viewing it (an administrator who could not see what it
// administers makes no sense).
func withProjectImplications(p PermSet) PermSet {
	if p&AdminProjects != 0 {
		p |= ViewProjects
	}
	return p
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
		grants[r.OrganisationID] = append(grants[r.OrganisationID], Grant{
			Scope: ScopeOrganisation, Target: targetOf(r.TargetType), Rank: r.RoleRank, Allow: PermSet(r.AllowMask), Deny: PermSet(r.DenyMask),
		})
	}
	out := make(map[int64]Access, len(ms))
	for _, m := range ms {
		a := newAccess(m.OrganisationID, userID, m.IsOwner, true, m.Pending, m.TopRank)
		if a.needsGrants() {
			a.perms = Effective(grants[m.OrganisationID])
		}
		out[m.OrganisationID] = a
	}
	return out, nil
}

func scopeOf(s string) Scope {
	switch s {
	case "package":
		return ScopePackage
	case "project":
		return ScopeProject
	}
	return ScopeOrganisation
}

func targetOf(s string) Target {
	switch s {
	case "user":
		return TargetUser
	case "role":
		return TargetRole
	}
	return TargetEveryone
}
