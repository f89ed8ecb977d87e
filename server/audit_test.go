package server

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"workspace/db"
)

func TestAuditTrail(t *testing.T) {
	t.Parallel()
	f := newOrgFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	loc := e.must(201, f.alice, "POST", acme+"/locations", map[string]any{"name": "Yard", "code": "Y1"}).obj(t)["id"].(string)
	e.must(200, f.alice, "PATCH", "/locations/"+loc, map[string]any{"name": "Main yard"})
	e.must(400, f.alice, "PATCH", "/locations/"+loc, map[string]any{"latitude": 95, "longitude": 0}) // refused: no entry
	lair := e.must(201, f.mallory, "POST", "/organisations/"+f.evil+"/locations", map[string]any{"name": "Lair"}).obj(t)["id"].(string)
	e.must(200, f.mallory, "PATCH", "/locations/"+lair, map[string]any{"name": "Den"})
	e.must(200, f.bob, "PATCH", "/users/@me", map[string]any{"first_name": "Robert"}) // no organisation: chain 0
	log := "/organisations/" + f.acme + "/audit-log"
	e.run(t, []scenario{
		{"member without MANAGE_ORGANISATION", f.bob, "GET", log, nil, 403, nil},
		{"other organisation", f.mallory, "GET", log, nil, 403, nil},
		{"absent organisation", f.alice, "GET", "/organisations/123456789/audit-log", nil, 404, nil},
		{"newest first, this organisation only", f.alice, "GET", log, nil, 200, func(t *testing.T, r *testResponse) {
			l := r.arr(t)
			var actions []string
			for _, en := range l {
				actions = append(actions, en["action"].(string))
			}
			// The fixture's own writes (creating Acme, adding bob...) come first in the chain.
			if len(l) < 2 || actions[0] != "PATCH /locations/:id" || actions[1] != "POST /organisations/:id/locations" {
				t.Fatalf("actions %v", actions)
			}
			patch := l[0]
			if patch["actor_id"] != f.alice.ID || patch["target_ids"].(map[string]any)["id"] != loc ||
				strings.Join(toStrings(patch["changed_fields"]), ",") != "name" || patch["prev_hash"] != l[1]["hash"] || patch["request_id"] == "" {
				t.Errorf("entry %v", patch)
			}
			// The create's body keys, in name order.
			if got := strings.Join(toStrings(l[1]["changed_fields"]), ","); got != "code,name" {
				t.Errorf("create's changed_fields %q", got)
			}
			if r.Header.Get("X-Total-Count") != strconv.Itoa(len(l)) {
				t.Errorf("X-Total-Count %s for %d entries", r.Header.Get("X-Total-Count"), len(l))
			}
		}},
		{"by target", f.alice, "GET", log + "?target=" + loc, nil, 200, wantLen(1)},
		{"by action", f.alice, "GET", log + "?action=PATCH%20/locations/:id", nil, 200, wantLen(1)},
		{"by method", f.alice, "GET", log + "?action=patch", nil, 200, wantLen(1)},
		{"by any of a list", f.alice, "GET", log + "?action=" + url.QueryEscape("PATCH /locations/:id, POST /organisations/:id/locations,DELETE"), nil, 200, wantLen(2)},
		{"a list with an empty item", f.alice, "GET", log + "?action=" + url.QueryEscape("PATCH /locations/:id,,"), nil, 400, wantField("action")},
		{"a list too long", f.alice, "GET", log + "?action=" + strings.Repeat("PATCH,", 301), nil, 400, wantField("action")},
		{"by actor", f.alice, "GET", log + "?actor=" + f.mallory.ID, nil, 200, wantLen(0)},
		{"by actor, all of theirs", f.alice, "GET", log + "?actor=" + f.alice.ID, nil, 200, func(t *testing.T, r *testResponse) {
			l := r.arr(t)
			for _, en := range l {
				if en["actor_id"] != f.alice.ID {
					t.Errorf("entry of %v in alice's filter", en["actor_id"])
				}
			}
			if len(l) < 2 || r.Header.Get("X-Total-Count") != strconv.Itoa(len(l)) {
				t.Errorf("%d entries, X-Total-Count %s", len(l), r.Header.Get("X-Total-Count"))
			}
		}},
		{"from the future", f.alice, "GET", log + "?from=2030-01-01T00:00:00Z", nil, 200, wantLen(0)},
		{"bad from", f.alice, "GET", log + "?from=yesterday", nil, 400, wantField("from")},
		{"bad actor", f.alice, "GET", log + "?actor=x", nil, 400, wantField("actor")},
		{"paging", f.alice, "GET", log + "?$top=1", nil, 200, wantLen(1)},
		{"export", f.alice, "GET", log + "/export?target=" + loc, nil, 200, func(t *testing.T, r *testResponse) {
			lines := strings.Split(strings.TrimSpace(string(r.Body)), "\n")
			if r.Header.Get("Content-Type") != "application/x-ndjson" || len(lines) != 1 || !strings.Contains(lines[0], `"PATCH /locations/:id"`) {
				t.Errorf("export %q", r.Body)
			}
		}},
		{"other organisation cannot export", f.mallory, "GET", log + "/export", nil, 403, nil},
	})

	ctx := context.Background()
	problems, checked, err := db.VerifyAudit(ctx, e.store.R)
	if err != nil || len(problems) != 0 || checked == 0 {
		t.Fatalf("verify: %v %v (%d checked)", problems, err, checked)
	}
	// Alter one entry's content directly in SQLite: verify names it.
	if _, err := e.write(`UPDATE audit_log SET action = 'GET /nothing' WHERE chain = ? AND seq = 2`, parseTestID(t, f.acme)); err != nil {
		t.Fatal(err)
	}
	problems, _, _ = db.VerifyAudit(ctx, e.store.R)
	if len(problems) != 1 || !strings.Contains(problems[0], "entry 2 ") || !strings.Contains(problems[0], "altered") {
		t.Fatalf("after altering: %v", problems)
	}
	// Remove an entry of another chain: verify names the gap there too.
	if _, err := e.write(`DELETE FROM audit_log WHERE chain = ? AND seq = 1`, parseTestID(t, f.evil)); err != nil {
		t.Fatal(err)
	}
	problems, _, _ = db.VerifyAudit(ctx, e.store.R)
	if len(problems) != 2 || !strings.Contains(strings.Join(problems, "|"), "entry 1 is missing") {
		t.Fatalf("after removing: %v", problems)
	}
}

