package server

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// notificationsOf lists u's notifications (newest first) and the unread count.
func (e *testEnv) notificationsOf(u *testUser) ([]map[string]any, string) {
	e.t.Helper()
	r := e.must(200, u, "GET", "/users/@me/notifications?$top=1000", nil)
	return r.arr(e.t), r.Header.Get("X-Unread-Count")
}

// notificationOfKind is u's newest notification of a kind (fails if none).
func (e *testEnv) notificationOfKind(t *testing.T, u *testUser, kind string) map[string]any {
	t.Helper()
	ns, _ := e.notificationsOf(u)
	for _, n := range ns {
		if n["kind"] == kind {
			return n
		}
	}
	t.Fatalf("%s has no %s notification: %v", u.Email, kind, ns)
	return nil
}

func (e *testEnv) countKind(u *testUser, kind string) int {
	return e.count(`SELECT count(*) FROM notifications WHERE user_id = ? AND kind = ?`, u.id, kind)
}

// lastMailTo is the newest outbox message to a recipient: subject and body.
func (e *testEnv) lastMailTo(t *testing.T, recipient string) (subject, body string) {
	t.Helper()
	err := e.store.Writer.QueryRowContext(context.Background(), `SELECT subject, body FROM outbox WHERE recipient = ? ORDER BY id DESC LIMIT 1`, recipient).Scan(&subject, &body)
	if err != nil {
		t.Fatalf("no message to %s: %v", recipient, err)
	}
	return subject, body
}

// notifyFixture: Acme (alice owns, bob member), Evil (mallory), carol in
// no organisation; a toolbox, an induction and a work item type in Acme.
type notifyFixture struct {
	*orgFixture
	carol                   *testUser
	toolbox, induction, typ string
}

func newNotifyFixture(t *testing.T, opts ...func(*Config)) *notifyFixture {
	f := &notifyFixture{orgFixture: newOrgFixture(t, opts...)}
	e, acme := f.e, "/organisations/"+f.acme
	f.carol = e.user("carol")
	f.toolbox = e.must(201, f.alice, "POST", acme+"/toolboxes", map[string]any{"title": "Working at height"}).obj(t)["id"].(string)
	f.induction = e.must(201, f.alice, "POST", acme+"/inductions", map[string]any{"name": "Site safety"}).obj(t)["id"].(string)
	f.typ = e.must(201, f.alice, "POST", acme+"/work-item-types", map[string]any{"name": "Task"}).obj(t)["id"].(string)
	return f
}

