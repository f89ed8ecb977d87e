package server

import (
	"net/url"
	"strings"
	"testing"
)

func wantTotal(n string) func(t *testing.T, r *testResponse) {
	return func(t *testing.T, r *testResponse) {
		t.Helper()
		if got := r.Header.Get("X-Total-Count"); got != n {
			t.Errorf("X-Total-Count %q, want %s", got, n)
		}
	}
}

func TestWorkgroups(t *testing.T) {
	t.Parallel()
	f := newOrgFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	e.run(t, []scenario{
		{"member without MANAGE_WORKGROUPS cannot create", f.bob, "POST", acme + "/workgroups", map[string]any{"name": "Civil"}, 403, nil},
		{"pending member cannot create", f.pen, "POST", acme + "/workgroups", map[string]any{"name": "Civil"}, 403, nil},
		{"other organisation cannot create", f.mallory, "POST", acme + "/workgroups", map[string]any{"name": "Civil"}, 403, nil},
		{"absent organisation", f.alice, "POST", "/organisations/123456789/workgroups", map[string]any{"name": "Civil"}, 400, nil},
		{"name required", f.alice, "POST", acme + "/workgroups", map[string]any{"description": "x"}, 400, wantField("name")},
		{"name over 50", f.alice, "POST", acme + "/workgroups", map[string]any{"name": strings.Repeat("n", 51)}, 400, wantField("name")},
		{"name wrong type", f.alice, "POST", acme + "/workgroups", map[string]any{"name": 5}, 400, wantField("name")},
		{"read-only id", f.alice, "POST", acme + "/workgroups", map[string]any{"name": "Civil", "id": "1"}, 400, wantField("id")},
		{"no token", nil, "POST", acme + "/workgroups", map[string]any{"name": "Civil"}, 401, nil},
	})
	wg := e.must(201, f.alice, "POST", acme+"/workgroups", map[string]any{"name": " Civil ", "description": "Earthworks"}).obj(t)
	if wg["name"] != "Civil" || wg["description"] != "Earthworks" || wg["organisation_id"] != f.acme {
		t.Fatalf("created %v", wg)
	}
	id := wg["id"].(string)
	e.must(201, f.alice, "POST", acme+"/workgroups", map[string]any{"name": "Electrical"})
	path := "/workgroups/" + id
	e.run(t, []scenario{
		{"member lists", f.bob, "GET", acme + "/workgroups", nil, 200, func(t *testing.T, r *testResponse) { wantLen(2)(t, r); wantTotal("2")(t, r) }},
		{"filtered by name", f.bob, "GET", acme + "/workgroups?$filter=" + url.QueryEscape("startswith(name, 'civ')"), nil, 200, wantLen(1)},
		{"bad filter field", f.bob, "GET", acme + "/workgroups?$filter=" + url.QueryEscape("code eq 'x'"), nil, 400, nil},
		{"other organisation cannot list", f.mallory, "GET", acme + "/workgroups", nil, 403, nil},
		{"pending member cannot list", f.pen, "GET", acme + "/workgroups", nil, 403, nil},
		{"member gets", f.bob, "GET", path, nil, 200, wantKey("name", "Civil")},
		{"other organisation cannot get", f.mallory, "GET", path, nil, 403, nil},
		{"absent workgroup", f.bob, "GET", "/workgroups/123456789", nil, 404, nil},
		{"not an id", f.bob, "GET", "/workgroups/abc", nil, 400, nil},
		{"member cannot patch", f.bob, "PATCH", path, map[string]any{"name": "X"}, 403, nil},
		{"other organisation cannot patch", f.mallory, "PATCH", path, map[string]any{"name": "X"}, 403, nil},
		{"patch name too long", f.alice, "PATCH", path, map[string]any{"name": strings.Repeat("n", 51)}, 400, wantField("name")},
		{"patch organisation_id", f.alice, "PATCH", path, map[string]any{"organisation_id": f.evil}, 400, wantField("organisation_id")},
		{"patch absent", f.alice, "PATCH", "/workgroups/123456789", map[string]any{"name": "X"}, 400, nil},
		{"patch name and description", f.alice, "PATCH", path, map[string]any{"name": "Civil works", "description": "", "organisation_id": f.acme}, 200, func(t *testing.T, r *testResponse) {
			if o := r.obj(t); o["name"] != "Civil works" || o["description"] != "" {
				t.Errorf("got %v", o)
			}
		}},
		{"member cannot delete", f.bob, "DELETE", path, nil, 403, nil},
		{"other organisation cannot delete", f.mallory, "DELETE", path, nil, 403, nil},
	})
	e.grant(f.alice, f.acme, f.bob.ID, map[string]string{"MANAGE_WORKGROUPS": "allow"})
	e.must(200, f.bob, "PATCH", path, map[string]any{"description": "by bob"})
}

