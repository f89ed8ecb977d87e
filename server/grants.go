package server

import (
	"context"
	"sort"

	"workspace/db"
	"workspace/server/perm"
)

// Grant types on the wire.
const (
	grantAllow   = "allow"
	grantDeny    = "deny"
	grantInherit = "inherit"
)

// grantChange is a parsed permissions object: which permissions to allow,
// deny, or return to inherit (remove the explicit grant).
type grantChange struct {
	allow, deny, inherit PermSet
}

// touched is every permission the change names.
func (c grantChange) touched() PermSet { return c.allow | c.deny | c.inherit }

// parseGrantChange reads {"PERMISSION_NAME": "allow"|"deny"|"inherit"}.
// keys limits which permissions may be named (AllPermissions for an
// organisation, ProjectPermissions for a project or package). A missing
// object is a 400, as every permissions endpoint requires it.
func parseGrantChange(field string, m map[string]string, keys PermSet) (grantChange, error) {
	if m == nil {
		return grantChange{}, fieldError(field, "is required")
	}
	var c grantChange
	names := make([]string, 0, len(m))
	for name := range m {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		p, ok := perm.ByName(name)
		if !ok || keys&p == 0 {
			return grantChange{}, fieldError(field+"."+name, "is not a permission that can be granted here")
		}
		switch m[name] {
		case grantAllow:
			c.allow |= p
		case grantDeny:
			c.deny |= p
		case grantInherit:
			c.inherit |= p
		default:
			return grantChange{}, fieldError(field+"."+name, `must be "allow", "deny" or "inherit"`)
		}
	}
	return c, nil
}

// apply returns the masks after the change.
func (c grantChange) apply(allow, deny PermSet) (PermSet, PermSet) {
	t := c.touched()
	return allow&^t | c.allow, deny&^t | c.deny
}

// checkGrantable enforces the escalation rule: a caller cannot change a
// permission it does not hold itself (the owner is exempt).
func checkGrantable(a Access, c grantChange) error {
	if a.Owner {
		return nil
	}
	if missing := c.touched() &^ a.Permissions(); missing != 0 {
		var name string
		missing.Each(func(p Permission) {
			if name == "" {
				name = p.Name()
			}
		})
		return forbidden("You cannot grant or deny %s, which you do not hold.", name)
	}
	return nil
}

// grantNames renders masks as {"NAME": "allow"|"deny"}: explicit grants only.
func grantNames(allow, deny PermSet) map[string]string {
	out := map[string]string{}
	allow.Each(func(p Permission) { out[p.Name()] = grantAllow })
	deny.Each(func(p Permission) { out[p.Name()] = grantDeny })
	return out
}

// grantBody is the body of every permissions endpoint (organisation,
// project, package).
type grantBody struct {
	Permissions map[string]string `json:"permissions"`
}

// grantJSON is the permission grant object.
type grantJSON struct {
	ID          db.ID             `json:"id"`
	Type        string            `json:"type"`
	Permissions map[string]string `json:"permissions"`
}

func toGrant(g db.PermissionGrant) grantJSON {
	return grantJSON{ID: db.ID(g.TargetID), Type: g.TargetType, Permissions: grantNames(PermSet(g.AllowMask), PermSet(g.DenyMask))}
}

// grantTarget says what a target id names in an organisation: the
// organisation itself (@everyone), one of its roles, or one of its members.
// Anything else is db.ErrNotFound.
type grantTarget struct {
	Type string // "organisation", "role" or "user"
	// Rank is the role's rank, everyoneRank for @everyone, and for a member
	// the rank of its highest role (noRoles when it holds none).
	Rank int64
	// Owner: the target is the organisation's owner, who holds every
	// permission whatever grants say.
	Owner bool
}

func resolveGrantTarget(ctx context.Context, q *db.Queries, orgID, targetID int64) (grantTarget, error) {
	if targetID == orgID {
		return grantTarget{Type: "organisation", Rank: everyoneRank}, nil
	}
	t, err := q.GrantTargetLookup(ctx, db.GrantTargetLookupParams{OrganisationID: orgID, TargetID: targetID})
	if err != nil {
		return grantTarget{}, db.Classify(err)
	}
	return grantTarget{Type: t.TargetType, Rank: t.RoleRank, Owner: t.IsOwner}, nil
}

// saveGrant applies a change to the explicit grant of target in scope,
// removing the row when nothing explicit is left.
func saveGrant(ctx context.Context, q *db.Queries, orgID int64, scopeType string, scopeID int64, targetType string, targetID int64, c grantChange) (db.PermissionGrant, error) {
	cur, err := q.GrantGet(ctx, db.GrantGetParams{ScopeID: scopeID, TargetID: targetID})
	if err != nil && !db.IsNotFound(err) {
		return db.PermissionGrant{}, err
	}
	allow, deny := c.apply(PermSet(cur.AllowMask), PermSet(cur.DenyMask))
	g := db.PermissionGrant{OrganisationID: orgID, ScopeType: scopeType, ScopeID: scopeID, TargetType: targetType, TargetID: targetID, AllowMask: int64(allow), DenyMask: int64(deny)}
	if allow|deny == 0 {
		return g, q.GrantDelete(ctx, db.GrantDeleteParams{ScopeID: scopeID, TargetID: targetID})
	}
	return g, q.GrantPut(ctx, db.GrantPutParams{
		OrganisationID: orgID, ScopeType: scopeType, ScopeID: scopeID,
		TargetType: targetType, TargetID: targetID, AllowMask: int64(allow), DenyMask: int64(deny),
	})
}

// rankRule says which grant targets the caller must outrank.
type rankRule int

const (
	// rankEveryTarget (organisation grants, MANAGE_ROLES): a role by its
	// rank, a member like its highest role, @everyone as the lowest role.
	rankEveryTarget rankRule = iota
	// rankRolesOnly (project and package grants, ADMIN_PROJECTS): only role
	// targets; a project's administrator may set its members' and
	// @everyone's grants on it whatever their rank.
	rankRolesOnly
)

// changeGrant is the shared core of every permissions endpoint, run inside
// the request's transaction once the caller's access a in the scope has
// been checked: the target must be a role, member or @everyone of the
// organisation (404), the caller must outrank it as rule says and hold every
// permission it changes (403), and then the grant is saved.
func changeGrant(ctx context.Context, q *db.Queries, a Access, scopeType string, scopeID, targetID int64, change grantChange, rule rankRule) (grantJSON, error) {
	t, err := resolveGrantTarget(ctx, q, a.OrganisationID, targetID)
	if db.IsNotFound(err) {
		return grantJSON{}, notFound("No role, member or @everyone of this organisation has that id.")
	}
	if err != nil {
		return grantJSON{}, err
	}
	// Grants on the owner change nothing and would only mislead whoever
	// reads the list later; only the owner may write them (and need not).
	if t.Owner && !a.Owner {
		return grantJSON{}, forbidden("You cannot change grants of the organisation's owner.")
	}
	// A member without roles ranks with nobody (noRoles): nothing to outrank.
	ranked := t.Type == "role" || (rule == rankEveryTarget && t.Rank != noRoles)
	if ranked && !a.Outranks(t.Rank) {
		return grantJSON{}, forbidden("You cannot change grants of a role ranked at or above your own highest role.")
	}
	if err := checkGrantable(a, change); err != nil {
		return grantJSON{}, err
	}
	g, err := saveGrant(ctx, q, a.OrganisationID, scopeType, scopeID, t.Type, targetID, change)
	if err != nil {
		return grantJSON{}, err
	}
	return toGrant(g), nil
}
