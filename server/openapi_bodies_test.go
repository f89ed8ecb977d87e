package server

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"workspace/db"

	"github.com/pb33f/libopenapi"
	"github.com/pb33f/libopenapi/datamodel/high/base"
	v3 "github.com/pb33f/libopenapi/datamodel/high/v3"
)

// The schema-side check of the description (issue 33): for every
// operation with a JSON or form body, the smallest body its schema accepts
// (required fields only, first enum values, values meeting formats and
// lengths) must not be refused with a 400 naming a field, which would be a
// rule the schema should state; and without any one of its required fields
// the body must be refused with 400. Path parameters and the ids a body
// names are real objects of one organisation the caller owns, most made by
// the creating operations of the same run (paramSources, bodyIDSources).

// bodyExceptions are the operations the check leaves out or lets pass,
// each with why. Keep it short: an entry is a rule the description does not
// state.
var bodyExceptions = map[string]string{
	// Bodies of files: the generator makes JSON and form bodies only; the
	// handler tests of each send real files.
	"PUT /api/assetlogs/{id}/attachment":     "a multipart file",
	"POST /organisations/{id}/assets/import": "a CSV or XLSX file",
	"PUT /organisations/{id}/banner":         "a multipart image",
	"PUT /organisations/{id}/icon":           "a multipart image",
	"PUT /organisations/{id}/logo":           "a multipart image",
	// The browser's sign-in form answers pages, and which parameters it
	// needs depends on action (sign in or register) and the client.
	"POST /oauth/authorize": "a browser form answered with pages",
	"POST /auth/forgot":     "a browser form answered with pages",
	"POST /auth/reset":      "a browser form answered with pages; needs a mailed reset token",
	// RFC 6749: which parameters a grant needs depends on grant_type, and
	// the errors are RFC 6749's (invalid_request, invalid_grant), naming no
	// field.
	"POST /oauth/token": "each grant needs its own parameters (RFC 6749)",
	// A site node's own requests (docs/sync.md): a real pairing code and
	// Ed25519 key, then every request signed by it; sync_test.go and
	// TestSyncTwoProcesses (package main) send them for real.
	"POST /sync/pair":                 "needs a pairing code an owner made and an Ed25519 public key",
	"POST /sync/exchange":             "signed by a paired node's key (Workspace-Sync-* headers)",
	"POST /sync/objects/missing":      "signed by a paired node's key (Workspace-Sync-* headers)",
	"PUT /sync/objects/{kind}/{hash}": "signed by a paired node's key; the body is the object the hash names",
}

