// Package perm is the permission catalogue and the pure resolver of the
// permission engine (docs/organisations.md): which bit is which
// permission, how the grants that apply to a caller decide what it holds,
// and whether a caller of a given standing holds a permission. It reads
// no database: the server loads a caller's membership and grants and asks
// this package what they come to (issue 34).
package perm

import (
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Permission is one bit of the catalogue. Bit positions are stored in
// permission_grants masks: never reorder, only append.
type Permission uint32

// Set is a set of permissions.
type Set = Permission

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

	end
	// All is every permission of the catalogue.
	All = end - 1
)

// Entry is one permission of the catalogue: its bit, its wire name and
// what it lets a member do, in words.
type Entry struct {
	Bit         Permission
	Name        string
	Description string
}

// Catalogue is every permission, in bit order. One table, so a name cannot
// drift from its bit; TestCatalogueIsPinned pins every pair against the
// spec.
var Catalogue = []Entry{
	{CreateInvite, "CREATE_INVITE", "create and change invites to the organisation"},
	{RevokeInvite, "REVOKE_INVITE", "revoke invites to the organisation"},
	{CreateProjects, "CREATE_PROJECTS", "create projects"},
	{AdminProjects, "ADMIN_PROJECTS", "administer projects and their packages, milestones and grants"},
	{ViewProjects, "VIEW_PROJECTS", "see projects"},
	{ShareProjects, "SHARE_PROJECTS", "share projects with other organisations and people"},
	{ViewWorkitems, "VIEW_WORKITEMS", "see work items"},
	{CreateWorkitems, "CREATE_WORKITEMS", "create and change work items"},
	{ViewDocuments, "VIEW_DOCUMENTS", "read documents, their revisions and exports"},
	{EditDocuments, "EDIT_DOCUMENTS", "create, edit, branch and fork documents"},
	{ManageOrganisation, "MANAGE_ORGANISATION", "change the organisation's settings, read its audit log"},
	{ManageRoles, "MANAGE_ROLES", "create roles, assign them and set permission grants"},
	{ManageTeams, "MANAGE_TEAMS", "manage teams, their members and toolbox meetings"},
	{ManageWorkgroups, "MANAGE_WORKGROUPS", "create, change and delete workgroups"},
	{ManageLocations, "MANAGE_LOCATIONS", "manage locations"},
	{ManageSystems, "MANAGE_SYSTEMS", "manage systems, prefixes, disciplines and document types"},
	{ManageInductions, "MANAGE_INDUCTIONS", "manage inductions and read their records"},
	{ManageFleets, "MANAGE_FLEETS", "manage fleets, assets and their catalogue"},
}

var byName = func() map[string]Permission {
	m := make(map[string]Permission, len(Catalogue))
	for _, c := range Catalogue {
		m[c.Name] = c.Bit
	}
	return m
}()

// ByName is the permission a wire name names.
func ByName(name string) (Permission, bool) {
	p, ok := byName[name]
	return p, ok
}

// Name is a single permission's wire name; "" for anything else (none, or
// a combination).
func (p Permission) Name() string {
	for _, c := range Catalogue {
		if p == c.Bit {
			return c.Name
		}
	}
	return ""
}

// Each calls fn for every permission in the set, in catalogue order.
func (p Set) Each(fn func(Permission)) {
	for _, c := range Catalogue {
		if p&c.Bit != 0 {
			fn(c.Bit)
		}
	}
}

// Bools returns {NAME: bool} for every permission in keys.
func (p Set) Bools(keys Set) Bools { return Bools{set: p, keys: keys} }

// Bools is a permissions object: each permission of keys, by name, true
// when set holds it. It encodes as the map would (names sorted) without
// building and sorting one per response: every project and document read
// carries one.
type Bools struct{ set, keys Set }

// permNamesSorted is the catalogue's permissions in name order.
var permNamesSorted = func() []Permission {
	var ps []Permission
	All.Each(func(p Permission) { ps = append(ps, p) })
	slices.SortFunc(ps, func(a, b Permission) int { return strings.Compare(a.Name(), b.Name()) })
	return ps
}()

