package web_test

// Browser tests of issue 17's last document flows (docs/web.md): changing a
// document share's scopes in the shares panel, the scopes the recipient
// reads on "Shared with me", and merge requests listed by state (open,
// merged, closed, all). Each step checks what the page shows, refusals
// included, and the result through the API with the person's own token.

import (
	"strings"
	"testing"
)

// shareRow is the text of the row of the document's shares naming who.
func shareRow(who string) string {
	return `([...document.querySelectorAll('ul[aria-label="Shares of this document"] > li')].find(l => l.innerText.includes(` + js(who) + `))?.innerText ?? '')`
}

// myShareRows is the text of the rows of "Shared with me", joined by |.
const myShareRows = `[...document.querySelectorAll('ul[aria-label="Shares"] > li')].map(l => l.innerText.replace(/\s+/g, ' ').trim()).join('|')`

func TestBrowserDocShareScopes(t *testing.T) {
	bctx := browser(t)
	base := appServer(t)
	for _, vp := range viewports {
		t.Run(vp.name, func(t *testing.T) {
			ownerOrg := "Scopers " + vp.name
			a := orgWithOwner(t, bctx, base, "Sara", ownerOrg, vp.width, vp.height, vp.mobile)
			takerOrg := "Holders " + vp.name
			b := orgWithOwner(t, bctx, base, "Rick", takerOrg, vp.width, vp.height, vp.mobile)
			bOrgID := b.orgIDOf()
			slug := func(s string) string { return strings.ReplaceAll(strings.ToLower(s), " ", "-") }
			sara := newAPIClient(t, base, "sara-"+slug(ownerOrg)+"@example.com", "Sara password")
			rick := newAPIClient(t, base, "rick-"+slug(takerOrg)+"@example.com", "Rick password")
			var me struct {
				ID string `json:"id"`
			}
			rick.do("GET", "/users/@me", nil, 200, &me)
			// Sara and Rick share no organisation: her pages name him by his id (revealUser).
			rickShown := "a person outside your organisations (user " + me.ID + ")"

			docID := a.openDocument("Tender")
			a.firstClause("Scope of works")

			a.step = "Rick accepts shares only from fleet managers of his organisations, so the share is refused"
			a.scrollTo("Shares")
			a.fill("E-mail address or user id", me.ID)
			a.click("Share")
			a.see("You need MANAGE_FLEETS in an organisation you share with this user.")

			b.step = "the recipient lets anyone share with him"
			b.nav("Shared with me")
			b.see("Nothing is shared with you or your organisations.")
			b.click("Anyone signed in who knows my confirmed e-mail address")
			b.click("Save")
			b.see("Saved: who may share with you.")

			a.step = "share with Rick by his user id, to view"
			a.click("Share")
			a.see("Shared with " + rickShown + " (view); it waits for them to accept.")

			b.step = "the recipient reads the scopes and accepts"
			b.open("/app/me/shares")
			b.waitFor(myShareRows+`.includes('Tender') && `+myShareRows+`.includes('you may view') && `+myShareRows+`.includes('pending')`, "the pending share with its scope")
			b.click("Accept the document Tender")
			b.see("You accepted the document Tender.")
			b.seeIn(`ul[aria-label="Shares"]`, "accepted")

			a.step = "no scope at all is refused at the scopes"
			a.click("Change what " + rickShown + " may do")
			a.seeIn(`form[aria-label="What `+rickShown+` may do"]`, rickShown+" may")
			a.click("View it") // the row's box: the only scope, now off
			a.click("Save scopes")
			a.waitFor(`(() => { const f = document.querySelector('form.share-edit fieldset'), e = f && document.getElementById(f.getAttribute('aria-describedby') || '-');
				return e && e.innerText.includes('a share grants at least one scope') })()`, "the refusal at the scopes, named by the fieldset")
			var shares []struct {
				ID        string `json:"id"`
				Status    string `json:"status"`
				ScopeView bool   `json:"scope_view"`
				ScopeEdit bool   `json:"scope_edit"`
				ScopeExp  bool   `json:"scope_export"`
				ScopeFork bool   `json:"scope_fork"`
				Propagate bool   `json:"share_to_users_organisation"`
			}
			sara.do("GET", "/documents/"+docID+"/shares", nil, 200, &shares)
			if len(shares) != 1 || !shares[0].ScopeView || shares[0].ScopeEdit {
				t.Fatalf("after the refused change: %+v", shares)
			}
			a.noHorizontalScroll()
			a.axe("a share's scopes being changed, refused")

			a.step = "view, edit and export"
			a.click("View it")
			a.click("Edit it")
			a.click("Export it")
			a.click("Save scopes")
			a.see("The share with " + rickShown + " now lets them view, edit, export.")
			a.waitFor(shareRow(rickShown)+`.includes('may view, edit, export') && `+shareRow(rickShown)+`.includes('accepted')`, "the row's new scopes")
			a.notSee("Save scopes")
			sara.do("GET", "/documents/"+docID+"/shares", nil, 200, &shares)
			if len(shares) != 1 || !shares[0].ScopeView || !shares[0].ScopeEdit || !shares[0].ScopeExp || shares[0].ScopeFork || shares[0].Status != "accepted" {
				t.Fatalf("after the change: %+v", shares)
			}
			a.checkCSP()

			b.step = "the recipient reads the new scopes and may now edit"
			b.open("/app/me/shares")
			b.waitFor(myShareRows+`.includes('you may view, edit, export')`, "the new scopes on Shared with me")
			b.noHorizontalScroll()
			b.axe("shared with me, with scopes")
			b.click("Tender")
			b.seeIn("h1", "Tender")
			b.waitFor(clauseTexts+` === 'Scope of works'`, "the shared document's clause")
			b.notSee("You may read this document but not change it.")
			b.editCell("Text of clause 1: Scope of works", "Scope of works and extras")
			b.see("Clause 1 saved.")
			a.open("/app/documents/" + docID)
			a.waitFor(clauseTexts+` === 'Scope of works and extras'`, "the recipient's edit in the sharer's page")
			b.checkCSP()

			a.step = "a share revoked meanwhile refuses the change, and the row says why"
			shareID := shares[0].ID
			a.scrollTo("Shares")
			a.click("Change what " + rickShown + " may do")
			a.seeIn(`form[aria-label="What `+rickShown+` may do"]`, rickShown+" may")
			sara.do("DELETE", "/documents/"+docID+"/shares/"+shareID, nil, 204, nil) // as in another tab
			a.click("Export it")
			a.click("Save scopes")
			a.waitFor(`(() => { const l = [...document.querySelectorAll('ul[aria-label="Shares of this document"] > li')].find(l => l.innerText.includes(`+js(rickShown)+`));
				const al = l && l.querySelector('[role=alert]'); return al && al.innerText.includes('The document share is revoked') && l.innerText.includes('revoked') && !l.innerText.includes('Change scopes') })()`,
				"the refusal in the revoked share's row")
			sara.do("GET", "/documents/"+docID+"/shares", nil, 200, &shares)
			if len(shares) != 1 || shares[0].Status != "revoked" || !shares[0].ScopeExp {
				t.Fatalf("after the refused change of a revoked share: %+v", shares)
			}
			a.axe("a refused change of a revoked share")
			a.checkCSP()

			a.step = "an organisation share: its managers, then every member"
			a.click("Another organisation")
			a.choose("Share with the organisation", "Another, by its id")
			a.fill("Organisation id", bOrgID)
			a.click("Share")
			a.see("Shared with the organisation " + takerOrg + " (view)")
			a.waitFor(shareRow("the organisation "+takerOrg)+`.includes('its managers only')`, "the organisation share, managers only")
			b.open("/app/me/shares")
			b.waitFor(myShareRows+`.includes('its managers may view')`, "the organisation share's scope on Shared with me")
			a.click("Change what the organisation " + takerOrg + " may do")
			a.click("Every member of " + takerOrg + " (otherwise only its managers)")
			a.click("Fork it")
			a.click("Save scopes")
			a.see("The share with the organisation " + takerOrg + " now lets them view, fork.")
			a.waitFor(shareRow("the organisation "+takerOrg)+`.includes('every member')`, "the organisation share, every member")
			b.open("/app/me/shares")
			b.waitFor(myShareRows+`.includes('its members may view, fork')`, "the new scopes of the organisation share")
			sara.do("GET", "/documents/"+docID+"/shares", nil, 200, &shares)
			if len(shares) != 2 || !shares[1].Propagate || !shares[1].ScopeFork || shares[1].ScopeEdit {
				t.Fatalf("the organisation share: %+v", shares)
			}
			a.checkCSP()
			b.checkCSP()
		})
	}
}

