package web_test

// Browser tests of the fleets and assets screens (issue 17): the catalogue a
// register needs, the register with its filters and paging, creating an
// asset, import with a dry-run preview, export, and an asset's log with an
// attachment, clicked through against the real server.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/chromedp"
)

// allowDownloads makes the page's browser context save downloads into a new
// temp dir, which it returns.
func (p *page) allowDownloads() string {
	p.t.Helper()
	dir := p.t.TempDir()
	p.run(chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		c := chromedp.FromContext(ctx)
		_, err := cdp.Call(ctx, c.Browser, cdpbrowser.SetDownloadBehavior, cdpbrowser.SetDownloadBehaviorParams{
			Behavior: cdpbrowser.SetDownloadBehaviorBehaviorAllow, BrowserContextID: c.BrowserContextID, DownloadPath: dir})
		return err
	}))
	return dir
}

// downloaded waits (deadline 45 s) for a finished download named name in dir
// and returns its content.
func (p *page) downloaded(dir, name string) []byte {
	p.t.Helper()
	deadline := time.Now().Add(45 * time.Second)
	for {
		if b, err := os.ReadFile(filepath.Join(dir, name)); err == nil && len(b) > 0 {
			return b
		}
		if time.Now().After(deadline) {
			entries, _ := os.ReadDir(dir)
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			p.fail("no download %s in %s (found %v)", name, dir, names)
		}
		time.Sleep(50 * time.Millisecond) // the poll interval
	}
}

// assetRows is the text of the register's rows.
func (p *page) assetRows() string {
	return eval[string](p, `document.querySelector('ul[aria-label="Assets"]')?.innerText ?? ''`)
}

// registerShows waits until the register counts total assets and lists
// every one of want.
func (p *page) registerShows(total int, want ...string) {
	p.t.Helper()
	word := "assets"
	if total == 1 {
		word = "asset"
	}
	cond := fmt.Sprintf(`(() => { const s = [...document.querySelectorAll('p[role=status]')].some(e => e.innerText.trim() === %s);
		const l = document.querySelector('ul[aria-label="Assets"]'); return s && l && %s.every(w => l.innerText.includes(w)) })()`,
		js(fmt.Sprintf("%d %s", total, word)), jsList(want))
	p.waitFor(cond, fmt.Sprintf("%d %s listing %v", total, word, want))
}

func jsList(s []string) string {
	q := make([]string, len(s))
	for i, x := range s {
		q[i] = js(x)
	}
	return "[" + strings.Join(q, ",") + "]"
}

