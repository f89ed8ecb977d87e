package server

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"workspace/db"
)

// absentID is a well-formed snowflake that names nothing.
const absentID = "1234567890123456"

// projFixture is orgFixture (one name per role: pen pending, nobody not a
// member, mallory the foreign owner) with carol, a member holding the
// Leads role (CREATE_PROJECTS), whom the project areas need.
type projFixture struct {
	*orgFixture
	carol *testUser // member holding the Leads role (CREATE_PROJECTS)
	leads string    // the Leads role id
}

func newProjFixture(t *testing.T, opts ...func(*Config)) *projFixture {
	t.Helper()
	f := &projFixture{orgFixture: newOrgFixture(t, opts...)}
	f.carol = f.e.user("carol")
	f.e.addMember(f.acme, f.carol)
	f.leads = f.e.rawRole(f.acme, "Leads", 0, f.carol)
	f.grant(t, "organisation", f.acme, "role", f.leads, CreateProjects, 0)
	return f
}

// grant sets an explicit grant in Acme directly in the store (the
// organisation permission endpoints belong to another area).
func (f *projFixture) grant(t *testing.T, scopeType, scopeID, targetType, targetID string, allow, deny PermSet) {
	t.Helper()
	oid, _ := db.ParseID(f.acme)
	sid, _ := db.ParseID(scopeID)
	tid, _ := db.ParseID(targetID)
	err := f.e.store.InTx(context.Background(), func(q *db.Queries) error {
		return q.GrantPut(context.Background(), db.GrantPutParams{OrganisationID: int64(oid), ScopeType: scopeType, ScopeID: int64(sid),
			TargetType: targetType, TargetID: int64(tid), AllowMask: int64(allow), DenyMask: int64(deny)})
	})
	if err != nil {
		t.Fatalf("grant: %v", err)
	}
}

// everyoneDeniesView makes Acme's @everyone unable to view projects at the
// organisation layer.
func (f *projFixture) everyoneDeniesView(t *testing.T) {
	f.grant(t, "organisation", f.acme, "organisation", f.acme, DefaultEveryone&^ViewProjects, ViewProjects)
}

// project creates a project in Acme as u and returns its object.
func (f *projFixture) project(t *testing.T, u *testUser, body map[string]any) map[string]any {
	t.Helper()
	if body == nil {
		body = map[string]any{}
	}
	return f.e.must(http.StatusCreated, u, "POST", "/organisations/"+f.acme+"/projects", body).obj(t)
}

func str(m map[string]any, k string) string { s, _ := m[k].(string); return s }

func wantValue(t *testing.T, m map[string]any, k string, want any) {
	t.Helper()
	if got := m[k]; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%s: got %v, want %v", k, got, want)
	}
}

func permIn(m map[string]any, name string) bool {
	p, _ := m["permissions"].(map[string]any)
	b, _ := p[name].(bool)
	return b
}

func TestProjectCreate(t *testing.T) {
	t.Parallel()
	f := newProjFixture(t)
	path := "/organisations/" + f.acme + "/projects"
	f.e.run(t, []scenario{
		{"owner creates with defaults", f.alice, "POST", path, map[string]any{}, http.StatusCreated, func(t *testing.T, r *testResponse) {
			p := r.obj(t)
			wantValue(t, p, "name", "new project")
			wantValue(t, p, "status", "open")
			wantValue(t, p, "code", "")
			wantValue(t, p, "organisation_id", f.acme)
			wantValue(t, p, "closed_at", nil)
			wantValue(t, p, "closed_by", nil)
			wantValue(t, p, "created_at", "2026-11-21T09:30:00.000Z")
			for _, k := range []string{"open_milestone_count", "closed_milestone_count", "open_work_item_count", "closed_work_item_count", "document_count"} {
				wantValue(t, p, k, 0)
			}
			if m, ok := p["work_item_types_count"].(map[string]any); !ok || len(m) != 0 {
				t.Errorf("work_item_types_count: got %v, want {}", p["work_item_types_count"])
			}
			if cb, _ := p["created_by"].(map[string]any); str(cb, "id") != f.alice.ID || str(cb, "email") != f.alice.Email {
				t.Errorf("created_by: got %v, want alice's user object", p["created_by"])
			}
			perms, _ := p["permissions"].(map[string]any)
			if len(perms) != 7 {
				t.Errorf("permissions: got %v, want the 7 project keys", perms)
			}
			for k, v := range perms {
				if v != true {
					t.Errorf("owner's %s: got %v, want true", k, v)
				}
			}
		}},
		{"role holder creates and administers it", f.carol, "POST", path, map[string]any{"code": "P-1", "name": "  Bridge  ", "description": "d", "readme": "# r"}, http.StatusCreated, func(t *testing.T, r *testResponse) {
			p := r.obj(t)
			wantValue(t, p, "name", "Bridge")
			wantValue(t, p, "code", "P-1")
			wantValue(t, p, "readme", "# r")
			if !permIn(p, "ADMIN_PROJECTS") || !permIn(p, "VIEW_PROJECTS") || permIn(p, "CREATE_WORKITEMS") {
				t.Errorf("creator's permissions: got %v, want ADMIN and VIEW but not CREATE_WORKITEMS", p["permissions"])
			}
		}},
		{"limits at their maximum", f.alice, "POST", path, map[string]any{"code": strings.Repeat("c", 12), "name": strings.Repeat("n", 200), "readme": strings.Repeat("é", 64000), "description": strings.Repeat("d", 4000)}, http.StatusCreated, nil},
		{"created closed records closing", f.alice, "POST", path, map[string]any{"status": "closed"}, http.StatusCreated, func(t *testing.T, r *testResponse) {
			p := r.obj(t)
			wantValue(t, p, "status", "closed")
			wantValue(t, p, "closed_at", "2026-11-21T09:30:00.000Z")
			if cb, _ := p["closed_by"].(map[string]any); str(cb, "id") != f.alice.ID {
				t.Errorf("closed_by: got %v, want alice", p["closed_by"])
			}
		}},
		{"member without CREATE_PROJECTS", f.bob, "POST", path, map[string]any{}, http.StatusForbidden, nil},
		{"pending member", f.pen, "POST", path, map[string]any{}, http.StatusForbidden, nil},
		{"not a member", f.nobody, "POST", path, map[string]any{}, http.StatusForbidden, nil},
		{"foreign organisation's owner", f.mallory, "POST", path, map[string]any{}, http.StatusForbidden, nil},
		{"no token", nil, "POST", path, map[string]any{}, http.StatusUnauthorized, nil},
		{"organisation absent", f.alice, "POST", "/organisations/" + absentID + "/projects", map[string]any{}, http.StatusBadRequest, nil},
		{"organisation id malformed", f.alice, "POST", "/organisations/x1/projects", map[string]any{}, http.StatusBadRequest, nil},
		{"code too long", f.alice, "POST", path, map[string]any{"code": strings.Repeat("c", 13)}, http.StatusBadRequest, wantField("code")},
		{"name too long", f.alice, "POST", path, map[string]any{"name": strings.Repeat("n", 201)}, http.StatusBadRequest, wantField("name")},
		{"name blank", f.alice, "POST", path, map[string]any{"name": "  "}, http.StatusBadRequest, wantField("name")},
		{"readme too long", f.alice, "POST", path, map[string]any{"readme": strings.Repeat("r", 64001)}, http.StatusBadRequest, wantField("readme")},
		{"description too long", f.alice, "POST", path, map[string]any{"description": strings.Repeat("d", 4001)}, http.StatusBadRequest, wantField("description")},
		{"unknown status", f.alice, "POST", path, map[string]any{"status": "archived"}, http.StatusBadRequest, wantField("status")},
		{"wrong type", f.alice, "POST", path, map[string]any{"name": 5}, http.StatusBadRequest, wantField("name")},
		{"read-only field", f.alice, "POST", path, map[string]any{"document_count": 3}, http.StatusBadRequest, wantField("document_count")},
		{"malformed JSON", f.alice, "POST", path, "{", http.StatusBadRequest, nil},
		{"unknown fields ignored", f.alice, "POST", path, map[string]any{"colour": "red"}, http.StatusCreated, nil},
	})
	// Refused creates left nothing behind: 5 made above.
	r := f.e.must(http.StatusOK, f.alice, "GET", "/organisations/"+f.acme+"/projects", nil)
	if got := r.Header.Get("X-Total-Count"); got != "5" {
		t.Errorf("X-Total-Count after refusals: got %s, want 5", got)
	}
	if got := f.e.must(http.StatusOK, f.mallory, "GET", "/organisations/"+f.evil+"/projects", nil).arr(t); len(got) != 0 {
		t.Errorf("Evil's projects: got %d, want 0", len(got))
	}
}

