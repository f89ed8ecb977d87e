package server

import (
	"bytes"
	"context"
	htmltemplate "html/template"
	"net/url"
	"strings"
	texttemplate "text/template"
	"time"

	"workspace/db"
)

// Every mail the server sends is written here (issue 36, docs/mail.md): a
// subject, a few sentences saying who did what and what to do, and one link
// into the app that does it. The same content becomes the plain text and
// the HTML part (html/template escapes every value), so the two never say
// different things. No mail names an API path or asks to copy a token: the
// link carries what the app needs. Golden files: server/testdata/mail/.

// mailContent is what one mail says.
type mailContent struct {
	Org    *mailOrg // the organisation it is about; nil for account mails
	Lines  []string // paragraphs: who did what, what to do
	Action string   // the link's words ("Join Acme")
	Link   string   // absolute, on the public URL
	Note   string   // small print: how long the link works, why this came
}

// mailOrg names an organisation in a mail; Logo is its logo's URL, if any.
type mailOrg struct {
	Name string
	Logo string
}

var mailTextTemplate = texttemplate.Must(texttemplate.New("text").Parse(
	`{{with .Org}}{{.Name}}

{{end}}{{range .Lines}}{{.}}

{{end}}{{if .Link}}{{.Action}}:
{{.Link}}
{{end}}{{with .Note}}
{{.}}
{{end}}`))

