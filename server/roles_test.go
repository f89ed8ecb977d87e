package server

import (
	"net/http"
	"strings"
	"testing"
)

// roleNames checks the listed roles' names and orders.
func roleNames(want ...string) func(t *testing.T, r *testResponse) {
	return func(t *testing.T, r *testResponse) {
		t.Helper()
		var got []string
		for i, ro := range r.arr(t) {
			got = append(got, ro["name"].(string))
			if ro["order"] != float64(i) {
				t.Errorf("%s: order %v, want %d", ro["name"], ro["order"], i)
			}
		}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("got %v, want %v", got, want)
		}
	}
}

func TestRoles(t *testing.T) {
	t.Parallel()
	f := newOrgFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	evilRole := e.role(f.mallory, f.evil, "Evil role")
	var newRole, admins string
	e.run(t, []scenario{
		{"a new organisation has only @everyone", f.bob, "GET", acme + "/roles", nil, 200, func(t *testing.T, r *testResponse) {
			roles := r.arr(t)
			if len(roles) != 1 || roles[0]["id"] != f.acme || roles[0]["name"] != "@everyone" {
				t.Fatalf("got %v", roles)
			}
			perms := roles[0]["permissions"].(map[string]any)
			if perms["VIEW_PROJECTS"] != "allow" || perms["VIEW_WORKITEMS"] != "allow" || perms["VIEW_DOCUMENTS"] != "allow" || len(perms) != 3 {
				t.Errorf("@everyone permissions: got %v", perms)
			}
		}},
		{"pending member cannot list", f.pen, "GET", acme + "/roles", nil, 403, nil},
		{"other organisation cannot list", f.mallory, "GET", acme + "/roles", nil, 403, nil},
		{"absent organisation lists 400", f.alice, "GET", "/organisations/42/roles", nil, 400, nil},

		{"create with the default name", f.alice, "POST", acme + "/roles", nil, 201, func(t *testing.T, r *testResponse) {
			o := r.obj(t)
			newRole = o["id"].(string)
			if o["name"] != "new role" || o["order"] != float64(0) || o["organisation_id"] != f.acme {
				t.Errorf("got %v", o)
			}
		}},
		{"create with an alias", f.alice, "POST", acme + "/roles", map[string]any{"alias": "Admins"}, 201, func(t *testing.T, r *testResponse) {
			admins = r.obj(t)["id"].(string)
		}},
		{"alias too short", f.alice, "POST", acme + "/roles", map[string]any{"alias": "A"}, 400, wantField("alias")},
		{"alias over 20", f.alice, "POST", acme + "/roles", map[string]any{"alias": strings.Repeat("a", 21)}, 400, wantField("alias")},
		{"alias @everyone reserved", f.alice, "POST", acme + "/roles", map[string]any{"alias": "@everyone"}, 400, wantField("alias")},
		{"alias wrong type", f.alice, "POST", acme + "/roles", map[string]any{"alias": 3}, 400, wantField("alias")},
		{"member without MANAGE_ROLES", f.bob, "POST", acme + "/roles", map[string]any{"alias": "Mine"}, 403, nil},
		{"other organisation cannot create", f.mallory, "POST", acme + "/roles", map[string]any{"alias": "Mine"}, 403, nil},
		{"absent organisation creates 400", f.alice, "POST", "/organisations/42/roles", map[string]any{"alias": "Mine"}, 400, nil},
		{"listed by order, @everyone last", f.bob, "GET", acme + "/roles", nil, 200, roleNames("new role", "Admins", "@everyone")},
	})
	e.run(t, []scenario{
		{"member reads a role", f.bob, "GET", "/roles/" + admins, nil, 200, wantKey("name", "Admins")},
		{"pending member cannot read", f.pen, "GET", "/roles/" + admins, nil, 403, nil},
		{"other organisation cannot read", f.mallory, "GET", "/roles/" + admins, nil, 403, nil},
		{"absent role", f.alice, "GET", "/roles/42", nil, 400, nil},
		{"bad role id", f.alice, "GET", "/roles/x", nil, 400, nil},

		{"rename", f.alice, "PATCH", "/roles/" + newRole, map[string]any{"alias": "Editors", "description": "edit"}, 200, func(t *testing.T, r *testResponse) {
			o := r.obj(t)
			if o["name"] != "Editors" || o["description"] != "edit" {
				t.Errorf("got %v", o)
			}
		}},
		{"rename too short", f.alice, "PATCH", "/roles/" + newRole, map[string]any{"alias": "E"}, 400, wantField("alias")},
		{"set permissions by name", f.alice, "PATCH", "/roles/" + admins, map[string]any{"permissions": map[string]string{"MANAGE_ROLES": "allow", "VIEW_PROJECTS": "deny"}}, 200, func(t *testing.T, r *testResponse) {
			p := r.obj(t)["permissions"].(map[string]any)
			if p["MANAGE_ROLES"] != "allow" || p["VIEW_PROJECTS"] != "deny" || len(p) != 2 {
				t.Errorf("got %v", p)
			}
		}},
		{"inherit removes an explicit grant", f.alice, "PATCH", "/roles/" + admins, map[string]any{"permissions": map[string]string{"VIEW_PROJECTS": "inherit"}}, 200, func(t *testing.T, r *testResponse) {
			if p := r.obj(t)["permissions"].(map[string]any); len(p) != 1 || p["MANAGE_ROLES"] != "allow" {
				t.Errorf("got %v", p)
			}
		}},
		{"unknown permission", f.alice, "PATCH", "/roles/" + admins, map[string]any{"permissions": map[string]string{"FLY": "allow"}}, 400, wantField("permissions.FLY")},
		{"bad grant type", f.alice, "PATCH", "/roles/" + admins, map[string]any{"permissions": map[string]string{"MANAGE_ROLES": "yes"}}, 400, wantField("permissions.MANAGE_ROLES")},
		{"read-only order", f.alice, "PATCH", "/roles/" + admins, map[string]any{"order": 0}, 400, wantField("order")},
		{"member cannot patch", f.bob, "PATCH", "/roles/" + admins, map[string]any{"alias": "Mine"}, 403, nil},
		{"other organisation cannot patch", f.mallory, "PATCH", "/roles/" + admins, map[string]any{"alias": "Mine"}, 403, nil},
		{"absent role patch", f.alice, "PATCH", "/roles/42", map[string]any{"alias": "Mine"}, 400, nil},
		{"@everyone cannot be renamed", f.alice, "PATCH", "/roles/" + f.acme, map[string]any{"alias": "All"}, 400, wantField("alias")},
		{"@everyone's description and grants may change", f.alice, "PATCH", "/roles/" + f.acme, map[string]any{"description": "all of us", "permissions": map[string]string{"CREATE_INVITE": "allow"}}, 200, func(t *testing.T, r *testResponse) {
			o := r.obj(t)
			if o["description"] != "all of us" || o["permissions"].(map[string]any)["CREATE_INVITE"] != "allow" || o["name"] != "@everyone" {
				t.Errorf("got %v", o)
			}
		}},
		{"nothing of another organisation changed", f.mallory, "GET", "/roles/" + evilRole, nil, 200, wantKey("name", "Evil role")},

		{"reorder", f.alice, "PATCH", acme + "/roles", map[string]any{"id": admins, "order": 0}, 200, roleNames("Admins", "Editors", "@everyone")},
		{"reorder out of range", f.alice, "PATCH", acme + "/roles", map[string]any{"id": admins, "order": 2}, 400, wantField("order")},
		{"reorder negative", f.alice, "PATCH", acme + "/roles", map[string]any{"id": admins, "order": -1}, 400, wantField("order")},
		{"reorder @everyone", f.alice, "PATCH", acme + "/roles", map[string]any{"id": f.acme, "order": 0}, 400, wantField("id")},
		{"reorder without id", f.alice, "PATCH", acme + "/roles", map[string]any{"order": 0}, 400, wantField("id")},
		{"reorder without order", f.alice, "PATCH", acme + "/roles", map[string]any{"id": admins}, 400, wantField("order")},
		{"reorder an absent role", f.alice, "PATCH", acme + "/roles", map[string]any{"id": "42", "order": 0}, 400, nil},
		{"reorder a role of another organisation", f.alice, "PATCH", acme + "/roles", map[string]any{"id": evilRole, "order": 0}, 403, nil},
		{"reorder in an absent organisation", f.alice, "PATCH", "/organisations/42/roles", map[string]any{"id": admins, "order": 0}, 400, nil},
		{"member cannot reorder", f.bob, "PATCH", acme + "/roles", map[string]any{"id": admins, "order": 1}, 403, nil},
		{"other organisation cannot reorder", f.mallory, "PATCH", acme + "/roles", map[string]any{"id": admins, "order": 1}, 403, nil},
	})
	members := func(want ...*testUser) func(t *testing.T, r *testResponse) {
		return func(t *testing.T, r *testResponse) {
			t.Helper()
			var got, ids []string
			for _, u := range r.arr(t) {
				got = append(got, u["id"].(string))
			}
			for _, u := range want {
				ids = append(ids, u.ID)
			}
			if strings.Join(got, ",") != strings.Join(ids, ",") {
				t.Errorf("got %v, want %v", got, ids)
			}
		}
	}
	memberRole := func(u *testUser, role string) string { return acme + "/members/" + u.ID + "/roles/" + role }
	e.run(t, []scenario{
		{"assign", f.alice, "PUT", memberRole(f.bob, admins), nil, 204, nil},
		{"assign again is fine", f.alice, "PUT", memberRole(f.bob, admins), nil, 204, nil},
		{"role members", f.bob, "GET", "/roles/" + admins + "/members", nil, 200, members(f.bob)},
		{"a pending member may be given the role", f.alice, "PUT", memberRole(f.pen, admins), nil, 204, nil},
		{"but is not listed until approved, as in @everyone", f.bob, "GET", "/roles/" + admins + "/members", nil, 200, members(f.bob)},
		{"take it back", f.alice, "DELETE", memberRole(f.pen, admins), nil, 204, nil},
		{"member shows the role", f.alice, "GET", acme + "/members/" + f.bob.ID, nil, 200, func(t *testing.T, r *testResponse) {
			if roles := r.obj(t)["roles"].([]any); len(roles) != 1 || roles[0] != admins {
				t.Errorf("got %v", roles)
			}
		}},
		{"@everyone's members are the members", f.bob, "GET", "/roles/" + f.acme + "/members", nil, 200, members(f.alice, f.bob)},
		{"other organisation cannot list role members", f.mallory, "GET", "/roles/" + admins + "/members", nil, 403, nil},
		{"pending member cannot list role members", f.pen, "GET", "/roles/" + admins + "/members", nil, 403, nil},
		{"absent role members", f.alice, "GET", "/roles/42/members", nil, 400, nil},
		{"assign to a non-member", f.alice, "PUT", memberRole(f.mallory, admins), nil, 400, nil},
		{"assign a role of another organisation", f.alice, "PUT", memberRole(f.bob, evilRole), nil, 400, nil},
		{"assign an absent role", f.alice, "PUT", memberRole(f.bob, "42"), nil, 400, nil},
		{"assign @everyone", f.alice, "PUT", memberRole(f.bob, f.acme), nil, 400, nil},
		{"assign in an absent organisation", f.alice, "PUT", "/organisations/42/members/" + f.bob.ID + "/roles/" + admins, nil, 400, nil},
		{"member without MANAGE_ROLES cannot assign", f.pen, "PUT", memberRole(f.pen, admins), nil, 403, nil},
		{"other organisation cannot assign", f.mallory, "PUT", memberRole(f.bob, admins), nil, 403, nil},
		{"other organisation cannot remove", f.mallory, "DELETE", memberRole(f.bob, admins), nil, 403, nil},
		{"remove from a non-member", f.alice, "DELETE", memberRole(f.mallory, admins), nil, 400, nil},
		{"remove", f.alice, "DELETE", memberRole(f.bob, admins), nil, 204, nil},
		{"no members left", f.alice, "GET", "/roles/" + admins + "/members", nil, 200, members()},
	})
	// Four roles, to see the shifting and the closing of gaps.
	c := e.role(f.alice, f.acme, "Cc")
	d := e.role(f.alice, f.acme, "Dd")
	e.assign(f.alice, f.acme, f.bob, c)
	e.grant(f.alice, f.acme, c, map[string]string{"CREATE_INVITE": "allow"})
	e.run(t, []scenario{
		{"move up shifts the roles between down", f.alice, "PATCH", acme + "/roles", map[string]any{"id": d, "order": 1}, 200, roleNames("Admins", "Dd", "Editors", "Cc", "@everyone")},
		{"move down shifts the roles between up", f.alice, "PATCH", acme + "/roles", map[string]any{"id": admins, "order": 3}, 200, roleNames("Dd", "Editors", "Cc", "Admins", "@everyone")},
		{"member cannot delete", f.bob, "DELETE", "/roles/" + c, nil, 403, nil},
		{"other organisation cannot delete", f.mallory, "DELETE", "/roles/" + c, nil, 403, nil},
		{"@everyone cannot be deleted", f.alice, "DELETE", "/roles/" + f.acme, nil, 400, nil},
		{"delete", f.alice, "DELETE", "/roles/" + c, nil, 204, nil},
		{"deleted role is absent", f.alice, "GET", "/roles/" + c, nil, 400, nil},
		{"delete again", f.alice, "DELETE", "/roles/" + c, nil, 400, nil},
		{"gap closed", f.alice, "GET", acme + "/roles", nil, 200, roleNames("Dd", "Editors", "Admins", "@everyone")},
		{"its assignment went", f.alice, "GET", acme + "/members/" + f.bob.ID, nil, 200, func(t *testing.T, r *testResponse) {
			if roles := r.obj(t)["roles"].([]any); len(roles) != 0 {
				t.Errorf("got %v", roles)
			}
		}},
		{"its grant went", f.alice, "GET", acme + "/permissions", nil, 200, func(t *testing.T, r *testResponse) {
			for _, g := range r.arr(t) {
				if g["id"] == c {
					t.Errorf("grant of the deleted role still listed: %v", g)
				}
			}
		}},
		{"other organisation's roles untouched", f.mallory, "GET", "/organisations/" + f.evil + "/roles", nil, 200, roleNames("Evil role", "@everyone")},
	})
}

