package server

import (
	"strings"
	"testing"
)

func TestLocations(t *testing.T) {
	t.Parallel()
	f := newOrgFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	e.run(t, []scenario{
		{"member without MANAGE_LOCATIONS cannot create", f.bob, "POST", acme + "/locations", map[string]any{"name": "Depot"}, 403, nil},
		{"other organisation cannot create", f.mallory, "POST", acme + "/locations", map[string]any{"name": "Depot"}, 403, nil},
		{"absent organisation", f.alice, "POST", "/organisations/123456789/locations", map[string]any{"name": "Depot"}, 400, nil},
		{"latitude without longitude", f.alice, "POST", acme + "/locations", map[string]any{"latitude": 51.5}, 400, wantField("latitude")},
		{"longitude without latitude", f.alice, "POST", acme + "/locations", map[string]any{"longitude": -0.1}, 400, wantField("latitude")},
		{"latitude out of range", f.alice, "POST", acme + "/locations", map[string]any{"latitude": 91, "longitude": 0}, 400, wantField("latitude")},
		{"bad time zone", f.alice, "POST", acme + "/locations", map[string]any{"timezone_code": "Mars/Olympus"}, 400, wantField("timezone_code")},
		{"bad colour", f.alice, "POST", acme + "/locations", map[string]any{"colour": "blue"}, 400, wantField("colour")},
		{"code over 12", f.alice, "POST", acme + "/locations", map[string]any{"code": strings.Repeat("c", 13)}, 400, wantField("code")},
		{"name over 200", f.alice, "POST", acme + "/locations", map[string]any{"name": strings.Repeat("n", 201)}, 400, wantField("name")},
		{"latitude wrong type", f.alice, "POST", acme + "/locations", map[string]any{"latitude": "north", "longitude": 0}, 400, wantField("latitude")},
	})
	depot := e.must(201, f.alice, "POST", acme+"/locations", map[string]any{
		"name": "Depot", "code": "D1", "color": "#ff0000", "latitude": 51.5, "longitude": -0.12, "radius": 150,
		"address": "1 Yard Lane", "timezone_code": "Europe/London", "delivery": true,
	}).obj(t)
	if depot["colour"] != "#FF0000" || depot["color"] != "#FF0000" || depot["latitude"] != 51.5 || depot["delivery"] != true ||
		depot["timezone_code"] != "Europe/London" || len(depot["sub_locations"].([]any)) != 0 {
		t.Fatalf("created %v", depot)
	}
	site := e.must(201, f.alice, "POST", acme+"/locations", map[string]any{}).obj(t)
	if site["name"] != "new location" || site["latitude"] != nil || site["delivery"] != false {
		t.Fatalf("defaults %v", site)
	}
	dp := "/locations/" + depot["id"].(string)
	e.run(t, []scenario{
		{"member without MANAGE_LOCATIONS cannot add a sub location", f.bob, "POST", dp + "/sub-locations", map[string]any{"name": "Bay 1"}, 403, nil},
		{"other organisation cannot add a sub location", f.mallory, "POST", dp + "/sub-locations", map[string]any{"name": "Bay 1"}, 403, nil},
		{"sub location of an absent location", f.alice, "POST", "/locations/123456789/sub-locations", map[string]any{"name": "Bay 1"}, 400, nil},
		{"negative capacity", f.alice, "POST", dp + "/sub-locations", map[string]any{"asset_capacity": -1}, 400, wantField("asset_capacity")},
		{"add a sub location", f.alice, "POST", dp + "/sub-locations", map[string]any{"name": "Bay 1", "code": "B1", "asset_capacity": 12}, 201, func(t *testing.T, r *testResponse) {
			o := r.obj(t)
			if o["asset_capacity"] != float64(12) || o["enabled"] != true || o["location_id"] != depot["id"] {
				t.Errorf("got %v", o)
			}
		}},
		{"default sub location", f.alice, "POST", dp + "/sub-locations", map[string]any{}, 201, func(t *testing.T, r *testResponse) {
			if o := r.obj(t); o["name"] != "new sub location" || o["asset_capacity"] != nil {
				t.Errorf("got %v", o)
			}
		}},
		{"member lists sub locations", f.bob, "GET", dp + "/sub-locations", nil, 200, wantLen(2)},
		{"other organisation cannot list sub locations", f.mallory, "GET", dp + "/sub-locations", nil, 403, nil},
		{"member lists locations with their sub locations", f.bob, "GET", acme + "/locations", nil, 200, func(t *testing.T, r *testResponse) {
			list := r.arr(t)
			if len(list) != 2 || len(list[0]["sub_locations"].([]any)) != 2 {
				t.Errorf("got %v", list)
			}
		}},
		{"delivery locations", f.bob, "GET", acme + "/locations?delivery=true", nil, 200, wantLen(1)},
		{"other locations", f.bob, "GET", acme + "/locations?delivery=false", nil, 200, wantLen(1)},
		{"bad delivery filter", f.bob, "GET", acme + "/locations?delivery=often", nil, 400, wantField("delivery")},
		{"other organisation cannot list", f.mallory, "GET", acme + "/locations", nil, 403, nil},
		{"member gets", f.bob, "GET", dp, nil, 200, wantKey("name", "Depot")},
		{"other organisation cannot get", f.mallory, "GET", dp, nil, 403, nil},
		{"absent location", f.bob, "GET", "/locations/123456789", nil, 404, nil},
		{"not an id", f.bob, "GET", "/locations/x", nil, 400, nil},
		{"member cannot patch", f.bob, "PATCH", dp, map[string]any{"name": "X"}, 403, nil},
		{"other organisation cannot patch", f.mallory, "PATCH", dp, map[string]any{"name": "X"}, 403, nil},
		{"patch absent", f.alice, "PATCH", "/locations/123456789", map[string]any{"name": "X"}, 404, nil},
		{"patch bad time zone", f.alice, "PATCH", dp, map[string]any{"timezone_code": "Europe/Nowhere"}, 400, wantField("timezone_code")},
		{"patch only latitude away", f.alice, "PATCH", dp, map[string]any{"latitude": nil}, 400, wantField("latitude")},
		{"patch both coordinates away", f.alice, "PATCH", dp, map[string]any{"latitude": nil, "longitude": nil}, 200, wantKey("latitude", nil)},
		{"patch fields", f.alice, "PATCH", dp, map[string]any{"name": "Main depot", "colour": "#00ff00", "delivery": false, "timezone_code": "Asia/Tokyo"}, 200, func(t *testing.T, r *testResponse) {
			o := r.obj(t)
			if o["name"] != "Main depot" || o["color"] != "#00FF00" || o["delivery"] != false || o["timezone_code"] != "Asia/Tokyo" {
				t.Errorf("got %v", o)
			}
		}},
		{"sub locations are read-only here", f.alice, "PATCH", dp, map[string]any{"sub_locations": []any{}}, 400, wantField("sub_locations")},
	})
}

