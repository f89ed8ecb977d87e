package web_test

// Browser test of "why can this member manage this fleet" (issue 17), at
// 375 px and on a desktop: on the members page the owner opens a member's
// access, picks a fleet and reads which grant decided MANAGE_FLEETS there
// (a role's grant on one fleet, the member's own deny on another, nothing
// in the organisation); the member reads their own the same way. What the
// page says is checked against what the fleets' routes then let them do.

import (
	"strings"
	"testing"
)

func TestBrowserMemberAccessFleet(t *testing.T) {
	bctx := browser(t)
	base := appServer(t)
	for _, vp := range viewports {
		t.Run(vp.name, func(t *testing.T) {
			orgName := "Why " + vp.name
			p := orgWithOwner(t, bctx, base, "Fay", orgName, vp.width, vp.height, vp.mobile)
			owner := awLogin(t, base, "fay-why-"+vp.name+"@example.com", "Fay password")
			orgID := strings.Split(strings.TrimPrefix(p.location(), p.base+"/app/orgs/"), "/")[0]

			p.step = "two fleets, a role and a member with grants on the fleets (through the API)"
			vans := owner.id("POST", "/organisations/"+orgID+"/fleets", map[string]any{"name": "Vans"})
			cars := owner.id("POST", "/organisations/"+orgID+"/fleets", map[string]any{"name": "Cars"})
			drivers := owner.id("POST", "/organisations/"+orgID+"/roles", map[string]any{"name": "Drivers"})
			m := joinMember(t, bctx, base, p, orgID, orgName, "Mo", "mo-why-"+vp.name+"@example.com", "Mo password", vp.width, vp.height, vp.mobile)
			mo := awLogin(t, base, "mo-why-"+vp.name+"@example.com", "Mo password")
			moID := mo.must(200, "GET", "/users/@me", nil)["id"].(string)
			owner.must(204, "PUT", "/organisations/"+orgID+"/members/"+moID+"/roles/"+drivers, nil)
			owner.must(200, "PATCH", "/fleets/"+vans+"/permissions/"+drivers, map[string]any{"permissions": map[string]string{"MANAGE_FLEETS": "allow"}})
			owner.must(200, "PATCH", "/fleets/"+cars+"/permissions/"+drivers, map[string]any{"permissions": map[string]string{"MANAGE_FLEETS": "allow"}})
			owner.must(200, "PATCH", "/fleets/"+cars+"/permissions/"+moID, map[string]any{"permissions": map[string]string{"MANAGE_FLEETS": "deny"}})

			// row waits for the access table's row of a permission to read want (allowed, then why).
			row := func(pg *page, perm, want string) {
				pg.t.Helper()
				pg.waitFor(`[...document.querySelectorAll('table.access tr')].some(r => r.querySelector('th')?.innerText.trim() === `+js(perm)+
					` && [...r.querySelectorAll('td')].map(c => c.innerText.trim()).join(' | ') === `+js(want)+`)`, perm+": "+want)
			}

			p.step = "the owner asks why Mo can manage fleets: in the organisation, nothing sets it"
			p.open("/app/orgs/" + orgID)
			p.orgNav("Members")
			p.seeIn(`ul[aria-label="Members"]`, "Mo")
			p.click("Access of Mo")
			p.see("What Mo may do in the organisation, and why")
			row(p, "Manage fleets", "no | no grant sets it")

			p.step = "on the fleet Vans, the role's grant there decides"
			p.choose("Explain the access of Mo", "on the fleet Vans")
			p.see("What Mo may do on the fleet Vans, and why")
			row(p, "Manage fleets", "yes | allow by the role Drivers (on this fleet)")
			row(p, "View documents", "yes | allow by @everyone (organisation)")
			p.noHorizontalScroll()
			p.axe("a member's access on a fleet")
			p.shot("members-access-fleet-" + vp.name)

			p.step = "on the fleet Cars, Mo's own deny beats the role"
			p.choose("Explain the access of Mo", "on the fleet Cars")
			p.see("What Mo may do on the fleet Cars, and why")
			row(p, "Manage fleets", "no | deny by their own grant (on this fleet)")
			p.step = "and back to the organisation"
			p.choose("Explain the access of Mo", "in the organisation")
			p.see("What Mo may do in the organisation, and why")
			row(p, "Manage fleets", "no | no grant sets it")
			p.checkCSP()

			p.step = "what the page said is what the fleets' routes do"
			mo.must(200, "PATCH", "/fleets/"+vans, map[string]any{"name": "Vans"})
			if st, _ := mo.call("PATCH", "/fleets/"+cars, map[string]any{"name": "Mine"}); st != 403 {
				p.fail("Mo, denied on Cars, renamed it: %d", st)
			}
			if st, _ := mo.call("POST", "/organisations/"+orgID+"/fleets", map[string]any{"name": "Bikes"}); st != 403 {
				p.fail("Mo, without MANAGE_FLEETS in the organisation, made a fleet: %d", st)
			}

			m.step = "Mo asks about themself on a fleet"
			m.open("/app/orgs/" + orgID)
			m.orgNav("Members")
			m.click("Access of Mo")
			m.choose("Explain the access of Mo", "on the fleet Vans")
			m.see("What Mo may do on the fleet Vans, and why")
			row(m, "Manage fleets", "yes | allow by the role Drivers (on this fleet)")
			m.notSee("Access of Fay")
			m.noHorizontalScroll()
			m.axe("their own access on a fleet")
		})
	}
}