// paramSources says where each path parameter's value comes from, keyed by
// the path up to and including it: "org" (the fixture organisation),
// "member" (a member's user id), "me" (the caller's user id), or the key
// of the operation whose 2xx answer holds it, with "#field" naming the
// answer's field when it is not "id".
var paramSources = map[string]string{
	"/organisations/{id}":                                 "org",
	"/admin/organisations/{id}":                           "org",
	"/users/@me/organisations/{id}":                       "org",
	"/organisations/{id}/members/{user}":                  "member",
	"/organisations/{id}/bans/{user}":                     "banned",
	"/organisations/{id}/domains/{domain}":                "POST /organisations/{id}/domains",
	"/organisations/{id}/sync/nodes/{node}":               "sync node",
	"/organisations/{id}/sync-conflicts/{conflict}":       "sync conflict",
	"/organisations/{id}/permissions/{target}":            "role",
	"/users/@me/emails/{id}":                              "POST /users/@me/emails",
	"/users/@me/notifications/{id}":                       "notification",
	"/users/@me/fleets/{id}":                              "POST /organisations/{id}/fleets",
	"/users/@me/fleets/{id}/subscriptions/{subscription}": "POST /users/@me/fleets/{id}/subscriptions",
	"/users/@me/toolboxes/{id}":                           "POST /organisations/{id}/toolboxes",
	"/users/@me/witness/{id}":                             "POST /organisations/{id}/workitems",
	"/users/@me/inductions/{id}":                          "POST /organisations/{id}/inductions",
	"/inductions/{id}":                                    "POST /organisations/{id}/inductions",
	"/inductions/{id}/users/{user}":                       "member",
	"/toolboxes/{id}":                                     "POST /organisations/{id}/toolboxes",
	"/toolboxes/{id}/sections/{section}":                  "POST /toolboxes/{id}/sections",
	"/toolboxes/{id}/topics/{topic}":                      "POST /toolboxes/{id}/topics",
	"/schedules/{id}":                                     "POST /organisations/{id}/schedules",
	"/workgroups/{id}":                                    "POST /organisations/{id}/workgroups",
	"/workgroups/{id}/teams/{team}":                       "POST /workgroups/{id}/teams",
	"/workgroups/{id}/teams/{team}/members/{user}":        "member",
	"/team/{id}":                                          "POST /workgroups/{id}/teams",
	"/systems/{id}":                                       "POST /organisations/{id}/systems",
	"/api/prefixes/{id}":                                  "POST /organisations/{id}/prefixes",
	"/locations/{id}":                                     "POST /organisations/{id}/locations",
	"/sub-locations/{id}":                                 "POST /locations/{id}/sub-locations",
	"/api/disciplines/{id}":                               "POST /organisations/{id}/disciplines",
	"/work-item-types/{id}":                               "POST /organisations/{id}/work-item-types",
	"/workitems/{id}":                                     "POST /organisations/{id}/workitems",
	"/integrations/{id}":                                  "POST /organisations/{id}/integrations",
	"/roles/{id}":                                         "POST /organisations/{id}/roles",
	"/invites/{code}":                                     "POST /organisations/{id}/invites#code",
	"/fleets/{id}":                                        "POST /organisations/{id}/fleets",
	"/fleets/{id}/permissions/{roleId}":                   "role",
	"/api/assetstatuses/{id}":                             "POST /organisations/{id}/asset-statuses",
	"/api/assetzones/{id}":                                "POST /organisations/{id}/asset-zones",
	"/api/assetfields/{id}":                               "POST /organisations/{id}/asset-fields",
	"/api/assettype/{id}":                                 "POST /organisations/{id}/asset-types",
	"/asset-subscriptions/{id}":                           "POST /organisations/{id}/asset-subscriptions",
	"/api/assets/{id}":                                    "POST /organisations/{id}/assets",
	"/api/assetgroups/{id}":                               "POST /organisations/{id}/asset-groups",
	"/api/assetgroups/{id}/assets/{assetId}":              "POST /organisations/{id}/assets",
	"/api/assetlogs/{id}":                                 "POST /api/assetgroups/{id}/logs",
	"/projects/{id}":                                      "POST /organisations/{id}/projects",
	"/projects/{id}/permissions/{roleId}":                 "role",
	"/milestones/{id}":                                    "POST /projects/{id}/milestones",
	"/packages/{id}":                                      "POST /projects/{id}/packages",
	"/packages/{id}/permissions/{roleId}":                 "role",
	"/document-types/{id}":                                "POST /organisations/{id}/document-types",
	"/document-fields/{id}":                               "POST /organisations/{id}/document-fields",
	"/documents/{id}":                                     "POST /documents",
	"/documents/{id}/branches/{name}":                     "POST /documents/{id}/branches#name",
	"/documents/{id}/revisions/{hash}":                    "revision",
	"/documents/{id}/revisions/{hash}/sheets/{sheet}":     "sheet",
	"/documents/{id}/revisions/{hash}/columns/{column}":   "column",
	"/documents/{id}/revisions/{hash}/clauses/{clause}":   "clause",
	"/documents/{id}/merge-requests/{number}":             "POST /documents/{id}/merge-requests#number",
	"/documents/{id}/shares/{share}":                      "POST /documents/{id}/shares",
	// The writes without a body (routeaccess_test.go bodilessWrites).
	"/admin/users/{id}":                               "member",
	"/schedules/{id}/invitees/{user}":                 "member",
	"/locations/{id}/inductions/{induction}":          "POST /organisations/{id}/inductions",
	"/organisations/{id}/members/{user}/roles/{role}": "role",
	"/api/assettype/{id}/asset-fields/{fieldId}":      "POST /organisations/{id}/asset-fields",
	"/api/assettype/{id}/asset-zones/{zoneId}":        "POST /organisations/{id}/asset-zones",
}

// bodyIDSources says which object a required id field of a body names:
// "METHOD /path field" for one operation, or "field" for every one.
var bodyIDSources = map[string]string{
	"organisation_id":         "org",
	"user_id":                 "member",
	"type_id":                 "POST /organisations/{id}/asset-types",
	"POST /documents type_id": "POST /organisations/{id}/document-types",
	"location_id":             "POST /organisations/{id}/locations",
	"project_id":              "POST /organisations/{id}/projects",
	"role_id":                 "role",
	"fleet_id":                "POST /organisations/{id}/fleets",
	"asset_id":                "POST /organisations/{id}/assets",
	"toolbox_id":              "POST /organisations/{id}/toolboxes",
	"induction_id":            "POST /organisations/{id}/inductions",
	"workgroup_id":            "POST /organisations/{id}/workgroups",
	"sheet_id":                "sheet",
	"column_id":               "column",
	"clause_id":               "clause",
	"field_id":                "POST /organisations/{id}/document-fields",
	"question_id":             "question",
	"notification_email_id":   "email",
	"POST /organisations/{id}/asset-groups type_id":   "group type",
	"POST /organisations/{id}/workitems type_id":      "POST /organisations/{id}/work-item-types",
	"POST /projects/{id}/shares organisation_id":      "other org",
	"POST /fleets/{id}/shares organisation_id":        "other org",
	"POST /documents/{id}/shares organisation_id":     "other org",
	"PATCH /organisations/{id}/roles id":              "role",
	"POST /documents/{id}/merge-requests from_branch": "POST /documents/{id}/branches#name",
	"POST /documents/{id}/merge-requests to_branch":   "=main",
	"POST /documents/{id}/tags revision":              "revision",
	"POST /users/@me/toolboxes/{id}/sign jwt":         "toolbox sign token",
	"POST /users/@me/witness/{id}/sign jwt":           "witness sign token",
}

