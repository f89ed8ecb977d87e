package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
)

func projectCounts(t *testing.T, f *projFixture, projectID string) (open, closed float64) {
	t.Helper()
	p := f.e.must(http.StatusOK, f.alice, "GET", "/projects/"+projectID, nil).obj(t)
	open, _ = p["open_milestone_count"].(float64)
	closed, _ = p["closed_milestone_count"].(float64)
	return open, closed
}

func TestMilestoneCreate(t *testing.T) {
	t.Parallel()
	f := newProjFixture(t)
	p := str(f.project(t, f.alice, nil), "id")
	closedP := str(f.project(t, f.alice, map[string]any{"status": "closed"}), "id")
	path := "/projects/" + p + "/milestones"
	f.e.run(t, []scenario{
		{"defaults", f.alice, "POST", path, map[string]any{}, http.StatusCreated, func(t *testing.T, r *testResponse) {
			m := r.obj(t)
			wantValue(t, m, "name", "new milestone")
			wantValue(t, m, "status", "open")
			wantValue(t, m, "due_at", nil)
			wantValue(t, m, "project_id", p)
			wantValue(t, m, "organisation_id", f.acme)
			wantValue(t, m, "closed_at", nil)
			wantValue(t, m, "open_work_item_count", 0)
			wantValue(t, m, "closed_work_item_count", 0)
			if cb, _ := m["created_by"].(map[string]any); str(cb, "id") != f.alice.ID {
				t.Errorf("created_by: got %v, want alice", m["created_by"])
			}
			if w, ok := m["work_item_types_count"].(map[string]any); !ok || len(w) != 0 {
				t.Errorf("work_item_types_count: got %v, want {}", m["work_item_types_count"])
			}
		}},
		{"all fields, due_at normalised", f.alice, "POST", path, map[string]any{"name": "Design", "description": "d", "status": "closed", "due_at": "2026-12-01T10:00:00+02:00"}, http.StatusCreated, func(t *testing.T, r *testResponse) {
			m := r.obj(t)
			wantValue(t, m, "due_at", "2026-12-01T08:00:00.000Z")
			wantValue(t, m, "status", "closed")
			wantValue(t, m, "closed_at", "2026-11-21T09:30:00.000Z")
			if cb, _ := m["closed_by"].(map[string]any); str(cb, "id") != f.alice.ID {
				t.Errorf("closed_by: got %v, want alice", m["closed_by"])
			}
		}},
		{"counts follow", f.alice, "GET", "/projects/" + p, nil, http.StatusOK, func(t *testing.T, r *testResponse) {
			wantValue(t, r.obj(t), "open_milestone_count", 1)
			wantValue(t, r.obj(t), "closed_milestone_count", 1)
		}},
		{"open milestone in a closed project", f.alice, "POST", "/projects/" + closedP + "/milestones", map[string]any{}, http.StatusBadRequest, wantField("status")},
		{"closed milestone in a closed project", f.alice, "POST", "/projects/" + closedP + "/milestones", map[string]any{"status": "closed"}, http.StatusCreated, nil},
		{"name at its limit", f.alice, "POST", path, map[string]any{"name": strings.Repeat("n", 200)}, http.StatusCreated, nil},
		{"name too long", f.alice, "POST", path, map[string]any{"name": strings.Repeat("n", 201)}, http.StatusBadRequest, wantField("name")},
		{"description too long", f.alice, "POST", path, map[string]any{"description": strings.Repeat("d", 4001)}, http.StatusBadRequest, wantField("description")},
		{"bad status", f.alice, "POST", path, map[string]any{"status": "late"}, http.StatusBadRequest, wantField("status")},
		{"bad due_at", f.alice, "POST", path, map[string]any{"due_at": "next week"}, http.StatusBadRequest, wantField("due_at")},
		{"due_at past year 9999 in UTC", f.alice, "POST", path, map[string]any{"due_at": "9999-12-31T23:30:00-01:00"}, http.StatusBadRequest, wantField("due_at")},
		{"due_at before year 0 in UTC", f.alice, "POST", path, map[string]any{"due_at": "0000-01-01T00:00:00+01:00"}, http.StatusBadRequest, wantField("due_at")},
		{"read-only field", f.alice, "POST", path, map[string]any{"project_id": p}, http.StatusBadRequest, wantField("project_id")},
		{"member without ADMIN", f.bob, "POST", path, map[string]any{}, http.StatusForbidden, nil},
		{"pending member", f.pen, "POST", path, map[string]any{}, http.StatusForbidden, nil},
		{"not a member", f.nobody, "POST", path, map[string]any{}, http.StatusForbidden, nil},
		{"foreign organisation's owner", f.mallory, "POST", path, map[string]any{}, http.StatusForbidden, nil},
		{"project absent", f.alice, "POST", "/projects/" + absentID + "/milestones", map[string]any{}, http.StatusBadRequest, nil},
		{"counts unchanged by refusals", f.alice, "GET", "/projects/" + p, nil, http.StatusOK, func(t *testing.T, r *testResponse) {
			wantValue(t, r.obj(t), "open_milestone_count", 2)
			wantValue(t, r.obj(t), "closed_milestone_count", 1)
		}},
	})
}

