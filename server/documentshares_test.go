package server

import (
	"net/http/httptest"
	"testing"
)

func wantStatus(status string) func(t *testing.T, r *testResponse) {
	return wantKey("status", status)
}

func wantPermissions(view, edit bool) func(t *testing.T, r *testResponse) {
	return func(t *testing.T, r *testResponse) {
		t.Helper()
		p := r.obj(t)["permissions"].(map[string]any)
		if p["VIEW_DOCUMENTS"] != view || p["EDIT_DOCUMENTS"] != edit {
			t.Fatalf("permissions %v, want view %v edit %v", p, view, edit)
		}
	}
}

// TestDocumentShareToUser: the lifecycle of a share with one user outside
// the organisation, every scope granting exactly what it names, and a
// revoked recipient losing every read and write it had.
func TestDocumentShareToUser(t *testing.T) {
	t.Parallel()
	f := newDocFixture(t)
	e := f.e
	c := content{f: f, doc: "/documents/" + f.doc}
	carol := e.user("carol")
	e.sharesFromAnyone(carol)
	h0 := c.head(t, "main")
	h1 := c.change(t, "POST", c.rev(h0)+"/clauses", map[string]any{"text": "first"})
	shares := c.doc + "/shares"
	var sid string
	e.run(t, []scenario{
		{"member without SHARE_PROJECTS", f.bob, "POST", shares, map[string]any{"user_id": carol.ID, "scope_view": true}, 403, nil},
		{"pending member", f.pen, "POST", shares, map[string]any{"user_id": carol.ID, "scope_view": true}, 403, nil},
		{"foreign organisation", f.mallory, "POST", shares, map[string]any{"user_id": carol.ID, "scope_view": true}, 403, nil},
		{"foreign list", f.mallory, "GET", shares, nil, 403, nil},
		{"no recipient", f.alice, "POST", shares, map[string]any{"scope_view": true}, 400, wantField("user_id")},
		{"two recipients", f.alice, "POST", shares, map[string]any{"user_id": carol.ID, "organisation_id": f.evil, "scope_view": true}, 400, wantField("user_id")},
		{"no scope", f.alice, "POST", shares, map[string]any{"user_id": carol.ID}, 400, wantField("scope_view")},
		{"every scope false", f.alice, "POST", shares, map[string]any{"user_id": carol.ID, "scope_view": false, "scope_edit": false}, 400, wantField("scope_view")},
		{"propagation to a user", f.alice, "POST", shares, map[string]any{"user_id": carol.ID, "scope_view": true, "share_to_users_organisation": true}, 400, wantField("share_to_users_organisation")},
		{"own organisation", f.alice, "POST", shares, map[string]any{"organisation_id": f.acme, "scope_view": true}, 400, wantField("organisation_id")},
		{"a member of the organisation", f.alice, "POST", shares, map[string]any{"user_id": f.bob.ID, "scope_view": true}, 400, wantField("user_id")},
		{"absent user", f.alice, "POST", shares, map[string]any{"user_id": "4242", "scope_view": true}, 400, wantField("user_id")},
		{"absent organisation", f.alice, "POST", shares, map[string]any{"organisation_id": "4242", "scope_view": true}, 400, wantField("organisation_id")},
		{"scope of the wrong type", f.alice, "POST", shares, map[string]any{"user_id": carol.ID, "scope_view": "yes"}, 400, wantField("scope_view")},
		{"user_id not a snowflake", f.alice, "POST", shares, map[string]any{"user_id": "carol", "scope_view": true}, 400, nil},
		{"read-only status", f.alice, "POST", shares, map[string]any{"user_id": carol.ID, "scope_view": true, "status": "accepted"}, 400, wantField("status")},
		{"malformed JSON", f.alice, "POST", shares, `{"user_id":`, 400, nil},
		{"absent document", f.alice, "POST", "/documents/4242/shares", map[string]any{"user_id": carol.ID, "scope_view": true}, 404, nil},
		{"bad document id", f.alice, "POST", "/documents/x/shares", map[string]any{"user_id": carol.ID, "scope_view": true}, 400, nil},
		{"no token", nil, "POST", shares, map[string]any{"user_id": carol.ID, "scope_view": true}, 401, nil},
		{"share to carol: view only", f.alice, "POST", shares, map[string]any{"user_id": carol.ID, "scope_view": true, "unknown": 1}, 201, func(t *testing.T, r *testResponse) {
			o := r.obj(t)
			sid = o["id"].(string)
			if o["status"] != "pending" || o["scope_view"] != true || o["scope_edit"] != false || o["type"] != "document" ||
				o["document"].(map[string]any)["title"] != "Main spec" || o["user"].(map[string]any)["id"] != carol.ID ||
				o["owner_organisation"].(map[string]any)["id"] != f.acme || o["organisation"] != nil {
				t.Fatalf("share %v", o)
			}
		}},
		{"second open share to the same user", f.alice, "POST", shares, map[string]any{"user_id": carol.ID, "scope_edit": true}, 400, nil},
		{"a pending share grants nothing", carol, "GET", c.doc, nil, 403, nil},
		{"the recipient sees it pending", carol, "GET", "/users/@me/document-shares", nil, 200, func(t *testing.T, r *testResponse) {
			a := r.arr(t)
			if len(a) != 1 || a[0]["status"] != "pending" || a[0]["shared_by"].(map[string]any)["id"] != f.alice.ID {
				t.Fatalf("shares %s", r.Body)
			}
		}},
		{"and among all its shares", carol, "GET", "/users/@me/shares", nil, 200, func(t *testing.T, r *testResponse) {
			a := r.arr(t)
			if len(a) != 1 || a[0]["type"] != "document" {
				t.Fatalf("shares %s", r.Body)
			}
		}},
		{"the sharer lists it", f.alice, "GET", shares, nil, 200, wantLen(1)},
	})
	share := shares + "/" + sid
	accept := "/users/@me/document-shares/" + sid + "/accept"
	e.run(t, []scenario{
		{"another user cannot accept", f.mallory, "POST", accept, nil, 404, nil},
		{"a member of the organisation cannot accept", f.bob, "POST", accept, nil, 404, nil},
		{"absent share", carol, "POST", "/users/@me/document-shares/4242/accept", nil, 404, nil},
		{"bad share id", carol, "POST", "/users/@me/document-shares/x/accept", nil, 400, nil},
		{"accept", carol, "POST", accept, nil, 200, wantStatus("accepted")},
		{"accept twice", carol, "POST", accept, nil, 400, nil},
		{"reject after accepting", carol, "POST", "/users/@me/document-shares/" + sid + "/reject", nil, 400, nil},

		// scope_view: the document and its branch heads, nothing else
		{"view: document", carol, "GET", c.doc, nil, 200, wantPermissions(true, false)},
		{"view: branches", carol, "GET", c.doc + "/branches", nil, 200, wantLen(1)},
		{"view: branch head", carol, "GET", c.doc + "/branches/main", nil, 200, wantKey("hash", h1)},
		{"view: head revision", carol, "GET", c.rev(h1) + "?tree=true", nil, 200, nil},
		{"view: head clauses", carol, "GET", c.rev(h1) + "/clauses", nil, 200, wantLen(1)},
		{"view: an older revision needs scope_revisions", carol, "GET", c.rev(h0), nil, 403, nil},
		{"view: history needs scope_revisions", carol, "GET", c.doc + "/revisions", nil, 403, nil},
		{"view: diff needs scope_revisions", carol, "GET", c.rev(h0) + "/diff/" + h1, nil, 403, nil},
		{"view: no change without scope_edit", carol, "POST", c.rev(h1) + "/clauses", map[string]any{"text": "carol"}, 403, nil},
		{"view: no branch without scope_branch", carol, "POST", c.doc + "/branches", map[string]any{"name": "carols"}, 403, nil},
		{"view: no fork without scope_fork", carol, "POST", c.doc, nil, 403, nil},
		{"view: no export without scope_export", carol, "GET", c.rev(h1) + "/export.xlsx", nil, 403, nil},
		{"view: the document row stays the organisation's", carol, "PATCH", c.doc, map[string]any{"title": "Carol's"}, 403, nil},
		{"view: no deletion", carol, "DELETE", c.doc, nil, 403, nil},
		{"view: no sharing further", carol, "POST", shares, map[string]any{"organisation_id": f.evil, "scope_view": true}, 403, nil},
		{"view: not the organisation's list", carol, "GET", "/organisations/" + f.acme + "/documents", nil, 403, nil},
		{"view: no other document of the organisation", carol, "GET", "/documents/" + f.evilDoc, nil, 403, nil},

		{"patch: foreign organisation", f.mallory, "PATCH", share, map[string]any{"scope_edit": true}, 403, nil},
		{"patch: member without SHARE_PROJECTS", f.bob, "PATCH", share, map[string]any{"scope_edit": true}, 403, nil},
		{"patch: the recipient", carol, "PATCH", share, map[string]any{"scope_edit": true}, 403, nil},
		{"patch: read-only recipient", f.alice, "PATCH", share, map[string]any{"user_id": f.mallory.ID}, 400, wantField("user_id")},
		{"patch: read-only status", f.alice, "PATCH", share, map[string]any{"status": "revoked"}, 400, wantField("status")},
		{"patch: no scope left", f.alice, "PATCH", share, map[string]any{"scope_view": false}, 400, wantField("scope_view")},
		{"patch: wrong type", f.alice, "PATCH", share, map[string]any{"scope_edit": 1}, 400, wantField("scope_edit")},
		{"patch: share of another document", f.alice, "PATCH", "/documents/" + f.evilDoc + "/shares/" + sid, map[string]any{"scope_edit": true}, 403, nil},
		{"patch: absent share", f.alice, "PATCH", shares + "/4242", map[string]any{"scope_edit": true}, 404, nil},
		{"patch: bad share id", f.alice, "PATCH", shares + "/x", map[string]any{"scope_edit": true}, 400, nil},
		{"patch: edit, branch, revisions", f.alice, "PATCH", share, map[string]any{"scope_edit": true, "scope_branch": true, "scope_revisions": true}, 200, func(t *testing.T, r *testResponse) {
			o := r.obj(t)
			if o["status"] != "accepted" || o["scope_edit"] != true || o["scope_branch"] != true || o["scope_fork"] != false {
				t.Fatalf("share %v", o)
			}
		}},

		// the new scopes hold at once
		{"edit: permissions", carol, "GET", c.doc, nil, 200, wantPermissions(true, true)},
		{"revisions: older revision", carol, "GET", c.rev(h0), nil, 200, nil},
		{"revisions: history", carol, "GET", c.doc + "/revisions", nil, 200, wantLen(2)},
		{"revisions: diff", carol, "GET", c.rev(h0) + "/diff/" + h1, nil, 200, nil},
		{"edit: a change", carol, "POST", c.rev(h1) + "/clauses", map[string]any{"text": "carol"}, 200, nil},
		{"branch: create", carol, "POST", c.doc + "/branches", map[string]any{"name": "carols"}, 201, nil},
		{"branch: rename", carol, "PATCH", c.doc + "/branches/carols", map[string]any{"name": "carol-2"}, 200, nil},
		{"branch: protection stays with members", carol, "PATCH", c.doc + "/branches/carol-2", map[string]any{"protected": true}, 403, nil},
		{"branch: delete", carol, "DELETE", c.doc + "/branches/carol-2", nil, 204, nil},
		{"edit: the document row stays the organisation's", carol, "PATCH", c.doc, map[string]any{"title": "Carol's"}, 403, nil},
		{"edit: still no fork", carol, "POST", c.doc, nil, 403, nil},
		{"edit: still no export", carol, "GET", c.rev(h1) + "/export.docx", nil, 403, nil},
		{"patch: fork and export", f.alice, "PATCH", share, map[string]any{"scope_fork": true, "scope_export": true}, 200, nil},
		{"export", carol, "GET", c.rev(h1) + "/export.xlsx", nil, 200, nil},
	})
	carolCo := e.org(carol, "Carol Co")
	var carolFork string
	e.run(t, []scenario{
		{"fork: into an organisation the holder is not in", carol, "POST", c.doc, map[string]any{"organisation_id": f.evil}, 403, nil},
		{"fork: into the holder's organisation", carol, "POST", c.doc, map[string]any{"organisation_id": carolCo}, 201, func(t *testing.T, r *testResponse) {
			carolFork = r.obj(t)["id"].(string)
		}},
		{"fork: the origin's organisation needs EDIT_DOCUMENTS there", carol, "POST", c.doc, map[string]any{"organisation_id": f.acme}, 403, nil},

		// revoking ends every read and write at once
		{"revoke: foreign organisation", f.mallory, "DELETE", share, nil, 403, nil},
		{"revoke: member without SHARE_PROJECTS", f.bob, "DELETE", share, nil, 403, nil},
		{"revoke: the recipient cannot", carol, "DELETE", share, nil, 403, nil},
		{"revoke", f.alice, "DELETE", share, nil, 204, nil},
		{"revoked: document", carol, "GET", c.doc, nil, 403, nil},
		{"revoked: branches", carol, "GET", c.doc + "/branches", nil, 403, nil},
		{"revoked: branch head", carol, "GET", c.doc + "/branches/main", nil, 403, nil},
		{"revoked: head revision", carol, "GET", c.rev(h1), nil, 403, nil},
		{"revoked: clauses", carol, "GET", c.rev(h1) + "/clauses", nil, 403, nil},
		{"revoked: older revision", carol, "GET", c.rev(h0), nil, 403, nil},
		{"revoked: history", carol, "GET", c.doc + "/revisions", nil, 403, nil},
		{"revoked: diff", carol, "GET", c.rev(h0) + "/diff/" + h1, nil, 403, nil},
		{"revoked: change", carol, "POST", c.rev(h1) + "/clauses", map[string]any{"text": "late"}, 403, nil},
		{"revoked: branch", carol, "POST", c.doc + "/branches", map[string]any{"name": "late"}, 403, nil},
		{"revoked: fork", carol, "POST", c.doc, map[string]any{"organisation_id": carolCo}, 403, nil},
		{"revoked: export", carol, "GET", c.rev(h1) + "/export.xlsx", nil, 403, nil},
		{"revoked: gone from the recipient's list", carol, "GET", "/users/@me/document-shares", nil, 200, wantLen(0)},
		{"revoked: cannot be accepted again", carol, "POST", accept, nil, 400, nil},
		{"revoked: cannot change", f.alice, "PATCH", share, map[string]any{"scope_view": true}, 400, nil},
		{"revoke twice", f.alice, "DELETE", share, nil, 204, nil},
		{"the sharer still lists it, revoked", f.alice, "GET", shares, nil, 200, func(t *testing.T, r *testResponse) {
			if a := r.arr(t); len(a) != 1 || a[0]["status"] != "revoked" {
				t.Fatalf("shares %s", r.Body)
			}
		}},
	})
	e.run(t, []scenario{
		{"the fork made under the share stays the holder's", carol, "GET", "/documents/" + carolFork, nil, 200, wantKey("origin_id", f.doc)},
	})
}

