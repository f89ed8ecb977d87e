package web_test

// Browser tests of the project board's drag between columns (issue 17): a
// card dragged by its grip from Open to Closed and back, by a finger on the
// 375 px phone and a mouse on the desktop, calls the same API as the Close /
// Reopen buttons; the work item's status is read back through the API. A
// refusal of the server (the member's right to change work items denied
// meanwhile) puts the card back and shows the server's message in it.

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
)

// dragToColumn presses the grip labelled handle and lets go inside the
// board column col ("open" or "closed"): a finger on a phone, a mouse on a
// desktop. When the column is out of view the pointer waits at the window's
// edge while the page scrolls, as a person's finger would.
func (p *page) dragToColumn(mobile bool, handle, col string) {
	p.t.Helper()
	grip := `document.querySelector('[data-drag=' + CSS.escape(` + js(handle) + `) + ']')`
	p.waitFor(grip+` !== null`, fmt.Sprintf("the grip %q", handle))
	p.run(chromedp.Evaluate[chromedp.Void](grip + `.scrollIntoView({block: 'center'})`))
	at := eval[[]float64](p, `(() => { const r = `+grip+`.getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2] })()`)
	x, y := at[0], at[1]
	// where to let go: the column's box within the window's middle band, or
	// null while it is beyond the edge (then: [null, which edge])
	target := `(() => { const r = document.querySelector('[data-column=` + col + `]').getBoundingClientRect(); const lo = ` + fmt.Sprint(dragEdge) + `, hi = innerHeight - ` + fmt.Sprint(dragEdge) + `;
		const top = Math.max(r.top + 8, lo), bottom = Math.min(r.bottom - 8, hi);
		return top <= bottom ? [r.left + r.width / 2, (top + bottom) / 2, 0] : [0, 0, r.top > hi ? innerHeight - 10 : 10] })()`
	press := func(typ string, x, y float64) chromedp.Action[chromedp.Void] {
		if mobile {
			tt := map[string]input.DispatchTouchEventType{"down": input.DispatchTouchEventTypeTouchStart, "move": input.DispatchTouchEventTypeTouchMove, "up": input.DispatchTouchEventTypeTouchEnd}[typ]
			pts := []*input.TouchPoint{{X: x, Y: y}}
			if typ == "up" {
				pts = []*input.TouchPoint{}
			}
			return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
				_, err := cdp.Call(ctx, t, input.DispatchTouchEvent, input.DispatchTouchEventParams{Type: tt, TouchPoints: pts})
				return err
			})
		}
		mt := map[string]input.DispatchMouseEventType{"down": input.DispatchMouseEventTypeMousePressed, "move": input.DispatchMouseEventTypeMouseMoved, "up": input.DispatchMouseEventTypeMouseReleased}[typ]
		return chromedp.MouseEvent(mt, x, y, chromedp.ButtonLeft, func(e *input.DispatchMouseEventParams) {
			if typ != "up" {
				e.Buttons = 1
			}
		})
	}
	glide := func(tx, ty float64) {
		steps := []chromedp.Action[chromedp.Void]{}
		for i := 1; i <= 8; i++ {
			steps = append(steps, press("move", x+(tx-x)*float64(i)/8, y+(ty-y)*float64(i)/8))
		}
		p.run(steps...)
		x, y = tx, ty
	}
	p.run(press("down", x, y))
	for range 100 {
		t := eval[[]float64](p, target)
		if t[2] == 0 {
			glide(t[0], t[1])
			p.run(press("up", x, y))
			return
		}
		if y != t[2] {
			glide(x, t[2])
		}
		p.waitFor(target+`[2] === 0`, fmt.Sprintf("the page to scroll the %s column into view while dragging", col))
	}
	p.fail("dragging %q to the %s column: it never came into view", handle, col)
}

// joinMember: the owner's page p makes an invite, a new page registers
// first (e-mail, password) through it and joins; it returns that page.
func joinMember(t *testing.T, bctx context.Context, base string, p *page, orgID, orgName, first, email, password string, width, height int64, mobile bool) *page {
	t.Helper()
	p.open("/app/orgs/" + orgID)
	p.orgNav("Invites")
	p.click("Create invite")
	p.see("Invite created.")
	link := pollValue(p, `document.querySelector('ul[aria-label="Invites"] input.link-box')?.value ?? ''`, "the invite link")
	m := newPage(t, bctx, base, width, height, mobile)
	m.run(chromedp.Navigate(link))
	m.register(first, email, password)
	m.click("Join " + orgName)
	m.seeIn("h1", orgName)
	return m
}

