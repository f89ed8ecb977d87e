package server

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"workspace/db"
)

const testPublicURL = "https://work.example.com"

// newestMail is the newest outbox row to recipient whose subject contains
// subject, waiting for the first one (reset mails are sent after the answer).
func (e *testEnv) newestMail(recipient, subject string) db.Outbox {
	e.t.Helper()
	return e.nthMail(recipient, subject, 1)
}

// nthMail waits until there are n mails to recipient about subject and
// returns the newest.
func (e *testEnv) nthMail(recipient, subject string, n int) db.Outbox {
	e.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		rows, err := e.store.R.OutboxList(context.Background(), 1000)
		if err != nil {
			e.t.Fatal(err)
		}
		var found []db.Outbox
		for _, r := range rows {
			if strings.EqualFold(r.Recipient, recipient) && strings.Contains(r.Subject, subject) {
				found = append(found, r)
			}
		}
		if len(found) >= n {
			return found[0]
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("%d mails to %s about %q, want %d", len(found), recipient, subject, n)
		}
		time.Sleep(5 * time.Millisecond) // the poll interval
	}
}

var (
	mailTokenRE = regexp.MustCompile(`token=[A-Za-z0-9_-]+`)
	mailCodeRE  = regexp.MustCompile(`/app/join/[A-Za-z0-9_-]+`)
	mailIDRE    = regexp.MustCompile(`[0-9]{15,20}`)
	// What a person must never be asked to handle in a mail.
	apiTalkRE = regexp.MustCompile(`(?i)\b(GET|POST|PATCH|PUT|DELETE) /|/users/@me|/invites/|email_token|/organisations/|\bToken: `)
)

// checkMail asserts what every mail must be, then compares it with its
// golden files testdata/mail/<name>.txt and .html (-update rewrites them).
func checkMail(t *testing.T, name string, m db.Outbox, linkPath string) {
	t.Helper()
	if m.Link == "" || !strings.HasPrefix(m.Link, testPublicURL+linkPath) {
		t.Errorf("%s: link %q, want one under %s%s", name, m.Link, testPublicURL, linkPath)
	}
	if !strings.Contains(m.Body, m.Link) {
		t.Errorf("%s: the text does not carry the link %q", name, m.Link)
	}
	if !strings.Contains(m.Html, `href="`+strings.ReplaceAll(m.Link, "&", "&amp;")+`"`) {
		t.Errorf("%s: the HTML does not link to %q", name, m.Link)
	}
	for part, text := range map[string]string{"text": m.Body, "HTML": m.Html, "subject": m.Subject} {
		if apiTalkRE.MatchString(text) {
			t.Errorf("%s: the %s talks API (%q)", name, part, apiTalkRE.FindString(text))
		}
		if strings.Contains(text, "workspace.test") || strings.Contains(text, "127.0.0.1") {
			t.Errorf("%s: the %s links to the issuer, not the public URL", name, part)
		}
	}
	norm := func(s string) string {
		s = mailTokenRE.ReplaceAllString(s, "token=<token>")
		s = mailCodeRE.ReplaceAllString(s, "/app/join/<code>")
		return mailIDRE.ReplaceAllString(s, "<id>")
	}
	for ext, got := range map[string]string{".txt": "Subject: " + m.Subject + "\n\n" + norm(m.Body), ".html": norm(m.Html)} {
		path := filepath.Join("testdata", "mail", name+ext)
		if *update {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run with -update to write it)", err)
		}
		if got != string(want) {
			t.Errorf("%s differs from %s (-update rewrites it):\n%s", name+ext, path, got)
		}
	}
}