func TestProjectGet(t *testing.T) {
	t.Parallel()
	f := newProjFixture(t)
	p := f.project(t, f.alice, map[string]any{"name": "Bridge"})
	id := str(p, "id")
	path := "/projects/" + id
	f.e.run(t, []scenario{
		{"owner", f.alice, "GET", path, nil, http.StatusOK, func(t *testing.T, r *testResponse) {
			got := r.obj(t)
			for _, k := range []string{"id", "organisation_id", "code", "name", "description", "readme", "status",
				"open_milestone_count", "closed_milestone_count", "open_work_item_count", "closed_work_item_count",
				"document_count", "work_item_types_count", "created_at", "created_by", "closed_at", "closed_by", "permissions"} {
				if _, ok := got[k]; !ok {
					t.Errorf("full form lacks %s", k)
				}
			}
			wantValue(t, got, "name", "Bridge")
		}},
		{"member viewing through @everyone", f.bob, "GET", path, nil, http.StatusOK, func(t *testing.T, r *testResponse) {
			got := r.obj(t)
			if !permIn(got, "VIEW_PROJECTS") || permIn(got, "ADMIN_PROJECTS") {
				t.Errorf("bob's permissions: got %v, want VIEW only", got["permissions"])
			}
		}},
		{"pending member", f.pen, "GET", path, nil, http.StatusForbidden, nil},
		{"not a member", f.nobody, "GET", path, nil, http.StatusForbidden, nil},
		{"foreign organisation's owner", f.mallory, "GET", path, nil, http.StatusForbidden, nil},
		{"absent project", f.alice, "GET", "/projects/" + absentID, nil, http.StatusBadRequest, nil},
		{"malformed id", f.alice, "GET", "/projects/abc", nil, http.StatusBadRequest, nil},
		{"no token", nil, "GET", path, nil, http.StatusUnauthorized, nil},
	})
	t.Run("organisation layer denies view", func(t *testing.T) {
		f.everyoneDeniesView(t)
		f.e.must(http.StatusForbidden, f.bob, "GET", path, nil)
		f.e.must(http.StatusOK, f.alice, "GET", path, nil) // the owner holds everything
	})
	t.Run("project layer allows the user again", func(t *testing.T) {
		f.grant(t, "project", id, "user", f.bob.ID, ViewProjects, 0)
		f.e.must(http.StatusOK, f.bob, "GET", path, nil)
	})
}

