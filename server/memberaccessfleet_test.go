package server

import (
	"net/http"
	"testing"
)

// TestMemberAccessFleet: ?fleet= explains the member's access on one fleet,
// the fleet layer first (their own grant, then their highest role that sets
// a permission there, then @everyone), then the organisation's; and the
// answer agrees with what the fleet's routes then let the member do. A
// fleet of another organisation, or none, is 400 naming fleet, as a project
// of another organisation is.
func TestMemberAccessFleet(t *testing.T) {
	t.Parallel()
	f := newAssetFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	crew := e.role(f.alice, f.acme, "Crew")
	e.assign(f.alice, f.acme, f.bob, crew)
	dan := e.user("dan") // a member whose own fleet grant denies what Crew allows there
	e.addMember(f.acme, dan)
	e.assign(f.alice, f.acme, dan, crew)
	// In the organisation nobody but alice holds MANAGE_FLEETS; on Trucks
	// Crew does, and dan's own grant there takes it away again.
	fleetPerms := func(target, value string) {
		e.must(http.StatusOK, f.alice, "PATCH", "/fleets/"+f.fleet+"/permissions/"+target, map[string]any{"permissions": map[string]string{"MANAGE_FLEETS": value}})
	}
	fleetPerms(crew, "allow")
	fleetPerms(dan.ID, "deny")
	// On Vans, @everyone is denied it (the organisation grants nobody it anyway).
	e.must(http.StatusOK, f.alice, "PATCH", "/fleets/"+f.otherFleet+"/permissions/"+f.acme, map[string]any{"permissions": map[string]string{"MANAGE_FLEETS": "deny"}})
	evilFleet := e.must(http.StatusCreated, f.mallory, "POST", "/organisations/"+f.evil+"/fleets", map[string]any{"name": "Evil"}).obj(t)["id"].(string)
	project := e.must(http.StatusCreated, f.alice, "POST", acme+"/projects", map[string]any{"name": "Bridge"}).obj(t)["id"].(string)
	bob, danPath := acme+"/members/"+f.bob.ID+"/access", acme+"/members/"+dan.ID+"/access"

	manageFleets := func(allowed bool, reason, scope, scopeID, target, role, value string) func(t *testing.T, r *testResponse) {
		return func(t *testing.T, r *testResponse) {
			t.Helper()
			o := r.obj(t)
			p, _ := o["permissions"].(map[string]any)["MANAGE_FLEETS"].(map[string]any)
			if p == nil || p["allowed"] != allowed || p["reason"] != reason {
				t.Fatalf("MANAGE_FLEETS = %v, want allowed %v (%s)", p, allowed, reason)
			}
			d, _ := p["decided_by"].(map[string]any)
			if scope == "" {
				if d != nil {
					t.Fatalf("decided by %v, want none", d)
				}
				return
			}
			if d == nil || d["scope"] != scope || d["scope_id"] != scopeID || d["target"] != target || d["value"] != value {
				t.Fatalf("decided by %v, want %s %s %s %s", d, scope, scopeID, target, value)
			}
			if rj, _ := d["role"].(map[string]any); role != "" && (rj == nil || rj["name"] != role) {
				t.Fatalf("decided by role %v, want %s", d["role"], role)
			}
		}
	}
	inFleet := func(id string, check func(t *testing.T, r *testResponse)) func(t *testing.T, r *testResponse) {
		return func(t *testing.T, r *testResponse) {
			t.Helper()
			if o := r.obj(t); o["scope"] != "fleet" || o["scope_id"] != id {
				t.Fatalf("scope %v %v, want fleet %s", o["scope"], o["scope_id"], id)
			}
			check(t, r)
		}
	}
	e.run(t, []scenario{
		{"in the organisation no grant sets it", f.alice, "GET", bob, nil, 200, manageFleets(false, "unset", "", "", "", "", "")},
		{"on the fleet the role's fleet grant decides", f.alice, "GET", bob + "?fleet=" + f.fleet, nil, 200,
			inFleet(f.fleet, manageFleets(true, "grant", "fleet", f.fleet, "role", "Crew", "allow"))},
		{"the member's own fleet grant beats the role", f.alice, "GET", danPath + "?fleet=" + f.fleet, nil, 200,
			inFleet(f.fleet, manageFleets(false, "grant", "fleet", f.fleet, "user", "", "deny"))},
		{"@everyone's fleet grant on another fleet", f.alice, "GET", bob + "?fleet=" + f.otherFleet, nil, 200,
			inFleet(f.otherFleet, manageFleets(false, "grant", "fleet", f.otherFleet, "everyone", "@everyone", "deny"))},
		{"a permission the fleet layer does not set falls to the organisation", f.alice, "GET", bob + "?fleet=" + f.fleet, nil, 200, func(t *testing.T, r *testResponse) {
			p := r.obj(t)["permissions"].(map[string]any)["VIEW_DOCUMENTS"].(map[string]any)
			if d, _ := p["decided_by"].(map[string]any); p["allowed"] != true || d == nil || d["scope"] != "organisation" || d["target"] != "everyone" {
				t.Fatalf("VIEW_DOCUMENTS on the fleet = %v", p)
			}
		}},
		{"the owner holds everything on a fleet", f.alice, "GET", acme + "/members/" + f.alice.ID + "/access?fleet=" + f.fleet, nil, 200,
			inFleet(f.fleet, manageFleets(true, "owner", "", "", "", "", ""))},
		{"a member asks about themself on a fleet", f.bob, "GET", bob + "?fleet=" + f.fleet, nil, 200, inFleet(f.fleet, manageFleets(true, "grant", "fleet", f.fleet, "role", "Crew", "allow"))},
		{"a member cannot ask about others on a fleet", f.bob, "GET", danPath + "?fleet=" + f.fleet, nil, 403, nil},
		{"another organisation's owner, with its own fleet", f.mallory, "GET", bob + "?fleet=" + evilFleet, nil, 403, nil},
		{"another organisation's owner, with our fleet", f.mallory, "GET", bob + "?fleet=" + f.fleet, nil, 403, nil},
		{"another organisation's fleet", f.alice, "GET", bob + "?fleet=" + evilFleet, nil, 400, wantField("fleet")},
		{"a fleet that does not exist", f.alice, "GET", bob + "?fleet=123456789", nil, 400, wantField("fleet")},
		{"a fleet that is not an id", f.alice, "GET", bob + "?fleet=abc", nil, 400, wantField("fleet")},
		{"a negative fleet", f.alice, "GET", bob + "?fleet=-4", nil, 400, wantField("fleet")},
		{"a fleet and a project", f.alice, "GET", bob + "?fleet=" + f.fleet + "&project=" + project, nil, 400, wantField("fleet")},
		{"an absent fleet in an absent organisation", f.alice, "GET", "/organisations/123456789/members/" + f.bob.ID + "/access?fleet=" + f.fleet, nil, 404, nil},
		// What the explanation says is what the fleet's routes do.
		{"bob (Crew on Trucks) renames Trucks", f.bob, "PATCH", "/fleets/" + f.fleet, map[string]any{"name": "Lorries"}, 200, nil},
		{"dan (denied on Trucks) cannot", dan, "PATCH", "/fleets/" + f.fleet, map[string]any{"name": "Dan's"}, 403, nil},
		{"bob cannot rename Vans", f.bob, "PATCH", "/fleets/" + f.otherFleet, map[string]any{"name": "Bob's"}, 403, nil},
	})
}