func (b Bools) MarshalJSON() ([]byte, error) {
	out := make([]byte, 0, 32*len(permNamesSorted))
	out = append(out, '{')
	for _, p := range permNamesSorted {
		if p&b.keys == 0 {
			continue
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = append(out, '"')
		out = append(out, p.Name()...)
		out = append(out, '"', ':')
		out = strconv.AppendBool(out, p&b.set != 0)
	}
	return append(out, '}'), nil
}

// Scope is a layer of grants, most specific first.
type Scope int

const (
	ScopePackage Scope = iota
	ScopeProject
	// ScopeFleet: grants on one fleet (docs/assets.md); a request acts in a
	// fleet or in a project, never both, so its place among them is moot.
	ScopeFleet
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
	Allow  Set
	Deny   Set
}

// Before orders grants as the resolver reads them: narrowest scope first,
// then the user's own grant, then roles by rank, then @everyone.
func (a Grant) Before(b Grant) bool {
	if a.Scope != b.Scope {
		return a.Scope < b.Scope
	}
	if a.Target != b.Target {
		return a.Target < b.Target
	}
	return a.Rank < b.Rank
}

// Effective resolves the caller's permissions from the grants that apply to
// them. For each permission: in each layer (package, project, organisation),
// the user's own grant decides if it sets it; else the highest-ranked role
// that sets it; else @everyone; else the next layer. Unset everywhere: denied.
func Effective(grants []Grant) Set {
	sorted := append([]Grant(nil), grants...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Before(sorted[j]) })
	var decided, allowed Set
	for _, g := range sorted {
		set := (g.Allow | g.Deny) &^ decided
		allowed |= g.Allow & set
		decided |= set
	}
	return allowed
}

// WithProjectImplications: on a project or package (onProject),
// administering it implies viewing it (an administrator who could not see
// what it administers makes no sense). Only there: in the organisation and
// on a fleet (whose layer grants MANAGE_FLEETS alone) ADMIN_PROJECTS gives
// nothing more than it says.
func WithProjectImplications(onProject bool, p Set) Set {
	if onProject && p&AdminProjects != 0 {
		p |= ViewProjects
	}
	return p
}

// ProjectShare is what an accepted project share grants its recipient on
// that project and its documents (operations-data.md).
const ProjectShare = ViewProjects | ViewDocuments

// Standing is a caller's standing in one organisation (and the scopes of
// it a request acts in), all the resolver needs to answer what it holds.
type Standing struct {
	Owner   bool
	Member  bool // a member, pending or not
	Pending bool
	// Perms is what the caller's grants come to (Resolve); a non-member's
	// and a pending member's count for nothing.
	Perms Set
	// Shared is what a non-member holds through an accepted share of the
	// project it acts on (ProjectShare).
	Shared Set
}

// Resolve is the standing of a caller with the given membership whose
// applicable grants are grants: Perms is their Effective set, with the
// project implications when the request acts on a project or package.
func Resolve(owner, member, pending bool, grants []Grant, onProject bool) Standing {
	s := Standing{Owner: owner, Member: member, Pending: pending}
	if s.IsMember() && !owner {
		s.Perms = WithProjectImplications(onProject, Effective(grants))
	}
	return s
}

// IsMember: a pending member counts as no member.
func (s Standing) IsMember() bool { return s.Owner || (s.Member && !s.Pending) }

// Holds reports whether the caller holds p (all of p, for a set; 0 asks
// for membership only). The owner holds everything; a member what its
// grants allow; anyone else only what a project share gives, and never
// membership.
func (s Standing) Holds(p Permission) bool {
	switch {
	case s.Owner:
		return true
	case !s.IsMember():
		return p != 0 && s.Shared&p == p
	}
	return s.Perms&p == p
}

// Permissions is the caller's whole effective set.
func (s Standing) Permissions() Set {
	switch {
	case s.Owner:
		return All
	case !s.IsMember():
		return s.Shared
	}
	return s.Perms
}