func TestProjectPatch(t *testing.T) {
	t.Parallel()
	f := newProjFixture(t)
	p := f.project(t, f.alice, map[string]any{"name": "Bridge", "code": "BR"})
	path := "/projects/" + str(p, "id")
	carols := "/projects/" + str(f.project(t, f.carol, nil), "id")
	f.e.run(t, []scenario{
		{"owner edits fields", f.alice, "PATCH", path, map[string]any{"name": "Tunnel", "description": "long", "readme": "hi"}, http.StatusOK, func(t *testing.T, r *testResponse) {
			got := r.obj(t)
			wantValue(t, got, "name", "Tunnel")
			wantValue(t, got, "code", "BR") // absent fields keep their value
			wantValue(t, got, "description", "long")
			wantValue(t, got, "readme", "hi")
		}},
		{"creator administers her project", f.carol, "PATCH", carols, map[string]any{"code": "C"}, http.StatusOK, nil},
		{"role holder without ADMIN on another project", f.carol, "PATCH", path, map[string]any{"name": "x"}, http.StatusForbidden, nil},
		{"member without ADMIN", f.bob, "PATCH", path, map[string]any{"name": "x"}, http.StatusForbidden, nil},
		{"pending member", f.pen, "PATCH", path, map[string]any{"name": "x"}, http.StatusForbidden, nil},
		{"not a member", f.nobody, "PATCH", path, map[string]any{"name": "x"}, http.StatusForbidden, nil},
		{"foreign organisation's owner", f.mallory, "PATCH", path, map[string]any{"name": "x"}, http.StatusForbidden, nil},
		{"absent project", f.alice, "PATCH", "/projects/" + absentID, map[string]any{"name": "x"}, http.StatusBadRequest, nil},
		{"code too long", f.alice, "PATCH", path, map[string]any{"code": strings.Repeat("c", 13)}, http.StatusBadRequest, wantField("code")},
		{"name too long", f.alice, "PATCH", path, map[string]any{"name": strings.Repeat("n", 201)}, http.StatusBadRequest, wantField("name")},
		{"readme too long", f.alice, "PATCH", path, map[string]any{"readme": strings.Repeat("r", 64001)}, http.StatusBadRequest, wantField("readme")},
		{"bad status", f.alice, "PATCH", path, map[string]any{"status": "done"}, http.StatusBadRequest, wantField("status")},
		{"read-only counter", f.alice, "PATCH", path, map[string]any{"open_milestone_count": 9}, http.StatusBadRequest, wantField("open_milestone_count")},
		{"read-only closed_at changed", f.alice, "PATCH", path, map[string]any{"closed_at": "2026-01-01T00:00:00.000Z"}, http.StatusBadRequest, wantField("closed_at")},
		{"read-only closed_at sent back unchanged", f.alice, "PATCH", path, map[string]any{"closed_at": nil}, http.StatusOK, nil},
		{"nothing changed by refusals", f.alice, "GET", path, nil, http.StatusOK, func(t *testing.T, r *testResponse) {
			got := r.obj(t)
			wantValue(t, got, "name", "Tunnel")
			wantValue(t, got, "code", "BR")
			wantValue(t, got, "status", "open")
		}},
	})
}

func TestProjectCloseAndReopen(t *testing.T) {
	t.Parallel()
	f := newProjFixture(t, func(c *Config) { c.MaxProjectsPerOrg = 2 })
	p := f.project(t, f.alice, nil)
	path := "/projects/" + str(p, "id")
	m := f.e.must(http.StatusCreated, f.alice, "POST", path+"/milestones", map[string]any{"name": "M1"}).obj(t)
	f.e.run(t, []scenario{
		{"an open milestone blocks closing", f.alice, "PATCH", path, map[string]any{"status": "closed"}, http.StatusBadRequest, wantField("status")},
		{"still open", f.alice, "GET", path, nil, http.StatusOK, func(t *testing.T, r *testResponse) { wantValue(t, r.obj(t), "status", "open") }},
		{"close the milestone", f.alice, "PATCH", "/milestones/" + str(m, "id"), map[string]any{"status": "closed"}, http.StatusOK, nil},
		{"a member without ADMIN cannot close", f.carol, "PATCH", path, map[string]any{"status": "closed"}, http.StatusForbidden, nil},
		{"owner closes", f.alice, "PATCH", path, map[string]any{"status": "closed"}, http.StatusOK, func(t *testing.T, r *testResponse) {
			got := r.obj(t)
			wantValue(t, got, "status", "closed")
			wantValue(t, got, "closed_at", "2026-11-21T09:30:00.000Z")
			if cb, _ := got["closed_by"].(map[string]any); str(cb, "id") != f.alice.ID {
				t.Errorf("closed_by: got %v, want alice", got["closed_by"])
			}
		}},
	})
	// Two open projects fill the quota; the closed one cannot reopen.
	f.project(t, f.alice, nil)
	f.project(t, f.carol, nil)
	f.e.run(t, []scenario{
		{"reopening without quota", f.alice, "PATCH", path, map[string]any{"status": "open"}, http.StatusTooManyRequests, nil},
		{"stays closed", f.alice, "GET", path, nil, http.StatusOK, func(t *testing.T, r *testResponse) { wantValue(t, r.obj(t), "status", "closed") }},
		{"editing a closed project needs no quota", f.alice, "PATCH", path, map[string]any{"name": "Old", "status": "closed"}, http.StatusOK, nil},
	})
	other := f.e.must(http.StatusOK, f.alice, "GET", "/organisations/"+f.acme+"/projects?$top=1", nil).arr(t)[0]
	if str(other, "id") != str(p, "id") {
		t.Fatalf("first project: got %s, want %s", str(other, "id"), str(p, "id"))
	}
	second := f.e.must(http.StatusOK, f.alice, "GET", "/organisations/"+f.acme+"/projects?$skip=1&$top=1", nil).arr(t)[0]
	f.e.must(http.StatusOK, f.alice, "PATCH", "/projects/"+str(second, "id"), map[string]any{"status": "closed"})
	f.e.clock.Advance(time.Minute)
	f.e.run(t, []scenario{
		{"reopens once a place is free", f.alice, "PATCH", path, map[string]any{"status": "open"}, http.StatusOK, func(t *testing.T, r *testResponse) {
			got := r.obj(t)
			wantValue(t, got, "status", "open")
			wantValue(t, got, "closed_at", nil)
			wantValue(t, got, "closed_by", nil)
		}},
	})
}

