package server

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"workspace/db"
)

func TestAccessOwnerAndPending(t *testing.T) {
	t.Parallel()
	owner := Access{Owner: true}
	if !owner.Can(ManageRoles) || owner.Permissions() != AllPermissions {
		t.Errorf("owner must hold every permission")
	}
	pending := Access{Member: true, Pending: true, perms: AllPermissions}
	if pending.Can(ViewProjects) || pending.IsMember() {
		t.Errorf("a pending member must count as no member")
	}
	outsider := Access{perms: ViewProjects}
	if outsider.Can(ViewProjects) {
		t.Errorf("a non-member must hold nothing")
	}
	ranked := Access{Member: true, TopRank: 2}
	if ranked.Outranks(2) || ranked.Outranks(1) || !ranked.Outranks(3) {
		t.Errorf("Outranks must hold only for roles ranked strictly below")
	}
}

// TestAccessAllMatchesAuthorize: the batch resolution of every membership
// gives what authorize gives for each organisation: owner, member with user,
// role and @everyone grants (in two organisations, so grants must not leak
// between them), pending member.
func TestAccessAllMatchesAuthorize(t *testing.T) {
	t.Parallel()
	f := newOrgFixture(t)
	e := f.e
	third := e.org(f.alice, "Third")
	e.addMember(third, f.bob)
	e.addMember(f.evil, f.bob)
	e.addMember(f.evil, f.pen)
	high := e.role(f.alice, f.acme, "High")
	low := e.role(f.alice, f.acme, "Low")
	e.assign(f.alice, f.acme, f.bob, high)
	e.assign(f.alice, f.acme, f.bob, low)
	e.grant(f.alice, f.acme, high, map[string]string{"CREATE_INVITE": "allow", "MANAGE_TEAMS": "deny"})
	e.grant(f.alice, f.acme, low, map[string]string{"CREATE_INVITE": "deny", "MANAGE_TEAMS": "allow", "MANAGE_FLEETS": "allow"})
	e.grant(f.alice, f.acme, f.bob.ID, map[string]string{"VIEW_DOCUMENTS": "deny"})
	e.grant(f.alice, f.acme, f.pen.ID, map[string]string{"MANAGE_ROLES": "allow"})
	e.grant(f.mallory, f.evil, f.evil, map[string]string{"MANAGE_LOCATIONS": "allow"})
	e.grant(f.alice, third, f.bob.ID, map[string]string{"MANAGE_SYSTEMS": "allow"})
	ctx := context.Background()
	for _, u := range []*testUser{f.alice, f.bob, f.pen, f.mallory, f.nobody} {
		all, err := accessAll(ctx, e.store.R, u.id)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := e.store.R.OrganisationListForUser(ctx, u.id)
		if err != nil {
			t.Fatal(err)
		}
		if len(all) != len(rows) {
			t.Errorf("%s: got %d organisations, want %d", u.Email, len(all), len(rows))
		}
		for _, r := range rows {
			want, err := authorize(ctx, e.store.R, u.id, r.Organisation.ID, Scopes{})
			if err != nil {
				t.Fatal(err)
			}
			if got := all[r.Organisation.ID]; got != want {
				t.Errorf("%s in %s: got %+v, want %+v", u.Email, db.ID(r.Organisation.ID), got, want)
			}
		}
	}
}

// An administrator of a project may view it, and so may grant viewing it:
// the implication lives in the access resolution, which every check reads.
func TestProjectAdminImpliesView(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		sc   Scopes
		want PermSet
	}{
		{"project", Scopes{Project: 1}, AdminProjects | ViewProjects},
		{"package", Scopes{Project: 1, Package: 2}, AdminProjects | ViewProjects},
		{"fleet", Scopes{Fleet: 3}, AdminProjects},
		{"organisation", Scopes{}, AdminProjects},
	} {
		if got := withProjectImplications(c.sc, AdminProjects); got != c.want {
			t.Fatalf("%s: got %b, want %b", c.name, got, c.want)
		}
	}
	e := newEnv(t)
	alice, bob, mal := e.user("alice"), e.user("bob"), e.user("mallory")
	org := e.org(alice, "Acme")
	e.org(mal, "Evil")
	e.addMember(org, bob)
	e.must(200, alice, "PUT", "/organisations/"+org+"/permissions/"+org,
		map[string]any{"permissions": map[string]string{"VIEW_PROJECTS": "deny"}})
	p := e.must(201, alice, "POST", "/organisations/"+org+"/projects", map[string]any{"name": "P"}).obj(t)["id"].(string)
	e.must(200, alice, "PATCH", "/projects/"+p+"/permissions/"+bob.ID,
		map[string]any{"permissions": map[string]string{"ADMIN_PROJECTS": "allow"}})
	e.run(t, []scenario{
		{name: "admin sees the project", as: bob, method: "GET", path: "/projects/" + p, want: 200,
			check: func(t *testing.T, r *testResponse) {
				perms := r.obj(t)["permissions"].(map[string]any)
				if perms["VIEW_PROJECTS"] != true || perms["ADMIN_PROJECTS"] != true {
					t.Errorf("permissions %v, want VIEW and ADMIN true", perms)
				}
			}},
		{name: "admin grants viewing to everyone", as: bob, method: "PATCH", path: "/projects/" + p + "/permissions/" + org,
			body: map[string]any{"permissions": map[string]string{"VIEW_PROJECTS": "allow"}}, want: 200},
		{name: "foreign owner still refused", as: mal, method: "GET", path: "/projects/" + p, want: 403},
	})
}

