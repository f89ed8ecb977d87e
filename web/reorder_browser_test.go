package web_test

// Browser tests of drag to reorder (issue 16): an organisation's roles, a
// toolbox's sections and the topics of a section, an induction's questions.
// Each drag is real pointer input: a finger (touch events) on the 375 px
// phone, a mouse on the desktop, pressing an item's grip and letting go where
// the item should go. The new order is checked in the page, then after a
// reload (read from the API again); a refusal of the server must put the
// order back and say why.

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
)

// itemTexts is a JavaScript expression: the visible text of each item of the
// list matching sel (its first line, or what first matches sub inside each
// item), joined by "|".
func itemTexts(sel, sub string) string {
	pick := `li.innerText.split('\n')[0].trim()`
	if sub != "" {
		pick = `(li.querySelector(` + js(sub) + `)?.innerText ?? '').trim()`
	}
	return `[...(document.querySelector(` + js(sel) + `)?.children ?? [])].map(li => ` + pick + `).join('|')`
}

// dragEdge is how close to the window's top or bottom the page scrolls
// while dragging (EDGE in src/lib/reorder.svelte.ts), plus a margin.
const dragEdge = 64

// drag presses the grip whose label is handle and lets go over the item of
// the same list whose text (first line) starts with target: in its upper
// quarter when moving up, its lower quarter when moving down, so the item
// takes the target's place. A finger on a phone (touch events, which the
// browser turns into pointer events), a mouse on a desktop. When the target
// is out of view the pointer waits at the window's edge while the page
// scrolls, as a person's finger would.
func (p *page) drag(mobile bool, handle, target string) {
	p.t.Helper()
	find := `(() => { const h = document.querySelector('[data-drag=' + CSS.escape(` + js(handle) + `) + ']'); if (!h) return null;
		const list = h.closest('[data-reorder]'); const items = [...list.children]; const from = items.findIndex(li => li.contains(h));
		const to = items.findIndex(li => li.innerText.trim().startsWith(` + js(target) + `)); if (to < 0) return null;
		const r = items[to].getBoundingClientRect(); const hr = h.getBoundingClientRect();
		return [hr.left + hr.width / 2, hr.top + hr.height / 2, to < from ? r.top + r.height / 4 : r.bottom - r.height / 4, innerHeight] })()`
	p.waitFor(find+` !== null`, fmt.Sprintf("the grip %q and the item %q", handle, target))
	p.run(chromedp.Evaluate[chromedp.Void](`document.querySelector('[data-drag=' + CSS.escape(` + js(handle) + `) + ']').scrollIntoView({block: 'center'})`))
	at := eval[[]float64](p, find)
	x, y := at[0], at[1]
	press := func(typ string, y float64) chromedp.Action[chromedp.Void] {
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
	glide := func(from, to float64) {
		steps := []chromedp.Action[chromedp.Void]{}
		for i := 1; i <= 8; i++ {
			steps = append(steps, press("move", from+(to-from)*float64(i)/8))
		}
		p.run(steps...)
	}
	p.run(press("down", y))
	for range 100 {
		at = eval[[]float64](p, find)
		ty, h := at[2], at[3]
		if ty >= dragEdge && ty <= h-dragEdge {
			glide(y, ty)
			p.run(press("up", ty))
			return
		}
		// out of view: hold at the edge while the page scrolls
		edge := 10.0
		if ty > h-dragEdge {
			edge = h - 10
		}
		if y != edge {
			glide(y, edge)
			y = edge
		}
		p.waitFor(`(() => { const a = `+find+`; return a && a[2] >= `+fmt.Sprint(dragEdge)+` && a[2] <= a[3] - `+fmt.Sprint(dragEdge)+` })()`,
			fmt.Sprintf("the page to scroll %q into view while dragging", target))
	}
	p.fail("dragging %q to %q: the target never came into view", handle, target)
}

// expectOrder waits for the list sel to show items in order (see itemTexts).
func (p *page) expectOrder(sel, sub, want, what string) {
	p.t.Helper()
	p.waitFor(itemTexts(sel, sub)+` === `+js(want), what+": "+want)
}

func TestBrowserDragReorder(t *testing.T) {
	bctx := browser(t)
	base := appServer(t)
	for _, vp := range viewports {
		t.Run(vp.name, func(t *testing.T) {
			orgName := "Order " + vp.name
			p := orgWithOwner(t, bctx, base, "Rhea", orgName, vp.width, vp.height, vp.mobile)
			email, password := "rhea-order-"+vp.name+"@example.com", "Rhea password"
			const roles = `ul[aria-label="Roles"]`
			const roleName = `strong`

			p.step = "roles: three of them"
			p.orgNav("Roles")
			for _, name := range []string{"Foremen", "Site crew", "Helpers"} {
				p.fill("Name", name)
				p.click("Create role")
				p.see("Role " + name + " created.")
			}
			p.expectOrder(roles, roleName, "Foremen|Site crew|Helpers|@everyone", "the roles in the order made")

			p.step = "roles: drag Helpers to the top, then Foremen below Site crew"
			p.drag(vp.mobile, "Drag to move Helpers", "Foremen")
			p.see("Helpers moved to place 1.")
			p.expectOrder(roles, roleName, "Helpers|Foremen|Site crew|@everyone", "Helpers first after the drag")
			p.drag(vp.mobile, "Drag to move Foremen", "Site crew")
			p.see("Foremen moved to place 3.")
			p.expectOrder(roles, roleName, "Helpers|Site crew|Foremen|@everyone", "Foremen third after the drag")
			p.noHorizontalScroll()
			p.axe("the roles with their grips")
			p.run(chromedp.Reload())
			p.expectOrder(roles, roleName, "Helpers|Site crew|Foremen|@everyone", "the order the API gives after a reload")

			p.step = "roles: a member who may manage roles below their own"
			p.run(chromedp.Evaluate[chromedp.Void](`[...document.querySelectorAll('ul[aria-label="Roles"] li')].find(l => l.innerText.includes('Site crew')).querySelector('button[aria-expanded]').setAttribute('data-open', '1')`),
				chromedp.Click(chromedp.CSS(`[data-open="1"]`)))
			p.see("Permissions of Site crew in the organisation")
			p.click("Manage roles: allow")
			p.see("Site crew: Manage roles is now allow.")
			p.orgNav("Invites")
			p.click("Create invite")
			p.see("Invite created.")
			link := pollValue(p, `document.querySelector('ul[aria-label="Invites"] input.link-box')?.value ?? ''`, "the invite link")
			g := newPage(t, bctx, base, vp.width, vp.height, vp.mobile)
			g.run(chromedp.Navigate(link))
			g.register("Gil", "gil-"+vp.name+"@example.com", "Gil password")
			g.click("Join " + orgName)
			g.seeIn("h1", orgName)
			p.orgNav("Members")
			p.choose("Give Gil a role", "Site crew")
			p.see("Gil has the role Site crew.")

			g.step = "roles: the server refuses a drag above the member's own role; the order comes back"
			g.run(chromedp.Reload())
			g.seeIn("h1", orgName)
			g.orgNav("Roles")
			g.expectOrder(roles, roleName, "Helpers|Site crew|Foremen|@everyone", "the roles as the member sees them")
			g.drag(vp.mobile, "Drag to move Foremen", "Helpers")
			g.see("You cannot change a role ranked at or above your own highest role.")
			g.expectOrder(roles, roleName, "Helpers|Site crew|Foremen|@everyone", "the order put back after the refusal")
			g.checkCSP()

			p.step = "toolbox: sections and topics"
			p.orgNav("Toolbox talks")
			p.fill("Title", "Ladder safety")
			p.click("Create toolbox talk")
			p.seeIn("h1", "Ladder safety")
			for _, s := range []string{"Before", "During", "After"} {
				p.fill("New section", s)
				p.click("Add section")
				p.see("Section " + s + " added.")
			}
			for _, topic := range []string{"Check the feet", "Three points of contact", "Carry tools in a belt"} {
				p.fill("New topic in During", topic)
				p.click("Add topic to During")
				p.seeIn(`ul[aria-label="Topics of During"]`, topic)
			}
			const sections, topics = `ol[aria-label="Sections"]`, `ul[aria-label="Topics of During"]`
			p.expectOrder(sections, "strong", "Before|During|After", "the sections in the order made")
			p.expectOrder(topics, ".grow", "Check the feet|Three points of contact|Carry tools in a belt", "the topics in the order made")

			p.step = "toolbox: drag After to the top, and a topic to the top of its section"
			p.drag(vp.mobile, "Drag to move After", "Before")
			p.see("After moved to place 1.")
			p.expectOrder(sections, "strong", "After|Before|During", "After first after the drag")
			p.drag(vp.mobile, "Drag to move topic Carry tools in a belt", "Check the feet")
			p.see("Topic Carry tools in a belt moved to place 1.")
			p.expectOrder(topics, ".grow", "Carry tools in a belt|Check the feet|Three points of contact", "the topic first after the drag")
			p.drag(vp.mobile, "Drag to move topic Check the feet", "Three points of contact")
			p.see("Topic Check the feet moved to place 3.")
			p.expectOrder(topics, ".grow", "Carry tools in a belt|Three points of contact|Check the feet", "the topic last after the drag")
			p.noHorizontalScroll()
			p.axe("the toolbox builder with its grips")
			p.run(chromedp.Reload())
			p.expectOrder(sections, "strong", "After|Before|During", "the sections the API gives after a reload")
			p.expectOrder(topics, ".grow", "Carry tools in a belt|Three points of contact|Check the feet", "the topics the API gives after a reload")
			talk := p.location()

			p.step = "toolbox: archived in another tab meanwhile, the drag is refused and the order comes back"
			o := newPage(t, bctx, base, vp.width, vp.height, vp.mobile)
			o.openSignedIn(strings.TrimPrefix(talk, base), email, password)
			o.seeIn("h1", "Ladder safety")
			o.click("Archive")
			o.see("Archived.")
			p.drag(vp.mobile, "Drag to move During", "After")
			p.see("The toolbox is archived.")
			p.expectOrder(sections, "strong", "After|Before|During", "the order put back after the refusal")

			p.step = "induction: three questions"
			p.click("← Toolbox talks")
			p.orgNav("Inductions")
			p.fill("Induction name", "Gate induction")
			p.click("Create induction")
			p.seeIn("h1", "Gate induction")
			for i, q := range []string{"Will you wear boots?", "Which gate do you use?", "Your emergency contact"} {
				p.click("Add question")
				p.fill(fmt.Sprintf("Question %d", i+1), q)
			}
			p.click("Save induction")
			p.see("Saved as a new revision.")
			questions := `[...document.querySelectorAll('ol[aria-label="Questions"] > li input[id$="-text"]')].map(i => i.value).join('|')`
			p.waitFor(questions+` === 'Will you wear boots?|Which gate do you use?|Your emergency contact'`, "the questions in the order made")

			p.step = "induction: drag the last question to the top, save"
			p.drag(vp.mobile, "Drag to move question 3", "Question 1")
			p.see("Question 3 moved to place 1. Save the induction to keep the order.")
			p.waitFor(questions+` === 'Your emergency contact|Will you wear boots?|Which gate do you use?'`, "the last question first after the drag")
			p.noHorizontalScroll()
			p.axe("the induction builder with its grips")
			p.click("Save induction")
			p.see("Saved as a new revision.")
			p.run(chromedp.Reload())
			p.seeIn("h1", "Gate induction")
			p.waitFor(questions+` === 'Your emergency contact|Will you wear boots?|Which gate do you use?'`, "the order the API gives after a reload")
			p.checkCSP()
			o.checkCSP()
		})
	}
}