// TestNotificationsPerEvent: each event kind makes one notification for the
// person it concerns (never for the one who acted), linking to its app
// screen, and mails it when their preference says so.
func TestNotificationsPerEvent(t *testing.T) {
	t.Parallel()
	f := newNotifyFixture(t, func(c *Config) { c.PublicURL = testPublicURL })
	e, acme := f.e, "/organisations/"+f.acme
	wantOne := func(t *testing.T, u *testUser, kind, linkPrefix string) map[string]any {
		t.Helper()
		if n := e.countKind(u, kind); n != 1 {
			t.Fatalf("%s has %d %s notifications, want 1", u.Email, n, kind)
		}
		n := e.notificationOfKind(t, u, kind)
		if link, _ := n["link"].(string); !strings.HasPrefix(link, linkPrefix) || n["read"] != false || n["available"] != true {
			t.Fatalf("notification %v: want an unread, available one linking to %s...", n, linkPrefix)
		}
		return n
	}
	// Every mail of a notification carries the absolute link to its screen
	// on the public URL, and its title as the subject; what every mail must
	// be (checkMail) and its words are held to a golden file.
	wantMail := func(t *testing.T, to string, n map[string]any, golden string) {
		t.Helper()
		m := e.newestMail(to, "")
		if m.Subject != n["title"] || !strings.Contains(m.Body, testPublicURL+n["link"].(string)) {
			t.Fatalf("mail to %s: %q %q; want the subject %q and the link %s", to, m.Subject, m.Body, n["title"], n["link"])
		}
		checkMail(t, "notify-"+golden, m, n["link"].(string))
	}

	t.Run("invited to an organisation", func(t *testing.T) {
		e.must(201, f.alice, "POST", acme+"/invites", map[string]any{"email": f.carol.Email})
		n := wantOne(t, f.carol, notifyOrgInvite, "/app/join/")
		if code := strings.TrimPrefix(n["link"].(string), "/app/join/"); code == "" || !strings.Contains(n["title"].(string), "Acme") {
			t.Fatalf("invite notification %v: want Acme and the invite's code", n)
		}
		// The invite mails the address itself: no second mail.
		if got := e.messagesTo(f.carol.Email); got != 1 {
			t.Fatalf("carol got %d mails, want the invite's one", got)
		}
		if e.countKind(f.alice, notifyOrgInvite) != 0 {
			t.Fatal("the inviter was notified")
		}
	})

	t.Run("invited to a toolbox session", func(t *testing.T) {
		e.must(201, f.alice, "POST", "/toolboxes/"+f.toolbox+"/schedules", map[string]any{"scheduled_start_at": "2026-11-23T07:00:00Z",
			"scheduled_finish_at": "2026-11-23T08:00:00Z", "invitee_ids": []string{f.bob.ID, f.alice.ID}})
		n := wantOne(t, f.bob, notifyToolboxInvite, "/app/sign/"+f.toolbox)
		if !strings.Contains(n["title"].(string), "Working at height") || !strings.Contains(n["body"].(string), "Mon 23 Nov 2026 07:00 UTC") {
			t.Fatalf("toolbox notification %v: want the talk's title and time", n)
		}
		wantMail(t, f.bob.Email, n, "toolbox-invite")
		if e.countKind(f.alice, notifyToolboxInvite) != 0 {
			t.Fatal("the one who invited themself was notified")
		}
		// Inviting again adds nothing.
		sc := e.must(201, f.alice, "POST", "/toolboxes/"+f.toolbox+"/schedules", map[string]any{"scheduled_start_at": "2026-11-24T07:00:00Z",
			"scheduled_finish_at": "2026-11-24T08:00:00Z"}).obj(t)["id"].(string)
		e.must(200, f.alice, "PUT", "/schedules/"+sc+"/invitees/"+f.bob.ID, nil)
		e.must(200, f.alice, "PUT", "/schedules/"+sc+"/invitees/"+f.bob.ID, nil)
		if n := e.countKind(f.bob, notifyToolboxInvite); n != 2 {
			t.Fatalf("bob has %d toolbox notifications, want 2 (one per session)", n)
		}
		// Who chose a time zone reads the time in it, named.
		e.must(200, f.bob, "PATCH", "/users/@me", map[string]any{"timezone_code": "Australia/Perth"})
		e.must(201, f.alice, "POST", "/toolboxes/"+f.toolbox+"/schedules", map[string]any{"scheduled_start_at": "2026-11-25T07:00:00Z",
			"scheduled_finish_at": "2026-11-25T08:00:00Z", "invitee_ids": []string{f.bob.ID}})
		if n := e.notificationOfKind(t, f.bob, notifyToolboxInvite); !strings.Contains(n["body"].(string), "Wed 25 Nov 2026 15:00 AWST") {
			t.Fatalf("bob (in Perth) reads %q, want 15:00 AWST", n["body"])
		}
	})

	t.Run("a rolled-back change notifies no one", func(t *testing.T) {
		before := e.countKind(f.bob, notifyToolboxInvite)
		mails := e.messagesTo(f.bob.Email)
		// bob is invited first, then the pending member refuses the whole request.
		e.must(400, f.alice, "POST", "/toolboxes/"+f.toolbox+"/schedules", map[string]any{"scheduled_start_at": "2026-11-25T07:00:00Z",
			"scheduled_finish_at": "2026-11-25T08:00:00Z", "invitee_ids": []string{f.bob.ID, f.pen.ID}})
		if e.countKind(f.bob, notifyToolboxInvite) != before || e.messagesTo(f.bob.Email) != mails {
			t.Fatal("a refused request left a notification or a mail")
		}
	})

	t.Run("assigned an induction", func(t *testing.T) {
		due := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC).Unix()
		e.must(201, f.alice, "POST", "/inductions/"+f.induction+"/users/"+f.bob.ID, map[string]any{"due_at": due})
		n := wantOne(t, f.bob, notifyInduction, "/app/me/inductions/"+f.induction)
		if !strings.Contains(n["body"].(string), "Tue 1 Dec 2026") {
			t.Fatalf("induction notification %v: want its due date", n)
		}
		wantMail(t, f.bob.Email, n, "induction-assigned")
		// Assigning again (200) and assigning oneself notify no one.
		e.must(200, f.alice, "POST", "/inductions/"+f.induction+"/users/"+f.bob.ID, nil)
		e.must(201, f.alice, "POST", "/inductions/"+f.induction+"/users/"+f.alice.ID, nil)
		if e.countKind(f.bob, notifyInduction) != 1 || e.countKind(f.alice, notifyInduction) != 0 {
			t.Fatal("a repeated or self assignment notified")
		}
	})

	t.Run("induction reminders", func(t *testing.T) {
		e.clock.Advance(5 * 24 * time.Hour) // due on 1 December: within 7 days
		if _, err := e.srv.remindInductions(context.Background(), e.clock.Now()); err != nil {
			t.Fatal(err)
		}
		n := wantOne(t, f.bob, notifyInductionDue, "/app/me/inductions/"+f.induction)
		wantMail(t, f.bob.Email, n, "induction-due")
	})

	var item string
	t.Run("assigned a work item", func(t *testing.T) {
		item = e.must(201, f.alice, "POST", acme+"/workitems", map[string]any{"type_id": f.typ, "title": "Fix the pump",
			"assignee_ids": []string{f.bob.ID, f.alice.ID}}).obj(t)["id"].(string)
		n := wantOne(t, f.bob, notifyWorkItemAssign, "/app/workitems/"+item)
		if !strings.Contains(n["title"].(string), "Fix the pump") {
			t.Fatalf("work item notification %v", n)
		}
		wantMail(t, f.bob.Email, n, "workitem-assigned")
		if e.countKind(f.alice, notifyWorkItemAssign) != 0 {
			t.Fatal("the assigner was notified")
		}
		// Keeping bob assigned does not notify again.
		e.must(200, f.alice, "PATCH", "/workitems/"+item, map[string]any{"title": "Fix the pump now", "assignee_ids": []string{f.bob.ID}})
		if e.countKind(f.bob, notifyWorkItemAssign) != 1 {
			t.Fatal("an unchanged assignee was notified again")
		}
	})

	t.Run("a followed work item changes", func(t *testing.T) {
		e.must(200, f.bob, "PUT", "/workitems/"+item+"/subscription", nil)
		e.must(200, f.alice, "PUT", "/workitems/"+item+"/subscription", nil)
		e.must(200, f.alice, "PATCH", "/workitems/"+item, map[string]any{"status": "closed"})
		n := wantOne(t, f.bob, notifyWorkItemChange, "/app/workitems/"+item)
		wantMail(t, f.bob.Email, n, "workitem-changed")
		if e.countKind(f.alice, notifyWorkItemChange) != 0 {
			t.Fatal("the one who closed it was notified")
		}
	})

	t.Run("a share waits for an answer", func(t *testing.T) {
		e.sharesFromAnyone(f.carol)
		p := e.must(201, f.alice, "POST", acme+"/projects", map[string]any{"name": "Bridge"}).obj(t)["id"].(string)
		e.must(201, f.alice, "POST", "/projects/"+p+"/shares", map[string]any{"user_id": f.carol.ID})
		n := wantOne(t, f.carol, notifyShare, "/app/me/shares")
		if !strings.Contains(n["title"].(string), "Bridge") {
			t.Fatalf("share notification %v", n)
		}
		wantMail(t, f.carol.Email, n, "share-waiting")
		// A share to an organisation notifies no single person.
		e.must(201, f.alice, "POST", "/projects/"+p+"/shares", map[string]any{"organisation_id": f.evil})
		if e.countKind(f.mallory, notifyShare) != 0 {
			t.Fatal("a share to an organisation notified its owner")
		}
	})

	t.Run("a merge request to review", func(t *testing.T) {
		doc := e.must(201, f.alice, "POST", "/documents", map[string]any{"organisation_id": f.acme, "title": "Main spec"}).obj(t)["id"].(string)
		e.must(201, f.alice, "POST", "/documents/"+doc+"/branches", map[string]any{"name": "draft"})
		e.grantUser(f.acme, f.bob, EditDocuments)
		e.must(201, f.bob, "POST", "/documents/"+doc+"/merge-requests", map[string]any{"from_branch": "draft", "to_branch": "main", "title": "Tidy"})
		n := wantOne(t, f.alice, notifyMergeRequest, "/app/documents/"+doc)
		wantMail(t, f.alice.Email, n, "merge-request")
		// The owner's own request asks nothing of them.
		e.must(201, f.alice, "POST", "/documents/"+doc+"/branches", map[string]any{"name": "mine"})
		e.must(201, f.alice, "POST", "/documents/"+doc+"/merge-requests", map[string]any{"from_branch": "mine", "to_branch": "draft"})
		if e.countKind(f.alice, notifyMergeRequest) != 1 {
			t.Fatal("the owner was notified of their own merge request")
		}
	})

	t.Run("mail and text by preference", func(t *testing.T) {
		e.must(200, f.bob, "PATCH", "/users/@me", map[string]any{"enable_email_notifications": false, "enable_sms_notifications": true})
		mails := e.messagesTo(f.bob.Email)
		e.must(201, f.alice, "POST", acme+"/workitems", map[string]any{"type_id": f.typ, "title": "Quiet", "assignee_ids": []string{f.bob.ID}})
		if e.countKind(f.bob, notifyWorkItemAssign) != 2 || e.messagesTo(f.bob.Email) != mails {
			t.Fatal("with e-mail notifications off: want the notification in the app and no mail")
		}
		// sms_notifications without a confirmed number: no text.
		e.exec(`UPDATE users SET phone_number = '+15550001111' WHERE id = ?`, f.bob.id)
		e.must(201, f.alice, "POST", acme+"/workitems", map[string]any{"type_id": f.typ, "title": "Unconfirmed", "assignee_ids": []string{f.bob.ID}})
		if e.messagesTo("+15550001111") != 0 {
			t.Fatal("a text went to an unconfirmed number")
		}
		e.exec(`UPDATE users SET phone_number_confirmed = 1 WHERE id = ?`, f.bob.id)
		w := e.must(201, f.alice, "POST", acme+"/workitems", map[string]any{"type_id": f.typ, "title": "Texted", "assignee_ids": []string{f.bob.ID}}).obj(t)["id"].(string)
		_, body := e.lastMailTo(t, "+15550001111")
		if !strings.Contains(body, "Texted") || !strings.HasSuffix(body, testPublicURL+"/app/workitems/"+w) {
			t.Fatalf("text %q: want the title and the link", body)
		}
	})
}

