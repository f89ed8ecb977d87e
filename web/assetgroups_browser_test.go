package web_test

// Browser tests of the asset catalogue's fields and zones, editing an asset
// with its field values, and asset groups (create, add assets, drag and
// move them, take out, rename, delete), clicked through against the real
// server; after each flow the state is read back through the API.

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
)

// awAPI calls the API as the person the page signed up, with a token of
// their own (the password grant), to check what the page did.
type awAPI struct {
	t     *testing.T
	base  string
	token string
}

func awLogin(t *testing.T, base, email, password string) *awAPI {
	t.Helper()
	r, err := http.PostForm(base+"/oauth/token", url.Values{"grant_type": {"password"}, "username": {email}, "password": {password}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.NewDecoder(r.Body).Decode(&tok); err != nil || tok.AccessToken == "" {
		t.Fatalf("token: %d %v", r.StatusCode, err)
	}
	return &awAPI{t: t, base: base, token: tok.AccessToken}
}

// call sends body as JSON and answers the status and the decoded answer.
func (a *awAPI) call(method, path string, body any) (int, any) {
	a.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = strings.NewReader(string(b))
	}
	req, _ := http.NewRequest(method, a.base+path, rd)
	req.Header.Set("Authorization", "Bearer "+a.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	r, err := http.DefaultClient.Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	defer r.Body.Close()
	var out any
	_ = json.NewDecoder(r.Body).Decode(&out)
	return r.StatusCode, out
}

// must is call expecting status want; it answers the object.
func (a *awAPI) must(want int, method, path string, body any) map[string]any {
	a.t.Helper()
	status, out := a.call(method, path, body)
	if status != want {
		a.t.Fatalf("%s %s: %d, want %d: %v", method, path, status, want, out)
	}
	o, _ := out.(map[string]any)
	return o
}

func (a *awAPI) id(method, path string, body any) string {
	a.t.Helper()
	return a.must(201, method, path, body)["id"].(string)
}

// awOrder is the names of a group's assets in their positions' order.
func awOrder(g map[string]any) string {
	names := make([]string, len(g["assets"].([]any)))
	for _, m := range g["assets"].([]any) {
		m := m.(map[string]any)
		names[int(m["position"].(float64))] = m["asset"].(map[string]any)["name"].(string)
	}
	return strings.Join(names, "|")
}

// groupRows is the names shown in the group's asset list, in order.
const groupRows = `[...document.querySelectorAll('ul[aria-label="Assets in the group"] li a')].map(a => a.innerText.trim()).join('|')`

// dragGroupAsset drags the handle of the asset named from onto the top half
// of the row of the asset named onto: by touch on a phone, by mouse on a
// desktop (both arrive as pointer events).
func (p *page) dragGroupAsset(from, onto string, touch bool) {
	p.t.Helper()
	box := eval[[]float64](p, `(() => { const rows = [...document.querySelectorAll('ul[aria-label="Assets in the group"] li')];
		const src = rows.find(r => r.querySelector('a').innerText.trim() === `+js(from)+`), dst = rows.find(r => r.querySelector('a').innerText.trim() === `+js(onto)+`);
		dst.scrollIntoView({block: 'center'}); const h = src.querySelector('.drag-handle').getBoundingClientRect(), d = dst.getBoundingClientRect();
		return [h.left + h.width / 2, h.top + h.height / 2, d.top + 4] })()`)
	x, y0, y1 := box[0], box[1], box[2]
	var acts []chromedp.Action[chromedp.Void]
	if touch {
		at := func(typ input.DispatchTouchEventType, y float64) chromedp.Action[chromedp.Void] {
			pts := []*input.TouchPoint{{X: x, Y: y}}
			if typ == input.DispatchTouchEventTypeTouchEnd {
				pts = []*input.TouchPoint{} // an end carries no points
			}
			return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
				_, err := cdp.Call(ctx, tg, input.DispatchTouchEvent, input.DispatchTouchEventParams{Type: typ, TouchPoints: pts})
				return err
			})
		}
		acts = append(acts, at(input.DispatchTouchEventTypeTouchStart, y0))
		for i := 1; i <= 6; i++ {
			acts = append(acts, at(input.DispatchTouchEventTypeTouchMove, y0+(y1-y0)*float64(i)/6))
		}
		acts = append(acts, at(input.DispatchTouchEventTypeTouchEnd, y1))
	} else {
		acts = append(acts, chromedp.MouseEvent(input.DispatchMouseEventTypeMousePressed, x, y0, chromedp.ButtonLeft))
		for i := 1; i <= 6; i++ {
			acts = append(acts, chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, x, y0+(y1-y0)*float64(i)/6, chromedp.ButtonLeft))
		}
		acts = append(acts, chromedp.MouseEvent(input.DispatchMouseEventTypeMouseReleased, x, y1, chromedp.ButtonLeft))
	}
	p.run(acts...)
}

