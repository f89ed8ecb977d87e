package web_test

// Browser test of the Sync screen (issue 31), at 375 px and on a desktop,
// with a hub (head office) and a site laptop as two servers: the owner
// makes a pairing code on the hub's screen (shown with the command to type
// on the laptop), the laptop is cloned with it, both offices give one
// project code while apart, Sync now on the laptop shows its progress (the
// hub's answer is held back while the page is checked) and its result, the
// conflict the hub found is settled in the laptop's page and reaches head
// office, the hub lists the laptop with its last exchange, the owner undoes
// an access decision in the page (a person banned at one office while
// another let them in is a member again), and the laptop's
// banner appears once its last exchange is over a day old.

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"workspace/db"
	"workspace/server"
)

func TestBrowserSyncScreen(t *testing.T) {
	bctx := browser(t)
	for _, vp := range viewports {
		t.Run(vp.name, func(t *testing.T) {
			hold := &requestHold{}
			hubBase, hubStore := startAppServer(t, nil, hold.wrap)
			orgName := "Sync " + vp.name
			p := orgWithOwner(t, bctx, hubBase, "Hana", orgName, vp.width, vp.height, vp.mobile)
			email, password := "hana-sync-"+vp.name+"@example.com", "Hana password"
			orgID := strings.Split(strings.TrimPrefix(p.location(), p.base+"/app/orgs/"), "/")[0]
			acme := "/organisations/" + orgID

			p.step = "head office's Sync screen: no laptop yet, a pairing code for two organisations"
			p.orgNav("Sync")
			p.see("No laptop is paired yet.")
			hub := awLogin(t, hubBase, email, password)
			yard := "Yard " + vp.name
			hub.must(201, "POST", "/organisations", map[string]any{"name": yard})
			p.open("/app/orgs/" + orgID + "/sync")
			p.click(yard)
			p.click("Make a pairing code")
			p.see("The pairing code for " + orgName + ", " + yard)
			p.seeIn(".clone-command", "workspace sync clone --from "+hubBase+" --code ")
			code := eval[string](p, `document.querySelector('.pairing-code').innerText.trim()`)
			if !strings.Contains(eval[string](p, `document.querySelector('.clone-command').innerText`), code) {
				p.fail("the command line does not hold the code %q", code)
			}
			p.see("The code works until")
			p.noHorizontalScroll()
			p.axe("head office's Sync screen with a pairing code")
			p.shot("sync-hub-code-" + vp.name)

			p.step = "the laptop is cloned with the code and served"
			path := filepath.Join(t.TempDir(), "site.db")
			ctx, cancel := context.WithCancel(context.Background())
			t.Cleanup(cancel)
			if _, _, err := server.SyncClone(ctx, hubBase, code, "Site office", path, io.Discard); err != nil {
				t.Fatal(err)
			}
			laptopBase, laptop := serveFile(t, ctx, path, nil, nil)
			var orgs int
			if err := laptop.Reader.QueryRow(`SELECT count(*) FROM organisations`).Scan(&orgs); err != nil || orgs != 2 {
				t.Fatalf("the laptop holds %d organisations, want the two the code named: %v", orgs, err)
			}

			p.step = "both offices give the code B7 to a project while apart"
			awLogin(t, hubBase, email, password).must(201, "POST", acme+"/projects", map[string]any{"name": "Depot", "code": "B7"})
			awLogin(t, laptopBase, email, password).must(201, "POST", acme+"/projects", map[string]any{"name": "Site hut", "code": "B7"})

			l := newPage(t, bctx, laptopBase, vp.width, vp.height, vp.mobile)
			l.openSignedIn("/app/orgs/"+orgID+"/sync", email, password)
			l.step = "the laptop's Sync screen before the exchange"
			l.see("This laptop and head office")
			l.waitFor(`!document.body.innerText.includes("0 changes made here") && document.body.innerText.includes("changes made here")`, "changes waiting to go")

			l.step = "Sync now: the progress while head office's answer is held"
			held := hold.hold(func(r *http.Request) bool { return r.URL.Path == "/sync/exchange" })
			l.click("Sync now")
			waitClosed(t, held.arrived, "the laptop's exchange at head office")
			l.see("Sending and receiving:")
			l.waitFor(`document.querySelector('.sync-progress progress') !== null`, "the progress bar")
			l.seeIn("button:disabled", "Syncing…")
			l.noHorizontalScroll()
			l.axe("the laptop's Sync screen while it syncs")
			l.shot("sync-laptop-progress-" + vp.name)
			close(held.release)
			waitClosed(t, held.answered, "head office's answer")
			l.see("The exchange finished:")
			l.see("sent to head office")

			l.step = "the conflict head office found, settled in the page"
			l.see("Two offices gave the code B7 to two projects while apart.")
			l.see("Open the project renamed")
			l.axe("the laptop's Sync screen with a conflict")
			l.shot("sync-laptop-conflict-" + vp.name)
			if vp.mobile {
				l.click("Keep B7-2")
				l.see("Settled: the project keeps the code B7-2.")
			} else {
				l.fill("Or give it the code", "B8")
				l.click("Change the code")
				l.see("Settled: the project now has the code B8.")
				var n int
				if err := laptop.Reader.QueryRow(`SELECT count(*) FROM projects WHERE code = 'B8' AND name = 'Site hut'`).Scan(&n); err != nil || n != 1 {
					l.fail("the renamed project: %d %v", n, err)
				}
			}
			l.see("Nothing to settle")
			l.see("Settled (1)")

			l.step = "a second exchange takes the settlement to head office"
			l.click("Sync now")
			l.see("The exchange finished:")
			st, out := hub.call("GET", acme+"/sync-conflicts", nil)
			conflicts, _ := out.([]any)
			if st != 200 || len(conflicts) != 1 || conflicts[0].(map[string]any)["settled_at"] == nil {
				t.Fatalf("head office's conflicts: %v", conflicts)
			}

			p.step = "a site's document edits left as a merge request (made as an exchange would)"
			doc := hub.id("POST", "/documents", map[string]any{"organisation_id": orgID, "title": "Method statement"})
			hub.must(201, "POST", "/documents/"+doc+"/branches", map[string]any{"name": "site-7-main"})
			hub.must(201, "POST", "/documents/"+doc+"/merge-requests", map[string]any{"from_branch": "site-7-main", "to_branch": "main", "title": "Site office's edits"})
			// A person cannot name a branch site/...: only an exchange does.
			if _, err := hubStore.Writer.Exec(`UPDATE document_branches SET name = 'site/7/main' WHERE name = 'site-7-main'`); err != nil {
				t.Fatal(err)
			}

			p.step = "head office lists the laptop with its last exchange, and the site's document edits"
			p.open("/app/orgs/" + orgID + "/sync")
			p.see("Site office")
			p.see("received from it")
			p.see("Nothing to settle")
			p.see("Site office's edits")
			p.axe("head office's Sync screen with a laptop")
			p.shot("sync-hub-laptops-" + vp.name)
			p.click("Revoke Site office")
			p.see("Site office can no longer exchange with head office.")
			p.seeIn(".tag.warn", "revoked")

			p.step = "an access decision (as an exchange records it): Rex banned at head office while the site let him in; the owner undoes it"
			rex := "rex-sync-" + vp.name + "@example.com"
			registerAPI(t, hubBase, "Rex", rex, "Rex password")
			var rexID int64
			if err := hubStore.Reader.QueryRow(`SELECT id FROM users WHERE email = ?`, rex).Scan(&rexID); err != nil {
				t.Fatal(err)
			}
			if _, err := hubStore.Writer.Exec(`INSERT INTO organisation_bans (organisation_id, user_id, banned_at, banned_by) SELECT ?, ?, ?, owned_by FROM organisations WHERE id = ?`,
				orgID, rexID, db.FormatTime(time.Now()), orgID); err != nil {
				t.Fatal(err)
			}
			if _, err := hubStore.Writer.Exec(`INSERT INTO sync_conflicts (id, organisation_id, kind, tbl, col, row_id, other_id, value, renamed_to, created_at, undo)
				VALUES (?, ?, 'access', 'organisation_members', 'ban_over_membership', ?, 0, '', '', ?, '{"unban":true,"member":true}')`,
				hubStore.IDs.Next(), orgID, rexID, db.FormatTime(time.Now())); err != nil {
				t.Fatal(err)
			}
			p.open("/app/orgs/" + orgID + "/sync")
			p.see("Rex Tester was banned at one office while another let them in. The ban was kept: they are not a member.")
			p.noHorizontalScroll()
			p.axe("head office's Sync screen with an access decision")
			p.shot("sync-hub-access-" + vp.name)
			p.click("Undo: lift the ban and let Rex Tester in")
			p.see("Undone: the access is given back as the other office made it.")
			p.see("Nothing to settle")
			var member, banned int
			if err := hubStore.Reader.QueryRow(`SELECT (SELECT count(*) FROM organisation_members WHERE organisation_id = ?1 AND user_id = ?2),
				(SELECT count(*) FROM organisation_bans WHERE organisation_id = ?1 AND user_id = ?2)`, orgID, rexID).Scan(&member, &banned); err != nil || member != 1 || banned != 0 {
				t.Fatalf("after the undo Rex is a member %d times and banned %d times: %v", member, banned, err)
			}

			p.step = "a sub-location's code given twice (as an exchange records it), given a new code in the page"
			yardLoc := hub.id("POST", acme+"/locations", map[string]any{"name": "Yard", "code": "YD"})
			bay := hub.id("POST", "/locations/"+yardLoc+"/sub-locations", map[string]any{"name": "Bay", "code": "BAY-2"})
			other := hub.id("POST", "/locations/"+yardLoc+"/sub-locations", map[string]any{"name": "Bay one", "code": "BAY"})
			if _, err := hubStore.Writer.Exec(`INSERT INTO sync_conflicts (id, organisation_id, kind, tbl, col, row_id, other_id, value, renamed_to, created_at)
				VALUES (?, ?, 'unique', 'sub_locations', 'code', ?, ?, 'BAY', 'BAY-2', ?)`, hubStore.IDs.Next(), orgID, bay, other, db.FormatTime(time.Now())); err != nil {
				t.Fatal(err)
			}
			p.open("/app/orgs/" + orgID + "/sync")
			p.see("Two offices gave the code BAY to two sub-locations while apart.")
			p.fill("Or give it the code", "BAY-N")
			p.click("Change the code")
			p.see("Settled: the sub-location now has the code BAY-N.")
			if st, got := hub.call("GET", "/locations/"+yardLoc+"/sub-locations", nil); st != 200 || !strings.Contains(fmt.Sprint(got), "code:BAY-N") {
				t.Fatalf("the renamed sub-location: %d %v", st, got)
			}

			p.step = "a hub of many laptops: paged, by name, the revoked one last"
			// Free node numbers (1-1023, as the hub gives them): the hub
			// gave the laptop a random one, which may be any of them.
			var free []int64
			for n := int64(1023); len(free) < 21; n-- {
				var taken int
				if err := hubStore.Writer.QueryRow(`SELECT count(*) FROM sync_nodes WHERE node = ?`, n).Scan(&taken); err != nil {
					t.Fatal(err)
				}
				if taken == 0 && n != hubStore.NodeID() {
					free = append(free, n)
				}
			}
			for i := 1; i <= 21; i++ {
				node := free[i-1]
				if _, err := hubStore.Writer.Exec(`INSERT INTO sync_nodes (node, public_key, name, paired_by, paired_at) VALUES (?, x'00', ?, 1, ?)`,
					node, fmt.Sprintf("Laptop %02d", i), db.FormatTime(time.Now())); err != nil {
					t.Fatal(err)
				}
				if _, err := hubStore.Writer.Exec(`INSERT INTO sync_node_orgs (organisation_id, node) VALUES (?, ?)`, orgID, node); err != nil {
					t.Fatal(err)
				}
			}
			p.open("/app/orgs/" + orgID + "/sync")
			p.see("Laptop 01")
			p.seeIn("nav.pager", "1–20 of 22")
			p.click("Next")
			p.seeIn("nav.pager", "21–22 of 22")
			p.see("Laptop 21")
			p.see("Site office")
			p.noHorizontalScroll()
			p.axe("head office's Sync screen, page two of its laptops")

			l.step = "the revoked laptop's Sync now: refused, in words"
			l.click("Sync now")
			l.see("no longer accepts this laptop")
			l.axe("the laptop's Sync screen refused")
			p.click("Open the merge request of Method statement")
			p.waitFor(`location.pathname === '/app/documents/`+doc+`'`, "the document")
			p.seeIn("h1", "Method statement")
			p.see("Site office's edits") // in its open merge requests

			l.step = "a laptop a day without an exchange: the banner"
			if _, err := laptop.Writer.Exec(`UPDATE sync_hub SET last_exchange_at = ?`, db.FormatTime(time.Now().Add(-26*time.Hour))); err != nil {
				t.Fatal(err)
			}
			l.open("/app/orgs/" + orgID + "/projects")
			l.see("This laptop has not exchanged with head office since")
			l.noHorizontalScroll()
			l.axe("the laptop's banner")
			l.shot("sync-laptop-banner-" + vp.name)
			l.click("Open Sync")
			l.waitFor(`location.pathname.endsWith('/sync')`, "the Sync screen from the banner")
			l.see("Sync now")
			l.checkCSP()
			p.checkCSP()
		})
	}
}
