package server

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
)

// wiFixture is the org fixture with work item types, a project with a
// milestone and a package, a location with a sub location, and the same
// kinds of rows in the foreign organisation.
type wiFixture struct {
	*orgFixture
	task, defect, evilType    string // types: counter-numbered, prefix-numbered, foreign
	project, milestone, pkg   string
	other, otherMilestone     string // a second project and its milestone
	location, subLocation     string
	evilProject, evilLocation string
	evilMilestone             string
	prefix                    string
}

func newWIFixture(t *testing.T) *wiFixture {
	f := &wiFixture{orgFixture: newOrgFixture(t)}
	e, acme, evil := f.e, "/organisations/"+f.acme, "/organisations/"+f.evil
	id := func(r *testResponse) string { return r.obj(t)["id"].(string) }
	f.prefix = id(e.must(201, f.alice, "POST", acme+"/prefixes", map[string]any{"number_format": "D-{number}", "number_digits": 3}))
	f.task = id(e.must(201, f.alice, "POST", acme+"/work-item-types", map[string]any{"name": "Task"}))
	f.defect = id(e.must(201, f.alice, "POST", acme+"/work-item-types", map[string]any{"name": "Defect", "prefix_id": f.prefix}))
	f.evilType = id(e.must(201, f.mallory, "POST", evil+"/work-item-types", map[string]any{"name": "Theirs"}))
	f.project = id(e.must(201, f.alice, "POST", acme+"/projects", map[string]any{"name": "Plant"}))
	f.milestone = id(e.must(201, f.alice, "POST", "/projects/"+f.project+"/milestones", map[string]any{"name": "M1"}))
	f.pkg = id(e.must(201, f.alice, "POST", "/projects/"+f.project+"/packages", map[string]any{"name": "Pk"}))
	f.other = id(e.must(201, f.alice, "POST", acme+"/projects", map[string]any{"name": "Other"}))
	f.otherMilestone = id(e.must(201, f.alice, "POST", "/projects/"+f.other+"/milestones", map[string]any{"name": "M2"}))
	f.location = id(e.must(201, f.alice, "POST", acme+"/locations", map[string]any{"name": "Site"}))
	f.subLocation = id(e.must(201, f.alice, "POST", "/locations/"+f.location+"/sub-locations", map[string]any{"name": "Bay"}))
	f.evilProject = id(e.must(201, f.mallory, "POST", evil+"/projects", map[string]any{"name": "Theirs"}))
	f.evilMilestone = id(e.must(201, f.mallory, "POST", "/projects/"+f.evilProject+"/milestones", map[string]any{"name": "EM"}))
	f.evilLocation = id(e.must(201, f.mallory, "POST", evil+"/locations", map[string]any{"name": "There"}))
	return f
}

