package server

import (
	"context"
	"net/http"
	"strings"

	"workspace/db"
)

// roleJSON is the role object; permissions maps permission names to
// "allow" or "deny" (explicit organisation grants only).
type roleJSON struct {
	ID             db.ID             `json:"id"`
	OrganisationID db.ID             `json:"organisation_id"`
	Name           string            `json:"name"`
	Description    string            `json:"description"`
	Order          int64             `json:"order"`
	Permissions    map[string]string `json:"permissions"`
}

// isEveryone reports whether r is the organisation's @everyone role.
func isEveryone(r db.Role) bool { return r.ID == r.OrganisationID }

// roleLister renders roles of one organisation: it knows the explicit
// organisation grants and how many ordinary roles there are, so @everyone
// shows the order just after the last of them.
type roleLister struct {
	grants map[int64]db.PermissionGrant
	count  int64
}

func newRoleLister(ctx context.Context, q *db.Queries, orgID int64) (roleLister, error) {
	gs, err := q.GrantListForScope(ctx, orgID)
	if err != nil {
		return roleLister{}, err
	}
	n, err := q.RoleCount(ctx, orgID)
	if err != nil {
		return roleLister{}, err
	}
	l := roleLister{grants: make(map[int64]db.PermissionGrant, len(gs)), count: n}
	for _, g := range gs {
		l.grants[g.TargetID] = g
	}
	return l, nil
}

func (l roleLister) role(r db.Role) roleJSON {
	order := r.SortOrder
	if isEveryone(r) {
		order = l.count
	}
	g := l.grants[r.ID]
	return roleJSON{
		ID: db.ID(r.ID), OrganisationID: db.ID(r.OrganisationID), Name: r.Name, Description: r.Description,
		Order: order, Permissions: grantNames(PermSet(g.AllowMask), PermSet(g.DenyMask)),
	}
}

// loadRole renders one role.
func loadRole(ctx context.Context, q *db.Queries, r db.Role) (roleJSON, error) {
	l, err := newRoleLister(ctx, q, r.OrganisationID)
	if err != nil {
		return roleJSON{}, err
	}
	return l.role(r), nil
}

// listRoles renders an organisation's roles by order, @everyone last.
func listRoles(ctx context.Context, q *db.Queries, orgID int64) ([]roleJSON, error) {
	l, err := newRoleLister(ctx, q, orgID)
	if err != nil {
		return nil, err
	}
	rows, err := q.RoleList(ctx, orgID)
	if err != nil {
		return nil, err
	}
	out := make([]roleJSON, len(rows))
	for i, r := range rows {
		out[i] = l.role(r)
	}
	return out, nil
}

// roleByPath loads the role of /roles/{id} with the caller's access in its
// organisation, refusing a caller who is not a member or lacks perm (0:
// membership is enough). The /roles rows list only 400 and 403, so an absent
// role (or one whose organisation is deleted) is a 400.
func roleByPath(rq *request, q *db.Queries, perm Permission) (db.Role, Access, error) {
	id, err := rq.pathID("id")
	if err != nil {
		return db.Role{}, Access{}, err
	}
	r, err := q.RoleGet(rq.ctx, id)
	if db.IsNotFound(err) {
		return db.Role{}, Access{}, badRequest("The role was not found.")
	}
	if err != nil {
		return db.Role{}, Access{}, err
	}
	a, err := orgAccess(rq, q, r.OrganisationID, http.StatusBadRequest, perm)
	if err != nil {
		return db.Role{}, Access{}, err
	}
	return r, a, nil
}

// requireOutranks enforces the escalation rule on a role of the given rank.
func requireOutranks(a Access, rank int64) error {
	if !a.Outranks(rank) {
		return forbidden("You cannot change a role ranked at or above your own highest role.")
	}
	return nil
}