func TestMilestoneGetPatch(t *testing.T) {
	t.Parallel()
	f := newProjFixture(t)
	p := str(f.project(t, f.alice, nil), "id")
	m := f.e.must(http.StatusCreated, f.alice, "POST", "/projects/"+p+"/milestones", map[string]any{"name": "M", "due_at": "2026-12-01T00:00:00Z"}).obj(t)
	path := "/milestones/" + str(m, "id")
	f.e.run(t, []scenario{
		{"get", f.bob, "GET", path, nil, http.StatusOK, func(t *testing.T, r *testResponse) { wantValue(t, r.obj(t), "name", "M") }},
		{"get: pending member", f.pen, "GET", path, nil, http.StatusForbidden, nil},
		{"get: not a member", f.nobody, "GET", path, nil, http.StatusForbidden, nil},
		{"get: foreign organisation's owner", f.mallory, "GET", path, nil, http.StatusForbidden, nil},
		{"get: absent", f.alice, "GET", "/milestones/" + absentID, nil, http.StatusNotFound, nil},
		{"get: malformed", f.alice, "GET", "/milestones/m1", nil, http.StatusBadRequest, nil},
		{"patch: member without ADMIN", f.bob, "PATCH", path, map[string]any{"name": "x"}, http.StatusForbidden, nil},
		{"patch: foreign organisation's owner", f.mallory, "PATCH", path, map[string]any{"name": "x"}, http.StatusForbidden, nil},
		{"patch: pending member", f.pen, "PATCH", path, map[string]any{"name": "x"}, http.StatusForbidden, nil},
		{"patch: bad status", f.alice, "PATCH", path, map[string]any{"status": "late"}, http.StatusBadRequest, wantField("status")},
		{"patch: blank name", f.alice, "PATCH", path, map[string]any{"name": " "}, http.StatusBadRequest, wantField("name")},
		{"patch: malformed JSON", f.alice, "PATCH", path, "{", http.StatusBadRequest, nil},
		{"patch: not a member", f.nobody, "PATCH", path, map[string]any{"name": "x"}, http.StatusForbidden, nil},
		{"patch: absent", f.alice, "PATCH", "/milestones/" + absentID, map[string]any{"name": "x"}, http.StatusBadRequest, nil},
		{"patch: name too long", f.alice, "PATCH", path, map[string]any{"name": strings.Repeat("n", 201)}, http.StatusBadRequest, wantField("name")},
		{"patch: bad due_at", f.alice, "PATCH", path, map[string]any{"due_at": 5}, http.StatusBadRequest, nil},
		{"patch: due_at past year 9999 in UTC", f.alice, "PATCH", path, map[string]any{"due_at": "9999-12-31T23:59:59.999-00:01"}, http.StatusBadRequest, wantField("due_at")},
		{"patch: read-only", f.alice, "PATCH", path, map[string]any{"closed_by": f.alice.ID}, http.StatusBadRequest, wantField("closed_by")},
		{"patch: rename, keep due_at", f.alice, "PATCH", path, map[string]any{"name": "Build", "description": "all"}, http.StatusOK, func(t *testing.T, r *testResponse) {
			got := r.obj(t)
			wantValue(t, got, "name", "Build")
			wantValue(t, got, "description", "all")
			wantValue(t, got, "due_at", "2026-12-01T00:00:00.000Z")
		}},
		{"patch: null clears due_at", f.alice, "PATCH", path, map[string]any{"due_at": nil}, http.StatusOK, func(t *testing.T, r *testResponse) {
			wantValue(t, r.obj(t), "due_at", nil)
		}},
		{"patch: close", f.alice, "PATCH", path, map[string]any{"status": "closed"}, http.StatusOK, func(t *testing.T, r *testResponse) {
			got := r.obj(t)
			wantValue(t, got, "status", "closed")
			wantValue(t, got, "closed_at", "2026-11-21T09:30:00.000Z")
		}},
		{"counts after closing", f.alice, "GET", "/projects/" + p, nil, http.StatusOK, func(t *testing.T, r *testResponse) {
			wantValue(t, r.obj(t), "open_milestone_count", 0)
			wantValue(t, r.obj(t), "closed_milestone_count", 1)
		}},
		{"close the project", f.alice, "PATCH", "/projects/" + p, map[string]any{"status": "closed"}, http.StatusOK, nil},
		{"patch: reopen in a closed project", f.alice, "PATCH", path, map[string]any{"status": "open"}, http.StatusBadRequest, wantField("status")},
		{"patch: other edits in a closed project", f.alice, "PATCH", path, map[string]any{"name": "Final"}, http.StatusOK, nil},
		{"reopen the project", f.alice, "PATCH", "/projects/" + p, map[string]any{"status": "open"}, http.StatusOK, nil},
		{"patch: reopen", f.alice, "PATCH", path, map[string]any{"status": "open"}, http.StatusOK, func(t *testing.T, r *testResponse) {
			got := r.obj(t)
			wantValue(t, got, "closed_at", nil)
			wantValue(t, got, "closed_by", nil)
		}},
		{"counts after reopening", f.alice, "GET", "/projects/" + p, nil, http.StatusOK, func(t *testing.T, r *testResponse) {
			wantValue(t, r.obj(t), "open_milestone_count", 1)
			wantValue(t, r.obj(t), "closed_milestone_count", 0)
		}},
	})
}