func TestProjectQuota(t *testing.T) {
	t.Parallel()
	f := newProjFixture(t, func(c *Config) { c.MaxProjectsPerOrg = 2 })
	path := "/organisations/" + f.acme + "/projects"
	f.e.run(t, []scenario{
		{"first", f.alice, "POST", path, map[string]any{}, http.StatusCreated, nil},
		{"second", f.carol, "POST", path, map[string]any{}, http.StatusCreated, nil},
		{"third open refused", f.alice, "POST", path, map[string]any{}, http.StatusTooManyRequests, nil},
		{"a closed project takes no place", f.alice, "POST", path, map[string]any{"status": "closed"}, http.StatusCreated, nil},
		{"another organisation has its own quota", f.mallory, "POST", "/organisations/" + f.evil + "/projects", map[string]any{}, http.StatusCreated, nil},
	})
	if got := f.e.must(http.StatusOK, f.alice, "GET", path, nil).Header.Get("X-Total-Count"); got != "3" {
		t.Errorf("projects: got %s, want 3", got)
	}
}

func TestProjectQuotaConcurrentCreates(t *testing.T) {
	t.Parallel()
	const quota, tries = 5, 24
	f := newProjFixture(t, func(c *Config) { c.MaxProjectsPerOrg = quota })
	path := "/organisations/" + f.acme + "/projects"
	var wg sync.WaitGroup
	statuses := make(chan int, tries)
	for i := 0; i < tries; i++ {
		wg.Add(1)
		go func(u *testUser) {
			defer wg.Done()
			statuses <- f.e.do(u, "POST", path, map[string]any{"name": "p"}).Status
		}([]*testUser{f.alice, f.carol}[i%2])
	}
	wg.Wait()
	close(statuses)
	counts := map[int]int{}
	for s := range statuses {
		counts[s]++
	}
	if counts[http.StatusCreated] != quota || counts[http.StatusTooManyRequests] != tries-quota {
		t.Fatalf("statuses: got %v, want %d created and %d refused", counts, quota, tries-quota)
	}
	if n := f.e.must(http.StatusOK, f.alice, "GET", path, nil).Header.Get("X-Total-Count"); n != fmt.Sprint(quota) {
		t.Errorf("projects: got %s, want %d", n, quota)
	}
}

// ids lists the "id" of each object.
func ids(objs []map[string]any) []string {
	out := make([]string, len(objs))
	for i, o := range objs {
		out[i] = str(o, "id")
	}
	return out
}

func wantIDs(t *testing.T, r *testResponse, total int, want ...string) {
	t.Helper()
	got := ids(r.arr(t))
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("ids: got %v, want %v", got, want)
	}
	if n := r.Header.Get("X-Total-Count"); n != fmt.Sprint(total) {
		t.Errorf("X-Total-Count: got %s, want %d", n, total)
	}
}

func TestProjectList(t *testing.T) {
	t.Parallel()
	f := newProjFixture(t)
	var all []string
	for i := 0; i < 5; i++ {
		all = append(all, str(f.project(t, f.alice, map[string]any{"name": fmt.Sprintf("P%d", i), "code": fmt.Sprintf("C%d", i)}), "id"))
	}
	f.project(t, f.alice, map[string]any{"status": "closed", "name": "Done"})
	evilP := str(f.e.must(http.StatusCreated, f.mallory, "POST", "/organisations/"+f.evil+"/projects", map[string]any{}).obj(t), "id")
	path := "/organisations/" + f.acme + "/projects"
	f.e.run(t, []scenario{
		{"partial form in id order", f.bob, "GET", path + "?$top=2", nil, http.StatusOK, func(t *testing.T, r *testResponse) {
			wantIDs(t, r, 6, all[0], all[1])
			got := r.arr(t)[0]
			for _, k := range []string{"readme", "permissions", "created_by", "work_item_types_count"} {
				if _, ok := got[k]; ok {
					t.Errorf("partial form has %s", k)
				}
			}
			for _, k := range []string{"id", "organisation_id", "code", "name", "description", "status", "open_milestone_count",
				"closed_milestone_count", "open_work_item_count", "closed_work_item_count", "document_count"} {
				if _, ok := got[k]; !ok {
					t.Errorf("partial form lacks %s", k)
				}
			}
		}},
		{"skip and top", f.alice, "GET", path + "?$skip=3&$top=2", nil, http.StatusOK, func(t *testing.T, r *testResponse) {
			wantIDs(t, r, 6, all[3], all[4])
		}},
		{"skip past the end", f.alice, "GET", path + "?$skip=50", nil, http.StatusOK, func(t *testing.T, r *testResponse) { wantIDs(t, r, 6) }},
		{"negative skip", f.alice, "GET", path + "?$skip=-1", nil, http.StatusBadRequest, nil},
		{"top over 1000", f.alice, "GET", path + "?$top=1001", nil, http.StatusBadRequest, nil},
		{"top not a number", f.alice, "GET", path + "?$top=ten", nil, http.StatusBadRequest, nil},
		{"pending member", f.pen, "GET", path, nil, http.StatusForbidden, nil},
		{"not a member", f.nobody, "GET", path, nil, http.StatusForbidden, nil},
		{"foreign organisation's owner", f.mallory, "GET", path, nil, http.StatusForbidden, nil},
		{"foreign owner sees only their own", f.mallory, "GET", "/organisations/" + f.evil + "/projects", nil, http.StatusOK, func(t *testing.T, r *testResponse) {
			wantIDs(t, r, 1, evilP)
		}},
		{"organisation absent", f.alice, "GET", "/organisations/" + absentID + "/projects", nil, http.StatusBadRequest, nil},
		{"no token", nil, "GET", path, nil, http.StatusUnauthorized, nil},
	})

	t.Run("project grants hide and show projects", func(t *testing.T) {
		// @everyone denied on P0; bob denied on P1 but his role allows
		// (user grant wins); a role denies P2 for carol.
		f.grant(t, "project", all[0], "organisation", f.acme, 0, ViewProjects)
		helpers := f.e.rawRole(f.acme, "Helpers", 1, f.bob)
		f.grant(t, "project", all[1], "role", helpers, 0, ViewProjects)
		f.grant(t, "project", all[1], "user", f.bob.ID, ViewProjects, 0)
		f.grant(t, "project", all[2], "role", f.leads, 0, ViewProjects)
		r := f.e.must(http.StatusOK, f.bob, "GET", path, nil)
		wantIDs(t, r, 5, all[1], all[2], all[3], all[4], str(r.arr(t)[4], "id"))
		r = f.e.must(http.StatusOK, f.carol, "GET", path+"?$top=2", nil)
		wantIDs(t, r, 4, all[1], all[3])
		r = f.e.must(http.StatusOK, f.alice, "GET", path+"?$top=1", nil)
		wantIDs(t, r, 6, all[0])
		f.e.must(http.StatusForbidden, f.bob, "GET", "/projects/"+all[0], nil)
		f.e.must(http.StatusOK, f.bob, "GET", "/projects/"+all[1], nil)
		f.e.must(http.StatusForbidden, f.carol, "GET", "/projects/"+all[2], nil)
	})

	t.Run("organisation denies, projects allow", func(t *testing.T) {
		f.everyoneDeniesView(t)
		carols := str(f.project(t, f.carol, nil), "id") // ADMIN on it includes viewing
		f.grant(t, "project", all[3], "organisation", f.acme, ViewProjects, 0)
		f.grant(t, "project", all[4], "role", f.leads, ViewProjects, 0)
		wantIDs(t, f.e.must(http.StatusOK, f.bob, "GET", path, nil), 2, all[1], all[3])
		wantIDs(t, f.e.must(http.StatusOK, f.carol, "GET", path, nil), 3, all[3], all[4], carols)
		f.e.must(http.StatusOK, f.carol, "GET", "/projects/"+carols, nil)
		f.e.must(http.StatusForbidden, f.bob, "GET", "/projects/"+carols, nil)
		// A member with no grant anywhere sees nothing.
		zed := f.e.user("zed")
		f.e.addMember(f.acme, zed)
		wantIDs(t, f.e.must(http.StatusOK, zed, "GET", path, nil), 1, all[3])
	})
}