// TestMails triggers each mail through its handler (or, for the changes of
// other areas' objects, renders it) and checks its words and its link.
func TestMails(t *testing.T) {
	t.Parallel()
	publicURL := func(c *Config) { c.PublicURL = testPublicURL }
	f := newOrgFixture(t, publicURL)
	e := f.e
	// A name that must be escaped in HTML, and a logo.
	e.exec(`UPDATE organisations SET name = 'Acme <Site> & Sons', logo_hash = 'feedface' WHERE id = ?`, mustID(f.acme))
	e.must(200, f.alice, "PATCH", "/users/@me", map[string]any{"first_name": "Alice", "last_name": "Archer"})
	alice := e.tokenFor(db.User{ID: f.alice.id, Email: f.alice.Email})
	_ = alice

	t.Run("invite", func(t *testing.T) {
		e.must(201, f.alice, "POST", "/organisations/"+f.acme+"/invites", map[string]any{"email": "guest@example.org"})
		m := e.newestMail("guest@example.org", "invited you")
		checkMail(t, "invite", m, "/app/join/")
		if !strings.Contains(m.Subject, "Alice Archer invited you to join Acme <Site> & Sons") {
			t.Errorf("subject %q does not say who invited to what", m.Subject)
		}
		if !strings.Contains(m.Html, "Acme &lt;Site&gt; &amp; Sons") || strings.Contains(m.Html, "<Site>") {
			t.Errorf("the organisation's name is not escaped in the HTML")
		}
		if !strings.Contains(m.Html, `<img src="`+testPublicURL+orgImagesPath+`feedface"`) {
			t.Errorf("the HTML lacks the organisation's logo")
		}
	})
	// The invitee may have no account, so no zone of their own: the expiry
	// is written in the inviter's zone, with the time and the zone named,
	// so 20:00 UTC on the 25th reads as the 26th in Perth, not the 25th.
	t.Run("invite expiry in the inviter's zone", func(t *testing.T) {
		for i, c := range []struct{ tz, want string }{
			{"Australia/Perth", "It works until Thursday 26 November 2026 at 04:00 AWST (Perth time)."},
			{"America/Los_Angeles", "It works until Wednesday 25 November 2026 at 12:00 PST (Los Angeles time)."},
			{"Asia/Dubai", "It works until Thursday 26 November 2026 at 00:00 Dubai time."},
			{"UTC", "It works until Wednesday 25 November 2026 at 20:00 UTC."},
		} {
			e.must(200, f.alice, "PATCH", "/users/@me", map[string]any{"timezone_code": c.tz})
			to := fmt.Sprintf("zone%d@example.org", i)
			e.must(201, f.alice, "POST", "/organisations/"+f.acme+"/invites", map[string]any{"email": to, "expires_at": "2026-11-25T20:00:00Z"})
			m := e.newestMail(to, "invited you")
			if !strings.Contains(m.Body, c.want) || !strings.Contains(m.Html, c.want) {
				t.Errorf("%s: the invite mail does not say %q:\n%s", c.tz, c.want, m.Body)
			}
		}
		e.must(200, f.alice, "PATCH", "/users/@me", map[string]any{"timezone_code": "UTC"})
	})
	t.Run("confirm address", func(t *testing.T) {
		id := e.must(201, f.bob, "POST", "/users/@me/emails", map[string]any{"email": "bob.work@example.org"}).obj(t)["id"].(string)
		m := e.newestMail("bob.work@example.org", "Confirm your e-mail address")
		checkMail(t, "confirm-address", m, "/app/confirm-email/"+id+"?token=")
		// The link's token is the one the address takes.
		u, _ := url.Parse(m.Link)
		e.must(200, f.bob, "PATCH", "/users/@me/emails/"+id, map[string]any{"email_token": u.Query().Get("token")})
	})
	t.Run("registration mails a confirmation", func(t *testing.T) {
		e.must(201, nil, "POST", "/auth/register", map[string]any{"email": "newcomer@example.org", "password": "long enough"})
		checkMail(t, "confirm-address-new-account", e.newestMail("newcomer@example.org", "Confirm"), "/app/confirm-email/")
	})
	t.Run("account deletion", func(t *testing.T) {
		nobody := f.nobody
		e.must(202, nobody, "DELETE", "/users/@me", nil)
		m := e.newestMail(nobody.Email, "delete your account")
		checkMail(t, "confirm-deletion", m, "/app/account/delete?token=")
		u, _ := url.Parse(m.Link)
		e.must(204, nobody, "DELETE", "/users/@me?email_token="+u.Query().Get("token"), nil)
	})
	t.Run("password reset", func(t *testing.T) {
		e.postForm("/auth/forgot", url.Values{"email": {f.bob.Email}}, "")
		checkMail(t, "password-reset", e.newestMail(f.bob.Email, "new password"), "/auth/reset?token=")
	})
	t.Run("password reset sent by Staff", func(t *testing.T) {
		e.exec(`UPDATE users SET badges = ? WHERE id = ?`, BadgeStaff, f.mallory.id)
		e.must(202, f.mallory, "POST", "/admin/users/"+f.pen.ID+"/password-reset", nil)
		checkMail(t, "password-reset-staff", e.newestMail(f.pen.Email, "new password"), "/auth/reset?token=")
	})
	t.Run("induction reminder", func(t *testing.T) {
		ind := e.must(201, f.alice, "POST", "/organisations/"+f.acme+"/inductions", map[string]any{"name": "Site safety"}).obj(t)
		e.must(201, f.alice, "POST", "/inductions/"+ind["id"].(string)+"/users/"+f.bob.ID,
			map[string]any{"due_at": e.clock.Now().Add(3 * 24 * time.Hour).Unix()})
		if _, err := e.srv.remindInductions(context.Background(), e.clock.Now()); err != nil {
			t.Fatal(err)
		}
		checkMail(t, "induction-due", e.newestMail(f.bob.Email, "induction"), "/app/me/inductions/"+ind["id"].(string))
	})
	// Work item mails: rendered from rows, their triggers are the work
	// item and fleet tests' (userworkitems_test.go, fleetshares_test.go).
	o, err := e.store.R.OrganisationGet(context.Background(), mustID(f.acme))
	if err != nil {
		t.Fatal(err)
	}
	actor := db.User{FirstName: "Alice", LastName: "Archer", Email: f.alice.Email}
	w := db.WorkItem{ID: 914395872525492224, FormattedNumber: "WI-0007", Title: "Fix the <gate>", Status: "closed"}
	for name, msg := range map[string]message{
		"workitem-status": e.srv.mailWorkItemStatus("follower@example.org", actor, o, w),
		"fleet-workitem":  e.srv.mailFleetWorkItem("follower@example.org", actor, o, w),
		"address-removed": e.srv.mailAddressRemoved("kept@example.org", "taken@example.org"),
	} {
		t.Run(name, func(t *testing.T) {
			path := "/app/workitems/914395872525492224"
			if name == "address-removed" {
				path = "/app/account"
			}
			checkMail(t, name, db.Outbox{Recipient: msg.Recipient, Subject: msg.Subject, Body: msg.Body, Html: msg.HTML, Link: msg.Link}, path)
		})
	}
}
