package server

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
)

// assetFixture is an organisation with the catalogue assets need.
type assetFixture struct {
	*orgFixture
	prefix, otherPrefix, evilPrefix        string
	fleet, otherFleet                      string
	truck, plainType, convoy, yard         string // types: asset (prefixed), asset, temporary, permanent
	mileage, fuel, evilField, evilType     string
	status, evilStatus                     string
	depot, bay, evilLocation, subscription string
}

func newAssetFixture(t *testing.T) *assetFixture {
	f := &assetFixture{orgFixture: newOrgFixture(t)}
	e, acme, evil := f.e, "/organisations/"+f.acme, "/organisations/"+f.evil
	id := func(r *testResponse) string { return r.obj(t)["id"].(string) }
	f.prefix = id(e.must(201, f.alice, "POST", acme+"/prefixes", map[string]any{"number_format": "TR-{number}", "number_digits": 3, "unique_number": true}))
	f.otherPrefix = id(e.must(201, f.alice, "POST", acme+"/prefixes", map[string]any{"number_format": "OT-{number}"}))
	f.evilPrefix = id(e.must(201, f.mallory, "POST", evil+"/prefixes", map[string]any{"number_format": "EV-{number}"}))
	f.fleet = id(e.must(201, f.alice, "POST", acme+"/fleets", map[string]any{"name": "Trucks"}))
	f.otherFleet = id(e.must(201, f.alice, "POST", acme+"/fleets", map[string]any{"name": "Vans"}))
	f.truck = id(e.must(201, f.alice, "POST", acme+"/asset-types", map[string]any{"ephemerality": 0, "name": "Truck", "prefix_id": f.prefix, "fleet_id": f.fleet}))
	f.plainType = id(e.must(201, f.alice, "POST", acme+"/asset-types", map[string]any{"ephemerality": 0, "name": "Trailer"}))
	f.convoy = id(e.must(201, f.alice, "POST", acme+"/asset-types", map[string]any{"ephemerality": 1, "name": "Convoy"}))
	f.yard = id(e.must(201, f.alice, "POST", acme+"/asset-types", map[string]any{"ephemerality": 2, "name": "Yard"}))
	f.mileage = id(e.must(201, f.alice, "POST", acme+"/asset-fields", map[string]any{"name": "Mileage", "type": 1, "units": "km"}))
	f.fuel = id(e.must(201, f.alice, "POST", acme+"/asset-fields", map[string]any{"name": "Fuel", "type": 4, "values": []string{"diesel", "petrol"}}))
	for _, fld := range []string{f.mileage, f.fuel} {
		e.must(200, f.alice, "PUT", "/api/assettype/"+f.truck+"/asset-fields/"+fld, nil)
	}
	f.evilField = id(e.must(201, f.mallory, "POST", evil+"/asset-fields", map[string]any{"name": "Evil", "type": 0}))
	f.evilType = id(e.must(201, f.mallory, "POST", evil+"/asset-types", map[string]any{"ephemerality": 0}))
	f.status = id(e.must(201, f.alice, "POST", acme+"/asset-statuses", map[string]any{"name": "Live"}))
	f.evilStatus = id(e.must(201, f.mallory, "POST", evil+"/asset-statuses", map[string]any{"name": "Evil"}))
	f.depot = id(e.must(201, f.alice, "POST", acme+"/locations", map[string]any{"name": "Depot"}))
	f.bay = id(e.must(201, f.alice, "POST", "/locations/"+f.depot+"/sub-locations", map[string]any{"name": "Bay", "asset_capacity": 1}))
	f.evilLocation = id(e.must(201, f.mallory, "POST", evil+"/locations", map[string]any{"name": "Lair"}))
	f.subscription = id(e.must(201, f.alice, "POST", acme+"/asset-subscriptions", map[string]any{"name": "Basic", "capacity": 1}))
	return f
}