func TestProjectListFilter(t *testing.T) {
	t.Parallel()
	f := newProjFixture(t)
	path := "/organisations/" + f.acme + "/projects"
	a := str(f.project(t, f.alice, map[string]any{"name": "Alpha", "code": "AL"}), "id")
	b := str(f.project(t, f.alice, map[string]any{"name": "Beta", "status": "closed"}), "id")
	c := str(f.project(t, f.alice, map[string]any{"name": "alpine"}), "id")
	f.grant(t, "project", c, "user", f.bob.ID, 0, ViewProjects)
	q := func(expr string) string { return path + "?$filter=" + url.QueryEscape(expr) }
	f.e.run(t, []scenario{
		{"status", f.alice, "GET", q("status eq 'open'"), nil, http.StatusOK, func(t *testing.T, r *testResponse) { wantIDs(t, r, 2, a, c) }},
		{"closed", f.alice, "GET", q("status eq 'closed'"), nil, http.StatusOK, func(t *testing.T, r *testResponse) { wantIDs(t, r, 1, b) }},
		{"name is not filterable (decisions.md: only the row's fields)", f.alice, "GET", q("startswith(name, 'ALP')"), nil, http.StatusBadRequest, wantField("name")},
		{"filter with visibility and paging", f.bob, "GET", q("not (status eq 'closed')") + "&$top=5", nil, http.StatusOK, func(t *testing.T, r *testResponse) { wantIDs(t, r, 1, a) }},
		{"counted filter, owner", f.alice, "GET", q("status ne 'closed' or status eq null") + "&$skip=1", nil, http.StatusOK, func(t *testing.T, r *testResponse) { wantIDs(t, r, 2, c) }},
		{"status with a hidden project", f.bob, "GET", q("status eq 'open'"), nil, http.StatusOK, func(t *testing.T, r *testResponse) { wantIDs(t, r, 1, a) }},
		{"status, closed, hidden one open", f.bob, "GET", q("status eq 'closed'"), nil, http.StatusOK, func(t *testing.T, r *testResponse) { wantIDs(t, r, 1, b) }},
		{"status page past the end", f.bob, "GET", q("status eq 'open'") + "&$skip=1", nil, http.StatusOK, func(t *testing.T, r *testResponse) { wantIDs(t, r, 1) }},
		{"code is not filterable", f.alice, "GET", q("code eq 'AL'"), nil, http.StatusBadRequest, wantField("code")},
		{"unknown field", f.alice, "GET", q("readme eq 'x'"), nil, http.StatusBadRequest, wantField("readme")},
		{"bad status value", f.alice, "GET", q("status eq 'gone'"), nil, http.StatusBadRequest, wantField("status")},
		{"syntax", f.alice, "GET", q("status eq"), nil, http.StatusBadRequest, wantField("$filter")},
		{"foreign organisation's owner", f.mallory, "GET", q("status eq 'open'"), nil, http.StatusForbidden, nil},
	})
}

