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
	"GET /oauth/userinfo":                                      true,
	"GET /users/@me":                                           true,
	"PATCH /users/@me":                                         true,
	"DELETE /users/@me":                                        true,
	"GET /internal/users-by-id/:id":                            true,
	"GET /users/lookup":                                        true,
	"POST /users/@me/verify-phone-number":                      true,
	"GET /users/@me/emails":                                    true,
	"POST /users/@me/emails":                                   true,
	"GET /users/@me/emails/:id":                                true,
	"PATCH /users/@me/emails/:id":                              true,
	"DELETE /users/@me/emails/:id":                             true,
	"POST /users/@me/emails/:id/verify":                        true,
	"PATCH /users/@me/organisations/:id/email":                 true,
	"DELETE /users/@me/organisations/:id":                      true,
	"PUT /users/@me/qr/token":                                  true,
	"POST /users/@me/qr/scan":                                  true,
	"GET /users/@me/document-shares":                           true,
	"POST /users/@me/document-shares/:id/accept":               true,
	"POST /users/@me/document-shares/:id/reject":               true,
	"GET /users/@me/work-items":                                true,
	"GET /users/@me/notifications":                             true,
	"PATCH /users/@me/notifications/:id":                       true,
	"POST /users/@me/notifications/read-all":                   true,
	"GET /users/@me/for-you":                                   true,
	"GET /users/@me/fleets":                                    true,
	"GET /users/@me/shares":                                    true,
	"GET /users/@me/fleet-shares":                              true,
	"GET /users/@me/project-shares":                            true,
	"POST /users/@me/project-shares/:id/accept":                true,
	"POST /users/@me/project-shares/:id/reject":                true,
	"POST /users/@me/fleet-shares/:id/accept":                  true,
	"POST /users/@me/fleet-shares/:id/reject":                  true,
	"GET /users/@me/fleets/:id/subscriptions":                  true,
	"POST /users/@me/fleets/:id/subscriptions":                 true,
	"PATCH /users/@me/fleets/:id/subscriptions/:subscription":  true,
	"DELETE /users/@me/fleets/:id/subscriptions/:subscription": true,
	"GET /users/@me/work-items/:id/subscriptions":              true,
	"GET /users/@me/toolboxes/:id":                             true,
	"POST /users/@me/toolboxes/:id/sign":                       true,
	"GET /users/@me/witness/:id":                               true,
	"POST /users/@me/witness/:id/sign":                         true,
	"GET /users/@me/inductions":                                true,
	"GET /users/@me/inductions/:id":                            true,
	"GET /inductions/:id":                                      true,
	"PATCH /inductions/:id":                                    true,
	"GET /inductions/:id/revisions":                            true,
	"GET /inductions/:id/revisions/:hash":                      true,
	"GET /inductions/:id/attachments/:hash":                    true,
	"POST /inductions/:id/users/:user":                         true,
	"DELETE /inductions/:id/users/:user":                       true,
	"GET /inductions/:id/users/:user":                          true,
	"GET /inductions/:id/users":                                true,
	"POST /users/@me/inductions/:id/records":                   true,
	"GET /inductions/:id/revisions/:hash/records":              true,
	"GET /inductions/:id/revisions/:hash/records/export-csv":   true,
	"GET /inductions/:id/revisions/:hash/records/export-xlsx":  true,
	"GET /induction-records/:id":                               true,
	"GET /toolboxes/:id":                                       true,
	"PATCH /toolboxes/:id":                                     true,
	"POST /toolboxes/:id/conduct":                              true,
	"POST /toolboxes/:id/archive":                              true,
	"POST /toolboxes/:id/unarchive":                            true,
	"POST /toolboxes/:id/sections":                             true,
	"GET /toolboxes/:id/sections/:section":                     true,
	"PATCH /toolboxes/:id/sections/:section":                   true,
	"DELETE /toolboxes/:id/sections/:section":                  true,
	"POST /toolboxes/:id/topics":                               true,
	"GET /toolboxes/:id/topics/:topic":                         true,
	"PATCH /toolboxes/:id/topics/:topic":                       true,
	"DELETE /toolboxes/:id/topics/:topic":                      true,
	"POST /toolboxes/:id/sign":                                 true,
	"GET /toolboxes/:id/report":                                true,
	"POST /toolboxes/:id/schedules":                            true,
	"GET /schedules/:id":                                       true,
	"PATCH /schedules/:id":                                     true,
	"DELETE /schedules/:id":                                    true,
	"PUT /schedules/:id/invitees/:user":                        true,
	"DELETE /schedules/:id/invitees/:user":                     true,
	"POST /schedules/:id/check-in":                             true,
	"POST /schedules/:id/decline":                              true,
	"POST /organisations":                                      true,
	"GET /users/@me/organisations":                             true,
	"GET /workgroups/:id":                                      true,
	"PATCH /workgroups/:id":                                    true,
	"DELETE /workgroups/:id":                                   true,
	"GET /workgroups/:id/teams":                                true,
	"POST /workgroups/:id/teams":                               true,
	"PUT /workgroups/:id/teams/:team/members/:user":            true,
	"PATCH /workgroups/:id/teams/:team/members/:user":          true,
	"DELETE /workgroups/:id/teams/:team/members/:user":         true,
	"GET /team/:id":                                            true,
	"PATCH /team/:id":                                          true,
	"DELETE /team/:id":                                         true,
	"GET /team/:id/members":                                    true,
	"GET /systems/:id":                                         true,
	"PATCH /systems/:id":                                       true,
	"GET /systems/:id/subsystems":                              true,
	"GET /api/prefixes/:id":                                    true,
	"PATCH /api/prefixes/:id":                                  true,
	"DELETE /api/prefixes/:id":                                 true,
	"GET /locations/:id":                                       true,
	"PATCH /locations/:id":                                     true,
	"POST /locations/:id/sub-locations":                        true,
	"GET /locations/:id/sub-locations":                         true,
	"GET /locations/:id/inductions":                            true,
	"PUT /locations/:id/inductions/:induction":                 true,
	"DELETE /locations/:id/inductions/:induction":              true,
	"GET /api/disciplines/:id":                                 true,
	"PATCH /api/disciplines/:id":                               true,
	"GET /work-item-types/:id":                                 true,
	"PATCH /work-item-types/:id":                               true,
	"GET /workitems/:id":                                       true,
	"PATCH /workitems/:id":                                     true,
	"POST /workitems/:id/schedules":                            true,
	"PUT /workitems/:id/subscription":                          true,
	"DELETE /workitems/:id/subscription":                       true,
	"GET /workitems/:id/witnesses":                             true,
	"GET /integrations/:id":                                    true,
	"PATCH /integrations/:id":                                  true,
	"POST /integrations/:id/sync":                              true,
	"GET /integrations/:id/deliveries":                         true,
	"GET /roles/:id":                                           true,
	"PATCH /roles/:id":                                         true,
	"DELETE /roles/:id":                                        true,
	"GET /roles/:id/members":                                   true,
	"GET /invites/:code":                                       true,
	"PATCH /invites/:code":                                     true,
	"POST /invites/:code":                                      true,
	"DELETE /invites/:code":                                    true,
	"GET /fleets/:id":                                          true,
	"PATCH /fleets/:id":                                        true,
	"DELETE /fleets/:id":                                       true,
	"GET /fleets/:id/permissions":                              true,
	"PATCH /fleets/:id/permissions/:roleId":                    true,
	"POST /fleets/:id/shares":                                  true,
	"GET /fleets/:id/shares":                                   true,
	"DELETE /fleets/:id/shares/:share":                         true,
	"GET /api/assetstatuses/:id":                               true,
	"PATCH /api/assetstatuses/:id":                             true,
	"DELETE /api/assetstatuses/:id":                            true,
	"GET /api/assetzones/:id":                                  true,
	"PATCH /api/assetzones/:id":                                true,
	"DELETE /api/assetzones/:id":                               true,
	"GET /api/assetfields/:id":                                 true,
	"PATCH /api/assetfields/:id":                               true,
	"DELETE /api/assetfields/:id":                              true,
	"GET /api/assettype/:id":                                   true,
	"PATCH /api/assettype/:id":                                 true,
	"DELETE /api/assettype/:id":                                true,
	"PUT /api/assettype/:id/asset-fields/:fieldId":             true,
	"DELETE /api/assettype/:id/asset-fields/:fieldId":          true,
	"PUT /api/assettype/:id/asset-zones/:zoneId":               true,
	"DELETE /api/assettype/:id/asset-zones/:zoneId":            true,
	"GET /asset-subscriptions/:id":                             true,
	"PATCH /asset-subscriptions/:id":                           true,
	"GET /api/assets/:id":                                      true,
	"PATCH /api/assets/:id":                                    true,
	"PATCH /api/assets/:id/fields":                             true,
	"GET /api/assetgroups/:id":                                 true,
	"PATCH /api/assetgroups/:id":                               true,
	"DELETE /api/assetgroups/:id":                              true,
	"PATCH /api/assetgroups/:id/fields":                        true,
	"PUT /api/assetgroups/:id/assets/:assetId":                 true,
	"PATCH /api/assetgroups/:id/assets/:assetId":               true,
	"DELETE /api/assetgroups/:id/assets/:assetId":              true,
	"POST /api/assetgroups/:id/logs":                           true,
	"GET /api/assetgroups/:id/logs":                            true,
	"GET /api/assetlogs/:id":                                   true,
	"PATCH /api/assetlogs/:id":                                 true,
	"DELETE /api/assetlogs/:id":                                true,
	"PUT /api/assetlogs/:id/attachment":                        true,
	"GET /api/assetlogs/:id/attachment":                        true,
	"GET /projects/:id":                                        true,
	"PATCH /projects/:id":                                      true,
	"PATCH /projects/:id/permissions/:roleId":                  true,
	"GET /projects/:id/permissions":                            true,
	"POST /projects/:id/shares":                                true,
	"GET /projects/:id/shares":                                 true,
	"DELETE /projects/:id/shares/:share":                       true,
	"POST /projects/:id/milestones":                            true,
	"GET /projects/:id/milestones":                             true,
	"GET /milestones/:id":                                      true,
	"PATCH /milestones/:id":                                    true,
	"POST /projects/:id/packages":                              true,
	"GET /projects/:id/packages":                               true,
	"GET /packages/:id":                                        true,
	"PATCH /packages/:id":                                      true,
	"PATCH /packages/:id/permissions/:roleId":                  true,
	"GET /packages/:id/permissions":                            true,
	"GET /document-types/:id":                                  true,
	"PATCH /document-types/:id":                                true,
	"DELETE /document-types/:id":                               true,
	"GET /document-fields/:id":                                 true,
	"PATCH /document-fields/:id":                               true,
	"POST /documents":                                          true,
	"GET /documents/:id":                                       true,
	"PATCH /documents/:id":                                     true,
	"DELETE /documents/:id":                                    true,
	"POST /documents/:id/restore":                              true,
	"POST /documents/:id":                                      true,
	"PUT /documents/:id/bookmark":                              true,
	"DELETE /documents/:id/bookmark":                           true,
	"GET /documents/:id/shares":                                true,
	"POST /documents/:id/shares":                               true,
	"PATCH /documents/:id/shares/:share":                       true,
	"DELETE /documents/:id/shares/:share":                      true,
	"GET /documents/:id/branches":                              true,
	"POST /documents/:id/branches":                             true,
	"GET /documents/:id/branches/:name":                        true,
	"PATCH /documents/:id/branches/:name":                      true,
	"DELETE /documents/:id/branches/:name":                     true,
	"GET /documents/:id/revisions":                             true,
	"GET /documents/:id/revisions/:hash":                       true,
	"GET /documents/:id/revisions/:hash/diff/:other":           true,
	"GET /documents/:id/revisions/:hash/sheets":                true,
	"POST /documents/:id/revisions/:hash/sheets":               true,
	"PATCH /documents/:id/revisions/:hash/sheets/:sheet":       true,
	"DELETE /documents/:id/revisions/:hash/sheets/:sheet":      true,
	"GET /documents/:id/revisions/:hash/columns":               true,
	"POST /documents/:id/revisions/:hash/columns":              true,
	"PATCH /documents/:id/revisions/:hash/columns/:column":     true,
	"DELETE /documents/:id/revisions/:hash/columns/:column":    true,
	"GET /documents/:id/revisions/:hash/clauses":               true,
	"POST /documents/:id/revisions/:hash/clauses":              true,
	"PATCH /documents/:id/revisions/:hash/clauses/:clause":     true,
	"DELETE /documents/:id/revisions/:hash/clauses/:clause":    true,
	"PATCH /documents/:id/revisions/:hash/fields":              true,
	"PATCH /documents/:id/revisions/:hash":                     true,
	"GET /documents/:id/revisions/:hash/export.docx":           true,
	"GET /documents/:id/revisions/:hash/export.xlsx":           true,
	"POST /documents/:id/merge-requests":                       true,
	"GET /documents/:id/merge-requests":                        true,
	"GET /documents/:id/merge-requests/:number":                true,
	"POST /documents/:id/merge-requests/:number/merge":         true,
	"POST /documents/:id/merge-requests/:number/close":         true,
	"PUT /documents/:id/presence":                              true,
	"GET /documents/:id/presence":                              true,
	"GET /documents/:id/presence/stream":                       true,
	"POST /documents/:id/tags":                                 true,
	"GET /documents/:id/tags":                                  true,
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
