package server

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
)

// requestSchemaFields walks every request body schema of the served
// document and calls visit for each string, integer and number schema it
// reaches, with where: the schema's name and the path of properties to it
// (AssetWrite.fields[].value). $refs are followed once per name.
func requestSchemaFields(t *testing.T, visit func(where string, s map[string]any)) {
	t.Helper()
	d, err := apiDocument()
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(d.json, &doc); err != nil {
		t.Fatal(err)
	}
	comps, _ := doc["components"].(map[string]any)
	schemas, _ := comps["schemas"].(map[string]any)
	seen := map[string]bool{}
	var walk func(where string, s map[string]any)
	walk = func(where string, s map[string]any) {
		if s == nil {
			return
		}
		if ref, ok := s["$ref"].(string); ok {
			name := strings.TrimPrefix(ref, "#/components/schemas/")
			if seen[name] {
				return
			}
			seen[name] = true
			sub, _ := schemas[name].(map[string]any)
			walk(name, sub)
			return
		}
		if typeHas(s["type"], "string") || typeHas(s["type"], "integer") || typeHas(s["type"], "number") || typeHas(s["type"], "array") {
			visit(where, s)
		}
		props, _ := s["properties"].(map[string]any)
		keys := make([]string, 0, len(props))
		for k := range props {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			p, _ := props[k].(map[string]any)
			walk(where+"."+k, p)
		}
		if it, ok := s["items"].(map[string]any); ok {
			walk(where+"[]", it)
		}
		if ap, ok := s["additionalProperties"].(map[string]any); ok {
			walk(where+"{}", ap)
		}
		for _, key := range []string{"allOf", "oneOf", "anyOf"} {
			list, _ := s[key].([]any)
			for _, b := range list {
				bm, _ := b.(map[string]any)
				walk(where, bm)
			}
		}
	}
	paths, _ := doc["paths"].(map[string]any)
	pkeys := make([]string, 0, len(paths))
	for k := range paths {
		pkeys = append(pkeys, k)
	}
	slices.Sort(pkeys)
	for _, p := range pkeys {
		item, _ := paths[p].(map[string]any)
		for _, m := range []string{"get", "put", "post", "patch", "delete"} {
			op, _ := item[m].(map[string]any)
			rb, _ := op["requestBody"].(map[string]any)
			content, _ := rb["content"].(map[string]any)
			for ct, c := range content {
				cm, _ := c.(map[string]any)
				s, _ := cm["schema"].(map[string]any)
				if _, ok := s["$ref"]; ok {
					walk("", s)
				} else {
					walk(fmt.Sprintf("%s %s (%s)", strings.ToUpper(m), p, ct), s)
				}
			}
		}
	}
}

// bounded reports whether a string, integer or number schema states a
// limit: a string's maxLength, an enum or const, a format that bounds it
// (date-time, date, uuid) or a bounded pattern; a number's minimum and maximum (or exclusive
// ones). A schema of several types needs both parts.
func bounded(s map[string]any) bool {
	if s["enum"] != nil || s["const"] != nil {
		return true
	}
	if typeHas(s["type"], "array") && s["maxItems"] == nil {
		return false
	}
	if typeHas(s["type"], "string") {
		switch {
		case s["maxLength"] != nil:
		case s["format"] == "date-time", s["format"] == "date", s["format"] == "uuid":
		case boundedPattern(s["pattern"]):
		default:
			return false
		}
	}
	if typeHas(s["type"], "integer") || typeHas(s["type"], "number") {
		lo := s["minimum"] != nil || s["exclusiveMinimum"] != nil
		hi := s["maximum"] != nil || s["exclusiveMaximum"] != nil
		return lo && hi
	}
	return true
}

// boundedPattern: a pattern anchored at both ends whose repetitions all
// have an upper bound ({n} or {n,m}; no *, + or {n,}) bounds the length.
func boundedPattern(p any) bool {
	pat, ok := p.(string)
	return ok && strings.HasPrefix(pat, "^") && strings.HasSuffix(pat, "$") &&
		!strings.ContainsAny(pat, "*+") && !strings.Contains(pat, ",}")
}

