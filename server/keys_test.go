package server

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"
)

// TestKeyRotation: after a rotation new tokens name the new key, tokens of
// the old key keep working, and the JWKS publishes both until the old key's
// tokens have expired; then only the new one.
func TestKeyRotation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	alice := e.user("alice") // token signed with the first key
	first := e.srv.auth.current().kid
	kid, err := RotateSigningKey(ctx, e.store, e.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	if kid == first {
		t.Fatal("rotation kept the key id")
	}
	if e.srv.auth.current().kid != first {
		t.Fatal("the server switched before its reload")
	}
	if err := e.srv.reloadKeys(ctx); err != nil {
		t.Fatal(err)
	}
	if e.srv.auth.current().kid != kid {
		t.Fatalf("current key %s after reload, want %s", e.srv.auth.current().kid, kid)
	}
	jwks := func() []string {
		var kids []string
		for _, k := range e.must(200, nil, "GET", "/.well-known/jwks.json", nil).obj(t)["keys"].([]any) {
			kids = append(kids, k.(map[string]any)["kid"].(string))
		}
		return kids
	}
	if got := jwks(); len(got) != 2 || got[0] != kid || got[1] != first {
		t.Fatalf("jwks %v, want [%s %s]", got, kid, first)
	}
	e.must(200, alice, "GET", "/users/@me", nil) // the old key's token still verifies
	bob := e.user("bob")                         // signed with the new key
	e.must(200, bob, "GET", "/users/@me", nil)

	// A new server on the same database starts with both keys too.
	// Its background jobs end before the store closes (see TestSigningKeySurvivesRestart).
	againCtx, cancel := context.WithCancel(ctx)
	again, err := New(againCtx, e.store, e.cfg)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); again.Wait() })
	if again.auth.current().kid != kid || len(again.auth.keys.Load().published) != 2 {
		t.Fatalf("restarted server: current %s, %d published", again.auth.current().kid, len(again.auth.keys.Load().published))
	}

	e.clock.Advance(keyOverlap + time.Second)
	if err := e.srv.reloadKeys(ctx); err != nil {
		t.Fatal(err)
	}
	if got := jwks(); len(got) != 1 || got[0] != kid {
		t.Fatalf("jwks after the overlap %v, want only %s", got, kid)
	}
	// A token of the retired key is refused (it has expired anyway; the
	// key is no longer known either).
	req := httptest.NewRequest("GET", "/users/@me", nil)
	req.Header.Set("Authorization", "Bearer "+alice.Token)
	if r := e.serve(req); r.Status != 401 {
		t.Fatalf("retired key's token: status %d, want 401", r.Status)
	}
}