// TestNotificationsAPI: list (paged, newest first, unread count), mark one
// read or unread, mark all read, others' rows, and what a person sees
// once they lost access.
func TestNotificationsAPI(t *testing.T) {
	t.Parallel()
	f := newNotifyFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	var items []string
	for i := range 3 {
		items = append(items, e.must(201, f.alice, "POST", acme+"/workitems", map[string]any{"type_id": f.typ,
			"title": fmt.Sprintf("Secret job %d", i), "assignee_ids": []string{f.bob.ID}}).obj(t)["id"].(string))
	}
	ns, unread := e.notificationsOf(f.bob)
	if len(ns) != 3 || unread != "3" || ns[0]["link"] != "/app/workitems/"+items[2] {
		t.Fatalf("bob's list %v (unread %s): want 3, newest first", ns, unread)
	}
	first, last := ns[2]["id"].(string), ns[0]["id"].(string)
	mine := "/users/@me/notifications/"
	e.run(t, []scenario{
		{"page of one, with the counts", f.bob, "GET", "/users/@me/notifications?$top=1&$skip=1", nil, 200, func(t *testing.T, r *testResponse) {
			if a := r.arr(t); len(a) != 1 || a[0]["link"] != "/app/workitems/"+items[1] || r.Header.Get("X-Total-Count") != "3" || r.Header.Get("X-Unread-Count") != "3" {
				t.Fatalf("page %s, headers %v", r.Body, r.Header)
			}
		}},
		{"bad $top", f.bob, "GET", "/users/@me/notifications?$top=-1", nil, 400, nil},
		{"unknown filter field", f.bob, "GET", "/users/@me/notifications?$filter=user_id%20eq%201", nil, 400, nil},
		{"no token", nil, "GET", "/users/@me/notifications", nil, 401, nil},
		{"mark read", f.bob, "PATCH", mine + first, map[string]any{"read": true}, 200, func(t *testing.T, r *testResponse) {
			if o := r.obj(t); o["read"] != true || o["read_at"] == nil {
				t.Fatalf("got %v", o)
			}
		}},
		{"unread filter", f.bob, "GET", "/users/@me/notifications?$filter=read%20eq%20false", nil, 200, func(t *testing.T, r *testResponse) {
			if len(r.arr(t)) != 2 || r.Header.Get("X-Unread-Count") != "2" || r.Header.Get("X-Total-Count") != "2" {
				t.Fatalf("unread list %s %v", r.Body, r.Header)
			}
		}},
		{"mark unread again", f.bob, "PATCH", mine + first, map[string]any{"read": false}, 200, wantKey("read", false)},
		{"read required", f.bob, "PATCH", mine + first, map[string]any{}, 400, wantField("read")},
		{"read wrong type", f.bob, "PATCH", mine + first, map[string]any{"read": "yes"}, 400, nil},
		{"malformed JSON", f.bob, "PATCH", mine + first, `{"read":`, 400, nil},
		{"not a snowflake", f.bob, "PATCH", mine + "abc", map[string]any{"read": true}, 400, nil},
		{"absent", f.bob, "PATCH", mine + "123456789", map[string]any{"read": true}, 404, nil},
		// Another person's notification is absent to them, and stays unread.
		{"foreign user cannot mark", f.mallory, "PATCH", mine + last, map[string]any{"read": true}, 404, nil},
		{"foreign user sees none", f.mallory, "GET", "/users/@me/notifications", nil, 200, func(t *testing.T, r *testResponse) {
			if len(r.arr(t)) != 0 || r.Header.Get("X-Unread-Count") != "0" {
				t.Fatalf("mallory sees %s", r.Body)
			}
		}},
		{"foreign mark all leaves bob's", f.mallory, "POST", "/users/@me/notifications/read-all", nil, 200, wantKey("marked", 0)},
		{"bob's still unread", f.bob, "GET", "/users/@me/notifications?$top=0", nil, 200, func(t *testing.T, r *testResponse) {
			if r.Header.Get("X-Unread-Count") != "3" {
				t.Fatalf("unread %s, want 3", r.Header.Get("X-Unread-Count"))
			}
		}},
		{"mark all read", f.bob, "POST", "/users/@me/notifications/read-all", nil, 200, wantKey("marked", 3)},
		{"none unread", f.bob, "GET", "/users/@me/notifications", nil, 200, func(t *testing.T, r *testResponse) {
			for _, n := range r.arr(t) {
				if n["read"] != true {
					t.Fatalf("still unread: %v", n)
				}
			}
			if r.Header.Get("X-Unread-Count") != "0" {
				t.Fatalf("unread %s", r.Header.Get("X-Unread-Count"))
			}
		}},
	})

	// bob leaves Acme: his notifications no longer name its work items nor
	// link to them.
	e.must(204, f.bob, "DELETE", "/users/@me/organisations/"+f.acme, nil)
	r := e.must(200, f.bob, "GET", "/users/@me/notifications", nil)
	if strings.Contains(string(r.Body), "Secret job") || strings.Contains(string(r.Body), "/app/workitems/") {
		t.Fatalf("after leaving, the list still names the work items: %s", r.Body)
	}
	for _, n := range r.arr(t) {
		if n["available"] != false || n["link"] != nil || n["title"] != unavailableTitle {
			t.Fatalf("after leaving: %v", n)
		}
	}
	// Marking one read still works (it is his row).
	e.must(200, f.bob, "PATCH", mine+first, map[string]any{"read": true})
}

