package server

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
)

// checkedByHand are the authenticated routes whose handlers still check
// access alone, not on the route (issue 34). The list only shrinks: a route
// moved onto the table leaves it, and a new route starts on the table.
var checkedByHand = map[string]bool{
	"GET /users/@me/work-items/:id/subscriptions": true,
	"GET /users/@me/toolboxes/:id":                true,
	"POST /users/@me/toolboxes/:id/sign":          true,
	"GET /users/@me/witness/:id":                  true,
	"POST /users/@me/witness/:id/sign":            true,
	"GET /users/@me/inductions/:id":               true,
	"POST /users/@me/inductions/:id/records":      true,
	"GET /induction-records/:id":                  true,
	"GET /invites/:code":                          true,
	"PATCH /invites/:code":                        true,
	"POST /invites/:code":                         true,
	"DELETE /invites/:code":                       true,
	"GET /fleets/:id/shares":                      true,
	"DELETE /fleets/:id/shares/:share":            true,
	"GET /projects/:id/shares":                    true,
	"DELETE /projects/:id/shares/:share":          true,
	"POST /documents":                             true,
	"GET /documents/:id/shares":                   true,
	"DELETE /documents/:id/shares/:share":         true,
}

// TestRouteAccessDeclared: every authenticated route names its scope and
// permission, or is one of checkedByHand, which names only such routes.
func TestRouteAccessDeclared(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	seen := map[string]bool{}
	for _, r := range e.srv.routes() {
		key := r.method + " " + r.path
		seen[key] = true
		switch {
		case !r.access.auth:
		case r.access.byHand && !checkedByHand[key]:
			t.Errorf("%s: the route names no access (routes.go): give it its scope and permission", key)
		case r.access.byHand:
		case !r.access.byHand && checkedByHand[key]:
			t.Errorf("%s: now on the table; take it off checkedByHand", key)
		case !r.access.byHand && r.access.scope == "":
			t.Errorf("%s: an access without a scope", key)
		case r.access.load == nil && r.access.check == nil && r.access.scope != "user" && r.access.rule == "":
			t.Errorf("%s: scope %q without a loader says nothing of what the handler checks", key, r.access.scope)
		}
	}
	for k := range checkedByHand {
		if !seen[k] {
			t.Errorf("checkedByHand names %s, which is no route", k)
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
		} else if r.access.byHand {
			scope = "?"
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