func TestGrants(t *testing.T) {
	t.Parallel()
	f := newOrgFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	evilRole := e.role(f.mallory, f.evil, "Evil role")
	admins := e.role(f.alice, f.acme, "Admins")
	perm := func(target string) string { return acme + "/permissions/" + target }
	body := func(m map[string]string) map[string]any { return map[string]any{"permissions": m} }
	e.run(t, []scenario{
		{"grant a role", f.alice, "PUT", perm(admins), body(map[string]string{"MANAGE_ORGANISATION": "allow", "CREATE_PROJECTS": "deny"}), 200, func(t *testing.T, r *testResponse) {
			g := r.obj(t)
			p := g["permissions"].(map[string]any)
			if g["id"] != admins || g["type"] != "role" || p["MANAGE_ORGANISATION"] != "allow" || p["CREATE_PROJECTS"] != "deny" {
				t.Errorf("got %v", g)
			}
		}},
		{"grant a user", f.alice, "PUT", perm(f.bob.ID), body(map[string]string{"CREATE_INVITE": "allow"}), 200, wantKey("type", "user")},
		{"grant a pending member", f.alice, "PUT", perm(f.pen.ID), body(map[string]string{"CREATE_INVITE": "allow"}), 200, wantKey("type", "user")},
		{"grant @everyone", f.alice, "PUT", perm(f.acme), body(map[string]string{"VIEW_DOCUMENTS": "deny"}), 200, func(t *testing.T, r *testResponse) {
			g := r.obj(t)
			p := g["permissions"].(map[string]any)
			if g["type"] != "organisation" || p["VIEW_DOCUMENTS"] != "deny" || p["VIEW_PROJECTS"] != "allow" {
				t.Errorf("got %v", g)
			}
		}},
		{"permissions missing", f.alice, "PUT", perm(admins), map[string]any{}, 400, wantField("permissions")},
		{"permissions not an object", f.alice, "PUT", perm(admins), map[string]any{"permissions": []string{"x"}}, 400, wantField("permissions")},
		{"unknown permission", f.alice, "PUT", perm(admins), body(map[string]string{"FLY": "allow"}), 400, wantField("permissions.FLY")},
		{"bad grant type", f.alice, "PUT", perm(admins), body(map[string]string{"CREATE_INVITE": "maybe"}), 400, wantField("permissions.CREATE_INVITE")},
		{"target absent", f.alice, "PUT", perm("42"), body(map[string]string{"CREATE_INVITE": "allow"}), 404, nil},
		{"target a role of another organisation", f.alice, "PUT", perm(evilRole), body(map[string]string{"CREATE_INVITE": "allow"}), 404, nil},
		{"target a non-member", f.alice, "PUT", perm(f.mallory.ID), body(map[string]string{"CREATE_INVITE": "allow"}), 404, nil},
		{"target another organisation's @everyone", f.alice, "PUT", perm(f.evil), body(map[string]string{"CREATE_INVITE": "allow"}), 404, nil},
		{"absent organisation", f.alice, "PUT", "/organisations/42/permissions/42", body(map[string]string{"CREATE_INVITE": "allow"}), 404, nil},
		{"member without MANAGE_ROLES", f.bob, "PUT", perm(f.bob.ID), body(map[string]string{"VIEW_PROJECTS": "allow"}), 403, nil},
		{"other organisation", f.mallory, "PUT", perm(f.acme), body(map[string]string{"VIEW_PROJECTS": "deny"}), 403, nil},
		{"inherit drops the grant", f.alice, "PUT", perm(f.pen.ID), body(map[string]string{"CREATE_INVITE": "inherit"}), 200, func(t *testing.T, r *testResponse) {
			if p := r.obj(t)["permissions"].(map[string]any); len(p) != 0 {
				t.Errorf("got %v", p)
			}
		}},
		{"list grants", f.alice, "GET", acme + "/permissions", nil, 200, func(t *testing.T, r *testResponse) {
			types := map[string]string{}
			for _, g := range r.arr(t) {
				types[g["id"].(string)] = g["type"].(string)
			}
			want := map[string]string{f.acme: "organisation", admins: "role", f.bob.ID: "user"}
			if len(types) != len(want) {
				t.Errorf("got %v, want %v", types, want)
			}
			for id, ty := range want {
				if types[id] != ty {
					t.Errorf("%s: got %q, want %q", id, types[id], ty)
				}
			}
		}},
		{"member cannot list", f.bob, "GET", acme + "/permissions", nil, 403, nil},
		{"pending member cannot list", f.pen, "GET", acme + "/permissions", nil, 403, nil},
		{"other organisation cannot list", f.mallory, "GET", acme + "/permissions", nil, 403, nil},
		{"absent organisation list", f.alice, "GET", "/organisations/42/permissions", nil, 404, nil},
		{"other organisation's grants untouched", f.mallory, "GET", "/organisations/" + f.evil + "/permissions", nil, 200, wantLen(1)},
	})
}

