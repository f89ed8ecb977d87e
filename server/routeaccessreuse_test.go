package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"workspace/db"
)

// TestRouteAccessReuse: the handler's authorize answers with the Access the
// route's check resolved only in a read transaction at the generation it
// was resolved at; a write transaction, and a read after a write, resolve
// afresh (routeaccess.go, "One resolution per request").
func TestRouteAccessReuse(t *testing.T) {
	t.Parallel()
	f := newOrgFixture(t)
	e := f.e
	orgID := parseTestID(t, f.acme)
	// route runs the route's check for bob and marks what it kept, so a
	// reuse shows.
	const marker = -42
	route := func() (context.Context, uint64) {
		ctx := withAccessCache(context.Background(), e.srv.access)
		slot := &requestAccessOf(ctx).route
		slot.recording = true
		err := e.store.ReadTx(ctx, func(q *db.Queries) error {
			a, err := authorize(ctx, q, f.bob.id, orgID, Scopes{})
			if err == nil && !a.IsMember() {
				err = errors.New("bob is a member")
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		slot.recording = false
		if slot.n != 1 {
			t.Fatalf("the check kept %d resolutions, want 1", slot.n)
		}
		slot.entries[0].a.TopRank = marker
		return ctx, slot.entries[0].gen
	}
	handlerRead := func(ctx context.Context) (a Access, gen uint64) {
		err := e.store.ReadTx(ctx, func(q *db.Queries) error {
			gen, _ = e.store.ReadGeneration(q)
			var err error
			a, err = authorize(ctx, q, f.bob.id, orgID, Scopes{})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return a, gen
	}

	// A read at the route's generation reuses its Access; another scope
	// does not. Something else may write meanwhile (the generation moves):
	// then it is asked again until a pair shares one.
	for deadline := time.Now().Add(10 * time.Second); ; {
		ctx, gen := route()
		a, got := handlerRead(ctx)
		if got != gen {
			if time.Now().After(deadline) {
				t.Fatal("the generation never held still between two reads")
			}
			continue
		}
		if a.TopRank != marker {
			t.Fatalf("a read at the route's generation resolved afresh (TopRank %d)", a.TopRank)
		}
		err := e.store.ReadTx(ctx, func(q *db.Queries) error {
			b, err := authorize(ctx, q, f.bob.id, orgID, Scopes{Project: 1})
			if err == nil && b.TopRank == marker {
				t.Error("another scope was answered with the route's Access")
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		break
	}

	// A write transaction resolves afresh: bob's membership removed in it
	// is seen (and rolled back).
	ctx, _ := route()
	rollback := errors.New("rollback")
	err := e.store.InTx(ctx, func(q *db.Queries) error {
		if _, err := q.MemberDelete(ctx, db.MemberDeleteParams{OrganisationID: orgID, UserID: f.bob.id}); err != nil {
			return err
		}
		a, err := authorize(ctx, q, f.bob.id, orgID, Scopes{})
		if err != nil {
			return err
		}
		if a.IsMember() || a.TopRank == marker {
			t.Error("a write transaction was answered with the route's Access")
		}
		return rollback
	})
	if !errors.Is(err, rollback) {
		t.Fatal(err)
	}

	// A read after a committed write resolves afresh.
	ctx, _ = route()
	e.must(200, f.alice, "PATCH", "/organisations/"+f.acme, map[string]any{"description": "moved"})
	if a, _ := handlerRead(ctx); a.TopRank == marker {
		t.Error("a read after a write was answered with the route's Access")
	}
}

// TestRouteRefusesMemberBeforeBody: a member who holds neither the
// permission nor the alternative a route allows (a team's leader, the user
// themself) and sends a malformed body is refused (403/404), never told
// about the body; the owner sending the same body is not refused.
func TestRouteRefusesMemberBeforeBody(t *testing.T) {
	t.Parallel()
	f := newOrgFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	id := func(r *testResponse) string { return r.obj(t)["id"].(string) }
	wg := id(e.must(201, f.alice, "POST", acme+"/workgroups", map[string]any{"name": "Yard"}))
	team := id(e.must(201, f.alice, "POST", "/workgroups/"+wg+"/teams", map[string]any{"name": "Crane", "colour": "#336699"}))
	ind := id(e.must(201, f.alice, "POST", acme+"/inductions", map[string]any{"name": "Site"}))
	code := e.must(201, f.alice, "POST", acme+"/invites", nil).obj(t)["code"].(string)
	doc := id(e.must(201, f.alice, "POST", "/documents", map[string]any{"organisation_id": f.acme, "title": "Plan"}))
	alice := fmt.Sprint(f.alice.id)
	for _, c := range []struct{ method, path string }{
		{"PUT", "/workgroups/" + wg + "/teams/" + team + "/members/" + alice},
		{"PATCH", "/workgroups/" + wg + "/teams/" + team + "/members/" + alice},
		{"POST", "/inductions/" + ind + "/users/" + alice},
		{"PATCH", "/invites/" + code},
		{"POST", "/documents/" + doc + "/shares"},
	} {
		send := func(u *testUser) *testResponse {
			req := httptest.NewRequest(c.method, c.path, strings.NewReader(`{"unterminated": `))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+e.bearer(u))
			return e.serve(req)
		}
		if r := send(f.bob); r.Status != http.StatusForbidden && r.Status != http.StatusNotFound {
			t.Errorf("%s %s: a member without the right sent a malformed body and got %d, want the refusal: %.200s", c.method, c.path, r.Status, r.Body)
		}
		if r := send(f.alice); r.Status == http.StatusForbidden || r.Status == http.StatusNotFound {
			t.Errorf("%s %s: the owner was refused (%d): %.200s", c.method, c.path, r.Status, r.Body)
		}
	}
}

// TestRouteDecidesBodyAlternativesFirst (issue 34): where the body names
// the scope a permission is asked on (a work item's or document's project,
// an asset's fleet) or the alternative (another invitee checked in), the
// route decides access before the handler validates the body: a member
// without the permission there is refused (403) whatever else the body
// holds, and a member holding it only on the scope the body names is told
// what is wrong with the body (400), as is the owner.
func TestRouteDecidesBodyAlternativesFirst(t *testing.T) {
	t.Parallel()
	f := newWIFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	id := func(r *testResponse) string { return r.obj(t)["id"].(string) }
	// carol holds CREATE_WORKITEMS and EDIT_DOCUMENTS on the project and
	// MANAGE_FLEETS on the fleet, nothing on the organisation.
	carol := e.user("carol")
	e.addMember(f.acme, carol)
	fleet := id(e.must(201, f.alice, "POST", acme+"/fleets", map[string]any{"name": "Trucks"}))
	e.must(200, f.alice, "PATCH", "/projects/"+f.project+"/permissions/"+carol.ID, map[string]any{"permissions": map[string]any{"CREATE_WORKITEMS": "allow", "EDIT_DOCUMENTS": "allow"}})
	e.must(200, f.alice, "PATCH", "/fleets/"+fleet+"/permissions/"+carol.ID, map[string]any{"permissions": map[string]any{"MANAGE_FLEETS": "allow"}})
	item := id(e.must(201, f.alice, "POST", acme+"/workitems", map[string]any{"type_id": f.task, "title": "Sweep"}))
	sched := id(e.must(201, f.alice, "POST", "/workitems/"+item+"/schedules", map[string]any{"scheduled_start_at": "2026-12-05T07:00:00Z",
		"scheduled_finish_at": "2026-12-05T08:00:00Z", "invitee_ids": []string{f.bob.ID, carol.ID}}))
	talk := id(e.must(201, f.alice, "POST", acme+"/toolboxes", map[string]any{"title": "Working at height"}))
	malformed := `{"unterminated": `
	type want struct {
		u      *testUser
		status int // 403 refused by the route; 400 the body's fault
	}
	for _, c := range []struct {
		name, method, path, body string
		want                     []want
	}{
		{"a work item in the project, a title of the wrong type", "POST", acme + "/workitems", `{"project_id": "` + f.project + `", "title": 5}`,
			[]want{{f.bob, 403}, {f.mallory, 403}, {carol, 400}, {f.alice, 400}}},
		{"a work item outside the project", "POST", acme + "/workitems", `{"title": 5}`,
			[]want{{f.bob, 403}, {carol, 403}, {f.alice, 400}}},
		{"a work item in another organisation's project", "POST", acme + "/workitems", `{"project_id": "` + f.evilProject + `", "title": 5}`,
			[]want{{carol, 403}, {f.alice, 400}}},
		{"a malformed work item", "POST", acme + "/workitems", malformed, []want{{f.bob, 403}, {carol, 403}, {f.alice, 400}}},
		{"an asset in the fleet, a name of the wrong type", "POST", acme + "/assets", `{"fleet_id": "` + fleet + `", "name": 5}`,
			[]want{{f.bob, 403}, {f.mallory, 403}, {carol, 400}, {f.alice, 400}}},
		{"an asset outside the fleet", "POST", acme + "/assets", `{"name": 5}`, []want{{carol, 403}, {f.alice, 400}}},
		{"a malformed asset", "POST", acme + "/assets", malformed, []want{{f.bob, 403}, {carol, 403}, {f.alice, 400}}},
		{"an asset group in the fleet, a name of the wrong type", "POST", acme + "/asset-groups", `{"fleet_id": "` + fleet + `", "name": 5}`,
			[]want{{f.bob, 403}, {f.mallory, 403}, {carol, 400}, {f.alice, 400}}},
		{"an asset group outside the fleet", "POST", acme + "/asset-groups", `{"name": 5}`, []want{{carol, 403}, {f.alice, 400}}},
		{"a document in the project, a title of the wrong type", "POST", "/documents", `{"organisation_id": "` + f.acme + `", "project_id": "` + f.project + `", "title": 5}`,
			[]want{{f.bob, 403}, {f.mallory, 403}, {carol, 400}, {f.alice, 400}}},
		{"a document outside the project", "POST", "/documents", `{"organisation_id": "` + f.acme + `", "title": 5}`,
			[]want{{f.bob, 403}, {carol, 403}, {f.alice, 400}}},
		{"a document naming no organisation is the body's fault", "POST", "/documents", `{"title": 5}`, []want{{f.bob, 400}, {f.alice, 400}}},
		{"checking another in, a latitude out of range", "POST", "/schedules/" + sched + "/check-in", `{"user_id": "` + carol.ID + `", "latitude": 500, "longitude": 0}`,
			[]want{{f.bob, 403}, {f.mallory, 403}, {f.alice, 400}}},
		{"checking oneself in, a latitude out of range", "POST", "/schedules/" + sched + "/check-in", `{"latitude": 500, "longitude": 0}`,
			[]want{{f.bob, 400}, {f.mallory, 403}}},
		{"declining for another, with a position", "POST", "/schedules/" + sched + "/decline", `{"user_id": "` + carol.ID + `", "latitude": 1, "longitude": 1}`,
			[]want{{f.bob, 403}, {f.alice, 400}}},
		{"signing with a token that is not one", "POST", "/users/@me/toolboxes/" + talk + "/sign", `{"jwt": "not a token", "first_name": 5}`,
			[]want{{f.bob, 404}, {f.mallory, 404}}},
		{"signing through a schedule of another toolbox", "POST", "/users/@me/toolboxes/" + talk + "/sign", `{"schedule_id": "` + sched + `", "first_name": 5}`,
			[]want{{f.bob, 404}}},
		{"signing with no proof is the body's fault", "POST", "/users/@me/toolboxes/" + talk + "/sign", `{"first_name": 5}`,
			[]want{{f.bob, 400}}},
	} {
		for _, w := range c.want {
			req := httptest.NewRequest(c.method, c.path, strings.NewReader(c.body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+e.bearer(w.u))
			if r := e.serve(req); r.Status != w.status {
				t.Errorf("%s (%s %s) as %s: %d, want %d: %.200s", c.name, c.method, c.path, w.u.Email, r.Status, w.status, r.Body)
			}
		}
	}

	// Following a work item needs VIEW_WORKITEMS or being its assignee or
	// invitee: a member denied the view is refused on the route; an
	// invitee who is denied it still follows.
	dora := e.user("dora")
	e.addMember(f.acme, dora)
	e.grant(f.alice, f.acme, dora.ID, map[string]string{"VIEW_WORKITEMS": "deny"})
	e.grant(f.alice, f.acme, carol.ID, map[string]string{"VIEW_WORKITEMS": "deny"})
	e.must(403, dora, "PUT", "/workitems/"+item+"/subscription", nil)
	e.must(200, carol, "PUT", "/workitems/"+item+"/subscription", nil)

	// Deleting a role needs MANAGE_ROLES and a rank above it, on the route.
	top := e.role(f.alice, f.acme, "Top")
	e.grant(f.alice, f.acme, f.bob.ID, map[string]string{"MANAGE_ROLES": "allow"})
	e.must(403, f.bob, "DELETE", "/roles/"+top, nil)
	e.must(403, dora, "DELETE", "/roles/"+top, nil)
	e.must(204, f.alice, "DELETE", "/roles/"+top, nil)
}
