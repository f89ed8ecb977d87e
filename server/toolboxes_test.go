package server

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/pquerna/otp/totp"
)

// toolboxFixture is an organisation with a location that has a geofence.
type toolboxFixture struct {
	*orgFixture
	depot, workgroup string
	evilLocation     string
}

func newToolboxFixture(t *testing.T) *toolboxFixture {
	f := newOrgFixture(t)
	e := f.e
	tf := &toolboxFixture{orgFixture: f}
	tf.depot = e.must(201, f.alice, "POST", "/organisations/"+f.acme+"/locations", map[string]any{
		"name": "Depot", "latitude": 51.5, "longitude": -0.12, "radius": 200}).obj(t)["id"].(string)
	tf.workgroup = e.must(201, f.alice, "POST", "/organisations/"+f.acme+"/workgroups", map[string]any{"name": "Civil"}).obj(t)["id"].(string)
	tf.evilLocation = e.must(201, f.mallory, "POST", "/organisations/"+f.evil+"/locations", map[string]any{"name": "Lair"}).obj(t)["id"].(string)
	return tf
}

func TestToolboxes(t *testing.T) {
	t.Parallel()
	f := newToolboxFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	e.run(t, []scenario{
		{"title required", f.bob, "POST", acme + "/toolboxes", map[string]any{}, 400, wantField("title")},
		{"title too long", f.bob, "POST", acme + "/toolboxes", map[string]any{"title": strings.Repeat("t", 201)}, 400, wantField("title")},
		{"title wrong type", f.bob, "POST", acme + "/toolboxes", map[string]any{"title": 5}, 400, wantField("title")},
		{"malformed JSON", f.bob, "POST", acme + "/toolboxes", `{"title":`, 400, nil},
		{"location of another organisation", f.bob, "POST", acme + "/toolboxes", map[string]any{"title": "Lifting", "location_id": f.evilLocation}, 400, wantField("location_id")},
		{"absent workgroup", f.bob, "POST", acme + "/toolboxes", map[string]any{"title": "Lifting", "workgroup_id": "123456789"}, 400, wantField("workgroup_id")},
		{"absent schedule", f.bob, "POST", acme + "/toolboxes", map[string]any{"title": "Lifting", "schedule_id": "123456789"}, 400, wantField("schedule_id")},
		{"absent template", f.bob, "POST", acme + "/toolboxes", map[string]any{"title": "Lifting", "template_id": "123456789"}, 400, wantField("template_id")},
		{"read-only archived", f.bob, "POST", acme + "/toolboxes", map[string]any{"title": "Lifting", "archived": true}, 400, wantField("archived")},
		{"other organisation cannot create", f.mallory, "POST", acme + "/toolboxes", map[string]any{"title": "Lifting"}, 403, nil},
		{"pending member cannot create", f.pen, "POST", acme + "/toolboxes", map[string]any{"title": "Lifting"}, 403, nil},
		{"absent organisation", f.bob, "POST", "/organisations/123456789/toolboxes", map[string]any{"title": "Lifting"}, 400, nil},
	})
	tb := e.must(201, f.bob, "POST", acme+"/toolboxes", map[string]any{"title": "Working at height", "location_id": f.depot, "workgroup_id": f.workgroup}).obj(t)
	if tb["location"].(map[string]any)["name"] != "Depot" || tb["workgroup"].(map[string]any)["name"] != "Civil" || tb["archived"] != false ||
		tb["is_template"] != false || tb["conducted_at"] != nil || tb["totp_token"] != nil || tb["created_by"].(map[string]any)["id"] != f.bob.ID {
		t.Fatalf("created %v", tb)
	}
	tp := "/toolboxes/" + tb["id"].(string)
	e.must(201, f.alice, "POST", acme+"/toolboxes", map[string]any{"title": "Template: lifting", "is_template": true})
	e.must(201, f.alice, "POST", acme+"/toolboxes", map[string]any{"title": "Hot works"})
	e.must(201, f.mallory, "POST", "/organisations/"+f.evil+"/toolboxes", map[string]any{"title": "Evil height"})
	e.run(t, []scenario{
		{"member lists, newest first", f.bob, "GET", acme + "/toolboxes", nil, 200, func(t *testing.T, r *testResponse) {
			list := r.arr(t)
			if len(list) != 3 || list[0]["title"] != "Hot works" || r.Header.Get("X-Total-Count") != "3" {
				t.Errorf("got %d %v", len(list), r.Header)
			}
		}},
		{"title filter ignores case", f.bob, "GET", acme + "/toolboxes?title=HEIGHT", nil, 200, wantLen(1)},
		{"title filter takes % literally", f.bob, "GET", acme + "/toolboxes?title=%25", nil, 200, wantLen(0)},
		{"templates", f.bob, "GET", acme + "/toolboxes?is_template=true", nil, 200, wantLen(1)},
		{"location filter", f.bob, "GET", acme + "/toolboxes?location=" + f.depot, nil, 200, wantLen(1)},
		{"workgroup filter", f.bob, "GET", acme + "/toolboxes?workgroup=" + f.workgroup, nil, 200, wantLen(1)},
		{"archived filter", f.bob, "GET", acme + "/toolboxes?archived=true", nil, 200, wantLen(0)},
		{"paging", f.bob, "GET", acme + "/toolboxes?start=1&limit=1", nil, 200, func(t *testing.T, r *testResponse) {
			if list := r.arr(t); len(list) != 1 || list[0]["title"] != "Template: lifting" || r.Header.Get("X-Total-Count") != "3" {
				t.Errorf("got %v", list)
			}
		}},
		{"bad limit", f.bob, "GET", acme + "/toolboxes?limit=-1", nil, 400, wantField("limit")},
		{"bad start", f.bob, "GET", acme + "/toolboxes?start=x", nil, 400, wantField("start")},
		{"bad archived", f.bob, "GET", acme + "/toolboxes?archived=maybe", nil, 400, wantField("archived")},
		{"bad location", f.bob, "GET", acme + "/toolboxes?location=x", nil, 400, wantField("location")},
		{"other organisation cannot list", f.mallory, "GET", acme + "/toolboxes", nil, 403, nil},
		{"member gets", f.bob, "GET", tp, nil, 200, wantKey("title", "Working at height")},
		{"a plain member may not write its sessions", f.bob, "GET", tp, nil, 200, func(t *testing.T, r *testResponse) {
			if p, _ := r.obj(t)["permissions"].(map[string]any); p == nil || p["MANAGE_TEAMS"] != false || len(p) != 1 {
				t.Errorf("permissions %v", r.obj(t)["permissions"])
			}
		}},
		{"the owner may write its sessions", f.alice, "GET", tp, nil, 200, func(t *testing.T, r *testResponse) {
			if p, _ := r.obj(t)["permissions"].(map[string]any); p == nil || p["MANAGE_TEAMS"] != true {
				t.Errorf("permissions %v", r.obj(t)["permissions"])
			}
		}},
		{"totp token only when asked", f.bob, "GET", tp + "?include_totp_token=true", nil, 200, func(t *testing.T, r *testResponse) {
			if tok, _ := r.obj(t)["totp_token"].(string); len(tok) < 16 {
				t.Errorf("totp_token %q", tok)
			}
		}},
		{"other organisation cannot get", f.mallory, "GET", tp, nil, 403, nil},
		{"absent toolbox", f.bob, "GET", "/toolboxes/123456789", nil, 404, nil},
		{"not an id", f.bob, "GET", "/toolboxes/x", nil, 400, nil},
		{"patch title and template flag", f.bob, "PATCH", tp, map[string]any{"title": "Height", "is_template": false}, 200, wantKey("title", "Height")},
		{"patch absent location", f.bob, "PATCH", tp, map[string]any{"location_id": "123456789"}, 400, wantField("location_id")},
		{"patch foreign location", f.bob, "PATCH", tp, map[string]any{"location_id": f.evilLocation}, 400, wantField("location_id")},
		{"patch empty title", f.bob, "PATCH", tp, map[string]any{"title": " "}, 400, wantField("title")},
		{"patch read-only users", f.bob, "PATCH", tp, map[string]any{"users": []any{map[string]any{"first_name": "X"}}}, 400, wantField("users")},
		{"patch read-only archived", f.bob, "PATCH", tp, map[string]any{"archived": true}, 400, wantField("archived")},
		{"other organisation cannot patch", f.mallory, "PATCH", tp, map[string]any{"title": "X"}, 403, nil},
		{"patch clears the location", f.bob, "PATCH", tp, map[string]any{"location_id": nil}, 200, wantKey("location", nil)},
		{"patch sets the location back", f.bob, "PATCH", tp, map[string]any{"location_id": f.depot}, 200, wantKey("location_id", f.depot)},

		{"conduct needs coordinates", f.bob, "POST", tp + "/conduct", map[string]any{}, 400, wantField("latitude")},
		{"conduct latitude out of range", f.bob, "POST", tp + "/conduct", map[string]any{"latitude": 95, "longitude": 0}, 400, wantField("latitude")},
		{"other organisation cannot conduct", f.mallory, "POST", tp + "/conduct", map[string]any{"latitude": 51.5, "longitude": -0.12}, 403, nil},
		{"conduct outside the geofence is stored, not refused", f.bob, "POST", tp + "/conduct", map[string]any{"latitude": 51.51, "longitude": -0.12}, 200, func(t *testing.T, r *testResponse) {
			o := r.obj(t)
			if o["conducted_at"] == nil || o["latitude"] != 51.51 || o["within_geofence"] != false || o["conducted_by"].(map[string]any)["id"] != f.bob.ID {
				t.Errorf("got %v", o)
			}
		}},
		{"conduct only once", f.bob, "POST", tp + "/conduct", map[string]any{"latitude": 51.5, "longitude": -0.12}, 403, nil},
		{"unarchive when not archived", f.bob, "POST", tp + "/unarchive", nil, 403, nil},
		{"other organisation cannot archive", f.mallory, "POST", tp + "/archive", nil, 403, nil},
		{"archive", f.bob, "POST", tp + "/archive", nil, 200, func(t *testing.T, r *testResponse) {
			if o := r.obj(t); o["archived"] != true || o["archived_by"].(map[string]any)["id"] != f.bob.ID {
				t.Errorf("got %v", o)
			}
		}},
		{"archive twice", f.bob, "POST", tp + "/archive", nil, 403, nil},
		{"archived refuses patch", f.bob, "PATCH", tp, map[string]any{"title": "X"}, 403, nil},
		{"archived refuses sections", f.bob, "POST", tp + "/sections", map[string]any{"title": "S"}, 403, nil},
		{"archived refuses topics", f.bob, "POST", tp + "/topics", map[string]any{"body": "B"}, 403, nil},
		{"archived refuses signatures", f.bob, "POST", tp + "/sign", map[string]any{"first_name": "Vi", "last_name": "Sitor", "declaration": true}, 403, nil},
		{"archived refuses schedules", f.alice, "POST", tp + "/schedules", map[string]any{"scheduled_start_at": "2026-11-22T07:00:00Z", "scheduled_finish_at": "2026-11-22T08:00:00Z"}, 403, nil},
		{"archived filter", f.bob, "GET", acme + "/toolboxes?archived=true", nil, 200, wantLen(1)},
		{"unarchive within 24 hours", f.bob, "POST", tp + "/unarchive", nil, 200, wantKey("archived", false)},
		{"archive again", f.bob, "POST", tp + "/archive", nil, 200, wantKey("archived", true)},
	})
	e.clock.Advance(24*time.Hour + time.Second)
	e.run(t, []scenario{
		{"unarchive after 24 hours", f.bob, "POST", tp + "/unarchive", nil, 403, nil},
		{"still archived", f.bob, "GET", tp, nil, 200, wantKey("archived", true)},
	})
}

