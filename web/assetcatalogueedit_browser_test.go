package web_test

// Browser tests of editing and deleting asset types and statuses on the
// fleets screen, and of an asset group's own status, location and custom
// field values on the group page: each flow with a refusal shown in the
// page, read back through the API with the person's own token and checked
// again after a reload.

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// listText is the text of the list labelled label.
func listText(p *page, label string) string {
	p.t.Helper()
	return eval[string](p, `(document.querySelector('ul[aria-label=`+js(label)+`]') || {innerText: ''}).innerText`)
}

// selected is the text of the option chosen in the control labelled label.
func selected(p *page, label string) string {
	p.t.Helper()
	id := p.inputFor(label)
	return eval[string](p, `(() => { const s = document.getElementById(`+js(id)+`); return s.selectedOptions[0] ? s.selectedOptions[0].text.trim() : '' })()`)
}

func TestBrowserAssetTypeStatusEdit(t *testing.T) {
	bctx := browser(t)
	base := appServer(t)
	for _, vp := range viewports {
		t.Run(vp.name, func(t *testing.T) {
			orgName := "Catalogue " + vp.name
			p := orgWithOwner(t, bctx, base, "Cato", orgName, vp.width, vp.height, vp.mobile)
			orgID := strings.Split(strings.TrimPrefix(strings.SplitN(p.location(), "/app/orgs/", 2)[1], "/"), "/")[0]
			acme := "/organisations/" + orgID
			api := awLogin(t, base, "cato-"+strings.ReplaceAll(strings.ToLower(orgName), " ", "-")+"@example.com", "Cato password")

			plant := api.id("POST", acme+"/fleets", map[string]any{"name": "Plant"})
			cranes := api.id("POST", acme+"/fleets", map[string]any{"name": "Cranes"})
			doomed := api.id("POST", acme+"/fleets", map[string]any{"name": "Doomed"})
			prefix := api.id("POST", acme+"/prefixes", map[string]any{"number_format": "PU-{number}", "number_digits": 3})
			pump := api.id("POST", acme+"/asset-types", map[string]any{"name": "Pump", "ephemerality": 0, "fleet_id": plant})
			spare := api.id("POST", acme+"/asset-types", map[string]any{"name": "Spare type", "ephemerality": 0})
			inService := api.id("POST", acme+"/asset-statuses", map[string]any{"name": "In service"})
			retired := api.id("POST", acme+"/asset-statuses", map[string]any{"name": "Retired"})
			vanishing := api.id("POST", acme+"/asset-statuses", map[string]any{"name": "Vanishing"})
			api.id("POST", acme+"/assets", map[string]any{"type_id": pump, "name": "Pump 1", "status_id": inService})

			p.step = "edit a type: a refusal at its input"
			p.orgNav("Fleets")
			p.seeIn(`ul[aria-label="Asset types"]`, "Spare type")
			p.click("Edit Pump")
			p.fill("Name of the type", "x")
			p.click("Save asset type")
			if got := p.fieldError("Name of the type"); got == "" {
				p.fail("no error for a one-letter type name")
			}

			p.step = "edit a type: a fleet deleted meanwhile is refused at its select, and the error goes once another is chosen"
			p.fill("Name of the type", "Pump unit")
			api.must(204, "DELETE", "/fleets/"+doomed, nil) // another tab removes it
			p.choose("Fleet the type belongs to", "Doomed")
			p.click("Save asset type")
			if got := p.fieldError("Fleet the type belongs to"); !strings.Contains(got, "fleet") {
				p.fail("the error at the fleet is %q", got)
			}
			p.choose("Fleet the type belongs to", "Plant")
			p.noFieldError("Fleet the type belongs to")

			p.step = "edit a type: every field its PATCH takes"
			p.fill("Description of the type", "Diaphragm pumps")
			p.choose("Fleet the type belongs to", "Cranes")
			p.choose("Numbering prefix of the type", "PU-{number}")
			p.shot("asset-type-edit-" + vp.name)
			p.click("Save asset type")
			p.see("Asset type Pump unit saved.")
			p.seeIn(`ul[aria-label="Asset types"]`, "Diaphragm pumps")
			p.seeIn(`ul[aria-label="Asset types"]`, "PU-{number}")
			if ty := api.must(200, "GET", "/api/assettype/"+pump, nil); ty["name"] != "Pump unit" || ty["description"] != "Diaphragm pumps" ||
				ty["fleet_id"] != cranes || ty["prefix_id"] != prefix || ty["ephemerality"] != float64(0) {
				p.fail("the type through the API: %v", ty)
			}

			p.step = "delete a type assets have: refused in the page"
			p.click("Delete Pump unit")
			p.click("Yes, delete Pump unit")
			p.see(`Assets are of the type "Pump unit": change their type or delete them first.`)
			api.must(200, "GET", "/api/assettype/"+pump, nil)
			p.seeIn(`ul[aria-label="Asset types"]`, "Pump unit")

			p.step = "delete an unused type"
			p.click("Delete Spare type")
			p.see("Yes, delete Spare type")
			p.click("Cancel")
			p.waitFor(`![...document.querySelectorAll('button')].some(b => b.innerText.trim() === 'Yes, delete Spare type')`, "the question withdrawn")
			api.must(200, "GET", "/api/assettype/"+spare, nil)
			p.click("Delete Spare type")
			p.click("Yes, delete Spare type")
			p.see("Asset type Spare type deleted.")
			p.waitFor(`!document.querySelector('ul[aria-label="Asset types"]').innerText.includes('Spare type')`, "Spare type gone from the list")
			if status, _ := api.call("GET", "/api/assettype/"+spare, nil); status != 404 {
				p.fail("the deleted type answers %d", status)
			}

			p.step = "edit a status"
			p.click("Edit In service")
			p.fill("Name of the status", "")
			p.click("Save status")
			if got := p.fieldError("Name of the status"); got == "" {
				p.fail("no error for an empty status name")
			}
			p.fill("Name of the status", "Working")
			p.fill("Description of the status", "On a site")
			p.click("The status is active")
			p.click("Save status")
			p.see("Status Working saved.")
			p.seeIn(`ul[aria-label="Asset statuses"]`, "inactive")
			if st := api.must(200, "GET", "/api/assetstatuses/"+inService, nil); st["name"] != "Working" || st["description"] != "On a site" || st["active"] != false {
				p.fail("the status through the API: %v", st)
			}

			p.step = "delete a status an asset has: refused in the page"
			p.click("Delete Working")
			p.click("Yes, delete Working")
			p.see(`Assets or groups have the status "Working": give them another status first.`)
			api.must(200, "GET", "/api/assetstatuses/"+inService, nil)

			p.step = "delete an unused status"
			p.click("Delete Retired")
			p.click("Yes, delete Retired")
			p.see("Status Retired deleted.")
			p.waitFor(`!document.querySelector('ul[aria-label="Asset statuses"]').innerText.includes('Retired')`, "Retired gone from the list")
			if status, _ := api.call("GET", "/api/assetstatuses/"+retired, nil); status != 404 {
				p.fail("the deleted status answers %d", status)
			}
			p.step = "a status deleted meanwhile: the refusal above the form goes once a field is edited"
			p.click("Edit Vanishing")
			api.must(204, "DELETE", "/api/assetstatuses/"+vanishing, nil) // another tab removes it
			p.fill("Description of the status", "Soon gone")
			p.click("Save status")
			form := `document.querySelector('form[aria-label="Edit the status Vanishing"]')`
			p.waitFor(`!!`+form+`?.querySelector('[role=alert]')`, "the refusal above the status form")
			p.fill("Description of the status", "Gone")
			p.waitFor(`(() => { const f = `+form+`; return f && !f.querySelector('[role=alert]') })()`, "the refusal gone once a field is edited")
			p.click("Cancel")

			p.noHorizontalScroll()
			p.axe("fleets with types and statuses edited")
			p.checkCSP()

			p.step = "after a reload"
			p.open("/app/orgs/" + orgID + "/fleets")
			p.seeIn(`ul[aria-label="Asset types"]`, "Pump unit")
			types, statuses := listText(p, "Asset types"), listText(p, "Asset statuses")
			if !strings.Contains(types, "Cranes") || !strings.Contains(types, "Diaphragm pumps") || strings.Contains(types, "Spare type") {
				p.fail("the types after a reload: %q", types)
			}
			if !strings.Contains(statuses, "Working") || !strings.Contains(statuses, "inactive") || strings.Contains(statuses, "Retired") {
				p.fail("the statuses after a reload: %q", statuses)
			}
			p.click("Edit Pump unit")
			if got := selected(p, "Fleet the type belongs to") + " " + selected(p, "Numbering prefix of the type"); got != "Cranes PU-{number}" {
				p.fail("the type's form after a reload shows %q", got)
			}

			p.step = "a member without MANAGE_FLEETS edits a status, nothing else"
			m := joinMember(t, bctx, base, p, orgID, orgName, "Moss", "moss-catalogue-"+vp.name+"@example.com", "Moss password", vp.width, vp.height, vp.mobile)
			m.step = "the member on the fleets screen"
			m.open("/app/orgs/" + orgID + "/fleets")
			m.seeIn(`ul[aria-label="Asset statuses"]`, "Working")
			if got := eval[string](m, `[...document.querySelectorAll('button')].map(b => b.getAttribute('aria-label') || b.innerText.trim()).filter(t => /^(Edit|Delete) /.test(t)).join('|')`); got != "Edit Working" {
				m.fail("a member is offered %q", got)
			}
			m.click("Edit Working")
			m.fill("Description of the status", "On a site or in transit")
			m.click("Save status")
			m.see("Status Working saved.")
			if st := api.must(200, "GET", "/api/assetstatuses/"+inService, nil); st["description"] != "On a site or in transit" || st["active"] != false {
				m.fail("the status after the member's edit: %v", st)
			}
		})
	}
}