func (s *Server) roleList(rq *request) error {
	orgID, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var out []roleJSON
	err = s.store.ReadTx(rq.ctx, func(q *db.Queries) error {
		if _, err := orgAccess(rq, q, orgID, http.StatusBadRequest, 0); err != nil {
			return err
		}
		out, err = listRoles(rq.ctx, q, orgID)
		return err
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

type roleCreateBody struct {
	Alias       *string `json:"alias"`
	Name        *string `json:"name"` // the role object's name for alias, accepted too
	Description string  `json:"description"`
}

// roleName validates a role alias: 2-20 characters, not @everyone's name.
func roleName(p problems, field, name string) string {
	name = strings.TrimSpace(name)
	p.length(field, name, 2, 20)
	if strings.EqualFold(name, "@everyone") {
		p.add(field, "is reserved for the implicit role")
	}
	return name
}

// roleCreate adds a role ranked last, just above @everyone.
func (s *Server) roleCreate(rq *request) error {
	orgID, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var b roleCreateBody
	if err := rq.decode(&b); err != nil {
		return err
	}
	name, field := "new role", "alias"
	if b.Alias != nil {
		name = *b.Alias
	} else if b.Name != nil {
		name, field = *b.Name, "name"
	}
	p := problems{}
	name = roleName(p, field, name)
	p.length("description", b.Description, 0, 1000)
	if err := p.err(); err != nil {
		return err
	}
	var out roleJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		if _, err := orgAccess(rq, q, orgID, http.StatusBadRequest, ManageRoles); err != nil {
			return err
		}
		n, err := q.RoleCount(rq.ctx, orgID)
		if err != nil {
			return err
		}
		r, err := q.RoleCreate(rq.ctx, db.RoleCreateParams{
			ID: s.store.IDs.Next(), OrganisationID: orgID, Name: name, Description: b.Description,
			SortOrder: n, CreatedAt: s.nowText(),
		})
		if err != nil {
			return err
		}
		out, err = loadRole(rq.ctx, q, r)
		return err
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusCreated, out)
}

type roleReorderBody struct {
	ID    *db.ID `json:"id"`
	Order *int64 `json:"order"`
}

// roleReorder moves a role to a new order, shifting the roles between its
// old and new positions by one. The caller must outrank the role both where
// it is and where it goes.
func (s *Server) roleReorder(rq *request) error {
	orgID, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var b roleReorderBody
	if err := rq.decode(&b); err != nil {
		return err
	}
	p := problems{}
	if b.ID == nil {
		p.add("id", "is required")
	}
	if b.Order == nil {
		p.add("order", "is required")
	}
	if err := p.err(); err != nil {
		return err
	}
	var out []roleJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		a, err := orgAccess(rq, q, orgID, http.StatusBadRequest, ManageRoles)
		if err != nil {
			return err
		}
		r, err := q.RoleGet(rq.ctx, int64(*b.ID))
		if db.IsNotFound(err) {
			return fieldError("id", "is not a role")
		}
		if err != nil {
			return err
		}
		if r.OrganisationID != orgID {
			return forbidden("The role is not in this organisation.")
		}
		if isEveryone(r) {
			return fieldError("id", "@everyone cannot be reordered")
		}
		n, err := q.RoleCount(rq.ctx, orgID)
		if err != nil {
			return err
		}
		to := *b.Order
		if to < 0 || to >= n {
			return fieldError("order", "must be between 0 and the number of roles minus 1")
		}
		from := r.SortOrder
		if err := requireOutranks(a, from); err != nil {
			return err
		}
		if err := requireOutranks(a, to); err != nil {
			return err
		}
		switch {
		case to < from:
			err = q.RoleShift(rq.ctx, db.RoleShiftParams{Delta: 1, OrganisationID: orgID, Lo: to, Hi: from - 1})
		case to > from:
			err = q.RoleShift(rq.ctx, db.RoleShiftParams{Delta: -1, OrganisationID: orgID, Lo: from + 1, Hi: to})
		}
		if err != nil {
			return err
		}
		if err := q.RoleSetOrder(rq.ctx, db.RoleSetOrderParams{SortOrder: to, ID: r.ID, OrganisationID: orgID}); err != nil {
			return err
		}
		out, err = listRoles(rq.ctx, q, orgID)
		return err
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

func (s *Server) roleGet(rq *request) error {
	var out roleJSON
	err := s.store.ReadTx(rq.ctx, func(q *db.Queries) error {
		r, _, err := roleByPath(rq, q, 0)
		if err != nil {
			return err
		}
		out, err = loadRole(rq.ctx, q, r)
		return err
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

type rolePatchBody struct {
	Alias       *string           `json:"alias"`
	Name        *string           `json:"name"`
	Description *string           `json:"description"`
	Permissions map[string]string `json:"permissions"`
}

// rolePatch renames a role, changes its description or its organisation
// grants. @everyone keeps its name; its description and grants may change.
func (s *Server) rolePatch(rq *request) error {
	var b rolePatchBody
	ro, err := rq.decodePatch(&b, "id", "organisation_id", "order")
	if err != nil {
		return err
	}
	name, field := b.Alias, "alias"
	if name == nil && b.Name != nil {
		name, field = b.Name, "name"
	}
	p := problems{}
	if name != nil {
		*name = roleName(p, field, *name)
	}
	if b.Description != nil {
		p.length("description", *b.Description, 0, 1000)
	}
	var change grantChange
	if b.Permissions != nil {
		c, err := parseGrantChange("permissions", b.Permissions, AllPermissions)
		if err != nil {
			return err
		}
		change = c
	}
	if err := p.err(); err != nil {
		return err
	}
	var out roleJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		r, a, err := roleByPath(rq, q, ManageRoles)
		if err != nil {
			return err
		}
		if err := ro.checkLoaded(func() (any, error) { return loadRole(rq.ctx, q, r) }); err != nil {
			return err
		}
		if err := requireOutranks(a, r.SortOrder); err != nil {
			return err
		}
		if name != nil && isEveryone(r) && *name != r.Name {
			return fieldError(field, "@everyone cannot be renamed")
		}
		if err := checkGrantable(a, change); err != nil {
			return err
		}
		arg := db.RoleUpdateParams{ID: r.ID, OrganisationID: r.OrganisationID, Name: r.Name, Description: r.Description}
		setIf(&arg.Name, name)
		setIf(&arg.Description, b.Description)
		r, err = q.RoleUpdate(rq.ctx, arg)
		if err != nil {
			return err
		}
		if change.touched() != 0 {
			target := "role"
			if isEveryone(r) {
				target = "organisation"
			}
			if _, err := saveGrant(rq.ctx, q, r.OrganisationID, "organisation", r.OrganisationID, target, r.ID, change); err != nil {
				return err
			}
		}
		out, err = loadRole(rq.ctx, q, r)
		return err
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

// roleDelete removes a role, its assignments and every grant naming it (in
// any scope), and closes the gap in the order.
func (s *Server) roleDelete(rq *request) error {
	err := s.store.InTx(rq.ctx, func(q *db.Queries) error {
		r, a, err := roleByPath(rq, q, ManageRoles)
		if err != nil {
			return err
		}
		if isEveryone(r) {
			return badRequest("@everyone cannot be deleted.")
		}
		if err := requireOutranks(a, r.SortOrder); err != nil {
			return err
		}
		if err := q.MemberRolesDeleteForRole(rq.ctx, db.MemberRolesDeleteForRoleParams{OrganisationID: r.OrganisationID, RoleID: r.ID}); err != nil {
			return err
		}
		if err := q.GrantDeleteForTarget(rq.ctx, db.GrantDeleteForTargetParams{OrganisationID: r.OrganisationID, TargetID: r.ID}); err != nil {
			return err
		}
		if err := q.RoleDelete(rq.ctx, db.RoleDeleteParams{ID: r.ID, OrganisationID: r.OrganisationID}); err != nil {
			return err
		}
		return q.RoleShift(rq.ctx, db.RoleShiftParams{Delta: -1, OrganisationID: r.OrganisationID, Lo: r.SortOrder + 1, Hi: everyoneRank - 1})
	})
	if err != nil {
		return err
	}
	return rq.noContent()
}

// roleMembers lists the users holding a role; for @everyone, every member.
func (s *Server) roleMembers(rq *request) error {
	var out []userJSON
	err := s.store.ReadTx(rq.ctx, func(q *db.Queries) error {
		r, _, err := roleByPath(rq, q, 0)
		if err != nil {
			return err
		}
		var users []db.User
		if isEveryone(r) {
			users, err = q.RoleEveryoneMembers(rq.ctx, r.OrganisationID)
		} else {
			users, err = q.RoleMembers(rq.ctx, db.RoleMembersParams{OrganisationID: r.OrganisationID, RoleID: r.ID})
		}
		if err != nil {
			return err
		}
		out = make([]userJSON, len(users))
		for i, u := range users {
			out[i] = toUser(u)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

// memberRoleChange assigns (add) or removes a role of a member. Both the
// member and the role must belong to the organisation (else 400), and the
// caller must outrank the role.
func (s *Server) memberRoleChange(add bool) handlerFunc {
	return func(rq *request) error {
		orgID, userID, err := memberPath(rq)
		if err != nil {
			return err
		}
		roleID, err := rq.pathID("role")
		if err != nil {
			return err
		}
		err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
			a, err := orgAccess(rq, q, orgID, http.StatusBadRequest, ManageRoles)
			if err != nil {
				return err
			}
			r, err := q.RoleGet(rq.ctx, roleID)
			if db.IsNotFound(err) || (err == nil && r.OrganisationID != orgID) {
				return badRequest("The role was not found in this organisation.")
			}
			if err != nil {
				return err
			}
			if isEveryone(r) {
				return badRequest("@everyone is held by every member and cannot be assigned or removed.")
			}
			n, err := q.MemberExists(rq.ctx, db.MemberExistsParams{OrganisationID: orgID, UserID: userID})
			if err != nil {
				return err
			}
			if n == 0 {
				return badRequest("The user is not a member of this organisation.")
			}
			if err := requireOutranks(a, r.SortOrder); err != nil {
				return err
			}
			arg := db.MemberRoleAddParams{OrganisationID: orgID, UserID: userID, RoleID: roleID}
			if add {
				return q.MemberRoleAdd(rq.ctx, arg)
			}
			return q.MemberRoleRemove(rq.ctx, db.MemberRoleRemoveParams(arg))
		})
		if err != nil {
			return err
		}
		return rq.noContent()
	}
}

// grantPut sets the organisation grants of a role, a member or @everyone
// (target = the organisation id). Beyond the permissions the caller holds
// (checkGrantable), it must outrank the role, or a member's highest role.
func (s *Server) grantPut(rq *request) error {
	orgID, err := rq.pathID("id")
	if err != nil {
		return err
	}
	targetID, err := rq.pathID("target")
	if err != nil {
		return err
	}
	var b grantBody
	if err := rq.decode(&b); err != nil {
		return err
	}
	change, err := parseGrantChange("permissions", b.Permissions, AllPermissions)
	if err != nil {
		return err
	}
	var out grantJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		a, err := orgAccess(rq, q, orgID, http.StatusNotFound, ManageRoles)
		if err != nil {
			return err
		}
		out, err = changeGrant(rq.ctx, q, a, "organisation", orgID, targetID, change, rankEveryTarget)
		return err
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

// orgGrantList lists the organisation's explicit grants.
func (s *Server) orgGrantList(rq *request) error {
	orgID, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var out []grantJSON
	err = s.store.ReadTx(rq.ctx, func(q *db.Queries) error {
		if _, err := orgAccess(rq, q, orgID, http.StatusNotFound, ManageOrganisation); err != nil {
			return err
		}
		gs, err := q.GrantListForScope(rq.ctx, orgID)
		if err != nil {
			return err
		}
		out = make([]grantJSON, len(gs))
		for i, g := range gs {
			out[i] = toGrant(g)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}