func TestDisciplines(t *testing.T) {
	t.Parallel()
	f := newOrgFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	e.run(t, []scenario{
		{"member cannot create", f.bob, "POST", acme + "/disciplines", map[string]any{"name": "Civil"}, 403, nil},
		{"other organisation cannot create", f.mallory, "POST", acme + "/disciplines", map[string]any{"name": "Civil"}, 403, nil},
		{"absent organisation", f.alice, "POST", "/organisations/123456789/disciplines", map[string]any{"name": "Civil"}, 400, nil},
		{"code over 12", f.alice, "POST", acme + "/disciplines", map[string]any{"code": strings.Repeat("c", 13)}, 400, wantField("code")},
		{"enabled not settable on create", f.alice, "POST", acme + "/disciplines", map[string]any{"enabled": false}, 400, wantField("enabled")},
	})
	d := e.must(201, f.alice, "POST", acme+"/disciplines", map[string]any{"name": "Civil", "code": "CV", "description": "Earth"}).obj(t)
	if d["enabled"] != true || d["name"] != "Civil" {
		t.Fatalf("created %v", d)
	}
	path := "/api/disciplines/" + d["id"].(string)
	e.run(t, []scenario{
		{"member lists", f.bob, "GET", acme + "/disciplines", nil, 200, wantLen(1)},
		{"other organisation cannot list", f.mallory, "GET", acme + "/disciplines", nil, 403, nil},
		{"member gets", f.bob, "GET", path, nil, 200, wantKey("code", "CV")},
		{"other organisation cannot get", f.mallory, "GET", path, nil, 403, nil},
		{"absent is 400", f.bob, "GET", "/api/disciplines/123456789", nil, 400, nil},
		{"member cannot patch", f.bob, "PATCH", path, map[string]any{"enabled": false}, 403, nil},
		{"other organisation cannot patch", f.mallory, "PATCH", path, map[string]any{"enabled": false}, 403, nil},
		{"patch", f.alice, "PATCH", path, map[string]any{"enabled": false, "name": "Civil works"}, 200, wantKey("enabled", false)},
		{"patch name too long", f.alice, "PATCH", path, map[string]any{"name": strings.Repeat("n", 201)}, 400, wantField("name")},
	})
}

