package server

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"sync"
	"testing"
	"time"

	"workspace/db"
)

// crewProject: @everyone may not view projects, Bob sees them through the
// Crew role; returns the role and a project's path.
func crewProject(t *testing.T, f *orgFixture) (crew, project string) {
	t.Helper()
	e := f.e
	e.grant(f.alice, f.acme, f.acme, map[string]string{"VIEW_PROJECTS": "deny"})
	crew = e.role(f.alice, f.acme, "Crew")
	e.grant(f.alice, f.acme, crew, map[string]string{"VIEW_PROJECTS": "allow"})
	e.assign(f.alice, f.acme, f.bob, crew)
	project = "/projects/" + e.must(201, f.alice, "POST", "/organisations/"+f.acme+"/projects", map[string]any{"name": "P"}).obj(t)["id"].(string)
	return crew, project
}

// TestCachedAccessIsDroppedByEveryChange: access is served from the cache
// between writes, and a revoked grant, a removed role, a removed member, a
// banned member and a deleted user lose access on the very next request.
func TestCachedAccessIsDroppedByEveryChange(t *testing.T) {
	t.Parallel()
	f := newOrgFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	crew, project := crewProject(t, f)
	sees := func(step string, want int) {
		t.Helper()
		for i := 0; i < 3; i++ { // the second and third answers come from the cache
			if r := e.do(f.bob, "GET", project, nil); r.Status != want {
				t.Fatalf("%s (request %d): status %d, want %d: %s", step, i+1, r.Status, want, r.Body)
			}
		}
	}
	sees("role grant allows", 200)
	e.srv.access.standing.mu.Lock()
	cached := len(e.srv.access.standing.entries)
	e.srv.access.standing.mu.Unlock()
	if cached == 0 {
		t.Fatal("reads between writes left nothing in the access cache")
	}
	e.grant(f.alice, f.acme, crew, map[string]string{"VIEW_PROJECTS": "deny"})
	sees("role grant revoked", 403)
	e.grant(f.alice, f.acme, crew, map[string]string{"VIEW_PROJECTS": "allow"})
	sees("role grant restored", 200)
	e.must(204, f.alice, "DELETE", acme+"/members/"+f.bob.ID+"/roles/"+crew, nil)
	sees("role removed", 403)
	e.assign(f.alice, f.acme, f.bob, crew)
	sees("role given back", 200)
	e.must(204, f.alice, "DELETE", acme+"/members/"+f.bob.ID, nil)
	sees("member removed", 403)
	e.addMember(f.acme, f.bob)
	e.assign(f.alice, f.acme, f.bob, crew)
	sees("member again", 200)
	e.must(200, f.alice, "PUT", acme+"/bans/"+f.bob.ID, map[string]any{"reason": "x"})
	sees("member banned", 403)

	// A deleted user: the next request with a still-valid token is 401.
	carol := e.user("carol")
	e.must(200, carol, "GET", "/users/@me", nil)
	e.must(200, carol, "GET", "/users/@me", nil)
	e.must(202, carol, "DELETE", "/users/@me", nil)
	e.must(204, carol, "DELETE", "/users/@me?email_token="+e.lastSecret("carol@example.com"), nil)
	e.must(401, carol, "GET", "/users/@me", nil)
}

// TestAccessCacheServesOnlySettledGenerations: nothing is cached or served
// while a write batch runs (odd generation), nor at a generation other than
// the one an entry was filled at.
func TestAccessCacheServesOnlySettledGenerations(t *testing.T) {
	t.Parallel()
	var c genCache[int, string]
	c.put(1, "odd", 3)
	if _, ok := c.get(1, 3); ok {
		t.Fatal("served a value filled while a batch ran")
	}
	c.put(1, "two", 2)
	if v, ok := c.get(1, 2); !ok || v != "two" {
		t.Fatalf("got %q %v, want the value at its generation", v, ok)
	}
	if _, ok := c.get(1, 4); ok {
		t.Fatal("served a value across a write")
	}
	c.put(1, "stale", 0)
	if v, _ := c.get(1, 2); v != "two" {
		t.Fatalf("an older generation's fill replaced a newer one: %q", v)
	}
}