// TestFleetAdminProjectsImpliesNothing: ADMIN_PROJECTS implies VIEW_PROJECTS
// on a project or package only. On a fleet (whose layer takes MANAGE_FLEETS
// alone) it gives nothing more than in the organisation: the explanation
// says so, as the access every fleet route resolves does.
func TestFleetAdminProjectsImpliesNothing(t *testing.T) {
	t.Parallel()
	f := newAssetFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	admins := e.role(f.alice, f.acme, "Admins")
	e.assign(f.alice, f.acme, f.bob, admins)
	e.grant(f.alice, f.acme, admins, map[string]string{"ADMIN_PROJECTS": "allow", "VIEW_PROJECTS": "deny"})
	project := e.must(http.StatusCreated, f.alice, "POST", acme+"/projects", map[string]any{"name": "Bridge"}).obj(t)["id"].(string)
	evilFleet := e.must(http.StatusCreated, f.mallory, "POST", "/organisations/"+f.evil+"/fleets", map[string]any{"name": "Evil"}).obj(t)["id"].(string)
	path := acme + "/members/" + f.bob.ID + "/access"
	viewProjects := func(allowed bool, reason string) func(t *testing.T, r *testResponse) {
		return func(t *testing.T, r *testResponse) {
			t.Helper()
			p, _ := r.obj(t)["permissions"].(map[string]any)["VIEW_PROJECTS"].(map[string]any)
			if p == nil || p["allowed"] != allowed || p["reason"] != reason {
				t.Fatalf("VIEW_PROJECTS = %v, want allowed %v (%s)", p, allowed, reason)
			}
		}
	}
	e.run(t, []scenario{
		{"a fleet grant takes MANAGE_FLEETS only", f.alice, "PATCH", "/fleets/" + f.fleet + "/permissions/" + admins,
			map[string]any{"permissions": map[string]string{"ADMIN_PROJECTS": "allow"}}, 400, nil},
		{"in the organisation the deny stands", f.alice, "GET", path, nil, 200, viewProjects(false, "grant")},
		{"on a project administering implies viewing", f.alice, "GET", path + "?project=" + project, nil, 200, viewProjects(true, "implied")},
		{"on a fleet it implies nothing", f.alice, "GET", path + "?fleet=" + f.fleet, nil, 200, viewProjects(false, "grant")},
		{"bob asks about himself on the fleet", f.bob, "GET", path + "?fleet=" + f.fleet, nil, 200, viewProjects(false, "grant")},
		{"another organisation's owner", f.mallory, "GET", path + "?fleet=" + f.fleet, nil, 403, nil},
		{"another organisation's fleet", f.alice, "GET", path + "?fleet=" + evilFleet, nil, 400, wantField("fleet")},
		// What it does hold on the fleet is unchanged: membership reads it, no write.
		{"bob reads the fleet", f.bob, "GET", "/fleets/" + f.fleet, nil, 200, nil},
		{"bob cannot change it", f.bob, "PATCH", "/fleets/" + f.fleet, map[string]any{"name": "Bob's"}, 403, nil},
	})
}
