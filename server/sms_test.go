package server

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"workspace/db"
)

// fakeGateway records the requests an SMS gateway receives and answers
// status.
type fakeGateway struct {
	mu     sync.Mutex
	reqs   []*http.Request
	bodies [][]byte
	status int
	srv    *httptest.Server
}

func newFakeGateway(t *testing.T, status int) *fakeGateway {
	g := &fakeGateway{status: status}
	g.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		g.mu.Lock()
		g.reqs, g.bodies = append(g.reqs, r), append(g.bodies, b)
		g.mu.Unlock()
		w.WriteHeader(g.status)
		_, _ = w.Write([]byte(`{}`))
	}))
	t.Cleanup(g.srv.Close)
	return g
}

func (g *fakeGateway) got() ([]*http.Request, [][]byte) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]*http.Request(nil), g.reqs...), append([][]byte(nil), g.bodies...)
}

// phoneCodeVia asks for a phone code as a new user with a number, through
// the server's route, and returns the user.
func phoneCodeVia(t *testing.T, e *testEnv) *testUser {
	u := e.user("walt")
	e.must(200, u, "PATCH", "/users/@me", map[string]any{"phone_number": "+15550001234"})
	e.must(200, u, "POST", "/users/@me/verify-phone-number", nil)
	return u
}

func TestSMSGatewayTwilio(t *testing.T) {
	t.Parallel()
	g := newFakeGateway(t, http.StatusCreated)
	e := newEnv(t, func(c *Config) {
		c.SMSURL = "twilio://AC123:secret-token@api.twilio.com?from=%2B15559990000&base_url=" + url.QueryEscape(g.srv.URL)
	})
	phoneCodeVia(t, e)
	reqs, bodies := g.got()
	if len(reqs) != 1 {
		t.Fatalf("gateway got %d requests, want 1", len(reqs))
	}
	r := reqs[0]
	if r.Method != "POST" || r.URL.Path != "/2010-04-01/Accounts/AC123/Messages.json" || r.Header.Get("Content-Type") != "application/x-www-form-urlencoded" {
		t.Fatalf("request %s %s %s", r.Method, r.URL.Path, r.Header.Get("Content-Type"))
	}
	if user, pass, ok := r.BasicAuth(); !ok || user != "AC123" || pass != "secret-token" {
		t.Fatalf("basic auth %q %q %v", user, pass, ok)
	}
	form, err := url.ParseQuery(string(bodies[0]))
	if err != nil {
		t.Fatal(err)
	}
	if form.Get("To") != "+15550001234" || form.Get("From") != "+15559990000" || !strings.Contains(form.Get("Body"), "Code: ") {
		t.Fatalf("form %v", form)
	}
	if n := outboxCount(t, e); n != 0 {
		t.Fatalf("outbox %d, want 0 for a delivered text", n)
	}
}