// TestAccessCacheUnderConcurrentRevocation: with readers hammering the
// cache while grants flip, every answer after a revocation committed is a
// refusal (run under -race).
func TestAccessCacheUnderConcurrentRevocation(t *testing.T) {
	t.Parallel()
	f := newOrgFixture(t)
	e := f.e
	e.grant(f.alice, f.acme, f.acme, map[string]string{"VIEW_PROJECTS": "deny"})
	e.grant(f.alice, f.acme, f.bob.ID, map[string]string{"VIEW_PROJECTS": "allow"})
	project := "/projects/" + e.must(201, f.alice, "POST", "/organisations/"+f.acme+"/projects", map[string]any{"name": "P"}).obj(t)["id"].(string)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
					e.do(f.bob, "GET", project, nil)
				}
			}
		}()
	}
	for i := 0; i < 20; i++ {
		perm := "deny"
		want := 403
		if i%2 == 1 {
			perm, want = "allow", 200
		}
		e.grant(f.alice, f.acme, f.bob.ID, map[string]string{"VIEW_PROJECTS": perm})
		if r := e.do(f.bob, "GET", project, nil); r.Status != want {
			t.Fatalf("flip %d: status %d right after the grant became %s", i, r.Status, perm)
		}
	}
	close(stop)
	wg.Wait()
	// The store's generation is even again once every write has been answered.
	if g := e.store.WriteGeneration(); g%2 != 0 {
		t.Errorf("generation %d is odd with no batch running", g)
	}
}