// TestNotificationPurge: kept 90 days, then deleted by the purge job.
func TestNotificationPurge(t *testing.T) {
	t.Parallel()
	f := newNotifyFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	assign := func(title string) {
		e.must(201, f.alice, "POST", acme+"/workitems", map[string]any{"type_id": f.typ, "title": title, "assignee_ids": []string{f.bob.ID}})
	}
	purge := func() int64 {
		n, err := e.srv.purgeNotifications(context.Background(), e.clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	assign("Old")
	e.clock.Advance(60 * 24 * time.Hour)
	assign("Newer")
	e.clock.Advance(30*24*time.Hour - time.Minute) // the first is 90 days less a minute old
	if n := purge(); n != 0 {
		t.Fatalf("purged %d before 90 days", n)
	}
	e.clock.Advance(2 * time.Minute)
	if n := purge(); n != 1 {
		t.Fatalf("purged %d, want the one older than 90 days", n)
	}
	ns, _ := e.notificationsOf(f.bob)
	if len(ns) != 1 || !strings.Contains(ns[0]["title"].(string), "Newer") {
		t.Fatalf("left %v, want only the newer one", ns)
	}
}

// TestForYou: invitations, sessions and reviews waiting for the caller, and
// nothing of anyone else's.
func TestForYou(t *testing.T) {
	t.Parallel()
	f := newNotifyFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	e.must(201, f.alice, "POST", acme+"/invites", map[string]any{"email": f.carol.Email})
	e.must(201, f.alice, "POST", "/toolboxes/"+f.toolbox+"/schedules", map[string]any{"scheduled_start_at": "2026-11-23T07:00:00Z",
		"scheduled_finish_at": "2026-11-23T08:00:00Z", "invitee_ids": []string{f.bob.ID}})
	// A session already over is not listed.
	e.must(201, f.alice, "POST", "/toolboxes/"+f.toolbox+"/schedules", map[string]any{"scheduled_start_at": "2026-11-20T07:00:00Z",
		"scheduled_finish_at": "2026-11-20T08:00:00Z", "invitee_ids": []string{f.bob.ID}})
	doc := e.must(201, f.alice, "POST", "/documents", map[string]any{"organisation_id": f.acme, "title": "Main spec"}).obj(t)["id"].(string)
	e.must(201, f.alice, "POST", "/documents/"+doc+"/branches", map[string]any{"name": "draft"})
	e.grantUser(f.acme, f.bob, EditDocuments)
	e.must(201, f.bob, "POST", "/documents/"+doc+"/merge-requests", map[string]any{"from_branch": "draft", "to_branch": "main", "title": "Tidy"})
	list := func(r *testResponse, key string) []any { return r.obj(t)[key].([]any) }
	e.run(t, []scenario{
		{"carol's invitation", f.carol, "GET", "/users/@me/for-you", nil, 200, func(t *testing.T, r *testResponse) {
			inv := list(r, "invitations")
			if len(inv) != 1 || inv[0].(map[string]any)["organisation_name"] != "Acme" || !strings.HasPrefix(inv[0].(map[string]any)["link"].(string), "/app/join/") {
				t.Fatalf("invitations %v", inv)
			}
			if len(list(r, "sessions")) != 0 || len(list(r, "reviews")) != 0 {
				t.Fatalf("carol sees others' items: %s", r.Body)
			}
		}},
		{"bob's session", f.bob, "GET", "/users/@me/for-you", nil, 200, func(t *testing.T, r *testResponse) {
			ss := list(r, "sessions")
			if len(ss) != 1 || ss[0].(map[string]any)["title"] != "Working at height" || ss[0].(map[string]any)["status"] != "invited" ||
				ss[0].(map[string]any)["link"] != "/app/sign/"+f.toolbox {
				t.Fatalf("sessions %v", ss)
			}
			if len(list(r, "invitations")) != 0 || len(list(r, "reviews")) != 0 || r.obj(t)["unread_count"] != float64(2) {
				t.Fatalf("bob: %s", r.Body)
			}
		}},
		{"alice's review", f.alice, "GET", "/users/@me/for-you", nil, 200, func(t *testing.T, r *testResponse) {
			rv := list(r, "reviews")
			if len(rv) != 1 || rv[0].(map[string]any)["title"] != "Tidy" || rv[0].(map[string]any)["link"] != "/app/documents/"+doc {
				t.Fatalf("reviews %v", rv)
			}
		}},
		{"foreign user sees nothing", f.mallory, "GET", "/users/@me/for-you", nil, 200, func(t *testing.T, r *testResponse) {
			if len(list(r, "invitations"))+len(list(r, "sessions"))+len(list(r, "reviews")) != 0 {
				t.Fatalf("mallory: %s", r.Body)
			}
		}},
		{"no token", nil, "GET", "/users/@me/for-you", nil, 401, nil},
	})
	// Once carol joins, the invitation is no longer waiting.
	e.addMember(f.acme, f.carol)
	if inv := list(e.must(200, f.carol, "GET", "/users/@me/for-you", nil), "invitations"); len(inv) != 0 {
		t.Fatalf("a member still sees the invitation: %v", inv)
	}
}

// TestZoneName: a zone is named by its letters where it has them, else by
// its city, never by a bare offset.
func TestZoneName(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 25, 7, 0, 0, 0, time.UTC)
	for tz, want := range map[string]string{"UTC": "UTC", "Australia/Perth": "AWST", "Europe/London": "GMT", "Asia/Dubai": "Dubai time",
		"America/Argentina/Buenos_Aires": "Buenos Aires time"} {
		loc, err := time.LoadLocation(tz)
		if err != nil {
			t.Fatal(err)
		}
		if got := zoneName(at.In(loc), tz); got != want {
			t.Errorf("%s: %q, want %q", tz, got, want)
		}
	}
}