// unboundedReasons are the request fields that state no limit, with why.
// A key ending in "." covers every field under that prefix.
var unboundedReasons = map[string]string{
	// Files: their limit is the body's (--max-body, 32 MiB; a PDF or image
	// has its own, said in the description).
	"FileUpload.file":                                            "a file (the upload limit)",
	"ImageUpload.file":                                           "a file (the upload limit)",
	"InductionForm.attachment":                                   "a file (a PDF of at most 20 MiB)",
	"UserPatchForm.avatar":                                       "a file (an image of at most 10 MiB)",
	"POST /organisations/{id}/assets/import (text/csv)":          "a file (the upload limit)",
	"PUT /sync/objects/{kind}/{hash} (application/octet-stream)": "an object whose bytes must hash to its name (at most 64 MiB or the upload limit)",
	"POST /organisations/{id}/assets/import (application/vnd.openxmlformats-officedocument.spreadsheetml.sheet)": "a file (the upload limit)",
	// OAuth 2.0 parameters (RFC 6749, 7009): compared with a value the server
	// registered or issued (a wrong one is the protocol's error, which names
	// no field), or echoed back unread (state, nonce); RFC 6749 sets no length.
	"AuthorizeForm.client_id":       "OAuth parameter, compared with a registered client",
	"AuthorizeForm.redirect_uri":    "OAuth parameter, compared with the client's registered URIs",
	"AuthorizeForm.scope":           "OAuth parameter, read as a list of known scopes",
	"AuthorizeForm.state":           "OAuth parameter, echoed back unread",
	"AuthorizeForm.nonce":           "OpenID parameter, echoed into the ID token unread",
	"AuthorizeForm.csrf":            "a token the server issued, compared with it",
	"TokenRequest.client_id":        "OAuth parameter, compared with a registered client",
	"TokenRequest.client_secret":    "OAuth parameter, compared with the client's secret",
	"TokenRequest.code":             "a code the server issued, compared with it",
	"TokenRequest.redirect_uri":     "OAuth parameter, compared with the code's",
	"TokenRequest.refresh_token":    "a token the server issued, compared with it",
	"TokenRequest.username":         "an e-mail address compared with the accounts' (a wrong one is invalid_grant)",
	"RevokeRequest.token":           "a token the server issued, compared with it",
	"RevokeRequest.token_type_hint": "RFC 7009: a hint the server may ignore",
	// Tokens the server issued and compares: any other value is refused.
	"ResetForm.token":                   "a token the server issued, compared with it",
	"DeleteMeWrite.email_token":         "a token the server issued, compared with it",
	"EmailPatchWrite.email_token":       "a token the server issued, compared with it",
	"UserPatchWrite.phone_number_token": "a code the server sent, compared with it",
	"UserPatchForm.phone_number_token":  "a code the server sent, compared with it",
	"SignerWrite.jwt":                   "a token the server issued, verified by its signature",
	"ToolboxSignerWrite.jwt":            "a token the server issued, verified by its signature",
	"QrTokenWrite.token":                "spaces and padding are ignored, so only the rest is bounded (16-128, the pattern and description)",
	// The password-reset request answers the same whatever is sent (no
	// account enumeration), so it refuses no field.
	"ForgotForm.email": "answered the same for any value (no account enumeration)",
	"ForgotForm.next":  "any value but a sign-in page goes to /app/",
	// Sync: written by another node of ours, not by people (docs/sync.md);
	// the body limit bounds it, and the exchange refuses what it cannot apply.
	"SyncExchange.":            "node-to-node protocol, written by our own code",
	"SyncNumberBlock.":         "node-to-node protocol, written by our own code",
	"SyncPairWrite.code":       "a pairing code the hub issued, compared with it",
	"SyncPairWrite.public_key": "decoded as a 32-byte Ed25519 key; anything else is refused",
}

// TestOpenAPIRequestLimits: every string, integer and number of every
// request body states its limit (maxLength, an enum, a bounding format, a
// range), or has a reason in unboundedReasons. A new field without one
// fails here, so the description keeps saying what the server enforces.
func TestOpenAPIRequestLimits(t *testing.T) {
	t.Parallel()
	used := map[string]bool{}
	requestSchemaFields(t, func(where string, s map[string]any) {
		if bounded(s) {
			return
		}
		for k := range unboundedReasons {
			if k == where || (strings.HasSuffix(k, ".") && strings.HasPrefix(where, k)) {
				used[k] = true
				return
			}
		}
		t.Errorf("%s (%v) states no limit: add the handler's (maxLength, enum, minimum and maximum), enforce one, or give a reason in unboundedReasons", where, s["type"])
	})
	for k := range unboundedReasons {
		if !used[k] {
			t.Errorf("unboundedReasons[%q]: no such unbounded field (remove the reason)", k)
		}
	}
}

