package web_test

// Browser test of the organisation's audit log screen, at 375 px and on a
// desktop: the owner and a member make changes, the owner reads them on the
// screen (who, what, which fields), narrows the list by actor and by action
// and by time (checked against what the API answers for the same
// filters), and
// downloads the JSON Lines export of the filtered trail; targets are shown
// by kind and name (or id), and a target clicked narrows the list to the
// entries about it until its chip is removed; a plain member sees
// no link to the screen and is told why when opening its address.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// auditRows is the text of the audit table's rows, cells joined by " | ".
const auditRows = `[...document.querySelectorAll('table.audit tbody tr')].map(r => [...r.cells].map(c => c.innerText.trim()).join(' | '))`

func TestBrowserAuditLog(t *testing.T) {
	bctx := browser(t)
	base := appServer(t)
	for _, vp := range viewports {
		t.Run(vp.name, func(t *testing.T) {
			orgName := "Audit " + vp.name
			p := orgWithOwner(t, bctx, base, "Ada", orgName, vp.width, vp.height, vp.mobile)
			owner := awLogin(t, base, "ada-audit-"+vp.name+"@example.com", "Ada password")
			adaID := owner.must(200, "GET", "/users/@me", nil)["id"].(string)
			orgID := strings.Split(strings.TrimPrefix(p.location(), p.base+"/app/orgs/"), "/")[0]
			downloads := p.allowDownloads()

			p.step = "a member joins and may create projects; both make changes"
			m := joinMember(t, bctx, base, p, orgID, orgName, "Mo", "mo-audit-"+vp.name+"@example.com", "Mo password", vp.width, vp.height, vp.mobile)
			mo := awLogin(t, base, "mo-audit-"+vp.name+"@example.com", "Mo password")
			moID := mo.must(200, "GET", "/users/@me", nil)["id"].(string)
			renamed := orgName + " Ltd"
			owner.must(200, "PATCH", "/organisations/"+orgID, map[string]any{"name": renamed})
			owner.id("POST", "/organisations/"+orgID+"/projects", map[string]any{"name": "Depot"})
			owner.must(200, "PUT", "/organisations/"+orgID+"/permissions/"+moID, map[string]any{"permissions": map[string]string{"CREATE_PROJECTS": "allow"}})
			shed := mo.id("POST", "/organisations/"+orgID+"/projects", map[string]any{"name": "Shed"})
			owner.must(200, "PATCH", "/projects/"+shed, map[string]any{"description": "Tools"})
			owner.must(200, "PATCH", "/projects/"+shed, map[string]any{"description": "Tools and bikes"})
			// An import and a status change: entries whose sentences say how
			// many and what to (the server notes them in the entry's details).
			genset := owner.id("POST", "/organisations/"+orgID+"/asset-types", map[string]any{"name": "Generator", "ephemerality": 0})
			imp, _ := http.NewRequest("POST", base+"/organisations/"+orgID+"/assets/import", strings.NewReader("name,type\nGenset 1,Generator\nGenset 2,Generator\n"))
			imp.Header.Set("Authorization", "Bearer "+owner.token)
			imp.Header.Set("Content-Type", "text/csv")
			if r, err := http.DefaultClient.Do(imp); err != nil || r.StatusCode != 200 {
				t.Fatalf("import: %v %v", r, err)
			} else {
				r.Body.Close()
			}
			generator := owner.id("POST", "/organisations/"+orgID+"/assets", map[string]any{"type_id": genset, "name": "20kVA generator"})
			repair := owner.id("POST", "/organisations/"+orgID+"/asset-statuses", map[string]any{"name": "In repair"})
			owner.must(200, "PATCH", "/api/assets/"+generator, map[string]any{"status_id": repair})

			// count is how many entries the API has for a filter.
			count := func(filter url.Values) int {
				filter.Set("$top", "1000")
				st, out := owner.call("GET", "/organisations/"+orgID+"/audit-log?"+filter.Encode(), nil)
				if st != 200 {
					p.fail("the audit log answered %d: %v", st, out)
				}
				return len(out.([]any))
			}
			// shows waits for the table to caption n entries and for every
			// row to pass the check in JavaScript (row is the row's text).
			shows := func(n int, check, what string) {
				p.t.Helper()
				caption := fmt.Sprintf("%d entries", n)
				if n == 1 {
					caption = "1 entry"
				}
				p.waitFor(`(() => { const c = document.querySelector('table.audit caption'); const rows = `+auditRows+`;
					return c && c.innerText.trim() === `+js(caption)+` && rows.length === `+fmt.Sprint(n)+` && rows.every(row => `+check+`) })()`,
					fmt.Sprintf("%s (%s)", what, caption))
			}

			p.step = "the owner opens the audit log from the organisation's navigation"
			p.open("/app/orgs/" + orgID)
			p.seeIn("h1", renamed)
			p.orgNav("Audit log")
			p.seeIn("h2", "Audit log")
			all := count(url.Values{})
			shows(all, `!row.includes('…')`, "every entry, its actor named")
			for _, want := range []string{
				"Ada | Ada changed the details of " + renamed + " (name) | organisation " + renamed + " | Raw entry",
				"Ada | Ada created a project | organisation " + renamed + " | Raw entry",
				"Ada | Ada changed permissions in " + renamed + " (permissions) | organisation " + renamed + "\nuser Mo | Raw entry",
				"Mo | Mo created a project | organisation " + renamed + " | Raw entry",
				"Ada | Ada changed the project Shed (description) | project Shed | Raw entry",
				"Ada | Ada imported 2 assets | organisation " + renamed + " | Raw entry",
				"Ada | Ada changed the status of the asset 20kVA generator to In repair | asset 20kVA generator | Raw entry",
			} {
				// the objects' names arrive after the list: wait for them
				p.waitFor(auditRows+`.join('\n').includes(`+js(want)+`)`, "the entry "+want)
			}
			p.noHorizontalScroll()
			p.axe("the audit log")
			p.shot("audit-log-" + vp.name)

			p.step = "filtered by actor, only Mo's join and project are left; then only Ada's entries"
			p.choose("Actor", "Mo")
			mos := count(url.Values{"actor": {moID}})
			shows(mos, `row.split(' | ')[1] === 'Mo'`, "Mo's entries")
			p.seeIn("table.audit", "Mo created a project")
			p.seeIn("table.audit", "Mo joined with an invite")
			p.choose("Actor", "Ada")
			adas := count(url.Values{"actor": {adaID}})
			if adas >= all {
				p.fail("Ada's entries (%d) are not fewer than all (%d)", adas, all)
			}
			shows(adas, `row.split(' | ')[1] === 'Ada'`, "Ada's entries")

			p.step = "and by action: Ada's changes (PATCH) only"
			p.fill("Action", "PATCH")
			patches := count(url.Values{"actor": {adaID}, "action": {"PATCH"}})
			if patches == 0 || patches >= adas {
				p.fail("Ada's PATCH entries: %d of %d", patches, adas)
			}
			shows(patches, `row.split(' | ')[1] === 'Ada' && row.split(' | ')[2].startsWith('Ada ')`, "Ada's PATCH entries")
			p.see("Ada changed the details of " + renamed)
			p.step = "the raw entry is one click away"
			p.run(chromedp.Click(chromedp.CSS(`details.raw-entry summary`), chromedp.NodeVisible))
			p.seeIn("details.raw-entry[open]", "PATCH /")
			p.noHorizontalScroll()
			p.checkCSP()

			p.step = "the JSONL export answers the filtered trail, oldest first"
			p.click("Download JSONL")
			p.see("The JSONL file is downloading.")
			lines := strings.Split(strings.TrimSpace(string(p.downloaded(downloads, "audit-log.jsonl"))), "\n")
			if len(lines) != patches {
				p.fail("the export has %d lines, want %d: %q", len(lines), patches, lines)
			}
			prev := 0
			for _, l := range lines {
				var e struct {
					Seq     int    `json:"seq"`
					ActorID string `json:"actor_id"`
					Action  string `json:"action"`
				}
				if err := json.Unmarshal([]byte(l), &e); err != nil {
					p.fail("export line %q: %v", l, err)
				}
				if e.ActorID != adaID || !strings.HasPrefix(e.Action, "PATCH ") || e.Seq <= prev {
					p.fail("export line %q is not Ada's PATCH in order after %d", l, prev)
				}
				prev = e.Seq
			}

			p.step = "and by time: nothing from 2099 on, everything from 2000 on"
			p.setValue("From", "2099-01-01T00:00")
			p.seeIn("table.audit caption", "0 entries")
			p.seeIn("table.audit", "No entries match.")
			p.setValue("From", "2000-01-01T00:00")
			shows(patches, `row.split(' | ')[2].startsWith('Ada ')`, "Ada's PATCH entries again")

			p.step = "by target: a project clicked in a row leaves only the entries about it, until its chip is removed"
			p.fill("Action", "")
			p.choose("Actor", "Anyone")
			everything := count(url.Values{"from": {"2000-01-01T00:00:00Z"}})
			shows(everything, `true`, "every entry again")
			abouts := count(url.Values{"target": {shed}})
			if abouts != 2 || abouts >= everything {
				p.fail("the API has %d entries about the project (of %d)", abouts, everything)
			}
			p.click("Only entries about project Shed")
			shows(abouts, `row.split(' | ')[2].startsWith('Ada changed the project Shed') && row.includes('project Shed')`, "the entries about the project")
			p.seeIn(".audit-chips", "project Shed")
			p.shot("audit-log-target-" + vp.name)
			p.noHorizontalScroll()
			p.axe("the audit log filtered by a target")
			p.click("Remove the target filter project Shed")
			shows(everything, `true`, "every entry once the chip is removed")
			if eval[bool](p, `!!document.querySelector('.audit-chips')`) {
				p.fail("the target chip stayed after its removal")
			}

			p.step = "by what happened and by area, as the API answers for those actions"
			since := "2000-01-01T00:00:00Z"
			p.choose("What happened", "Created or added")
			created := count(url.Values{"from": {since}, "action": {sentencePatterns(t, "created", "")}})
			if created == 0 || created >= everything {
				p.fail("created entries: %d of %d", created, everything)
			}
			shows(created, `!/ (changed|deleted|removed) /.test(row.split(' | ')[2])`, "the entries of things created")
			p.choose("Area", "Work")
			shows(count(url.Values{"from": {since}, "action": {sentencePatterns(t, "created", "Work")}}), `row.includes('created a project')`, "the projects created")
			p.choose("What happened", "Anything")
			shows(count(url.Values{"from": {since}, "action": {sentencePatterns(t, "", "Work")}}), `true`, "everything in Work")
			p.noHorizontalScroll()
			p.axe("the audit log filtered by what happened and area")
			p.choose("Area", "Every area")
			shows(everything, `true`, "every entry again, unfiltered")

			m.step = "a plain member sees no link and is refused at the address"
			m.open("/app/orgs/" + orgID)
			m.seeIn("h1", renamed)
			m.seeIn("#org-nav", "Members")
			if eval[bool](m, `[...document.querySelectorAll('#org-nav a')].some(a => a.innerText.trim() === 'Audit log')`) {
				m.fail("a member without MANAGE_ORGANISATION sees the audit log link")
			}
			m.open("/app/orgs/" + orgID + "/audit")
			m.see("Only people who may manage " + renamed + " can read its audit log.")
			if eval[bool](m, `!!document.querySelector('table.audit') || document.body.innerText.includes('Download JSONL')`) {
				m.fail("the member is shown the trail or offered the export")
			}
			m.noHorizontalScroll()
			m.axe("the audit log refused")
			m.checkCSP()
			for _, path := range []string{"/audit-log", "/audit-log/export"} {
				if st, _ := mo.call("GET", "/organisations/"+orgID+path, nil); st != 403 && st != 404 {
					m.fail("the API let the member read %s: %d", path, st)
				}
			}
		})
	}
}

// sentencePatterns are the route patterns src/lib/auditsentences.ts says are
// of the kind happened and in the area ("" for any), joined as the API's
// action filter takes them.
func sentencePatterns(t *testing.T, happened, area string) string {
	t.Helper()
	table, err := os.ReadFile("src/lib/auditsentences.ts")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range regexp.MustCompile(`(?m)^\s+"([A-Z]+ [^"]+)": \["([a-z]+)", "([A-Za-z]+)"`).FindAllStringSubmatch(string(table), -1) {
		if (happened == "" || m[2] == happened) && (area == "" || m[3] == area) {
			out = append(out, m[1])
		}
	}
	if len(out) == 0 {
		t.Fatalf("no pattern of %q in %q", happened, area)
	}
	return strings.Join(out, ",")
}
