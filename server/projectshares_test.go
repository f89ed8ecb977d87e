package server

import (
	"testing"
)

// TestProjectShares: sharing a project with another organisation and with
// one user, accepting and rejecting, what an accepted share opens (the
// project and its documents, read only, nothing else of the organisation),
// and revocation ending it on the next request.
func TestProjectShares(t *testing.T) {
	t.Parallel()
	f := newOrgFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	carol := e.user("carol")  // shared with personally
	e.sharesFromAnyone(carol) // which a stranger may only when carol accepts shares from anyone
	dave := e.user("dave")    // a member of Evil without MANAGE_ORGANISATION
	e.addMember(f.evil, dave)
	project := e.must(201, f.alice, "POST", acme+"/projects", map[string]any{"name": "Plant"}).obj(t)["id"].(string)
	private := e.must(201, f.alice, "POST", acme+"/projects", map[string]any{"name": "Private"}).obj(t)["id"].(string)
	doc := e.must(201, f.alice, "POST", "/documents", map[string]any{"organisation_id": f.acme, "project_id": project, "title": "Spec"}).obj(t)["id"].(string)
	otherDoc := e.must(201, f.alice, "POST", "/documents", map[string]any{"organisation_id": f.acme, "project_id": private, "title": "Secret"}).obj(t)["id"].(string)
	e.must(201, f.alice, "POST", "/projects/"+project+"/milestones", map[string]any{"name": "M1"})
	pp := "/projects/" + project
	e.run(t, []scenario{
		{"member without SHARE_PROJECTS cannot share", f.bob, "POST", pp + "/shares", map[string]any{"organisation_id": f.evil}, 403, nil},
		{"other organisation cannot share", f.mallory, "POST", pp + "/shares", map[string]any{"organisation_id": f.evil}, 403, nil},
		{"pending member cannot share", f.pen, "POST", pp + "/shares", map[string]any{"organisation_id": f.evil}, 403, nil},
		{"no token", nil, "POST", pp + "/shares", map[string]any{"organisation_id": f.evil}, 401, nil},
		{"absent project", f.alice, "POST", "/projects/123456789/shares", map[string]any{"organisation_id": f.evil}, 404, nil},
		{"malformed body", f.alice, "POST", pp + "/shares", "{", 400, nil},
		{"wrong type", f.alice, "POST", pp + "/shares", map[string]any{"user_id": []int{1}}, 400, nil},
		{"a recipient is required", f.alice, "POST", pp + "/shares", map[string]any{}, 400, wantField("organisation_id")},
		{"not both recipients", f.alice, "POST", pp + "/shares", map[string]any{"organisation_id": f.evil, "user_id": carol.ID}, 400, wantField("organisation_id")},
		{"not its own organisation", f.alice, "POST", pp + "/shares", map[string]any{"organisation_id": f.acme}, 400, wantField("organisation_id")},
		{"absent organisation", f.alice, "POST", pp + "/shares", map[string]any{"organisation_id": "123456789"}, 400, wantField("organisation_id")},
		{"absent user", f.alice, "POST", pp + "/shares", map[string]any{"user_id": "123456789"}, 400, wantField("user_id")},
		{"before accepting, Evil reads nothing", f.mallory, "GET", pp, nil, 403, nil},
		{"nor carol", carol, "GET", pp, nil, 403, nil},
	})
	orgShare := e.must(201, f.alice, "POST", pp+"/shares", map[string]any{"organisation_id": f.evil}).obj(t)
	if orgShare["status"] != float64(0) || orgShare["organisation"].(map[string]any)["id"] != f.evil || orgShare["project"].(map[string]any)["id"] != project {
		t.Fatalf("share %v", orgShare)
	}
	os := orgShare["id"].(string)
	us := e.must(201, f.alice, "POST", pp+"/shares", map[string]any{"user_id": carol.ID}).obj(t)["id"].(string)
	e.run(t, []scenario{
		{"no second open share to the same recipient", f.alice, "POST", pp + "/shares", map[string]any{"organisation_id": f.evil}, 400, nil},
		{"the sharer lists the project's shares", f.alice, "GET", pp + "/shares", nil, 200, wantLen(2)},
		{"a member cannot list them", f.bob, "GET", pp + "/shares", nil, 403, nil},
		{"other organisation cannot list them", f.mallory, "GET", pp + "/shares", nil, 403, nil},
		{"absent project's shares", f.alice, "GET", "/projects/123456789/shares", nil, 404, nil},
		{"carol sees her pending share", carol, "GET", "/users/@me/project-shares", nil, 200, wantLen(1)},
		{"Evil's members see theirs", dave, "GET", "/users/@me/project-shares", nil, 200, wantLen(1)},
		{"and in /users/@me/shares", carol, "GET", "/users/@me/shares", nil, 200, func(t *testing.T, r *testResponse) {
			if l := r.arr(t); len(l) != 1 || l[0]["type"] != "project" {
				t.Errorf("got %v", l)
			}
		}},
		{"someone else cannot accept carol's share", f.bob, "POST", "/users/@me/project-shares/" + us + "/accept", nil, 404, nil},
		{"a member without MANAGE_ORGANISATION cannot accept for Evil", dave, "POST", "/users/@me/project-shares/" + os + "/accept", nil, 403, nil},
		{"a stranger cannot accept for Evil", carol, "POST", "/users/@me/project-shares/" + os + "/accept", nil, 404, nil},
		{"absent share", carol, "POST", "/users/@me/project-shares/123456789/accept", nil, 404, nil},
		{"Evil's owner accepts", f.mallory, "POST", "/users/@me/project-shares/" + os + "/accept", nil, 200, wantResponded(1)},
		{"accepting twice", f.mallory, "POST", "/users/@me/project-shares/" + os + "/accept", nil, 400, nil},
		{"carol accepts", carol, "POST", "/users/@me/project-shares/" + us + "/accept", nil, 200, wantKey("status", 1)},

		// What an accepted share opens: the project and its documents, read only.
		{"carol reads the project", carol, "GET", pp, nil, 200, func(t *testing.T, r *testResponse) {
			perms := r.obj(t)["permissions"].(map[string]any)
			if perms["VIEW_PROJECTS"] != true || perms["VIEW_DOCUMENTS"] != true || perms["EDIT_DOCUMENTS"] != false || perms["ADMIN_PROJECTS"] != false {
				t.Errorf("permissions %v", perms)
			}
		}},
		{"Evil's member reads it", dave, "GET", pp, nil, 200, wantKey("name", "Plant")},
		{"its milestones", carol, "GET", pp + "/milestones", nil, 200, wantLen(1)},
		{"its document", carol, "GET", "/documents/" + doc, nil, 200, wantKey("title", "Spec")},
		{"not another project", carol, "GET", "/projects/" + private, nil, 403, nil},
		{"nor its document", dave, "GET", "/documents/" + otherDoc, nil, 403, nil},
		{"nor the organisation's project list", carol, "GET", acme + "/projects", nil, 403, nil},
		{"nor changes to the project", carol, "PATCH", pp, map[string]any{"name": "Mine"}, 403, nil},
		{"nor to the document", dave, "PATCH", "/documents/" + doc, map[string]any{"title": "Mine"}, 403, nil},
		{"nor sharing it on", carol, "POST", pp + "/shares", map[string]any{"user_id": f.nobody.ID}, 403, nil},

		// Revoking ends it at once.
		{"a member cannot revoke", f.bob, "DELETE", pp + "/shares/" + us, nil, 403, nil},
		{"other organisation cannot revoke", f.mallory, "DELETE", pp + "/shares/" + os, nil, 403, nil},
		{"absent share", f.alice, "DELETE", pp + "/shares/123456789", nil, 404, nil},
		{"a share of another project", f.alice, "DELETE", "/projects/" + private + "/shares/" + us, nil, 404, nil},
		{"revoke carol's", f.alice, "DELETE", pp + "/shares/" + us, nil, 204, nil},
		{"revoking twice changes nothing", f.alice, "DELETE", pp + "/shares/" + us, nil, 204, nil},
		{"revoked: carol reads nothing", carol, "GET", pp, nil, 403, nil},
		{"revoked: nor the document", carol, "GET", "/documents/" + doc, nil, 403, nil},
		{"Evil's share still holds", dave, "GET", "/documents/" + doc, nil, 200, nil},
		{"revoked shares are not listed", carol, "GET", "/users/@me/project-shares", nil, 200, wantLen(0)},
		{"revoked: accepting again refused", carol, "POST", "/users/@me/project-shares/" + us + "/accept", nil, 400, nil},
	})
	// Rejecting: the share never opens anything.
	again := e.must(201, f.alice, "POST", pp+"/shares", map[string]any{"user_id": carol.ID}).obj(t)["id"].(string)
	e.run(t, []scenario{
		{"carol rejects", carol, "POST", "/users/@me/project-shares/" + again + "/reject", nil, 200, wantKey("status", 2)},
		{"rejected: nothing to read", carol, "GET", pp, nil, 403, nil},
		{"rejected shares are not listed", carol, "GET", "/users/@me/project-shares", nil, 200, wantLen(0)},
		{"the sharer sees every status", f.alice, "GET", pp + "/shares", nil, 200, wantLen(3)},
	})
}