func TestAssets(t *testing.T) {
	t.Parallel()
	f := newAssetFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	assets := acme + "/assets"
	e.run(t, []scenario{
		{"member without MANAGE_FLEETS cannot create", f.bob, "POST", assets, map[string]any{"type_id": f.truck}, 403, nil},
		{"other organisation cannot create", f.mallory, "POST", assets, map[string]any{"type_id": f.truck}, 403, nil},
		{"absent organisation", f.alice, "POST", "/organisations/123456789/assets", map[string]any{"type_id": f.truck}, 400, nil},
		{"type required", f.alice, "POST", assets, map[string]any{"name": "T1"}, 400, wantField("type_id")},
		{"group type is no asset type", f.alice, "POST", assets, map[string]any{"type_id": f.convoy}, 400, wantField("type_id")},
		{"type of another organisation", f.alice, "POST", assets, map[string]any{"type_id": f.evilType}, 400, wantField("type_id")},
		{"bad status", f.alice, "POST", assets, map[string]any{"type_id": f.truck, "status_id": f.evilStatus}, 400, wantField("status_id")},
		{"bad location", f.alice, "POST", assets, map[string]any{"type_id": f.truck, "location_id": f.evilLocation}, 400, wantField("location_id")},
		{"unknown field", f.alice, "POST", assets, map[string]any{"type_id": f.truck, "fields": map[string]any{f.evilField: map[string]any{"value": "x"}}}, 400, wantField("fields." + f.evilField)},
		{"number field given text", f.alice, "POST", assets, map[string]any{"type_id": f.truck, "fields": map[string]any{f.mileage: map[string]any{"value": "far"}}}, 400, wantField("fields." + f.mileage)},
		{"enum value not in the list", f.alice, "POST", assets, map[string]any{"type_id": f.truck, "fields": map[string]any{f.fuel: map[string]any{"value": "coal"}}}, 400, wantField("fields." + f.fuel)},
		{"prefix mismatch", f.alice, "POST", assets, map[string]any{"type_id": f.truck, "prefix_id": f.otherPrefix}, 400, wantField("prefix_id")},
		{"bad prefix", f.alice, "POST", assets, map[string]any{"type_id": f.plainType, "prefix_id": f.evilPrefix}, 400, wantField("prefix_id")},
		{"name too long", f.alice, "POST", assets, map[string]any{"type_id": f.truck, "name": strings.Repeat("n", 21)}, 400, wantField("name")},
		{"number not positive", f.alice, "POST", assets, map[string]any{"type_id": f.truck, "number": 0}, 400, wantField("number")},
		{"nothing drawn by refused creates", f.alice, "GET", "/api/prefixes/" + f.prefix, nil, 200, wantKey("last_number", 0)},
	})
	first := e.must(201, f.alice, "POST", assets, map[string]any{"type_id": f.truck, "name": "Truck one", "status_id": f.status,
		"sub_location_id": f.bay, "subscription_id": f.subscription,
		"fields": map[string]any{f.mileage: map[string]any{"value": 1200.5}, f.fuel: map[string]any{"value": "diesel"}}}).obj(t)
	fields := first["fields"].(map[string]any)
	if first["formatted_number"] != "TR-001" || first["fleet_id"] != f.fleet || first["location"].(map[string]any)["id"] != f.depot ||
		first["status"].(map[string]any)["name"] != "Live" || first["type"].(map[string]any)["name"] != "Truck" ||
		fields[f.mileage].(map[string]any)["value"] != 1200.5 || fields[f.mileage].(map[string]any)["units"] != "km" {
		t.Fatalf("created %v", first)
	}
	ap := "/api/assets/" + first["id"].(string)
	group := e.must(201, f.alice, "POST", acme+"/asset-groups", map[string]any{"type_id": f.convoy, "name": "Convoy A", "location_id": f.depot}).obj(t)
	fleetGroup := e.must(201, f.alice, "POST", acme+"/asset-groups", map[string]any{"type_id": f.convoy, "name": "Van convoy", "fleet_id": f.otherFleet}).obj(t)
	e.run(t, []scenario{
		{"next number", f.alice, "POST", assets, map[string]any{"type_id": f.truck}, 201, wantKey("formatted_number", "TR-002")},
		{"explicit number", f.alice, "POST", assets, map[string]any{"type_id": f.truck, "number": 10}, 201, wantKey("formatted_number", "TR-010")},
		{"explicit number taken on a unique prefix", f.alice, "POST", assets, map[string]any{"type_id": f.truck, "number": 10}, 400, wantField("number")},
		{"draws continue above it", f.alice, "POST", assets, map[string]any{"type_id": f.truck}, 201, wantKey("formatted_number", "TR-011")},
		{"no prefix: the organisation's counter", f.alice, "POST", assets, map[string]any{"type_id": f.plainType, "name": "Trailer"}, 201, wantKey("formatted_number", "1")},
		{"full subscription", f.alice, "POST", assets, map[string]any{"type_id": f.truck, "subscription_id": f.subscription}, 429, nil},
		{"full sub location", f.alice, "POST", assets, map[string]any{"type_id": f.truck, "sub_location_id": f.bay}, 429, nil},
		{"group not in the asset's fleet", f.alice, "POST", assets, map[string]any{"type_id": f.truck, "group_id": fleetGroup["id"]}, 400, wantField("group_id")},
		{"subscription shows its allocation", f.alice, "GET", "/asset-subscriptions/" + f.subscription, nil, 200, wantKey("allocated", 1)},
		{"capacity below allocation", f.alice, "PATCH", "/asset-subscriptions/" + f.subscription, map[string]any{"capacity": 0}, 400, wantField("capacity")},
		{"member cannot read subscriptions", f.bob, "GET", "/asset-subscriptions/" + f.subscription, nil, 403, nil},
		{"other organisation cannot list subscriptions", f.mallory, "GET", acme + "/asset-subscriptions", nil, 403, nil},

		{"member gets", f.bob, "GET", ap, nil, 200, wantKey("name", "Truck one")},
		{"other organisation cannot get", f.mallory, "GET", ap, nil, 403, nil},
		{"absent asset", f.bob, "GET", "/api/assets/123456789", nil, 404, nil},
		{"a group is no asset", f.bob, "GET", "/api/assets/" + group["id"].(string), nil, 404, nil},
		{"member cannot patch", f.bob, "PATCH", ap, map[string]any{"name": "X1"}, 403, nil},
		{"other organisation cannot patch", f.mallory, "PATCH", ap, map[string]any{"name": "X1"}, 403, nil},
		{"patch unknown field", f.alice, "PATCH", ap, map[string]any{"fields": map[string]any{"123": 1}}, 400, wantField("fields.123")},
		{"patch number refused", f.alice, "PATCH", ap, map[string]any{"number": 5}, 400, nil},
		{"patch read-only formatted_number", f.alice, "PATCH", ap, map[string]any{"formatted_number": "X"}, 400, wantField("formatted_number")},
		{"patch group not in fleet", f.alice, "PATCH", ap, map[string]any{"group_id": fleetGroup["id"]}, 400, wantField("group_id")},
		{"patch into a group takes its location", f.alice, "PATCH", ap, map[string]any{"group_id": group["id"], "location_id": nil,
			"fields": map[string]any{f.fuel: nil}}, 200, func(t *testing.T, r *testResponse) {
			o := r.obj(t)
			if o["group_id"] != group["id"] || o["location"].(map[string]any)["id"] != f.depot || o["position"] != float64(0) {
				t.Errorf("got %v", o)
			}
			if _, ok := o["fields"].(map[string]any)[f.fuel]; ok {
				t.Errorf("fuel not removed: %v", o["fields"])
			}
		}},
		{"fields by name and built-ins", f.alice, "PATCH", ap + "/fields", map[string]any{"mileage": 1300, "Fuel": "petrol", "name": "Truck 1"}, 200, func(t *testing.T, r *testResponse) {
			o := r.obj(t)
			if o["name"] != "Truck 1" || o["fields"].(map[string]any)[f.mileage].(map[string]any)["value"] != float64(1300) {
				t.Errorf("got %v", o)
			}
		}},
		{"fields by unknown name", f.alice, "PATCH", ap + "/fields", map[string]any{"colour": "red"}, 400, wantField("colour")},
		{"a bad value is named as sent", f.alice, "PATCH", ap + "/fields", map[string]any{"Mileage": "far"}, 400, wantField("Mileage")},
		{"fields by name, other organisation", f.mallory, "PATCH", ap + "/fields", map[string]any{"mileage": 1}, 403, nil},
		{"subscription moved away frees its place", f.alice, "PATCH", ap, map[string]any{"subscription_id": nil}, 200, nil},
		{"freed", f.alice, "GET", "/asset-subscriptions/" + f.subscription, nil, 200, wantKey("allocated", 0)},
	})
	// Lists.
	e.run(t, []scenario{
		{"member lists assets", f.bob, "GET", assets, nil, 200, func(t *testing.T, r *testResponse) {
			if len(r.arr(t)) != 5 || r.Header.Get("X-Total-Count") != "5" {
				t.Errorf("got %d, total %s", len(r.arr(t)), r.Header.Get("X-Total-Count"))
			}
		}},
		{"page", f.bob, "GET", assets + "?$top=2&$skip=1", nil, 200, wantLen(2)},
		{"types filter", f.bob, "GET", assets + "?types=" + f.plainType, nil, 200, wantLen(1)},
		{"fleets filter", f.bob, "GET", assets + "?fleets=" + f.fleet + "," + f.otherFleet, nil, 200, wantLen(4)},
		{"status filter", f.bob, "GET", assets + "?status=" + f.status, nil, 200, wantLen(1)},
		{"locations filter (through the group)", f.bob, "GET", assets + "?locations=" + f.depot, nil, 200, wantLen(1)},
		{"asset_groups filter", f.bob, "GET", assets + "?asset_groups=" + group["id"].(string), nil, 200, wantLen(1)},
		{"name prefix, normalised", f.bob, "GET", assets + "?name=TRUCK%20%201", nil, 200, wantLen(1)},
		{"$filter", f.bob, "GET", assets + "?$filter=formatted_number%20eq%20'TR-010'", nil, 200, wantLen(1)},
		{"bad id filter", f.bob, "GET", assets + "?types=x", nil, 400, wantField("types")},
		{"other organisation cannot list", f.mallory, "GET", assets, nil, 403, nil},
		{"pending member cannot list", f.pen, "GET", assets, nil, 403, nil},
		{"absent organisation", f.bob, "GET", "/organisations/123456789/assets", nil, 400, nil},
	})
}