// bodyFixture holds the objects the check's requests name.
type bodyFixture struct {
	e       *testEnv
	owner   *testUser
	org     string
	ids     map[string]string         // "org", "member", "role", ...
	answers map[string]map[string]any // an operation's last 2xx answer
	after   map[string]func(map[string]any)
	lazy    map[string]func() string // values made when first asked for ("" until they can be)
	ran     map[string]bool
	// outsider owns another organisation: a caller with no access here.
	outsider *testUser
}

// value is the value a source names, or "" while it is not made yet.
func (f *bodyFixture) value(src string) string {
	if v, ok := f.ids[src]; ok {
		return v
	}
	if v, ok := strings.CutPrefix(src, "="); ok {
		return v
	}
	if mk := f.lazy[src]; mk != nil {
		return mk()
	}
	op, field, ok := strings.Cut(src, "#")
	if !ok {
		field = "id"
	}
	a := f.answers[op]
	if a == nil {
		return ""
	}
	switch v := a[field].(type) {
	case string:
		return v
	case float64:
		return fmt.Sprint(int64(v))
	}
	return ""
}

var pathParam = regexp.MustCompile(`\{[A-Za-z]+\}`)

// fill puts real values in a path's parameters; missing names the first
// parameter without one yet.
func (f *bodyFixture) fill(path string) (filled, missing string) {
	out := path
	for _, loc := range pathParam.FindAllStringIndex(path, -1) {
		prefix := path[:loc[1]]
		src, ok := paramSources[prefix]
		if !ok {
			return "", prefix + " (no source)"
		}
		v := f.value(src)
		if v == "" {
			return "", prefix + " (" + src + " not made)"
		}
		out = strings.Replace(out, path[loc[0]:loc[1]], url.PathEscape(v), 1)
	}
	return out, ""
}

// bodyGen makes the smallest body a schema accepts.
type bodyGen struct {
	f       *bodyFixture
	key     string // the operation's "METHOD /path"
	missing string // an id field no source has made yet
}

func schemaRefName(p *base.SchemaProxy) string {
	r := p.GetReference()
	return r[strings.LastIndex(r, "/")+1:]
}

func (g *bodyGen) minimal(name string, p *base.SchemaProxy) any {
	s := p.Schema()
	if s == nil {
		return nil
	}
	src, ok := bodyIDSources[g.key+" "+name]
	if !ok {
		src, ok = bodyIDSources[name]
	}
	isID := slices.Contains([]string{"Id", "IdIn", "NullableId", "NullableIdIn"}, schemaRefName(p))
	switch {
	case ok:
		v := g.f.value(src)
		if v == "" {
			g.missing = name + " (" + src + " not made)"
		}
		return v
	case isID:
		g.missing = name + " (no source)"
		return "0"
	}
	if s.Const != nil {
		var v any
		_ = s.Const.Decode(&v)
		return v
	}
	if len(s.Enum) > 0 {
		var v any
		_ = s.Enum[0].Decode(&v)
		return v
	}
	if len(s.OneOf) > 0 && !isObjectSchema(s) {
		return g.minimal(name, firstNonNull(s.OneOf))
	}
	if len(s.AnyOf) > 0 && !isObjectSchema(s) {
		return g.minimal(name, firstNonNull(s.AnyOf))
	}
	typ := ""
	for _, t := range s.Type {
		if t != "null" {
			typ = t
			break
		}
	}
	if typ == "" && isObjectSchema(s) {
		typ = "object"
	}
	switch typ {
	case "object":
		props, required := objectParts(s)
		out := map[string]any{}
		for _, r := range required {
			if sub := props[r]; sub != nil {
				out[r] = g.minimal(r, sub)
			} else {
				out[r] = ""
			}
		}
		return out
	case "array":
		out := []any{}
		if s.MinItems != nil && s.Items != nil && s.Items.IsA() {
			for range *s.MinItems {
				out = append(out, g.minimal(name, s.Items.A))
			}
		}
		return out
	case "integer", "number":
		n := 0.0
		if s.Minimum != nil {
			n = *s.Minimum
		}
		if s.ExclusiveMinimum != nil && s.ExclusiveMinimum.IsB() {
			n = s.ExclusiveMinimum.B + 1
		}
		return n
	case "boolean":
		return false
	case "string":
		return minimalString(s)
	}
	return nil
}