// specLimits is interface.md's "Limits" table (and the lengths its object
// lists state), line by line, with the request schema fields that carry
// each limit: min and max characters (0: the spec states none).
// TestOpenAPISpecLimits holds the description to it; docs/operations.md
// says where the rows the description cannot state are kept.
var specLimits = []struct {
	subject  string
	min, max int
	fields   []string
}{
	{"project code, package code, location code, sub location code, discipline code, system code, organisation code: max 12", 0, 12, []string{
		"ProjectWrite.code", "PackageWrite.code", "LocationWrite.code", "SubLocationWrite.code", "DisciplineWrite.code",
		"SystemWrite.code", "OrganisationWrite.code", "OrgCreateWrite.code"}},
	{"project name, package name, location name, sub location name, discipline name, induction name: max 200", 0, 200, []string{
		"ProjectWrite.name", "PackageWrite.name", "LocationWrite.name", "SubLocationWrite.name", "DisciplineWrite.name",
		"InductionWrite.name", "InductionForm.name"}},
	{"readme: max 64000", 0, 64000, []string{"ProjectWrite.readme"}},
	{"organisation name: 2-100", 2, 100, []string{"OrganisationWrite.name", "OrgCreateWrite.name"}},
	{"workgroup name: max 50", 0, 50, []string{"WorkgroupWrite.name"}},
	{"system name: max 60", 0, 60, []string{"SystemWrite.name"}},
	{"document title: 2-200", 2, 200, []string{"DocumentWrite.title"}},
	{"document branch name (creation): 2-50", 2, 50, []string{"BranchCreate.name"}},
	{"document branch name (branch object): 2-256", 2, 256, []string{"BranchWrite.name"}},
	{"sheet name, column name, document type name, team name, role alias, asset and asset-group and asset type, status, zone and field names: 2-20", 2, 20, []string{
		"SheetWrite.name", "ColumnWrite.name", "DocumentTypeWrite.name", "TeamWrite.name", "RoleWrite.alias", "RoleCreateWrite.alias",
		"AssetWrite.name", "AssetTypeWrite.name", "AssetStatusWrite.name", "AssetZoneWrite.name", "AssetFieldWrite.name"}},
	{"induction revision label: max 20", 0, 20, []string{"InductionWrite.revision", "InductionForm.revision"}},
	{"user initials: max 6", 0, 6, []string{"UserPatchWrite.initials", "UserPatchForm.initials"}},
	{"clause text: max 16 MiB including base64 images (bytes: stated as characters, a bound a text in bytes cannot pass)", 0, 16 << 20, []string{"ClauseWrite.text"}},
	{"role alias (role object): up to 20", 2, 20, []string{"RoleWrite.alias"}},
	{"organisation default branch name: as a branch's creation, 2-50", 2, 50, []string{"OrganisationWrite.default_branch_name"}},
}

// specRanges are the Limits table's numeric rows a schema can state.
var specRanges = []struct {
	subject string
	field   string
	min     float64
}{
	{"reorder position of an asset in a group: 0 to asset count minus 1 (the upper end depends on the group: in the description)", "AssetGroupOrderWrite.order", 0},
	{"role order (PATCH /organisations/{id}/roles): from 0", "RoleReorderWrite.order", 0},
}