func TestAssetGroups(t *testing.T) {
	t.Parallel()
	f := newAssetFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	groups := acme + "/asset-groups"
	mk := func(name string) string {
		return e.must(201, f.alice, "POST", acme+"/assets", map[string]any{"type_id": f.plainType, "name": name}).obj(t)["id"].(string)
	}
	a1, a2, a3 := mk("A1"), mk("A2"), mk("A3")
	e.run(t, []scenario{
		{"member cannot create", f.bob, "POST", groups, map[string]any{"type_id": f.convoy, "name": "C1"}, 403, nil},
		{"other organisation cannot create", f.mallory, "POST", groups, map[string]any{"type_id": f.convoy, "name": "C1"}, 403, nil},
		{"asset type is no group type", f.alice, "POST", groups, map[string]any{"type_id": f.truck, "name": "C1"}, 400, wantField("type_id")},
		{"name required", f.alice, "POST", groups, map[string]any{"type_id": f.convoy}, 400, wantField("name")},
	})
	conv := e.must(201, f.alice, "POST", groups, map[string]any{"type_id": f.convoy, "name": "Convoy", "location_id": f.depot}).obj(t)
	yard := e.must(201, f.alice, "POST", groups, map[string]any{"type_id": f.yard, "name": "Yard"}).obj(t)
	cp, yp := "/api/assetgroups/"+conv["id"].(string), "/api/assetgroups/"+yard["id"].(string)
	single := "/api/assetgroups/" + a1
	order := func(ids ...string) func(t *testing.T, r *testResponse) {
		return func(t *testing.T, r *testResponse) {
			var got []string
			for _, m := range r.obj(t)["assets"].([]any) {
				mm := m.(map[string]any)
				got = append(got, mm["asset"].(map[string]any)["id"].(string))
				if int(mm["position"].(float64)) != len(got)-1 {
					t.Errorf("positions not dense: %v", r.obj(t)["assets"])
				}
			}
			if !slices.Equal(got, ids) {
				t.Errorf("order %v, want %v", got, ids)
			}
		}
	}
	e.run(t, []scenario{
		{"member adds to a temporary group", f.bob, "PUT", cp + "/assets/" + a1, nil, 200, order(a1)},
		{"other organisation cannot add", f.mallory, "PUT", cp + "/assets/" + a2, nil, 403, nil},
		{"absent asset", f.bob, "PUT", cp + "/assets/123456789", nil, 404, nil},
		{"absent group", f.bob, "PUT", "/api/assetgroups/123456789/assets/" + a2, nil, 404, nil},
		{"permanent group refuses", f.bob, "PUT", yp + "/assets/" + a2, nil, 400, nil},
		{"single group refuses", f.bob, "PUT", single + "/assets/" + a2, nil, 400, nil},
		{"add a2", f.bob, "PUT", cp + "/assets/" + a2, nil, 200, order(a1, a2)},
		{"add a3", f.bob, "PUT", cp + "/assets/" + a3, nil, 200, order(a1, a2, a3)},
		{"add again changes nothing", f.bob, "PUT", cp + "/assets/" + a3, nil, 200, order(a1, a2, a3)},
		{"move a3 first", f.bob, "PATCH", cp + "/assets/" + a3, map[string]any{"order": 0}, 200, order(a3, a1, a2)},
		{"move a3 last", f.bob, "PATCH", cp + "/assets/" + a3, map[string]any{"order": 2}, 200, order(a1, a2, a3)},
		{"order out of range", f.bob, "PATCH", cp + "/assets/" + a3, map[string]any{"order": 3}, 400, wantField("order")},
		{"negative order", f.bob, "PATCH", cp + "/assets/" + a3, map[string]any{"order": -1}, 400, wantField("order")},
		{"order required", f.bob, "PATCH", cp + "/assets/" + a3, map[string]any{}, 400, wantField("order")},
		{"order wrong type", f.bob, "PATCH", cp + "/assets/" + a3, map[string]any{"order": "first"}, 400, wantField("order")},
		{"reorder in a single group", f.bob, "PATCH", single + "/assets/" + a1, map[string]any{"order": 0}, 400, nil},
		{"other organisation cannot reorder", f.mallory, "PATCH", cp + "/assets/" + a3, map[string]any{"order": 0}, 403, nil},
		{"remove a1", f.bob, "DELETE", cp + "/assets/" + a1, nil, 200, order(a2, a3)},
		{"not in the group", f.bob, "DELETE", cp + "/assets/" + a1, nil, 400, nil},
		{"reorder one not in the group", f.bob, "PATCH", cp + "/assets/" + a1, map[string]any{"order": 0}, 400, nil},
		{"remove from a permanent group refused", f.bob, "DELETE", yp + "/assets/" + a1, nil, 400, nil},
		{"other organisation cannot remove", f.mallory, "DELETE", cp + "/assets/" + a2, nil, 403, nil},
		{"the group's location is its assets'", f.bob, "GET", "/api/assets/" + a2, nil, 200, func(t *testing.T, r *testResponse) {
			if l, _ := r.obj(t)["location"].(map[string]any); l == nil || l["id"] != f.depot {
				t.Errorf("location %v", r.obj(t)["location"])
			}
		}},
		{"an asset in an active group joins no other active group", f.alice, "PATCH", "/api/assets/" + a1, map[string]any{"group_id": yard["id"]}, 200, nil},
		{"a1 into the convoy while in the yard", f.bob, "PUT", cp + "/assets/" + a1, nil, 400, nil},

		{"single group cannot be patched", f.alice, "PATCH", single, map[string]any{"name": "Renamed"}, 400, nil},
		{"single group fields cannot be patched", f.alice, "PATCH", single + "/fields", map[string]any{"name": "Renamed"}, 400, nil},
		{"member cannot patch a group", f.bob, "PATCH", cp, map[string]any{"name": "C2"}, 403, nil},
		{"other organisation cannot patch a group", f.mallory, "PATCH", cp, map[string]any{"name": "C2"}, 403, nil},
		{"subscriptions are for assets", f.alice, "PATCH", cp, map[string]any{"subscription_id": f.subscription}, 400, nil},
		{"group patch unknown field", f.alice, "PATCH", cp, map[string]any{"fields": map[string]any{f.mileage: 1}}, 400, wantField("fields." + f.mileage)},
		{"group patch", f.alice, "PATCH", cp, map[string]any{"name": "Convoy 2", "active": false}, 200, wantKey("active", false)},
		{"group of the other kind refused", f.alice, "PATCH", cp, map[string]any{"type_id": f.truck}, 400, wantField("type_id")},
		{"inactive group: a1 may join", f.bob, "PUT", cp + "/assets/" + a1, nil, 200, nil},
		{"reactivating would put a1 in two active groups", f.alice, "PATCH", cp, map[string]any{"active": true}, 400, wantField("active")},

		{"member gets a group", f.bob, "GET", cp, nil, 200, wantKey("name", "Convoy 2")},
		{"single group shows its asset", f.bob, "GET", single, nil, 200, order(a1)},
		{"other organisation cannot get a group", f.mallory, "GET", cp, nil, 403, nil},
		{"member lists groups", f.bob, "GET", groups, nil, 200, wantLen(5)},
		{"ephemerality filter", f.bob, "GET", groups + "?ephemerality=1", nil, 200, wantLen(1)},
		{"active filter", f.bob, "GET", groups + "?active=false", nil, 200, func(t *testing.T, r *testResponse) {
			if l := r.arr(t); len(l) != 1 || l[0]["open_work_item_count"] != float64(0) {
				t.Errorf("got %v", l)
			}
		}},
		{"types filter", f.bob, "GET", groups + "?types=" + f.yard, nil, 200, wantLen(1)},
		{"locations filter", f.bob, "GET", groups + "?locations=" + f.depot, nil, 200, wantLen(1)},
		{"name filter", f.bob, "GET", groups + "?name=con", nil, 200, wantLen(1)},
		{"bad ephemerality", f.bob, "GET", groups + "?ephemerality=4", nil, 400, wantField("ephemerality")},
		{"other organisation cannot list groups", f.mallory, "GET", groups, nil, 403, nil},
	})
}