// isObjectSchema: s describes an object, itself or through allOf, or as
// a choice of required fields (oneOf of {required: [...]} branches).
func isObjectSchema(s *base.Schema) bool {
	if slices.Contains(s.Type, "object") || s.Properties != nil && s.Properties.Len() > 0 {
		return true
	}
	for _, sub := range s.AllOf {
		if x := sub.Schema(); x != nil && isObjectSchema(x) {
			return true
		}
	}
	return false
}

// objectParts are an object schema's properties and required fields, its
// own, its allOf parts' and those of its first oneOf or anyOf branch (the
// smallest body takes the first choice).
func objectParts(s *base.Schema) (map[string]*base.SchemaProxy, []string) {
	props := map[string]*base.SchemaProxy{}
	var required []string
	var add func(s *base.Schema, branch bool)
	add = func(s *base.Schema, branch bool) {
		if s == nil {
			return
		}
		if s.Properties != nil {
			for k, v := range s.Properties.FromOldest() {
				// A chosen branch's property (a const) narrows the
				// object's.
				if props[k] == nil || branch {
					props[k] = v
				}
			}
		}
		required = append(required, s.Required...)
		for _, sub := range s.AllOf {
			add(sub.Schema(), false)
		}
		for _, l := range [][]*base.SchemaProxy{s.OneOf, s.AnyOf} {
			if len(l) > 0 {
				add(firstNonNull(l).Schema(), true)
			}
		}
	}
	add(s, false)
	slices.Sort(required)
	return props, slices.Compact(required)
}

// choiceGroups are the fields of each anyOf or oneOf of s (and of its
// allOf parts) whose branches require fields: a body with none of a
// group's fields breaks the schema.
func choiceGroups(s *base.Schema) [][]string {
	var out [][]string
	if s == nil {
		return nil
	}
	for _, l := range [][]*base.SchemaProxy{s.OneOf, s.AnyOf} {
		var g []string
		for _, b := range l {
			if bs := b.Schema(); bs != nil {
				g = append(g, bs.Required...)
			}
		}
		if len(g) > 0 {
			out = append(out, g)
		}
	}
	for _, sub := range s.AllOf {
		out = append(out, choiceGroups(sub.Schema())...)
	}
	return out
}

func firstNonNull(l []*base.SchemaProxy) *base.SchemaProxy {
	for _, p := range l {
		if s := p.Schema(); s != nil && !slices.Equal(s.Type, []string{"null"}) {
			return p
		}
	}
	return l[0]
}

// minimalString meets a string schema's format, pattern and lengths.
func minimalString(s *base.Schema) string {
	v := ""
	switch s.Format {
	case "date-time":
		v = "2030-01-02T03:04:05Z"
	case "date":
		v = "2030-01-02"
	case "email":
		v = "minimal@example.com"
	case "uri":
		v = "https://example.com/minimal"
	case "hostname":
		v = "minimal.example.com"
	default:
		if ex, ok := patternExamples[s.Pattern]; ok {
			v = ex
		} else if s.Pattern != "" {
			v = "?pattern " + s.Pattern
		}
	}
	if s.MinLength != nil {
		for int64(len([]rune(v))) < *s.MinLength {
			v += "x"
		}
	}
	return v
}

// patternExamples are a value of each pattern the description uses.
var patternExamples = map[string]string{
	"^#[0-9A-Fa-f]{6}$":    "#112233",
	"^[0-9]+$":             "1",
	"^[0-9]*$":             "",
	"\\{number\\}":         "A-{number}",
	"^[0-9a-f]{64}$":       strings.Repeat("0", 64),
	"^[A-Za-z2-7 =]{16,}$": "JBSWY3DPEHPK3PXP",
}

// bodyOp is one operation with a body the check sends.
type bodyOp struct {
	key, method, path, mediaType string
	schema                       *base.SchemaProxy
}

func bodyOps(t *testing.T) []bodyOp {
	d, err := apiDocument()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := libopenapi.NewDocument(d.json)
	if err != nil {
		t.Fatal(err)
	}
	model, err := doc.BuildV3Model()
	if err != nil {
		t.Fatal(err)
	}
	var ops []bodyOp
	for path, item := range model.Model.Paths.PathItems.FromOldest() {
		for method, op := range item.GetOperations().FromOldest() {
			if op.RequestBody == nil {
				continue
			}
			key := strings.ToUpper(method) + " " + path
			var mt string
			var mto *v3.MediaType
			for _, want := range []string{"application/json", "application/x-www-form-urlencoded"} {
				if m := op.RequestBody.Content.GetOrZero(want); m != nil {
					mt, mto = want, m
					break
				}
			}
			if mto == nil || mto.Schema == nil {
				if _, ok := bodyExceptions[key]; !ok {
					t.Errorf("%s: no JSON or form body, and no exception says why", key)
				}
				continue
			}
			ops = append(ops, bodyOp{key: key, method: strings.ToUpper(method), path: path, mediaType: mt, schema: mto.Schema})
		}
	}
	slices.SortFunc(ops, func(a, b bodyOp) int { return strings.Compare(a.key, b.key) })
	return ops
}