// TestCachedAuthorizeMatches: the cached path (standing per caller and
// organisation, grants per scope picked per caller) answers exactly what the
// one-query resolution answers, for owners, members with user, role and
// @everyone grants on every layer, pending members and strangers.
func TestCachedAuthorizeMatches(t *testing.T) {
	t.Parallel()
	f := newOrgFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	carol := e.user("carol")
	e.addMember(f.acme, carol)
	high, low := e.role(f.alice, f.acme, "High"), e.role(f.alice, f.acme, "Low")
	e.assign(f.alice, f.acme, f.bob, high)
	e.assign(f.alice, f.acme, f.bob, low)
	e.assign(f.alice, f.acme, carol, low)
	e.grant(f.alice, f.acme, f.acme, map[string]string{"VIEW_PROJECTS": "deny"})
	e.grant(f.alice, f.acme, low, map[string]string{"VIEW_PROJECTS": "allow", "EDIT_DOCUMENTS": "allow"})
	var projects, packages []string
	for i := 0; i < 3; i++ {
		p := e.must(201, f.alice, "POST", acme+"/projects", map[string]any{"name": fmt.Sprint("P", i)}).obj(t)["id"].(string)
		projects = append(projects, p)
		packages = append(packages, e.must(201, f.alice, "POST", "/projects/"+p+"/packages", map[string]any{"name": "K", "code": fmt.Sprint("K", i)}).obj(t)["id"].(string))
	}
	patch := func(path, target string, perms map[string]string) {
		e.must(200, f.alice, "PATCH", path+"/permissions/"+target, map[string]any{"permissions": perms})
	}
	patch("/projects/"+projects[0], high, map[string]string{"VIEW_PROJECTS": "deny", "ADMIN_PROJECTS": "allow"})
	patch("/projects/"+projects[1], carol.ID, map[string]string{"VIEW_PROJECTS": "deny"})
	patch("/projects/"+projects[2], f.acme, map[string]string{"VIEW_DOCUMENTS": "allow"})
	patch("/packages/"+packages[0], low, map[string]string{"EDIT_DOCUMENTS": "deny"})
	patch("/packages/"+packages[1], f.bob.ID, map[string]string{"VIEW_PROJECTS": "deny"})
	patch("/packages/"+packages[2], f.acme, map[string]string{"CREATE_WORKITEMS": "allow"})

	ctx := withAccessCache(context.Background(), e.srv.access)
	orgID := parseTestID(t, f.acme)
	for _, u := range []*testUser{f.alice, f.bob, carol, f.pen, f.mallory} {
		for i := range projects {
			pid, kid := parseTestID(t, projects[i]), parseTestID(t, packages[i])
			for _, sc := range []Scopes{{}, {Project: pid}, {Project: pid, Package: kid}} {
				for pass := 0; pass < 2; pass++ { // the second pass is served from the cache
					got, err := authorize(ctx, e.store.R, u.id, orgID, sc)
					if err != nil {
						t.Fatal(err)
					}
					want, err := resolveAccess(context.Background(), e.store.R, u.id, orgID, sc)
					if err != nil {
						t.Fatal(err)
					}
					if got != want {
						t.Errorf("%s %+v pass %d: cached %v, resolved %v", u.Email, sc, pass, got.Permissions(), want.Permissions())
					}
				}
			}
		}
		// A write transaction's organisation-level access comes from the
		// standings kept by access tag.
		for pass := 0; pass < 2; pass++ {
			err := e.store.InTx(ctx, func(q *db.Queries) error {
				got, err := authorize(ctx, q, u.id, orgID, Scopes{})
				if err != nil {
					return err
				}
				want, err := resolveAccess(context.Background(), q, u.id, orgID, Scopes{})
				if err != nil {
					return err
				}
				if got != want {
					t.Errorf("%s in a write, pass %d: tagged %v, resolved %v", u.Email, pass, got.Permissions(), want.Permissions())
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestWriteAccessIsDroppedByEveryChange: inside write transactions a
// caller's organisation access is reused while the organisation's access
// tag stands, and a revoked grant, a removed or deleted role, a removed
// member and a ban refuse the very next write.
func TestWriteAccessIsDroppedByEveryChange(t *testing.T) {
	t.Parallel()
	f := newOrgFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	e.grant(f.alice, f.acme, f.acme, map[string]string{"CREATE_PROJECTS": "deny"})
	crew := e.role(f.alice, f.acme, "Crew")
	e.grant(f.alice, f.acme, crew, map[string]string{"CREATE_PROJECTS": "allow"})
	e.assign(f.alice, f.acme, f.bob, crew)
	creates := func(step string, want int) {
		t.Helper()
		for i := 0; i < 2; i++ { // the second one reuses the tagged standing
			if r := e.do(f.bob, "POST", acme+"/projects", map[string]any{"name": "P"}); r.Status != want {
				t.Fatalf("%s (request %d): status %d, want %d: %s", step, i+1, r.Status, want, r.Body)
			}
		}
	}
	creates("role grant allows", 201)
	e.srv.access.taggedMu.Lock()
	kept := len(e.srv.access.tagged)
	e.srv.access.taggedMu.Unlock()
	if kept == 0 {
		t.Fatal("writes left no standing kept by access tag")
	}
	e.grant(f.alice, f.acme, crew, map[string]string{"CREATE_PROJECTS": "deny"})
	creates("role grant revoked", 403)
	e.grant(f.alice, f.acme, crew, map[string]string{"CREATE_PROJECTS": "allow"})
	creates("role grant restored", 201)
	e.must(204, f.alice, "DELETE", acme+"/members/"+f.bob.ID+"/roles/"+crew, nil)
	creates("role taken away", 403)
	e.assign(f.alice, f.acme, f.bob, crew)
	creates("role given back", 201)
	e.must(204, f.alice, "DELETE", "/roles/"+crew, nil)
	creates("role deleted", 403)
	crew = e.role(f.alice, f.acme, "Crew again")
	e.grant(f.alice, f.acme, crew, map[string]string{"CREATE_PROJECTS": "allow"})
	e.assign(f.alice, f.acme, f.bob, crew)
	creates("a new role", 201)
	e.must(204, f.alice, "DELETE", acme+"/members/"+f.bob.ID, nil)
	creates("member removed", 403)
	e.addMember(f.acme, f.bob)
	e.assign(f.alice, f.acme, f.bob, crew)
	creates("member again", 201)
	e.must(200, f.alice, "PUT", acme+"/bans/"+f.bob.ID, map[string]any{"reason": "x"})
	creates("member banned", 403)
	// The organisation's owner is never refused; another organisation's
	// owner always is.
	creates2 := func(u *testUser, want int) {
		t.Helper()
		for i := 0; i < 2; i++ {
			if r := e.do(u, "POST", acme+"/projects", map[string]any{"name": "P"}); r.Status != want {
				t.Fatalf("%s (request %d): status %d, want %d: %s", u.Email, i+1, r.Status, want, r.Body)
			}
		}
	}
	creates2(f.alice, 201)
	creates2(f.mallory, 403)
}

func parseTestID(t *testing.T, s string) int64 {
	t.Helper()
	id, ok := db.ParseID(s)
	if !ok {
		t.Fatalf("not an id: %q", s)
	}
	return int64(id)
}

// TestListCacheDroppedByWrites: a list served from the id cache shows a
// project created, renamed or closed on the very next request.
func TestListCacheDroppedByWrites(t *testing.T) {
	t.Parallel()
	f := newOrgFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	for i := 0; i < 3; i++ {
		e.must(201, f.alice, "POST", acme+"/projects", map[string]any{"name": fmt.Sprint("P", i)})
	}
	list := func(query string) (int, string) {
		r := e.must(200, f.bob, "GET", acme+"/projects"+query, nil)
		names := []string{}
		for _, p := range r.arr(t) {
			names = append(names, p["name"].(string))
		}
		return len(names), r.Header.Get("X-Total-Count") + ":" + fmt.Sprint(names)
	}
	for i := 0; i < 2; i++ { // the second answer comes from the cache
		if _, got := list(""); got != "3:[P0 P1 P2]" {
			t.Fatalf("got %s", got)
		}
	}
	p := e.must(201, f.alice, "POST", acme+"/projects", map[string]any{"name": "P3"}).obj(t)["id"].(string)
	if _, got := list(""); got != "4:[P0 P1 P2 P3]" {
		t.Fatalf("after create: %s", got)
	}
	open := "?%24filter=" + url.QueryEscape("status eq 'open'")
	list(open)
	e.must(200, f.alice, "PATCH", "/projects/"+p, map[string]any{"status": "closed"})
	if _, got := list(open); got != "3:[P0 P1 P2]" {
		t.Fatalf("after closing P3: %s", got)
	}
}

// TestCachedAccessDroppedByAnotherProcess: a role taken away by another
// process writing the same file (an operator's sqlite3, `workspace admin`)
// ends the cached access within the writer's poll, not at the entry's expiry.
func TestCachedAccessDroppedByAnotherProcess(t *testing.T) {
	t.Parallel()
	f := newOrgFixture(t)
	e := f.e
	crew, project := crewProject(t, f)
	e.must(200, f.bob, "GET", project, nil)
	e.must(200, f.bob, "GET", project, nil) // from the cache

	var seq int
	var name, file string
	if err := e.store.Reader.QueryRow("PRAGMA database_list").Scan(&seq, &name, &file); err != nil {
		t.Fatal(err)
	}
	other, err := sql.Open("sqlite", "file:"+file+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := other.Exec(`DELETE FROM member_roles WHERE user_id = ? AND role_id = ?`, f.bob.ID, crew); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		r := e.do(f.bob, "GET", project, nil)
		if r.Status == 403 {
			break
		}
		if r.Status != 200 || time.Now().After(deadline) {
			t.Fatalf("after another process removed the role: status %d: %s", r.Status, r.Body)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestCachedProjectDroppedByWrites: GET /projects/{id} serves the project
// row from memory between writes; a rename and a close show on the very next
// read, and the cached row gives no one else access.
func TestCachedProjectDroppedByWrites(t *testing.T) {
	t.Parallel()
	f := newOrgFixture(t)
	e := f.e
	_, project := crewProject(t, f)
	read := func(step string) map[string]any {
		t.Helper()
		var first map[string]any
		for i := 0; i < 2; i++ { // the second answer comes from the cache
			r := e.do(f.bob, "GET", project, nil)
			if r.Status != 200 {
				t.Fatalf("%s: status %d: %s", step, r.Status, r.Body)
			}
			if i == 0 {
				first = r.obj(t)
			} else if got := r.obj(t); fmt.Sprint(got) != fmt.Sprint(first) {
				t.Fatalf("%s: the cached answer %v differs from %v", step, got, first)
			}
		}
		return first
	}
	read("created")
	e.srv.projects.mu.Lock()
	cached := len(e.srv.projects.entries)
	e.srv.projects.mu.Unlock()
	if cached == 0 {
		t.Fatal("a read between writes left nothing in the project cache")
	}
	e.must(200, f.alice, "PATCH", project, map[string]any{"name": "Renamed"})
	if got := read("renamed")["name"]; got != "Renamed" {
		t.Fatalf("after the rename: name %v", got)
	}
	e.must(200, f.alice, "PATCH", project, map[string]any{"status": "closed"})
	if got := read("closed")["status"]; got != "closed" {
		t.Fatalf("after closing: status %v", got)
	}
	// The row in memory is no way around access: another organisation's
	// owner and a non-member are still refused.
	for _, u := range []*testUser{f.mallory, f.nobody} {
		if r := e.do(u, "GET", project, nil); r.Status != 403 && r.Status != 404 {
			t.Fatalf("%s read a cached project of another organisation: status %d: %s", u.Email, r.Status, r.Body)
		}
	}
}
