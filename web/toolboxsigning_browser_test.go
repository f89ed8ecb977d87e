package web_test

// Browser test of the honest attendance list (issue 35), at 375 px and on a
// desktop: the owner records a visitor's and a member's attendance and the
// member signs for himself; the talk's screen and the meeting screen say in
// plain words how each signed and who recorded what was not the signer's
// own; a member who does not run the meeting is told so on the meeting
// screen and gets no code to show.

import (
	"testing"
)

func TestBrowserToolboxRecordedBy(t *testing.T) {
	bctx := browser(t)
	base := appServer(t)
	for _, vp := range viewports {
		t.Run(vp.name, func(t *testing.T) {
			orgName := "Signing " + vp.name
			p := orgWithOwner(t, bctx, base, "Ada", orgName, vp.width, vp.height, vp.mobile)
			owner := awLogin(t, base, "ada-signing-"+vp.name+"@example.com", "Ada password")
			orgID := owner.must(200, "GET", "/users/@me", nil)["organisations"].([]any)[0].(map[string]any)["id"].(string)
			m := joinMember(t, bctx, base, p, orgID, orgName, "Mo", "mo-signing-"+vp.name+"@example.com", "Mo password", vp.width, vp.height, vp.mobile)
			mo := awLogin(t, base, "mo-signing-"+vp.name+"@example.com", "Mo password")
			moID := mo.must(200, "GET", "/users/@me", nil)["id"].(string)

			p.step = "the owner runs a talk: a visitor and Mo recorded by her, Mo also signs for himself elsewhere"
			tb := owner.id("POST", "/organisations/"+orgID+"/toolboxes", map[string]any{"title": "Slings"})
			owner.must(200, "POST", "/toolboxes/"+tb+"/conduct", map[string]any{"latitude": 51.5, "longitude": -0.12})
			owner.must(200, "POST", "/toolboxes/"+tb+"/sign", map[string]any{"first_name": "Vi", "last_name": "Sitor", "declaration": true})
			owner.must(200, "POST", "/toolboxes/"+tb+"/sign", map[string]any{"user_id": moID, "last_name": "Moss", "declaration": true})
			tb2 := owner.id("POST", "/organisations/"+orgID+"/toolboxes", map[string]any{"title": "Ladders"})
			owner.must(200, "POST", "/toolboxes/"+tb2+"/conduct", map[string]any{"latitude": 51.5, "longitude": -0.12})
			mo.must(200, "POST", "/toolboxes/"+tb2+"/sign", map[string]any{"user_id": moID, "last_name": "Moss", "declaration": true})

			p.step = "the talk's attendance names the recorder"
			p.open("/app/toolboxes/" + tb)
			p.seeIn(`ul[aria-label="Attendance"]`, "Vi Sitor")
			p.waitFor(`[...document.querySelectorAll('ul[aria-label="Attendance"] li')].filter(li => li.innerText.includes('Declared attendance, recorded by Ada')).length === 2`,
				"both rows recorded by Ada")
			p.notSee("declaration")
			p.shot("toolbox-recorded-by-" + vp.name)

			p.step = "the meeting screen's list says the same"
			p.open("/app/toolboxes/" + tb + "/conduct")
			p.seeIn(`ul[aria-label="Present"]`, "Declared attendance, recorded by Ada")

			p.step = "Mo's own signature is his: no recorder"
			m.open("/app/toolboxes/" + tb2)
			m.seeIn(`ul[aria-label="Attendance"]`, "Mo")
			m.seeIn(`ul[aria-label="Attendance"]`, "Declared attendance")
			m.waitFor(`!document.querySelector('ul[aria-label="Attendance"]').innerText.includes('recorded by')`, "no recorder on Mo's own row")

			p.step = "Mo does not run the meeting: its screen tells him so and shows no code"
			m.open("/app/toolboxes/" + tb + "/conduct")
			m.see("Only whoever runs the meeting")
			m.waitFor(`document.querySelector('svg, canvas, img[alt*="QR"]') === null || !document.body.innerText.includes('Scan to sign')`, "no QR code")
			m.axe("the meeting screen refused")
		})
	}
}