func TestMilestoneList(t *testing.T) {
	t.Parallel()
	f := newProjFixture(t)
	p := str(f.project(t, f.alice, nil), "id")
	other := str(f.project(t, f.alice, nil), "id")
	var ms []string
	for i := 0; i < 4; i++ {
		body := map[string]any{"name": fmt.Sprintf("M%d", i), "due_at": fmt.Sprintf("2026-12-0%dT00:00:00Z", i+1)}
		if i%2 == 1 {
			body["status"] = "closed"
		}
		ms = append(ms, str(f.e.must(http.StatusCreated, f.alice, "POST", "/projects/"+p+"/milestones", body).obj(t), "id"))
	}
	f.e.must(http.StatusCreated, f.alice, "POST", "/projects/"+other+"/milestones", map[string]any{})
	path := "/projects/" + p + "/milestones"
	f.e.run(t, []scenario{
		{"all, in id order", f.bob, "GET", path, nil, http.StatusOK, func(t *testing.T, r *testResponse) {
			wantIDs(t, r, 4, ms...)
			if cb, _ := r.arr(t)[0]["created_by"].(map[string]any); str(cb, "id") != f.alice.ID {
				t.Errorf("created_by: got %v, want alice", cb)
			}
		}},
		{"paged", f.alice, "GET", path + "?$skip=1&$top=2", nil, http.StatusOK, func(t *testing.T, r *testResponse) { wantIDs(t, r, 4, ms[1], ms[2]) }},
		{"bad top", f.alice, "GET", path + "?$top=-1", nil, http.StatusBadRequest, nil},
		{"pending member", f.pen, "GET", path, nil, http.StatusForbidden, nil},
		{"not a member", f.nobody, "GET", path, nil, http.StatusForbidden, nil},
		{"foreign organisation's owner", f.mallory, "GET", path, nil, http.StatusForbidden, nil},
		{"project absent", f.alice, "GET", "/projects/" + absentID + "/milestones", nil, http.StatusBadRequest, nil},
	})
	t.Run("filter", func(t *testing.T) {
		q := func(expr string) string { return path + "?$filter=" + url.QueryEscape(expr) }
		f.e.run(t, []scenario{
			{"status", f.alice, "GET", q("status eq 'closed'"), nil, http.StatusOK, func(t *testing.T, r *testResponse) { wantIDs(t, r, 2, ms[1], ms[3]) }},
			{"due_at", f.alice, "GET", q("due_at ge 2026-12-02T00:00:00Z and status eq 'open'"), nil, http.StatusOK, func(t *testing.T, r *testResponse) { wantIDs(t, r, 1, ms[2]) }},
			{"due_at alone, closed included", f.bob, "GET", q("due_at lt 2026-12-03"), nil, http.StatusOK, func(t *testing.T, r *testResponse) { wantIDs(t, r, 2, ms[0], ms[1]) }},
			{"due_at ne null", f.alice, "GET", q("due_at ne null and status ne 'open'"), nil, http.StatusOK, func(t *testing.T, r *testResponse) { wantIDs(t, r, 2, ms[1], ms[3]) }},
			{"filter and paging", f.alice, "GET", q("status eq 'open'") + "&$skip=1&$top=1", nil, http.StatusOK, func(t *testing.T, r *testResponse) { wantIDs(t, r, 2, ms[2]) }},
			{"unknown field", f.alice, "GET", q("name eq 'M1'"), nil, http.StatusBadRequest, wantField("name")},
			{"due_at not a date-time", f.alice, "GET", q("due_at gt 'soon'"), nil, http.StatusBadRequest, wantField("due_at")},
			{"status is not ordered", f.alice, "GET", q("status gt 'open'"), nil, http.StatusBadRequest, wantField("status")},
			{"syntax", f.alice, "GET", q("status eq 'open' and"), nil, http.StatusBadRequest, wantField("$filter")},
			{"foreign organisation's owner", f.mallory, "GET", q("status eq 'open'"), nil, http.StatusForbidden, nil},
		})
	})
}