// TestRoleEscalation: a MANAGE_ROLES holder cannot grant what it lacks, nor
// change, delete, reorder or assign a role ranked at or above its own.
func TestRoleEscalation(t *testing.T) {
	t.Parallel()
	f := newOrgFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	carol := e.user("carol")
	e.addMember(f.acme, carol)
	top := e.role(f.alice, f.acme, "Top")
	mid := e.role(f.alice, f.acme, "Mid")
	low := e.role(f.alice, f.acme, "Low")
	e.grant(f.alice, f.acme, mid, map[string]string{"MANAGE_ROLES": "allow", "CREATE_INVITE": "allow"})
	e.assign(f.alice, f.acme, f.bob, mid)
	dave := e.user("dave")
	e.addMember(f.acme, dave)
	e.assign(f.alice, f.acme, dave, top)
	memberRole := func(u *testUser, role string) string { return acme + "/members/" + u.ID + "/roles/" + role }
	perms := func(m map[string]string) map[string]any { return map[string]any{"permissions": m} }
	var extra string
	e.run(t, []scenario{
		{"cannot rename a higher role", f.bob, "PATCH", "/roles/" + top, map[string]any{"alias": "Mine"}, 403, nil},
		{"cannot change its own role", f.bob, "PATCH", "/roles/" + mid, perms(map[string]string{"MANAGE_ORGANISATION": "allow"}), 403, nil},
		{"changes a lower role", f.bob, "PATCH", "/roles/" + low, map[string]any{"alias": "Lower"}, 200, nil},
		{"cannot grant what it lacks", f.bob, "PATCH", "/roles/" + low, perms(map[string]string{"MANAGE_ORGANISATION": "allow"}), 403, nil},
		{"cannot deny what it lacks either", f.bob, "PUT", acme + "/permissions/" + low, perms(map[string]string{"ADMIN_PROJECTS": "deny"}), 403, nil},
		{"grants what it holds", f.bob, "PATCH", "/roles/" + low, perms(map[string]string{"CREATE_INVITE": "allow"}), 200, nil},
		{"cannot grant on a higher role", f.bob, "PUT", acme + "/permissions/" + top, perms(map[string]string{"CREATE_INVITE": "allow"}), 403, nil},
		{"grants @everyone what it holds", f.bob, "PUT", acme + "/permissions/" + f.acme, perms(map[string]string{"CREATE_INVITE": "allow"}), 200, nil},
		{"grants a member without roles", f.bob, "PUT", acme + "/permissions/" + carol.ID, perms(map[string]string{"VIEW_PROJECTS": "allow"}), 200, nil},
		{"cannot assign a higher role", f.bob, "PUT", memberRole(carol, top), nil, 403, nil},
		{"cannot assign its own rank", f.bob, "PUT", memberRole(carol, mid), nil, 403, nil},
		{"assigns a lower role", f.bob, "PUT", memberRole(carol, low), nil, 204, nil},
		{"grants a member ranked below", f.bob, "PUT", acme + "/permissions/" + carol.ID, perms(map[string]string{"VIEW_PROJECTS": "allow"}), 200, nil},
		{"cannot grant a member ranked above", f.bob, "PUT", acme + "/permissions/" + dave.ID, perms(map[string]string{"VIEW_PROJECTS": "deny"}), 403, nil},
		{"cannot grant on the owner", f.bob, "PUT", acme + "/permissions/" + f.alice.ID, perms(map[string]string{"CREATE_INVITE": "deny"}), 403, nil},
		{"the refused owner grant is not listed", f.alice, "GET", acme + "/permissions", nil, 200, func(t *testing.T, r *testResponse) {
			for _, g := range r.arr(t) {
				if g["id"] == f.alice.ID {
					t.Errorf("a grant on the owner is listed: %v", g)
				}
			}
		}},
		{"cannot grant a member of its own rank (itself)", f.bob, "PUT", acme + "/permissions/" + f.bob.ID, perms(map[string]string{"CREATE_INVITE": "deny"}), 403, nil},
		{"cannot remove its own role", f.bob, "DELETE", memberRole(f.bob, mid), nil, 403, nil},
		{"cannot move a role to its own rank", f.bob, "PATCH", acme + "/roles", map[string]any{"id": low, "order": 1}, 403, nil},
		{"cannot move a higher role down", f.bob, "PATCH", acme + "/roles", map[string]any{"id": top, "order": 2}, 403, nil},
		{"cannot move its own role down", f.bob, "PATCH", acme + "/roles", map[string]any{"id": mid, "order": 2}, 403, nil},
		{"cannot grant on its own role", f.bob, "PUT", acme + "/permissions/" + mid, perms(map[string]string{"CREATE_INVITE": "deny"}), 403, nil},
		{"cannot delete its own role", f.bob, "DELETE", "/roles/" + mid, nil, 403, nil},
		{"refused changes left the order", f.alice, "GET", acme + "/roles", nil, 200, roleNames("Top", "Mid", "Lower", "@everyone")},
		{"creates a role, ranked last", f.bob, "POST", acme + "/roles", map[string]any{"alias": "Extra"}, 201, func(t *testing.T, r *testResponse) {
			o := r.obj(t)
			extra = o["id"].(string)
			if o["order"] != float64(3) {
				t.Errorf("order: got %v, want 3", o["order"])
			}
		}},
	})
	e.run(t, []scenario{
		{"reorders below its own rank", f.bob, "PATCH", acme + "/roles", map[string]any{"id": low, "order": 3}, 200, roleNames("Top", "Mid", "Extra", "Lower", "@everyone")},
		{"cannot delete a higher role", f.bob, "DELETE", "/roles/" + top, nil, 403, nil},
		{"deletes a lower role", f.bob, "DELETE", "/roles/" + extra, nil, 204, nil},
		{"owner is exempt", f.alice, "PATCH", "/roles/" + top, perms(map[string]string{"MANAGE_ORGANISATION": "allow"}), 200, nil},
	})
	// A holder of MANAGE_ROLES through a user grant, with no role, ranks with
	// @everyone and so cannot change it.
	e.grant(f.alice, f.acme, carol.ID, map[string]string{"MANAGE_ROLES": "allow"})
	e.must(http.StatusNoContent, f.alice, "DELETE", memberRole(carol, low), nil)
	e.run(t, []scenario{
		{"no role: cannot change @everyone", carol, "PATCH", "/roles/" + f.acme, perms(map[string]string{"VIEW_PROJECTS": "deny"}), 403, nil},
		{"a role holder can", f.bob, "PATCH", "/roles/" + f.acme, perms(map[string]string{"VIEW_PROJECTS": "deny"}), 200, nil},
	})
}

