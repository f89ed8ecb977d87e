package server

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

func TestPackageCreate(t *testing.T) {
	t.Parallel()
	f := newProjFixture(t)
	p := str(f.project(t, f.alice, nil), "id")
	path := "/projects/" + p + "/packages"
	f.e.run(t, []scenario{
		{"defaults", f.alice, "POST", path, map[string]any{}, http.StatusCreated, func(t *testing.T, r *testResponse) {
			pk := r.obj(t)
			wantValue(t, pk, "name", "new package")
			wantValue(t, pk, "code", "")
			wantValue(t, pk, "description", "")
			wantValue(t, pk, "enabled", true)
			wantValue(t, pk, "project_id", p)
			wantValue(t, pk, "organisation_id", f.acme)
		}},
		{"all fields at their limits", f.alice, "POST", path, map[string]any{"code": strings.Repeat("c", 12), "name": strings.Repeat("n", 200), "description": "d", "enabled": false}, http.StatusCreated, func(t *testing.T, r *testResponse) {
			wantValue(t, r.obj(t), "enabled", false)
		}},
		{"creator of the project (ADMIN)", f.carol, "POST", "/projects/" + str(f.project(t, f.carol, nil), "id") + "/packages", map[string]any{}, http.StatusCreated, nil},
		{"code too long", f.alice, "POST", path, map[string]any{"code": strings.Repeat("c", 13)}, http.StatusBadRequest, wantField("code")},
		{"name too long", f.alice, "POST", path, map[string]any{"name": strings.Repeat("n", 201)}, http.StatusBadRequest, wantField("name")},
		{"enabled not a boolean", f.alice, "POST", path, map[string]any{"enabled": "yes"}, http.StatusBadRequest, wantField("enabled")},
		{"member without ADMIN", f.bob, "POST", path, map[string]any{}, http.StatusForbidden, nil},
		{"pending member", f.pen, "POST", path, map[string]any{}, http.StatusForbidden, nil},
		{"not a member", f.nobody, "POST", path, map[string]any{}, http.StatusForbidden, nil},
		{"foreign organisation's owner", f.mallory, "POST", path, map[string]any{}, http.StatusForbidden, nil},
		{"project absent", f.alice, "POST", "/projects/" + absentID + "/packages", map[string]any{}, http.StatusBadRequest, nil},
		{"refusals made nothing", f.alice, "GET", path, nil, http.StatusOK, func(t *testing.T, r *testResponse) {
			if n := r.Header.Get("X-Total-Count"); n != "2" {
				t.Errorf("packages: got %s, want 2", n)
			}
		}},
	})
}

func TestPackageGetPatch(t *testing.T) {
	t.Parallel()
	f := newProjFixture(t)
	p := str(f.project(t, f.alice, nil), "id")
	pk := str(f.e.must(http.StatusCreated, f.alice, "POST", "/projects/"+p+"/packages", map[string]any{"name": "Civil", "code": "CV"}).obj(t), "id")
	path := "/packages/" + pk
	f.e.run(t, []scenario{
		{"get", f.bob, "GET", path, nil, http.StatusOK, func(t *testing.T, r *testResponse) { wantValue(t, r.obj(t), "name", "Civil") }},
		{"get: pending member", f.pen, "GET", path, nil, http.StatusForbidden, nil},
		{"get: not a member", f.nobody, "GET", path, nil, http.StatusForbidden, nil},
		{"get: foreign organisation's owner", f.mallory, "GET", path, nil, http.StatusForbidden, nil},
		{"get: absent", f.alice, "GET", "/packages/" + absentID, nil, http.StatusNotFound, nil},
		{"get: malformed", f.alice, "GET", "/packages/-1", nil, http.StatusBadRequest, nil},
		{"patch", f.alice, "PATCH", path, map[string]any{"name": "Electrical", "enabled": false}, http.StatusOK, func(t *testing.T, r *testResponse) {
			got := r.obj(t)
			wantValue(t, got, "name", "Electrical")
			wantValue(t, got, "code", "CV")
			wantValue(t, got, "enabled", false)
		}},
		{"patch: member without ADMIN", f.bob, "PATCH", path, map[string]any{"name": "x"}, http.StatusForbidden, nil},
		{"patch: not a member", f.nobody, "PATCH", path, map[string]any{"name": "x"}, http.StatusForbidden, nil},
		{"patch: foreign organisation's owner", f.mallory, "PATCH", path, map[string]any{"name": "x"}, http.StatusForbidden, nil},
		{"patch: pending member", f.pen, "PATCH", path, map[string]any{"name": "x"}, http.StatusForbidden, nil},
		{"patch: name too long", f.alice, "PATCH", path, map[string]any{"name": strings.Repeat("n", 201)}, http.StatusBadRequest, wantField("name")},
		{"patch: enabled not a boolean", f.alice, "PATCH", path, map[string]any{"enabled": "no"}, http.StatusBadRequest, wantField("enabled")},
		{"patch: absent", f.alice, "PATCH", "/packages/" + absentID, map[string]any{"name": "x"}, http.StatusBadRequest, nil},
		{"patch: code too long", f.alice, "PATCH", path, map[string]any{"code": "1234567890123"}, http.StatusBadRequest, wantField("code")},
		{"patch: read-only project_id changed", f.alice, "PATCH", path, map[string]any{"project_id": "123456789"}, http.StatusBadRequest, wantField("project_id")},
		{"patch: read-only project_id sent back unchanged", f.alice, "PATCH", path, map[string]any{"project_id": p}, http.StatusOK, nil},
		{"unchanged by refusals", f.alice, "GET", path, nil, http.StatusOK, func(t *testing.T, r *testResponse) {
			wantValue(t, r.obj(t), "name", "Electrical")
			wantValue(t, r.obj(t), "code", "CV")
		}},
	})
}