func TestBrowserBoardDrag(t *testing.T) {
	bctx := browser(t)
	base := appServer(t)
	for _, vp := range viewports {
		t.Run(vp.name, func(t *testing.T) {
			orgName := "Board " + vp.name
			p := orgWithOwner(t, bctx, base, "Bo", orgName, vp.width, vp.height, vp.mobile)
			owner := awLogin(t, base, "bo-board-"+vp.name+"@example.com", "Bo password")
			orgID := strings.Split(strings.TrimPrefix(p.location(), p.base+"/app/orgs/"), "/")[0]

			p.step = "a project with two work items (through the API)"
			defect := owner.id("POST", "/organisations/"+orgID+"/work-item-types", map[string]any{"name": "Defect"})
			inspection := owner.id("POST", "/organisations/"+orgID+"/work-item-types", map[string]any{"name": "Inspection"})
			project := owner.id("POST", "/organisations/"+orgID+"/projects", map[string]any{"name": "Depot"})
			kerb := owner.must(201, "POST", "/organisations/"+orgID+"/workitems", map[string]any{"type_id": defect, "title": "Cracked kerb", "project_id": project})
			check := owner.must(201, "POST", "/organisations/"+orgID+"/workitems", map[string]any{"type_id": inspection, "title": "Weekly check", "project_id": project})
			kerbCard := kerb["formatted_number"].(string) + " Cracked kerb"
			checkCard := check["formatted_number"].(string) + " Weekly check"
			status := func(w map[string]any) string {
				return owner.must(200, "GET", "/workitems/"+w["id"].(string), nil)["status"].(string)
			}

			p.step = "drag a card to Closed, then back to Open"
			p.open("/app/projects/" + project + "/board")
			p.seeIn("h1", "Board of Depot")
			p.seeIn(`ul[aria-label="Open Defect"]`, "Cracked kerb")
			p.noHorizontalScroll()
			p.axe("the board with its grips")
			p.dragToColumn(vp.mobile, "Drag "+kerbCard+" to Closed", "closed")
			p.see(kerbCard + " closed.")
			p.seeIn(`ul[aria-label="Closed Defect"]`, "Cracked kerb")
			p.seeIn("#col-closed", "(1)")
			if got := status(kerb); got != "closed" {
				p.fail("after the drag to Closed the API says %q", got)
			}
			p.dragToColumn(vp.mobile, "Drag "+kerbCard+" to Open", "open")
			p.see(kerbCard + " reopened.")
			p.seeIn(`ul[aria-label="Open Defect"]`, "Cracked kerb")
			p.seeIn("#col-closed", "(0)")
			if got := status(kerb); got != "open" {
				p.fail("after the drag back to Open the API says %q", got)
			}

			p.step = "let go in the same column: nothing changes"
			p.dragToColumn(vp.mobile, "Drag "+checkCard+" to Closed", "open")
			p.seeIn(`ul[aria-label="Open Inspection"]`, "Weekly check")
			if got := status(check); got != "open" {
				p.fail("a drop in its own column changed the status to %q", got)
			}

			p.step = "a member may change the project's work items"
			p.click("← Depot")
			p.seeIn("h1", "Depot")
			m := joinMember(t, bctx, base, p, orgID, orgName, "Ivo", "ivo-board-"+vp.name+"@example.com", "Ivo password", vp.width, vp.height, vp.mobile)
			ivo := awLogin(t, base, "ivo-board-"+vp.name+"@example.com", "Ivo password")
			ivoID := ivo.must(200, "GET", "/users/@me", nil)["id"].(string)
			var everyone string
			_, roles := owner.call("GET", "/organisations/"+orgID+"/roles", nil)
			for _, r := range roles.([]any) {
				if r := r.(map[string]any); r["name"] == "@everyone" {
					everyone = r["id"].(string)
				}
			}
			owner.must(200, "PATCH", "/projects/"+project+"/permissions/"+everyone, map[string]any{"permissions": map[string]string{"VIEW_PROJECTS": "allow", "VIEW_WORKITEMS": "allow", "CREATE_WORKITEMS": "allow"}})
			m.open("/app/projects/" + project + "/board")
			m.seeIn("h1", "Board of Depot")
			m.seeIn(`ul[aria-label="Open Inspection"]`, "Weekly check")

			m.step = "denied meanwhile: the server refuses the drag, the card goes back with the server's message"
			owner.must(200, "PATCH", "/projects/"+project+"/permissions/"+ivoID, map[string]any{"permissions": map[string]string{"CREATE_WORKITEMS": "deny"}})
			m.dragToColumn(vp.mobile, "Drag "+checkCard+" to Closed", "closed")
			m.seeIn(`ul[aria-label="Open Inspection"] [role=alert]`, "You need the CREATE_WORKITEMS permission")
			m.seeIn(`ul[aria-label="Open Inspection"]`, "Weekly check")
			m.waitFor(`!document.querySelector('#col-closed').closest('section').innerText.includes('Weekly check')`, "the card no longer in Closed")
			if got := status(check); got != "open" {
				m.fail("the refused drag left the status %q", got)
			}
			m.noHorizontalScroll()
			m.axe("the board with a refusal")
			m.checkCSP()
			p.checkCSP()
		})
	}
}