func TestTeams(t *testing.T) {
	t.Parallel()
	f := newOrgFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	carol, dave := e.user("carol"), e.user("dave")
	e.addMember(f.acme, carol)
	e.addMember(f.acme, dave)
	wg := "/workgroups/" + e.must(201, f.alice, "POST", acme+"/workgroups", map[string]any{"name": "Civil"}).obj(t)["id"].(string)
	other := "/workgroups/" + e.must(201, f.alice, "POST", acme+"/workgroups", map[string]any{"name": "Other"}).obj(t)["id"].(string)
	e.run(t, []scenario{
		{"member without MANAGE_TEAMS cannot create", f.bob, "POST", wg + "/teams", map[string]any{"name": "Crew", "colour": "#00ff00"}, 403, nil},
		{"other organisation cannot create", f.mallory, "POST", wg + "/teams", map[string]any{"name": "Crew", "colour": "#00ff00"}, 403, nil},
		{"absent workgroup", f.alice, "POST", "/workgroups/123456789/teams", map[string]any{"name": "Crew", "colour": "#00ff00"}, 400, nil},
		{"colour required", f.alice, "POST", wg + "/teams", map[string]any{"name": "Crew"}, 400, wantField("colour")},
		{"colour not #RRGGBB", f.alice, "POST", wg + "/teams", map[string]any{"name": "Crew", "colour": "green"}, 400, wantField("colour")},
		{"color alias checked too", f.alice, "POST", wg + "/teams", map[string]any{"name": "Crew", "color": "#12345"}, 400, wantField("color")},
		{"name under 2", f.alice, "POST", wg + "/teams", map[string]any{"name": "C", "colour": "#00ff00"}, 400, wantField("name")},
		{"name over 20", f.alice, "POST", wg + "/teams", map[string]any{"name": strings.Repeat("c", 21), "colour": "#00ff00"}, 400, wantField("name")},
	})
	team := e.must(201, f.alice, "POST", wg+"/teams", map[string]any{"name": "Crew", "colour": "#00ff00"}).obj(t)
	if team["colour"] != "#00FF00" || team["color"] != "#00FF00" || team["name"] != "Crew" || team["organisation_id"] != f.acme {
		t.Fatalf("created %v", team)
	}
	e.must(201, f.alice, "POST", wg+"/teams", map[string]any{"color": "#abcdef"}) // name defaults, the alias works
	tid := team["id"].(string)
	tp := "/team/" + tid
	members := wg + "/teams/" + tid + "/members/"
	e.run(t, []scenario{
		{"member lists teams", f.bob, "GET", wg + "/teams", nil, 200, wantLen(2)},
		{"other organisation cannot list teams", f.mallory, "GET", wg + "/teams", nil, 403, nil},
		{"absent workgroup teams", f.bob, "GET", "/workgroups/123456789/teams", nil, 404, nil},
		{"member gets a team", f.bob, "GET", tp, nil, 200, wantKey("workgroup_id", strings.TrimPrefix(wg, "/workgroups/"))},
		{"other organisation cannot get a team", f.mallory, "GET", tp, nil, 403, nil},
		{"absent team", f.bob, "GET", "/team/123456789", nil, 404, nil},
		{"member cannot patch a team", f.bob, "PATCH", tp, map[string]any{"name": "Gang"}, 403, nil},
		{"other organisation cannot patch a team", f.mallory, "PATCH", tp, map[string]any{"name": "Gang"}, 403, nil},
		{"patch a team's workgroup", f.alice, "PATCH", tp, map[string]any{"workgroup_id": strings.TrimPrefix(other, "/workgroups/")}, 400, wantField("workgroup_id")},
		{"patch bad colour", f.alice, "PATCH", tp, map[string]any{"colour": "#GGGGGG"}, 400, wantField("colour")},
		{"patch absent team", f.alice, "PATCH", "/team/123456789", map[string]any{"name": "Gang"}, 400, nil},
		{"patch name and colour", f.alice, "PATCH", tp, map[string]any{"name": "Gang", "colour": "#0000ff"}, 200, wantKey("color", "#0000FF")},

		{"add a member", f.alice, "PUT", members + carol.ID, nil, 200, func(t *testing.T, r *testResponse) {
			o := r.obj(t)
			if o["is_leader"] != false || o["user"].(map[string]any)["email"] != carol.Email || o["joined_at"] == "" {
				t.Errorf("got %v", o)
			}
		}},
		{"already a member", f.alice, "PUT", members + carol.ID, nil, 400, wantField("user")},
		{"pending member is no organisation member", f.alice, "PUT", members + f.pen.ID, nil, 400, wantField("user")},
		{"a stranger is no organisation member", f.alice, "PUT", members + f.mallory.ID, nil, 400, wantField("user")},
		{"an id of no account answers alike", f.alice, "PUT", members + "123456789", nil, 400, wantField("user")},
		{"team of another workgroup", f.alice, "PUT", other + "/teams/" + tid + "/members/" + dave.ID, nil, 400, nil},
		{"absent workgroup in the path", f.alice, "PUT", "/workgroups/123456789/teams/" + tid + "/members/" + dave.ID, nil, 400, nil},
		{"member who leads nothing cannot add", f.bob, "PUT", members + dave.ID, nil, 403, nil},
		{"other organisation cannot add", f.mallory, "PUT", members + dave.ID, nil, 403, nil},
		{"leadership flag required", f.alice, "PATCH", members + carol.ID, map[string]any{}, 400, wantField("is_leader")},
		{"leadership of a non-member", f.alice, "PATCH", members + dave.ID, map[string]any{"is_leader": true}, 400, wantField("user")},
		{"make carol leader", f.alice, "PATCH", members + carol.ID, map[string]any{"is_leader": true}, 200, wantKey("is_leader", true)},
		{"a leader adds", carol, "PUT", members + dave.ID, nil, 200, nil},
		{"a leader sets leadership (spec spelling)", carol, "PATCH", members + dave.ID, map[string]any{"IsLeader": true}, 200, wantKey("is_leader", true)},
		{"a leader cannot change their own leadership", carol, "PATCH", members + carol.ID, map[string]any{"is_leader": false}, 400, wantField("is_leader")},
		{"a leader cannot remove another leader", carol, "DELETE", members + dave.ID, nil, 403, nil},
		{"member who leads nothing cannot change leadership", f.bob, "PATCH", members + dave.ID, map[string]any{"is_leader": false}, 403, nil},
		{"team members, leaders first", f.bob, "GET", tp + "/members", nil, 200, func(t *testing.T, r *testResponse) {
			list := r.arr(t)
			if len(list) != 2 || list[0]["is_leader"] != true || list[1]["is_leader"] != true {
				t.Errorf("got %v", list)
			}
		}},
		{"other organisation cannot list team members", f.mallory, "GET", tp + "/members", nil, 403, nil},
		{"absent team members", f.bob, "GET", "/team/123456789/members", nil, 404, nil},
		{"MANAGE_TEAMS removes a leader", f.alice, "DELETE", members + dave.ID, nil, 204, nil},
		{"remove a non-member", f.alice, "DELETE", members + dave.ID, nil, 400, wantField("user")},
	})
	// Leaving the organisation ends the team place.
	e.must(204, f.alice, "DELETE", acme+"/members/"+carol.ID, nil)
	if list := e.must(200, f.bob, "GET", tp+"/members", nil).arr(t); len(list) != 0 {
		t.Fatalf("team keeps a removed member: %v", list)
	}
	e.run(t, []scenario{
		{"member cannot delete a team", f.bob, "DELETE", tp, nil, 403, nil},
		{"other organisation cannot delete a team", f.mallory, "DELETE", tp, nil, 403, nil},
		{"delete a team", f.alice, "DELETE", tp, nil, 204, nil},
		{"deleted team", f.bob, "GET", tp, nil, 404, nil},
		{"delete it again", f.alice, "DELETE", tp, nil, 400, nil},
	})
}

// TestWorkgroupDeleteCascades: deleting a workgroup deletes its teams, their
// members and the grants on them.
func TestWorkgroupDeleteCascades(t *testing.T) {
	t.Parallel()
	f := newOrgFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	wg := "/workgroups/" + e.must(201, f.alice, "POST", acme+"/workgroups", map[string]any{"name": "Civil"}).obj(t)["id"].(string)
	tid := e.must(201, f.alice, "POST", wg+"/teams", map[string]any{"name": "Crew", "colour": "#00ff00"}).obj(t)["id"].(string)
	e.must(200, f.alice, "PUT", wg+"/teams/"+tid+"/members/"+f.bob.ID, nil)
	e.must(204, f.alice, "DELETE", wg, nil)
	e.must(404, f.bob, "GET", wg, nil)
	e.must(404, f.bob, "GET", "/team/"+tid, nil)
	var n int
	e.store.Writer.QueryRow(`SELECT count(*) FROM team_members WHERE team_id = ?`, parseTestID(t, tid)).Scan(&n)
	if n != 0 {
		t.Fatalf("%d team places left after the workgroup went", n)
	}
}
