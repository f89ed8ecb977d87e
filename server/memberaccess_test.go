package server

import (
	"net/http"
	"testing"
)

func TestMemberAccess(t *testing.T) {
	t.Parallel()
	f := newOrgFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	crew := e.role(f.alice, f.acme, "Crew")
	lead := e.role(f.alice, f.acme, "Lead")
	e.assign(f.alice, f.acme, f.bob, crew)
	e.assign(f.alice, f.acme, f.bob, lead)
	// @everyone allows VIEW_PROJECTS by default; Crew denies it, Lead (the
	// later role, so lower in rank) allows it: Crew's rank decides.
	e.grant(f.alice, f.acme, crew, map[string]string{"VIEW_PROJECTS": "deny", "CREATE_PROJECTS": "allow"})
	e.grant(f.alice, f.acme, lead, map[string]string{"VIEW_PROJECTS": "allow", "MANAGE_TEAMS": "allow"})
	// Bob's own grant beats every role.
	e.grant(f.alice, f.acme, f.bob.ID, map[string]string{"CREATE_PROJECTS": "deny"})
	project := e.must(http.StatusCreated, f.alice, "POST", acme+"/projects", map[string]any{"name": "Bridge"}).obj(t)["id"].(string)
	// On the project, Lead administers (and so views).
	e.must(http.StatusOK, f.alice, "PATCH", "/projects/"+project+"/permissions/"+lead, map[string]any{"permissions": map[string]string{"ADMIN_PROJECTS": "allow"}})
	evilProject := e.must(http.StatusCreated, f.mallory, "POST", "/organisations/"+f.evil+"/projects", map[string]any{"name": "Evil"}).obj(t)["id"].(string)
	path := acme + "/members/" + f.bob.ID + "/access"

	perm := func(t *testing.T, r *testResponse, name string) map[string]any {
		t.Helper()
		p, _ := r.obj(t)["permissions"].(map[string]any)[name].(map[string]any)
		if p == nil {
			t.Fatalf("no %s in %s", name, r.Body)
		}
		return p
	}
	decided := func(name string, allowed bool, scope, target, role, value string) func(t *testing.T, r *testResponse) {
		return func(t *testing.T, r *testResponse) {
			t.Helper()
			p := perm(t, r, name)
			d, _ := p["decided_by"].(map[string]any)
			if p["allowed"] != allowed || p["reason"] != "grant" || d == nil || d["scope"] != scope || d["target"] != target || d["value"] != value {
				t.Fatalf("%s = %v, want allowed %v by %s %s %s", name, p, allowed, scope, target, value)
			}
			if role != "" {
				if rj, _ := d["role"].(map[string]any); rj == nil || rj["name"] != role {
					t.Fatalf("%s decided by role %v, want %s", name, d["role"], role)
				}
			}
		}
	}
	all := func(checks ...func(t *testing.T, r *testResponse)) func(t *testing.T, r *testResponse) {
		return func(t *testing.T, r *testResponse) {
			for _, c := range checks {
				c(t, r)
			}
		}
	}
	e.run(t, []scenario{
		{"the member's own grant decides", f.alice, "GET", path, nil, 200, decided("CREATE_PROJECTS", false, "organisation", "user", "", "deny")},
		{"the highest role decides", f.alice, "GET", path, nil, 200, decided("VIEW_PROJECTS", false, "organisation", "role", "Crew", "deny")},
		{"a lower role sets what nobody above sets", f.alice, "GET", path, nil, 200, decided("MANAGE_TEAMS", true, "organisation", "role", "Lead", "allow")},
		{"@everyone", f.alice, "GET", path, nil, 200, decided("VIEW_DOCUMENTS", true, "organisation", "everyone", "@everyone", "allow")},
		{"unset is denied", f.alice, "GET", path, nil, 200, func(t *testing.T, r *testResponse) {
			if p := perm(t, r, "MANAGE_ROLES"); p["allowed"] != false || p["reason"] != "unset" || p["decided_by"] != nil {
				t.Fatalf("MANAGE_ROLES = %v", p)
			}
			if n := len(r.obj(t)["permissions"].(map[string]any)); n != 18 {
				t.Fatalf("%d permissions, want all 18", n)
			}
		}},
		{"on the project its grant decides", f.alice, "GET", path + "?project=" + project, nil, 200, all(
			decided("ADMIN_PROJECTS", true, "project", "role", "Lead", "allow"),
			func(t *testing.T, r *testResponse) {
				// Crew's organisation deny is the deciding grant, but administering implies viewing.
				if p := perm(t, r, "VIEW_PROJECTS"); p["allowed"] != true || p["reason"] != "implied" {
					t.Fatalf("VIEW_PROJECTS on the project = %v", p)
				}
				if o := r.obj(t); o["scope"] != "project" || o["scope_id"] != project {
					t.Fatalf("scope = %v %v", o["scope"], o["scope_id"])
				}
			})},
		{"the owner holds everything", f.alice, "GET", acme + "/members/" + f.alice.ID + "/access", nil, 200, func(t *testing.T, r *testResponse) {
			if p := perm(t, r, "MANAGE_ROLES"); p["allowed"] != true || p["reason"] != "owner" {
				t.Fatalf("owner's MANAGE_ROLES = %v", p)
			}
		}},
		{"a pending member holds nothing", f.alice, "GET", acme + "/members/" + f.pen.ID + "/access", nil, 200, func(t *testing.T, r *testResponse) {
			if p := perm(t, r, "VIEW_PROJECTS"); p["allowed"] != false || p["reason"] != "not a member" {
				t.Fatalf("pending VIEW_PROJECTS = %v", p)
			}
		}},
		{"a member asks about themself", f.bob, "GET", path, nil, 200, nil},
		{"a member cannot ask about others", f.bob, "GET", acme + "/members/" + f.alice.ID + "/access", nil, 403, nil},
		{"the pending member cannot ask", f.pen, "GET", acme + "/members/" + f.pen.ID + "/access", nil, 403, nil},
		{"another organisation's owner", f.mallory, "GET", path, nil, 403, nil},
		{"about a stranger", f.alice, "GET", acme + "/members/" + f.nobody.ID + "/access", nil, 404, nil},
		{"another organisation's member", f.alice, "GET", acme + "/members/" + f.mallory.ID + "/access", nil, 404, nil},
		{"another organisation's project", f.alice, "GET", path + "?project=" + evilProject, nil, 400, wantField("project")},
		{"a project that is not an id", f.alice, "GET", path + "?project=abc", nil, 400, wantField("project")},
		{"a package that does not exist", f.alice, "GET", path + "?package=123456", nil, 400, wantField("package")},
		{"absent organisation", f.alice, "GET", "/organisations/123456789/members/" + f.bob.ID + "/access", nil, 404, nil},
		{"no token", nil, "GET", path, nil, 401, nil},
	})
}
