package server

import (
	"context"
	"testing"

	"workspace/db"
)

// TestShareResponseAudit: accepting or rejecting a share addressed to a
// user is a write of the shared subject's organisation, audited on its
// chain (the recipient is in no organisation of the request): it shows in
// that organisation's audit log, in no other's and not on chain 0, and the
// chains still verify.
func TestShareResponseAudit(t *testing.T) {
	t.Parallel()
	f := newDocFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	carol := e.user("carol")
	e.sharesFromAnyone(carol)
	fleet := e.must(201, f.alice, "POST", acme+"/fleets", map[string]any{"name": "Trucks"}).obj(t)["id"].(string)
	evilProject := e.must(201, f.mallory, "POST", "/organisations/"+f.evil+"/projects", map[string]any{"name": "Evil"}).obj(t)["id"].(string)
	id := func(r *testResponse) string { return r.obj(t)["id"].(string) }
	docShare := id(e.must(201, f.alice, "POST", "/documents/"+f.doc+"/shares", map[string]any{"user_id": carol.ID, "scope_view": true}))
	projectShare := id(e.must(201, f.alice, "POST", "/projects/"+f.project+"/shares", map[string]any{"user_id": carol.ID}))
	fleetShare := id(e.must(201, f.alice, "POST", "/fleets/"+fleet+"/shares", map[string]any{"user_id": carol.ID}))
	evilShare := id(e.must(201, f.mallory, "POST", "/projects/"+evilProject+"/shares", map[string]any{"user_id": carol.ID}))

	acmeLog, evilLog := acme+"/audit-log", "/organisations/"+f.evil+"/audit-log"
	// entry: the one entry of the log naming the share, by carol, of action.
	entry := func(share, action string) func(t *testing.T, r *testResponse) {
		return func(t *testing.T, r *testResponse) {
			t.Helper()
			l := r.arr(t)
			if len(l) != 1 || l[0]["action"] != action || l[0]["actor_id"] != carol.ID {
				t.Fatalf("entries for %s: %v, want one %s by carol", share, l, action)
			}
		}
	}
	e.run(t, []scenario{
		{"someone else's share is absent, and no write", f.bob, "POST", "/users/@me/document-shares/" + docShare + "/reject", nil, 404, nil},
		{"another organisation's owner cannot answer it", f.mallory, "POST", "/users/@me/project-shares/" + projectShare + "/accept", nil, 404, nil},
		{"carol rejects the document share", carol, "POST", "/users/@me/document-shares/" + docShare + "/reject", nil, 200, nil},
		{"carol accepts the project share", carol, "POST", "/users/@me/project-shares/" + projectShare + "/accept", nil, 200, nil},
		{"carol accepts the fleet share", carol, "POST", "/users/@me/fleet-shares/" + fleetShare + "/accept", nil, 200, nil},
		{"carol accepts Evil's share", carol, "POST", "/users/@me/project-shares/" + evilShare + "/accept", nil, 200, nil},

		{"the document share's answer is Acme's", f.alice, "GET", acmeLog + "?target=" + docShare, nil, 200, entry(docShare, "POST /users/@me/document-shares/:id/reject")},
		{"the project share's", f.alice, "GET", acmeLog + "?target=" + projectShare, nil, 200, entry(projectShare, "POST /users/@me/project-shares/:id/accept")},
		{"the fleet share's", f.alice, "GET", acmeLog + "?target=" + fleetShare, nil, 200, entry(fleetShare, "POST /users/@me/fleet-shares/:id/accept")},
		{"Evil's share is not in Acme's log", f.alice, "GET", acmeLog + "?target=" + evilShare, nil, 200, wantLen(0)},
		{"but in Evil's", f.mallory, "GET", evilLog + "?target=" + evilShare, nil, 200, entry(evilShare, "POST /users/@me/project-shares/:id/accept")},
		{"Acme's answers are not in Evil's log", f.mallory, "GET", evilLog + "?target=" + projectShare, nil, 200, wantLen(0)},
		{"Evil cannot read Acme's log", f.mallory, "GET", acmeLog, nil, 403, nil},
		{"nor carol, in no organisation", carol, "GET", acmeLog, nil, 403, nil},
	})

	ctx := context.Background()
	var onChain0 int
	if err := e.store.Reader.QueryRowContext(ctx, `SELECT count(*) FROM audit_log WHERE chain = 0 AND action LIKE 'POST /users/@me/%-shares/:id/%'`).Scan(&onChain0); err != nil {
		t.Fatal(err)
	}
	if onChain0 != 0 {
		t.Errorf("%d share answers on chain 0", onChain0)
	}
	problems, checked, err := db.VerifyAudit(ctx, e.store.R)
	if err != nil || len(problems) != 0 || checked == 0 {
		t.Fatalf("verify: %v %v (%d checked)", problems, err, checked)
	}
}