// send sends a body as the operation's media type.
func (f *bodyFixture) send(u *testUser, op bodyOp, path string, body map[string]any) *testResponse {
	var req *http.Request
	if op.mediaType == "application/x-www-form-urlencoded" {
		v := url.Values{}
		for k, x := range body {
			v.Set(k, fmt.Sprint(x))
		}
		req = httptest.NewRequest(op.method, path, strings.NewReader(v.Encode()))
		req.Header.Set("Content-Type", op.mediaType)
	} else {
		j, _ := json.Marshal(body)
		req = httptest.NewRequest(op.method, path, strings.NewReader(string(j)))
		req.Header.Set("Content-Type", "application/json")
	}
	if u != nil {
		req.Header.Set("Authorization", "Bearer "+f.e.bearer(u))
	}
	return f.e.serve(req)
}

// isErrorBody: the answer is this API's error body ({code, message}), not
// RFC 6749's or a page.
func isErrorBody(r *testResponse) bool {
	var b struct {
		Code    *int    `json:"code"`
		Message *string `json:"message"`
	}
	return json.Unmarshal(r.Body, &b) == nil && b.Code != nil && b.Message != nil
}

// fieldErrors is the errors object of a 400 answer.
func fieldErrors(r *testResponse) map[string]any {
	var b struct {
		Errors map[string]any `json:"errors"`
	}
	_ = json.Unmarshal(r.Body, &b)
	return b.Errors
}

