package server

import (
	"strings"
	"testing"
)

func TestFleets(t *testing.T) {
	t.Parallel()
	f := newOrgFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	prefix := e.must(201, f.alice, "POST", acme+"/prefixes", map[string]any{"number_format": "TR-{number}", "number_digits": 3}).obj(t)["id"].(string)
	evilPrefix := e.must(201, f.mallory, "POST", "/organisations/"+f.evil+"/prefixes", map[string]any{"number_format": "EV-{number}"}).obj(t)["id"].(string)
	e.run(t, []scenario{
		{"member without MANAGE_FLEETS cannot create", f.bob, "POST", acme + "/fleets", map[string]any{"name": "Trucks"}, 403, nil},
		{"other organisation cannot create", f.mallory, "POST", acme + "/fleets", map[string]any{"name": "Trucks"}, 403, nil},
		{"pending member cannot create", f.pen, "POST", acme + "/fleets", map[string]any{"name": "Trucks"}, 403, nil},
		{"absent organisation", f.alice, "POST", "/organisations/123456789/fleets", map[string]any{"name": "Trucks"}, 400, nil},
		{"name required", f.alice, "POST", acme + "/fleets", map[string]any{}, 400, wantField("name")},
		{"name too short", f.alice, "POST", acme + "/fleets", map[string]any{"name": "T"}, 400, wantField("name")},
		{"name too long", f.alice, "POST", acme + "/fleets", map[string]any{"name": strings.Repeat("t", 21)}, 400, wantField("name")},
		{"name wrong type", f.alice, "POST", acme + "/fleets", map[string]any{"name": 7}, 400, wantField("name")},
		{"prefix of another organisation", f.alice, "POST", acme + "/fleets", map[string]any{"name": "Trucks", "prefix_id": evilPrefix}, 400, wantField("prefix_id")},
		{"malformed JSON", f.alice, "POST", acme + "/fleets", `{"name":`, 400, nil},
		{"id is read-only", f.alice, "POST", acme + "/fleets", map[string]any{"name": "Trucks", "id": "5"}, 400, wantField("id")},
	})
	trucks := e.must(201, f.alice, "POST", acme+"/fleets", map[string]any{"name": " Trucks ", "description": "Road", "prefix_id": prefix, "colour": "ignored"}).obj(t)
	if trucks["name"] != "Trucks" || trucks["prefix_id"] != prefix || trucks["organisation_id"] != f.acme {
		t.Fatalf("created %v", trucks)
	}
	vans := e.must(201, f.alice, "POST", acme+"/fleets", map[string]any{"name": "Vans"}).obj(t)
	tp, vp := "/fleets/"+trucks["id"].(string), "/fleets/"+vans["id"].(string)
	e.run(t, []scenario{
		{"member lists", f.bob, "GET", acme + "/fleets", nil, 200, wantLen(2)},
		{"list filter", f.bob, "GET", acme + "/fleets?$filter=" + "startswith(name,'tr')", nil, 200, wantLen(1)},
		{"other organisation cannot list", f.mallory, "GET", acme + "/fleets", nil, 403, nil},
		{"member gets", f.bob, "GET", tp, nil, 200, wantKey("name", "Trucks")},
		{"a member without the permission does not manage it", f.bob, "GET", tp, nil, 200, wantFleetManage(false)},
		{"the owner manages it", f.alice, "GET", tp, nil, 200, wantFleetManage(true)},
		{"other organisation cannot get", f.mallory, "GET", tp, nil, 403, nil},
		{"absent fleet", f.bob, "GET", "/fleets/123456789", nil, 404, nil},
		{"not an id", f.bob, "GET", "/fleets/x", nil, 400, nil},
		{"member cannot patch", f.bob, "PATCH", tp, map[string]any{"name": "Lorries"}, 403, nil},
		{"other organisation cannot patch", f.mallory, "PATCH", tp, map[string]any{"name": "Lorries"}, 403, nil},
		{"patch read-only organisation", f.alice, "PATCH", tp, map[string]any{"organisation_id": f.evil}, 400, wantField("organisation_id")},
		{"patch bad name", f.alice, "PATCH", tp, map[string]any{"name": "L"}, 400, wantField("name")},
		{"patch prefix of another organisation", f.alice, "PATCH", tp, map[string]any{"prefix_id": evilPrefix}, 400, wantField("prefix_id")},
		{"patch", f.alice, "PATCH", tp, map[string]any{"name": "Lorries", "prefix_id": nil}, 200, func(t *testing.T, r *testResponse) {
			if o := r.obj(t); o["name"] != "Lorries" || o["prefix_id"] != nil || o["description"] != "Road" {
				t.Errorf("got %v", o)
			}
		}},

		// The fleet grant layer: MANAGE_FLEETS on one fleet only.
		{"member cannot grant on a fleet", f.bob, "PATCH", tp + "/permissions/" + f.bob.ID, map[string]any{"permissions": map[string]string{"MANAGE_FLEETS": "allow"}}, 403, nil},
		{"other organisation cannot grant", f.mallory, "PATCH", tp + "/permissions/" + f.mallory.ID, map[string]any{"permissions": map[string]string{"MANAGE_FLEETS": "allow"}}, 403, nil},
		{"only fleet permissions on a fleet", f.alice, "PATCH", tp + "/permissions/" + f.bob.ID, map[string]any{"permissions": map[string]string{"MANAGE_ROLES": "allow"}}, 400, wantField("permissions.MANAGE_ROLES")},
		{"grant target outside the organisation", f.alice, "PATCH", tp + "/permissions/" + f.mallory.ID, map[string]any{"permissions": map[string]string{"MANAGE_FLEETS": "allow"}}, 404, nil},
		{"owner grants MANAGE_FLEETS on the fleet", f.alice, "PATCH", tp + "/permissions/" + f.bob.ID, map[string]any{"permissions": map[string]string{"MANAGE_FLEETS": "allow"}}, 200, func(t *testing.T, r *testResponse) {
			if p := r.obj(t)["permissions"].(map[string]any); p["MANAGE_FLEETS"] != "allow" {
				t.Errorf("got %v", p)
			}
		}},
		{"grantee patches that fleet", f.bob, "PATCH", tp, map[string]any{"description": "by bob"}, 200, wantKey("description", "by bob")},
		{"the fleet says the grantee manages it", f.bob, "GET", tp, nil, 200, wantFleetManage(true)},
		{"but not the other fleet", f.bob, "GET", vp, nil, 200, wantFleetManage(false)},
		{"but not another fleet", f.bob, "PATCH", vp, map[string]any{"description": "by bob"}, 403, nil},
		{"nor the organisation's catalogue", f.bob, "POST", acme + "/fleets", map[string]any{"name": "Bobs"}, 403, nil},
		{"grantee lists the fleet's grants", f.bob, "GET", tp + "/permissions", nil, 200, wantLen(1)},
		{"other organisation cannot list grants", f.mallory, "GET", tp + "/permissions", nil, 403, nil},
		{"grants of an absent fleet", f.alice, "GET", "/fleets/123456789/permissions", nil, 404, nil},
		{"grant withdrawn", f.alice, "PATCH", tp + "/permissions/" + f.bob.ID, map[string]any{"permissions": map[string]string{"MANAGE_FLEETS": "inherit"}}, 200, nil},
		{"access gone on the next request", f.bob, "PATCH", tp, map[string]any{"description": "again"}, 403, nil},

		{"member cannot delete", f.bob, "DELETE", vp, nil, 403, nil},
		{"other organisation cannot delete", f.mallory, "DELETE", vp, nil, 403, nil},
		{"delete an empty fleet", f.alice, "DELETE", vp, nil, 204, nil},
		{"gone", f.alice, "GET", vp, nil, 404, nil},
		{"delete absent", f.alice, "DELETE", vp, nil, 404, nil},
	})
	// A fleet an asset type refers to is not empty.
	e.must(201, f.alice, "POST", acme+"/asset-types", map[string]any{"ephemerality": 0, "fleet_id": trucks["id"]})
	e.run(t, []scenario{{"fleet in use", f.alice, "DELETE", tp, nil, 400, nil}})
}

// wantFleetManage checks a fleet's permissions object for MANAGE_FLEETS.
func wantFleetManage(want bool) func(*testing.T, *testResponse) {
	return func(t *testing.T, r *testResponse) {
		t.Helper()
		p, ok := r.obj(t)["permissions"].(map[string]any)
		if !ok || p["MANAGE_FLEETS"] != want {
			t.Errorf("permissions %v, want MANAGE_FLEETS %v", r.obj(t)["permissions"], want)
		}
	}
}