func TestToolboxGeofence(t *testing.T) {
	t.Parallel()
	f := newToolboxFixture(t)
	e := f.e
	in := e.must(201, f.bob, "POST", "/organisations/"+f.acme+"/toolboxes", map[string]any{"title": "Inside", "location_id": f.depot}).obj(t)
	o := e.must(200, f.bob, "POST", "/toolboxes/"+in["id"].(string)+"/conduct", map[string]any{"latitude": 51.5005, "longitude": -0.1201}).obj(t)
	if o["within_geofence"] != true {
		t.Errorf("55 m from the centre of a 200 m fence: got %v", o["within_geofence"])
	}
	none := e.must(201, f.bob, "POST", "/organisations/"+f.acme+"/toolboxes", map[string]any{"title": "Nowhere"}).obj(t)
	o = e.must(200, f.bob, "POST", "/toolboxes/"+none["id"].(string)+"/conduct", map[string]any{"latitude": 0, "longitude": 0}).obj(t)
	if o["within_geofence"] != nil || o["latitude"] != float64(0) {
		t.Errorf("no location: got %v", o)
	}
}

// order lists titles or bodies in their order, checking the order field is dense from 1.
func order(t *testing.T, items []any, key string) []string {
	t.Helper()
	var out []string
	for i, it := range items {
		m := it.(map[string]any)
		if m["order"] != float64(i+1) {
			t.Errorf("item %d has order %v", i, m["order"])
		}
		out = append(out, m[key].(string))
	}
	return out
}

