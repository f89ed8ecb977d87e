package server

import "testing"

// TestWorkItemScheduleAccess: a work item's schedule is written with
// CREATE_WORKITEMS where the work item is: a grant on its project is enough,
// and a work item outside the project is not covered by it.
func TestWorkItemScheduleAccess(t *testing.T) {
	t.Parallel()
	f := newWIFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	slot := map[string]any{"scheduled_start_at": "2026-12-05T07:00:00Z", "scheduled_finish_at": "2026-12-05T08:00:00Z"}
	inProject := e.must(201, f.alice, "POST", acme+"/workitems", map[string]any{"type_id": f.task, "title": "In the project", "project_id": f.project}).obj(t)["id"].(string)
	outside := e.must(201, f.alice, "POST", acme+"/workitems", map[string]any{"type_id": f.task, "title": "Outside"}).obj(t)["id"].(string)
	sIn := e.must(201, f.alice, "POST", "/workitems/"+inProject+"/schedules", slot).obj(t)["id"].(string)
	sOut := e.must(201, f.alice, "POST", "/workitems/"+outside+"/schedules", slot).obj(t)["id"].(string)
	e.must(200, f.alice, "PATCH", "/projects/"+f.project+"/permissions/"+f.bob.ID, map[string]any{"permissions": map[string]any{"CREATE_WORKITEMS": "allow"}})
	patch := map[string]any{"actual_start_at": "2026-12-05T07:05:00Z"}
	e.run(t, []scenario{
		{"a project grant covers the project's work item schedule", f.bob, "PATCH", "/schedules/" + sIn, patch, 200, nil},
		{"not a work item outside the project", f.bob, "PATCH", "/schedules/" + sOut, patch, 403, nil},
		{"other organisation", f.mallory, "PATCH", "/schedules/" + sIn, patch, 403, nil},
	})
}