// TestPermissionLayers proves package > project > organisation through the
// endpoints that consult each layer.
func TestPermissionLayers(t *testing.T) {
	t.Parallel()
	f := newProjFixture(t)
	p := str(f.project(t, f.alice, nil), "id")
	plain := str(f.project(t, f.alice, nil), "id")
	open := str(f.e.must(http.StatusCreated, f.alice, "POST", "/projects/"+p+"/packages", map[string]any{"name": "Open"}).obj(t), "id")
	shut := str(f.e.must(http.StatusCreated, f.alice, "POST", "/projects/"+p+"/packages", map[string]any{"name": "Shut"}).obj(t), "id")
	// Organisation allows viewing (default); the project denies it to
	// @everyone; one package allows it again.
	f.grant(t, "project", p, "organisation", f.acme, 0, ViewProjects)
	f.grant(t, "package", open, "organisation", f.acme, ViewProjects, 0)
	// Administering: the organisation denies it to Helpers, the project
	// allows it to Helpers, the Shut package denies it to bob himself.
	helpers := f.e.rawRole(f.acme, "Helpers", 1, f.bob)
	f.grant(t, "organisation", f.acme, "role", helpers, 0, AdminProjects)
	f.grant(t, "project", plain, "role", helpers, AdminProjects, 0)
	f.grant(t, "package", shut, "user", f.bob.ID, 0, AdminProjects)
	f.e.run(t, []scenario{
		{"organisation layer: plain project visible", f.bob, "GET", "/projects/" + plain, nil, http.StatusOK, func(t *testing.T, r *testResponse) {
			if !permIn(r.obj(t), "ADMIN_PROJECTS") {
				t.Errorf("project allow for the role must beat the organisation deny")
			}
		}},
		{"project layer hides the project", f.bob, "GET", "/projects/" + p, nil, http.StatusForbidden, nil},
		{"project layer hides its milestones", f.bob, "GET", "/projects/" + p + "/milestones", nil, http.StatusForbidden, nil},
		{"package layer shows a package again", f.bob, "GET", "/packages/" + open, nil, http.StatusOK, nil},
		{"a package without grants follows the project", f.bob, "GET", "/packages/" + shut, nil, http.StatusForbidden, nil},
		{"project admin through the role", f.bob, "PATCH", "/projects/" + plain, map[string]any{"name": "mine"}, http.StatusOK, nil},
		{"organisation deny still holds elsewhere", f.bob, "POST", "/projects/" + p + "/packages", map[string]any{}, http.StatusForbidden, nil},
	})
	t.Run("package deny beats project allow", func(t *testing.T) {
		f.grant(t, "project", p, "role", helpers, AdminProjects, 0)
		f.e.must(http.StatusOK, f.bob, "PATCH", "/packages/"+open, map[string]any{"name": "ok"})
		f.e.must(http.StatusForbidden, f.bob, "PATCH", "/packages/"+shut, map[string]any{"name": "no"})
		// Shut is visible now through ADMIN on the project... but its own
		// deny of ADMIN leaves it hidden by the project's VIEW deny.
		f.e.must(http.StatusForbidden, f.bob, "GET", "/packages/"+shut, nil)
	})
}