func TestPackageList(t *testing.T) {
	t.Parallel()
	f := newProjFixture(t)
	p := str(f.project(t, f.alice, nil), "id")
	var pks []string
	for i, enabled := range []bool{true, false, true} {
		pks = append(pks, str(f.e.must(http.StatusCreated, f.alice, "POST", "/projects/"+p+"/packages", map[string]any{"name": "P" + string(rune('0'+i)), "enabled": enabled}).obj(t), "id"))
	}
	f.e.must(http.StatusCreated, f.alice, "POST", "/projects/"+str(f.project(t, f.alice, nil), "id")+"/packages", map[string]any{})
	path := "/projects/" + p + "/packages"
	f.e.run(t, []scenario{
		{"all", f.bob, "GET", path, nil, http.StatusOK, func(t *testing.T, r *testResponse) { wantIDs(t, r, 3, pks...) }},
		{"paged", f.bob, "GET", path + "?$skip=2", nil, http.StatusOK, func(t *testing.T, r *testResponse) { wantIDs(t, r, 3, pks[2]) }},
		{"pending member", f.pen, "GET", path, nil, http.StatusForbidden, nil},
		{"not a member", f.nobody, "GET", path, nil, http.StatusForbidden, nil},
		{"foreign organisation's owner", f.mallory, "GET", path, nil, http.StatusForbidden, nil},
		{"project absent", f.alice, "GET", "/projects/" + absentID + "/packages", nil, http.StatusBadRequest, nil},
	})
	t.Run("package grants hide and show packages", func(t *testing.T) {
		f.grant(t, "package", pks[0], "user", f.bob.ID, 0, ViewProjects)
		wantIDs(t, f.e.must(http.StatusOK, f.bob, "GET", path, nil), 2, pks[1], pks[2])
		wantIDs(t, f.e.must(http.StatusOK, f.carol, "GET", path, nil), 3, pks...)
		f.grant(t, "project", p, "organisation", f.acme, 0, ViewProjects)
		f.grant(t, "project", p, "user", f.bob.ID, ViewProjects, 0)
		f.grant(t, "package", pks[2], "role", f.leads, ViewProjects, 0)
		// carol: the project hides itself (403) even though a package allows.
		f.e.must(http.StatusForbidden, f.carol, "GET", path, nil)
		f.e.must(http.StatusOK, f.carol, "GET", "/packages/"+pks[2], nil)
		wantIDs(t, f.e.must(http.StatusOK, f.bob, "GET", path, nil), 2, pks[1], pks[2])
	})
	t.Run("filter", func(t *testing.T) {
		q := func(expr string) string { return path + "?$filter=" + url.QueryEscape(expr) }
		wantIDs(t, f.e.must(http.StatusOK, f.alice, "GET", q("enabled eq false"), nil), 1, pks[1])
		f.e.run(t, []scenario{
			{"enabled eq true", f.alice, "GET", q("enabled eq true"), nil, http.StatusOK, func(t *testing.T, r *testResponse) { wantIDs(t, r, 2, pks[0], pks[2]) }},
			{"bare enabled, paged", f.alice, "GET", q("enabled") + "&$skip=1", nil, http.StatusOK, func(t *testing.T, r *testResponse) { wantIDs(t, r, 2, pks[2]) }},
			{"not enabled", f.alice, "GET", q("not enabled"), nil, http.StatusOK, func(t *testing.T, r *testResponse) { wantIDs(t, r, 1, pks[1]) }},
			{"with visibility", f.bob, "GET", q("enabled"), nil, http.StatusOK, func(t *testing.T, r *testResponse) { wantIDs(t, r, 1, pks[2]) }},
			{"enabled not a boolean", f.alice, "GET", q("enabled eq 'x'"), nil, http.StatusBadRequest, wantField("enabled")},
			{"name is not filterable (decisions.md: only the row's fields)", f.alice, "GET", q("startswith(name, 'P')"), nil, http.StatusBadRequest, wantField("name")},
			{"code is not filterable", f.alice, "GET", q("code eq ''"), nil, http.StatusBadRequest, wantField("code")},
			{"syntax", f.alice, "GET", q("enabled eq"), nil, http.StatusBadRequest, wantField("$filter")},
			{"foreign organisation's owner", f.mallory, "GET", q("enabled"), nil, http.StatusForbidden, nil},
		})
	})
}

