package web_test

// Browser tests of a document's release tags, forks and shares (issue 17):
// the panels under the editor (web/src/components/DocumentTags.svelte,
// DocumentForks.svelte, DocumentShares.svelte) and the "Shared with me"
// screen. What the page shows is checked against the API, read with the
// person's own token (newAPIClient, docgrid_browser_test.go).

import (
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// orgIDOf is the organisation id in the page's address (/app/orgs/{id}/...).
func (p *page) orgIDOf() string {
	p.t.Helper()
	return pollValue(p, `location.pathname.startsWith('/app/orgs/') ? location.pathname.split('/')[3] : ''`, "the organisation's id")
}

// firstClause adds a first clause to the open document and writes text in it.
func (p *page) firstClause(text string) {
	p.t.Helper()
	p.click("Add the first clause")
	p.see("Clause inserted.")
	p.editCell("Text of clause 1: empty", text)
	p.see("Clause 1 saved.")
}

// scrollTo brings a panel's heading into view (the panels sit under the grid).
func (p *page) scrollTo(heading string) {
	p.t.Helper()
	p.waitFor(`[...document.querySelectorAll('h2')].some(h => h.innerText.trim() === `+js(heading)+`)`, "the heading "+heading)
	p.run(chromedp.Evaluate[chromedp.Void](`[...document.querySelectorAll('h2')].find(h => h.innerText.trim() === ` + js(heading) + `).scrollIntoView()`))
}

func TestBrowserDocumentTags(t *testing.T) {
	bctx := browser(t)
	base := appServer(t)
	for _, vp := range viewports {
		t.Run(vp.name, func(t *testing.T) {
			orgName := "Releases " + vp.name
			p := orgWithOwner(t, bctx, base, "Tess", orgName, vp.width, vp.height, vp.mobile)
			email := "tess-" + strings.ReplaceAll(strings.ToLower(orgName), " ", "-") + "@example.com"
			c := newAPIClient(t, base, email, "Tess password")
			orgID := p.orgIDOf()
			// The document type's revision format is major.minor (3); types have no screen yet.
			c.do("POST", "/organisations/"+orgID+"/document-types", map[string]any{"name": "Spec", "revision_format": 3}, 201, nil)

			p.step = "a document of the type"
			p.orgNav("Documents")
			p.fill("Document title", "Drainage")
			p.choose("Document type", "Spec")
			p.click("Create document")
			p.see("Document Drainage created.")
			p.click("Drainage")
			p.seeIn("h1", "Drainage")
			docID := pollValue(p, `location.pathname.split('/')[3] ?? ''`, "the document's id")
			p.firstClause("Lay pipes")

			p.step = "the first release takes the format's first label"
			p.scrollTo("Releases and tags")
			p.see("Not released yet.")
			p.see("Releases are labelled major.minor")
			p.see("No tags yet.")
			p.click("Release")
			p.see("Release 0.1 made on revision")
			p.seeIn(".release-label", "0.1")
			p.seeIn(`ul[aria-label="Tags"]`, "0.1")
			first := pollValue(p, `document.querySelector('.release-label')?.closest('p')?.querySelector('.mono')?.innerText ?? ''`, "the released revision")

			p.step = "a change, then a major release"
			p.editCell("Text of clause 1: Lay pipes", "Lay pipes to falls")
			p.see("Clause 1 saved.")
			p.scrollTo("Releases and tags")
			p.choose("Version part to raise", "Major")
			p.click("Release")
			p.see("Release 1.0 made on revision")
			p.seeIn(".release-label", "1.0")
			p.waitFor(`[...document.querySelectorAll('ul[aria-label="Tags"] li')].filter(l => l.innerText.includes('current')).length === 1`, "one current release")

			p.step = "a tag needs a label; one on an older revision"
			p.click("A tag with a label of my own")
			p.click("Add tag")
			if got := p.fieldError("Tag label"); got == "" {
				p.fail("no error next to an empty tag label")
			}
			p.fill("Tag label", "approved")
			p.click("Pick an older revision")
			p.choose("Revision", pollValue(p, `[...document.getElementById('tag-revision').options].find(o => o.text.startsWith(`+js(first)+`))?.text ?? ''`, "the first release's revision in the list"))
			p.fill("Message (optional)", "Approved by the client")
			p.click("Add tag")
			p.see("Tag approved made on revision " + first + ".")
			p.seeIn(`ul[aria-label="Tags"]`, "Approved by the client")

			p.step = "a taken label is refused, and says so"
			p.click("A tag with a label of my own")
			p.fill("Tag label", "approved")
			p.click("Add tag")
			p.see("The document has a tag labelled approved.")
			p.noHorizontalScroll()
			p.axe("releases and tags")
			p.checkCSP()

			p.step = "the API agrees"
			var doc struct {
				CurrentReleaseTag struct {
					Label string `json:"label"`
				} `json:"current_release_tag"`
			}
			c.do("GET", "/documents/"+docID, nil, 200, &doc)
			var tags []struct {
				Label    string `json:"label"`
				Release  bool   `json:"release"`
				Revision string `json:"revision"`
			}
			c.do("GET", "/documents/"+docID+"/tags", nil, 200, &tags)
			if doc.CurrentReleaseTag.Label != "1.0" || len(tags) != 3 || tags[2].Label != "approved" || tags[2].Release || !strings.HasPrefix(tags[2].Revision, first) {
				t.Fatalf("current release %q, tags %+v", doc.CurrentReleaseTag.Label, tags)
			}
		})
	}
}

func TestBrowserDocumentForks(t *testing.T) {
	bctx := browser(t)
	base := appServer(t)
	for _, vp := range viewports {
		t.Run(vp.name, func(t *testing.T) {
			orgName := "Origin " + vp.name
			p := orgWithOwner(t, bctx, base, "Fern", orgName, vp.width, vp.height, vp.mobile)
			email := "fern-" + strings.ReplaceAll(strings.ToLower(orgName), " ", "-") + "@example.com"
			originOrg := p.orgIDOf()
			p.step = "a second organisation of the same person"
			p.nav("Organisations")
			p.fill("Name", "Site office "+vp.name)
			p.click("Create organisation")
			p.seeIn("h1", "Site office "+vp.name)
			p.open("/app/orgs/" + originOrg + "/projects")
			p.seeIn("h1", orgName)
			originID := p.openDocument("Specification")
			p.firstClause("Original text")

			p.step = "fork into the other organisation"
			p.scrollTo("Forks")
			p.see("No forks of this document.")
			p.fill("Title of the fork", "")
			p.click("Fork the document")
			if got := p.fieldError("Title of the fork"); got == "" {
				p.fail("no error next to an empty fork title")
			}
			p.choose("Into the organisation", "Site office "+vp.name)
			p.fill("Title of the fork", "Specification copy")
			p.click("Fork the document")
			p.see("Forked as ")
			p.see("Specification copy in Site office " + vp.name + ".")
			p.see("1 fork of this document.")
			p.click(pollValue(p, `[...document.querySelectorAll('a')].find(a => a.innerText.startsWith('Open the fork '))?.innerText.trim() ?? ''`, "the link to the fork"))
			p.seeIn("h1", "Specification copy")
			forkID := pollValue(p, `location.pathname.split('/')[3] !== `+js(originID)+` ? location.pathname.split('/')[3] : ''`, "the fork's id")
			p.waitFor(clauseTexts+` === 'Original text'`, "the origin's content in the fork")
			p.see("Forked from")
			p.seeIn("#forks-h + p a", "Specification")

			p.step = "a change in the fork, proposed back to the origin"
			p.editCell("Text of clause 1: Original text", "Improved text")
			p.see("Clause 1 saved.")
			p.scrollTo("Forks")
			p.choose("Into the origin's branch", "main")
			p.fill("Title (optional)", "Better wording")
			p.click("Open merge request into the origin")
			p.see("Merge request #1 Better wording opened on the origin.")
			p.noHorizontalScroll()
			p.axe("a fork")
			p.checkCSP()
			p.click("Open Specification")
			p.seeIn("h1", "Specification")
			p.waitFor(`location.pathname.split('/')[3] === `+js(originID), "the origin's page")
			p.seeIn(`ul[aria-label="Open merge requests"]`, "main of a fork → main")
			p.click("Open #1")
			p.see("It merges without conflicts.")
			p.click("Merge")
			p.see("Merged main into main.")
			p.waitFor(clauseTexts+` === 'Improved text'`, "the fork's change in the origin")
			p.scrollTo("Forks")
			p.see("1 fork of this document.")
			p.checkCSP()

			p.step = "the API agrees"
			c := newAPIClient(t, base, email, "Fern password")
			var origin, fork struct {
				ForkCount int    `json:"fork_count"`
				OriginID  string `json:"origin_id"`
				Org       string `json:"organisation_id"`
			}
			c.do("GET", "/documents/"+originID, nil, 200, &origin)
			c.do("GET", "/documents/"+forkID, nil, 200, &fork)
			if origin.ForkCount != 1 || fork.OriginID != originID || fork.Org == originOrg {
				t.Fatalf("origin %+v, fork %+v", origin, fork)
			}
		})
	}
}

func TestBrowserDocumentShares(t *testing.T) {
	bctx := browser(t)
	base, store := appServerWith(t, nil)
	for _, vp := range viewports {
		t.Run(vp.name, func(t *testing.T) {
			ownerOrg := "Sharers " + vp.name
			a := orgWithOwner(t, bctx, base, "Sara", ownerOrg, vp.width, vp.height, vp.mobile)
			takerOrg := "Takers " + vp.name
			b := orgWithOwner(t, bctx, base, "Rick", takerOrg, vp.width, vp.height, vp.mobile)
			bOrgID := b.orgIDOf()
			bEmail := "rick-" + strings.ReplaceAll(strings.ToLower(takerOrg), " ", "-") + "@example.com"
			rick := newAPIClient(t, base, bEmail, "Rick password")
			var me struct {
				ID string `json:"id"`
			}
			rick.do("GET", "/users/@me", nil, 200, &me)
			// Sara and Rick share no organisation, so her pages name him by his id (revealUser).
			rickShown := "a person outside your organisations (user " + me.ID + ")"

			docID := a.openDocument("Tender")
			a.firstClause("Scope of works")

			a.step = "share with a typed user id the recipient's setting refuses: said at the field"
			a.scrollTo("Shares")
			a.see("Not shared with anyone.")
			// Rick lets only fleet managers of his organisations share with him (the
			// default), and Sara is in none of them: the API's 403 belongs to the field.
			a.fill("E-mail address or user id", me.ID)
			a.click("Share")
			if got := a.fieldError("E-mail address or user id"); got != "You need MANAGE_FLEETS in an organisation you share with this user." {
				a.fail("the refusal at the recipient's field = %q", got)
			}
			shareForm := `[...document.querySelectorAll('form')].find(f => f.querySelector('h3')?.innerText === 'Share this document')`
			if n := eval[int](a, shareForm+`.querySelectorAll('[role=alert]').length`); n != 0 {
				a.fail("the refusal is also shown as %d alerts of the form", n)
			}
			a.axe("a refusal at the recipient's field")
			a.step = "changing the field takes its error away"
			a.fill("E-mail address or user id", "nobody")
			a.noFieldError("E-mail address or user id")

			// Rick confirms his address (with the token mailed to him) and accepts shares from anyone.
			confirmEmail(t, base, store, bEmail, "Rick password")
			b.step = "the recipient lets anyone share with him"
			b.nav("Shared with me")
			b.see("Nothing is shared with you or your organisations.")
			b.click("Anyone signed in who knows my confirmed e-mail address")
			b.click("Save")
			b.see("Saved: who may share with you.")

			a.step = "share with a person: errors at their fields"
			a.fill("E-mail address or user id", "nobody@example.com")
			a.click("Share")
			if got := a.fieldError("E-mail address or user id"); !strings.Contains(got, "No account has this verified e-mail address") {
				a.fail("lookup error = %q", got)
			}
			a.fill("E-mail address or user id", bEmail)
			a.click("View it")
			a.click("Share")
			a.seeIn("#share-scopes-error", "at least one scope")
			a.click("View it")
			a.click("Export it")
			a.click("Share")
			a.see("Shared with " + bEmail + " (view, export); it waits for them to accept.")
			a.seeIn(`ul[aria-label="Shares of this document"]`, "pending")
			a.noHorizontalScroll()
			a.axe("a document's shares")

			b.step = "the recipient accepts in Shared with me"
			b.open("/app/me/shares")
			b.seeIn(`ul[aria-label="Shares"]`, "Tender")
			b.seeIn(`ul[aria-label="Shares"]`, "from "+ownerOrg)
			b.seeIn(`ul[aria-label="Shares"]`, "pending")
			b.see("by your user id, " + me.ID)
			b.noHorizontalScroll()
			b.axe("shared with me")
			b.click("Accept the document Tender")
			b.see("You accepted the document Tender.")
			b.seeIn(`ul[aria-label="Shares"]`, "accepted")
			b.click("Tender")
			b.seeIn("h1", "Tender")
			b.waitFor(clauseTexts+` === 'Scope of works'`, "the shared document's clause")
			b.see("You may read this document but not change it.")
			b.scrollTo("Shares")
			b.see("Sharing this document is for members with SHARE_PROJECTS")
			b.step = "forking is refused without the fork scope, and the page says why"
			b.scrollTo("Forks")
			b.click("Fork the document")
			b.waitFor(`[...document.querySelectorAll('#forks-h ~ form .alert')].some(e => e.innerText.length > 0)`, "the refusal to fork")
			b.axe("a shared document")
			b.checkCSP()

			a.step = "the sharer sees it accepted, then revokes"
			a.open("/app/documents/" + docID)
			a.scrollTo("Shares")
			a.seeIn(`ul[aria-label="Shares of this document"]`, "accepted")
			a.click("Revoke the share with " + rickShown)
			a.click("Yes, revoke")
			a.see("The share with " + rickShown + " is revoked.")
			a.seeIn(`ul[aria-label="Shares of this document"]`, "revoked")
			rick.do("GET", "/documents/"+docID, nil, http.StatusForbidden, nil) // access ends with the revoke
			b.step = "the recipient loses it"
			b.open("/app/documents/" + docID)
			b.waitFor(`document.querySelector('.alert') !== null && document.querySelector('h1')?.innerText === 'Document'`, "the refusal to read")
			b.nav("Shared with me")
			b.see("Nothing is shared with you or your organisations.")
			b.notSee("Tender")

			a.step = "share with the other organisation, every member, with fork"
			a.click("Another organisation")
			a.choose("Share with the organisation", "Another, by its id")
			a.fill("Organisation id", "12345")
			a.click("Share")
			if got := a.fieldError("Organisation id"); !strings.Contains(got, "names no organisation") {
				a.fail("organisation error = %q", got)
			}
			a.fill("Organisation id", bOrgID)
			a.click("Every member of that organisation (otherwise only its managers)")
			a.click("Fork it")
			a.click("Share")
			a.see("Shared with the organisation " + takerOrg + " (view, fork)")

			b.step = "the organisation's owner accepts it and forks it into the organisation"
			b.open("/app/me/shares")
			b.seeIn(`ul[aria-label="Shares"]`, "to "+takerOrg)
			b.click("Accept the document Tender")
			b.see("You accepted the document Tender.")
			b.click("Tender")
			b.seeIn("h1", "Tender")
			b.scrollTo("Forks")
			b.choose("Into the organisation", takerOrg)
			b.fill("Title of the fork", "Our tender")
			b.click("Fork the document")
			b.see("Our tender in " + takerOrg + ".")
			var mine []struct {
				Title    string `json:"title"`
				OriginID string `json:"origin_id"`
			}
			rick.do("GET", "/organisations/"+bOrgID+"/documents", nil, 200, &mine)
			if len(mine) != 1 || mine[0].Title != "Our tender" || mine[0].OriginID != docID {
				t.Fatalf("the recipient organisation's documents: %+v", mine)
			}

			a.step = "a share the recipient rejects"
			a.open("/app/documents/" + docID)
			a.scrollTo("Shares")
			a.fill("E-mail address or user id", me.ID)
			a.click("Share")
			a.see("Shared with " + rickShown + " (view)")
			b.open("/app/me/shares")
			b.click("Reject the document Tender")
			b.see("You rejected the document Tender.")
			a.open("/app/documents/" + docID)
			a.scrollTo("Shares")
			a.waitFor(`[...document.querySelectorAll('ul[aria-label="Shares of this document"] li')].some(l => l.innerText.includes(`+js(rickShown)+`) && l.innerText.includes('rejected'))`, "the rejected share")
			a.checkCSP()
			b.checkCSP()
		})
	}
}
