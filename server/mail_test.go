package server

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"workspace/db"
)

// staff makes a Staff user (badge bit 31) with a token.
func (e *testEnv) staff(name string) *testUser {
	e.t.Helper()
	u, err := e.srv.createUser(context.Background(), strings.ToLower(name)+"@example.com", "", name, "Staff", BadgeStaff, true)
	if err != nil {
		e.t.Fatal(err)
	}
	return e.tokenFor(u)
}

// sendMail puts messages through the mailer in one transaction, as a handler does.
func (e *testEnv) sendMail(msgs ...message) {
	e.t.Helper()
	err := e.store.InTx(context.Background(), func(q *db.Queries) error {
		for _, m := range msgs {
			if err := e.srv.mailer.send(context.Background(), q, m); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		e.t.Fatal(err)
	}
}

func TestOutbox(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	root := e.staff("root")
	alice := e.user("alice")
	e.org(alice, "Acme") // an organisation owner is still not Staff
	e.sendMail(message{Kind: "email", Recipient: "a@example.com", Subject: "first", Body: "code 1"})
	e.clock.Advance(time.Second)
	e.sendMail(message{Kind: "sms", Recipient: "+15551234", Subject: "", Body: "code 2"},
		message{Kind: "email", Recipient: "c@example.com", Subject: "third", Body: "code 3"})

	e.run(t, []scenario{
		{name: "staff reads newest first", as: root, method: "GET", path: "/admin/outbox", want: 200, check: func(t *testing.T, r *testResponse) {
			a := r.arr(t)
			var got []string
			for _, m := range a {
				got = append(got, m["body"].(string))
			}
			if strings.Join(got, ",") != "code 3,code 2,code 1" {
				t.Fatalf("bodies = %v, want newest first: code 3, code 2, code 1", got)
			}
			first := a[0]
			if first["kind"] != "email" || first["recipient"] != "c@example.com" || first["subject"] != "third" || first["created_at"] != "2026-11-21T09:30:01.000Z" {
				t.Fatalf("message = %v", first)
			}
			if id, _ := first["id"].(string); id == "" {
				t.Fatalf("id = %v, want a snowflake string", first["id"])
			}
		}},
		{name: "not staff", as: alice, method: "GET", path: "/admin/outbox", want: 403},
		{name: "no token", method: "GET", path: "/admin/outbox", want: 401},
		{name: "wrong method", as: root, method: "POST", path: "/admin/outbox", body: map[string]any{}, want: 405},
	})
	t.Run("a rolled back transaction leaves no message", func(t *testing.T) {
		err := e.store.InTx(context.Background(), func(q *db.Queries) error {
			if err := e.srv.mailer.send(context.Background(), q, message{Kind: "email", Recipient: "x@example.com", Subject: "s", Body: "rolled back"}); err != nil {
				return err
			}
			return badRequest("no")
		})
		if err == nil {
			t.Fatal("want the transaction's error")
		}
		if body := string(e.must(200, root, "GET", "/admin/outbox", nil).Body); strings.Contains(body, "rolled back") {
			t.Fatal("the outbox holds a message whose transaction rolled back")
		}
	})
}

// fakeSMTP is a minimal SMTP server that records messages. hang makes it
// accept connections and never answer.
type fakeSMTP struct {
	ln   net.Listener
	hang bool
	mu   sync.Mutex
	got  []string // DATA of each message
	auth []string
}

func newFakeSMTP(t *testing.T, hang bool) *fakeSMTP {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeSMTP{ln: ln, hang: hang}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() { f.serve(c) })
		}
	})
	return f
}

func (f *fakeSMTP) serve(c net.Conn) {
	defer c.Close()
	if f.hang {
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		_, _ = bufio.NewReader(c).ReadString(0) // until the client gives up
		return
	}
	r := bufio.NewReader(c)
	say := func(s string) { fmt.Fprintf(c, "%s\r\n", s) }
	say("220 fake ESMTP")
	var data strings.Builder
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		cmd := strings.ToUpper(strings.TrimSpace(line))
		switch {
		case strings.HasPrefix(cmd, "EHLO"):
			say("250-fake")
			say("250 AUTH PLAIN")
		case strings.HasPrefix(cmd, "AUTH"):
			f.mu.Lock()
			f.auth = append(f.auth, strings.TrimSpace(line))
			f.mu.Unlock()
			say("235 ok")
		case strings.HasPrefix(cmd, "MAIL"), strings.HasPrefix(cmd, "RCPT"):
			say("250 ok")
		case cmd == "DATA":
			say("354 go on")
			data.Reset()
			for {
				l, err := r.ReadString('\n')
				if err != nil {
					return
				}
				if l == ".\r\n" {
					break
				}
				data.WriteString(l)
			}
			f.mu.Lock()
			f.got = append(f.got, data.String())
			f.mu.Unlock()
			say("250 queued")
		case cmd == "QUIT":
			say("221 bye")
			return
		default:
			say("250 ok")
		}
	}
}

