package server

// Notifications (issue 36, docs/notifications.md): an in-app list per user,
// and a mail and a text message by the user's preferences, for the events
// that ask something of them. Every row is written by notify, inside the
// transaction of the event, so a change that rolls back notifies no one.

import (
	"context"
	"database/sql"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"workspace/db"
)

// Notification kinds.
const (
	notifyOrgInvite      = "organisation_invite"
	notifyToolboxInvite  = "toolbox_invite"
	notifyInduction      = "induction_assigned"
	notifyInductionDue   = "induction_reminder"
	notifyWorkItemAssign = "work_item_assigned"
	notifyWorkItemChange = "work_item_changed"
	notifyShare          = "share_waiting"
	notifyMergeRequest   = "merge_request"
	notifyFleetWorkItem  = "fleet_work_item"
	notifySyncConflict   = "sync_conflict"
)

// notificationKeep is how long a notification is kept (notificationPurge).
const notificationKeep = 90 * 24 * time.Hour

// notification is one event for one person.
type notification struct {
	UserID  int64
	ActorID int64 // who caused it: never notified of their own doing
	// OrgID is the organisation whose membership the recipient needs to see
	// what the notification names (0: none, for invitations and shares
	// addressed to them). Its routed address receives the mail.
	OrgID int64
	Kind  string
	Title string // a short line: the list's line, the mail's subject, the text message
	Body  string // a sentence or two saying who did what and what to do
	Link  string // the app screen, an /app/... path
	// NoMail: the event already sends its own mail (an organisation's
	// invite mails its link to the address), so only the in-app row.
	NoMail bool
	// Mail is the mail the event writes itself (mailtext.go), sent to the
	// recipient's address for the organisation; nil: notify writes one
	// from Title, Body and Link.
	Mail *message
}

const maxNotificationTitle = 200

// notify records n for its recipient and sends the mail and text message
// their preferences ask for. Call it inside the event's transaction. This
// is the one place notifications reach the mailer.
func (s *Server) notify(ctx context.Context, q *db.Queries, n notification) error {
	if n.UserID == 0 || n.UserID == n.ActorID {
		return nil
	}
	var org *int64
	if n.OrgID != 0 {
		org = &n.OrgID
	}
	r, err := q.NotificationRecipient(ctx, db.NotificationRecipientParams{ID: n.UserID, OrganisationID: org})
	if db.IsNotFound(err) {
		return nil // a deleted account
	}
	if err != nil {
		return err
	}
	if utf8.RuneCountInString(n.Title) > maxNotificationTitle {
		n.Title = string([]rune(n.Title)[:maxNotificationTitle-1]) + "…"
	}
	err = q.NotificationCreate(ctx, db.NotificationCreateParams{ID: s.store.IDs.Next(), UserID: n.UserID, OrganisationID: org,
		Kind: n.Kind, Title: n.Title, Body: n.Body, Link: n.Link, CreatedAt: s.nowText()})
	if err != nil {
		return err
	}
	link := s.appLink(n.Link, nil)
	if r.EmailNotifications && !n.NoMail && r.Email != "" {
		var m message
		if n.Mail != nil {
			m = *n.Mail
			m.Recipient = r.Email
		} else {
			c := mailContent{Lines: []string{n.Body}, Action: "Open it", Link: link,
				Note: "You get this because e-mail notifications are on in your account settings."}
			if n.OrgID != 0 {
				o, err := q.OrganisationGet(ctx, n.OrgID)
				if err != nil {
					return err
				}
				c.Org = s.mailOrgOf(o)
			}
			m = composeMail(r.Email, n.Title, c)
		}
		if err := s.mailer.send(ctx, q, m); err != nil {
			return err
		}
	}
	if r.SmsNotifications && r.PhoneNumberConfirmed && r.PhoneNumber != "" {
		text := n.Title
		if utf8.RuneCountInString(text) > 100 {
			text = string([]rune(text)[:99]) + "…"
		}
		if err := s.mailer.send(ctx, q, message{Kind: "sms", Recipient: r.PhoneNumber, Subject: n.Title, Body: text + " " + link, Link: link}); err != nil {
			return err
		}
	}
	return nil
}

