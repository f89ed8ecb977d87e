package server

import (
	"net/http"
	"sort"
	"strconv"

	"workspace/db"
)

// GET /organisations/{id}/members/{user}/access (issue 16): "why can this
// member do X?". Each permission's effective value in the organisation, or
// in a project or package of it (?project=, ?package=) or in one of its
// fleets (?fleet=), and the grant that decided it, resolved exactly as
// Effective resolves them: in each layer, innermost first, the member's own
// grant, then their highest-ranked role that sets the permission, then
// @everyone. docs/organisations.md.

type accessRoleJSON struct {
	ID   db.ID  `json:"id"`
	Name string `json:"name"`
}

type decidingGrantJSON struct {
	Scope   string          `json:"scope"` // organisation, project, package, fleet
	ScopeID db.ID           `json:"scope_id"`
	Target  string          `json:"target"` // user, role, everyone
	Role    *accessRoleJSON `json:"role"`   // when target is role (or @everyone's role)
	Value   string          `json:"value"`  // allow or deny
}

type permissionAccessJSON struct {
	Allowed bool `json:"allowed"`
	// Reason: "grant" (DecidedBy says which), "owner", "unset" (no grant
	// sets it: denied), "implied" (ADMIN_PROJECTS gives VIEW_PROJECTS on a
	// project or package, withProjectImplications), "not a member" (pending).
	Reason    string             `json:"reason"`
	DecidedBy *decidingGrantJSON `json:"decided_by"`
}

type memberAccessJSON struct {
	UserID      db.ID                           `json:"user_id"`
	Owner       bool                            `json:"owner"`
	Pending     bool                            `json:"pending"`
	Scope       string                          `json:"scope"`
	ScopeID     db.ID                           `json:"scope_id"`
	Permissions map[string]permissionAccessJSON `json:"permissions"`
}

// explainedGrant is a Grant with what names it.
type explainedGrant struct {
	Grant
	targetID int64
}

// explain resolves like Effective and returns, for each permission some
// grant sets, the grant that decided it.
func explain(grants []explainedGrant) map[Permission]explainedGrant {
	sorted := append([]explainedGrant(nil), grants...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Before(sorted[j].Grant) })
	out := map[Permission]explainedGrant{}
	var decided PermSet
	for _, g := range sorted {
		set := (g.Allow | g.Deny) &^ decided
		set.Each(func(p Permission) { out[p] = g })
		decided |= set
	}
	return out
}

var scopeWireNames = map[Scope]string{ScopeOrganisation: "organisation", ScopeProject: "project", ScopePackage: "package", ScopeFleet: "fleet"}
var targetWireNames = map[Target]string{TargetUser: "user", TargetRole: "role", TargetEveryone: "everyone"}

// queryID reads an optional id query parameter (0 when absent).
func (rq *request) queryID(name string) (int64, error) {
	v := rq.r.URL.Query().Get(name)
	if v == "" {
		return 0, nil
	}
	id, err := strconv.ParseInt(v, 10, 64)
	if err != nil || id <= 0 {
		return 0, fieldError(name, "must be an id")
	}
	return id, nil
}