func toStrings(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

// TestAuditDetails: entries carry what a change set in words (issue 29's
// sentences "imported 5 assets", "changed the status of 20kVA generator to
// In repair"), only inside their own organisation's log; the hash covers
// them, and entries without details still verify.
func TestAuditDetails(t *testing.T) {
	t.Parallel()
	f := newAssetFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	csv := []byte("name,type,status\nGenset 1,Trailer,Live\nGenset 2,Trailer,\n")
	if r := e.importFile(f.alice, acme+"/assets/import", csv, "text/csv"); r.Status != 200 {
		t.Fatalf("import: %d %s", r.Status, r.Body)
	}
	asset := e.must(201, f.alice, "POST", acme+"/assets", map[string]any{"type_id": f.plainType, "name": "20kVA generator"}).obj(t)["id"].(string)
	repair := e.must(201, f.alice, "POST", acme+"/asset-statuses", map[string]any{"name": "In repair"}).obj(t)["id"].(string)
	e.must(200, f.alice, "PATCH", "/api/assets/"+asset, map[string]any{"status_id": repair, "description": "noisy"})
	typ := e.must(201, f.alice, "POST", acme+"/work-item-types", map[string]any{"name": "Task"}).obj(t)["id"].(string)
	wi := e.must(201, f.alice, "POST", acme+"/workitems", map[string]any{"type_id": typ, "title": "Fix the fence"}).obj(t)["id"].(string)
	e.must(200, f.alice, "PATCH", "/workitems/"+wi, map[string]any{"status": "closed"})

	entries := e.must(200, f.alice, "GET", acme+"/audit-log?$top=1000", nil).arr(t)
	byAction := map[string]map[string]any{}
	for _, en := range entries {
		if _, seen := byAction[en["action"].(string)]; !seen {
			byAction[en["action"].(string)] = en // newest first
		}
	}
	details := func(action string) map[string]any {
		en := byAction[action]
		if en == nil {
			t.Fatalf("no %s entry", action)
		}
		return en["details"].(map[string]any)
	}
	if d := details("POST /organisations/:id/assets/import"); d["count"] != float64(2) {
		t.Errorf("import details %v, want count 2", d)
	}
	if d := details("PATCH /api/assets/:id"); fmt.Sprint(d["values"]) != "map[status:In repair]" {
		t.Errorf("asset patch details %v, want the status's name only", d)
	}
	if d := details("PATCH /workitems/:id"); fmt.Sprint(d["values"]) != "map[status:closed]" {
		t.Errorf("work item details %v", d)
	}
	if d := details("POST /organisations/:id/asset-statuses"); len(d) != 0 {
		t.Errorf("a create without details: %v, want {}", d)
	}
	// Another organisation's log shows none of it.
	for _, en := range e.must(200, f.mallory, "GET", "/organisations/"+f.evil+"/audit-log?$top=1000", nil).arr(t) {
		if strings.Contains(fmt.Sprint(en), "In repair") {
			t.Errorf("Acme's change in Evil's log: %v", en)
		}
	}
	ctx := context.Background()
	if problems, _, err := db.VerifyAudit(ctx, e.store.R); err != nil || len(problems) != 0 {
		t.Fatalf("verify: %v %v", problems, err)
	}
	if _, err := e.write(`UPDATE audit_log SET details = replace(details, 'In repair', 'Fine') WHERE details LIKE '%In repair%'`); err != nil {
		t.Fatal(err)
	}
	if problems, _, _ := db.VerifyAudit(ctx, e.store.R); len(problems) != 1 || !strings.Contains(problems[0], "altered") {
		t.Errorf("after altering details: %v", problems)
	}
}