func TestWorkItems(t *testing.T) {
	t.Parallel()
	f := newWIFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	wi := func(extra map[string]any) map[string]any {
		b := map[string]any{"type_id": f.task, "title": "Fix the pump"}
		for k, v := range extra {
			b[k] = v
		}
		return b
	}
	evilFleet := e.must(201, f.mallory, "POST", "/organisations/"+f.evil+"/fleets", map[string]any{"name": "Theirs"}).obj(t)["id"].(string)
	evilDoc := e.must(201, f.mallory, "POST", "/documents", map[string]any{"organisation_id": f.evil, "title": "Theirs"}).obj(t)["id"].(string)
	fleet := e.must(201, f.alice, "POST", acme+"/fleets", map[string]any{"name": "Ours"}).obj(t)["id"].(string)
	e.run(t, []scenario{
		{"fleet of another organisation", f.alice, "POST", acme + "/workitems", wi(map[string]any{"fleet_id": evilFleet}), 400, wantField("fleet_id")},
		{"member without CREATE_WORKITEMS", f.bob, "POST", acme + "/workitems", wi(nil), 403, nil},
		{"pending member", f.pen, "POST", acme + "/workitems", wi(nil), 403, nil},
		{"other organisation", f.mallory, "POST", acme + "/workitems", wi(nil), 403, nil},
		{"no token", nil, "POST", acme + "/workitems", wi(nil), 401, nil},
		{"absent organisation", f.alice, "POST", "/organisations/123456789/workitems", wi(nil), 400, nil},
		{"type and title required", f.alice, "POST", acme + "/workitems", map[string]any{}, 400, func(t *testing.T, r *testResponse) {
			wantField("type_id")(t, r)
			wantField("title")(t, r)
		}},
		{"title under 2", f.alice, "POST", acme + "/workitems", wi(map[string]any{"title": " x "}), 400, wantField("title")},
		{"title over 200", f.alice, "POST", acme + "/workitems", wi(map[string]any{"title": strings.Repeat("t", 201)}), 400, wantField("title")},
		{"bad status", f.alice, "POST", acme + "/workitems", wi(map[string]any{"status": "done"}), 400, wantField("status")},
		{"bad start_at", f.alice, "POST", acme + "/workitems", wi(map[string]any{"start_at": "today"}), 400, wantField("start_at")},
		{"finish before start", f.alice, "POST", acme + "/workitems", wi(map[string]any{"start_at": "2026-12-02T00:00:00Z", "finish_at": "2026-12-01T00:00:00Z"}), 400, wantField("finish_at")},
		{"wrong type", f.alice, "POST", acme + "/workitems", wi(map[string]any{"title": 7}), 400, wantField("title")},
		{"malformed JSON", f.alice, "POST", acme + "/workitems", `{"title":`, 400, nil},
		{"number is read-only", f.alice, "POST", acme + "/workitems", wi(map[string]any{"number": 1}), 400, wantField("number")},
		{"type of another organisation", f.alice, "POST", acme + "/workitems", wi(map[string]any{"type_id": f.evilType}), 400, wantField("type_id")},
		{"absent type", f.alice, "POST", acme + "/workitems", wi(map[string]any{"type_id": "123456789"}), 400, wantField("type_id")},
		{"project of another organisation", f.alice, "POST", acme + "/workitems", wi(map[string]any{"project_id": f.evilProject}), 400, wantField("project_id")},
		{"milestone of another organisation", f.alice, "POST", acme + "/workitems", wi(map[string]any{"project_id": f.project, "milestone_id": f.evilMilestone}), 400, wantField("milestone_id")},
		{"milestone of another project", f.alice, "POST", acme + "/workitems", wi(map[string]any{"project_id": f.project, "milestone_id": f.otherMilestone}), 400, wantField("milestone_id")},
		{"milestone without project", f.alice, "POST", acme + "/workitems", wi(map[string]any{"milestone_id": f.milestone}), 400, wantField("milestone_id")},
		{"package of another project", f.alice, "POST", acme + "/workitems", wi(map[string]any{"project_id": f.other, "package_id": f.pkg}), 400, wantField("package_id")},
		{"location of another organisation", f.alice, "POST", acme + "/workitems", wi(map[string]any{"location_id": f.evilLocation}), 400, wantField("location_id")},
		{"sub location without its location", f.alice, "POST", acme + "/workitems", wi(map[string]any{"sub_location_id": f.subLocation}), 400, wantField("sub_location_id")},
		{"document of another organisation", f.alice, "POST", acme + "/workitems", wi(map[string]any{"document_id": evilDoc}), 400, wantField("document_id")},
		{"absent document", f.alice, "POST", acme + "/workitems", wi(map[string]any{"document_id": "123456789"}), 400, wantField("document_id")},
		{"absent fleet", f.alice, "POST", acme + "/workitems", wi(map[string]any{"fleet_id": "123456789"}), 400, wantField("fleet_id")},
		{"absent asset group", f.alice, "POST", acme + "/workitems", wi(map[string]any{"asset_group_id": "123456789"}), 400, wantField("asset_group_id")},
		{"assignee of another organisation", f.alice, "POST", acme + "/workitems", wi(map[string]any{"assignee_ids": []string{f.mallory.ID}}), 400, wantField("assignee_ids")},
		{"pending assignee", f.alice, "POST", acme + "/workitems", wi(map[string]any{"assignee_ids": []string{f.pen.ID}}), 400, wantField("assignee_ids")},
		{"too many assignees", f.alice, "POST", acme + "/workitems", wi(map[string]any{"assignee_ids": slices.Repeat([]string{"1"}, 101)}), 400, wantField("assignee_ids")},
	})
	// Nothing refused above drew a number: the first item is number 1.
	first := e.must(201, f.alice, "POST", acme+"/workitems", wi(map[string]any{
		"project_id": f.project, "milestone_id": f.milestone, "package_id": f.pkg, "location_id": f.location,
		"sub_location_id": f.subLocation, "fleet_id": fleet, "assignee_ids": []string{f.bob.ID, f.bob.ID}, "description": "leaks",
		"start_at": "2026-12-01T08:00:00+01:00", "finish_at": "2026-12-02T00:00:00Z"})).obj(t)
	if first["number"] != float64(1) || first["formatted_number"] != "1" || first["status"] != "open" ||
		first["type"].(map[string]any)["name"] != "Task" || first["milestone_id"] != f.milestone || first["fleet_id"] != fleet ||
		first["start_at"] != "2026-12-01T07:00:00.000Z" || len(first["assignees"].([]any)) != 1 {
		t.Fatalf("created %v", first)
	}
	tr := first["tracking"].(map[string]any)
	if tr["created_by"].(map[string]any)["id"] != f.alice.ID || tr["closed_at"] != nil {
		t.Fatalf("tracking %v", tr)
	}
	d1 := e.must(201, f.alice, "POST", acme+"/workitems", wi(map[string]any{"type_id": f.defect})).obj(t)
	if d1["number"] != float64(1) || d1["formatted_number"] != "D-001" {
		t.Fatalf("prefix numbering %v", d1)
	}
	second := e.must(201, f.alice, "POST", acme+"/workitems", wi(map[string]any{"title": "Paint"})).obj(t)
	if second["number"] != float64(2) {
		t.Fatalf("counter numbering %v", second)
	}
	path := "/workitems/" + first["id"].(string)
	e.run(t, []scenario{
		{"member views", f.bob, "GET", path, nil, 200, wantKey("title", "Fix the pump")},
		{"pending member cannot view", f.pen, "GET", path, nil, 403, nil},
		{"other organisation cannot view", f.mallory, "GET", path, nil, 403, nil},
		{"absent", f.alice, "GET", "/workitems/123456789", nil, 404, nil},
		{"bad id", f.alice, "GET", "/workitems/x", nil, 400, nil},
		{"member lists", f.bob, "GET", acme + "/workitems", nil, 200, func(t *testing.T, r *testResponse) { wantLen(3)(t, r); wantTotal("3")(t, r) }},
		{"filter by type", f.bob, "GET", acme + "/workitems?$filter=" + url.QueryEscape("type_id eq '"+f.defect+"'"), nil, 200, wantLen(1)},
		{"filter by project", f.bob, "GET", acme + "/workitems?$filter=" + url.QueryEscape("project_id eq '"+f.project+"'"), nil, 200, wantLen(1)},
		{"filter by start_at", f.bob, "GET", acme + "/workitems?$filter=" + url.QueryEscape("start_at ge 2026-12-01T00:00:00Z"), nil, 200, wantLen(1)},
		{"filter on an unknown field", f.bob, "GET", acme + "/workitems?$filter=" + url.QueryEscape("title eq 'x'"), nil, 400, wantField("title")},
		{"paging", f.bob, "GET", acme + "/workitems?$top=1&$skip=2", nil, 200, func(t *testing.T, r *testResponse) { wantLen(1)(t, r); wantTotal("3")(t, r) }},
		{"other organisation cannot list", f.mallory, "GET", acme + "/workitems", nil, 403, nil},
		{"pending member cannot list", f.pen, "GET", acme + "/workitems", nil, 403, nil},
		{"member cannot patch", f.bob, "PATCH", path, map[string]any{"title": "Mine"}, 403, nil},
		{"other organisation cannot patch", f.mallory, "PATCH", path, map[string]any{"title": "Mine"}, 403, nil},
		{"number read-only", f.alice, "PATCH", path, map[string]any{"number": 5}, 400, wantField("number")},
		{"sent back unchanged", f.alice, "PATCH", path, map[string]any{"number": 1, "formatted_number": "1"}, 200, nil},
		{"foreign type on patch", f.alice, "PATCH", path, map[string]any{"type_id": f.evilType}, 400, wantField("type_id")},
		{"foreign location on patch", f.alice, "PATCH", path, map[string]any{"location_id": f.evilLocation}, 400, wantField("location_id")},
		{"foreign assignee on patch", f.alice, "PATCH", path, map[string]any{"assignee_ids": []string{f.mallory.ID}}, 400, wantField("assignee_ids")},
		{"close", f.alice, "PATCH", path, map[string]any{"status": "closed"}, 200, func(t *testing.T, r *testResponse) {
			o := r.obj(t)
			tr := o["tracking"].(map[string]any)
			if o["status"] != "closed" || tr["closed_at"] == nil || tr["closed_by"].(map[string]any)["id"] != f.alice.ID {
				t.Fatalf("closed %v", o)
			}
		}},
		{"filter closed", f.bob, "GET", acme + "/workitems?$filter=" + url.QueryEscape("status eq 'closed'"), nil, 200, wantLen(1)},
		{"reopen", f.alice, "PATCH", path, map[string]any{"status": "open"}, 200, func(t *testing.T, r *testResponse) {
			if tr := r.obj(t)["tracking"].(map[string]any); tr["closed_at"] != nil || tr["closed_by"] != nil {
				t.Fatalf("reopened %v", tr)
			}
		}},
		{"move project drops milestone and package", f.alice, "PATCH", path, map[string]any{"project_id": f.other}, 200, func(t *testing.T, r *testResponse) {
			if o := r.obj(t); o["project_id"] != f.other || o["milestone_id"] != nil || o["package_id"] != nil {
				t.Fatalf("moved %v", o)
			}
		}},
		{"clear assignees and sub location", f.alice, "PATCH", path, map[string]any{"assignee_ids": []string{}, "sub_location_id": nil}, 200, func(t *testing.T, r *testResponse) {
			if o := r.obj(t); len(o["assignees"].([]any)) != 0 || o["sub_location_id"] != nil || o["location_id"] != f.location {
				t.Fatalf("patched %v", o)
			}
		}},
		{"refused patches left the number", f.bob, "GET", path, nil, 200, wantKey("number", 1)},
	})
	// A deleted document keeps its work items but takes no new one.
	doc := e.must(201, f.alice, "POST", "/documents", map[string]any{"organisation_id": f.acme, "title": "Spec"}).obj(t)["id"].(string)
	linked := e.must(201, f.alice, "POST", acme+"/workitems", wi(map[string]any{"document_id": doc})).obj(t)["id"].(string)
	if r := e.do(f.alice, "DELETE", "/documents/"+doc, nil); r.Status >= 300 {
		t.Fatalf("delete document: %d %s", r.Status, r.Body)
	}
	e.run(t, []scenario{
		{"an item of a deleted document still patches", f.alice, "PATCH", "/workitems/" + linked, map[string]any{"title": "Still here"}, 200, wantKey("document_id", doc)},
		{"a deleted document takes no new item", f.alice, "POST", acme + "/workitems", wi(map[string]any{"document_id": doc}), 400, wantField("document_id")},
	})
	// A disabled type takes no new items; a disabled prefix numbers none.
	e.must(200, f.alice, "PATCH", "/work-item-types/"+f.task, map[string]any{"enabled": false})
	e.must(200, f.alice, "PATCH", "/api/prefixes/"+f.prefix, map[string]any{"enabled": false})
	e.run(t, []scenario{
		{"disabled type", f.alice, "POST", acme + "/workitems", wi(nil), 400, wantField("type_id")},
		{"disabled prefix", f.alice, "POST", acme + "/workitems", wi(map[string]any{"type_id": f.defect}), 400, wantField("type_id")},
	})
}