func TestSMSGatewayWebhook(t *testing.T) {
	t.Parallel()
	g := newFakeGateway(t, http.StatusOK)
	e := newEnv(t, func(c *Config) { c.SMSURL = g.srv.URL + "/sms?tenant=7&secret=hush" })
	phoneCodeVia(t, e)
	reqs, bodies := g.got()
	if len(reqs) != 1 {
		t.Fatalf("gateway got %d requests, want 1", len(reqs))
	}
	r := reqs[0]
	// The secret is the signing key: it is not sent.
	if r.URL.Path != "/sms" || r.URL.Query().Get("tenant") != "7" || r.URL.Query().Has("secret") || r.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("request %s %s", r.URL, r.Header.Get("Content-Type"))
	}
	mac := hmac.New(sha256.New, []byte("hush"))
	mac.Write(bodies[0])
	if got, want := r.Header.Get("X-Workspace-Signature"), "sha256="+hex.EncodeToString(mac.Sum(nil)); got != want {
		t.Fatalf("signature %q, want %q", got, want)
	}
	var m map[string]string
	if err := json.Unmarshal(bodies[0], &m); err != nil || m["to"] != "+15550001234" || !strings.Contains(m["text"], "Code: ") || len(m) != 2 {
		t.Fatalf("body %s (%v)", bodies[0], err)
	}

	t.Run("notifications by text with their link", func(t *testing.T) {
		// walt confirmed his number and chose texts; alice assigns him a work item.
		walt := e.tokenFor(mustUser(t, e, "walt@example.com"))
		e.exec(`UPDATE users SET phone_number_confirmed = 1, sms_notifications = 1, email_notifications = 0 WHERE id = ?`, walt.id)
		alice := e.user("alice")
		org := e.org(alice, "Acme")
		e.addMember(org, walt)
		typ := e.must(201, alice, "POST", "/organisations/"+org+"/work-item-types", map[string]any{"name": "Task"}).obj(t)["id"].(string)
		w := e.must(201, alice, "POST", "/organisations/"+org+"/workitems", map[string]any{"type_id": typ, "title": "Check the crane",
			"assignee_ids": []string{walt.ID}}).obj(t)["id"].(string)
		_, bodies := g.got()
		var m map[string]string
		if err := json.Unmarshal(bodies[len(bodies)-1], &m); err != nil {
			t.Fatal(err)
		}
		if m["to"] != "+15550001234" || !strings.Contains(m["text"], "Check the crane") || !strings.HasSuffix(m["text"], "http://workspace.test/app/workitems/"+w) {
			t.Fatalf("text %v", m)
		}
	})
}

func mustUser(t *testing.T, e *testEnv, email string) db.User {
	t.Helper()
	u, err := e.store.R.UserGetByEmail(t.Context(), email)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestSMSGatewayFailureKeepsOutbox(t *testing.T) {
	t.Parallel()
	for name, url := range map[string]func(g *fakeGateway) string{
		"twilio refuses": func(g *fakeGateway) string {
			return "twilio://AC1:tok@api.twilio.com?from=%2B1555&base_url=" + g.srv.URL
		},
		"webhook fails": func(g *fakeGateway) string { return g.srv.URL + "/sms?secret=k" },
	} {
		t.Run(name, func(t *testing.T) {
			g := newFakeGateway(t, http.StatusInternalServerError)
			e := newEnv(t, func(c *Config) { c.SMSURL = url(g) })
			phoneCodeVia(t, e)
			if reqs, _ := g.got(); len(reqs) != 1 {
				t.Fatalf("gateway got %d requests, want one try", len(reqs))
			}
			if n := e.messagesTo("+15550001234"); n != 1 {
				t.Fatalf("outbox holds %d texts, want the failed one", n)
			}
		})
	}
	t.Run("gateway down", func(t *testing.T) {
		g := newFakeGateway(t, http.StatusOK)
		g.srv.Close()
		e := newEnv(t, func(c *Config) { c.SMSURL = g.srv.URL + "/sms?secret=k" })
		phoneCodeVia(t, e)
		if n := e.messagesTo("+15550001234"); n != 1 {
			t.Fatalf("outbox holds %d texts, want 1", n)
		}
	})
}

func TestSMSURLChecked(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{
		"twilio://api.twilio.com?from=%2B1555",                    // no SID or token
		"twilio://AC1:tok@api.twilio.com",                         // no from
		"twilio://AC1:tok@api.twilio.com?from=1&base_url=ftp://x", // base_url not http(s)
		"https://hooks.example.com/sms",                           // no secret
		"smtp://hooks.example.com",                                // another scheme
		"://",
	} {
		if _, err := parseSMSURL(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	g, err := parseSMSURL("twilio://AC1:tok@api.twilio.com?from=%2B1555")
	if err != nil || g.endpoint != "https://api.twilio.com/2010-04-01/Accounts/AC1/Messages.json" {
		t.Fatalf("endpoint %v %v", g, err)
	}
}