func TestToolboxSectionsAndTopics(t *testing.T) {
	t.Parallel()
	f := newToolboxFixture(t)
	e := f.e
	tb := e.must(201, f.bob, "POST", "/organisations/"+f.acme+"/toolboxes", map[string]any{"title": "Weekly"}).obj(t)
	tp := "/toolboxes/" + tb["id"].(string)
	sec := func(title string) string {
		return e.must(201, f.bob, "POST", tp+"/sections", map[string]any{"title": title}).obj(t)["id"].(string)
	}
	a, b, c := sec("A"), sec("B"), sec("C")
	topic := func(section any, body string) string {
		return e.must(201, f.bob, "POST", tp+"/topics", map[string]any{"section_id": section, "body": body}).obj(t)["id"].(string)
	}
	a1, a2, a3 := topic(a, "a1"), topic(a, "a2"), topic(a, "a3")
	top1 := topic(nil, "top1")
	e.run(t, []scenario{
		{"section needs a title", f.bob, "POST", tp + "/sections", map[string]any{}, 400, wantField("title")},
		{"other organisation cannot add a section", f.mallory, "POST", tp + "/sections", map[string]any{"title": "X"}, 403, nil},
		{"section of an absent toolbox", f.bob, "POST", "/toolboxes/123456789/sections", map[string]any{"title": "X"}, 404, nil},
		{"get section with its topics", f.bob, "GET", tp + "/sections/" + a, nil, 200, func(t *testing.T, r *testResponse) {
			if got := order(t, r.obj(t)["topics"].([]any), "body"); strings.Join(got, ",") != "a1,a2,a3" {
				t.Errorf("topics %v", got)
			}
		}},
		{"other organisation cannot get a section", f.mallory, "GET", tp + "/sections/" + a, nil, 403, nil},
		{"absent section", f.bob, "GET", tp + "/sections/123456789", nil, 404, nil},
		{"section of another toolbox", f.bob, "GET", "/toolboxes/" + tb["id"].(string) + "/sections/" + tb["id"].(string), nil, 404, nil},
		{"order out of range", f.bob, "PATCH", tp + "/sections/" + c, map[string]any{"order": 4}, 400, wantField("order")},
		{"order zero", f.bob, "PATCH", tp + "/sections/" + c, map[string]any{"order": 0}, 400, wantField("order")},
		{"move C first, the others shift", f.bob, "PATCH", tp + "/sections/" + c, map[string]any{"order": 1, "title": "C!"}, 200, wantKey("order", float64(1))},
		{"sections in order", f.bob, "GET", tp, nil, 200, func(t *testing.T, r *testResponse) {
			if got := order(t, r.obj(t)["sections"].([]any), "title"); strings.Join(got, ",") != "C!,A,B" {
				t.Errorf("sections %v", got)
			}
		}},
		{"move A last", f.bob, "PATCH", tp + "/sections/" + a, map[string]any{"order": 3}, 200, nil},
		{"sections after moving down", f.bob, "GET", tp, nil, 200, func(t *testing.T, r *testResponse) {
			if got := order(t, r.obj(t)["sections"].([]any), "title"); strings.Join(got, ",") != "C!,B,A" {
				t.Errorf("sections %v", got)
			}
		}},
		{"a section holding topics cannot be deleted", f.bob, "DELETE", tp + "/sections/" + a, nil, 400, nil},
		{"other organisation cannot delete a section", f.mallory, "DELETE", tp + "/sections/" + c, nil, 403, nil},
		{"delete an empty section, the gap closes", f.bob, "DELETE", tp + "/sections/" + c, nil, 200, wantKey("title", "C!")},
		{"sections after delete", f.bob, "GET", tp, nil, 200, func(t *testing.T, r *testResponse) {
			if got := order(t, r.obj(t)["sections"].([]any), "title"); strings.Join(got, ",") != "B,A" {
				t.Errorf("sections %v", got)
			}
		}},

		{"topic in a section of another toolbox", f.bob, "POST", tp + "/topics", map[string]any{"section_id": "123456789"}, 400, wantField("section_id")},
		{"topic body too long", f.bob, "POST", tp + "/topics", map[string]any{"body": strings.Repeat("b", 10001)}, 400, wantField("body")},
		{"other organisation cannot add a topic", f.mallory, "POST", tp + "/topics", map[string]any{"body": "x"}, 403, nil},
		{"empty topic by default", f.bob, "POST", tp + "/topics", map[string]any{}, 201, func(t *testing.T, r *testResponse) {
			if o := r.obj(t); o["body"] != "" || o["section_id"] != nil || o["order"] != float64(2) {
				t.Errorf("got %v", o)
			}
		}},
		{"reorder a topic within its section", f.bob, "PATCH", tp + "/topics/" + a3, map[string]any{"order": 1}, 200, nil},
		{"section topics after reorder", f.bob, "GET", tp + "/sections/" + a, nil, 200, func(t *testing.T, r *testResponse) {
			if got := order(t, r.obj(t)["topics"].([]any), "body"); strings.Join(got, ",") != "a3,a1,a2" {
				t.Errorf("topics %v", got)
			}
		}},
		{"move a topic to another section at a place", f.bob, "PATCH", tp + "/topics/" + a1, map[string]any{"section_id": b, "order": 1}, 200, wantKey("section_id", b)},
		{"move beyond the end of the new list", f.bob, "PATCH", tp + "/topics/" + a2, map[string]any{"section_id": b, "order": 3}, 400, wantField("order")},
		{"move a topic to the top level, at the end", f.bob, "PATCH", tp + "/topics/" + a2, map[string]any{"section_id": nil}, 200, wantKey("order", float64(3))},
		{"lists stay dense after moves", f.bob, "GET", tp, nil, 200, func(t *testing.T, r *testResponse) {
			o := r.obj(t)
			if got := order(t, o["topics"].([]any), "body"); strings.Join(got, ",") != "top1,,a2" {
				t.Errorf("top level %v", got)
			}
			secs := o["sections"].([]any)
			if got := order(t, secs[0].(map[string]any)["topics"].([]any), "body"); strings.Join(got, ",") != "a1" {
				t.Errorf("B %v", got)
			}
			if got := order(t, secs[1].(map[string]any)["topics"].([]any), "body"); strings.Join(got, ",") != "a3" {
				t.Errorf("A %v", got)
			}
		}},
		{"review response and comments", f.alice, "PATCH", tp + "/topics/" + top1, map[string]any{"review_response": true, "comments": "Harnesses checked"}, 200, func(t *testing.T, r *testResponse) {
			o := r.obj(t)
			if o["review_response"] != true || o["comments"] != "Harnesses checked" || o["reviewed_by"].(map[string]any)["id"] != f.alice.ID || o["reviewed_at"] == nil {
				t.Errorf("got %v", o)
			}
		}},
		{"clearing the review response", f.alice, "PATCH", tp + "/topics/" + top1, map[string]any{"review_response": nil}, 200, wantKey("reviewed_at", nil)},
		{"review response wrong type", f.alice, "PATCH", tp + "/topics/" + top1, map[string]any{"review_response": "yes"}, 400, wantField("review_response")},
		{"read-only reviewed_by", f.alice, "PATCH", tp + "/topics/" + top1, map[string]any{"reviewed_by": f.bob.ID}, 400, wantField("reviewed_by")},
		{"get a topic", f.bob, "GET", tp + "/topics/" + a1, nil, 200, wantKey("body", "a1")},
		{"other organisation cannot get a topic", f.mallory, "GET", tp + "/topics/" + a1, nil, 403, nil},
		{"absent topic", f.bob, "GET", tp + "/topics/123456789", nil, 404, nil},
		{"other organisation cannot delete a topic", f.mallory, "DELETE", tp + "/topics/" + top1, nil, 403, nil},
		{"delete a topic, the gap closes", f.bob, "DELETE", tp + "/topics/" + top1, nil, 200, wantKey("body", "top1")},
		{"top level after delete", f.bob, "GET", tp, nil, 200, func(t *testing.T, r *testResponse) {
			if got := order(t, r.obj(t)["topics"].([]any), "body"); strings.Join(got, ",") != ",a2" {
				t.Errorf("top level %v", got)
			}
		}},
		{"delete an absent topic", f.bob, "DELETE", tp + "/topics/" + top1, nil, 404, nil},
	})

	// A template's sections and topics are copied, not its meeting notes.
	tmpl := e.must(201, f.alice, "POST", "/organisations/"+f.acme+"/toolboxes", map[string]any{"title": "Template", "is_template": true}).obj(t)
	tt := "/toolboxes/" + tmpl["id"].(string)
	s1 := e.must(201, f.alice, "POST", tt+"/sections", map[string]any{"title": "Hazards"}).obj(t)["id"].(string)
	e.must(201, f.alice, "POST", tt+"/topics", map[string]any{"section_id": s1, "body": "Falls"})
	e.must(201, f.alice, "POST", tt+"/topics", map[string]any{"body": "Intro", "comments": "said hi", "review_response": true})
	e.run(t, []scenario{
		{"a toolbox that is not a template", f.bob, "POST", "/organisations/" + f.acme + "/toolboxes", map[string]any{"title": "Copy", "template_id": tb["id"]}, 400, wantField("template_id")},
		{"a template of another organisation", f.mallory, "POST", "/organisations/" + f.evil + "/toolboxes", map[string]any{"title": "Copy", "template_id": tmpl["id"]}, 400, wantField("template_id")},
		{"from a template", f.bob, "POST", "/organisations/" + f.acme + "/toolboxes", map[string]any{"title": "Monday", "template_id": tmpl["id"]}, 201, func(t *testing.T, r *testResponse) {
			o := r.obj(t)
			secs, top := o["sections"].([]any), o["topics"].([]any)
			if len(secs) != 1 || secs[0].(map[string]any)["title"] != "Hazards" || len(secs[0].(map[string]any)["topics"].([]any)) != 1 ||
				len(top) != 1 || top[0].(map[string]any)["body"] != "Intro" || top[0].(map[string]any)["comments"] != "" || top[0].(map[string]any)["review_response"] != nil {
				t.Errorf("copied %v", o)
			}
			if secs[0].(map[string]any)["id"] == s1 {
				t.Errorf("section not copied but shared")
			}
		}},
	})
}