func TestBrowserAssetGroupOwnValues(t *testing.T) {
	bctx := browser(t)
	base := appServer(t)
	for _, vp := range viewports {
		t.Run(vp.name, func(t *testing.T) {
			orgName := "Yards " + vp.name
			p := orgWithOwner(t, bctx, base, "Gwen", orgName, vp.width, vp.height, vp.mobile)
			orgID := strings.Split(strings.TrimPrefix(strings.SplitN(p.location(), "/app/orgs/", 2)[1], "/"), "/")[0]
			acme := "/organisations/" + orgID
			api := awLogin(t, base, "gwen-"+strings.ReplaceAll(strings.ToLower(orgName), " ", "-")+"@example.com", "Gwen password")

			yardType := api.id("POST", acme+"/asset-types", map[string]any{"name": "Yard", "ephemerality": 2})
			capacity := api.id("POST", acme+"/asset-fields", map[string]any{"name": "Capacity", "type": 1, "units": "t"})
			surface := api.id("POST", acme+"/asset-fields", map[string]any{"name": "Surface", "type": 4, "values": []string{"gravel", "concrete"}})
			for _, f := range []string{capacity, surface} {
				api.must(200, "PUT", "/api/assettype/"+yardType+"/asset-fields/"+f, nil)
			}
			open := api.id("POST", acme+"/asset-statuses", map[string]any{"name": "Open"})
			closing := api.id("POST", acme+"/asset-statuses", map[string]any{"name": "Closing"})
			depot := api.id("POST", acme+"/locations", map[string]any{"name": "Depot"})
			bay := api.id("POST", "/locations/"+depot+"/sub-locations", map[string]any{"name": "Bay 1"})
			api.id("POST", acme+"/locations", map[string]any{"name": "North"})
			yard := api.id("POST", acme+"/asset-groups", map[string]any{"type_id": yardType, "name": "Yard A"})
			depotYard := api.id("POST", acme+"/asset-types", map[string]any{"name": "Depot yard", "ephemerality": 2})
			api.must(200, "PUT", "/api/assettype/"+depotYard+"/asset-fields/"+surface, nil)
			api.id("POST", acme+"/asset-types", map[string]any{"name": "Convoy", "ephemerality": 1}) // another kind: not offered
			plant := api.id("POST", acme+"/fleets", map[string]any{"name": "Plant"})
			// Another organisation of the same person, for a location the
			// group's organisation does not own.
			other := api.id("POST", "/organisations", map[string]any{"name": "Elsewhere " + vp.name})
			foreign := api.id("POST", "/organisations/"+other+"/locations", map[string]any{"name": "Far away"})

			p.step = "a group's values: a wrong type refused at its field"
			p.open("/app/assetgroups/" + yard)
			p.seeIn("h1", "Yard A")
			p.fill("Capacity (t)", "lots")
			p.click("Save group")
			if got := p.fieldError("Capacity (t)"); !strings.Contains(got, "number") {
				p.fail("the error at Capacity is %q", got)
			}
			if g := api.must(200, "GET", "/api/assetgroups/"+yard, nil); len(g["fields"].(map[string]any)) != 0 {
				p.fail("a refused save changed the fields: %v", g["fields"])
			}

			p.step = "a group's values, status and location"
			p.fill("Capacity (t)", "40")
			p.noFieldError("Capacity (t)") // edited: the error no longer applies
			p.choose("Surface", "concrete")
			p.choose("Status", "Open")
			p.choose("Location", "Depot")
			p.choose("Sub location", "Bay 1")
			p.click("Save group")
			p.see("Group saved.")
			p.seeIn("dl.record", "40 t")
			p.seeIn("dl.record", "concrete")
			p.seeIn("dl.record", "Open")
			p.seeIn("dl.record", "Depot, Bay 1")
			g := api.must(200, "GET", "/api/assetgroups/"+yard, nil)
			fv := g["fields"].(map[string]any)
			st, _ := g["status"].(map[string]any)
			loc, _ := g["location"].(map[string]any)
			if st == nil || st["id"] != open || loc == nil || loc["id"] != depot || g["sub_location_id"] != bay || fv[capacity] == nil ||
				fv[capacity].(map[string]any)["value"] != float64(40) || fv[surface] == nil || fv[surface].(map[string]any)["value"] == nil {
				p.fail("the group through the API: %v", g)
			}

			p.step = "a status deleted meanwhile: refused at the status"
			api.must(204, "DELETE", "/api/assetstatuses/"+closing, nil) // another tab removes it
			p.choose("Status", "Closing")
			p.click("Save group")
			if got := p.fieldError("Status"); !strings.Contains(got, "names no asset status") {
				p.fail("the error at Status is %q", got)
			}
			p.choose("Status", "Open")
			p.noFieldError("Status")

			p.step = "a location of another organisation: refused at the location"
			// The page offers only the organisation's locations; an option
			// naming another organisation's (a stale or tampered page) must
			// still be refused by the API and shown at the control.
			p.run(chromedp.Evaluate[chromedp.Void](`(() => { const s = document.getElementById('group-location'); const o = document.createElement('option');
				o.value = ` + js(foreign) + `; o.text = 'Far away'; s.append(o) })()`))
			p.choose("Location", "Far away")
			p.click("Save group")
			if got := p.fieldError("Location"); !strings.Contains(got, "names no location") {
				p.fail("the error at Location is %q", got)
			}
			if g := api.must(200, "GET", "/api/assetgroups/"+yard, nil); g["location"].(map[string]any)["id"] != depot || g["status"].(map[string]any)["id"] != open {
				p.fail("refused saves changed the group: %v", g)
			}
			p.noHorizontalScroll()
			p.axe("an asset group with its own values")
			p.checkCSP()

			p.step = "after a reload"
			p.open("/app/assetgroups/" + yard)
			p.seeIn("dl.record", "Depot, Bay 1")
			p.seeIn("dl.record", "40 t")
			if got := strings.Join([]string{selected(p, "Status"), selected(p, "Location"), selected(p, "Sub location"), selected(p, "Surface")}, "|"); got != "Open|Depot|Bay 1|concrete" {
				p.fail("the form after a reload shows %q", got)
			}
			if got := eval[string](p, `document.getElementById(`+js(p.inputFor("Capacity (t)"))+`).value`); got != "40" {
				p.fail("Capacity after a reload is %q", got)
			}
			p.run(chromedp.Evaluate[chromedp.Void](`document.getElementById('group-edit').scrollIntoView()`))
			p.shot("asset-group-values-" + vp.name)

			p.step = "clear a value and the location"
			p.fill("Capacity (t)", "")
			p.choose("Location", "No location")
			p.click("Save group")
			p.see("Group saved.")
			p.seeIn("dl.record", "not set")
			g = api.must(200, "GET", "/api/assetgroups/"+yard, nil)
			if g["location"] != nil || g["sub_location_id"] != nil || g["fields"].(map[string]any)[capacity] != nil || g["fields"].(map[string]any)[surface] == nil {
				p.fail("the group after clearing: %v", g)
			}

			p.step = "change the group's type and fleet"
			if got := eval[string](p, `[...document.getElementById('group-type').options].map(o => o.text).join('|')`); got != "Yard|Depot yard" {
				p.fail("the types offered are %q", got)
			}
			p.fill("Capacity (t)", "12")
			p.choose("Group type", "Depot yard")
			p.see("Save to set the fields of the new type.")
			p.choose("Fleet", "Plant")
			p.click("Save group")
			p.see("Group saved.")
			p.seeIn("dl.record", "Depot yard")
			p.seeIn("dl.record", "Plant")
			if selected(p, "Surface") != "concrete" {
				p.fail("Surface after the type change shows %q", selected(p, "Surface"))
			}
			p.notSee("Capacity")
			g = api.must(200, "GET", "/api/assetgroups/"+yard, nil)
			if g["type"].(map[string]any)["id"] != depotYard || g["fleet_id"] != plant || len(g["fields"].(map[string]any)) != 1 || g["fields"].(map[string]any)[surface] == nil {
				p.fail("the group after a type and fleet change: %v", g)
			}
			p.open("/app/assetgroups/" + yard)
			p.seeIn("dl.record", "Depot yard")
			if got := selected(p, "Group type") + "|" + selected(p, "Fleet"); got != "Depot yard|Plant" {
				p.fail("the form after a reload shows %q", got)
			}
		})
	}
}