func TestOpenAPIMinimalBodies(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	alice, bob, carol := e.user("Alice"), e.user("Bob"), e.user("Carol")
	f := &bodyFixture{e: e, owner: alice, ids: map[string]string{}, answers: map[string]map[string]any{}}
	f.org = e.org(alice, "Fixture")
	e.addMember(f.org, bob)
	e.addMember(f.org, carol)
	f.ids["org"] = f.org
	f.ids["member"] = fmt.Sprint(bob.id)
	f.ids["banned"] = fmt.Sprint(carol.id)
	f.ids["me"] = fmt.Sprint(alice.id)
	f.ids["role"] = e.rawRole(f.org, "Fixture role", 5)
	f.ids["sync node"] = e.syncNode(f.org, 7)
	dave := e.user("Dave")
	f.ids["other org"] = e.org(dave, "Elsewhere")
	f.outsider = dave
	groupType := e.must(http.StatusCreated, alice, "POST", "/organisations/"+f.org+"/asset-types", map[string]any{"name": "Crane set", "ephemerality": 1})
	f.ids["group type"] = groupType.obj(t)["id"].(string)
	emails := e.must(http.StatusOK, alice, "GET", "/users/@me/emails", nil).arr(t)
	f.ids["email"] = emails[0]["id"].(string)
	staff, err := e.srv.createUser(t.Context(), "staff@example.com", "", "Staff", "Tester", BadgeStaff, true)
	if err != nil {
		t.Fatal(err)
	}

	callers := map[string]*testUser{
		// Deleting the account would leave the rest without a caller.
		"DELETE /users/@me":                     e.user("Leaving"),
		"PATCH /admin/organisations/{id}":       e.tokenFor(staff),
		"POST /admin/users/{id}/password-reset": e.tokenFor(staff),
		// Records are the assigned member's (POST /inductions/{id}/users/{user}).
		"POST /users/@me/inductions/{id}/records": bob,
	}
	// after runs once an operation's smallest body made its object: the
	// steps that make it usable by later operations.
	after := map[string]func(a map[string]any){
		"POST /documents": func(a map[string]any) {
			for _, b := range e.must(http.StatusOK, alice, "GET", "/documents/"+a["id"].(string)+"/branches", nil).arr(t) {
				if b["name"] == "main" {
					f.ids["revision"], _ = b["revision"].(map[string]any)["hash"].(string)
				}
			}
		},
		"POST /organisations/{id}/assets": func(a map[string]any) {
			// The group's order route moves an asset of the group.
			if g := f.value("POST /organisations/{id}/asset-groups"); g != "" {
				e.must(http.StatusOK, alice, "PATCH", "/api/assets/"+a["id"].(string), map[string]any{"group_id": g})
			}
		},
		"POST /organisations/{id}/schedules": func(a map[string]any) {
			e.must(http.StatusOK, alice, "PUT", "/schedules/"+a["id"].(string)+"/invitees/"+alice.ID, nil)
		},
		"POST /workgroups/{id}/teams": func(a map[string]any) {
			wg := f.value("POST /organisations/{id}/workgroups")
			e.must(http.StatusOK, alice, "PUT", "/workgroups/"+wg+"/teams/"+a["id"].(string)+"/members/"+bob.ID, nil)
		},
	}
	f.after = after
	// A signing token, as GET /users/@me/toolboxes/{id} (or witness/{id})
	// gives for a TOTP code, minted directly.
	signToken := func(kind, creator string) func() string {
		return func() string {
			id := f.value(creator)
			if id == "" {
				return ""
			}
			n, _ := db.ParseID(id)
			tok, err := e.srv.issueSignToken(alice.id, signObject(kind, int64(n)), methodApp)
			if err != nil {
				t.Fatal(err)
			}
			return tok
		}
	}
	f.lazy = map[string]func() string{
		"toolbox sign token": signToken("toolbox", "POST /organisations/{id}/toolboxes"),
		"witness sign token": signToken("witness", "POST /organisations/{id}/workitems"),
		// A conflict as an exchange between offices records it: an access
		// decision, which both settles and undoes (a ban over its lifting,
		// of no one banned now: its undo changes nothing).
		"sync conflict": func() string {
			id := e.store.IDs.Next()
			org, _ := db.ParseID(f.org)
			if err := e.store.InTxSQL(t.Context(), func(tx *sql.Tx, q *db.Queries) error {
				_, err := tx.Exec(`INSERT INTO sync_conflicts (id, organisation_id, kind, tbl, col, row_id, other_id, value, renamed_to, created_at, undo)
					VALUES (?, ?, 'access', 'organisation_bans', 'ban_over_lift', 1, 0, '', '', '2026-11-28T00:00:00.000Z', '{"unban":true}')`, id, int64(org))
				return err
			}); err != nil {
				t.Fatal(err)
			}
			return fmt.Sprint(id)
		},
		// One of the caller's notifications, as an event writes it.
		"notification": func() string {
			err := e.store.InTx(t.Context(), func(q *db.Queries) error {
				return e.srv.notify(t.Context(), q, notification{UserID: alice.id, ActorID: dave.id, Kind: notifyOrgInvite, NoMail: true,
					Title: "You are invited to join Elsewhere", Body: "Dave invited you.", Link: "/app/"})
			})
			if err != nil {
				t.Fatal(err)
			}
			list := e.must(http.StatusOK, alice, "GET", "/users/@me/notifications", nil).arr(t)
			return list[0]["id"].(string)
		},
	}
	f.ran = map[string]bool{}
	// needs are operations that must have had their turn before another's:
	// a state its body or path cannot name.
	needs := map[string][]string{
		// An undo settles the decision: it has its turn first.
		"POST /organisations/{id}/sync-conflicts/{conflict}/settle": {"POST /organisations/{id}/sync-conflicts/{conflict}/undo"},
		"POST /users/@me/inductions/{id}/records":                   {"POST /inductions/{id}/users/{user}"},
		// A held talk's content and sessions no longer change (409), and
		// its signatures need it held.
		"POST /toolboxes/{id}/conduct": {"POST /toolboxes/{id}/sections", "PATCH /toolboxes/{id}/sections/{section}",
			"POST /toolboxes/{id}/topics", "PATCH /toolboxes/{id}/topics/{topic}", "POST /toolboxes/{id}/schedules"},
		"POST /toolboxes/{id}/sign":           {"POST /toolboxes/{id}/conduct"},
		"POST /users/@me/toolboxes/{id}/sign": {"POST /toolboxes/{id}/conduct"},
	}
	accs := routeAccessByKey(e.srv)
	pending := bodyOps(t)
	for len(pending) > 0 {
		var waiting []bodyOp
		var why []string
		for _, op := range pending {
			path, missing := f.fill(op.path)
			g := &bodyGen{f: f, key: op.key}
			var body map[string]any
			if missing == "" {
				m, ok := g.minimal("", op.schema).(map[string]any)
				if !ok {
					t.Errorf("%s: the body's schema is not an object", op.key)
					continue
				}
				body, missing = m, g.missing
			}
			for _, n := range needs[op.key] {
				if !f.ran[n] && missing == "" {
					missing = n + " (not run yet)"
				}
			}
			if missing != "" {
				waiting = append(waiting, op)
				why = append(why, op.key+": "+missing)
				continue
			}
			f.refusedFirst(t, op, path, accs[routeKeyOf(op.key)], dave)
			f.check(t, op, path, body, callers[op.key])
			f.ran[op.key] = true
		}
		if len(waiting) == len(pending) {
			for _, w := range why {
				t.Errorf("no fixture for %s", w)
			}
			break
		}
		pending = waiting
	}
	f.bodilessWrites(t, callers)
}