func TestProjectGrants(t *testing.T) {
	t.Parallel()
	f := newProjFixture(t)
	p := str(f.project(t, f.alice, nil), "id")
	carols := str(f.project(t, f.carol, nil), "id")
	path := "/projects/" + p + "/permissions/"
	f.e.run(t, []scenario{
		{"deny @everyone", f.alice, "PATCH", path + f.acme, map[string]any{"permissions": map[string]string{"VIEW_PROJECTS": "deny", "VIEW_DOCUMENTS": "allow"}}, http.StatusOK, func(t *testing.T, r *testResponse) {
			g := r.obj(t)
			wantValue(t, g, "id", f.acme)
			wantValue(t, g, "type", "organisation")
			wantValue(t, g, "permissions", map[string]any{"VIEW_PROJECTS": "deny", "VIEW_DOCUMENTS": "allow"})
		}},
		{"takes effect", f.bob, "GET", "/projects/" + p, nil, http.StatusForbidden, nil},
		{"allow a role", f.alice, "PATCH", path + f.leads, map[string]any{"permissions": map[string]string{"VIEW_PROJECTS": "allow"}}, http.StatusOK, func(t *testing.T, r *testResponse) {
			wantValue(t, r.obj(t), "type", "role")
		}},
		{"role now sees it", f.carol, "GET", "/projects/" + p, nil, http.StatusOK, nil},
		{"allow a member", f.alice, "PATCH", path + f.bob.ID, map[string]any{"permissions": map[string]string{"ADMIN_PROJECTS": "allow"}}, http.StatusOK, func(t *testing.T, r *testResponse) {
			wantValue(t, r.obj(t), "type", "user")
		}},
		{"member administers it", f.bob, "PATCH", "/projects/" + p, map[string]any{"description": "bob was here"}, http.StatusOK, nil},
		{"inherit removes the grant", f.alice, "PATCH", path + f.bob.ID, map[string]any{"permissions": map[string]string{"ADMIN_PROJECTS": "inherit"}}, http.StatusOK, func(t *testing.T, r *testResponse) {
			wantValue(t, r.obj(t), "permissions", map[string]any{})
		}},
		{"member no longer administers", f.bob, "PATCH", "/projects/" + p, map[string]any{"description": "x"}, http.StatusForbidden, nil},
		{"list", f.alice, "GET", "/projects/" + p + "/permissions", nil, http.StatusOK, func(t *testing.T, r *testResponse) {
			got := map[string]string{}
			for _, g := range r.arr(t) {
				got[str(g, "type")+":"+str(g, "id")] = fmt.Sprint(g["permissions"])
			}
			want := map[string]string{
				"organisation:" + f.acme: fmt.Sprint(map[string]any{"VIEW_PROJECTS": "deny", "VIEW_DOCUMENTS": "allow"}),
				"role:" + f.leads:        fmt.Sprint(map[string]any{"VIEW_PROJECTS": "allow"}),
				"user:" + f.alice.ID:     fmt.Sprint(map[string]any{"ADMIN_PROJECTS": "allow"}), // the creator's grant
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("grants: got %v, want %v", got, want)
			}
		}},
		{"permissions missing", f.alice, "PATCH", path + f.acme, map[string]any{}, http.StatusBadRequest, wantField("permissions")},
		{"permissions null", f.alice, "PATCH", path + f.acme, map[string]any{"permissions": nil}, http.StatusBadRequest, wantField("permissions")},
		{"not a project permission", f.alice, "PATCH", path + f.acme, map[string]any{"permissions": map[string]string{"MANAGE_ROLES": "allow"}}, http.StatusBadRequest, wantField("permissions.MANAGE_ROLES")},
		{"bad grant type", f.alice, "PATCH", path + f.acme, map[string]any{"permissions": map[string]string{"VIEW_PROJECTS": "yes"}}, http.StatusBadRequest, nil},
		{"project absent", f.alice, "PATCH", "/projects/" + absentID + "/permissions/" + f.acme, map[string]any{"permissions": map[string]string{}}, http.StatusNotFound, nil},
		{"target absent", f.alice, "PATCH", path + absentID, map[string]any{"permissions": map[string]string{}}, http.StatusNotFound, nil},
		{"target in another organisation", f.alice, "PATCH", path + f.evil, map[string]any{"permissions": map[string]string{}}, http.StatusNotFound, nil},
		{"target not a member", f.alice, "PATCH", path + f.nobody.ID, map[string]any{"permissions": map[string]string{}}, http.StatusNotFound, nil},
		{"malformed target", f.alice, "PATCH", path + "x", map[string]any{"permissions": map[string]string{}}, http.StatusBadRequest, nil},
		{"member without ADMIN", f.bob, "PATCH", path + f.acme, map[string]any{"permissions": map[string]string{"VIEW_PROJECTS": "allow"}}, http.StatusForbidden, nil},
		{"pending member", f.pen, "PATCH", path + f.acme, map[string]any{"permissions": map[string]string{"VIEW_PROJECTS": "allow"}}, http.StatusForbidden, nil},
		{"foreign organisation's owner", f.mallory, "PATCH", path + f.acme, map[string]any{"permissions": map[string]string{"VIEW_PROJECTS": "allow"}}, http.StatusForbidden, nil},
		{"creator cannot grant what she lacks", f.carol, "PATCH", "/projects/" + carols + "/permissions/" + f.bob.ID, map[string]any{"permissions": map[string]string{"CREATE_WORKITEMS": "allow"}}, http.StatusForbidden, nil},
		{"creator grants what she holds", f.carol, "PATCH", "/projects/" + carols + "/permissions/" + f.bob.ID, map[string]any{"permissions": map[string]string{"ADMIN_PROJECTS": "allow"}}, http.StatusOK, nil},
		{"creator cannot change her own top role", f.carol, "PATCH", "/projects/" + carols + "/permissions/" + f.leads, map[string]any{"permissions": map[string]string{"VIEW_PROJECTS": "allow"}}, http.StatusForbidden, nil},
		{"list: member without ADMIN", f.bob, "GET", "/projects/" + p + "/permissions", nil, http.StatusForbidden, nil},
		{"list: foreign organisation's owner", f.mallory, "GET", "/projects/" + p + "/permissions", nil, http.StatusForbidden, nil},
		{"list: not a member", f.nobody, "GET", "/projects/" + p + "/permissions", nil, http.StatusForbidden, nil},
		{"list: project absent", f.alice, "GET", "/projects/" + absentID + "/permissions", nil, http.StatusBadRequest, nil},
	})
	// Refused changes left the grants as they were.
	r := f.e.must(http.StatusOK, f.alice, "GET", "/projects/"+p+"/permissions", nil)
	if n := len(r.arr(t)); n != 3 {
		t.Errorf("grants after refusals: got %d, want 3", n)
	}
}

// TestStatusOnly: the list reads trigger-kept counts for a lone status
// equality; this pins the compiled form it recognises.
func TestStatusOnly(t *testing.T) {
	t.Parallel()
	r, _ := http.NewRequest("GET", "/?$filter="+url.QueryEscape("status eq 'open'"), nil)
	lq, err := parseListQuery(r, projectFilter)
	if err != nil {
		t.Fatalf("parseListQuery: %v", err)
	}
	if s, ok := statusOnly(lq); !ok || s != "open" {
		t.Errorf("statusOnly(%q, %v): got %q, %v; want open, true", lq.Where, lq.Args, s, ok)
	}
	r, _ = http.NewRequest("GET", "/?$filter="+url.QueryEscape("status eq 'open' or status eq 'closed'"), nil)
	if lq, err = parseListQuery(r, projectFilter); err != nil {
		t.Fatal(err)
	}
	if _, ok := statusOnly(lq); ok {
		t.Errorf("statusOnly(%q): got true, want false", lq.Where)
	}
}

// TestProjectStatusCounts: the trigger-kept counts follow creates, closes and
// reopens, and totals read from them match the rows.
func TestProjectStatusCounts(t *testing.T) {
	t.Parallel()
	f := newProjFixture(t)
	path := "/organisations/" + f.acme + "/projects"
	var ps []string
	for i := 0; i < 4; i++ {
		ps = append(ps, str(f.project(t, f.alice, nil), "id"))
	}
	f.project(t, f.alice, map[string]any{"status": "closed"})
	f.e.must(http.StatusOK, f.alice, "PATCH", "/projects/"+ps[0], map[string]any{"status": "closed"})
	f.e.must(http.StatusOK, f.alice, "PATCH", "/projects/"+ps[1], map[string]any{"status": "closed"})
	f.e.must(http.StatusOK, f.alice, "PATCH", "/projects/"+ps[1], map[string]any{"status": "open"})
	f.e.must(http.StatusOK, f.alice, "PATCH", "/projects/"+ps[2], map[string]any{"name": "renamed"})
	oid, _ := db.ParseID(f.acme)
	for status, want := range map[string]int64{"open": 3, "closed": 2} {
		n, err := f.e.store.R.ProjectStatusCount(context.Background(), db.ProjectStatusCountParams{OrganisationID: int64(oid), Status: status})
		if err != nil || n != want {
			t.Errorf("%s count: got %d (%v), want %d", status, n, err, want)
		}
	}
	f.grant(t, "project", ps[3], "user", f.bob.ID, 0, ViewProjects)
	wantIDs(t, f.e.must(http.StatusOK, f.bob, "GET", path, nil), 4, ps[0], ps[1], ps[2], str(f.e.must(http.StatusOK, f.alice, "GET", path+"?$skip=4", nil).arr(t)[0], "id"))
	wantIDs(t, f.e.must(http.StatusOK, f.bob, "GET", path+"?$skip=9", nil), 4)
	wantIDs(t, f.e.must(http.StatusOK, f.bob, "GET", path+"?$top=0", nil), 4)
}

