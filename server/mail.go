package server

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net"
	"net/smtp"
	"net/textproto"
	"net/url"
	"strings"
	"time"

	"workspace/db"
)

// message is one e-mail or SMS. Body is the plain text; an e-mail with
// HTML goes out as multipart/alternative (text first, so a reader that
// shows one part shows the HTML and a plain one the text). Link is the one
// place in the app the message sends its reader to, kept in the outbox.
// mailText (mailtext.go) writes all three from one template.
type message struct {
	Kind      string // "email" or "sms"
	Recipient string
	Subject   string
	Body      string
	HTML      string // optional
	Link      string // optional
}

// mailer delivers mail through SMTP when configured; otherwise every message
// goes to the log and the outbox, which Staff read at GET /admin/outbox.
type mailer struct {
	smtp  *url.URL    // nil: no SMTP; New has checked it
	sms   *smsGateway // nil: no SMS gateway (sms.go)
	store *db.Store
	log   *slog.Logger
	now   func() time.Time
}

// send delivers msg. Call it inside the handler's transaction with its
// queries, so the outbox row commits (or not) with the change it reports.
// SMS goes through the SMS gateway when one is configured, by the same
// rule: one try, and the outbox when it fails.
func (m *mailer) send(ctx context.Context, q *db.Queries, msg message) error {
	if m.smtp != nil && msg.Kind == "email" {
		if err := m.sendSMTP(ctx, msg); err != nil {
			m.log.Error("smtp send failed; message kept in the outbox", "err", err, "to", msg.Recipient)
		} else {
			return nil
		}
	}
	if m.sms != nil && msg.Kind == "sms" {
		if err := m.sms.send(ctx, msg.Recipient, msg.Body); err != nil {
			m.log.Error("sms send failed; message kept in the outbox", "err", err, "to", msg.Recipient)
		} else {
			return nil
		}
	}
	// The body holds verification codes and tokens: they stay in the
	// outbox (Staff only) and never reach the log.
	m.log.Info("message queued in the outbox", "kind", msg.Kind, "to", msg.Recipient, "subject", msg.Subject)
	return q.OutboxCreate(ctx, db.OutboxCreateParams{
		ID: m.store.IDs.Next(), Kind: msg.Kind, Recipient: msg.Recipient,
		Subject: msg.Subject, Body: msg.Body, Html: msg.HTML, Link: msg.Link, CreatedAt: db.FormatTime(m.now()),
	})
}

// smtpTimeout bounds one delivery: send runs inside the caller's write
// transaction, so a silent mail server must not hold the writer for long.
var smtpTimeout = 10 * time.Second

// sendSMTP delivers one message like smtp.SendMail (STARTTLS when offered,
// AUTH when the URL has a user), but with a deadline on the whole exchange.
// smtps:// connects with TLS from the start.
func (m *mailer) sendSMTP(ctx context.Context, msg message) error {
	host := m.smtp.Host
	if _, _, err := net.SplitHostPort(host); err != nil {
		port := "25"
		if m.smtp.Scheme == "smtps" {
			port = "465"
		}
		host = net.JoinHostPort(host, port)
	}
	name, _, _ := net.SplitHostPort(host)
	ctx, cancel := context.WithTimeout(ctx, smtpTimeout)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", host)
	if err != nil {
		return err
	}
	defer conn.Close()
	deadline, _ := ctx.Deadline()
	if err := conn.SetDeadline(deadline); err != nil {
		return err
	}
	if m.smtp.Scheme == "smtps" {
		conn = tls.Client(conn, &tls.Config{ServerName: name})
	}
	c, err := smtp.NewClient(conn, name)
	if err != nil {
		return err
	}
	defer c.Close()
	if ok, _ := c.Extension("STARTTLS"); ok && m.smtp.Scheme != "smtps" {
		if err := c.StartTLS(&tls.Config{ServerName: name}); err != nil {
			return err
		}
	}
	if m.smtp.User != nil {
		pw, _ := m.smtp.User.Password()
		if err := c.Auth(smtp.PlainAuth("", m.smtp.User.Username(), pw, name)); err != nil {
			return err
		}
	}
	from := m.smtp.Query().Get("from")
	if from == "" {
		from = "workspace@localhost"
	}
	if err := c.Mail(from); err != nil {
		return err
	}
	if err := c.Rcpt(msg.Recipient); err != nil {
		return err
	}
	w, err := c.Data()
	if err != nil {
		return err
	}
	if _, err := w.Write(m.compose(from, msg)); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	return c.Quit()
}

// compose writes the message's header and body: plain text alone, or
// multipart/alternative with the HTML. Both parts are quoted-printable, so
// long lines and non-ASCII names travel through any relay.
func (m *mailer) compose(from string, msg message) []byte {
	clean := func(s string) string { return strings.NewReplacer("\r", " ", "\n", " ").Replace(s) }
	var b bytes.Buffer
	fmt.Fprintf(&b, "From: %s\r\nTo: %s\r\nSubject: %s\r\nDate: %s\r\nMIME-Version: 1.0\r\n",
		clean(from), clean(msg.Recipient), mime.QEncoding.Encode("utf-8", clean(msg.Subject)), m.now().Format(time.RFC1123Z))
	part := func(w io.Writer, text string) {
		qp := quotedprintable.NewWriter(w)
		_, _ = qp.Write([]byte(strings.ReplaceAll(text, "\n", "\r\n")))
		_ = qp.Close()
	}
	if msg.HTML == "" {
		b.WriteString("Content-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n")
		part(&b, msg.Body)
		b.WriteString("\r\n")
		return b.Bytes()
	}
	mw := multipart.NewWriter(&b)
	fmt.Fprintf(&b, "Content-Type: multipart/alternative; boundary=%q\r\n\r\n", mw.Boundary())
	for _, p := range []struct{ typ, text string }{{"text/plain", msg.Body}, {"text/html", msg.HTML}} {
		w, _ := mw.CreatePart(textproto.MIMEHeader{
			"Content-Type":              {p.typ + "; charset=utf-8"},
			"Content-Transfer-Encoding": {"quoted-printable"},
		})
		part(w, p.text)
	}
	_ = mw.Close()
	return b.Bytes()
}

type outboxJSON struct {
	ID        db.ID  `json:"id"`
	Kind      string `json:"kind"`
	Recipient string `json:"recipient"`
	Subject   string `json:"subject"`
	Body      string `json:"body"`
	HTML      string `json:"html"`
	Link      string `json:"link"`
	CreatedAt string `json:"created_at"`
}

// outboxList shows the newest messages to Staff.
func (s *Server) outboxList(rq *request) error {
	// Staff only: the route checks (routes.go, staff).
	rows, err := s.store.R.OutboxList(rq.ctx, 1000)
	if err != nil {
		return err
	}
	out := make([]outboxJSON, len(rows))
	for i, r := range rows {
		out[i] = outboxJSON{ID: db.ID(r.ID), Kind: r.Kind, Recipient: r.Recipient, Subject: r.Subject, Body: r.Body, HTML: r.Html, Link: r.Link, CreatedAt: r.CreatedAt}
	}
	return rq.json(200, out)
}