// TestWorkItemProjectAccess: CREATE_WORKITEMS and VIEW_WORKITEMS resolve on
// the project layer when the work item has a project.
func TestWorkItemProjectAccess(t *testing.T) {
	t.Parallel()
	f := newWIFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	e.must(200, f.alice, "PATCH", "/projects/"+f.project+"/permissions/"+f.bob.ID,
		map[string]any{"permissions": map[string]string{"CREATE_WORKITEMS": "allow"}})
	e.must(200, f.alice, "PATCH", "/projects/"+f.other+"/permissions/"+f.acme,
		map[string]any{"permissions": map[string]string{"VIEW_WORKITEMS": "deny"}})
	hidden := e.must(201, f.alice, "POST", acme+"/workitems", map[string]any{"type_id": f.task, "title": "Hidden", "project_id": f.other}).obj(t)["id"].(string)
	assigned := e.must(201, f.alice, "POST", acme+"/workitems", map[string]any{"type_id": f.task, "title": "Bob's", "project_id": f.other, "assignee_ids": []string{f.bob.ID}}).obj(t)["id"].(string)
	// bob creates in the project he may.
	bobs := e.must(201, f.bob, "POST", acme+"/workitems", map[string]any{"type_id": f.task, "title": "In", "project_id": f.project}).obj(t)["id"].(string)
	e.run(t, []scenario{
		{"but not outside it", f.bob, "POST", acme + "/workitems", map[string]any{"type_id": f.task, "title": "Out"}, 403, nil},
		{"nor in another project", f.bob, "POST", acme + "/workitems", map[string]any{"type_id": f.task, "title": "Out", "project_id": f.other}, 403, nil},
		{"bob cannot view where viewing is denied", f.bob, "GET", "/workitems/" + hidden, nil, 403, nil},
		{"unless assigned", f.bob, "GET", "/workitems/" + assigned, nil, 200, nil},
		{"the list leaves the denied project out", f.bob, "GET", acme + "/workitems", nil, 200, func(t *testing.T, r *testResponse) {
			wantLen(1)(t, r)
			wantTotal("1")(t, r)
		}},
		{"the owner sees all", f.alice, "GET", acme + "/workitems", nil, 200, wantLen(3)},
		{"bob cannot move his item out of the project", f.bob, "PATCH", "/workitems/" + bobs, map[string]any{"project_id": nil}, 403, nil},
		{"bob patches his item in place", f.bob, "PATCH", "/workitems/" + bobs, map[string]any{"title": "Inside"}, 200, wantKey("title", "Inside")},
	})
	// Viewing denied at the organisation, allowed on one project.
	e.must(200, f.alice, "PUT", acme+"/permissions/"+f.acme, map[string]any{"permissions": map[string]string{"VIEW_WORKITEMS": "deny"}})
	e.must(200, f.alice, "PATCH", "/projects/"+f.project+"/permissions/"+f.bob.ID,
		map[string]any{"permissions": map[string]string{"CREATE_WORKITEMS": "allow", "VIEW_WORKITEMS": "allow"}})
	e.run(t, []scenario{
		{"only the allowed project's items", f.bob, "GET", acme + "/workitems", nil, 200, func(t *testing.T, r *testResponse) {
			if a := r.arr(t); len(a) != 1 || a[0]["id"] != bobs {
				t.Fatalf("listed %v", a)
			}
		}},
	})
}