func (s *Server) memberAccess(rq *request) error {
	orgID, userID, err := memberPath(rq)
	if err != nil {
		return err
	}
	projectID, err := rq.queryID("project")
	if err != nil {
		return err
	}
	packageID, err := rq.queryID("package")
	if err != nil {
		return err
	}
	fleetID, err := rq.queryID("fleet")
	if err != nil {
		return err
	}
	// A request acts in a fleet or in a project, never both (authz.go
	// ScopeFleet), so no layering of the two is explained either.
	if fleetID != 0 && (projectID != 0 || packageID != 0) {
		return fieldError("fleet", "give a fleet, or a project or package, not both")
	}
	var out memberAccessJSON
	err = s.store.ReadTx(rq.ctx, func(q *db.Queries) error {
		caller, err := orgAccess(rq, q, orgID, http.StatusNotFound, 0)
		if err != nil {
			return err
		}
		// A member may ask about themself; about others only with
		// MANAGE_ROLES (who decides those grants).
		if userID != rq.user.ID {
			if err := caller.Require(ManageRoles); err != nil {
				return err
			}
		}
		sc := Scopes{}
		out.Scope, out.ScopeID = "organisation", db.ID(orgID)
		if fleetID != 0 {
			fl, err := q.FleetGet(rq.ctx, fleetID)
			if db.IsNotFound(err) || (err == nil && fl.OrganisationID != orgID) {
				return fieldError("fleet", "is not a fleet of this organisation")
			} else if err != nil {
				return err
			}
			sc = Scopes{Fleet: fl.ID}
			out.Scope, out.ScopeID = "fleet", db.ID(fl.ID)
		} else if packageID != 0 {
			pk, err := q.PackageGet(rq.ctx, packageID)
			if db.IsNotFound(err) || (err == nil && pk.OrganisationID != orgID) {
				return fieldError("package", "is not a package of this organisation")
			} else if err != nil {
				return err
			}
			if projectID != 0 && projectID != pk.ProjectID {
				return fieldError("project", "is not the package's project")
			}
			sc = Scopes{Project: pk.ProjectID, Package: pk.ID}
			out.Scope, out.ScopeID = "package", db.ID(pk.ID)
		} else if projectID != 0 {
			p, err := q.ProjectGet(rq.ctx, projectID)
			if db.IsNotFound(err) || (err == nil && p.OrganisationID != orgID) {
				return fieldError("project", "is not a project of this organisation")
			} else if err != nil {
				return err
			}
			sc = Scopes{Project: p.ID}
			out.Scope, out.ScopeID = "project", db.ID(p.ID)
		}
		m, err := q.AccessMembership(rq.ctx, db.AccessMembershipParams{UserID: userID, OrganisationID: orgID})
		if err != nil {
			return db.Classify(err)
		}
		if !m.IsMember && !m.IsOwner {
			return notFound("The user is not a member of this organisation.")
		}
		out.UserID, out.Owner, out.Pending = db.ID(userID), m.IsOwner, m.Pending && !m.IsOwner
		out.Permissions = map[string]permissionAccessJSON{}
		switch {
		case m.IsOwner:
			AllPermissions.Each(func(p Permission) { out.Permissions[p.Name()] = permissionAccessJSON{Allowed: true, Reason: "owner"} })
			return nil
		case m.Pending:
			AllPermissions.Each(func(p Permission) { out.Permissions[p.Name()] = permissionAccessJSON{Reason: "not a member"} })
			return nil
		}
		rows, err := q.AccessGrants(rq.ctx, db.AccessGrantsParams{OrganisationID: orgID, ScopeIdsJson: idsJSON(sc.ids(orgID)), UserID: userID})
		if err != nil {
			return err
		}
		grants := make([]explainedGrant, len(rows))
		plain := make([]Grant, len(rows))
		for i, r := range rows {
			g, err := grantOf(r.ScopeType, r.TargetType, r.RoleRank, r.AllowMask, r.DenyMask)
			if err != nil {
				return err
			}
			grants[i], plain[i] = explainedGrant{Grant: g, targetID: r.TargetID}, g
		}
		deciding := explain(grants)
		effective := withProjectImplications(sc, Effective(plain))
		scopeIDs := map[Scope]int64{ScopeOrganisation: orgID, ScopeProject: sc.Project, ScopePackage: sc.Package, ScopeFleet: sc.Fleet}
		roleNames := map[int64]string{}
		var fail error
		AllPermissions.Each(func(p Permission) {
			pa := permissionAccessJSON{Allowed: effective&p != 0, Reason: "unset"}
			if g, ok := deciding[p]; ok {
				d := &decidingGrantJSON{Scope: scopeWireNames[g.Scope], ScopeID: db.ID(scopeIDs[g.Scope]), Target: targetWireNames[g.Target], Value: "deny"}
				if g.Allow&p != 0 {
					d.Value = "allow"
				}
				if g.Target == TargetRole || g.Target == TargetEveryone {
					roleID := g.targetID
					name, ok := roleNames[roleID]
					if !ok {
						r, err := q.RoleGet(rq.ctx, roleID)
						if err != nil && fail == nil {
							fail = err
						}
						name, roleNames[roleID] = r.Name, r.Name
					}
					d.Role = &accessRoleJSON{ID: db.ID(roleID), Name: name}
				}
				pa.Reason, pa.DecidedBy = "grant", d
			}
			if pa.Allowed && (pa.DecidedBy == nil || pa.DecidedBy.Value == "deny") {
				pa.Reason = "implied" // VIEW_PROJECTS from ADMIN_PROJECTS on a project or package
			}
			out.Permissions[p.Name()] = pa
		})
		return fail
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}
