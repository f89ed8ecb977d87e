package web_test

// Browser tests of fleet and project shares and fleet subscriptions (issue
// 17): a manager shares, a second person in a second browser context
// accepts or rejects on "Shared with me", sees the shared fleet's register or
// the shared project, and loses it when the manager revokes.

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"workspace/db"
)

// apiAs signs in with a password (the password grant) and returns a caller
// of the API as that person, for what the app does not offer (yet).
func apiAs(t *testing.T, base, email, password string) func(method, path string, body any, out any) {
	t.Helper()
	resp, err := http.PostForm(base+"/oauth/token", url.Values{"grant_type": {"password"}, "username": {email}, "password": {password}})
	if err != nil {
		t.Fatal(err)
	}
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	err = json.NewDecoder(resp.Body).Decode(&tok)
	resp.Body.Close()
	if err != nil || tok.AccessToken == "" {
		t.Fatalf("password grant for %s: %d %v", email, resp.StatusCode, err)
	}
	return func(method, path string, body any, out any) {
		t.Helper()
		var rd io.Reader
		if body != nil {
			b, err := json.Marshal(body)
			if err != nil {
				t.Fatal(err)
			}
			rd = bytes.NewReader(b)
		}
		req, _ := http.NewRequest(method, base+path, rd)
		req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		r, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Body.Close()
		if r.StatusCode >= 300 {
			b, _ := io.ReadAll(r.Body)
			t.Fatalf("%s %s: %d %s", method, path, r.StatusCode, b)
		}
		if out != nil {
			if err := json.NewDecoder(r.Body).Decode(out); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// confirmEmail confirms a person's sign-in address as they would with the
// mailed token: the app has no field for that token yet (its account page
// resends the link only), so the test sends it through the API itself.
func confirmEmail(t *testing.T, base string, store *db.Store, email, password string) {
	t.Helper()
	call := apiAs(t, base, email, password)
	var emails []struct {
		ID    string `json:"id"`
		Email string `json:"email"`
	}
	call("GET", "/users/@me/emails", nil, &emails)
	id := ""
	for _, e := range emails {
		if e.Email == email {
			id = e.ID
		}
	}
	if id == "" {
		t.Fatalf("%s is not among the account's addresses", email)
	}
	call("POST", "/users/@me/emails/"+id+"/verify", nil, nil)
	rows, err := store.R.OutboxList(context.Background(), 1000)
	if err != nil {
		t.Fatal(err)
	}
	token := ""
	for _, r := range rows { // newest first: the token the resend made
		if r.Recipient == email && token == "" {
			if u, err := url.Parse(r.Link); err == nil {
				token = u.Query().Get("token")
			}
		}
	}
	if token == "" {
		t.Fatalf("no e-mail token to %s in the outbox", email)
	}
	call("PATCH", "/users/@me/emails/"+id, map[string]string{"email_token": token}, nil)
}

func TestBrowserFleetShares(t *testing.T) {
	bctx := browser(t)
	base := appServer(t)
	for _, vp := range viewports {
		t.Run(vp.name, func(t *testing.T) {
			ownerOrg, rcpOrg := "Haulage "+vp.name, "Subbie "+vp.name
			owner := orgWithOwner(t, bctx, base, "Hana", ownerOrg, vp.width, vp.height, vp.mobile)

			owner.step = "a fleet with an asset at a location"
			owner.orgNav("Locations")
			owner.fill("Location name", "Yard")
			owner.fill("Location code", "YA")
			owner.fill("Time zone", "Europe/London")
			owner.click("Create location")
			owner.see("Location Yard created.")
			owner.orgNav("Work items")
			owner.fill("Type name", "Repair")
			owner.click("Create type")
			owner.see("Type Repair created.")
			owner.orgNav("Fleets")
			owner.fill("Fleet name", "Trucks")
			owner.click("Create fleet")
			owner.see("Fleet Trucks created.")
			owner.fill("Asset type name", "Tipper")
			owner.choose("Fleet of the type", "Trucks")
			owner.click("Create asset type")
			owner.see("Asset type Tipper created.")
			owner.orgNav("Asset register")
			owner.choose("Asset type", "Tipper")
			owner.fill("Asset name", "Tipper one")
			owner.choose("Asset location", "Yard")
			owner.click("Create asset")
			owner.see("Tipper one created.")

			owner.step = "asset subscriptions: create, allocate, change"
			owner.orgNav("Fleets")
			owner.see("No asset subscriptions yet.")
			owner.fill("Subscription name", "Telematics")
			owner.fill("Capacity", "two")
			owner.click("Create asset subscription")
			if got := owner.fieldError("Capacity"); !strings.Contains(got, "whole number") {
				owner.fail("error for capacity two = %q", got)
			}
			owner.fill("Capacity", "1")
			owner.click("Create asset subscription")
			owner.see("Asset subscription Telematics created.")
			pools := `ul[aria-label="Asset subscriptions"]`
			owner.seeIn(pools, "0 of 1 allocated")
			owner.step = "asset subscriptions: allocate an asset, a full one refuses"
			owner.orgNav("Asset register")
			owner.choose("Asset type", "Tipper")
			owner.fill("Asset name", "Tipper two")
			owner.click("Create asset")
			owner.see("Tipper two created.")
			owner.click("Tipper one")
			owner.seeIn("h1", "Tipper one")
			owner.choose("Asset subscription", "Telematics (0 of 1)")
			owner.click("Save asset")
			owner.see("Asset saved.")
			owner.choose("Asset subscription", "Telematics (1 of 1)")
			owner.click("← Assets")
			owner.click("Tipper two")
			owner.seeIn("h1", "Tipper two")
			owner.choose("Asset subscription", "Telematics (1 of 1)")
			owner.click("Save asset")
			owner.see("The asset subscription has no room left (capacity 1).")
			owner.axe("an asset with its subscription")
			owner.click("← Assets")
			owner.orgNav("Fleets")
			owner.seeIn(pools, "1 of 1 allocated")
			owner.seeIn(pools, "full")
			owner.click("Change Telematics")
			owner.fill("Capacity of Telematics", "0")
			owner.click("Save")
			if got := owner.fieldError("Capacity of Telematics"); !strings.Contains(got, "must not be below the 1 assets allocated") {
				owner.fail("error for a capacity below the allocation = %q", got)
			}
			owner.fill("Capacity of Telematics", "3")
			owner.fill("New name of Telematics", "GPS units")
			owner.click("Save")
			owner.see("Asset subscription GPS units saved.")
			owner.seeIn(pools, "GPS units")
			owner.seeIn(pools, "1 of 3 allocated")
			owner.noHorizontalScroll()
			owner.axe("asset subscriptions")

			owner.step = "the recipient's organisation and its id"
			rcp := orgWithOwner(t, bctx, base, "Rafe", rcpOrg, vp.width, vp.height, vp.mobile)
			rcp.nav("Shared with me")
			rcp.seeIn("h1", "Shared with me")
			rcp.see("Nothing is shared with you or your organisations.")
			rcpOrgID := pollValue(rcp, `document.getElementById(`+js(rcp.inputFor("Id of "+rcpOrg))+`).value`, "the organisation's id")
			rcp.noHorizontalScroll()
			rcp.axe("shared with me (empty)")

			owner.step = "share the fleet with an organisation: errors first"
			owner.orgNav("Fleets")
			owner.click("Sharing and following Trucks")
			owner.seeIn("h1", "Trucks")
			fleetPath := strings.TrimPrefix(owner.location(), base)
			owner.see("Trucks is not shared with anyone.")
			owner.see("An accepted share lets its recipient (the person, or every member of the organisation) read Trucks's assets")
			owner.click("An organisation")
			owner.click("Share Trucks")
			if got := owner.fieldError("Id of the organisation"); !strings.Contains(got, "enter its id") {
				owner.fail("error for no organisation = %q", got)
			}
			owner.fill("Id of the organisation", "123456789")
			owner.click("Share Trucks")
			if got := owner.fieldError("Id of the organisation"); !strings.Contains(got, "names no organisation") {
				owner.fail("error for an unknown organisation = %q", got)
			}
			owner.step = "share the fleet with an organisation"
			owner.fill("Id of the organisation", rcpOrgID)
			owner.choose("Work item type of the share", "Repair")
			owner.click("Share Trucks")
			owner.see("Trucks is shared with organisation " + rcpOrgID + "; the share waits for them to accept it.")
			shares := `ul[aria-label="Shares of Trucks"]`
			owner.seeIn(shares, "the organisation "+rcpOrg)
			owner.seeIn(shares, "work items of type Repair")
			owner.seeIn(shares, "pending")
			owner.fill("Id of the organisation", rcpOrgID)
			owner.click("Share Trucks")
			owner.see("The fleet is already shared with that recipient (pending or accepted).")
			owner.noHorizontalScroll()
			owner.axe("a fleet's shares")
			owner.shot("fleet-shares-" + vp.name)

			rcp.step = "the recipient accepts and opens the shared fleet"
			rcp.open("/app/me/shares")
			rcp.seeIn(`ul[aria-label="Shares"]`, "Trucks")
			rcp.seeIn(`ul[aria-label="Shares"]`, "from "+ownerOrg)
			rcp.seeIn(`ul[aria-label="Shares"]`, "pending")
			rcp.click("Accept the fleet Trucks")
			rcp.see("You accepted the fleet Trucks.")
			rcp.seeIn(`ul[aria-label="Shares"]`, "accepted")
			rcp.click("Trucks")
			rcp.seeIn("h1", "Trucks")
			rcp.see("Shared by " + ownerOrg + " with " + rcpOrg + ", for work items of type Repair.")
			rcp.registerShows(2, "Tipper one", "Tipper two")
			rcp.seeIn(`ul[aria-label="Assets"]`, "Yard")

			rcp.step = "the recipient follows the shared fleet at a location"
			rcp.see("You do not follow Trucks.")
			rcp.choose("Only at location", "Yard")
			rcp.choose("Only of work item type", "Repair")
			rcp.click("Follow")
			rcp.see("You follow Repair work items at Yard on Trucks.")
			rcp.seeIn(`ul[aria-label="Your subscriptions to Trucks"]`, "Repair work items at Yard")
			rcp.noHorizontalScroll()
			rcp.axe("a shared fleet")
			rcp.shot("shared-fleet-" + vp.name)

			owner.step = "the owner sees the share accepted"
			owner.click("← Fleets")
			owner.click("Sharing and following Trucks")
			owner.seeIn(shares, "accepted")

			owner.step = "the owner follows the fleet, changes the subscription and stops"
			owner.see("You do not follow Trucks.")
			owner.click("Follow")
			owner.see("You follow work items of any type anywhere on Trucks.")
			subs := `ul[aria-label="Your subscriptions to Trucks"]`
			owner.seeIn(subs, "Work items of any type anywhere")
			owner.click("Change work items of any type anywhere")
			owner.choose("Change location to", "Yard")
			owner.choose("Change work item type to", "Repair")
			owner.axe("changing a subscription")
			owner.click("Save")
			owner.see("You now follow Repair work items at Yard on Trucks.")
			owner.seeIn(subs, "Repair work items at Yard")
			owner.click("Change Repair work items at Yard")
			owner.choose("Change work item type to", "Any type")
			owner.click("Save")
			owner.see("You now follow work items of any type at Yard on Trucks.")
			owner.click("Stop following work items of any type at Yard")
			owner.click("Yes, stop following work items of any type at Yard")
			owner.see("You no longer follow work items of any type at Yard on Trucks.")
			owner.see("You do not follow Trucks.")

			owner.step = "the owner revokes the share"
			owner.click("Revoke the share with the organisation " + rcpOrg)
			owner.click("Yes, revoke the share with the organisation " + rcpOrg)
			owner.see("The share with the organisation " + rcpOrg + " is revoked.")
			owner.seeIn(shares, "revoked")
			owner.checkCSP()

			rcp.step = "the recipient loses the fleet"
			rcp.open(fleetPath)
			rcp.see("You cannot see this fleet: it does not exist, or it is not shared with you (any more).")
			rcp.notSee("Tipper one")
			rcp.open("/app/me/shares")
			rcp.see("Nothing is shared with you or your organisations.")
			rcp.checkCSP()
		})
	}
}

func TestBrowserProjectShares(t *testing.T) {
	bctx := browser(t)
	base, store := appServerWith(t, nil)
	for _, vp := range viewports {
		t.Run(vp.name, func(t *testing.T) {
			owner := orgWithOwner(t, bctx, base, "Paula", "Builders "+vp.name, vp.width, vp.height, vp.mobile)
			owner.step = "a project"
			owner.fill("Name", "Bridge")
			owner.click("Create project")
			owner.seeIn("h1", "Bridge")
			projectPath := strings.TrimPrefix(owner.location(), base)
			owner.see("Bridge is not shared with anyone.")
			owner.see("An accepted share lets its recipient (the person, or every member of the organisation) view Bridge and its documents.")

			owner.step = "share with another organisation of the sharer's, then revoke"
			partners := "Partners " + vp.name
			owner.nav("Organisations")
			owner.fill("Name", partners)
			owner.click("Create organisation")
			owner.seeIn("h1", partners)
			owner.open(projectPath)
			owner.seeIn("h1", "Bridge")
			owner.click("An organisation")
			owner.click("Share Bridge")
			if got := owner.fieldError("Organisation to share with"); !strings.Contains(got, "Choose the organisation") {
				owner.fail("error for no organisation = %q", got)
			}
			owner.choose("Organisation to share with", partners)
			owner.click("Share Bridge")
			owner.see("Bridge is shared with " + partners + "; the share waits for them to accept it.")
			owner.seeIn(`ul[aria-label="Shares of Bridge"]`, "the organisation "+partners)
			owner.click("Revoke the share with the organisation " + partners)
			owner.click("Yes, revoke the share with the organisation " + partners)
			owner.see("The share with the organisation " + partners + " is revoked.")
			owner.click("A person")

			rcpEmail := "ravi-" + vp.name + "@example.com"
			rcp := newPage(t, bctx, base, vp.width, vp.height, vp.mobile)
			rcp.open("/")
			rcp.register("Ravi", rcpEmail, "Ravi password")

			owner.step = "share with a person: an unconfirmed address is not found"
			owner.click("Share Bridge")
			if got := owner.fieldError("E-mail address of the person"); !strings.Contains(got, "Enter the e-mail address") {
				owner.fail("error for no address = %q", got)
			}
			owner.fill("E-mail address of the person", rcpEmail)
			owner.click("Share Bridge")
			if got := owner.fieldError("E-mail address of the person"); !strings.Contains(got, "No account has this verified e-mail address") {
				owner.fail("error for an unconfirmed address = %q", got)
			}
			confirmEmail(t, base, store, rcpEmail, "Ravi password")
			owner.step = "share with a person: they accept shares only from their organisations"
			owner.click("Share Bridge")
			if got := owner.fieldError("E-mail address of the person"); !strings.Contains(got, "MANAGE_FLEETS") {
				owner.fail("error for a person who does not accept shares from strangers = %q", got)
			}

			rcp.step = "the recipient lets anyone share with them"
			rcp.nav("Shared with me")
			rcp.click("Anyone signed in who knows my confirmed e-mail address")
			rcp.click("Save")
			rcp.see("Saved: who may share with you.")

			owner.step = "share with a person"
			owner.click("Share Bridge")
			owner.see("Bridge is shared with " + rcpEmail + "; the share waits for them to accept it.")
			shares := `ul[aria-label="Shares of Bridge"]`
			owner.seeIn(shares, "a person outside your organisations")
			owner.seeIn(shares, "pending")
			owner.noHorizontalScroll()
			owner.axe("a project's shares")

			rcp.step = "the recipient rejects"
			rcp.open("/app/me/shares")
			rcp.seeIn(`ul[aria-label="Shares"]`, "Bridge")
			rcp.click("Reject the project Bridge")
			rcp.see("You rejected the project Bridge.")
			rcp.see("Nothing is shared with you or your organisations.")

			owner.step = "the owner sees the rejection and shares again"
			owner.open(projectPath)
			owner.seeIn(shares, "rejected")
			owner.fill("E-mail address of the person", rcpEmail)
			owner.click("Share Bridge")
			owner.see("Bridge is shared with " + rcpEmail + "; the share waits for them to accept it.")
			owner.seeIn(shares, "pending")

			rcp.step = "the recipient accepts and opens the project"
			rcp.open("/app/me/shares")
			rcp.click("Accept the project Bridge")
			rcp.see("You accepted the project Bridge.")
			rcp.noHorizontalScroll()
			rcp.axe("shared with me")
			rcp.shot("shared-with-me-" + vp.name)
			rcp.click("Bridge")
			rcp.seeIn("h1", "Bridge")
			rcp.see("No milestones yet.")
			rcp.notSee("Shares of Bridge")

			owner.step = "the owner revokes"
			owner.open(projectPath)
			owner.seeIn(shares, "accepted")
			revoke := pollValue(owner, `[...document.querySelectorAll('button[aria-label]')].map(b => b.getAttribute('aria-label')).find(l => l.startsWith('Revoke the share with a person outside')) ?? ''`, "the revoke button")
			owner.click(revoke)
			owner.click("Yes, r" + strings.TrimPrefix(revoke, "R"))
			owner.see("is revoked.")
			owner.seeIn(shares, "revoked")
			owner.checkCSP()

			rcp.step = "the recipient loses the project"
			rcp.open(projectPath)
			rcp.waitFor(`document.querySelector('[role=alert]') !== null`, "an error instead of the project")
			rcp.notSee("No milestones yet.")
			rcp.open("/app/me/shares")
			rcp.see("Nothing is shared with you or your organisations.")
			rcp.checkCSP()
		})
	}
}
