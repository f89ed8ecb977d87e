package web_test

// Browser test of "screens fit the role" (issue 29), at 375 px and on a
// desktop: a member whom the organisation gives nothing beyond reading opens
// a toolbox talk, a document, an asset and a project and is shown no control
// the API would refuse them (a member may still check themself in, or
// add to an asset's log: the API lets them); each page says who may do what it leaves out,
// and the API is asked the same writes to prove they are refused.

import (
	"strings"
	"testing"
)

func TestBrowserMemberSeesOnlyWhatTheyMayDo(t *testing.T) {
	bctx := browser(t)
	base := appServer(t)
	for _, vp := range viewports {
		t.Run(vp.name, func(t *testing.T) {
			orgName := "Roles " + vp.name
			p := orgWithOwner(t, bctx, base, "Rhea", orgName, vp.width, vp.height, vp.mobile)
			owner := awLogin(t, base, "rhea-roles-"+vp.name+"@example.com", "Rhea password")
			orgID := strings.Split(strings.TrimPrefix(p.location(), p.base+"/app/orgs/"), "/")[0]
			acme := "/organisations/" + orgID

			p.step = "a member, and a talk, a document, an asset and a project (through the API)"
			m := joinMember(t, bctx, base, p, orgID, orgName, "Milo", "milo-roles-"+vp.name+"@example.com", "Milo password", vp.width, vp.height, vp.mobile)
			milo := awLogin(t, base, "milo-roles-"+vp.name+"@example.com", "Milo password")
			miloID := milo.must(200, "GET", "/users/@me", nil)["id"].(string)
			talk := owner.id("POST", acme+"/toolboxes", map[string]any{"title": "Ladders"})
			section := owner.id("POST", "/toolboxes/"+talk+"/sections", map[string]any{"title": "Footing"})
			owner.id("POST", "/toolboxes/"+talk+"/topics", map[string]any{"section_id": section, "body": "Three points of contact"})
			session := owner.id("POST", "/toolboxes/"+talk+"/schedules", map[string]any{"scheduled_start_at": "2026-12-01T07:00:00Z",
				"scheduled_finish_at": "2026-12-01T07:30:00Z", "invitee_ids": []string{miloID}})
			doc := owner.id("POST", "/documents", map[string]any{"organisation_id": orgID, "title": "Method statement"})
			plant := owner.id("POST", acme+"/fleets", map[string]any{"name": "Plant"})
			genset := owner.id("POST", acme+"/asset-types", map[string]any{"name": "Generator", "ephemerality": 0, "fleet_id": plant})
			asset := owner.id("POST", acme+"/assets", map[string]any{"type_id": genset, "name": "20kVA generator"})
			project := owner.id("POST", acme+"/projects", map[string]any{"name": "Depot"})

			// buttons lists the visible controls of the page's content.
			buttons := func() []string {
				return eval[[]string](m, `[...document.querySelectorAll('#content button, #content select, #content input:not([type=search])')].filter(e => e.offsetParent !== null)
					.map(e => (e.innerText || e.getAttribute('aria-label') || e.id || e.tagName).trim())`)
			}
			noneOf := func(what string, refused ...string) {
				m.t.Helper()
				got := buttons()
				for _, b := range got {
					for _, r := range refused {
						if strings.HasPrefix(b, r) {
							m.fail("%s: a plain member is offered %q (all: %q)", what, b, got)
						}
					}
				}
			}

			m.step = "the talk: no session controls, and the page says who may"
			m.open("/app/toolboxes/" + talk)
			m.seeIn("h1", "Ladders")
			m.see("Only people who manage teams can plan sessions and invite people to them.")
			noneOf("the talk", "Change times", "Remove session", "Uninvite", "Schedule a session", "Invite a member")
			m.noHorizontalScroll()
			m.axe("a talk as a plain member")
			m.shot("role-member-talk-" + vp.name)
			for _, w := range [][3]string{
				{"DELETE", "/schedules/" + session, ""},
				{"DELETE", "/schedules/" + session + "/invitees/" + miloID, ""},
				{"POST", "/toolboxes/" + talk + "/schedules", ""},
			} {
				if st, _ := milo.call(w[0], w[1], map[string]any{"scheduled_start_at": "2026-12-02T07:00:00Z", "scheduled_finish_at": "2026-12-02T08:00:00Z"}); st != 403 {
					m.fail("the API let a plain member %s %s: %d", w[0], w[1], st)
				}
			}

			m.step = "a held talk: its sections and topics no longer change"
			owner.must(200, "POST", "/toolboxes/"+talk+"/conduct", map[string]any{"latitude": 51.5, "longitude": -0.12})
			m.open("/app/toolboxes/" + talk)
			m.see("The talk has been held, so its sections and topics no longer change")
			noneOf("the held talk", "Add section", "Add topic", "Remove", "Move", "Drag")

			m.step = "the document: read only, and it says so"
			m.open("/app/documents/" + doc)
			m.see("You may read this document but not change it.")
			noneOf("the document", "Insert clause", "Delete clause", "Add column", "Add the first clause", "Make branch")
			if st, _ := milo.call("PATCH", "/documents/"+doc, map[string]any{"title": "Mine"}); st != 403 {
				m.fail("the API let a plain member rename the document: %d", st)
			}

			m.step = "the asset: no editor, no log entry"
			m.open("/app/asset/" + asset)
			m.seeIn("h1", "20kVA generator")
			noneOf("the asset", "Save asset", "Undo changes")
			if st, _ := milo.call("PATCH", "/api/assets/"+asset, map[string]any{"name": "Mine"}); st != 403 {
				m.fail("the API let a plain member rename the asset: %d", st)
			}

			m.step = "the project: no closing, milestones, packages or permissions"
			m.open("/app/projects/" + project)
			m.seeIn("h1", "Depot")
			noneOf("the project", "Close project", "Add milestone", "Add package", "Permissions of")
			if st, _ := milo.call("POST", "/projects/"+project+"/milestones", map[string]any{"name": "M1"}); st != 403 {
				m.fail("the API let a plain member add a milestone: %d", st)
			}
			m.noHorizontalScroll()
			m.axe("a project as a plain member")
		})
	}
}
