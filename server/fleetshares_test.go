package server

import (
	"fmt"
	"strings"
	"testing"
)

// TestFleetShares: sharing a fleet with another organisation and with one
// user, accepting and rejecting, the reads an accepted share opens (and
// nothing more), and revocation ending them on the next request.
func TestFleetShares(t *testing.T) {
	t.Parallel()
	f := newAssetFixture(t)
	e, acme, evil := f.e, "/organisations/"+f.acme, "/organisations/"+f.evil
	carol := e.user("carol")  // a stranger, shared with personally
	e.sharesFromAnyone(carol) // which a stranger may only when carol accepts shares from anyone
	dave := e.user("dave")    // a member of Evil without MANAGE_FLEETS
	e.addMember(f.evil, dave)
	truck := e.must(201, f.alice, "POST", acme+"/assets", map[string]any{"type_id": f.truck, "name": "Shared truck"}).obj(t)["id"].(string)
	van := e.must(201, f.alice, "POST", acme+"/assets", map[string]any{"type_id": f.plainType, "name": "Private van", "fleet_id": f.otherFleet}).obj(t)["id"].(string)
	e.must(201, f.alice, "POST", acme+"/systems", map[string]any{"name": "Plant"})
	fp := "/fleets/" + f.fleet
	e.run(t, []scenario{
		{"member without MANAGE_FLEETS cannot share", f.bob, "POST", fp + "/shares", map[string]any{"organisation_id": f.evil}, 403, nil},
		{"other organisation cannot share", f.mallory, "POST", fp + "/shares", map[string]any{"organisation_id": f.evil}, 403, nil},
		{"absent fleet", f.alice, "POST", "/fleets/123456789/shares", map[string]any{"organisation_id": f.evil}, 404, nil},
		{"a recipient is required", f.alice, "POST", fp + "/shares", map[string]any{}, 400, wantField("organisation_id")},
		{"not both recipients", f.alice, "POST", fp + "/shares", map[string]any{"organisation_id": f.evil, "user_id": carol.ID}, 400, wantField("organisation_id")},
		{"not its own organisation", f.alice, "POST", fp + "/shares", map[string]any{"organisation_id": f.acme}, 400, wantField("organisation_id")},
		{"absent organisation", f.alice, "POST", fp + "/shares", map[string]any{"organisation_id": "123456789"}, 400, wantField("organisation_id")},
		{"absent user", f.alice, "POST", fp + "/shares", map[string]any{"user_id": "123456789"}, 400, wantField("user_id")},
		{"work item type of another organisation", f.alice, "POST", fp + "/shares", map[string]any{"organisation_id": f.evil, "work_item_type_id": "123456789"}, 400, wantField("work_item_type_id")},
		{"before accepting, Evil reads nothing", f.mallory, "GET", "/api/assets/" + truck, nil, 403, nil},
	})
	orgShare := e.must(201, f.alice, "POST", fp+"/shares", map[string]any{"organisation_id": f.evil}).obj(t)
	if orgShare["status"] != float64(0) || orgShare["organisation"].(map[string]any)["id"] != f.evil || orgShare["fleet"].(map[string]any)["id"] != f.fleet {
		t.Fatalf("share %v", orgShare)
	}
	userShare := e.must(201, f.alice, "POST", fp+"/shares", map[string]any{"user_id": carol.ID}).obj(t)
	os, us := orgShare["id"].(string), userShare["id"].(string)
	e.run(t, []scenario{
		{"no second open share to the same recipient", f.alice, "POST", fp + "/shares", map[string]any{"organisation_id": f.evil}, 400, nil},
		{"manager lists the fleet's shares", f.alice, "GET", fp + "/shares", nil, 200, wantLen(2)},
		{"member cannot list shares", f.bob, "GET", fp + "/shares", nil, 403, nil},
		{"other organisation cannot list shares", f.mallory, "GET", fp + "/shares", nil, 403, nil},
		{"recipient sees its pending share", carol, "GET", "/users/@me/fleet-shares", nil, 200, wantLen(1)},
		{"recipient organisation's members see it", dave, "GET", "/users/@me/fleet-shares", nil, 200, wantLen(1)},
		{"and in /users/@me/shares", carol, "GET", "/users/@me/shares", nil, 200, func(t *testing.T, r *testResponse) {
			if l := r.arr(t); len(l) != 1 || l[0]["type"] != "fleet" {
				t.Errorf("got %v", l)
			}
		}},
		{"pending fleets are not carol's yet", carol, "GET", "/users/@me/fleets", nil, 200, wantLen(0)},
		{"someone else cannot accept carol's share", f.bob, "POST", "/users/@me/fleet-shares/" + us + "/accept", nil, 404, nil},
		{"a member without MANAGE_FLEETS cannot accept for Evil", dave, "POST", "/users/@me/fleet-shares/" + os + "/accept", nil, 403, nil},
		{"a stranger cannot accept for Evil", carol, "POST", "/users/@me/fleet-shares/" + os + "/accept", nil, 404, nil},
		{"absent share", carol, "POST", "/users/@me/fleet-shares/123456789/accept", nil, 404, nil},
		{"Evil's owner accepts", f.mallory, "POST", "/users/@me/fleet-shares/" + os + "/accept", nil, 200, wantResponded(1)},
		{"accepting twice", f.mallory, "POST", "/users/@me/fleet-shares/" + os + "/accept", nil, 400, nil},
		{"carol rejects", carol, "POST", "/users/@me/fleet-shares/" + us + "/reject", nil, 200, wantKey("status", 2)},
		{"rejected shares are not listed", carol, "GET", "/users/@me/fleet-shares", nil, 200, wantLen(0)},

		// What the accepted share opens.
		{"Evil member reads the shared asset", dave, "GET", "/api/assets/" + truck, nil, 200, wantKey("name", "Shared truck")},
		{"and its group", dave, "GET", "/api/assetgroups/" + truck, nil, 200, nil},
		{"not an asset of another fleet", dave, "GET", "/api/assets/" + van, nil, 403, nil},
		{"Acme's asset list shows the shared fleet only", dave, "GET", acme + "/assets", nil, 200, wantLen(1)},
		{"Acme's group list too", dave, "GET", acme + "/asset-groups", nil, 200, wantLen(1)},
		{"Evil's own list includes the shared fleet's assets", dave, "GET", evil + "/assets", nil, 200, wantLen(1)},
		{"Acme's locations", dave, "GET", acme + "/locations", nil, 200, wantLen(1)},
		{"Acme's sub locations", dave, "GET", "/locations/" + f.depot + "/sub-locations", nil, 200, wantLen(1)},
		{"Acme's systems", dave, "GET", acme + "/systems", nil, 200, wantLen(1)},
		{"nothing else: not the asset types", dave, "GET", acme + "/asset-types", nil, 403, nil},
		{"nor a location by id", dave, "GET", "/locations/" + f.depot, nil, 403, nil},
		{"nor the logs", dave, "GET", "/api/assetgroups/" + truck + "/logs", nil, 403, nil},
		{"nor writes", dave, "PATCH", "/api/assets/" + truck, map[string]any{"name": "Mine"}, 403, nil},
		{"nor the fleet's shares", dave, "GET", fp + "/shares", nil, 403, nil},
		{"a stranger sees nothing", carol, "GET", acme + "/assets", nil, 403, nil},

		// Subscriptions to new work items on the fleet.
		{"share holder subscribes", dave, "POST", "/users/@me/fleets/" + f.fleet + "/subscriptions", map[string]any{"location_id": f.depot}, 201, func(t *testing.T, r *testResponse) {
			if l := r.obj(t)["location"].(map[string]any); l["id"] != f.depot {
				t.Errorf("got %v", r.obj(t))
			}
		}},
		{"location of another organisation", dave, "POST", "/users/@me/fleets/" + f.fleet + "/subscriptions", map[string]any{"location_id": f.evilLocation}, 400, wantField("location_id")},
		{"lists them", dave, "GET", "/users/@me/fleets/" + f.fleet + "/subscriptions", nil, 200, wantLen(1)},
		{"a stranger cannot subscribe", carol, "POST", "/users/@me/fleets/" + f.fleet + "/subscriptions", map[string]any{}, 404, nil},
		{"a stranger sees no fleet", carol, "GET", "/users/@me/fleets/" + f.fleet + "/subscriptions", nil, 404, nil},
		{"not the other fleet", dave, "GET", "/users/@me/fleets/" + f.otherFleet + "/subscriptions", nil, 404, nil},
		{"members follow their own fleets", f.bob, "GET", "/users/@me/fleets/" + f.fleet + "/subscriptions", nil, 200, wantLen(0)},

		// Revoking ends it at once.
		{"member cannot revoke", f.bob, "DELETE", fp + "/shares/" + os, nil, 403, nil},
		{"other organisation cannot revoke", f.mallory, "DELETE", fp + "/shares/" + os, nil, 403, nil},
		{"absent share", f.alice, "DELETE", fp + "/shares/123456789", nil, 404, nil},
		{"revoke", f.alice, "DELETE", fp + "/shares/" + os, nil, 204, nil},
		{"revoked: no asset", dave, "GET", "/api/assets/" + truck, nil, 403, nil},
		{"revoked: no list", dave, "GET", acme + "/assets", nil, 403, nil},
		{"revoked: no locations", dave, "GET", acme + "/locations", nil, 403, nil},
		{"revoked: no systems", dave, "GET", acme + "/systems", nil, 403, nil},
		{"revoked: Evil's list is its own again", dave, "GET", evil + "/assets", nil, 200, wantLen(0)},
		{"revoked: no subscriptions", dave, "GET", "/users/@me/fleets/" + f.fleet + "/subscriptions", nil, 404, nil},
		{"revoked: accepting again refused", f.mallory, "POST", "/users/@me/fleet-shares/" + os + "/accept", nil, 400, nil},
		{"revoked shares are not listed", dave, "GET", "/users/@me/fleet-shares", nil, 200, wantLen(0)},
	})
	// A personal share accepted: /users/@me/fleets.
	again := e.must(201, f.alice, "POST", fp+"/shares", map[string]any{"user_id": carol.ID}).obj(t)["id"].(string)
	e.run(t, []scenario{
		{"carol accepts", carol, "POST", "/users/@me/fleet-shares/" + again + "/accept", nil, 200, nil},
		{"carol's fleets", carol, "GET", "/users/@me/fleets", nil, 200, func(t *testing.T, r *testResponse) {
			if l := r.arr(t); len(l) != 1 || l[0]["id"] != f.fleet {
				t.Errorf("got %v", l)
			}
		}},
		{"carol reads the asset", carol, "GET", "/api/assets/" + truck, nil, 200, nil},
		{"a fleet with shares and assets is not deleted", f.alice, "DELETE", fp, nil, 400, nil},
	})
}

