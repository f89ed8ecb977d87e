package server

import (
	"testing"
)

func TestAssetZoneAndFieldDelete(t *testing.T) {
	t.Parallel()
	f := newAssetFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	zone := e.must(201, f.alice, "POST", acme+"/asset-zones", map[string]any{"name": "Cab"}).obj(t)["id"].(string)
	e.must(200, f.alice, "PUT", "/api/assettype/"+f.truck+"/asset-zones/"+zone, nil)
	asset := e.must(201, f.alice, "POST", acme+"/assets", map[string]any{"type_id": f.truck, "name": "T1",
		"fields": map[string]any{f.mileage: 10}}).obj(t)["id"].(string)
	zp, mp, fp := "/api/assetzones/"+zone, "/api/assetfields/"+f.mileage, "/api/assetfields/"+f.fuel
	typeHas := func(zones, fields int) func(t *testing.T, r *testResponse) {
		return func(t *testing.T, r *testResponse) {
			o := r.obj(t)
			if len(o["zones"].([]any)) != zones || len(o["fields"].([]any)) != fields {
				t.Errorf("type has zones %v fields %v, want %d and %d", o["zones"], o["fields"], zones, fields)
			}
		}
	}
	e.run(t, []scenario{
		{"member cannot delete a zone", f.bob, "DELETE", zp, nil, 403, nil},
		{"other organisation cannot delete a zone", f.mallory, "DELETE", zp, nil, 403, nil},
		{"absent zone", f.alice, "DELETE", "/api/assetzones/123456789", nil, 404, nil},
		{"not a snowflake", f.alice, "DELETE", "/api/assetzones/x", nil, 400, nil},
		{"zone attached before", f.bob, "GET", "/api/assettype/" + f.truck, nil, 200, typeHas(1, 2)},
		{"delete the zone", f.alice, "DELETE", zp, nil, 204, nil},
		{"zone gone", f.bob, "GET", zp, nil, 404, nil},
		{"zone off the type", f.bob, "GET", "/api/assettype/" + f.truck, nil, 200, typeHas(0, 2)},

		{"member cannot delete a field", f.bob, "DELETE", fp, nil, 403, nil},
		{"other organisation cannot delete a field", f.mallory, "DELETE", fp, nil, 403, nil},
		{"absent field", f.alice, "DELETE", "/api/assetfields/123456789", nil, 404, nil},
		{"a field with values stays", f.alice, "DELETE", mp, nil, 400, nil},
		{"field still there", f.bob, "GET", mp, nil, 200, wantKey("name", "Mileage")},
		{"enum field without values goes", f.alice, "DELETE", fp, nil, 204, nil},
		{"field gone", f.bob, "GET", fp, nil, 404, nil},
		{"field off the type", f.bob, "GET", "/api/assettype/" + f.truck, nil, 200, typeHas(0, 1)},
		{"clear the value", f.alice, "PATCH", "/api/assets/" + asset, map[string]any{"fields": map[string]any{f.mileage: nil}}, 200, nil},
		{"then the field goes", f.alice, "DELETE", mp, nil, 204, nil},
		{"fields listed", f.bob, "GET", acme + "/asset-fields", nil, 200, wantLen(0)},
	})
}

