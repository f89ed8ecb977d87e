package server

import (
	"strings"
	"testing"
)

func TestAssetStatuses(t *testing.T) {
	t.Parallel()
	f := newOrgFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	e.run(t, []scenario{
		{"member cannot create", f.bob, "POST", acme + "/asset-statuses", map[string]any{"name": "Live"}, 403, nil},
		{"other organisation cannot create", f.mallory, "POST", acme + "/asset-statuses", map[string]any{"name": "Live"}, 403, nil},
		{"absent organisation", f.alice, "POST", "/organisations/123456789/asset-statuses", map[string]any{}, 400, nil},
		{"name too long", f.alice, "POST", acme + "/asset-statuses", map[string]any{"name": strings.Repeat("n", 21)}, 400, wantField("name")},
		{"active wrong type", f.alice, "POST", acme + "/asset-statuses", map[string]any{"active": "yes"}, 400, wantField("active")},
		{"defaults", f.alice, "POST", acme + "/asset-statuses", map[string]any{}, 201, func(t *testing.T, r *testResponse) {
			if o := r.obj(t); o["name"] != "new asset status" || o["active"] != true {
				t.Errorf("got %v", o)
			}
		}},
	})
	st := e.must(201, f.alice, "POST", acme+"/asset-statuses", map[string]any{"name": "Broken", "active": false, "description": "Out"}).obj(t)
	sp := "/api/assetstatuses/" + st["id"].(string)
	e.run(t, []scenario{
		{"member lists", f.bob, "GET", acme + "/asset-statuses", nil, 200, wantLen(2)},
		{"filter active", f.bob, "GET", acme + "/asset-statuses?$filter=active%20eq%20false", nil, 200, wantLen(1)},
		{"other organisation cannot list", f.mallory, "GET", acme + "/asset-statuses", nil, 403, nil},
		{"member gets", f.bob, "GET", sp, nil, 200, wantKey("name", "Broken")},
		{"other organisation cannot get", f.mallory, "GET", sp, nil, 403, nil},
		{"absent", f.bob, "GET", "/api/assetstatuses/123456789", nil, 404, nil},
		{"other organisation cannot patch", f.mallory, "PATCH", sp, map[string]any{"active": true}, 403, nil},
		{"pending member cannot patch", f.pen, "PATCH", sp, map[string]any{"active": true}, 403, nil},
		{"member patches (the row asks membership)", f.bob, "PATCH", sp, map[string]any{"active": true}, 200, wantKey("active", true)},
		{"patch bad name", f.bob, "PATCH", sp, map[string]any{"name": "x"}, 400, wantField("name")},
		{"patch read-only id", f.bob, "PATCH", sp, map[string]any{"id": "1"}, 400, wantField("id")},
	})
}

func TestAssetZones(t *testing.T) {
	t.Parallel()
	f := newOrgFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	e.run(t, []scenario{
		{"member cannot create", f.bob, "POST", acme + "/asset-zones", map[string]any{"name": "Cab"}, 403, nil},
		{"other organisation cannot create", f.mallory, "POST", acme + "/asset-zones", map[string]any{"name": "Cab"}, 403, nil},
		{"code over 12", f.alice, "POST", acme + "/asset-zones", map[string]any{"code": strings.Repeat("c", 13)}, 400, wantField("code")},
		{"default name", f.alice, "POST", acme + "/asset-zones", map[string]any{}, 201, wantKey("name", "new asset zone")},
	})
	cab := e.must(201, f.alice, "POST", acme+"/asset-zones", map[string]any{"name": "Driver cab", "code": "CAB"}).obj(t)
	typ := e.must(201, f.alice, "POST", acme+"/asset-types", map[string]any{"ephemerality": 0, "name": "Truck"}).obj(t)
	zp, tp := "/api/assetzones/"+cab["id"].(string), "/api/assettype/"+typ["id"].(string)
	e.must(200, f.alice, "PUT", tp+"/asset-zones/"+cab["id"].(string), nil)
	e.run(t, []scenario{
		{"member lists", f.bob, "GET", acme + "/asset-zones", nil, 200, wantLen(2)},
		{"name part", f.bob, "GET", acme + "/asset-zones?name=CAB", nil, 200, wantLen(1)},
		{"zones of a type", f.bob, "GET", acme + "/asset-zones?type=" + typ["id"].(string), nil, 200, wantLen(1)},
		{"bad type filter", f.bob, "GET", acme + "/asset-zones?type=x", nil, 400, wantField("type")},
		{"other organisation cannot list", f.mallory, "GET", acme + "/asset-zones", nil, 403, nil},
		{"member gets", f.bob, "GET", zp, nil, 200, wantKey("code", "CAB")},
		{"other organisation cannot get", f.mallory, "GET", zp, nil, 403, nil},
		{"absent", f.bob, "GET", "/api/assetzones/123456789", nil, 404, nil},
		{"member cannot patch", f.bob, "PATCH", zp, map[string]any{"code": "X"}, 403, nil},
		{"other organisation cannot patch", f.mallory, "PATCH", zp, map[string]any{"code": "X"}, 403, nil},
		{"patch", f.alice, "PATCH", zp, map[string]any{"code": "CB", "name": "Cab"}, 200, wantKey("code", "CB")},
	})
}