// TestGrantOfFailsClosed: a stored layer or target the engine does not know
// is an error, never read as the organisation's or @everyone's.
func TestGrantOfFailsClosed(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ scope, target string }{
		{"workgroup", "user"}, {"", "role"}, {"organisation", "team"}, {"project", ""},
	} {
		if g, err := grantOf(tc.scope, tc.target, 0, int64(AllPermissions), 0); err == nil {
			t.Errorf("grantOf(%q, %q) = %+v, want an error", tc.scope, tc.target, g)
		}
	}
	for name, want := range scopeNames {
		g, err := grantOf(name, "organisation", 0, 1, 2)
		if err != nil || g.Scope != want || g.Target != TargetEveryone || g.Allow != 1 || g.Deny != 2 {
			t.Errorf("grantOf(%q) = %+v, %v", name, g, err)
		}
	}
}

// TestRequire: one set of answers for every check of the engine.
func TestRequire(t *testing.T) {
	t.Parallel()
	member := Access{UserID: 7, Member: true, perms: ViewProjects}
	pending := Access{UserID: 7, Member: true, Pending: true, perms: AllPermissions}
	owner := Access{UserID: 1, Owner: true}
	stranger := Access{UserID: 9}
	tests := []struct {
		name string
		err  error
		want int // 0: allowed
	}{
		{"member holds it", member.Require(ViewProjects), 0},
		{"membership only", member.Require(0), 0},
		{"member lacks it", member.Require(ManageTeams), 403},
		{"pending member holds nothing", pending.Require(0), 403},
		{"owner holds everything", owner.Require(ManageFleets), 0},
		{"stranger", stranger.Require(0), 403},
		{"leader without the permission", member.RequireOr(true, ManageTeams), 0},
		{"neither leader nor permission", member.RequireOr(false, ManageTeams), 403},
		{"a stranger who leads is still no member", stranger.RequireOr(true, ManageTeams), 403},
		{"self", member.RequireSelfOr(7, ManageInductions), 0},
		{"someone else without the permission", member.RequireSelfOr(8, ManageInductions), 403},
		{"someone else with the permission", owner.RequireSelfOr(8, ManageInductions), 0},
	}
	for _, tc := range tests {
		var got int
		if e, ok := tc.err.(*Error); ok {
			got = e.Status
		} else if tc.err != nil {
			got = -1
		}
		if got != tc.want {
			t.Errorf("%s: got %v, want status %d", tc.name, tc.err, tc.want)
		}
	}
	if msg := member.Require(ManageTeams).Error(); !strings.Contains(msg, "MANAGE_TEAMS") {
		t.Errorf("refusal %q does not name the permission", msg)
	}
}

// TestPermBoolsEncodesAsTheMap: the permissions object encodes exactly as
// the map of names to booleans it stands for (keys sorted, only keys asked).
func TestPermBoolsEncodesAsTheMap(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ set, keys PermSet }{
		{0, AllPermissions}, {AllPermissions, AllPermissions}, {ViewProjects | AdminProjects, ProjectPermissions},
		{EditDocuments, ViewDocuments | EditDocuments}, {AllPermissions, 0},
	} {
		want := map[string]bool{}
		tc.keys.Each(func(k Permission) { want[k.Name()] = tc.set&k != 0 })
		wantJSON, _ := json.Marshal(want)
		got, err := json.Marshal(tc.set.Bools(tc.keys))
		if err != nil || string(got) != string(wantJSON) {
			t.Fatalf("set %b keys %b: got %s (%v), want %s", tc.set, tc.keys, got, err, wantJSON)
		}
	}
}