// check sends the body without each required field (each must be refused
// with 400) and then whole (it must not be refused with a 400 naming a
// field).
func (f *bodyFixture) check(t *testing.T, op bodyOp, path string, body map[string]any, u *testUser) {
	t.Helper()
	e := f.e
	if u == nil {
		u = f.owner
	}
	f.hostile(t, op, path, body, u)
	exc, excepted := bodyExceptions[op.key]
	required := slices.Sorted(maps.Keys(body))
	for _, r := range required {
		without := maps.Clone(body)
		delete(without, r)
		if resp := f.send(u, op, path, without); resp.Status != http.StatusBadRequest && !excepted {
			t.Errorf("%s: without required %q answered %d, want 400: %.300s", op.key, r, resp.Status, resp.Body)
		}
	}
	for _, g := range choiceGroups(op.schema.Schema()) {
		without := maps.Clone(body)
		for _, k := range g {
			delete(without, k)
		}
		if resp := f.send(u, op, path, without); resp.Status != http.StatusBadRequest && !excepted {
			t.Errorf("%s: without any of %v answered %d, want 400: %.300s", op.key, g, resp.Status, resp.Body)
		}
	}
	before := auditCount(t, f.e, routeKeyOf(op.key))
	resp := f.send(u, op, path, body)
	j, _ := json.Marshal(body)
	switch {
	case resp.Status >= 200 && resp.Status < 300:
		audited(t, f.e, routeKeyOf(op.key), before)
		var a map[string]any
		if json.Unmarshal(resp.Body, &a) == nil {
			f.answers[op.key] = a
			if strings.Contains(op.path, "/revisions/{hash}") {
				// A change makes a new revision: later changes name it,
				// and the sheet, column or clause it made.
				if h, ok := a["hash"].(string); ok {
					f.ids["revision"] = h
				}
				if kind, ok := strings.CutPrefix(op.key, "POST /documents/{id}/revisions/{hash}/"); ok {
					list := e.must(http.StatusOK, f.owner, "GET", "/documents/"+f.value("POST /documents")+"/revisions/"+f.ids["revision"]+"/"+kind, nil).arr(t)
					if len(list) > 0 {
						one := strings.TrimSuffix(kind, "s")
						f.ids[one], _ = list[len(list)-1][one+"_id"].(string)
					}
				}
			}
			if h := f.after[op.key]; h != nil && f.answers[op.key+" (after)"] == nil {
				f.answers[op.key+" (after)"] = a
				h(a)
			}
		}
	case resp.Status == http.StatusBadRequest && isErrorBody(resp) && !excepted:
		// With a field named or not (a malformed id, a missing part), a
		// 400 is a rule of the server the schema does not state.
		t.Errorf("%s: the schema's smallest body %s is refused: %.300s", op.key, j, resp.Body)
	case excepted:
		t.Logf("%s: %d (excepted: %s)", op.key, resp.Status, exc)
	default:
		// Refused for a state the fixture did not set up: the check of
		// this operation would say nothing.
		t.Errorf("%s: smallest body %s answered %d (fix the fixture, or except it saying why): %.200s", op.key, j, resp.Status, resp.Body)
	}
}

// hostile sends what a broken client or an attacker would, before the
// body's real turn (issue 35: nothing from outside breaks the server):
// the smallest body from another organisation's owner and from nobody is
// refused with a 4xx; the body with any one field of a type its schema
// does not allow is refused with a 4xx as well (a wrong type is 400 and
// changes nothing); and no answer is a 5xx.
func (f *bodyFixture) hostile(t *testing.T, op bodyOp, path string, body map[string]any, u *testUser) {
	t.Helper()
	refused := func(what string, r *testResponse) {
		t.Helper()
		if r.Status < 400 || r.Status >= 500 {
			t.Errorf("%s %s: answered %d, want a 4xx refusal: %.200s", op.key, what, r.Status, r.Body)
		}
	}
	if op.key != "POST /organisations" && !strings.HasPrefix(op.path, "/users/@me") && !strings.HasPrefix(op.path, "/auth/") && !strings.HasPrefix(op.path, "/oauth/") {
		refused("from another organisation's owner", f.send(f.outsider, op, path, body))
	}
	if !strings.HasPrefix(op.path, "/auth/") && !strings.HasPrefix(op.path, "/oauth/") {
		refused("without a token", f.send(nil, op, path, body))
	}
	if op.mediaType != "application/json" {
		return
	}
	props, _ := objectParts(op.schema.Schema())
	for _, name := range slices.Sorted(maps.Keys(props)) {
		ps := props[name].Schema()
		if ps == nil || len(ps.Type) == 0 {
			continue // a choice of types (an id: string or integer): its own tests
		}
		for _, wrong := range []struct {
			kind  string
			value any
		}{{"string", "not a fitting value"}, {"number", 12345.5}, {"boolean", true}, {"array", []any{1}}, {"object", map[string]any{"x": 1}}} {
			allowed := slices.Contains(ps.Type, wrong.kind) || wrong.kind == "number" && slices.Contains(ps.Type, "integer")
			if allowed {
				continue
			}
			b := maps.Clone(body)
			b[name] = wrong.value
			refused(fmt.Sprintf("with %s as a %s", name, wrong.kind), f.send(u, op, path, b))
		}
		// Every limit the description states is one the handler keeps:
		// one past a length, a range or an enum is refused.
		var beyond []any
		if ps.MaxLength != nil && slices.Contains(ps.Type, "string") && ps.Pattern == "" && ps.Format == "" {
			beyond = append(beyond, strings.Repeat("x", int(*ps.MaxLength)+1))
		}
		if ps.Maximum != nil && (slices.Contains(ps.Type, "integer") || slices.Contains(ps.Type, "number")) {
			beyond = append(beyond, *ps.Maximum+1)
		}
		if ps.Minimum != nil && (slices.Contains(ps.Type, "integer") || slices.Contains(ps.Type, "number")) {
			beyond = append(beyond, *ps.Minimum-1)
		}
		if len(ps.Enum) > 0 && slices.Contains(ps.Type, "string") {
			beyond = append(beyond, "no such choice")
		}
		for _, v := range beyond {
			b := maps.Clone(body)
			b[name] = v
			refused(fmt.Sprintf("with %s %.40v (past its limit)", name, v), f.send(u, op, path, b))
		}
		// One item past an array's maxItems, copies of the smallest body's
		// item or of the smallest item its schema allows: refused for the
		// count (the field named, with its limit), not for what the items
		// hold, so the limit itself is what is proven kept.
		if _, excepted := bodyExceptions[op.key]; ps.MaxItems != nil && slices.Contains(ps.Type, "array") && !excepted {
			var item any
			given, _ := body[name].([]any)
			switch {
			case len(given) > 0:
				item = given[0]
			case ps.Items != nil && ps.Items.IsA() && strings.HasPrefix(schemaRefName(ps.Items.A), "Id"):
				item = f.ids["me"] // a well-formed id: the count is refused before what it names is looked up
			case ps.Items != nil && ps.Items.IsA():
				item = (&bodyGen{f: f, key: op.key}).minimal("", ps.Items.A)
			}
			b := maps.Clone(body)
			b[name] = []any{item}
			if r := f.send(u, op, path, b); r.Status == http.StatusBadRequest && fieldErrors(r)[name] != nil && len(given) == 0 {
				continue // a schema shared with a route that takes no such field at all (said in its answer)
			}
			b[name] = slices.Repeat([]any{item}, int(*ps.MaxItems)+1)
			r := f.send(u, op, path, b)
			if msg, _ := fieldErrors(r)[name].(string); r.Status != http.StatusBadRequest || !strings.Contains(msg, strconv.FormatInt(*ps.MaxItems, 10)) {
				t.Errorf("%s with %d items in %s: answered %d, want 400 naming the field and its limit: %.300s", op.key, *ps.MaxItems+1, name, r.Status, r.Body)
			}
		}
	}
}