func TestAssetFieldsAndTypes(t *testing.T) {
	t.Parallel()
	f := newOrgFixture(t)
	e, acme, evil := f.e, "/organisations/"+f.acme, "/organisations/"+f.evil
	e.run(t, []scenario{
		{"member cannot create a field", f.bob, "POST", acme + "/asset-fields", map[string]any{"name": "Mileage", "type": 1}, 403, nil},
		{"other organisation cannot create a field", f.mallory, "POST", acme + "/asset-fields", map[string]any{"name": "Mileage", "type": 1}, 403, nil},
		{"type required", f.alice, "POST", acme + "/asset-fields", map[string]any{"name": "Mileage"}, 400, wantField("type")},
		{"type out of range", f.alice, "POST", acme + "/asset-fields", map[string]any{"name": "Mileage", "type": 7}, 400, wantField("type")},
		{"values only for enums", f.alice, "POST", acme + "/asset-fields", map[string]any{"name": "Mileage", "type": 1, "values": []string{"a"}}, 400, wantField("values")},
		{"repeated enum value", f.alice, "POST", acme + "/asset-fields", map[string]any{"name": "Fuel", "type": 4, "values": []string{"a", "a"}}, 400, wantField("values")},
		{"units too long", f.alice, "POST", acme + "/asset-fields", map[string]any{"name": "Mileage", "type": 1, "units": strings.Repeat("u", 21)}, 400, wantField("units")},
	})
	mileage := e.must(201, f.alice, "POST", acme+"/asset-fields", map[string]any{"name": "Mileage", "type": 1, "units": "km"}).obj(t)
	fuel := e.must(201, f.alice, "POST", acme+"/asset-fields", map[string]any{"name": "Fuel", "type": 4, "values": []string{"diesel", "petrol"}}).obj(t)
	if vals := fuel["enum_values"].([]any); len(vals) != 2 || vals[0].(map[string]any)["value"] != "diesel" {
		t.Fatalf("enum values %v", fuel)
	}
	dieselID := fuel["enum_values"].([]any)[0].(map[string]any)["id"]
	fp := "/api/assetfields/" + fuel["id"].(string)
	evilField := e.must(201, f.mallory, "POST", evil+"/asset-fields", map[string]any{"name": "Evil", "type": 0}).obj(t)["id"].(string)
	evilZone := e.must(201, f.mallory, "POST", evil+"/asset-zones", map[string]any{"name": "Evil"}).obj(t)["id"].(string)
	evilFleet := e.must(201, f.mallory, "POST", evil+"/fleets", map[string]any{"name": "Evil"}).obj(t)["id"].(string)
	e.run(t, []scenario{
		{"member lists fields", f.bob, "GET", acme + "/asset-fields", nil, 200, wantLen(2)},
		{"other organisation cannot list fields", f.mallory, "GET", acme + "/asset-fields", nil, 403, nil},
		{"member gets a field", f.bob, "GET", fp, nil, 200, wantKey("type", 4)},
		{"other organisation cannot get a field", f.mallory, "GET", fp, nil, 403, nil},
		{"absent field", f.bob, "GET", "/api/assetfields/123456789", nil, 404, nil},
		{"member cannot patch a field", f.bob, "PATCH", fp, map[string]any{"name": "Fuels"}, 403, nil},
		{"other organisation cannot patch a field", f.mallory, "PATCH", fp, map[string]any{"name": "Fuels"}, 403, nil},
		{"enum values reordered and extended, kept ids", f.alice, "PATCH", fp, map[string]any{"values": []string{"petrol", "electric", "diesel"}}, 200, func(t *testing.T, r *testResponse) {
			vals := r.obj(t)["enum_values"].([]any)
			if len(vals) != 3 || vals[2].(map[string]any)["id"] != dieselID || vals[1].(map[string]any)["value"] != "electric" {
				t.Errorf("got %v", vals)
			}
		}},
		{"enum_values read-only", f.alice, "PATCH", fp, map[string]any{"enum_values": []any{}}, 400, wantField("enum_values")},

		{"member cannot create a type", f.bob, "POST", acme + "/asset-types", map[string]any{"ephemerality": 0}, 403, nil},
		{"other organisation cannot create a type", f.mallory, "POST", acme + "/asset-types", map[string]any{"ephemerality": 0}, 403, nil},
		{"ephemerality required", f.alice, "POST", acme + "/asset-types", map[string]any{"name": "Truck"}, 400, wantField("ephemerality")},
		{"ephemerality out of range", f.alice, "POST", acme + "/asset-types", map[string]any{"ephemerality": 3}, 400, wantField("ephemerality")},
		{"fleet of another organisation", f.alice, "POST", acme + "/asset-types", map[string]any{"ephemerality": 0, "fleet_id": evilFleet}, 400, wantField("fleet_id")},
		{"absent fleet", f.alice, "POST", acme + "/asset-types", map[string]any{"ephemerality": 0, "fleet_id": "123456789"}, 400, wantField("fleet_id")},
		{"fleet 0 means none", f.alice, "POST", acme + "/asset-types", map[string]any{"ephemerality": 1, "fleet_id": 0, "name": "Convoy"}, 201, wantKey("fleet_id", nil)},
	})
	truck := e.must(201, f.alice, "POST", acme+"/asset-types", map[string]any{"ephemerality": 0, "name": "Truck"}).obj(t)
	if truck["name"] != "Truck" || len(truck["fields"].([]any)) != 0 {
		t.Fatalf("created %v", truck)
	}
	tp := "/api/assettype/" + truck["id"].(string)
	fuelID, mileageID := fuel["id"].(string), mileage["id"].(string)
	e.run(t, []scenario{
		{"member cannot attach", f.bob, "PUT", tp + "/asset-fields/" + fuelID, nil, 403, nil},
		{"other organisation cannot attach", f.mallory, "PUT", tp + "/asset-fields/" + evilField, nil, 403, nil},
		{"field of another organisation", f.alice, "PUT", tp + "/asset-fields/" + evilField, nil, 403, nil},
		{"zone of another organisation", f.alice, "PUT", tp + "/asset-zones/" + evilZone, nil, 403, nil},
		{"absent field", f.alice, "PUT", tp + "/asset-fields/123456789", nil, 404, nil},
		{"absent type", f.alice, "PUT", "/api/assettype/123456789/asset-fields/" + fuelID, nil, 404, nil},
		{"attach fuel", f.alice, "PUT", tp + "/asset-fields/" + fuelID, nil, 200, nil},
		{"attach twice is fine", f.alice, "PUT", tp + "/asset-fields/" + fuelID, nil, 200, nil},
		{"attach mileage", f.alice, "PUT", tp + "/asset-fields/" + mileageID, nil, 200, func(t *testing.T, r *testResponse) {
			fields := r.obj(t)["fields"].([]any)
			if len(fields) != 2 {
				t.Fatalf("got %v", fields)
			}
			first := fields[0].(map[string]any)
			if first["type_id"] != truck["id"] || first["field"].(map[string]any)["name"] != "Fuel" || len(first["enum_values"].([]any)) != 3 {
				t.Errorf("got %v", first)
			}
		}},
		{"detach mileage", f.alice, "DELETE", tp + "/asset-fields/" + mileageID, nil, 200, nil},
		{"detach what is not attached", f.alice, "DELETE", tp + "/asset-fields/" + mileageID, nil, 400, nil},
		{"detach a zone not attached", f.alice, "DELETE", tp + "/asset-zones/" + evilZone, nil, 403, nil},
		{"member lists types", f.bob, "GET", acme + "/asset-types", nil, 200, wantLen(2)},
		{"ephemerality filter", f.bob, "GET", acme + "/asset-types?ephemerality=1", nil, 200, wantLen(1)},
		{"bad ephemerality filter", f.bob, "GET", acme + "/asset-types?ephemerality=9", nil, 400, wantField("ephemerality")},
		{"other organisation cannot list types", f.mallory, "GET", acme + "/asset-types", nil, 403, nil},
		{"member gets a type with its fields", f.bob, "GET", tp, nil, 200, func(t *testing.T, r *testResponse) {
			if fields := r.obj(t)["fields"].([]any); len(fields) != 1 {
				t.Errorf("got %v", fields)
			}
		}},
		{"other organisation cannot get a type", f.mallory, "GET", tp, nil, 403, nil},
		{"absent type", f.bob, "GET", "/api/assettype/123456789", nil, 404, nil},
		{"member cannot patch a type", f.bob, "PATCH", tp, map[string]any{"name": "Lorry"}, 403, nil},
		{"other organisation cannot patch a type", f.mallory, "PATCH", tp, map[string]any{"name": "Lorry"}, 403, nil},
		{"patch fleet of another organisation", f.alice, "PATCH", tp, map[string]any{"fleet_id": evilFleet}, 400, wantField("fleet_id")},
		{"ephemerality is read-only", f.alice, "PATCH", tp, map[string]any{"ephemerality": 2}, 400, wantField("ephemerality")},
		{"unchanged ephemerality is fine", f.alice, "PATCH", tp, map[string]any{"ephemerality": 0, "name": "Lorry"}, 200, wantKey("name", "Lorry")},
	})
}
