package server

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestRouteAccessDeclared: every authenticated route names its scope and
// what it needs there (issue 34: none is checked by its handler alone;
// a scope the body names is read by the route's check, routebody.go).
func TestRouteAccessDeclared(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, r := range e.srv.routes() {
		key := r.method + " " + r.path
		switch {
		case !r.access.auth:
		case r.access.scope == "":
			t.Errorf("%s: the route names no access (routes.go): give it its scope and permission", key)
		case r.access.load == nil && r.access.check == nil && r.access.scope != "user" && r.access.rule == "":
			t.Errorf("%s: scope %q without a loader says nothing of what the handler checks", key, r.access.scope)
		case r.access.body && r.access.check == nil && r.access.load == nil:
			t.Errorf("%s: reads the body for a check it does not have", key)
		}
	}
}

const permissionTablePath = "../docs/permissions.md"

// permissionTable is docs/permissions.md, made from the route table.
func permissionTable(rs []route) string {
	var b strings.Builder
	b.WriteString(`# Permissions by route

Generated from server/routes.go by TestPermissionTable; do not edit. Rewrite it with
` + "`go test -run TestPermissionTable ./server/ -update`" + `.

Each route names what its caller needs (server/routeaccess.go). The check runs before
the handler reads the request's body: a caller without access is refused (403) whatever
it sends. A path that names nothing is answered by the handler (400 or 404, as the area
decided). **Scope** is what the path's id names; **Needs** the permission the caller
must hold there ("member": membership only; the owner holds everything), then what the
handler adds. The permission engine is described in docs/organisations.md.

| Method | Path | Scope | Needs |
|---|---|---|---|
`)
	rs = slices.Clone(rs)
	slices.SortStableFunc(rs, func(a, b route) int {
		return strings.Compare(a.path+" "+a.method, b.path+" "+b.method)
	})
	for _, r := range rs {
		scope := r.access.scope
		if !r.access.auth {
			scope = "public"
		}
		fmt.Fprintf(&b, "| %s | `%s` | %s | %s |\n", r.method, r.path, scope, strings.ReplaceAll(r.access.needs(), "|", "/"))
	}
	return b.String()
}