func TestBrowserAssetCatalogueAndGroups(t *testing.T) {
	bctx := browser(t)
	base := appServer(t)
	for _, vp := range viewports {
		t.Run(vp.name, func(t *testing.T) {
			orgName := "Groups " + vp.name
			p := orgWithOwner(t, bctx, base, "Gus", orgName, vp.width, vp.height, vp.mobile)
			orgID := strings.Split(strings.TrimPrefix(strings.SplitN(p.location(), "/app/orgs/", 2)[1], "/"), "/")[0]
			acme := "/organisations/" + orgID
			api := awLogin(t, base, "gus-"+strings.ReplaceAll(strings.ToLower(orgName), " ", "-")+"@example.com", "Gus password")

			// The catalogue the flows start from, made through the API (the
			// fleets screen's own test clicks through making these).
			plant := api.id("POST", acme+"/fleets", map[string]any{"name": "Plant"})
			pump := api.id("POST", acme+"/asset-types", map[string]any{"name": "Pump", "ephemerality": 0, "fleet_id": plant})
			api.id("POST", acme+"/asset-types", map[string]any{"name": "Convoy", "ephemerality": 1, "fleet_id": plant})
			api.id("POST", acme+"/asset-types", map[string]any{"name": "Yard", "ephemerality": 2})
			api.id("POST", acme+"/asset-statuses", map[string]any{"name": "In service"})
			api.id("POST", acme+"/asset-statuses", map[string]any{"name": "Repair"})
			api.id("POST", acme+"/locations", map[string]any{"name": "Depot", "code": "DP"})
			pumps := map[string]string{}
			for _, n := range []string{"Pump 1", "Pump 2", "Pump 3"} {
				pumps[n] = api.id("POST", acme+"/assets", map[string]any{"type_id": pump, "name": n})
			}

			p.step = "asset fields"
			p.orgNav("Asset fields")
			p.see("No fields yet.")
			p.fill("Field name", "x")
			p.click("Create field")
			if got := p.fieldError("Field name"); got == "" {
				p.fail("no error for a one-letter field name")
			}
			p.fill("Field name", "Mileage")
			p.choose("Field type", "number")
			p.fill("Units", "km")
			p.click("Create field")
			p.see("Field Mileage created.")
			p.fill("Field name", "Fuel")
			p.choose("Field type", "choice")
			p.fill("Choices, one per line", "diesel\npetrol")
			p.click("Create field")
			p.see("Field Fuel created.")
			p.seeIn(`ul[aria-label="Fields"]`, "diesel, petrol")
			p.fill("Field name", "Notes")
			p.click("Create field")
			p.see("Field Notes created.")

			p.step = "edit a field's choices"
			p.click("Edit Fuel")
			p.fill("Choices of the field, one per line", "diesel\npetrol\nelectric")
			p.click("Save field")
			p.see("Field Fuel saved.")
			p.seeIn(`ul[aria-label="Fields"]`, "diesel, petrol, electric")

			p.step = "delete a field"
			p.click("Delete Notes")
			p.click("Yes, delete Notes")
			p.see("Field Notes deleted.")
			p.waitFor(`!document.querySelector('ul[aria-label="Fields"]').innerText.includes('Notes')`, "Notes gone from the list")

			p.step = "zones"
			p.see("No zones yet.")
			p.fill("Zone name", "Cab")
			p.fill("Zone code", "THIS-CODE-IS-LONG")
			p.click("Create zone")
			if got := p.fieldError("Zone code"); got == "" {
				p.fail("no error for a 17-character zone code")
			}
			p.fill("Zone code", "CAB")
			p.click("Create zone")
			p.see("Zone Cab created.")
			p.fill("Zone name", "Boom")
			p.click("Create zone")
			p.see("Zone Boom created.")
			p.click("Edit Cab")
			p.fill("Name of the zone", "Driver cab")
			p.click("Save zone")
			p.see("Zone Driver cab saved.")
			p.click("Delete Boom")
			p.click("Yes, delete Boom")
			p.see("Zone Boom deleted.")
			p.seeIn(`ul[aria-label="Zones"]`, "Driver cab")

			p.step = "fields and zones of a type"
			p.click("Mileage on Pump")
			p.see("Field Mileage added to Pump.")
			p.click("Fuel on Pump")
			p.see("Field Fuel added to Pump.")
			p.click("Zone Driver cab on Pump")
			p.see("Zone Driver cab added to Pump.")
			p.noHorizontalScroll()
			p.axe("asset fields and zones")

			p.step = "the catalogue through the API"
			typ := api.must(200, "GET", "/api/assettype/"+pump, nil)
			var fieldNames []string
			var fuel, mileage string
			for _, f := range typ["fields"].([]any) {
				fld := f.(map[string]any)["field"].(map[string]any)
				fieldNames = append(fieldNames, fld["name"].(string))
				switch fld["name"] {
				case "Fuel":
					fuel = fld["id"].(string)
					if vals := f.(map[string]any)["enum_values"].([]any); len(vals) != 3 || vals[2].(map[string]any)["value"] != "electric" {
						p.fail("Fuel's values are %v", vals)
					}
				case "Mileage":
					mileage = fld["id"].(string)
					if fld["units"] != "km" || fld["type"] != float64(1) {
						p.fail("Mileage is %v", fld)
					}
				}
			}
			zones := typ["zones"].([]any)
			if len(fieldNames) != 2 || fuel == "" || mileage == "" || len(zones) != 1 || zones[0].(map[string]any)["name"] != "Driver cab" || zones[0].(map[string]any)["code"] != "CAB" {
				p.fail("the Pump type carries fields %v and zones %v", fieldNames, zones)
			}
			if _, all := api.call("GET", acme+"/asset-zones", nil); len(all.([]any)) != 1 {
				p.fail("zones left: %v", all)
			}
			if _, all := api.call("GET", acme+"/asset-fields", nil); len(all.([]any)) != 2 {
				p.fail("fields left: %v", all)
			}

			p.step = "an asset with a number of its own"
			p.orgNav("Asset register")
			p.choose("Asset type", "Pump")
			p.fill("Asset name", "Pump 9")
			p.fill("Asset number (optional)", "nine")
			p.click("Create asset")
			if got := p.fieldError("Asset number (optional)"); got == "" {
				p.fail("no error for a number in words")
			}
			p.fill("Asset number (optional)", "90")
			p.click("Create asset")
			p.see("Pump 9 created.")
			p.registerShows(4, "Pump 9")
			if _, list := api.call("GET", acme+"/assets?name=pump%209", nil); len(list.([]any)) != 1 || list.([]any)[0].(map[string]any)["number"] != float64(90) {
				p.fail("Pump 9 through the API: %v", list)
			}

			p.step = "edit an asset: errors at their fields"
			p.open("/app/asset/" + pumps["Pump 1"])
			p.seeIn("h1", "Pump 1")
			p.see("Edit asset")
			p.fill("Mileage (km)", "lots")
			p.click("Save asset")
			if got := p.fieldError("Mileage (km)"); !strings.Contains(got, "number") {
				p.fail("the error at Mileage is %q", got)
			}
			p.fill("Name", "x")
			p.click("Save asset")
			if got := p.fieldError("Name"); got == "" {
				p.fail("no error for a one-letter name")
			}

			p.step = "edit an asset"
			p.fill("Name", "Pump one")
			p.fill("Mileage (km)", "1200.5")
			p.choose("Fuel", "petrol")
			p.choose("Status", "Repair")
			p.choose("Location", "Depot")
			p.fill("Description", "Diaphragm pump")
			p.click("Active")
			p.click("Save asset")
			p.see("Asset saved.")
			p.seeIn("h1", "Pump one")
			p.seeIn("dl.facts", "1200.5 km")
			p.seeIn("dl.facts", "petrol")
			p.seeIn("dl.facts", "Repair")
			p.seeIn("dl.facts", "Depot")
			p.noHorizontalScroll()
			p.axe("an asset being edited")
			a := api.must(200, "GET", "/api/assets/"+pumps["Pump 1"], nil)
			fv := a["fields"].(map[string]any)
			if a["name"] != "Pump one" || a["description"] != "Diaphragm pump" || a["active"] != false || a["status"].(map[string]any)["name"] != "Repair" ||
				a["location"].(map[string]any)["name"] != "Depot" || fv[mileage].(map[string]any)["value"] != 1200.5 {
				p.fail("the asset is %v", a)
			}

			p.step = "a field with values cannot be deleted"
			p.open("/app/orgs/" + orgID + "/asset-fields")
			p.click("Delete Mileage")
			p.click("Yes, delete Mileage")
			p.see(`Assets hold values of the field "Mileage": clear them before deleting it.`)
			api.must(200, "GET", "/api/assetfields/"+mileage, nil)

			p.step = "a field's refusals at its inputs"
			p.click("Edit Mileage")
			p.choose("Type of the field", "text")
			p.click("Save field")
			if got := p.fieldError("Type of the field"); !strings.Contains(got, "assets hold values") {
				p.fail("the error at the type is %q", got)
			}
			p.click("Cancel")
			p.click("Edit Fuel")
			p.fill("Choices of the field, one per line", "diesel\nelectric")
			p.click("Save field")
			if got := p.fieldError("Choices of the field, one per line"); !strings.Contains(got, `cannot drop "petrol"`) {
				p.fail("the error at the choices is %q", got)
			}
			if f := api.must(200, "GET", "/api/assetfields/"+fuel, nil); len(f["enum_values"].([]any)) != 3 {
				p.fail("Fuel after a refused edit: %v", f)
			}
			p.click("Cancel")

			p.step = "asset groups: create"
			p.orgNav("Fleets")
			p.click("Groups of Plant")
			p.waitFor(`document.getElementById('ag-fleet').selectedOptions[0].text === 'Plant'`, "the groups list filtered to Plant")
			p.see("0 groups")
			p.choose("Group type", "Convoy (temporary group)")
			p.fill("Group name", "x")
			p.click("Create group")
			if got := p.fieldError("Group name"); got == "" {
				p.fail("no error for a one-letter group name")
			}
			p.fill("Group name", "Convoy A")
			p.click("Create group")
			p.seeIn("h1", "Convoy A")
			p.see("No assets in this group yet.")

			p.step = "asset groups: add assets"
			p.fill("Add an asset: name starts with", "pump")
			for _, n := range []string{"Pump one", "Pump 2", "Pump 3"} {
				p.click("Add " + n)
				p.see(n + " added to the group.")
			}
			p.waitFor(groupRows+` === 'Pump one|Pump 2|Pump 3'`, "three pumps in the group")

			p.step = "asset groups: drag to reorder"
			p.dragGroupAsset("Pump 3", "Pump one", vp.mobile)
			p.see("Pump 3 moved to place 1 of 3.")
			p.waitFor(groupRows+` === 'Pump 3|Pump one|Pump 2'`, "Pump 3 first after dragging it")
			groupID := strings.TrimPrefix(strings.SplitN(p.location(), "/app/assetgroups/", 2)[1], "/")
			if got := awOrder(api.must(200, "GET", "/api/assetgroups/"+groupID, nil)); got != "Pump 3|Pump one|Pump 2" {
				p.fail("the group's order through the API is %s", got)
			}

			p.step = "asset groups: move with buttons, take out"
			p.click("Move Pump 3 down")
			p.see("Pump 3 moved to place 2 of 3.")
			p.waitFor(groupRows+` === 'Pump one|Pump 3|Pump 2'`, "Pump 3 second")
			p.click("Take out Pump 2")
			p.see("Pump 2 taken out of the group.")
			p.waitFor(groupRows+` === 'Pump one|Pump 3'`, "two pumps left")
			if got := awOrder(api.must(200, "GET", "/api/assetgroups/"+groupID, nil)); got != "Pump one|Pump 3" {
				p.fail("the group's order through the API is %s", got)
			}

			p.step = "asset groups: rename"
			p.fill("Group name", "Convoy B")
			p.click("Save group")
			p.see("Group saved.")
			p.seeIn("h1", "Convoy B")
			p.noHorizontalScroll()
			p.axe("an asset group")
			if g := api.must(200, "GET", "/api/assetgroups/"+groupID, nil); g["name"] != "Convoy B" {
				p.fail("the group is %v", g)
			}

			p.step = "asset groups: the list"
			p.click("← Asset groups")
			p.see("1 group")
			p.seeIn(`ul[aria-label="Asset groups"]`, "Convoy B")
			p.seeIn(`ul[aria-label="Asset groups"]`, "2 assets")
			p.choose("Group type", "Yard (permanent group)")
			p.fill("Group name", "North yard")
			p.click("Create group")
			p.seeIn("h1", "North yard")
			p.click("← Asset groups")
			p.see("2 groups")
			p.choose("Fleet", "Plant")
			p.see("1 group")
			p.axe("asset groups")

			p.step = "assign an asset to a group from its page"
			p.open("/app/asset/" + pumps["Pump 2"])
			p.seeIn("h1", "Pump 2")
			p.choose("Group", "North yard")
			p.click("Save asset")
			p.see("Asset saved.")
			p.seeIn("dl.facts", "North yard")
			if a := api.must(200, "GET", "/api/assets/"+pumps["Pump 2"], nil); a["group_id"] == nil {
				p.fail("Pump 2 is in no group: %v", a)
			}
			p.step = "moving an asset to another group takes it out of its temporary group"
			p.open("/app/asset/" + pumps["Pump 3"])
			p.seeIn("h1", "Pump 3")
			p.choose("Group", "North yard")
			p.click("Save asset")
			p.see("Asset saved.")
			p.seeIn("dl.facts", "North yard")

			p.step = "a group that work items name is not deleted"
			yard := api.must(200, "GET", "/api/assets/"+pumps["Pump 2"], nil)["group_id"].(string)
			wt := api.id("POST", acme+"/work-item-types", map[string]any{"name": "Repair", "colour": "#112233"})
			api.id("POST", acme+"/workitems", map[string]any{"type_id": wt, "title": "Sweep the yard", "asset_group_id": yard})
			p.open("/app/assetgroups/" + yard)
			p.seeIn("h1", "North yard")
			p.see("1 open, 0 closed")
			p.click("Delete group")
			p.click("Yes, delete North yard")
			p.see("Work items name this group: move or delete them first.")
			api.must(200, "GET", "/api/assetgroups/"+yard, nil)

			p.step = "delete a group"
			p.open("/app/assetgroups/" + groupID)
			p.seeIn("h1", "Convoy B")
			p.waitFor(groupRows+` === 'Pump one'`, "Pump one left in Convoy B")
			p.click("Delete group")
			p.click("Yes, delete Convoy B")
			p.see("The group Convoy B was deleted.")
			if status, _ := api.call("GET", "/api/assetgroups/"+groupID, nil); status != 404 {
				p.fail("the deleted group answers %d", status)
			}
			if a := api.must(200, "GET", "/api/assets/"+pumps["Pump 1"], nil); a["group_id"] != nil || a["name"] != "Pump one" {
				p.fail("Pump one after its group went: %v", a)
			}
			p.shot("asset-group-" + vp.name)
			p.checkCSP()
		})
	}
}