// specNotInSchemas are the Limits table's rows no request schema carries,
// with where they are kept instead.
var specNotInSchemas = map[string]string{
	"avatar: JPEG or PNG, at least 640 x 480 pixels; response cached 15 minutes": "an image's pixels: checked by the handler, said in UserPatchForm.avatar's description",
	"TOTP QR token: valid 24 hours":                                              "a time, not a field (docs/auth.md)",
	"JWT signing tokens (toolbox, witness): valid 30 minutes":                    "a time, not a field (docs/toolboxes.md)",
	"toolbox unarchive window: 24 hours after archiving":                         "a time, not a field (docs/toolboxes.md)",
	"toolbox QR scan timestamp: within the last 24 hours":                        "relative to now: said in ToolboxSign.scanned_at's description",
	"toolbox list pagination: start default 0, limit default 50":                 "query parameters, not a body",
	"asset list and asset group list: 50 by default":                             "query parameters, not a body",
	"prefix last_number: may only increase":                                      "relative to the stored value: said in PrefixWrite.last_number's description",
	"toolbox sign, quotas: 429":                                                  "an answer status, not a field",
}

// TestOpenAPISpecLimits compares interface.md's limits with the request
// schemas, field by field: each field listed for a row must state the
// row's lengths (minLength where the spec gives a minimum, maxLength
// always), and each range row its minimum.
func TestOpenAPISpecLimits(t *testing.T) {
	t.Parallel()
	d, err := apiDocument()
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Components struct {
			Schemas map[string]map[string]any `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(d.json, &doc); err != nil {
		t.Fatal(err)
	}
	prop := func(field string) map[string]any {
		name, key, _ := strings.Cut(field, ".")
		s := doc.Components.Schemas[name]
		if s == nil {
			return nil
		}
		list := []map[string]any{s}
		for _, k := range []string{"allOf", "anyOf", "oneOf"} {
			bs, _ := s[k].([]any)
			for _, b := range bs {
				if bm, ok := b.(map[string]any); ok {
					list = append(list, bm)
				}
			}
		}
		for _, m := range list {
			props, _ := m["properties"].(map[string]any)
			if p, ok := props[key].(map[string]any); ok {
				return p
			}
		}
		return nil
	}
	num := func(v any) float64 {
		f, _ := v.(float64)
		return f
	}
	for _, row := range specLimits {
		for _, f := range row.fields {
			p := prop(f)
			if p == nil {
				t.Errorf("%s: %s is not a property of the description", row.subject, f)
				continue
			}
			if got := num(p["maxLength"]); int(got) != row.max {
				t.Errorf("%s: %s has maxLength %v, the spec says %d", row.subject, f, p["maxLength"], row.max)
			}
			if row.min > 0 && int(num(p["minLength"])) != row.min {
				t.Errorf("%s: %s has minLength %v, the spec says %d", row.subject, f, p["minLength"], row.min)
			}
		}
	}
	for _, row := range specRanges {
		p := prop(row.field)
		if p == nil || p["minimum"] == nil || num(p["minimum"]) != row.min {
			t.Errorf("%s: %s states minimum %v, the spec says %v", row.subject, row.field, p["minimum"], row.min)
		}
	}
	// Every row of the spec's table is accounted for, when the spec is at
	// hand (the shared directory beside the checkout; CI has no copy).
	var spec []byte
	for _, path := range []string{"../../shared/spec/interface.md", "../../../shared/spec/interface.md"} {
		if spec, err = os.ReadFile(path); err == nil {
			break
		}
	}
	if spec == nil {
		t.Log("interface.md not found beside the checkout: the table rows are not re-read")
		return
	}
	_, table, _ := strings.Cut(string(spec), "\n## Limits\n")
	table, _, _ = strings.Cut(table, "\n## ")
	rows := 0
	for _, line := range strings.Split(table, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 4 || strings.TrimSpace(cells[1]) == "Subject" || strings.HasPrefix(strings.TrimSpace(cells[1]), "---") {
			continue
		}
		rows++
		subject := strings.TrimSpace(cells[1]) + ":"
		found := 0
		for _, r := range specLimits {
			if strings.HasPrefix(r.subject, subject) {
				found++
			}
		}
		for _, r := range specRanges {
			if strings.HasPrefix(r.subject, subject) {
				found++
			}
		}
		for k := range specNotInSchemas {
			if strings.HasPrefix(k, subject) {
				found++
			}
		}
		if found != 1 {
			t.Errorf("interface.md's limit %q: %d rows of specLimits, specRanges and specNotInSchemas name it, want 1", line, found)
		}
	}
	if rows < 20 {
		t.Errorf("read %d rows of interface.md's Limits table: the table moved?", rows)
	}
}