func TestPackageGrants(t *testing.T) {
	t.Parallel()
	f := newProjFixture(t)
	p := str(f.project(t, f.alice, nil), "id")
	pk := str(f.e.must(http.StatusCreated, f.alice, "POST", "/projects/"+p+"/packages", map[string]any{}).obj(t), "id")
	path := "/packages/" + pk + "/permissions/"
	f.e.run(t, []scenario{
		{"allow a member ADMIN here", f.alice, "PATCH", path + f.bob.ID, map[string]any{"permissions": map[string]string{"ADMIN_PROJECTS": "allow"}}, http.StatusOK, func(t *testing.T, r *testResponse) {
			g := r.obj(t)
			wantValue(t, g, "id", f.bob.ID)
			wantValue(t, g, "type", "user")
			wantValue(t, g, "permissions", map[string]any{"ADMIN_PROJECTS": "allow"})
		}},
		{"member administers the package", f.bob, "PATCH", "/packages/" + pk, map[string]any{"name": "bob's"}, http.StatusOK, nil},
		{"but not the project", f.bob, "PATCH", "/projects/" + p, map[string]any{"name": "x"}, http.StatusForbidden, nil},
		{"and may list its grants", f.bob, "GET", "/packages/" + pk + "/permissions", nil, http.StatusOK, func(t *testing.T, r *testResponse) {
			if n := len(r.arr(t)); n != 1 {
				t.Errorf("grants: got %d, want 1", n)
			}
		}},
		{"deny @everyone", f.alice, "PATCH", path + f.acme, map[string]any{"permissions": map[string]string{"VIEW_PROJECTS": "deny"}}, http.StatusOK, nil},
		{"carol no longer sees it", f.carol, "GET", "/packages/" + pk, nil, http.StatusForbidden, nil},
		{"permissions missing", f.alice, "PATCH", path + f.acme, map[string]any{}, http.StatusBadRequest, wantField("permissions")},
		{"package absent", f.alice, "PATCH", "/packages/" + absentID + "/permissions/" + f.acme, map[string]any{"permissions": map[string]string{}}, http.StatusNotFound, nil},
		{"target absent", f.alice, "PATCH", path + absentID, map[string]any{"permissions": map[string]string{}}, http.StatusNotFound, nil},
		{"target: another organisation", f.alice, "PATCH", path + f.evil, map[string]any{"permissions": map[string]string{}}, http.StatusNotFound, nil},
		{"target: another organisation's member", f.alice, "PATCH", path + f.mallory.ID, map[string]any{"permissions": map[string]string{}}, http.StatusNotFound, nil},
		{"not a project permission", f.alice, "PATCH", path + f.acme, map[string]any{"permissions": map[string]string{"MANAGE_ROLES": "allow"}}, http.StatusBadRequest, wantField("permissions.MANAGE_ROLES")},
		{"bad grant type", f.alice, "PATCH", path + f.acme, map[string]any{"permissions": map[string]string{"VIEW_PROJECTS": "yes"}}, http.StatusBadRequest, wantField("permissions.VIEW_PROJECTS")},
		{"pending member", f.pen, "PATCH", path + f.acme, map[string]any{"permissions": map[string]string{"VIEW_PROJECTS": "allow"}}, http.StatusForbidden, nil},
		{"member without ADMIN", f.carol, "PATCH", path + f.acme, map[string]any{"permissions": map[string]string{"VIEW_PROJECTS": "allow"}}, http.StatusForbidden, nil},
		{"not a member", f.nobody, "PATCH", path + f.acme, map[string]any{"permissions": map[string]string{"VIEW_PROJECTS": "allow"}}, http.StatusForbidden, nil},
		{"foreign organisation's owner", f.mallory, "PATCH", path + f.acme, map[string]any{"permissions": map[string]string{"VIEW_PROJECTS": "allow"}}, http.StatusForbidden, nil},
		{"list", f.alice, "GET", "/packages/" + pk + "/permissions", nil, http.StatusOK, func(t *testing.T, r *testResponse) {
			if n := len(r.arr(t)); n != 2 {
				t.Errorf("grants: got %d, want 2", n)
			}
		}},
		{"list: member without ADMIN", f.carol, "GET", "/packages/" + pk + "/permissions", nil, http.StatusForbidden, nil},
		{"list: foreign organisation's owner", f.mallory, "GET", "/packages/" + pk + "/permissions", nil, http.StatusForbidden, nil},
		{"list: not a member", f.nobody, "GET", "/packages/" + pk + "/permissions", nil, http.StatusForbidden, nil},
		{"list: pending member", f.pen, "GET", "/packages/" + pk + "/permissions", nil, http.StatusForbidden, nil},
		{"list: package absent", f.alice, "GET", "/packages/" + absentID + "/permissions", nil, http.StatusNotFound, nil},
		{"list: malformed", f.alice, "GET", "/packages/p/permissions", nil, http.StatusBadRequest, nil},
	})
}
