package web_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// registerAPI makes an account through POST /auth/register.
func registerAPI(t *testing.T, base, first, email, password string) {
	t.Helper()
	b, _ := json.Marshal(map[string]string{"email": email, "password": password, "first_name": first, "last_name": "Tester"})
	r, err := http.Post(base+"/auth/register", "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode != http.StatusCreated {
		t.Fatalf("register %s: %d", email, r.StatusCode)
	}
}

// TestBrowserForYou: a worker with an assigned induction, a toolbox
// invitation and a work item lands on "For you" after signing in and sees
// them; the bell counts three unread notifications and drops as they are
// read.
func TestBrowserForYou(t *testing.T) {
	bctx := browser(t)
	base := appServer(t)
	for _, vp := range viewports {
		t.Run(vp.name, func(t *testing.T) {
			owner, worker := "olga-"+vp.name+"@example.com", "wim-"+vp.name+"@example.com"
			registerAPI(t, base, "Olga", owner, "owner password")
			registerAPI(t, base, "Wim", worker, "worker password")
			asOwner, asWorker := apiAs(t, base, owner, "owner password"), apiAs(t, base, worker, "worker password")
			var org, inv, me, ind, tb, typ struct {
				ID   string `json:"id"`
				Code string `json:"code"`
			}
			asOwner("POST", "/organisations", map[string]any{"name": "Site " + vp.name}, &org)
			asOwner("POST", "/organisations/"+org.ID+"/invites", map[string]any{}, &inv)
			asWorker("POST", "/invites/"+inv.Code, nil, nil)
			asWorker("GET", "/users/@me", nil, &me)
			asOwner("POST", "/organisations/"+org.ID+"/inductions", map[string]any{"name": "Site safety induction"}, &ind)
			due := time.Now().Add(5 * 24 * time.Hour)
			asOwner("POST", "/inductions/"+ind.ID+"/users/"+me.ID, map[string]any{"due_at": due.Unix()}, nil)
			asOwner("POST", "/organisations/"+org.ID+"/toolboxes", map[string]any{"title": "Crane lift briefing"}, &tb)
			start := time.Now().Add(2 * 24 * time.Hour).UTC().Truncate(time.Minute)
			asOwner("POST", "/toolboxes/"+tb.ID+"/schedules", map[string]any{"scheduled_start_at": start.Format(time.RFC3339),
				"scheduled_finish_at": start.Add(30 * time.Minute).Format(time.RFC3339), "invitee_ids": []string{me.ID}}, nil)
			asOwner("POST", "/organisations/"+org.ID+"/work-item-types", map[string]any{"name": "Task"}, &typ)
			asOwner("POST", "/organisations/"+org.ID+"/workitems", map[string]any{"type_id": typ.ID, "title": "Inspect the scaffold",
				"assignee_ids": []string{me.ID}}, nil)

			p := newPage(t, bctx, base, vp.width, vp.height, vp.mobile)
			p.step = "sign in lands on For you"
			p.open("/")
			p.signIn(worker, "worker password")
			p.waitFor(`location.pathname === '/app/'`, "the app's home")
			p.seeIn("h1", "For you")
			p.seeIn(`ul[aria-label="Inductions due"]`, "Site safety induction")
			p.seeIn(`ul[aria-label="Inductions due"]`, "Due ")
			p.seeIn(`ul[aria-label="Invitations to answer"]`, "Toolbox talk: Crane lift briefing")
			p.seeIn(`ul[aria-label="Talks this week"]`, "Crane lift briefing")
			p.seeIn(`ul[aria-label="Work items assigned to you"]`, "Inspect the scaffold")
			p.see("No merge requests on your documents.")
			p.see("Nothing shared with you is waiting.")
			p.see("Your organisations")
			p.waitFor(`document.querySelector('a.bell')?.getAttribute('aria-label') === 'Notifications, 3 unread'`, "the bell counting 3 unread")
			p.seeIn("a.bell", "3")
			p.noHorizontalScroll()
			p.axe("For you")
			p.shot("for-you-" + vp.name)
			p.checkCSP()

			p.step = "the notifications list; opening one reads it"
			p.click("Notifications, 3 unread")
			p.seeIn("h1", "Notifications")
			p.seeIn(`ul[aria-label="Notifications"]`, "Induction to complete: Site safety induction")
			if n := eval[int](p, `document.querySelectorAll('ul[aria-label="Notifications"] li.unread').length`); n != 3 {
				p.fail("%d unread rows, want 3", n)
			}
			p.noHorizontalScroll()
			p.axe("the notifications list")
			p.shot("notifications-" + vp.name)
			p.click("Induction to complete: Site safety induction")
			p.waitFor(`location.pathname === '/app/me/inductions/`+ind.ID+`'`, "the induction's page")
			p.waitFor(`document.querySelector('a.bell')?.getAttribute('aria-label') === 'Notifications, 2 unread'`, "the bell dropping to 2")

			p.step = "mark all read"
			p.click("Notifications, 2 unread")
			p.click("Mark all read")
			p.see("All notifications are marked read.")
			p.waitFor(`document.querySelector('a.bell')?.getAttribute('aria-label') === 'Notifications, none unread'`, "the bell at none")
			if n := eval[int](p, `document.querySelectorAll('ul[aria-label="Notifications"] li.unread').length`); n != 0 {
				p.fail("%d rows still unread", n)
			}
			if strings.Contains(eval[string](p, `document.querySelector('a.bell').innerText`), "2") {
				p.fail("the bell still shows a number")
			}
		})
	}
}