// TestDocumentShareToOrganisation: an organisation share is answered by a
// holder of MANAGE_ORGANISATION there; without propagation only such
// holders use it, with share_to_users_organisation every member does.
func TestDocumentShareToOrganisation(t *testing.T) {
	t.Parallel()
	f := newDocFixture(t)
	e := f.e
	c := content{f: f, doc: "/documents/" + f.doc}
	eve, dave := e.user("eve"), e.user("dave")
	e.sharesFromAnyone(dave)
	e.addMember(f.evil, eve)
	var sid, did string
	e.run(t, []scenario{
		{"share with evil", f.alice, "POST", c.doc + "/shares", map[string]any{"organisation_id": f.evil, "scope_view": true}, 201, func(t *testing.T, r *testResponse) {
			o := r.obj(t)
			sid = o["id"].(string)
			if o["organisation"].(map[string]any)["id"] != f.evil || o["user"] != nil {
				t.Fatalf("share %v", o)
			}
		}},
		{"share with dave", f.alice, "POST", c.doc + "/shares", map[string]any{"user_id": dave.ID, "scope_view": true}, 201, func(t *testing.T, r *testResponse) {
			did = r.obj(t)["id"].(string)
		}},
	})
	accept := "/users/@me/document-shares/" + sid + "/accept"
	share := c.doc + "/shares/" + sid
	e.run(t, []scenario{
		{"a member of the recipient sees it", eve, "GET", "/users/@me/document-shares", nil, 200, wantLen(1)},
		{"a member without MANAGE_ORGANISATION cannot accept", eve, "POST", accept, nil, 403, nil},
		{"a user of no such organisation", dave, "POST", accept, nil, 404, nil},
		{"pending: nobody reads", f.mallory, "GET", c.doc, nil, 403, nil},
		{"the owner accepts", f.mallory, "POST", accept, nil, 200, wantStatus("accepted")},
		{"the holder of MANAGE_ORGANISATION reads", f.mallory, "GET", c.doc, nil, 200, wantPermissions(true, false)},
		{"without propagation a member does not", eve, "GET", c.doc, nil, 403, nil},
		{"propagate", f.alice, "PATCH", share, map[string]any{"share_to_users_organisation": true}, 200, wantKey("share_to_users_organisation", true)},
		{"with propagation every member reads", eve, "GET", c.doc, nil, 200, wantPermissions(true, false)},
		{"but not other documents of the organisation", eve, "GET", "/documents/" + f.doc + "/shares", nil, 403, nil},
		{"a user outside both still cannot", dave, "GET", c.doc, nil, 403, nil},

		{"dave rejects his", dave, "POST", "/users/@me/document-shares/" + did + "/reject", nil, 200, wantStatus("rejected")},
		{"rejected grants nothing", dave, "GET", c.doc, nil, 403, nil},
		{"rejected leaves the list", dave, "GET", "/users/@me/document-shares", nil, 200, wantLen(0)},
		{"a rejected share does not change", f.alice, "PATCH", c.doc + "/shares/" + did, map[string]any{"scope_edit": true}, 400, nil},
		{"a new share after the rejection", f.alice, "POST", c.doc + "/shares", map[string]any{"user_id": dave.ID, "scope_view": true}, 201, nil},

		{"revoke the organisation share", f.alice, "DELETE", share, nil, 204, nil},
		{"revoked: the member", eve, "GET", c.doc, nil, 403, nil},
		{"revoked: the owner", f.mallory, "GET", c.doc, nil, 403, nil},
		{"a new share with evil", f.alice, "POST", c.doc + "/shares", map[string]any{"organisation_id": f.evil, "scope_view": true}, 201, nil},
		{"its member sees it", eve, "GET", "/users/@me/document-shares", nil, 200, wantLen(1)},
		{"evil is deleted", f.mallory, "DELETE", "/organisations/" + f.evil, nil, 204, nil},
		{"a deleted organisation's shares are no one's", eve, "GET", "/users/@me/document-shares", nil, 200, wantLen(0)},
		{"the deleted document's shares", f.alice, "DELETE", c.doc, nil, 200, nil},
		{"a deleted document is not shared", f.alice, "POST", c.doc + "/shares", map[string]any{"organisation_id": f.evil, "scope_view": true}, 404, nil},
	})
}