func TestAssetLogs(t *testing.T) {
	t.Parallel()
	f := newAssetFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	asset := e.must(201, f.alice, "POST", acme+"/assets", map[string]any{"type_id": f.plainType, "name": "A1"}).obj(t)["id"].(string)
	logs := "/api/assetgroups/" + asset + "/logs"
	sum := sha256.Sum256([]byte("Tyres checked"))
	e.run(t, []scenario{
		{"log required", f.bob, "POST", logs, map[string]any{}, 400, wantField("log")},
		{"latitude alone", f.bob, "POST", logs, map[string]any{"log": "x", "latitude": 1}, 400, wantField("latitude")},
		{"type other than comment", f.bob, "POST", logs, map[string]any{"log": "x", "type": "photo"}, 400, wantField("type")},
		{"negative duration", f.bob, "POST", logs, map[string]any{"log": "x", "duration": -1}, 400, wantField("duration")},
		{"bad logged_at", f.bob, "POST", logs, map[string]any{"log": "x", "logged_at": "yesterday"}, 400, wantField("logged_at")},
		{"other organisation cannot log", f.mallory, "POST", logs, map[string]any{"log": "x"}, 403, nil},
		{"absent group", f.bob, "POST", "/api/assetgroups/123456789/logs", map[string]any{"log": "x"}, 404, nil},
		{"member logs", f.bob, "POST", logs, map[string]any{"log": "Tyres checked", "latitude": 51.5, "longitude": -0.1, "duration": 600}, 201, func(t *testing.T, r *testResponse) {
			o := r.obj(t)
			if o["log_hash"] != hex.EncodeToString(sum[:]) || o["type"] != "comment" || o["attachment"] != nil || o["created_by"].(map[string]any)["id"] != f.bob.ID {
				t.Errorf("got %v", o)
			}
		}},
	})
	bobLog := e.must(200, f.bob, "GET", logs, nil).arr(t)[0]["id"].(string)
	aliceLog := e.must(201, f.alice, "POST", logs, map[string]any{"log": "Serviced"}).obj(t)["id"].(string)
	bp, ap := "/api/assetlogs/"+bobLog, "/api/assetlogs/"+aliceLog
	upload := func(u *testUser, path string) *testResponse {
		req := multipartReq(t, u, "PUT", path+"/attachment", nil, map[string][]byte{"file": []byte("report body")})
		return e.serve(req)
	}
	e.run(t, []scenario{
		{"member lists", f.bob, "GET", logs, nil, 200, wantLen(2)},
		{"other organisation cannot list", f.mallory, "GET", logs, nil, 403, nil},
		{"member gets", f.bob, "GET", ap, nil, 200, wantKey("log", "Serviced")},
		{"other organisation cannot get", f.mallory, "GET", ap, nil, 403, nil},
		{"absent log", f.bob, "GET", "/api/assetlogs/123456789", nil, 404, nil},
		{"author edits, hash follows", f.bob, "PATCH", bp, map[string]any{"log": "Tyres replaced"}, 200, func(t *testing.T, r *testResponse) {
			s := sha256.Sum256([]byte("Tyres replaced"))
			if r.obj(t)["log_hash"] != hex.EncodeToString(s[:]) {
				t.Errorf("got %v", r.obj(t))
			}
		}},
		{"coordinates away together", f.bob, "PATCH", bp, map[string]any{"latitude": nil}, 400, wantField("latitude")},
		{"log_hash read-only", f.bob, "PATCH", bp, map[string]any{"log_hash": "x"}, 400, wantField("log_hash")},
		{"another member's log needs MANAGE_FLEETS", f.bob, "PATCH", ap, map[string]any{"log": "mine"}, 403, nil},
		{"other organisation cannot edit", f.mallory, "PATCH", ap, map[string]any{"log": "mine"}, 403, nil},
		{"MANAGE_FLEETS edits another's log", f.alice, "PATCH", bp, map[string]any{"embed": "https://example.com/v"}, 200, nil},
		{"no attachment yet", f.bob, "GET", bp + "/attachment", nil, 404, nil},
		{"member cannot delete another's log", f.bob, "DELETE", ap, nil, 403, nil},
		{"other organisation cannot delete", f.mallory, "DELETE", ap, nil, 403, nil},
	})
	if r := upload(f.mallory, bp); r.Status != 403 {
		t.Fatalf("foreign upload: %d %s", r.Status, r.Body)
	}
	if r := upload(f.bob, ap); r.Status != 403 {
		t.Fatalf("upload to another's log: %d %s", r.Status, r.Body)
	}
	r := upload(f.bob, bp)
	if r.Status != 200 || r.obj(t)["attachment"].(map[string]any)["file_name"] != "file.bin" {
		t.Fatalf("upload: %d %s", r.Status, r.Body)
	}
	got := e.must(200, f.bob, "GET", bp+"/attachment", nil)
	if string(got.Body) != "report body" || !strings.Contains(got.Header.Get("Content-Disposition"), "file.bin") {
		t.Fatalf("download %q %v", got.Body, got.Header)
	}
	e.run(t, []scenario{
		{"other organisation cannot download", f.mallory, "GET", bp + "/attachment", nil, 403, nil},
		{"storage counted", f.alice, "GET", acme, nil, 200, func(t *testing.T, r *testResponse) {
			if r.obj(t)["storage_usage"] != float64(len("report body")) {
				t.Errorf("storage %v", r.obj(t)["storage_usage"])
			}
		}},
		{"author deletes", f.bob, "DELETE", bp, nil, 204, nil},
		{"gone", f.bob, "GET", bp, nil, 404, nil},
		{"storage released", f.alice, "GET", acme, nil, 200, wantKey("storage_usage", 0)},
	})
}

