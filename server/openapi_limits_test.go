package server

import (
	"encoding/json"
	"fmt"
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
		if typeHas(s["type"], "string") || typeHas(s["type"], "integer") || typeHas(s["type"], "number") {
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
	"FileUpload.file":                                   "a file (the upload limit)",
	"ImageUpload.file":                                  "a file (the upload limit)",
	"InductionForm.attachment":                          "a file (a PDF of at most 20 MiB)",
	"UserPatchForm.avatar":                              "a file (an image of at most 10 MiB)",
	"POST /organisations/{id}/assets/import (text/csv)": "a file (the upload limit)",
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