// TestBrowserBellFollows: the bell does not wait for its minute's poll. A
// work item assigned by someone else shows as soon as the tab comes back
// into view or takes the focus, and as soon as the person does something
// themselves (saving their profile); the poll is a minute and each wait here
// ends well before it.
func TestBrowserBellFollows(t *testing.T) {
	bctx := browser(t)
	base := appServer(t)
	vp := viewports[0]
	owner, worker := "bella-owner@example.com", "bella-worker@example.com"
	registerAPI(t, base, "Bella", owner, "owner password")
	registerAPI(t, base, "Walt", worker, "worker password")
	asOwner, asWorker := apiAs(t, base, owner, "owner password"), apiAs(t, base, worker, "worker password")
	var org, inv, me, typ struct {
		ID   string `json:"id"`
		Code string `json:"code"`
	}
	asOwner("POST", "/organisations", map[string]any{"name": "Bell yard"}, &org)
	asOwner("POST", "/organisations/"+org.ID+"/invites", map[string]any{}, &inv)
	asWorker("POST", "/invites/"+inv.Code, nil, nil)
	asWorker("GET", "/users/@me", nil, &me)
	asOwner("POST", "/organisations/"+org.ID+"/work-item-types", map[string]any{"name": "Task"}, &typ)
	assign := func(title string) {
		asOwner("POST", "/organisations/"+org.ID+"/workitems", map[string]any{"type_id": typ.ID, "title": title,
			"assignee_ids": []string{me.ID}}, nil)
	}

	p := newPage(t, bctx, base, vp.width, vp.height, vp.mobile)
	p.openSignedIn("/app/", worker, "worker password")
	p.step = "signed in with nothing unread"
	p.waitFor(`location.pathname === '/app/'`, "the app's home")
	p.waitFor(`document.querySelector('a.bell')?.getAttribute('aria-label') === 'Notifications, none unread'`, "the bell at none")

	p.step = "the tab comes back into view"
	assign("Check the gate")
	eval[bool](p, `document.dispatchEvent(new Event('visibilitychange')), true`)
	p.waitFor(`document.querySelector('a.bell')?.getAttribute('aria-label') === 'Notifications, 1 unread'`, "the bell at 1 once the tab is visible again")

	p.step = "the window takes the focus"
	assign("Sweep the yard")
	eval[bool](p, `window.dispatchEvent(new Event('focus')), true`)
	p.waitFor(`document.querySelector('a.bell')?.getAttribute('aria-label') === 'Notifications, 2 unread'`, "the bell at 2 once the window has the focus")

	p.step = "the person's own change"
	p.open("/app/account")
	p.waitFor(`document.querySelector('a.bell')?.getAttribute('aria-label') === 'Notifications, 2 unread'`, "the bell at 2 on the account page")
	assign("Lock the shed")
	p.fill("Position", "Yard hand")
	p.click("Save profile")
	p.waitFor(`document.querySelector('a.bell')?.getAttribute('aria-label') === 'Notifications, 3 unread'`, "the bell at 3 after saving the profile")
	p.seeIn("a.bell", "3")
	p.axe("the account page with the bell")
}
