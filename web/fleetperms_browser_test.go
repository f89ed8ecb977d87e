package web_test

// Browser tests of a fleet's permission layer (issue 17), at 375 px and on a
// desktop: the owner allows a role and a member MANAGE_FLEETS on one fleet
// and denies @everyone, then takes it back; the member, now a manager of
// that fleet, sees the layer and its shares and is refused a grant on the owner (the
// server's message shown, the choice put back); once their grant is gone
// the section is gone for them. Each change is read back through the API.

import (
	"strings"
	"testing"
)

func TestBrowserFleetPermissions(t *testing.T) {
	bctx := browser(t)
	base := appServer(t)
	for _, vp := range viewports {
		t.Run(vp.name, func(t *testing.T) {
			orgName := "Perms " + vp.name
			p := orgWithOwner(t, bctx, base, "Lu", orgName, vp.width, vp.height, vp.mobile)
			owner := awLogin(t, base, "lu-perms-"+vp.name+"@example.com", "Lu password")
			orgID := strings.Split(strings.TrimPrefix(p.location(), p.base+"/app/orgs/"), "/")[0]

			p.step = "a fleet, a role and a member (through the API)"
			fleet := owner.id("POST", "/organisations/"+orgID+"/fleets", map[string]any{"name": "Vans"})
			drivers := owner.id("POST", "/organisations/"+orgID+"/roles", map[string]any{"name": "Drivers"})
			m := joinMember(t, bctx, base, p, orgID, orgName, "Mo", "mo-perms-"+vp.name+"@example.com", "Mo password", vp.width, vp.height, vp.mobile)
			mo := awLogin(t, base, "mo-perms-"+vp.name+"@example.com", "Mo password")
			moID := mo.must(200, "GET", "/users/@me", nil)["id"].(string)
			ownerID := owner.must(200, "GET", "/users/@me", nil)["id"].(string)
			// grant is what the fleet's layer says of target's MANAGE_FLEETS ("" for inherit).
			grant := func(target string) string {
				_, out := owner.call("GET", "/fleets/"+fleet+"/permissions", nil)
				for _, g := range out.([]any) {
					if g := g.(map[string]any); g["id"] == target {
						v, _ := g["permissions"].(map[string]any)["MANAGE_FLEETS"].(string)
						return v
					}
				}
				return ""
			}
			if st, _ := mo.call("GET", "/fleets/"+fleet+"/permissions", nil); st != 403 {
				t.Fatalf("before any grant the member reads the fleet's layer: %d", st)
			}

			p.step = "the owner allows a role and the member, denies @everyone"
			p.open("/app/fleets/" + fleet)
			p.seeIn("h1", "Vans")
			p.see("No grants on this fleet")
			p.choose("Permissions on this fleet for", "Drivers")
			p.click("Manage fleets: allow")
			p.see("Drivers: Manage fleets is now allow on this fleet.")
			p.seeIn(`ul[aria-label="Grants on this fleet"]`, "Drivers")
			if got := grant(drivers); got != "allow" {
				p.fail("the API has the role's grant as %q", got)
			}
			p.choose("Permissions on this fleet for", "Mo")
			p.click("Manage fleets: allow")
			p.see("Mo: Manage fleets is now allow on this fleet.")
			p.seeIn(`ul[aria-label="Grants on this fleet"]`, "Mo")
			if got := grant(moID); got != "allow" {
				p.fail("the API has the member's grant as %q", got)
			}
			p.choose("Permissions on this fleet for", "@everyone")
			p.click("Manage fleets: deny")
			p.see("@everyone: Manage fleets is now deny on this fleet.")
			p.seeIn(`ul[aria-label="Grants on this fleet"]`, "@everyone")
			p.noHorizontalScroll()
			p.axe("a fleet's permissions")
			p.click("Manage fleets: inherit")
			p.see("@everyone: Manage fleets is now inherit on this fleet.")
			p.waitFor(`!document.querySelector('ul[aria-label="Grants on this fleet"]').innerText.includes('@everyone')`, "@everyone's grant gone from the list")
			p.checkCSP()

			m.step = "the member manages this fleet now; a grant on the owner is refused and put back"
			mo.must(200, "GET", "/fleets/"+fleet+"/permissions", nil)
			m.open("/app/fleets/" + fleet)
			m.seeIn("h1", "Vans")
			m.see("Permissions on this fleet")
			// Sharing needs MANAGE_FLEETS on the fleet, which this grant gives:
			// the shares panel is there too (the fleet's own permissions).
			m.see("Shares of Vans")
			m.choose("Permissions on this fleet for", "Lu")
			m.click("Manage fleets: deny")
			m.see("You cannot change grants of the organisation's owner.")
			m.waitFor(`document.querySelector('input[aria-label="Manage fleets: inherit"]').checked`, "the owner's choice back at inherit")
			if got := grant(ownerID); got != "" {
				m.fail("the refused grant on the owner is %q in the API", got)
			}
			m.noHorizontalScroll()
			m.axe("a refused fleet grant")
			m.checkCSP()

			p.step = "the owner takes the member's grant back: the section is gone for them"
			p.choose("Permissions on this fleet for", "Mo")
			p.click("Manage fleets: inherit")
			p.see("Mo: Manage fleets is now inherit on this fleet.")
			if got := grant(moID); got != "" {
				p.fail("the member's grant is still %q", got)
			}
			m.open("/app/fleets/" + fleet)
			m.seeIn("h1", "Vans")
			m.see("Assets of Vans")
			m.notSee("Permissions on this fleet")
			m.notSee("Shares of Vans")
			if st, _ := mo.call("GET", "/fleets/"+fleet+"/permissions", nil); st != 403 {
				m.fail("without the grant the member reads the fleet's layer: %d", st)
			}
		})
	}
}