// TestAssetNumbersConcurrent: 100 assets created at once on one prefix get
// TR-001 to TR-100, each once.
func TestAssetNumbersConcurrent(t *testing.T) {
	t.Parallel()
	f := newAssetFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	nums := make([]string, 100)
	var wg sync.WaitGroup
	for i := range nums {
		wg.Go(func() {
			r := e.do(f.alice, "POST", acme+"/assets", map[string]any{"type_id": f.truck, "name": fmt.Sprint("T", i)})
			if r.Status != http.StatusCreated {
				t.Errorf("status %d: %s", r.Status, r.Body)
				return
			}
			nums[i] = r.obj(t)["formatted_number"].(string)
		})
	}
	wg.Wait()
	slices.Sort(nums)
	for i, n := range nums {
		if n != fmt.Sprintf("TR-%03d", i+1) {
			t.Fatalf("numbers %v, want TR-001..TR-100 each once", nums)
		}
	}
}

// TestAssetGroupWorkItemCounts: the counts on asset groups follow work
// items through create, status changes, moves and the foreign-organisation
// refusal (issue 14's work items, counted by triggers of migration 0026).
func TestAssetGroupWorkItemCounts(t *testing.T) {
	t.Parallel()
	f := newAssetFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	asset := e.must(201, f.alice, "POST", acme+"/assets", map[string]any{"type_id": f.plainType, "name": "A1"}).obj(t)["id"].(string)
	other := e.must(201, f.alice, "POST", acme+"/assets", map[string]any{"type_id": f.plainType, "name": "A2"}).obj(t)["id"].(string)
	evilAsset := e.must(201, f.mallory, "POST", "/organisations/"+f.evil+"/assets",
		map[string]any{"type_id": e.must(201, f.mallory, "POST", "/organisations/"+f.evil+"/asset-types", map[string]any{"ephemerality": 0}).obj(t)["id"]}).obj(t)["id"].(string)
	wt := e.must(201, f.alice, "POST", acme+"/work-item-types", map[string]any{"name": "Repair", "colour": "#112233"}).obj(t)["id"].(string)
	counts := func(id string, open, closed int) func(t *testing.T, r *testResponse) {
		return func(t *testing.T, r *testResponse) {
			for _, g := range r.arr(t) {
				if g["id"] == id && (g["open_work_item_count"] != float64(open) || g["closed_work_item_count"] != float64(closed)) {
					t.Errorf("group %s counts %v/%v, want %d/%d", id, g["open_work_item_count"], g["closed_work_item_count"], open, closed)
				}
			}
		}
	}
	groups := acme + "/asset-groups?ephemerality=0"
	e.run(t, []scenario{
		{"asset group of another organisation", f.alice, "POST", acme + "/workitems", map[string]any{"type_id": wt, "title": "Fix it", "asset_group_id": evilAsset}, 400, wantField("asset_group_id")},
		{"fleet of this organisation", f.alice, "POST", acme + "/workitems", map[string]any{"type_id": wt, "title": "Fleet job", "fleet_id": f.fleet}, 201, nil},
	})
	w := e.must(201, f.alice, "POST", acme+"/workitems", map[string]any{"type_id": wt, "title": "Fix brakes", "asset_group_id": asset}).obj(t)["id"].(string)
	e.must(201, f.alice, "POST", acme+"/workitems", map[string]any{"type_id": wt, "title": "Fix lights", "asset_group_id": asset})
	e.run(t, []scenario{
		{"two open", f.bob, "GET", groups, nil, 200, counts(asset, 2, 0)},
		{"close one", f.alice, "PATCH", "/workitems/" + w, map[string]any{"status": "closed"}, 200, nil},
		{"one open, one closed", f.bob, "GET", groups, nil, 200, counts(asset, 1, 1)},
		{"move it", f.alice, "PATCH", "/workitems/" + w, map[string]any{"asset_group_id": other}, 200, nil},
		{"moved", f.bob, "GET", groups, nil, 200, func(t *testing.T, r *testResponse) {
			counts(asset, 1, 0)(t, r)
			counts(other, 0, 1)(t, r)
		}},
	})
}

