package server

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/smtp"
	"net/url"
	"strings"
	"time"

	"workspace/db"
)

// message is one e-mail or SMS.
type message struct {
	Kind      string // "email" or "sms"
	Recipient string
	Subject   string
	Body      string
}

// mailer delivers mail through SMTP when configured; otherwise every message
// goes to the log and the outbox, which Staff read at GET /admin/outbox.
type mailer struct {
	smtp  *url.URL
	store *db.Store
	log   *slog.Logger
	now   func() time.Time
}

func newMailer(smtpURL string, store *db.Store, log *slog.Logger, now func() time.Time) *mailer {
	m := &mailer{store: store, log: log, now: now}
	if smtpURL != "" {
		if u, err := url.Parse(smtpURL); err == nil && u.Host != "" {
			m.smtp = u
		} else if log != nil {
			log.Warn("ignoring invalid --smtp-url; mail goes to the outbox")
		}
	}
	return m
}

// send delivers msg. Call it inside the handler's transaction with its
// queries, so the outbox row commits (or not) with the change it reports.
// SMS always goes to the outbox: there is no SMS gateway to configure.
func (m *mailer) send(ctx context.Context, q *db.Queries, msg message) error {
	if m.smtp != nil && msg.Kind == "email" {
		if err := m.sendSMTP(msg); err != nil {
			m.log.Error("smtp send failed; message kept in the outbox", "err", err, "to", msg.Recipient)
		} else {
			return nil
		}
	}
	m.log.Info("outbox", "kind", msg.Kind, "to", msg.Recipient, "subject", msg.Subject, "body", msg.Body)
	return q.OutboxCreate(ctx, db.OutboxCreateParams{
		ID: m.store.IDs.Next(), Kind: msg.Kind, Recipient: msg.Recipient,
		Subject: msg.Subject, Body: msg.Body, CreatedAt: db.FormatTime(m.now()),
	})
}

func (m *mailer) sendSMTP(msg message) error {
	host := m.smtp.Host
	if _, _, err := net.SplitHostPort(host); err != nil {
		host = net.JoinHostPort(host, "25")
	}
	from := m.smtp.Query().Get("from")
	if from == "" {
		from = "workspace@localhost"
	}
	var auth smtp.Auth
	if m.smtp.User != nil {
		pw, _ := m.smtp.User.Password()
		h, _, _ := net.SplitHostPort(host)
		auth = smtp.PlainAuth("", m.smtp.User.Username(), pw, h)
	}
	clean := func(s string) string { return strings.NewReplacer("\r", " ", "\n", " ").Replace(s) }
	body := fmt.Sprintf("From: %s\r\nTo: %s\r\nSubject: %s\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n%s\r\n",
		clean(from), clean(msg.Recipient), clean(msg.Subject), msg.Body)
	return smtp.SendMail(host, auth, from, []string{msg.Recipient}, []byte(body))
}

type outboxJSON struct {
	ID        db.ID  `json:"id"`
	Kind      string `json:"kind"`
	Recipient string `json:"recipient"`
	Subject   string `json:"subject"`
	Body      string `json:"body"`
	CreatedAt string `json:"created_at"`
}

// outboxList shows the newest messages to Staff.
func (s *Server) outboxList(rq *request) error {
	if rq.user.Badges&BadgeStaff == 0 {
		return forbidden("Only Staff may read the outbox.")
	}
	rows, err := s.store.R.OutboxList(rq.ctx, 1000)
	if err != nil {
		return err
	}
	out := make([]outboxJSON, len(rows))
	for i, r := range rows {
		out[i] = outboxJSON{ID: db.ID(r.ID), Kind: r.Kind, Recipient: r.Recipient, Subject: r.Subject, Body: r.Body, CreatedAt: r.CreatedAt}
	}
	return rq.json(200, out)
}