func TestBrowserFleetsAndAssets(t *testing.T) {
	bctx := browser(t)
	base := appServer(t)
	for _, vp := range viewports {
		t.Run(vp.name, func(t *testing.T) {
			p := orgWithOwner(t, bctx, base, "Fiona", "Plant hire "+vp.name, vp.width, vp.height, vp.mobile)
			downloads := p.allowDownloads()

			p.step = "locations"
			p.orgNav("Locations")
			for _, l := range []string{"Yard", "Depot"} {
				p.fill("Location name", l)
				p.fill("Location code", strings.ToUpper(l[:2]))
				p.fill("Time zone", "Europe/London")
				p.click("Create location")
				p.see("Location " + l + " created.")
			}

			p.step = "fleets, asset types and statuses"
			p.orgNav("Fleets")
			p.see("No fleets yet.")
			p.fill("Fleet name", "x")
			p.click("Create fleet")
			if got := p.fieldError("Fleet name"); got == "" {
				p.fail("no error for a one-letter fleet name")
			}
			for _, f := range []string{"Plant", "Vans"} {
				p.fill("Fleet name", f)
				p.click("Create fleet")
				p.see("Fleet " + f + " created.")
			}
			p.seeIn(`ul[aria-label="Fleets"]`, "Vans")
			for _, ty := range [][2]string{{"Pump", "Plant"}, {"Van", "Vans"}} {
				p.fill("Asset type name", ty[0])
				p.choose("Fleet of the type", ty[1])
				p.click("Create asset type")
				p.see("Asset type " + ty[0] + " created.")
			}
			p.seeIn(`ul[aria-label="Asset types"]`, "single asset")
			for _, s := range []string{"In service", "Repair"} {
				p.fill("Status name", s)
				p.click("Create status")
				p.see("Status " + s + " created.")
			}
			p.seeIn(`ul[aria-label="Asset statuses"]`, "Repair")
			p.noHorizontalScroll()
			p.axe("fleets")

			p.step = "create assets"
			p.orgNav("Asset register")
			p.see("0 assets")
			p.choose("Asset type", "Pump")
			p.fill("Asset name", "x")
			p.click("Create asset")
			if got := p.fieldError("Asset name"); got == "" {
				p.fail("no error for a one-letter asset name")
			}
			p.fill("Asset name", "Big pump")
			p.choose("Asset status", "In service")
			p.choose("Asset location", "Yard")
			p.click("Create asset")
			p.see("Big pump created.")
			p.choose("Asset type", "Van")
			p.fill("Asset name", "Blue van")
			p.choose("Asset status", "Repair")
			p.choose("Asset location", "Depot")
			p.click("Create asset")
			p.see("Blue van created.")
			p.registerShows(2, "Big pump", "Blue van")

			p.step = "import: a preview with a bad row changes nothing"
			p.run(chromedp.SetUploadFiles(chromedp.CSS("#as-import-file"), []string{writeFile(t, "bad.csv",
				"name,type,status,fleet,location\nPump 01,Pump,In service,Plant,Yard\nRocket 1,Rocket,In service,Plant,Yard\n")}))
			p.click("Preview import")
			p.see("Preview: 1 to create, 0 to update, 1 invalid. Nothing was changed.")
			p.seeIn("table", "type: names no asset type")
			if eval[bool](p, `[...document.querySelectorAll('button')].find(b => b.innerText.trim() === 'Import').disabled !== true`) {
				p.fail("Import is offered after a preview with an invalid row")
			}

			p.step = "import: preview, then import 20 pumps"
			var csv strings.Builder
			csv.WriteString("name,type,status,fleet,location\n")
			for i := 1; i <= 20; i++ {
				fmt.Fprintf(&csv, "Pump %02d,Pump,In service,Plant,Yard\n", i)
			}
			p.run(chromedp.SetUploadFiles(chromedp.CSS("#as-import-file"), []string{writeFile(t, "pumps.csv", csv.String())}))
			p.click("Preview import")
			p.see("Preview: 20 to create, 0 to update, 0 invalid. Nothing was changed.")
			p.seeIn("table", "create")
			p.registerShows(2, "Big pump", "Blue van")
			p.click("Import")
			p.see("Imported: 20 created, 0 updated.")
			p.axe("the asset register")

			p.step = "paging"
			p.registerShows(22)
			p.see("1–20 of 22")
			p.click("Next")
			p.see("21–22 of 22")
			// The pager's text changes at once; the page's rows when the answer
			// comes. Clicking before then could miss Previous as the list shrinks.
			p.waitFor(`document.querySelectorAll('ul[aria-label="Assets"] li').length === 2`, "the second page's two assets")
			p.click("Previous")
			p.see("1–20 of 22")
			p.waitFor(`document.querySelectorAll('ul[aria-label="Assets"] li').length === 20`, "the first page's twenty assets")

			p.step = "filters"
			p.choose("Type", "Van")
			p.registerShows(1, "Blue van")
			p.choose("Type", "Any type")
			p.choose("Fleet", "Vans")
			p.registerShows(1, "Blue van")
			p.choose("Fleet", "Plant")
			p.registerShows(21, "Pump 01")
			p.choose("Fleet", "Any fleet")
			p.choose("Status", "Repair")
			p.registerShows(1, "Blue van")
			p.choose("Status", "Any status")
			p.choose("Location", "Depot")
			p.registerShows(1, "Blue van")
			p.choose("Location", "Yard")
			p.registerShows(21, "Big pump")
			p.choose("Location", "Anywhere")
			p.fill("Name starts with", "pump 1")
			p.registerShows(10, "Pump 10", "Pump 19")
			if rows := p.assetRows(); strings.Contains(rows, "Pump 09") || strings.Contains(rows, "Big pump") {
				p.fail("the name filter lets through %q", rows)
			}
			p.fill("Name starts with", "big")
			p.registerShows(1, "Big pump")
			p.noHorizontalScroll()

			p.step = "export"
			p.click("Export CSV")
			p.see("The CSV file is downloading.")
			entries := func() string {
				es, _ := os.ReadDir(downloads)
				for _, e := range es {
					if strings.HasSuffix(e.Name(), ".csv") {
						return e.Name()
					}
				}
				return ""
			}
			name := ""
			deadline := time.Now().Add(45 * time.Second)
			for name = entries(); name == ""; name = entries() {
				if time.Now().After(deadline) {
					p.fail("no CSV downloaded")
				}
				time.Sleep(50 * time.Millisecond) // the poll interval
			}
			if got := string(p.downloaded(downloads, name)); !strings.Contains(got, "Big pump") || !strings.Contains(got, "Blue van") || !strings.Contains(got, "Pump 20") {
				p.fail("the exported CSV lacks assets: %q", got)
			}

			p.step = "a fleet's assets"
			p.orgNav("Fleets")
			p.click("Assets of Vans")
			p.registerShows(1, "Blue van")

			p.step = "an asset's log with an attachment"
			p.click("Blue van")
			p.seeIn("h1", "Blue van")
			p.see("Repair")
			p.see("No log entries yet.")
			p.click("Add log entry")
			if got := p.fieldError("Log entry"); got == "" {
				p.fail("no error for an empty log entry")
			}
			p.fill("Log entry", "Replaced the clutch.")
			p.run(chromedp.SetUploadFiles(chromedp.CSS("#log-file"), []string{writeFile(t, "clutch-receipt.txt", "clutch receipt 42")}))
			p.click("Add log entry")
			p.see("Log entry added with its attachment.")
			p.seeIn(`ul[aria-label="Log entries"]`, "Replaced the clutch.")
			p.fill("Log entry", "Road test passed.")
			p.click("Add log entry")
			p.see("Log entry added.")
			p.seeIn(`ul[aria-label="Log entries"]`, "Road test passed.")
			p.click("Download clutch-receipt.txt")
			p.see("clutch-receipt.txt is downloading.")
			if got := string(p.downloaded(downloads, "clutch-receipt.txt")); got != "clutch receipt 42" {
				p.fail("the downloaded attachment is %q", got)
			}
			p.noHorizontalScroll()
			p.axe("an asset")
			p.shot("asset-" + vp.name)
			p.checkCSP()
		})
	}
}