// purgeNotifications deletes the notifications older than 90 days at now.
func (s *Server) purgeNotifications(ctx context.Context, now time.Time) (int64, error) {
	var n int64
	err := s.store.InTx(ctx, func(q *db.Queries) error {
		var err error
		n, err = q.NotificationPurge(ctx, db.FormatTime(now.Add(-notificationKeep)))
		return err
	})
	return n, err
}

type notificationJSON struct {
	ID    db.ID  `json:"id"`
	Kind  string `json:"kind"`
	Title string `json:"title"`
	Body  string `json:"body"`
	// Link is the app screen; null when the recipient may no longer see
	// what it names (they left the organisation, or it was deleted).
	Link      *string `json:"link"`
	Available bool    `json:"available"`
	Read      bool    `json:"read"`
	ReadAt    *string `json:"read_at"`
	CreatedAt string  `json:"created_at"`
}

// What a notification says once its recipient may no longer see what it
// named: nothing of the original.
const (
	unavailableTitle = "This is no longer available"
	unavailableBody  = "You no longer have access to what this notification was about."
)

func toNotification(r db.NotificationListByIDsRow) notificationJSON {
	out := notificationJSON{ID: db.ID(r.ID), Kind: r.Kind, Title: r.Title, Body: r.Body, Available: r.Available,
		Read: r.ReadAt != nil, ReadAt: r.ReadAt, CreatedAt: r.CreatedAt}
	if r.Available {
		link := r.Link
		out.Link = &link
	} else {
		out.Title, out.Body = unavailableTitle, unavailableBody
	}
	return out
}

// notificationFilter is the $filter whitelist of GET /users/@me/notifications.
var notificationFilter = db.FilterFields{
	"read":       {Column: "(read_at IS NOT NULL)", Kind: db.FieldBool},
	"kind":       {Column: "kind", Kind: db.FieldEnum, Values: []string{notifyOrgInvite, notifyToolboxInvite, notifyInduction, notifyInductionDue, notifyWorkItemAssign, notifyWorkItemChange, notifyShare, notifyMergeRequest, notifyFleetWorkItem, notifySyncConflict}},
	"created_at": {Column: "created_at", Kind: db.FieldTime},
}

// notificationList pages the caller's notifications, newest first.
// X-Total-Count counts the filtered rows; X-Unread-Count the caller's
// unread ones (whatever the filter), for the bell.
func (s *Server) notificationList(rq *request) error {
	var unread int64
	return listPage(s, rq, listSpec[notificationJSON]{Fields: notificationFilter,
		Scope: func(_ *sql.Tx, q *db.Queries, _ int64, _ listQuery) (listSQL, error) {
			var err error
			unread, err = q.NotificationUnreadCount(rq.ctx, rq.user.ID)
			return listSQL{From: "notifications", Where: "user_id = ?", Args: []any{rq.user.ID}, OrderBy: "id DESC"}, err
		},
		Rows:   byIDs((*db.Queries).NotificationListByIDs, each(toNotification)),
		Header: func(h http.Header) { h.Set("X-Unread-Count", strconv.FormatInt(unread, 10)) }})
}

type notificationPatchBody struct {
	Read *bool `json:"read"`
}

