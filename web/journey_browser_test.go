package web_test

// The journey of issue 29, one test: an admin at a desktop and a site
// supervisor on a phone, a fresh database, only clicks, typing, a drawn
// signature and the links in the mails of the outbox (no API calls):
// sign up, create an organisation, invite by e-mail, join, assign an
// induction and complete it, plan a talk, start it, sign it on the phone,
// see it signed on the conductor's screen, download the report and read
// the audit log's sentence about it. axe (and the raw-phrase check) runs
// on every page of it; with WORKSPACE_SCREENSHOTS each step is pictured.

import (
	"archive/zip"
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

func TestBrowserJourney(t *testing.T) {
	bctx := browser(t)
	base, store := appServerWith(t, nil)
	const orgName = "Harbour Build"
	const sueEmail = "sue@harbour.example"

	admin := orgWithOwner(t, bctx, base, "Ada", orgName, 1366, 900, false)
	admin.axe("the new organisation")
	admin.shot("journey-01-organisation")

	admin.step = "invite the supervisor by e-mail"
	admin.orgNav("Invites")
	admin.fill("E-mail (optional)", sueEmail)
	admin.click("Create invite")
	admin.seeIn(`ul[aria-label="Invites"]`, sueEmail)
	admin.axe("the invites")
	admin.shot("journey-02-invite")

	sue := newPage(t, bctx, base, 390, 844, true)
	sue.step = "the supervisor opens the mail's link on her phone and joins"
	invited := mailLink(t, store, sueEmail, "invited you")
	sue.run(chromedp.Navigate(invited))
	sue.waitFor(`location.pathname === '/oauth/authorize'`, "the sign-in page")
	sue.register("Sue", sueEmail, "sue password")
	sue.see("You are invited to join " + orgName)
	sue.click("Join " + orgName)
	sue.see("Please confirm your address " + sueEmail + " first")
	sue.run(chromedp.Navigate(mailLink(t, store, sueEmail, "Confirm your e-mail address")))
	sue.see("Thank you: " + sueEmail + " is confirmed.")
	sue.axe("the address confirmed")
	sue.run(chromedp.Navigate(invited))
	sue.click("Join " + orgName)
	sue.seeIn("h1", orgName)
	sue.axe("the organisation joined")
	sue.shot("journey-03-joined")

	admin.step = "an induction, assigned to the supervisor"
	admin.orgNav("Inductions")
	admin.fill("Induction name", "Harbour site induction")
	admin.fill("Valid for (days)", "365")
	admin.click("Create induction")
	admin.seeIn("h1", "Harbour site induction")
	admin.click("Add question")
	admin.fill("Question 1", "Will you wear a life jacket on the quay?")
	admin.click("Save induction")
	admin.see("Saved as a new revision.")
	admin.choose("Assign to", "Sue")
	admin.see("Assigned.")
	admin.axe("the induction")
	admin.shot("journey-04-induction")

	sue.step = "the supervisor completes the induction"
	sue.nav("My inductions")
	sue.click("Harbour site induction")
	sue.seeIn("h1", "Harbour site induction")
	sue.click("Yes")
	sue.click("I confirm my answers")
	sue.see("You completed Harbour site induction.")
	sue.axe("the induction completed")
	sue.shot("journey-05-induction-done")

	admin.step = "plan a talk with a session, the supervisor invited"
	admin.click("← Inductions")
	admin.orgNav("Toolbox talks")
	admin.fill("Title", "Quay lifting")
	admin.click("Create toolbox talk")
	admin.seeIn("h1", "Quay lifting")
	admin.fill("New section", "Lifting")
	admin.click("Add section")
	admin.fill("New topic in Lifting", "Stay clear of the load")
	admin.click("Add topic to Lifting")
	admin.seeIn(`ul[aria-label="Topics of Lifting"]`, "Stay clear of the load")
	admin.setValue("Session starts", "2026-12-02T07:00")
	admin.setValue("Session ends", "2026-12-02T07:30")
	admin.click("Schedule a session")
	admin.see("Session scheduled.")
	admin.choose("Invite a member", "Sue")
	admin.see("Invited.")
	admin.axe("the planned talk")
	admin.shot("journey-06-talk")

	sue.step = "the supervisor follows the invitation's mail and checks in"
	sue.run(chromedp.Navigate(mailLink(t, store, sueEmail, "Quay lifting")))
	sue.seeIn("h1", "Quay lifting")
	sue.seeIn("#sign-state", "Waiting for the meeting to start.")
	sue.click("Check in")
	sue.see("You are checked in.")
	sue.axe("waiting for the meeting")
	sue.shot("journey-07-waiting")

	admin.step = "the admin starts the meeting"
	const sueRow = `([...document.querySelectorAll('ul[aria-label="Attendance"] li')].find(li => li.innerText.includes('Sue'))?.innerText ?? '')`
	admin.waitFor(sueRow+`.includes('checked in')`, "Sue checked in on the admin's screen")
	admin.allowLocation(51.5, -0.1)
	admin.click("Start the meeting")
	admin.see("People can sign now.")
	admin.axe("the meeting started")

	sue.step = "the supervisor signs on her phone with a drawn signature"
	sue.seeIn("#sign-state", "Sign now")
	sue.drawSignature("Draw your signature here", true)
	sue.click("I was there: sign")
	sue.fill("Last name", "Supervisor") // she registered with her first name only
	sue.click("I was there: sign")
	sue.see("You signed at")
	sue.noHorizontalScroll()
	sue.axe("signed")
	sue.shot("journey-08-signed")
	sue.checkCSP()

	admin.step = "the conductor's screen shows her signature without a reload"
	admin.waitFor(sueRow+`.includes('signed at')`, "Sue signed on the admin's screen")
	admin.seeIn(`ul[aria-label="Attendance"]`, "Sue Supervisor")
	admin.seeIn(`section[aria-labelledby="conduct-h"]`, "One person has signed.")
	admin.axe("the talk signed")
	admin.shot("journey-09-conductor")

	admin.step = "download the report: the drawn signature is in it"
	downloads := admin.allowDownloads()
	admin.click("Download the report (DOCX)")
	admin.see("The report is downloading.")
	docx := admin.downloaded(downloads, "Quay lifting report.docx")
	zr, err := zip.NewReader(bytes.NewReader(docx), int64(len(docx)))
	if err != nil {
		admin.fail("the report is not a DOCX: %v", err)
	}
	var body string
	images := 0
	for _, f := range zr.File {
		if strings.HasPrefix(f.Name, "word/media/") {
			images++
		}
		if f.Name == "word/document.xml" {
			rc, _ := f.Open()
			b, _ := io.ReadAll(rc)
			rc.Close()
			body = string(b)
		}
	}
	if !strings.Contains(body, "Supervisor") || !strings.Contains(body, "Stay clear of the load") || images == 0 {
		admin.fail("the report lacks Sue's row, the topic or her signature's image (%d images)", images)
	}

	admin.step = "the audit log says it in a sentence"
	admin.click("← Toolbox talks")
	admin.orgNav("Audit log")
	admin.waitFor(`[...document.querySelectorAll('table.audit tbody tr')].some(r => r.innerText.includes('Sue signed the toolbox talk Quay lifting'))`, "the sentence about Sue's signature")
	admin.waitFor(`[...document.querySelectorAll('table.audit tbody tr')].some(r => r.innerText.includes('Ada started the meeting of the toolbox talk Quay lifting'))`, "the sentence about the start")
	admin.axe("the audit log")
	admin.shot("journey-10-audit")
	admin.checkCSP()
}
