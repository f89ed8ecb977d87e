package server

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"
)

// --- rows whose objects belong to areas not built yet ---

func TestUserPendingAreaRows(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	alice := e.user("alice")
	var rows []scenario
	for _, p := range []string{"document-shares", "work-items", "fleets", "shares", "fleet-shares", "inductions"} {
		rows = append(rows,
			scenario{name: p + " no token", method: "GET", path: "/users/@me/" + p, want: 401},
			scenario{name: p + " empty", as: alice, method: "GET", path: "/users/@me/" + p, want: 200, check: wantLen(0)},
		)
	}
	rows = append(rows, []scenario{
		{name: "work-items headers", as: alice, method: "GET", path: "/users/@me/work-items?organisation=12&include_assets=true&start_date=2026-01-01&$top=10", want: 200, check: func(t *testing.T, r *testResponse) {
			if r.Header.Get("X-Total-Count") != "0" || r.Header.Get("X-Status-Count") != "open=0,closed=0" {
				t.Fatalf("headers %v", r.Header)
			}
		}},
		{name: "work-items bad id filter", as: alice, method: "GET", path: "/users/@me/work-items?project=abc", want: 400, check: wantField("project")},
		{name: "work-items bad boolean", as: alice, method: "GET", path: "/users/@me/work-items?include_assets=sometimes", want: 400, check: wantField("include_assets")},
		{name: "work-items bad date", as: alice, method: "GET", path: "/users/@me/work-items?finish_date=tomorrow", want: 400, check: wantField("finish_date")},
		{name: "work-items bad top", as: alice, method: "GET", path: "/users/@me/work-items?$top=5000", want: 400, check: wantField("$top")},
		{name: "work-items bad skip", as: alice, method: "GET", path: "/users/@me/work-items?$skip=-1", want: 400, check: wantField("$skip")},
		{name: "work-items filter on an unknown field", as: alice, method: "GET", path: "/users/@me/work-items?$filter=" + url.QueryEscape("colour eq 'red'"), want: 400, check: wantField("colour")},
		{name: "work-items malformed filter", as: alice, method: "GET", path: "/users/@me/work-items?$filter=" + url.QueryEscape("(("), want: 400, check: wantField("$filter")},
		{name: "fleet subscriptions absent", as: alice, method: "GET", path: "/users/@me/fleets/123/subscriptions", want: 404},
		{name: "fleet subscriptions bad id", as: alice, method: "GET", path: "/users/@me/fleets/x/subscriptions", want: 400},
		{name: "fleet subscriptions no token", method: "GET", path: "/users/@me/fleets/123/subscriptions", want: 401},
		{name: "work item subscriptions absent", as: alice, method: "GET", path: "/users/@me/work-items/123/subscriptions", want: 404},
		{name: "work item subscriptions bad id", as: alice, method: "GET", path: "/users/@me/work-items/-1/subscriptions", want: 400},
		{name: "toolbox absent", as: alice, method: "GET", path: "/users/@me/toolboxes/123?token=123456", want: 404},
		{name: "toolbox bad id", as: alice, method: "GET", path: "/users/@me/toolboxes/abc", want: 400},
		{name: "toolbox no token", method: "GET", path: "/users/@me/toolboxes/123", want: 401},
		{name: "toolbox sign without jwt or schedule", as: alice, method: "POST", path: "/users/@me/toolboxes/123/sign", body: map[string]any{}, want: 400, check: wantField("jwt")},
		{name: "toolbox sign bad phone", as: alice, method: "POST", path: "/users/@me/toolboxes/123/sign", body: map[string]any{"jwt": "x", "phone_number": "abc"}, want: 400, check: wantField("phone_number")},
		{name: "toolbox sign long name", as: alice, method: "POST", path: "/users/@me/toolboxes/123/sign", body: map[string]any{"jwt": "x", "first_name": strings.Repeat("n", 101)}, want: 400, check: wantField("first_name")},
		{name: "toolbox sign bad schedule id", as: alice, method: "POST", path: "/users/@me/toolboxes/123/sign", body: map[string]any{"schedule_id": "s"}, want: 400},
		{name: "toolbox sign malformed", as: alice, method: "POST", path: "/users/@me/toolboxes/123/sign", body: `{"jwt":`, want: 400},
		{name: "toolbox sign via schedule, absent", as: alice, method: "POST", path: "/users/@me/toolboxes/123/sign", body: map[string]any{"schedule_id": "77"}, want: 404},
		{name: "toolbox sign absent", as: alice, method: "POST", path: "/users/@me/toolboxes/123/sign", body: map[string]any{"jwt": "x"}, want: 404},
		{name: "toolbox sign no token", method: "POST", path: "/users/@me/toolboxes/123/sign", body: map[string]any{"jwt": "x"}, want: 401},
		// An object the caller cannot see is refused before the query and body
		// are read; TestWitnessSigning checks those 400s on a visible one.
		{name: "witness without token", as: alice, method: "GET", path: "/users/@me/witness/123", want: 404},
		{name: "witness absent", as: alice, method: "GET", path: "/users/@me/witness/123?token=123456", want: 404},
		{name: "witness bad id", as: alice, method: "GET", path: "/users/@me/witness/abc?token=1", want: 400},
		{name: "witness no auth", method: "GET", path: "/users/@me/witness/123?token=1", want: 401},
		{name: "witness sign without jwt", as: alice, method: "POST", path: "/users/@me/witness/123/sign", body: map[string]any{"first_name": "A"}, want: 404},
		{name: "witness sign wrong type", as: alice, method: "POST", path: "/users/@me/witness/123/sign", body: map[string]any{"jwt": 1}, want: 404},
		{name: "witness sign absent", as: alice, method: "POST", path: "/users/@me/witness/123/sign", body: map[string]any{"jwt": "x"}, want: 404},
		{name: "witness sign no auth", method: "POST", path: "/users/@me/witness/123/sign", body: map[string]any{"jwt": "x"}, want: 401},
		{name: "induction absent", as: alice, method: "GET", path: "/users/@me/inductions/123", want: 404},
		{name: "induction bad id", as: alice, method: "GET", path: "/users/@me/inductions/abc", want: 400},
		{name: "induction no token", method: "GET", path: "/users/@me/inductions/123", want: 401},
	}...)
	e.run(t, rows)
}