// notificationPatch marks one of the caller's notifications read or unread.
// Anyone else's is 404, as if it did not exist.
func (s *Server) notificationPatch(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var b notificationPatchBody
	if err := rq.decode(&b); err != nil {
		return err
	}
	if b.Read == nil {
		return fieldError("read", "is required (true or false)")
	}
	var out notificationJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		var at *string
		if *b.Read {
			at = ptr(s.nowText())
		}
		if _, err := q.NotificationSetRead(rq.ctx, db.NotificationSetReadParams{ReadAt: at, ID: id, UserID: rq.user.ID}); db.IsNotFound(err) {
			return notFound("The notification does not exist.")
		} else if err != nil {
			return err
		}
		rows, err := q.NotificationListByIDs(rq.ctx, idsJSON([]int64{id}))
		if err != nil || len(rows) != 1 {
			return err
		}
		out = toNotification(rows[0])
		return nil
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

// notificationReadAll marks every unread notification of the caller read.
func (s *Server) notificationReadAll(rq *request) error {
	var n int64
	err := s.store.InTx(rq.ctx, func(q *db.Queries) error {
		var err error
		n, err = q.NotificationReadAll(rq.ctx, db.NotificationReadAllParams{ReadAt: ptr(s.nowText()), UserID: rq.user.ID})
		return err
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, map[string]int64{"marked": n, "unread_count": 0})
}

// quoted puts a name in quotes for a sentence, trimmed of surrounding space.
func quoted(s string) string { return "“" + strings.TrimSpace(s) + "”" }

// actorName names the person who caused an event in a sentence: their name,
// or "Someone" (an address is not shown to people who may not know it).
func actorName(ctx context.Context, q *db.Queries, id int64) (string, error) {
	u, err := q.UserGet(ctx, id)
	if db.IsNotFound(err) {
		return "Someone", nil
	}
	if err != nil {
		return "", err
	}
	if n := strings.TrimSpace(u.FirstName + " " + u.LastName); n != "" {
		return n, nil
	}
	return "Someone", nil
}

// whenText writes a stored time for a sentence read by userID: in the time
// zone of their account (UTC when they have not chosen one), named, so a
// site supervisor in Perth reads 15:00 AWST, not 07:00 UTC.
func whenText(ctx context.Context, q *db.Queries, userID int64, stored string) (string, error) {
	t, err := db.ParseTime(stored)
	if err != nil {
		return stored, nil
	}
	loc, tz, err := userZone(ctx, q, userID)
	if err != nil {
		return "", err
	}
	t = t.In(loc)
	return t.Format("Mon 2 Jan 2006 15:04") + " " + zoneName(t, tz), nil
}

// userZone is the time zone of userID's account and its name (UTC and ""
// when they have not chosen one, or the account is gone).
func userZone(ctx context.Context, q *db.Queries, userID int64) (*time.Location, string, error) {
	u, err := q.UserGet(ctx, userID)
	if err != nil && !db.IsNotFound(err) {
		return nil, "", err
	}
	loc, err := time.LoadLocation(u.TimezoneCode)
	if err != nil || u.TimezoneCode == "" {
		return time.UTC, "", nil
	}
	return loc, u.TimezoneCode, nil
}

// zoneName names a time's zone as people know it: its abbreviation where
// the zone has one (AWST, BST, UTC), else its city ("Dubai time") rather
// than an offset such as "+04".
func zoneName(t time.Time, tz string) string {
	abbr := t.Format("MST")
	if strings.IndexFunc(abbr, func(r rune) bool { return r < 'A' || r > 'Z' }) < 0 {
		return abbr
	}
	return strings.ReplaceAll(tz[strings.LastIndex(tz, "/")+1:], "_", " ") + " time"
}

// notifyOrgInvite tells the account holding the invite's address verified,
// if there is one, that an invitation waits (in the app only: the invite
// mails the address itself).
func (s *Server) notifyOrgInvite(ctx context.Context, q *db.Queries, inv db.Invite, o db.Organisation, actorID int64) error {
	u, err := q.UserGetByVerifiedEmail(ctx, inv.Email)
	if db.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	who, err := actorName(ctx, q, actorID)
	if err != nil {
		return err
	}
	return s.notify(ctx, q, notification{UserID: u.ID, ActorID: actorID, Kind: notifyOrgInvite, NoMail: true,
		Title: "You are invited to join " + o.Name,
		Body:  who + " invited you to join the organisation " + o.Name + ". Open the invitation to join it.",
		Link:  "/app/join/" + inv.Code})
}

// notifyToolboxInvite tells a person newly invited to a session of a
// toolbox talk (schedules of work items are not talks: no notification).
func (s *Server) notifyToolboxInvite(ctx context.Context, q *db.Queries, sc db.Schedule, userID, actorID int64) error {
	if sc.ToolboxID == nil || userID == actorID {
		return nil
	}
	t, err := q.ToolboxGet(ctx, *sc.ToolboxID)
	if err != nil {
		return err
	}
	who, err := actorName(ctx, q, actorID)
	if err != nil {
		return err
	}
	when, err := whenText(ctx, q, userID, sc.ScheduledStartAt)
	if err != nil {
		return err
	}
	return s.notify(ctx, q, notification{UserID: userID, ActorID: actorID, OrgID: sc.OrganisationID, Kind: notifyToolboxInvite,
		Title: "You are invited to the toolbox talk " + quoted(t.Title),
		Body: who + " invited you to the toolbox talk " + quoted(t.Title) + " on " + when +
			". Open it to check in, or to say you cannot come.",
		Link: "/app/sign/" + db.ID(t.ID).String()})
}

// notifyInductionAssigned tells a person an induction was assigned to them.
func (s *Server) notifyInductionAssigned(ctx context.Context, q *db.Queries, i db.Induction, r db.InductionRevision, ui db.UserInduction, actorID int64) error {
	who, err := actorName(ctx, q, actorID)
	if err != nil {
		return err
	}
	body := who + " asked you to complete the induction " + quoted(r.Name)
	if ui.DueAt != nil {
		when, err := whenText(ctx, q, ui.UserID, *ui.DueAt)
		if err != nil {
			return err
		}
		body += " by " + when
	}
	return s.notify(ctx, q, notification{UserID: ui.UserID, ActorID: actorID, OrgID: i.OrganisationID, Kind: notifyInduction,
		Title: "Induction to complete: " + r.Name, Body: body + ". Open it to complete it.",
		Link: "/app/me/inductions/" + db.ID(i.ID).String()})
}

// notifyAssignees tells the people newly assigned to a work item.
func (s *Server) notifyAssignees(ctx context.Context, q *db.Queries, w db.WorkItem, added []int64, actorID int64) error {
	if len(added) == 0 {
		return nil
	}
	who, err := actorName(ctx, q, actorID)
	if err != nil {
		return err
	}
	for _, id := range added {
		err := s.notify(ctx, q, notification{UserID: id, ActorID: actorID, OrgID: w.OrganisationID, Kind: notifyWorkItemAssign,
			Title: "Work item " + w.FormattedNumber + " assigned to you: " + w.Title,
			Body:  who + " assigned the work item " + w.FormattedNumber + " " + quoted(w.Title) + " to you.",
			Link:  "/app/workitems/" + db.ID(w.ID).String()})
		if err != nil {
			return err
		}
	}
	return nil
}

// notifyShareWaiting tells the user a share is addressed to (none for a
// share to an organisation) that it waits for their answer. what is "the
// fleet “Trucks”".
func (s *Server) notifyShareWaiting(ctx context.Context, q *db.Queries, recipient *int64, ownerOrgID, actorID int64, what string) error {
	if recipient == nil {
		return nil
	}
	o, err := q.OrganisationGet(ctx, ownerOrgID)
	if err != nil {
		return err
	}
	who, err := actorName(ctx, q, actorID)
	if err != nil {
		return err
	}
	return s.notify(ctx, q, notification{UserID: *recipient, ActorID: actorID, Kind: notifyShare,
		Title: o.Name + " shared " + what + " with you",
		Body:  who + " of " + o.Name + " shared " + what + " with you. Accept or decline it under Shared with me.",
		Link:  "/app/me/shares"})
}

// notifyMergeRequest tells a document's owner (its creator) that a merge
// request on it waits for their review.
func (s *Server) notifyMergeRequest(ctx context.Context, q *db.Queries, d db.Document, m db.DocumentMergeRequest, actorID int64) error {
	who, err := actorName(ctx, q, actorID)
	if err != nil {
		return err
	}
	return s.notify(ctx, q, notification{UserID: d.CreatedBy, ActorID: actorID, OrgID: d.OrganisationID, Kind: notifyMergeRequest,
		Title: "Merge request to review on " + d.FormattedNumber + ": " + m.Title,
		Body:  who + " asks to merge changes into your document " + d.FormattedNumber + " " + quoted(d.Title) + ": " + quoted(m.Title) + ". Open the document to review it.",
		Link:  "/app/documents/" + db.ID(d.ID).String()})
}