// TestPermissionTable: docs/permissions.md is the route table's, fresh.
func TestPermissionTable(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	want := permissionTable(e.srv.routes())
	if *update {
		if err := os.WriteFile(permissionTablePath, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile(permissionTablePath)
	if err != nil {
		t.Fatalf("%v (write it with -update)", err)
	}
	if string(got) != want {
		t.Errorf("%s is stale: rewrite it with go test -run TestPermissionTable ./server/ -update", permissionTablePath)
	}
}

// routeKeyOf is an OpenAPI operation's key ("POST /a/{id}") as the route
// table writes it ("POST /a/:id").
func routeKeyOf(key string) string {
	return pathParam.ReplaceAllStringFunc(key, func(p string) string { return ":" + p[1:len(p)-1] })
}

// routeAccessByKey is the route table's access by "METHOD /path".
func routeAccessByKey(s *Server) map[string]access {
	m := map[string]access{}
	for _, r := range s.routes() {
		m[r.method+" "+r.path] = r.access
	}
	return m
}

// refusedFirst (issue 35): a caller without access to the scope a route's
// path names who sends a malformed body is refused as such (403, or the
// 404 of a route that hides what the caller may not see), never told what
// is wrong with the body: the route's check runs before the handler reads
// it. Routes on the caller's own rows have no such caller, and a body
// that cannot be read names no scope where the body names it (scopeInBody).
func (f *bodyFixture) refusedFirst(t *testing.T, op bodyOp, path string, acc access, outsider *testUser) {
	t.Helper()
	if !acc.auth || acc.load == nil || acc.scopeInBody {
		return
	}
	for _, body := range []string{`{"unterminated": `, `[1, 2]`} {
		req := httptest.NewRequest(op.method, path, strings.NewReader(body))
		req.Header.Set("Content-Type", op.mediaType)
		req.Header.Set("Authorization", "Bearer "+f.e.bearer(outsider))
		resp := f.e.serve(req)
		if resp.Status != http.StatusForbidden && resp.Status != http.StatusNotFound {
			t.Errorf("%s: an outsider's malformed body %s answered %d, want the refusal (403/404): %.200s", op.key, body, resp.Status, resp.Body)
		}
	}
}

// unaudited are the write routes that write no audit entry, each with why.
var unaudited = map[string]string{
	"POST /auth/register":         "no caller yet: an account is made; the users table keeps when",
	"POST /oauth/authorize":       "a sign-in form: no caller yet",
	"POST /oauth/token":           "a sign-in: no caller yet, and nothing of an organisation changes",
	"POST /oauth/revoke":          "ends a token of the caller's own, by the token: no signed-in caller",
	"POST /auth/forgot":           "no caller: mails a reset link, the outbox keeps it",
	"POST /auth/reset":            "no caller: the reset token is the proof; the user row keeps the change",
	"DELETE /users/@me":           "the account and its rows are gone; an entry would name a deleted actor (docs/users.md)",
	"PUT /documents/:id/presence": "presence is a heartbeat kept in memory, no row changes",
}

// audited (issue 35): a write route's 2xx answer left an audit entry of
// that route, unless unaudited says why not.
func audited(t *testing.T, e *testEnv, key string, before int) {
	t.Helper()
	if _, ok := unaudited[key]; ok {
		return
	}
	if after := auditCount(t, e, key); after <= before {
		t.Errorf("%s: answered 2xx but wrote no audit entry (add one, or name it in unaudited with why)", key)
	}
}

func auditCount(t *testing.T, e *testEnv, key string) int {
	t.Helper()
	var n int
	if err := e.store.Reader.QueryRow(`SELECT count(*) FROM audit_log WHERE action = ?`, key).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// apiKeyOf is a route's key as the OpenAPI description writes it.
func apiKeyOf(key string) string {
	return regexp.MustCompile(`:(\w+)`).ReplaceAllString(key, "{$1}")
}

// bodilessWrites runs, after the body check, every write route that takes
// no body, as the fixture's owner, and asks each 2xx for its audit entry
// (issue 35). Deletions run last, the deepest paths first, so the rows
// they remove are not needed again; the organisation's own deletion ends it.
func (f *bodyFixture) bodilessWrites(t *testing.T, callers map[string]*testUser) {
	t.Helper()
	var writes []route
	for _, r := range f.e.srv.routes() {
		key := r.method + " " + r.path
		if !r.access.auth || r.method == http.MethodGet || f.ran[apiKeyOf(key)] {
			continue
		}
		if _, ok := bodyExceptions[apiKeyOf(key)]; ok {
			continue
		}
		writes = append(writes, r)
	}
	slices.SortStableFunc(writes, func(a, b route) int {
		da, db := a.method == http.MethodDelete, b.method == http.MethodDelete
		orgA, orgB := a.path == "/organisations/:id" && da, b.path == "/organisations/:id" && db
		switch {
		case orgA != orgB && orgA:
			return 1
		case orgA != orgB:
			return -1
		case da != db && da:
			return 1
		case da != db:
			return -1
		case da:
			return strings.Count(b.path, "/") - strings.Count(a.path, "/")
		}
		return 0
	})
	// The laptop's exchange moves the hub's clock to the wall clock (a
	// signed request's time): last of the non-deletions, so the others'
	// invites and codes do not expire under them.
	if i := slices.IndexFunc(writes, func(r route) bool { return r.method+" "+r.path == syncNowKey }); i >= 0 {
		r := writes[i]
		writes = slices.Delete(writes, i, i+1)
		at := slices.IndexFunc(writes, func(r route) bool { return r.method == http.MethodDelete })
		if at < 0 {
			at = len(writes)
		}
		writes = slices.Insert(writes, at, r)
	}
	var unreached []string
	for _, r := range writes {
		key := r.method + " " + r.path
		if key == "DELETE /users/@me" {
			continue // the owner's account is the fixture's; its deletion is tested in users_test.go
		}
		path, missing := f.fill(apiKeyOf(r.path))
		if missing != "" {
			unreached = append(unreached, key+": "+missing)
			continue
		}
		u := callers[apiKeyOf(key)]
		if u == nil {
			u = f.owner
		}
		on := f.e
		if key == syncNowKey {
			// A hub does not start exchanges (409): a laptop paired with
			// it, a clone of the organisation, does.
			_, on, u = laptopOf(t, f.e, f.owner, f.org)
		}
		before := auditCount(t, on, key)
		resp := on.do(u, r.method, path, nil)
		if resp.Status < 200 || resp.Status > 299 {
			unreached = append(unreached, fmt.Sprintf("%s: %d %.120s", key, resp.Status, resp.Body))
			continue
		}
		if on != f.e {
			waitSync(t, on, u, f.org)
		}
		audited(t, on, key, before)
	}
	got := map[string]bool{}
	for _, u := range unreached {
		key, _, _ := strings.Cut(u, ": ")
		got[key] = true
		if _, ok := auditNotRun[key]; !ok {
			t.Errorf("write route not run to 2xx, so its audit entry is unproven (fix the fixture, or name it in auditNotRun): %s", u)
		}
	}
	for k := range auditNotRun {
		if !got[k] {
			t.Errorf("%s now runs to 2xx: take it off auditNotRun", k)
		}
	}
}

const syncNowKey = "POST /organisations/:id/sync/now"

// auditNotRun are the write routes bodilessWrites cannot bring to a 2xx
// in its one organisation, so their audit entry is proven elsewhere or
// not yet: a list that only shrinks.
var auditNotRun = map[string]string{
	"POST /users/@me/verify-phone-number":              "needs a phone number and a texted code",
	"POST /users/@me/qr/scan":                          "answers 501: not implemented",
	"POST /users/@me/document-shares/:id/accept":       "needs a share addressed to the caller: shareaudit_test.go",
	"POST /users/@me/document-shares/:id/reject":       "needs a share addressed to the caller: shareaudit_test.go",
	"POST /users/@me/project-shares/:id/accept":        "needs a share addressed to the caller: shareaudit_test.go",
	"POST /users/@me/project-shares/:id/reject":        "needs a share addressed to the caller: shareaudit_test.go",
	"POST /users/@me/fleet-shares/:id/accept":          "needs a share addressed to the caller: shareaudit_test.go",
	"POST /users/@me/fleet-shares/:id/reject":          "needs a share addressed to the caller: shareaudit_test.go",
	"POST /organisations/:id/domains/:domain/verify":   "needs a DNS TXT record",
	"PUT /workgroups/:id/teams/:team/members/:user":    "the fixture's member is in the team already",
	"POST /integrations/:id/sync":                      "needs a delivery URL",
	"POST /documents/:id/merge-requests/:number/close": "the fixture's merge request is merged already",
	"DELETE /users/@me/organisations/:id":              "the fixture's caller owns the organisation",
	"DELETE /fleets/:id/shares/:share":                 "no share id source yet",
	"DELETE /projects/:id/shares/:share":               "no share id source yet",
	"DELETE /api/prefixes/:id":                         "an enabled prefix is not deleted",
	"DELETE /api/assettype/:id":                        "the type still has assets",
	"DELETE /api/assetlogs/:id":                        "its asset group is deleted first",
	"DELETE /toolboxes/:id/sections/:section":          "the fixture's talk is held by then, and a held talk does not change",
	"DELETE /toolboxes/:id/topics/:topic":              "the fixture's talk is held by then, and a held talk does not change",
	"DELETE /team/:id":                                 "its workgroup is deleted first",
}