// TestUserRoutesNeverFail sends malformed input to every users route: no
// answer may be a 5xx.
func TestUserRoutesNeverFail(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	alice := e.user("alice")
	acme := e.org(alice, "Acme")
	bodies := []any{nil, "", "null", "[]", "{", `{"email": {}}`, `"text"`, `{"token": null, "email_token": [1], "notification_email_id": -5, "is_primary": "yes"}`, strings.Repeat("[", 5000)}
	paths := []string{
		"/users/@me", "/users/" + alice.ID, "/users/lookup?email=%zz", "/users/avatar/" + strings.Repeat("f", 64) + "?size=%00",
		"/users/@me/emails", "/users/@me/emails/1", "/users/@me/emails/99999999999999999999", "/users/@me/emails/1/verify",
		"/users/@me/organisations/" + acme + "/email", "/users/@me/organisations/" + acme, "/users/@me/verify-phone-number",
		"/users/@me/qr/token", "/users/@me/qr/scan", "/users/@me/work-items?organisation=%20", "/users/@me/toolboxes/1/sign",
		"/users/@me/witness/1/sign", "/users/@me/witness/1?token=", "/users/@me/emails?organisation_id=",
	}
	for _, p := range paths {
		for _, m := range []string{"GET", "POST", "PATCH", "PUT", "DELETE"} {
			for _, b := range bodies {
				r := e.do(alice, m, p, b)
				if r.Status >= 500 && !(r.Status == 501 && p == "/users/@me/qr/scan") {
					t.Errorf("%s %s %.40v: status %d: %.200s", m, p, b, r.Status, r.Body)
				}
			}
		}
	}
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
