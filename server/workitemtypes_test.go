package server

import (
	"net/url"
	"strings"
	"testing"
)

func TestWorkItemTypes(t *testing.T) {
	t.Parallel()
	f := newOrgFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	evilPrefix := e.must(201, f.mallory, "POST", "/organisations/"+f.evil+"/prefixes", map[string]any{"number_format": "E-{number}"}).obj(t)["id"].(string)
	prefix := e.must(201, f.alice, "POST", acme+"/prefixes", map[string]any{"number_format": "WI-{number}"}).obj(t)["id"].(string)
	body := map[string]any{"name": "Defect", "colour": "#ff0000", "prefix_id": prefix, "description": "Something broken"}
	e.run(t, []scenario{
		{"member without MANAGE_ORGANISATION cannot create", f.bob, "POST", acme + "/work-item-types", body, 403, nil},
		{"pending member cannot create", f.pen, "POST", acme + "/work-item-types", body, 403, nil},
		{"other organisation cannot create", f.mallory, "POST", acme + "/work-item-types", body, 403, nil},
		{"no token", nil, "POST", acme + "/work-item-types", body, 401, nil},
		{"absent organisation", f.alice, "POST", "/organisations/123456789/work-item-types", body, 400, nil},
		{"name required", f.alice, "POST", acme + "/work-item-types", map[string]any{"colour": "#000000"}, 400, wantField("name")},
		{"name under 2", f.alice, "POST", acme + "/work-item-types", map[string]any{"name": "D"}, 400, wantField("name")},
		{"name over 20", f.alice, "POST", acme + "/work-item-types", map[string]any{"name": strings.Repeat("n", 21)}, 400, wantField("name")},
		{"bad colour", f.alice, "POST", acme + "/work-item-types", map[string]any{"name": "Defect", "colour": "red"}, 400, wantField("colour")},
		{"wrong type", f.alice, "POST", acme + "/work-item-types", map[string]any{"name": 5}, 400, wantField("name")},
		{"malformed JSON", f.alice, "POST", acme + "/work-item-types", `{"name":`, 400, nil},
		{"prefix of another organisation", f.alice, "POST", acme + "/work-item-types", map[string]any{"name": "Defect", "prefix_id": evilPrefix}, 400, wantField("prefix_id")},
		{"absent prefix", f.alice, "POST", acme + "/work-item-types", map[string]any{"name": "Defect", "prefix_id": "123456789"}, 400, wantField("prefix_id")},
		{"prefix id not a snowflake", f.alice, "POST", acme + "/work-item-types", map[string]any{"name": "Defect", "prefix_id": "x"}, 400, nil},
		{"id is read-only", f.alice, "POST", acme + "/work-item-types", map[string]any{"name": "Defect", "id": "1"}, 400, wantField("id")},
	})
	created := e.must(201, f.alice, "POST", acme+"/work-item-types", body).obj(t)
	if created["name"] != "Defect" || created["colour"] != "#FF0000" || created["prefix_id"] != prefix || created["enabled"] != true ||
		created["organisation_id"] != f.acme || created["description"] != "Something broken" {
		t.Fatalf("created %v", created)
	}
	plain := e.must(201, f.alice, "POST", acme+"/work-item-types", map[string]any{"name": "Task", "unknown": 1}).obj(t)
	if plain["colour"] != "#000000" || plain["prefix_id"] != nil {
		t.Fatalf("defaults %v", plain)
	}
	path := "/work-item-types/" + created["id"].(string)
	e.run(t, []scenario{
		{"member lists", f.bob, "GET", acme + "/work-item-types", nil, 200, func(t *testing.T, r *testResponse) { wantLen(2)(t, r); wantTotal("2")(t, r) }},
		{"filter by name", f.bob, "GET", acme + "/work-item-types?$filter=" + url.QueryEscape("name eq 'task'"), nil, 200, wantLen(1)},
		{"filter on unknown field", f.bob, "GET", acme + "/work-item-types?$filter=" + url.QueryEscape("colour eq 'x'"), nil, 400, wantField("colour")},
		{"pending member cannot list", f.pen, "GET", acme + "/work-item-types", nil, 403, nil},
		{"other organisation cannot list", f.mallory, "GET", acme + "/work-item-types", nil, 403, nil},
		{"member gets", f.bob, "GET", path, nil, 200, wantKey("name", "Defect")},
		{"other organisation cannot get", f.mallory, "GET", path, nil, 403, nil},
		{"absent type", f.bob, "GET", "/work-item-types/123456789", nil, 404, nil},
		{"bad id", f.bob, "GET", "/work-item-types/abc", nil, 400, nil},
		{"member cannot patch", f.bob, "PATCH", path, map[string]any{"name": "Bug"}, 403, nil},
		{"other organisation cannot patch", f.mallory, "PATCH", path, map[string]any{"name": "Bug"}, 403, nil},
		{"other organisation's prefix", f.alice, "PATCH", path, map[string]any{"prefix_id": evilPrefix}, 400, wantField("prefix_id")},
		{"name too short", f.alice, "PATCH", path, map[string]any{"name": "B"}, 400, wantField("name")},
		{"organisation_id read-only", f.alice, "PATCH", path, map[string]any{"organisation_id": f.evil}, 400, wantField("organisation_id")},
		{"sent back unchanged", f.alice, "PATCH", path, map[string]any{"organisation_id": f.acme, "id": created["id"]}, 200, nil},
		{"rename and clear prefix", f.alice, "PATCH", path, map[string]any{"name": "Bug", "prefix_id": nil}, 200, func(t *testing.T, r *testResponse) {
			if o := r.obj(t); o["name"] != "Bug" || o["prefix_id"] != nil {
				t.Fatalf("patched %v", o)
			}
		}},
		{"disable", f.alice, "PATCH", path, map[string]any{"enabled": false}, 200, wantKey("enabled", false)},
		{"enabled filter", f.bob, "GET", acme + "/work-item-types?$filter=" + url.QueryEscape("enabled eq false"), nil, 200, wantLen(1)},
		{"refused patches changed nothing", f.bob, "GET", path, nil, 200, wantKey("name", "Bug")},
	})
}