// The HTML keeps to what mail readers render: inline styles, one table for
// width, no script, no external CSS; the logo is the only remote image.
var mailHTMLTemplate = htmltemplate.Must(htmltemplate.New("html").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>{{.Subject}}</title></head>
<body style="margin:0;padding:0;background:#f4f5f7;font-family:system-ui,-apple-system,'Segoe UI',sans-serif;color:#1b1f24">
<table role="presentation" width="100%" cellpadding="0" cellspacing="0" style="background:#f4f5f7"><tr><td align="center" style="padding:24px 12px">
<table role="presentation" width="100%" cellpadding="0" cellspacing="0" style="max-width:560px;background:#ffffff;border-radius:8px"><tr><td style="padding:24px">
{{- with .C.Org}}
<p style="margin:0 0 16px;font-weight:600;font-size:18px">{{if .Logo}}<img src="{{.Logo}}" alt="" height="40" style="height:40px;max-width:160px;vertical-align:middle;margin-right:8px">{{end}}{{.Name}}</p>
{{- end}}
{{- range .C.Lines}}
<p style="margin:0 0 16px;font-size:16px;line-height:1.5">{{.}}</p>
{{- end}}
{{- if .C.Link}}
<p style="margin:24px 0"><a href="{{.C.Link}}" style="display:inline-block;padding:12px 20px;background:#1d4ed8;color:#ffffff;text-decoration:none;border-radius:4px;font-weight:600">{{.C.Action}}</a></p>
<p style="margin:0 0 16px;font-size:13px;color:#4b5563">If the button does not work, open this address: <a href="{{.C.Link}}" style="color:#1d4ed8;word-break:break-all">{{.C.Link}}</a></p>
{{- end}}
{{- with .C.Note}}
<p style="margin:16px 0 0;font-size:13px;color:#4b5563">{{.}}</p>
{{- end}}
</td></tr></table>
</td></tr></table>
</body></html>
`))

// composeMail renders one e-mail to recipient.
func composeMail(recipient, subject string, c mailContent) message {
	var text, html bytes.Buffer
	if err := mailTextTemplate.Execute(&text, c); err != nil {
		panic(err) // the templates only read fields mailContent has
	}
	if err := mailHTMLTemplate.Execute(&html, struct {
		Subject string
		C       mailContent
	}{subject, c}); err != nil {
		panic(err)
	}
	return message{Kind: "email", Recipient: recipient, Subject: subject, Body: text.String(), HTML: html.String(), Link: c.Link}
}

// appLink is an absolute link to path on the public URL, with query.
func (s *Server) appLink(path string, query url.Values) string {
	u := s.cfg.PublicURL + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	return u
}

// mailOrgOf names o, with its logo when it has one.
func (s *Server) mailOrgOf(o db.Organisation) *mailOrg {
	m := &mailOrg{Name: o.Name}
	if o.LogoHash != nil && *o.LogoHash != "" {
		m.Logo = s.cfg.PublicURL + orgImagesPath + *o.LogoHash
	}
	return m
}

// personName is how a mail names a user: their name, else their address.
func personName(u db.User) string {
	if n := strings.TrimSpace(u.FirstName + " " + u.LastName); n != "" {
		return n
	}
	return u.Email
}

// mailActorOrg loads who made a change and its organisation, to name them.
func mailActorOrg(ctx context.Context, q *db.Queries, actorID, orgID int64) (db.User, db.Organisation, error) {
	actor, err := q.UserGet(ctx, actorID)
	if err != nil {
		return actor, db.Organisation{}, err
	}
	o, err := q.OrganisationGet(ctx, orgID)
	return actor, o, err
}

// localDate writes t's day in t's own zone: the recipient's, where the
// sender knows it (induction reminders).
func localDate(t time.Time) string { return t.Format("Monday 2 January 2006") }

// inviteUntil writes when an invitation stops working for someone who may
// have no account (so no zone of their own): the day and time in the
// inviter's zone, named ("15:00 AWST", "15:00 Dubai time", "15:00 UTC"), so
// a reader anywhere can work it out; a bare UTC date was a day off for half
// the world.
func inviteUntil(t time.Time, tz string) string {
	loc, err := time.LoadLocation(tz)
	if err != nil || tz == "" {
		loc, tz = time.UTC, ""
	}
	t = t.In(loc)
	out := localDate(t) + " at " + t.Format("15:04") + " " + zoneName(t, tz)
	if city := strings.ReplaceAll(tz[strings.LastIndex(tz, "/")+1:], "_", " "); strings.Contains(tz, "/") && !strings.HasSuffix(out, " time") {
		// An abbreviation alone can be ambiguous (CST): add the place.
		out += " (" + city + " time)"
	}
	return out
}

// The mails, one function each: what they say lives here and nowhere else.

func (s *Server) mailInvite(inviter db.User, o db.Organisation, inv db.Invite) message {
	note := "The invitation is for " + inv.Email + ": sign in or create an account with that address to accept it."
	if inv.ExpiresAt != nil {
		if t, err := db.ParseTime(*inv.ExpiresAt); err == nil {
			note += " It works until " + inviteUntil(t, inviter.TimezoneCode) + "."
		}
	}
	note += " If you did not expect it, you can ignore this mail."
	return composeMail(inv.Email, personName(inviter)+" invited you to join "+o.Name, mailContent{
		Org: s.mailOrgOf(o),
		Lines: []string{
			personName(inviter) + " invited you to join " + o.Name + " on Workspace.",
			"Open the invitation to accept it. If you are new, you can create an account there.",
		},
		Action: "Open the invitation", Link: s.appLink("/app/join/"+inv.Code, nil), Note: note,
	})
}

func (s *Server) mailConfirmAddress(e db.UserEmail, token string) message {
	return composeMail(e.Email, "Confirm your e-mail address", mailContent{
		Lines: []string{
			"Please confirm that " + e.Email + " is your address, so you can use it to join organisations and receive their mail.",
		},
		Action: "Confirm my address",
		Link:   s.appLink("/app/confirm-email/"+db.ID(e.ID).String(), url.Values{"token": {token}}),
		Note:   "The link works for 24 hours. If you did not add this address to an account, you can ignore this mail.",
	})
}

func (s *Server) mailAddressRemoved(to, removed string) message {
	return composeMail(to, "An address was removed from your account", mailContent{
		Lines: []string{
			removed + " was on your account but never confirmed. Its owner has now confirmed it on their own account, so it was removed from yours.",
			"You can check the addresses on your account at any time.",
		},
		Action: "Open my account", Link: s.appLink("/app/account", nil),
	})
}

func (s *Server) mailConfirmDeletion(u db.User, token string) message {
	return composeMail(u.Email, "Confirm that you want to delete your account", mailContent{
		Lines: []string{
			"Someone signed in as " + u.Email + " asked to delete this account. If that was you, open the link to confirm.",
			"Deleting the account removes your name, addresses and sign-in for good.",
		},
		Action: "Confirm account deletion",
		Link:   s.appLink("/app/account/delete", url.Values{"token": {token}}),
		Note:   "The link works for 24 hours. If you did not ask for this, ignore this mail: nothing is deleted without it, and you may want to change your password.",
	})
}

func (s *Server) mailPasswordReset(u db.User, token string, byStaff bool) message {
	first := "Someone asked to reset the password of the Workspace account " + u.Email + ". If that was you, open the link and choose a new password."
	if byStaff {
		first = "An administrator of this Workspace server sent you a link to choose a new password for the account " + u.Email + "."
	}
	return composeMail(u.Email, "Choose a new password", mailContent{
		Lines:  []string{first, "Choosing a new password signs the account out on every device."},
		Action: "Choose a new password",
		Link:   s.appLink("/auth/reset", url.Values{"token": {token}}),
		Note:   "The link works once, for one hour. If you did not ask for it, you can ignore this mail: your password stays as it is.",
	})
}

// mailInductionReminder: kind is due, overdue or expiring (reminderFor);
// day is in the recipient's time zone.
func (s *Server) mailInductionReminder(r db.InductionReminderCandidatesRow, kind string, day time.Time) message {
	o := &mailOrg{Name: r.OrgName}
	if r.OrgLogoHash != nil && *r.OrgLogoHash != "" {
		o.Logo = s.cfg.PublicURL + orgImagesPath + *r.OrgLogoHash
	}
	var subject, line string
	switch kind {
	case "expiring":
		subject = "Your induction expires soon: " + r.Name
		line = "Your induction “" + r.Name + "” for " + r.OrgName + " expires on " + localDate(day) + ". Please complete it again before then."
	case "overdue":
		subject = "Your induction is overdue: " + r.Name
		line = "Your induction “" + r.Name + "” for " + r.OrgName + " was due on " + localDate(day) + ". Please complete it now."
	default:
		subject = "Your induction is due soon: " + r.Name
		line = "Your induction “" + r.Name + "” for " + r.OrgName + " is due on " + localDate(day) + "."
	}
	return composeMail(r.Email, subject, mailContent{
		Org: o, Lines: []string{line, "It takes a few minutes on your phone or computer."},
		Action: "Open the induction", Link: s.appLink("/app/me/inductions/"+db.ID(r.InductionID).String(), nil),
		Note: "You get this because " + r.OrgName + " assigned the induction to you.",
	})
}

func (s *Server) mailWorkItemStatus(to string, actor db.User, o db.Organisation, w db.WorkItem) message {
	return composeMail(to, "Work item "+w.FormattedNumber+" is now "+w.Status, mailContent{
		Org:    s.mailOrgOf(o),
		Lines:  []string{personName(actor) + " changed the status of " + w.FormattedNumber + " “" + w.Title + "” to " + w.Status + "."},
		Action: "Open the work item", Link: s.appLink("/app/workitems/"+db.ID(w.ID).String(), nil),
		Note: "You get this because you follow this work item.",
	})
}

func (s *Server) mailFleetWorkItem(to string, actor db.User, o db.Organisation, w db.WorkItem) message {
	return composeMail(to, "New work item "+w.FormattedNumber+" on a fleet you follow", mailContent{
		Org:    s.mailOrgOf(o),
		Lines:  []string{personName(actor) + " created the work item " + w.FormattedNumber + " “" + w.Title + "” on a fleet you follow."},
		Action: "Open the work item", Link: s.appLink("/app/workitems/"+db.ID(w.ID).String(), nil),
		Note: "You get this because you subscribed to the fleet.",
	})
}