// TestDocScopeFailsClosed: a scope RequireDoc does not know, or several at
// once, is refused for members and share holders alike.
func TestDocScopeFailsClosed(t *testing.T) {
	t.Parallel()
	owner := Access{Owner: true}
	holder := Access{Shared: DocView | DocEdit | DocBranch | DocFork | DocRevisions | DocExport}
	for _, s := range []DocScope{0, DocView | DocEdit, 1 << 6, 1 << 7} {
		if owner.RequireDoc(s) == nil || holder.RequireDoc(s) == nil {
			t.Errorf("scope %b allowed", s)
		}
	}
	for _, n := range docScopeNames {
		if owner.RequireDoc(n.Scope) != nil || holder.RequireDoc(n.Scope) != nil {
			t.Errorf("%s refused", n.Name)
		}
		if (Access{Shared: DocScope(0xff) &^ n.Scope}).RequireDoc(n.Scope) == nil {
			t.Errorf("%s allowed without it", n.Name)
		}
	}
}

// TestDocumentShareStreamEndsOnRevoke: a share holder's presence stream
// (scope_view) ends with access_revoked once the share is revoked.
func TestDocumentShareStreamEndsOnRevoke(t *testing.T) {
	t.Parallel()
	f := newDocFixture(t)
	e := f.e
	ts := httptest.NewServer(e.srv)
	t.Cleanup(func() { e.srv.StopStreams(); ts.Close() })
	doc := "/documents/" + f.doc
	carol := e.user("carol")
	e.sharesFromAnyone(carol)
	if _, status := openStream(t, e, ts, carol, doc+"/presence/stream"); status != 403 {
		t.Fatalf("stream before any share: %d", status)
	}
	sid := e.must(201, f.alice, "POST", doc+"/shares", map[string]any{"user_id": carol.ID, "scope_view": true}).obj(t)["id"].(string)
	e.must(200, carol, "POST", "/users/@me/document-shares/"+sid+"/accept", nil)
	s, status := openStream(t, e, ts, carol, doc+"/presence/stream")
	if status != 200 {
		t.Fatalf("share holder's stream: %d", status)
	}
	s.next("ready", nil)
	e.must(200, carol, "PUT", doc+"/presence", map[string]any{"session_id": "c1", "status": "online"})
	s.next("presence", func(d map[string]any) bool { return d["user_id"] == carol.ID })
	e.must(204, f.alice, "DELETE", doc+"/shares/"+sid, nil)
	if end := s.next("end", nil); end["reason"] != "access_revoked" {
		t.Fatalf("stream ended with %v", end)
	}
	s.closed()
	e.must(403, carol, "PUT", doc+"/presence", map[string]any{"session_id": "c1", "status": "online"})
}

