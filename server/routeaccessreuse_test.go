package server

import (
	"context"
	"errors"
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