// TestAssetGroupFleetChange: a group with a fleet holds only that fleet's
// assets, whether an asset joins it or the group's (or the asset's) fleet
// changes; a refused PATCH changes nothing.
func TestAssetGroupFleetChange(t *testing.T) {
	t.Parallel()
	f := newAssetFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	id := func(r *testResponse) string { return r.obj(t)["id"].(string) }
	truck := id(e.must(201, f.alice, "POST", acme+"/assets", map[string]any{"type_id": f.truck, "name": "T1"})) // fleet f.fleet
	conv := id(e.must(201, f.alice, "POST", acme+"/asset-groups", map[string]any{"type_id": f.convoy, "name": "Convoy"}))
	vans := id(e.must(201, f.alice, "POST", acme+"/asset-groups", map[string]any{"type_id": f.convoy, "name": "Vans", "fleet_id": f.otherFleet}))
	evilFleet := id(e.must(201, f.mallory, "POST", "/organisations/"+f.evil+"/fleets", map[string]any{"name": "Evil"}))
	cp, ap := "/api/assetgroups/"+conv, "/api/assets/"+truck
	e.must(200, f.alice, "PUT", cp+"/assets/"+truck, nil)
	fleetIs := func(want any) func(t *testing.T, r *testResponse) { return wantKey("fleet_id", want) }
	e.run(t, []scenario{
		{"foreign organisation cannot change the fleet", f.mallory, "PATCH", cp, map[string]any{"fleet_id": f.otherFleet}, 403, nil},
		{"foreign organisation's fleet", f.alice, "PATCH", cp, map[string]any{"fleet_id": evilFleet}, 400, wantField("fleet_id")},
		{"the group's asset is of another fleet", f.alice, "PATCH", cp, map[string]any{"fleet_id": f.otherFleet, "name": "Renamed"}, 400, wantField("fleet_id")},
		{"through the fields form too", f.alice, "PATCH", cp + "/fields", map[string]any{"fleet": f.otherFleet}, 400, wantField("fleet_id")},
		{"nothing changed", f.alice, "GET", cp, nil, 200, func(t *testing.T, r *testResponse) {
			if o := r.obj(t); o["fleet_id"] != nil || o["name"] != "Convoy" {
				t.Errorf("refused PATCH applied: %v", o)
			}
		}},
		{"the assets' own fleet", f.alice, "PATCH", cp, map[string]any{"fleet_id": f.fleet}, 200, fleetIs(f.fleet)},
		{"an asset cannot leave its group's fleet", f.alice, "PATCH", ap, map[string]any{"fleet_id": f.otherFleet}, 400, wantField("fleet_id")},
		{"nor lose its fleet", f.alice, "PATCH", ap, map[string]any{"fleet_id": nil}, 400, wantField("fleet_id")},
		{"the asset kept its fleet", f.alice, "GET", ap, nil, 200, fleetIs(f.fleet)},
		{"foreign organisation cannot move the asset", f.mallory, "PATCH", ap, map[string]any{"fleet_id": f.otherFleet, "group_id": vans}, 403, nil},
		{"moving to a group of the new fleet at once", f.alice, "PATCH", ap, map[string]any{"fleet_id": f.otherFleet, "group_id": vans}, 200, func(t *testing.T, r *testResponse) {
			if o := r.obj(t); o["fleet_id"] != f.otherFleet || o["group_id"] != vans {
				t.Errorf("got %v", o)
			}
		}},
		{"a group without a fleet takes any", f.alice, "PATCH", "/api/assetgroups/" + vans, map[string]any{"fleet_id": nil}, 200, fleetIs(nil)},
		{"an empty group takes any fleet", f.alice, "PATCH", cp, map[string]any{"fleet_id": f.otherFleet}, 200, fleetIs(f.otherFleet)},
	})
}