// TestMilestoneCountsConcurrent: counters stay equal to the rows under
// concurrent creates and closes.
func TestMilestoneCountsConcurrent(t *testing.T) {
	t.Parallel()
	const n = 30
	f := newProjFixture(t)
	p := str(f.project(t, f.alice, nil), "id")
	var wg sync.WaitGroup
	errs := make(chan string, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			body := map[string]any{"name": fmt.Sprint(i)}
			if i%3 == 0 {
				body["status"] = "closed"
			}
			r := f.e.do(f.alice, "POST", "/projects/"+p+"/milestones", body)
			if r.Status != http.StatusCreated {
				errs <- fmt.Sprintf("create %d: status %d", i, r.Status)
				return
			}
			if i%5 == 0 { // close some of the open ones while others are created
				var m struct{ ID string }
				if err := json.Unmarshal(r.Body, &m); err != nil {
					errs <- fmt.Sprintf("create %d: %v", i, err)
					return
				}
				id := m.ID
				if r := f.e.do(f.alice, "PATCH", "/milestones/"+id, map[string]any{"status": "closed"}); r.Status != http.StatusOK {
					errs <- fmt.Sprintf("close %d: status %d", i, r.Status)
				}
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	// Closed: every third was created closed, every fifth closed afterwards.
	wantClosed := 0
	for i := 0; i < n; i++ {
		if i%3 == 0 || i%5 == 0 {
			wantClosed++
		}
	}
	open, closed := projectCounts(t, f, p)
	if int(open) != n-wantClosed || int(closed) != wantClosed {
		t.Errorf("counts: got open %v closed %v, want %d and %d", open, closed, n-wantClosed, wantClosed)
	}
}

// TestMilestoneListUsers: each milestone names its own creator and closer
// when several users wrote them (the list loads users once for the page).
func TestMilestoneListUsers(t *testing.T) {
	t.Parallel()
	f := newProjFixture(t)
	p := str(f.project(t, f.alice, nil), "id")
	f.grant(t, "project", p, "user", f.carol.ID, AdminProjects, 0)
	path := "/projects/" + p + "/milestones"
	byAlice := str(f.e.must(http.StatusCreated, f.alice, "POST", path, map[string]any{}).obj(t), "id")
	byCarol := str(f.e.must(http.StatusCreated, f.carol, "POST", path, map[string]any{}).obj(t), "id")
	f.e.must(http.StatusOK, f.carol, "PATCH", "/milestones/"+byAlice, map[string]any{"status": "closed"})
	want := map[string][2]string{byAlice: {f.alice.ID, f.carol.ID}, byCarol: {f.carol.ID, ""}}
	for _, m := range f.e.must(http.StatusOK, f.bob, "GET", path, nil).arr(t) {
		cb, _ := m["created_by"].(map[string]any)
		xb, _ := m["closed_by"].(map[string]any)
		got := [2]string{str(cb, "id"), str(xb, "id")}
		if w := want[str(m, "id")]; got != w {
			t.Errorf("milestone %s: got created_by/closed_by %v, want %v", str(m, "id"), got, w)
		}
		if str(cb, "email") == "" {
			t.Errorf("milestone %s: created_by is not a full user object: %v", str(m, "id"), cb)
		}
	}
}