// mrRows is the text of the listed merge requests, each row's whitespace
// folded, joined by |.
const mrRows = `[...document.querySelectorAll('#mr-h ~ ul.rows > li')].map(l => l.innerText.replace(/\s+/g, ' ').trim()).join('|')`

func TestBrowserMergeRequestStates(t *testing.T) {
	bctx := browser(t)
	base := appServer(t)
	for _, vp := range viewports {
		t.Run(vp.name, func(t *testing.T) {
			orgName := "Mergers " + vp.name
			p := orgWithOwner(t, bctx, base, "Mia", orgName, vp.width, vp.height, vp.mobile)
			c := newAPIClient(t, base, "mia-"+strings.ReplaceAll(strings.ToLower(orgName), " ", "-")+"@example.com", "Mia password")
			docID := p.openDocument("Method statement")
			p.firstClause("Dig")

			p.step = "two branches"
			p.fill("New branch from this revision", "draft")
			p.click("Make branch")
			p.see("Branch draft made from this revision.")
			p.waitFor(`document.getElementById('branch').value === 'draft'`, "the draft branch chosen")
			p.editCell("Text of clause 1: Dig", "Dig carefully")
			p.see("Clause 1 saved.")
			p.fill("New branch from this revision", "alt")
			p.click("Make branch")
			p.see("Branch alt made from this revision.")
			p.waitFor(`document.getElementById('branch').value === 'alt'`, "the alt branch chosen")

			p.step = "#1 merged"
			p.scrollTo("Merge requests")
			p.see("No open merge requests.")
			p.choose("Merge from", "draft")
			p.choose("Into", "main")
			p.fill("Merge request title (optional)", "Careful digging")
			p.click("Open merge request")
			p.see("Merge request opened.")
			p.seeIn(`[aria-label="Merge request #1"]`, "It merges without conflicts.")
			p.click("Merge")
			p.see("Merged draft into main.")
			p.waitFor(`document.getElementById('branch').value === 'main'`, "main shown after the merge")
			p.waitFor(clauseTexts+` === 'Dig carefully'`, "the merged text on main")

			p.step = "#2 closed without merging"
			p.scrollTo("Merge requests")
			p.choose("Merge from", "alt")
			p.choose("Into", "main")
			p.fill("Merge request title (optional)", "Alternative")
			p.click("Open merge request")
			p.see("Merge request opened.")
			p.seeIn(`[aria-label="Merge request #2"]`, "Alternative")
			// alt's head is already in main's history: the reason, not "merges without conflicts"
			p.seeIn(`[aria-label="Merge request #2"]`, "merging changes nothing")
			if eval[bool](p, `document.querySelector('[aria-label="Merge request #2"]').innerText.includes('It merges without conflicts.')`) {
				p.fail("a request that changes nothing is also said to merge without conflicts")
			}
			p.click("Close without merging")
			p.see("Merge request #2 closed.")

			p.step = "#3 stays open"
			p.choose("Merge from", "alt")
			p.choose("Into", "main")
			p.fill("Merge request title (optional)", "Later")
			p.click("Open merge request")
			p.see("Merge request opened.")
			p.seeIn(`[aria-label="Merge request #3"]`, "Later")

			p.step = "the open ones by default"
			p.waitFor(`document.querySelector('ul[aria-label="Open merge requests"]') && `+mrRows+`.startsWith('#3 Later') && !`+mrRows+`.includes('|')`, "only #3 listed as open")
			p.seeIn(`ul[aria-label="Open merge requests"]`, "open")

			p.step = "the merged ones"
			p.choose("Merge requests to show", "Merged")
			p.waitFor(`document.querySelector('ul[aria-label="Merged merge requests"]') && `+mrRows+`.startsWith('#1 Careful digging draft → main') && `+mrRows+`.endsWith('merged Open #1')`, "only #1, merged")

			p.step = "the closed ones, and opening one"
			p.choose("Merge requests to show", "Closed")
			p.waitFor(`document.querySelector('ul[aria-label="Closed merge requests"]') && `+mrRows+`.startsWith('#2 Alternative alt → main') && `+mrRows+`.endsWith('closed Open #2')`, "only #2, closed")
			p.click("Open #2")
			p.seeIn(`[aria-label="Merge request #2"]`, "Closed without merging")
			p.seeIn(`[aria-label="Merge request #2"] .tag`, "closed")
			p.notSee("Close without merging")

			p.step = "all of them, each with its state"
			p.choose("Merge requests to show", "All")
			p.waitFor(`document.querySelector('ul[aria-label="All merge requests"]') && `+mrRows+`.split('|').map(r => r.split(' ').slice(-3, -2)[0]).join(',') === 'merged,closed,open'`, "three requests: merged, closed, open")
			p.click("Open #1")
			p.seeIn(`[aria-label="Merge request #1"]`, "Merged as revision")
			p.noHorizontalScroll()
			p.axe("merge requests of every state")
			p.checkCSP()

			p.step = "closing one closed meanwhile is refused, and the page shows its state"
			p.click("Open #3")
			p.seeIn(`[aria-label="Merge request #3"] .tag`, "open")
			c.do("POST", "/documents/"+docID+"/merge-requests/3/close", nil, 200, nil) // as in another tab
			p.click("Close without merging")
			p.see("The merge request is closed already.")
			p.seeIn(`[aria-label="Merge request #3"] .tag`, "closed")
			p.waitFor(mrRows+`.split('|').map(r => r.split(' ').slice(-3, -2)[0]).join(',') === 'merged,closed,closed'`, "the list read again")
			p.axe("a refused close")
			p.checkCSP()

			p.step = "the API agrees"
			var all []struct {
				Number int    `json:"number"`
				Status string `json:"status"`
			}
			c.do("GET", "/documents/"+docID+"/merge-requests", nil, 200, &all)
			if len(all) != 3 || all[0].Status != "merged" || all[1].Status != "closed" || all[2].Status != "closed" {
				t.Fatalf("merge requests: %+v", all)
			}
		})
	}
}