func TestSchedules(t *testing.T) {
	t.Parallel()
	f := newToolboxFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	slot := map[string]any{"scheduled_start_at": "2026-11-23T07:00:00Z", "scheduled_finish_at": "2026-11-23T07:30:00+00:00"}
	with := func(extra map[string]any) map[string]any {
		out := map[string]any{}
		for k, v := range slot {
			out[k] = v
		}
		for k, v := range extra {
			out[k] = v
		}
		return out
	}
	e.run(t, []scenario{
		{"member without MANAGE_TEAMS cannot create", f.bob, "POST", acme + "/schedules", slot, 403, nil},
		{"other organisation cannot create", f.mallory, "POST", acme + "/schedules", slot, 403, nil},
		{"absent organisation", f.alice, "POST", "/organisations/123456789/schedules", slot, 400, nil},
		{"start required", f.alice, "POST", acme + "/schedules", map[string]any{"scheduled_finish_at": "2026-11-23T07:00:00Z"}, 400, wantField("scheduled_start_at")},
		{"bad time", f.alice, "POST", acme + "/schedules", with(map[string]any{"scheduled_start_at": "tomorrow"}), 400, wantField("scheduled_start_at")},
		{"finish before start", f.alice, "POST", acme + "/schedules", with(map[string]any{"scheduled_finish_at": "2026-11-23T06:00:00Z"}), 400, wantField("scheduled_finish_at")},
		{"invitee not a member", f.alice, "POST", acme + "/schedules", with(map[string]any{"invitee_ids": []string{f.mallory.ID}}), 400, wantField("invitee_ids")},
		{"pending member cannot be invited", f.alice, "POST", acme + "/schedules", with(map[string]any{"invitee_ids": []string{f.pen.ID}}), 400, wantField("invitee_ids")},
	})
	sc := e.must(201, f.alice, "POST", acme+"/schedules", with(map[string]any{"invitee_ids": []string{f.bob.ID}})).obj(t)
	sp := "/schedules/" + sc["id"].(string)
	if inv := sc["invitees"].([]any); len(inv) != 1 || inv[0].(map[string]any)["status"] != "invited" || sc["toolbox_id"] != nil {
		t.Fatalf("created %v", sc)
	}
	carol := e.user("carol")
	e.addMember(f.acme, carol)
	e.run(t, []scenario{
		{"member reads", f.bob, "GET", sp, nil, 200, wantKey("scheduled_start_at", "2026-11-23T07:00:00.000Z")},
		{"other organisation cannot read", f.mallory, "GET", sp, nil, 403, nil},
		{"absent schedule", f.bob, "GET", "/schedules/123456789", nil, 404, nil},
		{"member cannot patch", f.bob, "PATCH", sp, map[string]any{"actual_start_at": "2026-11-23T07:05:00Z"}, 403, nil},
		{"patch actual times", f.alice, "PATCH", sp, map[string]any{"actual_start_at": "2026-11-23T07:05:00Z", "actual_finish_at": "2026-11-23T07:25:00Z"}, 200, wantKey("actual_start_at", "2026-11-23T07:05:00.000Z")},
		{"patch actual finish before start", f.alice, "PATCH", sp, map[string]any{"actual_finish_at": "2026-11-23T07:00:00Z"}, 400, wantField("actual_finish_at")},
		{"patch read-only invitees", f.alice, "PATCH", sp, map[string]any{"invitees": []any{}}, 400, wantField("invitees")},
		{"other organisation cannot invite", f.mallory, "PUT", sp + "/invitees/" + f.mallory.ID, nil, 403, nil},
		{"member cannot invite", f.bob, "PUT", sp + "/invitees/" + carol.ID, nil, 403, nil},
		{"invite a non-member", f.alice, "PUT", sp + "/invitees/" + f.mallory.ID, nil, 400, wantField("user")},
		{"invite carol", f.alice, "PUT", sp + "/invitees/" + carol.ID, nil, 200, func(t *testing.T, r *testResponse) {
			if inv := r.obj(t)["invitees"].([]any); len(inv) != 2 {
				t.Errorf("invitees %v", inv)
			}
		}},
		{"a non-invitee cannot check in", f.alice, "POST", sp + "/check-in", map[string]any{}, 400, wantField("user_id")},
		{"other organisation cannot check in", f.mallory, "POST", sp + "/check-in", map[string]any{}, 403, nil},
		{"check-in latitude alone", f.bob, "POST", sp + "/check-in", map[string]any{"latitude": 51.5}, 400, wantField("latitude")},
		{"invitee checks in with a position", f.bob, "POST", sp + "/check-in", map[string]any{"latitude": 51.5, "longitude": -0.12}, 200, func(t *testing.T, r *testResponse) {
			for _, in := range r.obj(t)["invitees"].([]any) {
				m := in.(map[string]any)
				if m["user"].(map[string]any)["id"] == f.bob.ID && (m["status"] != "checked_in" || m["latitude"] != 51.5) {
					t.Errorf("bob %v", m)
				}
			}
		}},
		{"a member cannot check another in", f.bob, "POST", sp + "/check-in", map[string]any{"user_id": carol.ID}, 403, nil},
		{"a manager checks carol in", f.alice, "POST", sp + "/check-in", map[string]any{"user_id": carol.ID}, 200, nil},
		{"carol declines", carol, "POST", sp + "/decline", map[string]any{}, 200, func(t *testing.T, r *testResponse) {
			for _, in := range r.obj(t)["invitees"].([]any) {
				m := in.(map[string]any)
				if m["user"].(map[string]any)["id"] == carol.ID && m["status"] != "declined" {
					t.Errorf("carol %v", m)
				}
			}
		}},
		{"uninvite carol", f.alice, "DELETE", sp + "/invitees/" + carol.ID, nil, 200, nil},
		{"uninvite again", f.alice, "DELETE", sp + "/invitees/" + carol.ID, nil, 404, nil},
		{"member cannot delete", f.bob, "DELETE", sp, nil, 403, nil},
		{"other organisation cannot delete", f.mallory, "DELETE", sp, nil, 403, nil},
	})
	// A schedule holds one toolbox.
	tb := e.must(201, f.bob, "POST", acme+"/toolboxes", map[string]any{"title": "Morning", "schedule_id": sc["id"]}).obj(t)
	if s := tb["schedules"].([]any); len(s) != 1 || s[0].(map[string]any)["id"] != sc["id"] {
		t.Fatalf("toolbox schedules %v", tb["schedules"])
	}
	e.run(t, []scenario{
		{"a schedule with a toolbox already", f.bob, "POST", acme + "/toolboxes", map[string]any{"title": "Again", "schedule_id": sc["id"]}, 400, wantField("schedule_id")},
		{"member without MANAGE_TEAMS cannot add a toolbox schedule", f.bob, "POST", "/toolboxes/" + tb["id"].(string) + "/schedules", slot, 403, nil},
		{"other organisation cannot add a toolbox schedule", f.mallory, "POST", "/toolboxes/" + tb["id"].(string) + "/schedules", slot, 403, nil},
		{"toolbox schedule", f.alice, "POST", "/toolboxes/" + tb["id"].(string) + "/schedules", slot, 201, wantKey("toolbox_id", tb["id"])},
		{"toolbox lists both", f.bob, "GET", "/toolboxes/" + tb["id"].(string), nil, 200, func(t *testing.T, r *testResponse) {
			if s := r.obj(t)["schedules"].([]any); len(s) != 2 {
				t.Errorf("schedules %v", s)
			}
		}},
		{"delete", f.alice, "DELETE", sp, nil, 204, nil},
		{"gone", f.alice, "GET", sp, nil, 404, nil},
	})
}