// TestAssetRoutesNeverFail sends malformed input to every fleet and asset
// route: no answer may be a 5xx.
func TestAssetRoutesNeverFail(t *testing.T) {
	t.Parallel()
	f := newAssetFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	asset := e.must(201, f.alice, "POST", acme+"/assets", map[string]any{"type_id": f.truck}).obj(t)["id"].(string)
	logID := e.must(201, f.alice, "POST", "/api/assetgroups/"+asset+"/logs", map[string]any{"log": "x"}).obj(t)["id"].(string)
	bodies := []any{nil, "", "null", "[]", "{", `"text"`, `{"name": {}, "type_id": [1], "fleet_id": -5, "fields": {"1": {"value": {}}}, "order": 1e99}`,
		`{"type_id": "` + f.truck + `", "fields": {"` + f.mileage + `": [], "` + f.fuel + `": 7}, "number": -1, "latitude": "n"}`,
		`{"organisation_id": "0", "user_id": "x", "values": [1], "ephemerality": 99, "log": null}`, strings.Repeat("[", 5000)}
	paths := []string{
		acme + "/fleets", "/fleets/" + f.fleet, "/fleets/" + f.fleet + "/permissions", "/fleets/" + f.fleet + "/permissions/" + f.bob.ID,
		"/fleets/" + f.fleet + "/shares", "/fleets/" + f.fleet + "/shares/1",
		acme + "/asset-statuses", "/api/assetstatuses/" + f.status, acme + "/asset-zones?type=%00&name=%zz", "/api/assetzones/1",
		acme + "/asset-fields", "/api/assetfields/" + f.fuel, acme + "/asset-types?ephemerality=x", "/api/assettype/" + f.truck,
		"/api/assettype/" + f.truck + "/asset-fields/" + f.mileage, "/api/assettype/" + f.truck + "/asset-zones/1",
		acme + "/asset-subscriptions", "/asset-subscriptions/" + f.subscription,
		acme + "/assets?types=,&name=%00&$top=-1", "/api/assets/" + asset, "/api/assets/" + asset + "/fields",
		acme + "/asset-groups?active=maybe", "/api/assetgroups/" + asset, "/api/assetgroups/" + asset + "/fields",
		"/api/assetgroups/" + asset + "/assets/" + asset, "/api/assetgroups/" + asset + "/logs", "/api/assetlogs/" + logID,
		"/api/assetlogs/" + logID + "/attachment", acme + "/assets/import?dry_run=x", acme + "/assets/import",
		acme + "/assets/export.csv", "/users/@me/fleets", "/users/@me/fleet-shares", "/users/@me/fleet-shares/1/accept",
		"/users/@me/fleets/" + f.fleet + "/subscriptions", "/users/@me/fleets/" + f.fleet + "/subscriptions/1",
	}
	for _, p := range paths {
		for _, m := range []string{"GET", "POST", "PATCH", "PUT", "DELETE"} {
			for _, b := range bodies {
				for _, u := range []*testUser{f.alice, f.mallory} {
					if r := e.do(u, m, p, b); r.Status >= 500 {
						t.Errorf("%s %s %.40v: status %d: %.200s", m, p, b, r.Status, r.Body)
					}
				}
			}
		}
	}
}

