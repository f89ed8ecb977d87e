package web_test

// Browser tests of editing and deleting asset log entries (issue 17), at
// 375 px and on a desktop: a member edits and deletes their own entry (with
// a file replacing its attachment) and is offered nothing on another's; the
// owner (MANAGE_FLEETS) edits a member's entry; errors of the API show at
// their fields, a refusal (the entry deleted meanwhile) in the entry. What
// the page did is read back through the API.

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

func TestBrowserAssetLogEdit(t *testing.T) {
	bctx := browser(t)
	base := appServer(t)
	for _, vp := range viewports {
		t.Run(vp.name, func(t *testing.T) {
			orgName := "Logs " + vp.name
			p := orgWithOwner(t, bctx, base, "Lu", orgName, vp.width, vp.height, vp.mobile)
			owner := awLogin(t, base, "lu-logs-"+vp.name+"@example.com", "Lu password")
			orgID := strings.Split(strings.TrimPrefix(p.location(), p.base+"/app/orgs/"), "/")[0]

			p.step = "an asset, a member, log entries of each (through the API)"
			van := owner.id("POST", "/organisations/"+orgID+"/asset-types", map[string]any{"name": "Van", "ephemerality": 0})
			asset := owner.id("POST", "/organisations/"+orgID+"/assets", map[string]any{"name": "Blue van", "type_id": van})
			owner.id("POST", "/api/assetgroups/"+asset+"/logs", map[string]any{"type": "comment", "log": "Oil changed by the owner."})
			m := joinMember(t, bctx, base, p, orgID, orgName, "Mo", "mo-logs-"+vp.name+"@example.com", "Mo password", vp.width, vp.height, vp.mobile)
			mo := awLogin(t, base, "mo-logs-"+vp.name+"@example.com", "Mo password")
			tyres := mo.id("POST", "/api/assetgroups/"+asset+"/logs", map[string]any{"type": "comment", "log": "Tyres checked."})
			mirror := mo.id("POST", "/api/assetgroups/"+asset+"/logs", map[string]any{"type": "comment", "log": "Mirror cracked."})
			const entries = `ul[aria-label="Log entries"]`

			m.step = "the member: their own entries only"
			m.open("/app/asset/" + asset)
			m.seeIn("h1", "Blue van")
			m.seeIn(entries, "Oil changed by the owner.")
			m.seeIn(entries, "Tyres checked.")
			if eval[bool](m, `!!document.querySelector('[aria-label="Edit log entry Oil changed by the owner."]')`) {
				m.fail("the member is offered to edit the owner's entry")
			}
			m.axe("the asset's log with its entries' buttons")

			m.step = "the member edits their entry: an empty text is refused at the field, then a new text and a file"
			m.click("Edit log entry Tyres checked.")
			m.fill("Edited log entry", "")
			m.click("Save log entry")
			if got := m.fieldError("Edited log entry"); got == "" {
				m.fail("no error for an empty log entry")
			}
			m.fill("Edited log entry", "Tyres checked and inflated.")
			m.run(chromedp.SetUploadFiles(chromedp.CSS(`input[type=file]:not(#log-file)`), []string{writeFile(t, "pressures.txt", "2.4 bar")}))
			m.noHorizontalScroll()
			m.axe("a log entry being edited")
			m.click("Save log entry")
			m.see("Log entry saved.")
			m.seeIn(entries, "Tyres checked and inflated.")
			m.seeIn(entries, "Download pressures.txt")
			l := mo.must(200, "GET", "/api/assetlogs/"+tyres, nil)
			if l["log"] != "Tyres checked and inflated." || l["attachment"] == nil || l["attachment"].(map[string]any)["file_name"] != "pressures.txt" {
				m.fail("the API has the entry as %v", l)
			}

			m.step = "the member deletes it, after confirming"
			m.click("Delete log entry Tyres checked and inflated.")
			m.see("Delete this entry and its attachment?")
			m.click("Keep")
			m.seeIn(entries, "Tyres checked and inflated.")
			m.click("Delete log entry Tyres checked and inflated.")
			m.click("Yes, delete")
			m.see("Log entry deleted.")
			m.waitFor(`!document.querySelector(`+js(entries)+`).innerText.includes('Tyres checked')`, "the entry gone from the log")
			mo.must(404, "GET", "/api/assetlogs/"+tyres, nil)
			m.checkCSP()

			p.step = "the owner edits the member's entry: an empty time is refused at its field"
			p.open("/app/asset/" + asset)
			p.seeIn(entries, "Mirror cracked.")
			p.click("Edit log entry Mirror cracked.")
			p.fill("Edited log entry", "Mirror cracked, replaced.")
			p.setValue("Logged at", "")
			p.click("Save log entry")
			if got := p.fieldError("Logged at"); got == "" {
				p.fail("no error for an empty time")
			}
			p.setValue("Logged at", "2026-11-20T09:30")
			p.click("Save log entry")
			p.see("Log entry saved.")
			p.seeIn(entries, "Mirror cracked, replaced.")
			l = owner.must(200, "GET", "/api/assetlogs/"+mirror, nil)
			if l["log"] != "Mirror cracked, replaced." || !strings.HasPrefix(l["logged_at"].(string), "2026-11-20") {
				p.fail("the API has the entry as %v", l)
			}

			p.step = "deleted meanwhile: the save is refused with the server's message in the entry"
			p.click("Edit log entry Mirror cracked, replaced.")
			p.fill("Edited log entry", "Mirror fine.")
			mo.must(204, "DELETE", "/api/assetlogs/"+mirror, nil)
			p.click("Save log entry")
			p.seeIn(entries+` [role=alert]`, "does not exist")
			p.noHorizontalScroll()
			p.axe("a refused edit")
			p.checkCSP()
		})
	}
}
