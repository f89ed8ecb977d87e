package web_test

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"workspace/db"
)

// mailLink is the link of the newest mail to recipient whose subject
// contains subject, as a person would find it in their mailbox (the
// outbox keeps what was sent when no SMTP server is set).
func mailLink(t *testing.T, store *db.Store, recipient, subject string) string {
	t.Helper()
	// Reset mails go out after the page answers: wait for one.
	for deadline := time.Now().Add(30 * time.Second); ; {
		rows, err := store.R.OutboxList(context.Background(), 1000)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows { // newest first
			if strings.EqualFold(r.Recipient, recipient) && strings.Contains(r.Subject, subject) {
				if r.Link == "" || !strings.Contains(r.Body, r.Link) || !strings.Contains(r.Html, "href=\"") {
					t.Fatalf("the mail %q has no link in both parts: %q", r.Subject, r.Body)
				}
				return r.Link
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no mail to %s about %q", recipient, subject)
		}
		time.Sleep(10 * time.Millisecond) // the poll interval
	}
}

// drawnQR decodes the QR code drawn in the row's svg.qr (QrCode.svelte:
// one rect per dark module, a border of 2, the first rect the background).
func drawnQR(p *page, row string) string {
	p.t.Helper()
	type drawn struct {
		Size  int      `json:"size"`
		Cells [][2]int `json:"cells"`
	}
	d := eval[drawn](p, `(() => { const svg = `+row+`.querySelector('svg.qr'); return {size: svg.viewBox.baseVal.width,
		cells: [...svg.querySelectorAll('rect[width="1"]')].map(r => [+r.getAttribute('x'), +r.getAttribute('y')])} })()`)
	n := d.Size - 4
	m := make([][]bool, max(n, 0))
	for y := range m {
		m[y] = make([]bool, n)
	}
	for _, c := range d.Cells {
		if x, y := c[0]-2, c[1]-2; x >= 0 && y >= 0 && x < n && y < n {
			m[y][x] = true
		}
	}
	text, err := decodeQR(m)
	if err != nil {
		p.fail("the drawn QR code does not decode: %v", err)
	}
	return text
}

// TestBrowserMailJourney (issue 36): an admin invites by e-mail; the
// invited person opens only the link in the mail, in a browser of their
// own, registers, is told their address is not confirmed yet, confirms it
// from the mail's link (also signed out: it asks to sign in and comes
// back), and joins. Then "Forgot password?" end to end. The invites list's
// link and QR code carry the code, Copy says "Copied" only after copying,
// and Revoke works on an e-mail invite.
func TestBrowserMailJourney(t *testing.T) {
	bctx := browser(t)
	base, store := appServerWith(t, nil)
	for _, vp := range viewports {
		t.Run(vp.name, func(t *testing.T) {
			orgName := "Harbour Works " + vp.name
			guestEmail := "newcomer-" + vp.name + "@example.com"
			admin := orgWithOwner(t, bctx, base, "Ada", orgName, vp.width, vp.height, vp.mobile)

			admin.step = "invites: a link invite's link and QR carry its code"
			admin.orgNav("Invites")
			admin.see("No invites yet.")
			admin.click("Create invite")
			admin.see("Invite created.")
			const row = `document.querySelector('ul[aria-label="Invites"] li')`
			link := pollValue(admin, row+`?.querySelector('input.link-box')?.value ?? ''`, "the invite link")
			code := strings.TrimPrefix(link, base+"/app/join/")
			if code == link || len(code) < 10 {
				admin.fail("invite link %q carries no code", link)
			}
			admin.notSee("Copied")
			admin.click("Copy link")
			admin.waitFor(`document.body.innerText.includes('Copied') || document.body.innerText.includes('copy it with Ctrl+C')`, "the copy's outcome")
			if eval[bool](admin, `document.body.innerText.includes('Copied')`) {
				if got := eval[string](admin, `navigator.clipboard.readText().catch(() => '')`); got != "" && got != link {
					admin.fail("Copied, but the clipboard holds %q", got)
				}
			}
			admin.click("QR code")
			admin.waitFor(row+`.querySelectorAll('svg.qr rect').length > 100`, "the invite's QR code")
			if got := drawnQR(admin, row); got != link {
				admin.fail("the QR code says %q, want the link %q", got, link)
			}

			admin.step = "invite by e-mail; revoke another"
			admin.fill("E-mail (optional)", "someone-else-"+vp.name+"@example.com")
			admin.click("Create invite")
			admin.see("Invite created.")
			admin.fill("E-mail (optional)", guestEmail)
			admin.click("Create invite")
			admin.seeIn(`ul[aria-label="Invites"]`, guestEmail)
			admin.see("The invitation link was mailed to this address")
			admin.run(chromedp.Evaluate[chromedp.Void](`[...document.querySelectorAll('ul[aria-label="Invites"] li')].find(l => l.innerText.includes('someone-else-')).querySelector('button.danger').setAttribute('data-revoke', '1')`),
				chromedp.Click(chromedp.CSS(`[data-revoke="1"]`)))
			admin.see("Invite revoked.")
			admin.waitFor(`[...document.querySelectorAll('ul[aria-label="Invites"] li')].find(l => l.innerText.includes('someone-else-'))?.innerText.includes('revoked')`, "the revoked tag")
			admin.noHorizontalScroll()
			admin.axe("the invites list")

			guest := newPage(t, bctx, base, vp.width, vp.height, vp.mobile)
			guest.step = "open only the link in the mail, register"
			invited := mailLink(t, store, guestEmail, "invited you")
			if !strings.HasPrefix(invited, base+"/app/join/") {
				guest.fail("the invitation links to %q", invited)
			}
			guest.run(chromedp.Navigate(invited))
			guest.waitFor(`location.pathname === '/oauth/authorize'`, "the sign-in page")
			guest.register("Nia", guestEmail, "guest password")
			guest.waitFor(`location.pathname.startsWith('/app/join/')`, "the invitation after registering")
			guest.see("You are invited to join " + orgName)
			guest.click("Join " + orgName)
			guest.see("Please confirm your address " + guestEmail + " first")
			guest.axe("an invitation refused: address not confirmed")
			guest.shot("join-unconfirmed-" + vp.name)
			first := mailLink(t, store, guestEmail, "Confirm your e-mail address")
			guest.click("Send the confirmation again")
			guest.see("We sent a new confirmation link to " + guestEmail)
			second := mailLink(t, store, guestEmail, "Confirm your e-mail address")
			if second == first {
				guest.fail("no new confirmation mail")
			}

			guest.step = "the replaced link says so"
			guest.run(chromedp.Navigate(first))
			guest.see("This link has expired or a newer one was sent")

			guest.step = "confirm from the mail's link, signed out: sign in and come back"
			other := newPage(t, bctx, base, vp.width, vp.height, vp.mobile)
			other.run(chromedp.Navigate(second))
			other.signIn(guestEmail, "guest password")
			other.waitFor(`location.pathname.startsWith('/app/confirm-email/')`, "the confirmation page after signing in")
			other.see("Thank you: " + guestEmail + " is confirmed.")
			other.axe("an address confirmed")

			guest.step = "join"
			guest.run(chromedp.Navigate(invited))
			guest.see("You are invited to join " + orgName)
			guest.click("Join " + orgName)
			guest.seeIn("h1", orgName)

			guest.step = "For you shows the induction the admin assigned"
			adminEmail := "ada-" + strings.ReplaceAll(strings.ToLower(orgName), " ", "-") + "@example.com"
			asAdmin, asGuest := apiAs(t, base, adminEmail, "Ada password"), apiAs(t, base, guestEmail, "guest password")
			var org, me, ind struct {
				ID string `json:"id"`
			}
			asGuest("GET", "/users/@me", nil, &me)
			var orgs []struct {
				ID   string `json:"id"`
				Name string `json:"name"`
			}
			asAdmin("GET", "/users/@me/organisations", nil, &orgs)
			for _, o := range orgs {
				if o.Name == orgName {
					org.ID = o.ID
				}
			}
			asAdmin("POST", "/organisations/"+org.ID+"/inductions", map[string]any{"name": "Harbour site induction"}, &ind)
			asAdmin("POST", "/inductions/"+ind.ID+"/users/"+me.ID, map[string]any{"due_at": time.Now().Add(72 * time.Hour).Unix()}, nil)
			guest.open("/")
			guest.seeIn("h1", "For you")
			guest.seeIn(`ul[aria-label="Inductions due"]`, "Harbour site induction")
			guest.axe("For you after joining")

			guest.step = "the invitation again: already a member"
			guest.run(chromedp.Navigate(invited))
			guest.see("You are already a member of " + orgName)

			guest.step = "join by a typed code from the home page"
			guest.open("/")
			guest.fill("Invitation code", "NoSuchInvite123")
			guest.click("Continue")
			guest.see("We cannot find this invitation")

			fp := newPage(t, bctx, base, vp.width, vp.height, vp.mobile)
			fp.step = "forgot password"
			fp.open("/")
			fp.waitFor(`location.pathname === '/oauth/authorize'`, "the sign-in page")
			fp.click("Forgot password?")
			fp.waitFor(`location.pathname === '/auth/forgot'`, "the reset page")
			fp.fill("E-mail address", guestEmail)
			fp.click("Send me a link")
			fp.see("Check your mail")
			reset := mailLink(t, store, guestEmail, "Choose a new password")
			if u, err := url.Parse(reset); err != nil || u.Path != "/auth/reset" || !strings.HasPrefix(reset, base) {
				fp.fail("reset link %q", reset)
			}
			fp.run(chromedp.Navigate(reset))
			fp.fill("New password", "brand new password")
			fp.fill("New password again", "brand new password")
			fp.axe("choose a new password")
			fp.click("Change password")
			fp.see("Your password is changed")
			fp.click("Sign in")
			fp.signIn(guestEmail, "brand new password")
			fp.waitFor(`location.pathname.startsWith('/app/') && document.querySelector('header.top') !== null`, "the app with the new password")
			fp.run(chromedp.Navigate(reset))
			fp.see("This link has expired or was already used")
			fp.axe("a used reset link")

			del := newPage(t, bctx, base, vp.width, vp.height, vp.mobile)
			del.step = "delete an account from the mail's link"
			leaving := "leaving-" + vp.name + "@example.com"
			del.open("/")
			del.register("Lee", leaving, "leaving password")
			del.open("/app/account")
			del.click("Delete my account…")
			del.see("We sent a link to " + leaving)
			del.run(chromedp.Navigate(mailLink(t, store, leaving, "delete your account")))
			del.see("You asked to delete the account " + leaving)
			del.axe("confirm the deletion")
			del.click("Delete my account")
			del.see("Your account is deleted.")
		})
	}
}
