package main

import (
	"context"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net"
	"net/http"
	"net/mail"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// aiosmtpdPython finds a python3 with Debian's python3-aiosmtpd (.ci/run
// installs it): /usr/bin/python3 first, as a PATH python (pyenv) may lack
// the system's packages.
func aiosmtpdPython() string {
	for _, p := range []string{"/usr/bin/python3", "python3"} {
		if exec.Command(p, "-c", "import aiosmtpd").Run() == nil {
			return p
		}
	}
	return ""
}

// receivedMail is one message the SMTP server got, parsed.
type receivedMail struct {
	header     mail.Header
	text, html string
}

// readMaildir parses every message in dir/new with net/mail and
// mime/multipart.
func readMaildir(t *testing.T, dir string) []receivedMail {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "new", "*"))
	var out []receivedMail
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		m, err := mail.ReadMessage(strings.NewReader(string(raw)))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		got := receivedMail{header: m.Header}
		mt, params, err := mime.ParseMediaType(m.Header.Get("Content-Type"))
		if err != nil || mt != "multipart/alternative" {
			t.Fatalf("Content-Type %q (%v), want multipart/alternative", m.Header.Get("Content-Type"), err)
		}
		r := multipart.NewReader(m.Body, params["boundary"])
		for {
			p, err := r.NextRawPart()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			var body io.Reader = p
			if strings.EqualFold(p.Header.Get("Content-Transfer-Encoding"), "quoted-printable") {
				body = quotedprintable.NewReader(p)
			}
			b, err := io.ReadAll(body)
			if err != nil {
				t.Fatal(err)
			}
			pt, _, _ := mime.ParseMediaType(p.Header.Get("Content-Type"))
			switch pt {
			case "text/plain":
				got.text = string(b)
			case "text/html":
				got.html = string(b)
			}
		}
		out = append(out, got)
	}
	return out
}

// TestMailThroughSMTP runs a real SMTP server (aiosmtpd, saving to a
// Maildir), points `serve --smtp-url` at it, and reads what arrived: both
// parts, the link on the public URL, no API path, and the link works.
func TestMailThroughSMTP(t *testing.T) {
	t.Parallel()
	py := aiosmtpdPython()
	if py == "" {
		t.Skip("python3-aiosmtpd is not installed (apt-get install python3-aiosmtpd; .ci/run does)")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	smtpAddr := ln.Addr().String()
	ln.Close()
	box := filepath.Join(t.TempDir(), "maildir")
	ctx, cancel := context.WithCancel(context.Background())
	smtpd := exec.CommandContext(ctx, py, "-m", "aiosmtpd", "-n", "-l", smtpAddr, "-c", "aiosmtpd.handlers.Mailbox", box)
	smtpd.Stdout, smtpd.Stderr = io.Discard, io.Discard
	if err := smtpd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); _ = smtpd.Wait() })
	waitFor(t, "the SMTP server", func() bool {
		c, err := net.Dial("tcp", smtpAddr)
		if err == nil {
			c.Close()
		}
		return err == nil
	})

	const public = "https://work.example.com"
	s := startServe(t, "--db", servedDB(t, filepath.Join(t.TempDir(), "ws.db")), "--synchronous", "NORMAL",
		"--smtp-url", "smtp://"+smtpAddr+"?from=workspace@example.com", "--public-url", public)
	if st, body, _ := call(t, "POST", s.base+"/auth/register", "", "application/json", `{"email":"mia@example.com","password":"mia-password"}`); st != http.StatusCreated {
		t.Fatalf("register: %d %v", st, body)
	}
	var got []receivedMail
	waitFor(t, "the confirmation mail", func() bool { got = readMaildir(t, box); return len(got) == 1 })
	linkRE := regexp.MustCompile(regexp.QuoteMeta(public) + `/app/confirm-email/([0-9]+)\?token=([A-Za-z0-9_-]+)`)
	check := func(m receivedMail, subject string, link *regexp.Regexp) []string {
		t.Helper()
		if m.header.Get("To") != "mia@example.com" || m.header.Get("Subject") != subject || m.header.Get("From") != "workspace@example.com" {
			t.Errorf("header %v", m.header)
		}
		found := link.FindStringSubmatch(m.text)
		if found == nil || !strings.Contains(m.html, `href="`+found[0]+`"`) {
			t.Fatalf("the link is not in both parts:\n%s\n%s", m.text, m.html)
		}
		for _, part := range []string{m.text, m.html} {
			if strings.Contains(part, "/users/@me") || strings.Contains(part, "email_token") || strings.Contains(part, s.addr) {
				t.Errorf("a part names an API path or the listen address:\n%s", part)
			}
		}
		if !strings.Contains(m.html, "<!doctype html>") {
			t.Errorf("the HTML part is not HTML: %s", m.html)
		}
		return found
	}
	found := check(got[0], "Confirm your e-mail address", linkRE)
	tok := signIn(t, s.base, "mia@example.com", "mia-password")
	// What the app does with the link: confirm the address with its token.
	if st, body, _ := call(t, "PATCH", s.base+"/users/@me/emails/"+found[1], tok, "application/json", `{"email_token":"`+found[2]+`"}`); st != http.StatusOK || body["is_verified"] != true {
		t.Fatalf("confirming with the mailed link's token: %d %v", st, body)
	}

	// The reset mail of the sign-in page's "Forgot password?".
	form := url.Values{"email": {"mia@example.com"}}.Encode()
	if st, _, _ := call(t, "POST", s.base+"/auth/forgot", "", "application/x-www-form-urlencoded", form); st != http.StatusOK {
		t.Fatalf("forgot: %d", st)
	}
	waitFor(t, "the reset mail", func() bool { got = readMaildir(t, box); return len(got) == 2 })
	for _, m := range got {
		if m.header.Get("Subject") == "Choose a new password" {
			check(m, "Choose a new password", regexp.MustCompile(regexp.QuoteMeta(public)+`/auth/reset\?token=[A-Za-z0-9_-]+`))
		}
	}
}