// code is the current TOTP code of a secret at the test clock's time.
func code(t *testing.T, e *testEnv, secret string) string {
	t.Helper()
	c, err := totp.GenerateCode(secret, e.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

const userSecret = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP"

func TestToolboxSigning(t *testing.T) {
	t.Parallel()
	f := newToolboxFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	tb := e.must(201, f.alice, "POST", acme+"/toolboxes", map[string]any{"title": "Lifting"}).obj(t)
	id := tb["id"].(string)
	tp := "/toolboxes/" + id
	secret := e.must(200, f.alice, "GET", tp+"?include_totp_token=true", nil).obj(t)["totp_token"].(string)
	visitor := map[string]any{"first_name": "Vi", "last_name": "Sitor", "company": "Hire Co", "email": "vi@hire.example", "declaration": true}
	svg := `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 100 40"><!-- pen --><path d="M1 1 L99 39" stroke="black"/></svg>`
	e.run(t, []scenario{
		{"not conducted yet", f.alice, "POST", tp + "/sign", visitor, 403, nil},
	})
	e.must(200, f.alice, "POST", tp+"/conduct", map[string]any{"latitude": 51.5, "longitude": -0.12})
	e.must(200, f.bob, "PUT", "/users/@me/qr/token", map[string]any{"token": userSecret})
	respCode := func(want string) func(t *testing.T, r *testResponse) {
		return func(t *testing.T, r *testResponse) {
			if got := r.obj(t)["response_code"]; got != want {
				t.Errorf("response_code %v, want %s (%s)", got, want, r.Body)
			}
		}
	}
	e.run(t, []scenario{
		{"other organisation cannot sign", f.mallory, "POST", tp + "/sign", visitor, 403, nil},
		{"absent toolbox", f.alice, "POST", "/toolboxes/123456789/sign", visitor, 404, nil},
		{"no evidence", f.alice, "POST", tp + "/sign", map[string]any{"first_name": "Vi", "last_name": "Sitor"}, 400, respCode("missing_declaration")},
		{"visitor without names", f.alice, "POST", tp + "/sign", map[string]any{"declaration": true}, 200, func(t *testing.T, r *testResponse) {
			o := r.obj(t)
			if o["response_code"] != "confirm_details" || o["errors"].(map[string]any)["first_name"] == nil {
				t.Errorf("got %v", o)
			}
		}},
		{"nothing recorded for confirm_details", f.alice, "GET", tp, nil, 200, func(t *testing.T, r *testResponse) {
			if u := r.obj(t)["users"].([]any); len(u) != 0 {
				t.Errorf("users %v", u)
			}
		}},
		{"retry with the details", f.alice, "POST", tp + "/sign", visitor, 200, func(t *testing.T, r *testResponse) {
			o := r.obj(t)
			if o["response_code"] != "toolbox_signed" || o["signed_method"] != "declaration" || o["company"] != "Hire Co" || o["user_id"] != nil {
				t.Errorf("got %v", o)
			}
		}},
		{"bad e-mail", f.alice, "POST", tp + "/sign", map[string]any{"first_name": "A", "last_name": "B", "email": "nope", "declaration": true}, 400, wantField("email")},
		{"bad signature format", f.alice, "POST", tp + "/sign", map[string]any{"first_name": "A", "last_name": "B", "signature": "<svg><foreignObject/></svg>"}, 400, wantField("signature")},
		{"signature with script", f.alice, "POST", tp + "/sign", map[string]any{"first_name": "A", "last_name": "B", "signature": `<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`}, 400, wantField("signature")},
		{"signature with an event attribute", f.alice, "POST", tp + "/sign", map[string]any{"first_name": "A", "last_name": "B", "signature": `<svg xmlns="http://www.w3.org/2000/svg"><path d="M1 1" onclick="x()"/></svg>`}, 400, wantField("signature")},
		{"signature with an external reference", f.alice, "POST", tp + "/sign", map[string]any{"first_name": "A", "last_name": "B", "signature": `<svg xmlns="http://www.w3.org/2000/svg"><image href="http://evil.example/x.png"/></svg>`}, 400, wantField("signature")},
		{"signature sanitised", f.alice, "POST", tp + "/sign", map[string]any{"first_name": "Sig", "last_name": "Ner", "signature": svg}, 200, wantKey("signed_method", "signature")},
		{"stored signature has no script", f.alice, "GET", tp, nil, 200, func(t *testing.T, r *testResponse) {
			for _, u := range r.obj(t)["users"].([]any) {
				m := u.(map[string]any)
				if m["first_name"] != "Sig" {
					continue
				}
				sig, _ := m["signature"].(string)
				if !strings.Contains(sig, "<path") || strings.Contains(sig, "pen") {
					t.Errorf("signature %q", sig)
				}
			}
		}},
		{"user_id of a non-member", f.alice, "POST", tp + "/sign", map[string]any{"user_id": f.mallory.ID, "declaration": true}, 400, wantField("user_id")},
		{"bad user QR code format", f.alice, "POST", tp + "/sign", map[string]any{"user_qr_code": "abc"}, 400, wantField("user_qr_code")},
		{"wrong user QR code", f.alice, "POST", tp + "/sign", map[string]any{"user_qr_code": f.bob.ID + ":000000"}, 400, wantField("user_qr_code")},
		{"scan older than 24 hours", f.alice, "POST", tp + "/sign", map[string]any{"user_qr_code": f.bob.ID + ":" + code(t, e, userSecret), "scanned_at": "2026-11-20T09:00:00Z"}, 400, wantField("scanned_at")},
		{"scanned_at without a code", f.alice, "POST", tp + "/sign", map[string]any{"scanned_at": "2026-11-21T09:00:00Z", "declaration": true, "first_name": "A", "last_name": "B"}, 400, wantField("scanned_at")},
	})
	// An offline tablet scanned bob's code 10 minutes ago and syncs now.
	scanned := e.clock.Now().Add(-10 * time.Minute)
	old, _ := totp.GenerateCode(userSecret, scanned)
	qr := map[string]any{"user_qr_code": f.bob.ID + ":" + old, "scanned_at": scanned.Format(time.RFC3339)}
	e.run(t, []scenario{
		{"user QR scanned offline", f.alice, "POST", tp + "/sign", qr, 200, func(t *testing.T, r *testResponse) {
			o := r.obj(t)
			if o["response_code"] != "toolbox_signed" || o["signed_method"] != "user_qr" || o["user_id"] != f.bob.ID || o["first_name"] != "bob" {
				t.Errorf("got %v", o)
			}
		}},
		{"the same code twice", f.alice, "POST", tp + "/sign", qr, 400, wantField("user_qr_code")},
		{"bob signed already: his signature comes back", f.alice, "POST", tp + "/sign", map[string]any{"user_id": f.bob.ID, "declaration": true}, 200, wantKey("signed_method", "user_qr")},
		{"signatures recorded", f.bob, "GET", tp, nil, 200, func(t *testing.T, r *testResponse) {
			if u := r.obj(t)["users"].([]any); len(u) != 3 {
				t.Errorf("users %v", u)
			}
		}},
	})

	// The user's side: a code opens the toolbox and gives a signing token.
	carol := e.user("carol")
	e.addMember(f.acme, carol)
	e.must(200, carol, "PUT", "/users/@me/qr/token", map[string]any{"token": userSecret})
	e.must(200, f.mallory, "PUT", "/users/@me/qr/token", map[string]any{"token": userSecret})
	e.clock.Advance(time.Minute) // codes used above are spent
	var jwtCarol string
	e.run(t, []scenario{
		{"no token and not invited", carol, "GET", "/users/@me/toolboxes/" + id, nil, 400, nil},
		{"wrong code", carol, "GET", "/users/@me/toolboxes/" + id + "?token=000000", nil, 404, nil},
		{"absent toolbox", carol, "GET", "/users/@me/toolboxes/123456789?token=" + code(t, e, userSecret), nil, 404, nil},
		{"own code, other organisation's toolbox", f.mallory, "GET", "/users/@me/toolboxes/" + id + "?token=" + code(t, e, userSecret), nil, 404, nil},
		{"own code", carol, "GET", "/users/@me/toolboxes/" + id + "?token=" + code(t, e, userSecret), nil, 200, func(t *testing.T, r *testResponse) {
			o := r.obj(t)
			jwtCarol, _ = o["sign_token"].(string)
			if jwtCarol == "" || o["signed"] != false || len(o["users"].([]any)) != 0 || o["totp_token"] != nil {
				t.Errorf("got %v", o)
			}
		}},
		{"own code only once", carol, "GET", "/users/@me/toolboxes/" + id + "?token=" + code(t, e, userSecret), nil, 404, nil},
	})
	var jwtMallory string
	e.run(t, []scenario{
		{"the toolbox's code scanned by anyone at the meeting", f.mallory, "GET", "/users/@me/toolboxes/" + id + "?token=" + code(t, e, secret), nil, 200, func(t *testing.T, r *testResponse) {
			jwtMallory, _ = r.obj(t)["sign_token"].(string)
		}},
		{"sign with another user's token", f.bob, "POST", "/users/@me/toolboxes/" + id + "/sign", map[string]any{"jwt": jwtCarol}, 404, nil},
		{"sign another toolbox with the token", carol, "POST", "/users/@me/toolboxes/123456789/sign", map[string]any{"jwt": jwtCarol}, 404, nil},
		{"an access token is not a signing token", carol, "POST", "/users/@me/toolboxes/" + id + "/sign", map[string]any{"jwt": carol.Token}, 404, nil},
		{"phone that is not the confirmed one", carol, "POST", "/users/@me/toolboxes/" + id + "/sign", map[string]any{"jwt": jwtCarol, "phone_number": "+441234567890"}, 400, wantField("phone_number")},
		{"carol signs in the app", carol, "POST", "/users/@me/toolboxes/" + id + "/sign", map[string]any{"jwt": jwtCarol, "position": "Rigger"}, 200, func(t *testing.T, r *testResponse) {
			o := r.obj(t)
			if o["response_code"] != "toolbox_signed" || o["signed_method"] != "app" || o["position"] != "Rigger" || o["user_id"] != carol.ID {
				t.Errorf("got %v", o)
			}
		}},
	})
	e.run(t, []scenario{
		// The scanned toolbox code outranks a signature drawn with it (the drawing is kept).
		{"mallory signs by the toolbox QR with a drawn signature", f.mallory, "POST", "/users/@me/toolboxes/" + id + "/sign", map[string]any{"jwt": jwtMallory,
			"signature": `<svg xmlns="http://www.w3.org/2000/svg"><path d="M2 2 L9 9"/></svg>`}, 200, func(t *testing.T, r *testResponse) {
			if o := r.obj(t); o["signed_method"] != "toolbox_qr" {
				t.Errorf("got %v", o)
			}
		}},
		{"carol sees only her own signature", carol, "GET", "/users/@me/toolboxes/" + id + "?token=" + code(t, e, secret), nil, 200, func(t *testing.T, r *testResponse) {
			o := r.obj(t)
			if u := o["users"].([]any); len(u) != 1 || o["signed"] != true {
				t.Errorf("got %v", o)
			}
		}},
	})
	found := 0
	for _, u := range e.must(200, f.alice, "GET", "/toolboxes/"+id, nil).obj(t)["users"].([]any) {
		if u := u.(map[string]any); u["user_id"] == f.mallory.ID {
			found++
			if sig, _ := u["signature"].(string); u["signed_method"] != "toolbox_qr" || !strings.Contains(sig, `d="M2 2 L9 9"`) {
				t.Errorf("mallory's signature %v", u)
			}
		}
	}
	if found != 1 {
		t.Errorf("%d signatures of mallory's", found)
	}
	e.clock.Advance(31 * time.Minute)
	e.run(t, []scenario{
		{"expired signing token", f.mallory, "POST", "/users/@me/toolboxes/" + id + "/sign", map[string]any{"jwt": jwtMallory}, 404, nil},
	})
}

func TestToolboxSigningThroughSchedules(t *testing.T) {
	t.Parallel()
	f := newToolboxFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	carol := e.user("carol")
	e.addMember(f.acme, carol)
	tb := e.must(201, f.alice, "POST", acme+"/toolboxes", map[string]any{"title": "Site induction"}).obj(t)
	id := tb["id"].(string)
	sc := e.must(201, f.alice, "POST", "/toolboxes/"+id+"/schedules", map[string]any{"scheduled_start_at": "2026-11-21T09:00:00Z",
		"scheduled_finish_at": "2026-11-21T10:00:00Z", "invitee_ids": []string{f.bob.ID, carol.ID}}).obj(t)
	sid := sc["id"].(string)
	other := e.must(201, f.alice, "POST", acme+"/schedules", map[string]any{"scheduled_start_at": "2026-11-21T09:00:00Z", "scheduled_finish_at": "2026-11-21T10:00:00Z"}).obj(t)
	e.must(200, f.alice, "POST", "/toolboxes/"+id+"/conduct", map[string]any{"latitude": 51.5, "longitude": -0.12})
	status := func(user *testUser, want string) func(t *testing.T, r *testResponse) {
		return func(t *testing.T, r *testResponse) {
			s := e.must(200, f.alice, "GET", "/schedules/"+sid, nil).obj(t)
			for _, in := range s["invitees"].([]any) {
				m := in.(map[string]any)
				if m["user"].(map[string]any)["id"] == user.ID && m["status"] != want {
					t.Errorf("status %v, want %s", m["status"], want)
				}
			}
		}
	}
	e.run(t, []scenario{
		{"an invitee opens the toolbox without a token", carol, "GET", "/users/@me/toolboxes/" + id, nil, 200, wantKey("signed", false)},
		{"not checked in", carol, "POST", "/users/@me/toolboxes/" + id + "/sign", map[string]any{"schedule_id": sid}, 400, func(t *testing.T, r *testResponse) {
			if r.obj(t)["response_code"] != "user_not_checked_in" {
				t.Errorf("got %s", r.Body)
			}
		}},
		{"a schedule of another toolbox", carol, "POST", "/users/@me/toolboxes/" + id + "/sign", map[string]any{"schedule_id": other["id"]}, 404, nil},
		{"absent schedule", carol, "POST", "/users/@me/toolboxes/" + id + "/sign", map[string]any{"schedule_id": "123456789"}, 404, nil},
		{"not invited", f.alice, "POST", "/users/@me/toolboxes/" + id + "/sign", map[string]any{"schedule_id": sid}, 400, func(t *testing.T, r *testResponse) {
			if r.obj(t)["response_code"] != "user_not_invited" {
				t.Errorf("got %s", r.Body)
			}
		}},
		{"conductor: a visitor cannot sign through a schedule", f.alice, "POST", "/toolboxes/" + id + "/sign", map[string]any{"schedule_id": sid, "first_name": "V", "last_name": "W", "declaration": true}, 400, func(t *testing.T, r *testResponse) {
			if r.obj(t)["response_code"] != "user_not_invited" {
				t.Errorf("got %s", r.Body)
			}
		}},
		{"carol checks in", carol, "POST", "/schedules/" + sid + "/check-in", map[string]any{}, 200, status(carol, "checked_in")},
		{"carol signs through the schedule", carol, "POST", "/users/@me/toolboxes/" + id + "/sign", map[string]any{"schedule_id": sid}, 200, status(carol, "attending")},
		{"attending cannot decline", carol, "POST", "/schedules/" + sid + "/decline", map[string]any{}, 400, nil},
		{"conductor: bob not checked in", f.alice, "POST", "/toolboxes/" + id + "/sign", map[string]any{"schedule_id": sid, "user_id": f.bob.ID, "declaration": true}, 400, func(t *testing.T, r *testResponse) {
			if r.obj(t)["response_code"] != "user_not_checked_in" {
				t.Errorf("got %s", r.Body)
			}
		}},
		{"a manager checks bob in", f.alice, "POST", "/schedules/" + sid + "/check-in", map[string]any{"user_id": f.bob.ID}, 200, status(f.bob, "checked_in")},
		{"conductor signs bob through the schedule", f.alice, "POST", "/toolboxes/" + id + "/sign", map[string]any{"schedule_id": sid, "user_id": f.bob.ID, "declaration": true}, 200, status(f.bob, "attending")},
	})
}

func TestToolboxSigningNeedsLocationInductions(t *testing.T) {
	t.Parallel()
	f := newToolboxFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	ind := e.must(201, f.alice, "POST", acme+"/inductions", map[string]any{"name": "Depot safety", "valid_for": 3600}).obj(t)
	iid := ind["id"].(string)
	q := e.must(200, f.alice, "PATCH", "/inductions/"+iid, map[string]any{"questions": []any{map[string]any{"question": "Fit?", "type": "boolean"}}}).obj(t)
	qid := q["questions"].([]any)[0].(map[string]any)["id"].(string)
	evilInd := e.must(201, f.mallory, "POST", "/organisations/"+f.evil+"/inductions", map[string]any{"name": "Evil"}).obj(t)["id"].(string)
	lp := "/locations/" + f.depot + "/inductions/"
	e.run(t, []scenario{
		{"member cannot require an induction", f.bob, "PUT", lp + iid, nil, 403, nil},
		{"other organisation cannot require an induction", f.mallory, "PUT", lp + evilInd, nil, 403, nil},
		{"an induction of another organisation", f.alice, "PUT", lp + evilInd, nil, 400, wantField("induction")},
		{"absent location", f.alice, "PUT", "/locations/123456789/inductions/" + iid, nil, 404, nil},
		{"require", f.alice, "PUT", lp + iid, nil, 200, wantLen(1)},
		{"require again changes nothing", f.alice, "PUT", lp + iid, nil, 200, wantLen(1)},
		{"member lists", f.bob, "GET", "/locations/" + f.depot + "/inductions", nil, 200, func(t *testing.T, r *testResponse) {
			if l := r.arr(t); len(l) != 1 || l[0]["name"] != "Depot safety" {
				t.Errorf("got %v", l)
			}
		}},
		{"other organisation cannot list", f.mallory, "GET", "/locations/" + f.depot + "/inductions", nil, 403, nil},
	})
	tb := e.must(201, f.alice, "POST", acme+"/toolboxes", map[string]any{"title": "At the depot", "location_id": f.depot}).obj(t)
	tp := "/toolboxes/" + tb["id"].(string)
	e.must(200, f.alice, "POST", tp+"/conduct", map[string]any{"latitude": 51.5, "longitude": -0.12})
	e.run(t, []scenario{
		{"bob has no record", f.alice, "POST", tp + "/sign", map[string]any{"user_id": f.bob.ID, "declaration": true}, 400, func(t *testing.T, r *testResponse) {
			if o := r.obj(t); o["response_code"] != "induction_required" || !strings.Contains(o["message"].(string), "Depot safety") {
				t.Errorf("got %v", o)
			}
		}},
		{"a visitor is not a user with records", f.alice, "POST", tp + "/sign", map[string]any{"first_name": "V", "last_name": "W", "declaration": true}, 200, wantKey("response_code", "toolbox_signed")},
	})
	e.must(201, f.bob, "POST", "/inductions/"+iid+"/users/"+f.bob.ID, nil)
	e.must(201, f.bob, "POST", "/users/@me/inductions/"+iid+"/records", map[string]any{"answers": []any{map[string]any{"question_id": qid, "value": true}}})
	e.clock.Advance(2 * time.Hour) // the record expires after an hour
	e.run(t, []scenario{
		{"an expired record", f.alice, "POST", tp + "/sign", map[string]any{"user_id": f.bob.ID, "declaration": true}, 400, wantKey("response_code", "induction_required")},
	})
	e.must(201, f.bob, "POST", "/users/@me/inductions/"+iid+"/records", map[string]any{"answers": []any{map[string]any{"question_id": qid, "value": true}}})
	e.run(t, []scenario{
		{"with a valid record", f.alice, "POST", tp + "/sign", map[string]any{"user_id": f.bob.ID, "declaration": true}, 200, wantKey("response_code", "toolbox_signed")},
		{"no longer required", f.alice, "DELETE", lp + iid, nil, 200, wantLen(0)},
		{"not required twice", f.alice, "DELETE", lp + iid, nil, 404, nil},
	})
}

// TestSigningCodeGuessing: wrong TOTP codes spend the guessing limiter (per
// account and client address); once spent the answer is 429 with
// Retry-After, even for a right code, until the bucket refills.
func TestSigningCodeGuessing(t *testing.T) {
	t.Parallel()
	f := newToolboxFixture(t)
	e := f.e
	tb := e.must(201, f.alice, "POST", "/organisations/"+f.acme+"/toolboxes", map[string]any{"title": "Guess"}).obj(t)
	id := tb["id"].(string)
	e.must(200, f.bob, "PUT", "/users/@me/qr/token", map[string]any{"token": userSecret})
	for i := 0; i < accountAttempts; i++ {
		e.must(404, f.bob, "GET", "/users/@me/toolboxes/"+id+"?token=00000"+string(rune('0'+i%10)), nil)
	}
	r := e.must(429, f.bob, "GET", "/users/@me/toolboxes/"+id+"?token="+code(t, e, userSecret), nil)
	if r.Header.Get("Retry-After") == "" {
		t.Errorf("no Retry-After")
	}
	e.clock.Advance(accountAttemptEvery*accountAttempts + time.Second)
	e.must(200, f.bob, "GET", "/users/@me/toolboxes/"+id+"?token="+code(t, e, userSecret), nil)

	// A conductor guessing a user's QR code is limited on that user's account.
	e.must(200, f.alice, "POST", "/toolboxes/"+id+"/conduct", map[string]any{"latitude": 1, "longitude": 1})
	for i := 0; i < accountAttempts; i++ {
		e.must(400, f.alice, "POST", "/toolboxes/"+id+"/sign", map[string]any{"user_qr_code": f.bob.ID + ":00000" + string(rune('0'+i%10))})
	}
	e.must(429, f.alice, "POST", "/toolboxes/"+id+"/sign", map[string]any{"user_qr_code": f.bob.ID + ":" + code(t, e, userSecret)})
}

// TestToolboxEvents: toolbox integrations get a delivery for each change,
// queued in the change's transaction; another organisation's integration
// gets none.
func TestToolboxEvents(t *testing.T) {
	t.Parallel()
	f := newToolboxFixture(t) // no worker: deliveries only queue
	e, acme := f.e, "/organisations/"+f.acme
	conf := `{"url": "https://hooks.example/toolbox"}`
	integ := e.must(201, f.alice, "POST", acme+"/integrations", map[string]any{"item_type": "toolbox", "provider": "github", "configuration": conf}).obj(t)["id"].(string)
	evil := e.must(201, f.mallory, "POST", "/organisations/"+f.evil+"/integrations", map[string]any{"item_type": "toolbox", "provider": "github", "configuration": conf}).obj(t)["id"].(string)
	tb := e.must(201, f.bob, "POST", acme+"/toolboxes", map[string]any{"title": "Events"}).obj(t)
	tp := "/toolboxes/" + tb["id"].(string)
	e.must(200, f.bob, "PATCH", tp, map[string]any{"title": "Events!"})
	e.must(400, f.bob, "PATCH", tp, map[string]any{"title": ""}) // refused: no event
	e.must(200, f.bob, "POST", tp+"/conduct", map[string]any{"latitude": 1, "longitude": 2})
	e.must(200, f.bob, "POST", tp+"/sign", map[string]any{"first_name": "Vi", "last_name": "Sitor", "declaration": true})
	e.must(200, f.bob, "POST", tp+"/archive", nil)
	e.must(200, f.bob, "POST", tp+"/unarchive", nil)
	events := func(id string) []string {
		rows, err := e.store.Writer.Query(`SELECT event FROM integration_deliveries WHERE integration_id = ? ORDER BY id`, parseTestID(t, id))
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var ev string
			_ = rows.Scan(&ev)
			out = append(out, ev)
		}
		return out
	}
	want := "toolbox.created,toolbox.updated,toolbox.conducted,toolbox.signed,toolbox.archived,toolbox.unarchived"
	if got := strings.Join(events(integ), ","); got != want {
		t.Errorf("events %s, want %s", got, want)
	}
	if got := events(evil); len(got) != 0 {
		t.Errorf("another organisation's integration got %v", got)
	}
}

// TestToolboxListMatchesGet: the list loads every part of a page of
// toolboxes in a few batched reads; each listed toolbox must be exactly
// what GET /toolboxes/{id} answers (sections, topics, signers, schedules,
// location, workgroup and people never mixed up between toolboxes).
func TestToolboxListMatchesGet(t *testing.T) {
	t.Parallel()
	f := newToolboxFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	var ids []string
	for i, b := range []map[string]any{
		{"title": "Lifting", "location_id": f.depot},
		{"title": "Hot works", "workgroup_id": f.workgroup},
		{"title": "Confined spaces", "location_id": f.depot, "workgroup_id": f.workgroup},
		{"title": "Empty"},
	} {
		id := e.must(201, f.bob, "POST", acme+"/toolboxes", b).obj(t)["id"].(string)
		ids = append(ids, id)
		tp := "/toolboxes/" + id
		for s := range i {
			section := e.must(201, f.bob, "POST", tp+"/sections", map[string]any{"title": "Section " + strings.Repeat("I", s+1)}).obj(t)["id"].(string)
			e.must(201, f.alice, "POST", tp+"/topics", map[string]any{"section_id": section, "body": "Topic in " + section})
		}
		if i%2 == 1 {
			e.must(201, f.alice, "POST", tp+"/topics", map[string]any{"body": "Loose topic"})
			e.must(201, f.alice, "POST", tp+"/schedules", map[string]any{"scheduled_start_at": "2026-11-22T07:00:00Z",
				"scheduled_finish_at": "2026-11-22T08:00:00Z", "invitee_ids": []string{f.bob.ID}})
		}
	}
	list := e.must(200, f.bob, "GET", acme+"/toolboxes", nil).arr(t)
	if len(list) != len(ids) {
		t.Fatalf("listed %d toolboxes, want %d", len(list), len(ids))
	}
	for _, item := range list {
		one := e.must(200, f.bob, "GET", "/toolboxes/"+item["id"].(string), nil).obj(t)
		delete(one, "permissions") // the caller's, only on the toolbox's own answer
		if got, want := mustJSON(t, item), mustJSON(t, one); got != want {
			t.Errorf("listed toolbox differs from GET:\nlist %s\nget  %s", got, want)
		}
	}
}

// mustJSON encodes v canonically (map keys sorted) for comparisons.
func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