// TestDocumentShareOnProjectLayer: SHARE_PROJECTS granted on the document's
// project lets a member share that project's documents, not others; the
// organisation-level MANAGE_ORGANISATION shares any.
func TestDocumentShareOnProjectLayer(t *testing.T) {
	t.Parallel()
	f := newDocFixture(t)
	e := f.e
	carol := e.user("carol")
	e.sharesFromAnyone(carol)
	inProject := e.must(201, f.alice, "POST", "/documents", map[string]any{"organisation_id": f.acme, "title": "Project spec", "project_id": f.project}).obj(t)["id"].(string)
	e.must(200, f.alice, "PATCH", "/projects/"+f.project+"/permissions/"+f.bob.ID, map[string]any{"permissions": map[string]any{"SHARE_PROJECTS": "allow"}})
	body := map[string]any{"user_id": carol.ID, "scope_view": true}
	e.run(t, []scenario{
		{"SHARE_PROJECTS on the project shares its document", f.bob, "POST", "/documents/" + inProject + "/shares", body, 201, nil},
		{"and lists its shares", f.bob, "GET", "/documents/" + inProject + "/shares", nil, 200, wantLen(1)},
		{"but not a document outside the project", f.bob, "POST", "/documents/" + f.doc + "/shares", body, 403, nil},
		{"the foreign organisation still cannot", f.mallory, "GET", "/documents/" + inProject + "/shares", nil, 403, nil},
	})
	e.must(200, f.alice, "PUT", "/organisations/"+f.acme+"/permissions/"+f.bob.ID, map[string]any{"type": "user", "permissions": map[string]any{"MANAGE_ORGANISATION": "allow"}})
	e.run(t, []scenario{
		{"MANAGE_ORGANISATION shares any document", f.bob, "POST", "/documents/" + f.doc + "/shares", body, 201, nil},
	})
}

