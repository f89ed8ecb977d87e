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