// TestPermissionResolutionHTTP walks the resolution order through real
// grants: @everyone, then the highest-ranked role, then the user's own
// grant, and the owner above all. It reads the caller's effective
// permissions and checks one permission's effect (creating an invite).
func TestPermissionResolutionHTTP(t *testing.T) {
	t.Parallel()
	f := newOrgFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	high := e.role(f.alice, f.acme, "High")
	low := e.role(f.alice, f.acme, "Low")
	canInvite := func(u *testUser) bool {
		t.Helper()
		for _, o := range e.must(200, u, "GET", "/users/@me/organisations", nil).arr(t) {
			if o["id"] == f.acme {
				return o["permissions"].(map[string]any)["CREATE_INVITE"] == true
			}
		}
		t.Fatalf("organisation not listed")
		return false
	}
	steps := []struct {
		name   string
		act    func()
		who    *testUser
		expect bool
	}{
		{"nothing set: denied", func() {}, f.bob, false},
		{"@everyone allows", func() { e.grant(f.alice, f.acme, f.acme, map[string]string{"CREATE_INVITE": "allow"}) }, f.bob, true},
		{"a role's deny beats @everyone", func() {
			e.grant(f.alice, f.acme, low, map[string]string{"CREATE_INVITE": "deny"})
			e.assign(f.alice, f.acme, f.bob, low)
		}, f.bob, false},
		{"the higher-ranked role decides", func() {
			e.grant(f.alice, f.acme, high, map[string]string{"CREATE_INVITE": "allow"})
			e.assign(f.alice, f.acme, f.bob, high)
		}, f.bob, true},
		{"reordering flips which role decides", func() {
			e.must(200, f.alice, "PATCH", acme+"/roles", map[string]any{"id": low, "order": 0})
		}, f.bob, false},
		{"a role that leaves it unset falls through", func() {
			e.grant(f.alice, f.acme, low, map[string]string{"CREATE_INVITE": "inherit"})
		}, f.bob, true},
		{"the user's own deny beats every role", func() {
			e.grant(f.alice, f.acme, f.bob.ID, map[string]string{"CREATE_INVITE": "deny"})
		}, f.bob, false},
		{"the user's own allow beats a role's deny", func() {
			e.grant(f.alice, f.acme, high, map[string]string{"CREATE_INVITE": "deny"})
			e.grant(f.alice, f.acme, f.bob.ID, map[string]string{"CREATE_INVITE": "allow"})
		}, f.bob, true},
		{"the owner is allowed whatever is denied", func() {
			e.grant(f.alice, f.acme, f.acme, map[string]string{"CREATE_INVITE": "deny"})
		}, f.alice, true},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			st.act()
			if got := canInvite(st.who); got != st.expect {
				t.Fatalf("CREATE_INVITE: got %v, want %v", got, st.expect)
			}
			want := http.StatusForbidden
			if st.expect {
				want = http.StatusCreated
			}
			if r := e.do(st.who, "POST", acme+"/invites", map[string]any{}); r.Status != want {
				t.Fatalf("create invite: got %d, want %d: %s", r.Status, want, r.Body)
			}
		})
	}
}