// TestProjectCreatePermissions: the permissions a create answers with are
// those a later GET resolves, whatever the organisation layer says.
func TestProjectCreatePermissions(t *testing.T) {
	t.Parallel()
	f := newProjFixture(t)
	f.grant(t, "organisation", f.acme, "user", f.carol.ID, ViewDocuments, AdminProjects|ViewProjects)
	for _, u := range []*testUser{f.alice, f.carol} {
		created := f.project(t, u, nil)
		got := f.e.must(http.StatusOK, u, "GET", "/projects/"+str(created, "id"), nil).obj(t)
		if fmt.Sprint(created["permissions"]) != fmt.Sprint(got["permissions"]) {
			t.Errorf("%s: POST permissions %v, GET permissions %v", u.Email, created["permissions"], got["permissions"])
		}
		if !permIn(created, "ADMIN_PROJECTS") || !permIn(created, "VIEW_PROJECTS") {
			t.Errorf("%s: creator's permissions: got %v, want ADMIN and VIEW", u.Email, created["permissions"])
		}
	}
}

// TestProjectAreaDeletedOrganisation: a deleted organisation's projects,
// milestones and packages answer as absent, row by row (docs/projects.md).
func TestProjectAreaDeletedOrganisation(t *testing.T) {
	t.Parallel()
	f := newProjFixture(t)
	p := str(f.project(t, f.alice, nil), "id")
	m := str(f.e.must(http.StatusCreated, f.alice, "POST", "/projects/"+p+"/milestones", map[string]any{}).obj(t), "id")
	pk := str(f.e.must(http.StatusCreated, f.alice, "POST", "/projects/"+p+"/packages", map[string]any{}).obj(t), "id")
	f.e.must(http.StatusNoContent, f.alice, "DELETE", "/organisations/"+f.acme, nil)
	grant := map[string]any{"permissions": map[string]string{"VIEW_PROJECTS": "allow"}}
	f.e.run(t, []scenario{
		{"list projects", f.alice, "GET", "/organisations/" + f.acme + "/projects", nil, http.StatusBadRequest, nil},
		{"create project", f.alice, "POST", "/organisations/" + f.acme + "/projects", map[string]any{}, http.StatusBadRequest, nil},
		{"get project", f.alice, "GET", "/projects/" + p, nil, http.StatusBadRequest, nil},
		{"patch project", f.alice, "PATCH", "/projects/" + p, map[string]any{"name": "x"}, http.StatusBadRequest, nil},
		{"project grant", f.alice, "PATCH", "/projects/" + p + "/permissions/" + f.acme, grant, http.StatusNotFound, nil},
		{"project grants", f.alice, "GET", "/projects/" + p + "/permissions", nil, http.StatusBadRequest, nil},
		{"create milestone", f.alice, "POST", "/projects/" + p + "/milestones", map[string]any{}, http.StatusBadRequest, nil},
		{"list milestones", f.alice, "GET", "/projects/" + p + "/milestones", nil, http.StatusBadRequest, nil},
		{"get milestone", f.alice, "GET", "/milestones/" + m, nil, http.StatusNotFound, nil},
		{"patch milestone", f.alice, "PATCH", "/milestones/" + m, map[string]any{"name": "x"}, http.StatusBadRequest, nil},
		{"create package", f.alice, "POST", "/projects/" + p + "/packages", map[string]any{}, http.StatusBadRequest, nil},
		{"list packages", f.alice, "GET", "/projects/" + p + "/packages", nil, http.StatusBadRequest, nil},
		{"get package", f.alice, "GET", "/packages/" + pk, nil, http.StatusNotFound, nil},
		{"patch package", f.alice, "PATCH", "/packages/" + pk, map[string]any{"name": "x"}, http.StatusBadRequest, nil},
		{"package grant", f.alice, "PATCH", "/packages/" + pk + "/permissions/" + f.acme, grant, http.StatusNotFound, nil},
		{"package grants", f.alice, "GET", "/packages/" + pk + "/permissions", nil, http.StatusNotFound, nil},
	})
}

// TestProjectCloseTwice: closing a closed project (or milestone) again
// keeps the first closed_at and closed_by.
func TestProjectCloseTwice(t *testing.T) {
	t.Parallel()
	f := newProjFixture(t)
	p := str(f.project(t, f.alice, map[string]any{"status": "closed"}), "id")
	m := str(f.e.must(http.StatusCreated, f.alice, "POST", "/projects/"+p+"/milestones", map[string]any{"status": "closed"}).obj(t), "id")
	f.grant(t, "project", p, "user", f.carol.ID, AdminProjects, 0)
	f.e.clock.Advance(time.Hour)
	for _, path := range []string{"/projects/" + p, "/milestones/" + m} {
		got := f.e.must(http.StatusOK, f.carol, "PATCH", path, map[string]any{"status": "closed"}).obj(t)
		wantValue(t, got, "closed_at", "2026-11-21T09:30:00.000Z")
		if cb, _ := got["closed_by"].(map[string]any); str(cb, "id") != f.alice.ID {
			t.Errorf("%s closed_by: got %v, want alice", path, got["closed_by"])
		}
	}
}