func (f *fakeSMTP) messages() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.got...)
}

func outboxCount(t *testing.T, e *testEnv) int {
	t.Helper()
	var n int
	if err := e.store.Reader.QueryRow(`SELECT count(*) FROM outbox`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestSMTPDelivery(t *testing.T) {
	t.Run("delivered, not kept in the outbox", func(t *testing.T) {
		smtpd := newFakeSMTP(t, false)
		e := newEnv(t, func(c *Config) { c.SMTPURL = "smtp://" + smtpd.ln.Addr().String() + "?from=noreply@example.com" })
		e.sendMail(message{Kind: "email", Recipient: "to@example.com", Subject: "Hello\r\nBcc: evil@example.com", Body: "line one\nline two"})
		got := smtpd.messages()
		if len(got) != 1 {
			t.Fatalf("delivered %d messages, want 1", len(got))
		}
		m := got[0]
		for _, want := range []string{"From: noreply@example.com\r\n", "To: to@example.com\r\n", "line one\r\nline two"} {
			if !strings.Contains(m, want) {
				t.Errorf("message lacks %q:\n%s", want, m)
			}
		}
		if strings.Contains(m, "\r\nBcc:") {
			t.Errorf("a subject injected a header:\n%s", m)
		}
		if n := outboxCount(t, e); n != 0 {
			t.Fatalf("outbox = %d, want 0 for delivered mail", n)
		}
	})
	t.Run("SMS goes to the outbox even with SMTP", func(t *testing.T) {
		smtpd := newFakeSMTP(t, false)
		e := newEnv(t, func(c *Config) { c.SMTPURL = "smtp://" + smtpd.ln.Addr().String() })
		e.sendMail(message{Kind: "sms", Recipient: "+15550000", Body: "123456"})
		if len(smtpd.messages()) != 0 || outboxCount(t, e) != 1 {
			t.Fatalf("smtp %d, outbox %d; want 0, 1", len(smtpd.messages()), outboxCount(t, e))
		}
	})
	t.Run("server down: kept in the outbox", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		e := newEnv(t, func(c *Config) { c.SMTPURL = "smtp://" + addr })
		e.sendMail(message{Kind: "email", Recipient: "to@example.com", Subject: "s", Body: "b"})
		if n := outboxCount(t, e); n != 1 {
			t.Fatalf("outbox = %d, want 1", n)
		}
	})
	t.Run("silent server: gives up within the timeout", func(t *testing.T) {
		old := smtpTimeout
		smtpTimeout = 300 * time.Millisecond
		t.Cleanup(func() { smtpTimeout = old })
		smtpd := newFakeSMTP(t, true)
		e := newEnv(t, func(c *Config) { c.SMTPURL = "smtp://" + smtpd.ln.Addr().String() })
		start := time.Now()
		e.sendMail(message{Kind: "email", Recipient: "to@example.com", Subject: "s", Body: "b"})
		if d := time.Since(start); d > 3*time.Second {
			t.Fatalf("send took %v with a silent server, want about the timeout", d)
		}
		if n := outboxCount(t, e); n != 1 {
			t.Fatalf("outbox = %d, want 1", n)
		}
	})
	t.Run("invalid SMTP URL is a start-up error", func(t *testing.T) {
		for _, u := range []string{"localhost:25", "http://mail.example.com", "smtp://"} {
			store := newEnv(t).store
			if _, err := New(context.Background(), store, Config{SMTPURL: u}); err == nil {
				t.Errorf("%q: want an error", u)
			}
		}
	})
}

// TestOutboxKeepsSecretsOutOfTheLog: without SMTP, a verification token
// reaches the outbox but not the log.
func TestOutboxKeepsSecretsOutOfTheLog(t *testing.T) {
	t.Parallel()
	logs := &syncBuffer{}
	e := newEnv(t, func(c *Config) { c.Logger = slog.New(slog.NewTextHandler(logs, nil)) })
	alice := e.user("alice")
	e.must(http.StatusCreated, alice, "POST", "/users/@me/emails", map[string]any{"email": "alice.second@example.com"})
	var body string
	if err := e.store.Reader.QueryRow(`SELECT body FROM outbox ORDER BY id DESC LIMIT 1`).Scan(&body); err != nil {
		t.Fatal(err)
	}
	_, token, ok := strings.Cut(body, "token=")
	token, _, _ = strings.Cut(token, "\n")
	if !ok || len(token) < 10 {
		t.Fatalf("outbox body holds no token: %q", body)
	}
	out := logs.String()
	if !strings.Contains(out, "message queued in the outbox") {
		t.Errorf("the log does not say a message was queued: %s", out)
	}
	if strings.Contains(out, token) {
		t.Errorf("the verification token reached the log")
	}
}