// TestOwnerGrantRefusedOnEveryLayer: the owner holds everything, so a grant
// on the owner changes nothing; only the owner may write one. A project
// administrator is refused on the project and package layers as well.
func TestOwnerGrantRefusedOnEveryLayer(t *testing.T) {
	t.Parallel()
	f := newOrgFixture(t)
	e := f.e
	project := e.must(http.StatusCreated, f.alice, "POST", "/organisations/"+f.acme+"/projects", map[string]any{"name": "Bridge"}).obj(t)["id"].(string)
	pkg := e.must(http.StatusCreated, f.alice, "POST", "/projects/"+project+"/packages", map[string]any{"name": "Deck"}).obj(t)["id"].(string)
	e.must(http.StatusOK, f.alice, "PATCH", "/projects/"+project+"/permissions/"+f.bob.ID, map[string]any{"permissions": map[string]string{"ADMIN_PROJECTS": "allow", "VIEW_PROJECTS": "allow"}})
	perms := map[string]any{"permissions": map[string]string{"VIEW_PROJECTS": "deny"}}
	forOwner := func(t *testing.T, r *testResponse) {
		if !strings.Contains(string(r.Body), "owner") {
			t.Errorf("refused for another reason: %s", r.Body)
		}
	}
	e.run(t, []scenario{
		{"control: a grant on bob himself is allowed", f.bob, "PATCH", "/projects/" + project + "/permissions/" + f.bob.ID, map[string]any{"permissions": map[string]string{"VIEW_PROJECTS": "allow"}}, 200, nil},
		{"project layer: on the owner", f.bob, "PATCH", "/projects/" + project + "/permissions/" + f.alice.ID, perms, 403, forOwner},
		{"package layer: on the owner", f.bob, "PATCH", "/packages/" + pkg + "/permissions/" + f.alice.ID, perms, 403, forOwner},
		{"the owner may (it changes nothing)", f.alice, "PATCH", "/projects/" + project + "/permissions/" + f.alice.ID, perms, 200, nil},
		{"the owner still sees the project", f.alice, "GET", "/projects/" + project, nil, 200, nil},
	})
}