func TestAssetGroupDelete(t *testing.T) {
	t.Parallel()
	f := newAssetFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	id := func(r *testResponse) string { return r.obj(t)["id"].(string) }
	asset := id(e.must(201, f.alice, "POST", acme+"/assets", map[string]any{"type_id": f.plainType, "name": "A1"}))
	convoy := id(e.must(201, f.alice, "POST", acme+"/asset-groups", map[string]any{"type_id": f.convoy, "name": "Convoy one"}))
	yard := id(e.must(201, f.alice, "POST", acme+"/asset-groups", map[string]any{"type_id": f.yard, "name": "North yard"}))
	e.must(200, f.alice, "PUT", "/api/assetgroups/"+convoy+"/assets/"+asset, nil)
	logID := id(e.must(201, f.bob, "POST", "/api/assetgroups/"+convoy+"/logs", map[string]any{"log": "Left the depot"}))
	if r := e.serve(multipartReq(t, f.bob, "PUT", "/api/assetlogs/"+logID+"/attachment", nil, map[string][]byte{"file": []byte("manifest")})); r.Status != 200 {
		t.Fatalf("upload: %d %s", r.Status, r.Body)
	}
	wt := id(e.must(201, f.alice, "POST", acme+"/work-item-types", map[string]any{"name": "Repair", "colour": "#112233"}))
	work := id(e.must(201, f.alice, "POST", acme+"/workitems", map[string]any{"type_id": wt, "title": "Sweep", "asset_group_id": yard}))
	doc := id(e.must(201, f.alice, "POST", "/documents", map[string]any{"organisation_id": f.acme, "title": "Yard plan", "asset_group_id": yard}))
	// The document's revisions count too: the attachment's bytes are what must go.
	storage := int64(e.must(200, f.alice, "GET", acme, nil).obj(t)["storage_usage"].(float64))
	cp, yp := "/api/assetgroups/"+convoy, "/api/assetgroups/"+yard
	e.run(t, []scenario{
		{"an asset's single group is not deleted here", f.alice, "DELETE", "/api/assetgroups/" + asset, nil, 400, nil},
		{"member cannot delete", f.bob, "DELETE", cp, nil, 403, nil},
		{"other organisation cannot delete", f.mallory, "DELETE", cp, nil, 403, nil},
		{"absent group", f.alice, "DELETE", "/api/assetgroups/123456789", nil, 404, nil},
		{"delete the convoy", f.alice, "DELETE", cp, nil, 204, nil},
		{"convoy gone", f.bob, "GET", cp, nil, 404, nil},
		{"its log gone", f.bob, "GET", "/api/assetlogs/" + logID, nil, 404, nil},
		{"its attachment released", f.alice, "GET", acme, nil, 200, func(t *testing.T, r *testResponse) {
			if got := int64(r.obj(t)["storage_usage"].(float64)); got != storage-int64(len("manifest")) {
				t.Errorf("storage %d, want %d", got, storage-int64(len("manifest")))
			}
		}},
		{"the asset stays, in no group", f.bob, "GET", "/api/assets/" + asset, nil, 200, wantKey("group_id", nil)},
		{"work items name the yard", f.alice, "DELETE", yp, nil, 400, nil},
		{"move the work item away", f.alice, "PATCH", "/workitems/" + work, map[string]any{"asset_group_id": nil}, 200, nil},
		{"a document names the yard", f.alice, "DELETE", yp, nil, 400, nil},
		{"unlink the document", f.alice, "PATCH", "/documents/" + doc, map[string]any{"asset_group_id": nil}, 200, nil},
		{"then the yard goes", f.alice, "DELETE", yp, nil, 204, nil},
		{"no temporary groups left", f.bob, "GET", acme + "/asset-groups?ephemerality=1", nil, 200, wantLen(0)},
		{"no permanent groups left", f.bob, "GET", acme + "/asset-groups?ephemerality=2", nil, 200, wantLen(0)},
	})
}