// TestWorkItemNumbersConcurrent: work items created at once get distinct,
// gap-free numbers, from the organisation's counter and from a prefix.
func TestWorkItemNumbersConcurrent(t *testing.T) {
	t.Parallel()
	f := newWIFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	for _, typ := range []struct{ id, format string }{{f.task, "%d"}, {f.defect, "D-%03d"}} {
		nums := make([]int, 60)
		var wg sync.WaitGroup
		for i := range nums {
			wg.Go(func() {
				r := e.do(f.alice, "POST", acme+"/workitems", map[string]any{"type_id": typ.id, "title": fmt.Sprint("W", i)})
				if r.Status != 201 {
					t.Errorf("status %d: %s", r.Status, r.Body)
					return
				}
				o := r.obj(t)
				nums[i] = int(o["number"].(float64))
				if o["formatted_number"] != fmt.Sprintf(typ.format, nums[i]) {
					t.Errorf("formatted %v for %d", o["formatted_number"], nums[i])
				}
			})
		}
		wg.Wait()
		slices.Sort(nums)
		for i, n := range nums {
			if n != i+1 {
				t.Fatalf("numbers %v, want 1..60 each once", nums)
			}
		}
	}
}

// TestWorkItemRowsNever5xx: malformed bodies, ids and queries on every
// work item row answer 4xx, never 5xx.
func TestWorkItemRowsNever5xx(t *testing.T) {
	t.Parallel()
	f := newWIFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	w := e.must(201, f.alice, "POST", acme+"/workitems", map[string]any{"type_id": f.task, "title": "Target"}).obj(t)["id"].(string)
	bodies := []any{nil, "", "null", "[]", "{", `"text"`, `{"type_id": {}, "title": [1], "assignee_ids": "x", "status": 5}`,
		`{"type_id": "99999999999999999999", "project_id": -1, "start_at": "9999-12-31T23:59:59-01:00", "assignee_ids": [null]}`,
		`{"milestone_id": "1", "sub_location_id": "1", "asset_group_id": "1", "finish_at": null, "prefix_id": "0"}`,
		`{"scheduled_start_at": "2026-01-01T00:00:00Z", "scheduled_finish_at": "2026-01-01T00:00:00Z", "invitee_ids": ["1"]}`}
	paths := []string{
		acme + "/workitems", acme + "/workitems?$filter=" + url.QueryEscape("start_at gt 'x'"), acme + "/work-item-types",
		"/workitems/" + w, "/workitems/1", "/workitems/" + w + "/schedules", "/workitems/" + w + "/subscription",
		"/work-item-types/" + f.task, "/users/@me/work-items?open=%20&asset_group=1&include_assets=1",
		"/users/@me/work-items/" + w + "/subscriptions", "/users/@me/work-items?$filter=" + url.QueryEscape("type_id eq 'abc'"),
	}
	for _, p := range paths {
		for _, m := range []string{"GET", "POST", "PATCH", "PUT", "DELETE"} {
			for _, b := range bodies {
				for _, u := range []*testUser{f.alice, f.bob, f.mallory} {
					if r := e.do(u, m, p, b); r.Status >= 500 {
						t.Errorf("%s %s %.60v: status %d: %.200s", m, p, b, r.Status, r.Body)
					}
				}
			}
		}
	}
}