// TestSubLocationPatch: a sub-location's code, name and asset capacity are
// corrected in place by those who manage locations; each limit, the
// read-only fields, a member without the permission, another
// organisation's owner and an absent sub-location are refused, and a
// refusal changes nothing.
func TestSubLocationPatch(t *testing.T) {
	t.Parallel()
	f := newOrgFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	depot := e.must(201, f.alice, "POST", acme+"/locations", map[string]any{"name": "Depot"}).obj(t)["id"].(string)
	bay := e.must(201, f.alice, "POST", "/locations/"+depot+"/sub-locations", map[string]any{"name": "Bay 1", "code": "B1", "asset_capacity": 4}).obj(t)
	sp := "/sub-locations/" + bay["id"].(string)
	unchanged := func(t *testing.T) {
		t.Helper()
		for _, s := range e.must(200, f.alice, "GET", "/locations/"+depot+"/sub-locations", nil).arr(t) {
			if s["id"] == bay["id"] && (s["code"] != "B1" || s["name"] != "Bay 1" || s["asset_capacity"] != float64(4)) {
				t.Errorf("a refused change changed the sub-location: %v", s)
			}
		}
	}
	refused := func(t *testing.T, r *testResponse) { unchanged(t) }
	e.run(t, []scenario{
		{"code over 12", f.alice, "PATCH", sp, map[string]any{"code": strings.Repeat("c", 13)}, 400, wantField("code")},
		{"empty name", f.alice, "PATCH", sp, map[string]any{"name": "  "}, 400, wantField("name")},
		{"name over 200", f.alice, "PATCH", sp, map[string]any{"name": strings.Repeat("n", 201)}, 400, wantField("name")},
		{"negative capacity", f.alice, "PATCH", sp, map[string]any{"asset_capacity": -1}, 400, wantField("asset_capacity")},
		{"capacity of the wrong type", f.alice, "PATCH", sp, map[string]any{"asset_capacity": "four"}, 400, nil},
		{"another location", f.alice, "PATCH", sp, map[string]any{"location_id": depot + "1"}, 400, wantField("location_id")},
		{"malformed JSON", f.alice, "PATCH", sp, "{", 400, refused},
		{"member without MANAGE_LOCATIONS", f.bob, "PATCH", sp, map[string]any{"code": "X"}, 403, refused},
		{"another organisation's owner", f.mallory, "PATCH", sp, map[string]any{"code": "X"}, 403, refused},
		{"absent sub-location", f.alice, "PATCH", "/sub-locations/123456789", map[string]any{"code": "X"}, 404, nil},
		{"not an id", f.alice, "PATCH", "/sub-locations/x", map[string]any{"code": "X"}, 400, nil},
		{"the code alone", f.alice, "PATCH", sp, map[string]any{"code": "B1-2"}, 200, func(t *testing.T, r *testResponse) {
			if o := r.obj(t); o["code"] != "B1-2" || o["name"] != "Bay 1" || o["asset_capacity"] != float64(4) {
				t.Errorf("got %v", o)
			}
		}},
		{"name and capacity cleared", f.alice, "PATCH", sp, map[string]any{"name": " Bay one ", "asset_capacity": nil}, 200, func(t *testing.T, r *testResponse) {
			if o := r.obj(t); o["name"] != "Bay one" || o["asset_capacity"] != nil || o["code"] != "B1-2" {
				t.Errorf("got %v", o)
			}
		}},
		{"the location lists the change", f.bob, "GET", "/locations/" + depot + "/sub-locations", nil, 200, func(t *testing.T, r *testResponse) {
			if l := r.arr(t); len(l) != 1 || l[0]["code"] != "B1-2" || l[0]["name"] != "Bay one" {
				t.Errorf("got %v", l)
			}
		}},
	})
}