// TestDocumentShareWithProjectShare: a recipient of both a project share
// (VIEW_DOCUMENTS on the project's documents) and a document share holds
// the union: the document share's scopes add to the project share's reads.
func TestDocumentShareWithProjectShare(t *testing.T) {
	t.Parallel()
	f := newDocFixture(t)
	e := f.e
	carol := e.user("carol")
	e.sharesFromAnyone(carol)
	doc := "/documents/" + e.must(201, f.alice, "POST", "/documents", map[string]any{"organisation_id": f.acme, "title": "Project spec", "project_id": f.project}).obj(t)["id"].(string)
	c := content{f: f, doc: doc}
	h0 := c.head(t, "main")
	h1 := c.change(t, "POST", c.rev(h0)+"/clauses", map[string]any{"text": "first"})
	ps := e.must(201, f.alice, "POST", "/projects/"+f.project+"/shares", map[string]any{"user_id": carol.ID}).obj(t)["id"].(string)
	e.must(200, carol, "POST", "/users/@me/project-shares/"+ps+"/accept", nil)
	ds := e.must(201, f.alice, "POST", doc+"/shares", map[string]any{"user_id": carol.ID, "scope_edit": true}).obj(t)["id"].(string)
	e.must(200, carol, "POST", "/users/@me/document-shares/"+ds+"/accept", nil)
	e.run(t, []scenario{
		{"view through the project share", carol, "GET", doc, nil, 200, wantPermissions(true, true)},
		{"an older revision through the project share", carol, "GET", c.rev(h0), nil, 200, nil},
		{"edit through the document share", carol, "POST", c.rev(h1) + "/clauses", map[string]any{"text": "carol"}, 200, nil},
		{"no branch from either", carol, "POST", doc + "/branches", map[string]any{"name": "carols"}, 403, nil},
		{"revoke the document share", f.alice, "DELETE", doc + "/shares/" + ds, nil, 204, nil},
		{"edit ends", carol, "POST", c.rev(h1) + "/clauses", map[string]any{"text": "late"}, 403, nil},
		{"the project share still reads", carol, "GET", doc, nil, 200, wantPermissions(true, false)},
	})
}