func TestAssetStatusAndTypeDelete(t *testing.T) {
	t.Parallel()
	f := newAssetFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	id := func(r *testResponse) string { return r.obj(t)["id"].(string) }
	spare := id(e.must(201, f.alice, "POST", acme+"/asset-statuses", map[string]any{"name": "Spare"}))
	asset := id(e.must(201, f.alice, "POST", acme+"/assets", map[string]any{"type_id": f.truck, "name": "T1", "status_id": f.status}))
	yard := id(e.must(201, f.alice, "POST", acme+"/asset-groups", map[string]any{"type_id": f.yard, "name": "North yard", "status_id": spare}))
	zone := id(e.must(201, f.alice, "POST", acme+"/asset-zones", map[string]any{"name": "Cab"}))
	e.must(200, f.alice, "PUT", "/api/assettype/"+f.truck+"/asset-zones/"+zone, nil)
	// A grant of MANAGE_FLEETS on a fleet opens its assets, never the
	// organisation's catalogue (docs/assets.md).
	e.must(200, f.alice, "PATCH", "/fleets/"+f.fleet+"/permissions/"+f.bob.ID, map[string]any{"permissions": map[string]string{"MANAGE_FLEETS": "allow"}})
	sp, lp, tp := "/api/assetstatuses/"+spare, "/api/assetstatuses/"+f.status, "/api/assettype/"+f.truck
	e.run(t, []scenario{
		{"member cannot delete a status", f.bob, "DELETE", sp, nil, 403, nil},
		{"other organisation cannot delete a status", f.mallory, "DELETE", sp, nil, 403, nil},
		{"other organisation's status is not deleted", f.alice, "DELETE", "/api/assetstatuses/" + f.evilStatus, nil, 403, nil},
		{"absent status", f.alice, "DELETE", "/api/assetstatuses/123456789", nil, 404, nil},
		{"not a snowflake", f.alice, "DELETE", "/api/assetstatuses/x", nil, 400, nil},
		{"a status an asset has stays", f.alice, "DELETE", lp, nil, 400, nil},
		{"a status a group has stays", f.alice, "DELETE", sp, nil, 400, nil},
		{"status still there", f.bob, "GET", sp, nil, 200, wantKey("name", "Spare")},
		{"the group changes status", f.alice, "PATCH", "/api/assetgroups/" + yard, map[string]any{"status_id": nil}, 200, wantKey("status", nil)},
		{"then the status goes", f.alice, "DELETE", sp, nil, 204, nil},
		{"status gone", f.bob, "GET", sp, nil, 404, nil},
		{"a deleted status is refused", f.alice, "PATCH", "/api/assetgroups/" + yard, map[string]any{"status_id": spare}, 400, wantField("status_id")},
		{"one status left", f.bob, "GET", acme + "/asset-statuses", nil, 200, wantLen(1)},
		{"other organisation's statuses stay", f.mallory, "GET", "/organisations/" + f.evil + "/asset-statuses", nil, 200, wantLen(1)},

		{"member cannot delete a type", f.bob, "DELETE", "/api/assettype/" + f.plainType, nil, 403, nil},
		{"other organisation's type is not deleted", f.alice, "DELETE", "/api/assettype/" + f.evilType, nil, 403, nil},
		{"fleet manager cannot delete its fleet's type", f.bob, "DELETE", tp, nil, 403, nil},
		{"other organisation cannot delete a type", f.mallory, "DELETE", tp, nil, 403, nil},
		{"absent type", f.alice, "DELETE", "/api/assettype/123456789", nil, 404, nil},
		{"a type assets have stays", f.alice, "DELETE", tp, nil, 400, nil},
		{"a type groups have stays", f.alice, "DELETE", "/api/assettype/" + f.yard, nil, 400, nil},
		{"type still there with its fields", f.bob, "GET", tp, nil, 200, func(t *testing.T, r *testResponse) {
			if o := r.obj(t); len(o["fields"].([]any)) != 2 || len(o["zones"].([]any)) != 1 {
				t.Errorf("type %v", o)
			}
		}},
		{"the asset changes type", f.alice, "PATCH", "/api/assets/" + asset, map[string]any{"type_id": f.plainType}, 200, nil},
		{"then the type goes", f.alice, "DELETE", tp, nil, 204, nil},
		{"type gone", f.bob, "GET", tp, nil, 404, nil},
		{"its fields stay", f.bob, "GET", "/api/assetfields/" + f.mileage, nil, 200, wantKey("name", "Mileage")},
		{"its zone stays", f.bob, "GET", "/api/assetzones/" + zone, nil, 200, wantKey("name", "Cab")},
		{"a field once on it deletes", f.alice, "DELETE", "/api/assetfields/" + f.fuel, nil, 204, nil},
		{"a deleted type is refused", f.alice, "POST", acme + "/assets", map[string]any{"type_id": f.truck}, 400, wantField("type_id")},
		{"an unused type goes", f.alice, "DELETE", "/api/assettype/" + f.convoy, nil, 204, nil},
		{"types left", f.bob, "GET", acme + "/asset-types", nil, 200, wantLen(2)},
		{"other organisation's types stay", f.mallory, "GET", "/organisations/" + f.evil + "/asset-types", nil, 200, wantLen(1)},
	})
}