// TestFleetSubscriberNotifications: a new work item on a fleet mails the
// subscribers whose location and type match (a member who may view it, and
// the holder of an accepted share), never its creator, a member without
// VIEW_WORKITEMS, a subscriber of another fleet or a revoked share holder.
func TestFleetSubscriberNotifications(t *testing.T) {
	t.Parallel()
	f := newAssetFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	dave := e.user("dave") // a member of Evil, which accepts a share of the fleet
	e.addMember(f.evil, dave)
	repair := e.must(201, f.alice, "POST", acme+"/work-item-types", map[string]any{"name": "Repair"}).obj(t)["id"].(string)
	check := e.must(201, f.alice, "POST", acme+"/work-item-types", map[string]any{"name": "Check"}).obj(t)["id"].(string)
	yard := e.must(201, f.alice, "POST", acme+"/locations", map[string]any{"name": "Yard"}).obj(t)["id"].(string)
	share := e.must(201, f.alice, "POST", "/fleets/"+f.fleet+"/shares", map[string]any{"organisation_id": f.evil}).obj(t)["id"].(string)
	e.must(200, f.mallory, "POST", "/users/@me/fleet-shares/"+share+"/accept", nil)
	subs := "/users/@me/fleets/" + f.fleet + "/subscriptions"
	e.must(201, dave, "POST", subs, map[string]any{"location_id": f.depot, "work_item_type_id": repair})
	e.must(201, f.bob, "POST", subs, map[string]any{})
	e.must(201, f.alice, "POST", subs, map[string]any{})
	e.must(201, f.alice, "POST", "/users/@me/fleets/"+f.otherFleet+"/subscriptions", map[string]any{})

	mailed := func() map[string]int {
		rows, err := e.store.Reader.Query(`SELECT recipient FROM outbox WHERE subject LIKE 'New work item%'`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		got := map[string]int{}
		for rows.Next() {
			var r string
			if err := rows.Scan(&r); err != nil {
				t.Fatal(err)
			}
			got[r]++
		}
		if _, err := e.write(`DELETE FROM outbox`); err != nil {
			t.Fatal(err)
		}
		return got
	}
	mailed()
	create := func(by *testUser, b map[string]any) {
		b["title"] = "Job"
		e.must(201, by, "POST", acme+"/workitems", b)
	}
	for _, c := range []struct {
		name string
		by   *testUser
		body map[string]any
		want []*testUser
	}{
		{"type and location match: the share holder and the members following all", f.alice, map[string]any{"type_id": repair, "fleet_id": f.fleet, "location_id": f.depot}, []*testUser{dave, f.bob}},
		{"another location: not the share holder's subscription", f.alice, map[string]any{"type_id": repair, "fleet_id": f.fleet, "location_id": yard}, []*testUser{f.bob}},
		{"another type", f.alice, map[string]any{"type_id": check, "fleet_id": f.fleet, "location_id": f.depot}, []*testUser{f.bob}},
		{"the creator is not told", f.bob, map[string]any{"type_id": repair, "fleet_id": f.fleet, "location_id": f.depot}, []*testUser{dave, f.alice}},
		{"another fleet: its own subscriber", f.bob, map[string]any{"type_id": repair, "fleet_id": f.otherFleet}, []*testUser{f.alice}},
		{"no fleet: nobody", f.alice, map[string]any{"type_id": repair}, nil},
	} {
		if c.by == f.bob {
			e.must(200, f.alice, "PUT", acme+"/permissions/"+f.bob.ID, map[string]any{"permissions": map[string]string{"CREATE_WORKITEMS": "allow"}})
		}
		create(c.by, c.body)
		got := mailed()
		want := map[string]int{}
		for _, u := range c.want {
			want[u.Email]++
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: mailed %v, want %v", c.name, got, want)
		}
	}
	// Each mail came with a notification in the app, also for the share
	// holder, who is not a member of Acme.
	for u, n := range map[*testUser]int{dave: 2, f.bob: 3, f.alice: 2, f.mallory: 0} {
		if got := e.countKind(u, notifyFleetWorkItem); got != n {
			t.Errorf("%s has %d fleet notifications, want %d", u.Email, got, n)
		}
	}
	if n := e.notificationOfKind(t, dave, notifyFleetWorkItem); n["available"] != true || !strings.HasPrefix(n["link"].(string), "/app/workitems/") {
		t.Errorf("the share holder's notification %v: want one it can open", n)
	}
	// A member who may not view work items is not told; a revoked share ends it.
	e.must(200, f.alice, "PUT", acme+"/permissions/"+f.bob.ID, map[string]any{"permissions": map[string]string{"VIEW_WORKITEMS": "deny"}})
	e.must(204, f.alice, "DELETE", "/fleets/"+f.fleet+"/shares/"+share, nil)
	create(f.alice, map[string]any{"type_id": repair, "fleet_id": f.fleet, "location_id": f.depot})
	if got := mailed(); len(got) != 0 {
		t.Errorf("after the deny and the revocation: mailed %v", got)
	}
}

// TestFleetSubscriptionPatch: a subscriber changes its own subscription's
// filters (a key replaces, null clears, absence keeps); filters of another
// organisation, another's subscription, another fleet's path, a read-only
// field and a revoked share holder are refused.
func TestFleetSubscriptionPatch(t *testing.T) {
	t.Parallel()
	f := newAssetFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	dave := e.user("dave") // a member of Evil, which accepts a share of the fleet
	e.addMember(f.evil, dave)
	repair := e.must(201, f.alice, "POST", acme+"/work-item-types", map[string]any{"name": "Repair"}).obj(t)["id"].(string)
	evilType := e.must(201, f.mallory, "POST", "/organisations/"+f.evil+"/work-item-types", map[string]any{"name": "Evil"}).obj(t)["id"].(string)
	share := e.must(201, f.alice, "POST", "/fleets/"+f.fleet+"/shares", map[string]any{"organisation_id": f.evil}).obj(t)["id"].(string)
	e.must(200, f.mallory, "POST", "/users/@me/fleet-shares/"+share+"/accept", nil)
	subs := "/users/@me/fleets/" + f.fleet + "/subscriptions"
	bobs := subs + "/" + e.must(201, f.bob, "POST", subs, map[string]any{}).obj(t)["id"].(string)
	daves := subs + "/" + e.must(201, dave, "POST", subs, map[string]any{"location_id": f.depot}).obj(t)["id"].(string)
	filters := func(loc, typ string) func(t *testing.T, r *testResponse) {
		return func(t *testing.T, r *testResponse) {
			t.Helper()
			o := r.obj(t)
			gotLoc, gotType := "", ""
			if l, ok := o["location"].(map[string]any); ok {
				gotLoc = l["id"].(string)
			}
			if w, ok := o["work_item_type"].(map[string]any); ok {
				gotType = w["id"].(string)
			}
			if gotLoc != loc || gotType != typ {
				t.Errorf("location %q, type %q; want %q, %q: %s", gotLoc, gotType, loc, typ, r.Body)
			}
		}
	}
	e.run(t, []scenario{
		{"a member sets both filters", f.bob, "PATCH", bobs, map[string]any{"location_id": f.depot, "work_item_type_id": repair}, 200, filters(f.depot, repair)},
		{"an absent key keeps its filter", f.bob, "PATCH", bobs, map[string]any{"location_id": nil}, 200, filters("", repair)},
		{"0 clears too", f.bob, "PATCH", bobs, map[string]any{"work_item_type_id": "0"}, 200, filters("", "")},
		{"the list shows the change", f.bob, "GET", subs, nil, 200, func(t *testing.T, r *testResponse) {
			if l := r.arr(t); len(l) != 1 || l[0]["location"] != nil || l[0]["work_item_type"] != nil {
				t.Errorf("got %s", r.Body)
			}
		}},
		{"a location of another organisation", f.bob, "PATCH", bobs, map[string]any{"location_id": f.evilLocation}, 400, wantField("location_id")},
		{"a work item type of another organisation", f.bob, "PATCH", bobs, map[string]any{"work_item_type_id": evilType}, 400, wantField("work_item_type_id")},
		{"a malformed id", f.bob, "PATCH", bobs, map[string]any{"location_id": []int{1}}, 400, nil},
		{"a read-only field", f.bob, "PATCH", bobs, map[string]any{"fleet_id": f.otherFleet}, 400, wantField("fleet_id")},
		{"the object sent back unchanged", f.bob, "PATCH", bobs, map[string]any{"id": strings.TrimPrefix(bobs, subs+"/"), "fleet_id": f.fleet, "location": nil, "work_item_type": nil}, 200, filters("", "")},
		{"another's subscription", f.alice, "PATCH", bobs, map[string]any{"location_id": nil}, 404, nil},
		{"through another fleet's path", f.bob, "PATCH", "/users/@me/fleets/" + f.otherFleet + "/subscriptions/" + strings.TrimPrefix(bobs, subs+"/"), map[string]any{}, 404, nil},
		{"an absent subscription", f.bob, "PATCH", subs + "/123456789", map[string]any{}, 404, nil},
		{"the other organisation's owner", f.mallory, "PATCH", bobs, map[string]any{}, 404, nil},
		{"a share holder changes its own", dave, "PATCH", daves, map[string]any{"work_item_type_id": repair}, 200, filters(f.depot, repair)},
	})
	e.must(204, f.alice, "DELETE", "/fleets/"+f.fleet+"/shares/"+share, nil)
	e.run(t, []scenario{
		{"revoked: the share holder may no longer change it", dave, "PATCH", daves, map[string]any{"location_id": nil}, 404, nil},
		{"but may still delete it", dave, "DELETE", daves, nil, 204, nil},
	})
}