// TestOpenAPIMinimalBodyGenerator: the generator takes required fields
// only (through allOf and the first anyOf choice, whose const wins), the
// first enum value, formats, patterns, lengths and minimums, and an id
// field's real id from its source.
func TestOpenAPIMinimalBodyGenerator(t *testing.T) {
	t.Parallel()
	doc, err := libopenapi.NewDocument([]byte(`openapi: 3.1.0
info: {title: t, version: "1"}
paths: {}
components:
  schemas:
    IdIn: {type: [string, integer], pattern: "^[0-9]+$"}
    Base:
      type: object
      properties:
        name: {type: [string, "null"], minLength: 3}
        kind: {type: string, enum: [first, second]}
        at: {type: string, format: date-time}
        colour: {type: string, pattern: "^#[0-9A-Fa-f]{6}$"}
        count: {type: integer, minimum: 2}
        tags: {type: array, minItems: 1, items: {type: string, format: email}}
        type_id: {$ref: "#/components/schemas/IdIn"}
        optional: {type: string}
        scope: {type: [boolean, "null"]}
    Create:
      allOf: [{$ref: "#/components/schemas/Base"}]
      required: [name, kind, at, colour, count, tags, type_id]
      anyOf: [{required: [scope], properties: {scope: {const: true}}}, {required: [optional]}]
`))
	if err != nil {
		t.Fatal(err)
	}
	model, err := doc.BuildV3Model()
	if err != nil {
		t.Fatal(err)
	}
	f := &bodyFixture{ids: map[string]string{}, answers: map[string]map[string]any{
		"POST /organisations/{id}/asset-types": {"id": "42"}}}
	g := &bodyGen{f: f, key: "POST /x"}
	got := g.minimal("", model.Model.Components.Schemas.GetOrZero("Create"))
	want := map[string]any{"name": "xxx", "kind": "first", "at": "2030-01-02T03:04:05Z", "colour": "#112233",
		"count": 2.0, "tags": []any{"minimal@example.com"}, "type_id": "42", "scope": true}
	if fmt.Sprint(got) != fmt.Sprint(want) || g.missing != "" {
		t.Errorf("got %v (missing %q), want %v", got, g.missing, want)
	}
	// An id field whose source is not made yet holds the operation back.
	f.answers = map[string]map[string]any{}
	g = &bodyGen{f: f, key: "POST /x"}
	g.minimal("", model.Model.Components.Schemas.GetOrZero("Create"))
	if !strings.Contains(g.missing, "type_id") {
		t.Errorf("missing %q, want type_id named", g.missing)
	}
}
