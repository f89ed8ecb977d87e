package server

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// receiver is a webhook endpoint that records what it gets and answers
// with the next status of its script (200 once the script runs out).
type receiver struct {
	mu       sync.Mutex
	statuses []int
	got      []*http.Request
	bodies   [][]byte
	srv      *httptest.Server
}

func newReceiver(t *testing.T, statuses ...int) *receiver {
	r := &receiver{statuses: statuses}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		defer r.mu.Unlock()
		r.got = append(r.got, req)
		r.bodies = append(r.bodies, b)
		status := 200
		if len(r.statuses) > 0 {
			status, r.statuses = r.statuses[0], r.statuses[1:]
		}
		w.WriteHeader(status)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.got)
}

func TestIntegrations(t *testing.T) {
	t.Parallel()
	f := newOrgFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	good := map[string]any{"item_type": "project", "provider": "slack",
		"configuration": `{"url": "https://hooks.example.com/services/T000/B000/XXXXSECRETXXXX", "secret": "a-long-secret-1234"}`}
	with := func(k string, v any) map[string]any {
		m := map[string]any{}
		for kk, vv := range good {
			m[kk] = vv
		}
		m[k] = v
		return m
	}
	e.run(t, []scenario{
		{"member cannot create", f.bob, "POST", acme + "/integrations", good, 403, nil},
		{"other organisation cannot create", f.mallory, "POST", acme + "/integrations", good, 403, nil},
		{"absent organisation", f.alice, "POST", "/organisations/123456789/integrations", good, 400, nil},
		{"unknown provider", f.alice, "POST", acme + "/integrations", with("provider", "myspace"), 400, wantField("provider")},
		{"unknown item type", f.alice, "POST", acme + "/integrations", with("item_type", "cake"), 400, wantField("item_type")},
		{"configuration over 4096", f.alice, "POST", acme + "/integrations", with("configuration", `{"url": "https://x.test/a"`+strings.Repeat(" ", 4096)+`}`), 400, wantField("configuration")},
		{"configuration not JSON", f.alice, "POST", acme + "/integrations", with("configuration", "url=x"), 400, wantField("configuration")},
		{"url not http", f.alice, "POST", acme + "/integrations", with("configuration", `{"url": "ftp://x.test/a"}`), 400, wantField("configuration")},
		{"url with credentials", f.alice, "POST", acme + "/integrations", with("configuration", `{"url": "https://u:p@x.test/a"}`), 400, wantField("configuration")},
		{"secret too short", f.alice, "POST", acme + "/integrations", with("configuration", `{"url": "https://x.test/a", "secret": "short"}`), 400, wantField("configuration")},
		// Issue 35: before, channel was dropped silently and the create answered 201.
		{"a key the integration does not use is named", f.alice, "POST", acme + "/integrations", with("configuration", `{"url": "https://x.test/a", "channel": "#site"}`), 400, func(t *testing.T, r *testResponse) {
			if got := r.obj(t)["errors"].(map[string]any)["configuration"]; !strings.Contains(got.(string), `"channel"`) {
				t.Errorf("configuration error %v does not name the key", got)
			}
		}},
		{"other organisation with an unused key", f.mallory, "POST", acme + "/integrations", with("configuration", `{"url": "https://x.test/a", "channel": "#site"}`), 403, nil},
	})
	created := e.must(201, f.alice, "POST", acme+"/integrations", good).obj(t)
	cfg := created["configuration"].(string)
	if strings.Contains(cfg, "XXXXSECRETXXXX") || strings.Contains(cfg, "a-long-secret-1234") || !strings.Contains(cfg, "hooks.example.com") || created["enabled"] != true {
		t.Fatalf("created %v: secrets must be masked", created)
	}
	path := "/integrations/" + created["id"].(string)
	e.run(t, []scenario{
		{"manager lists", f.alice, "GET", acme + "/integrations", nil, 200, wantLen(1)},
		{"member cannot list", f.bob, "GET", acme + "/integrations", nil, 403, nil},
		{"other organisation cannot list", f.mallory, "GET", acme + "/integrations", nil, 403, nil},
		{"manager gets", f.alice, "GET", path, nil, 200, wantKey("provider", "slack")},
		{"member cannot get", f.bob, "GET", path, nil, 403, nil},
		{"other organisation cannot get", f.mallory, "GET", path, nil, 403, nil},
		{"absent integration", f.alice, "GET", "/integrations/123456789", nil, 404, nil},
		{"provider is read-only", f.alice, "PATCH", path, map[string]any{"provider": "discord"}, 400, wantField("provider")},
		{"other organisation cannot patch", f.mallory, "PATCH", path, map[string]any{"enabled": false}, 403, nil},
		{"a patch with a key the integration does not use", f.alice, "PATCH", path, map[string]any{"configuration": `{"username": "bot"}`}, 400, wantField("configuration")},
		{"the masked configuration sent back keeps the secrets", f.alice, "PATCH", path, map[string]any{"configuration": cfg, "enabled": false}, 200, wantKey("enabled", false)},
		{"sync of a disabled integration", f.alice, "POST", path + "/sync", nil, 400, nil},
		{"other organisation cannot sync", f.mallory, "POST", path + "/sync", nil, 403, nil},
		{"sync of an absent integration", f.alice, "POST", "/integrations/123456789/sync", nil, 404, nil},
		{"enable", f.alice, "PATCH", path, map[string]any{"enabled": true}, 200, nil},
		{"sync", f.alice, "POST", path + "/sync", nil, 202, func(t *testing.T, r *testResponse) {
			if o := r.obj(t); o["status"] != "pending" || o["event"] != "integration.sync" {
				t.Errorf("got %v", o)
			}
		}},
		{"deliveries listed", f.alice, "GET", path + "/deliveries", nil, 200, wantLen(1)},
		{"other organisation cannot list deliveries", f.mallory, "GET", path + "/deliveries", nil, 403, nil},
	})
	var url, secret string
	e.store.Writer.QueryRow(`SELECT url, secret FROM integrations WHERE id = ?`, parseTestID(t, created["id"].(string))).Scan(&url, &secret)
	if url != "https://hooks.example.com/services/T000/B000/XXXXSECRETXXXX" || secret != "a-long-secret-1234" {
		t.Fatalf("sending the masked configuration back changed it: %q %q", url, secret)
	}
}

// deliveryStatus reads a delivery's status and attempts.
func deliveryStatus(t *testing.T, e *testEnv, integration string) (status string, attempts int) {
	t.Helper()
	e.store.Writer.QueryRow(`SELECT status, attempts FROM integration_deliveries WHERE integration_id = ? ORDER BY id DESC LIMIT 1`,
		parseTestID(t, integration)).Scan(&status, &attempts)
	return status, attempts
}

// TestWebhookDeliveredAndRetried: a project event reaches the receiver
// signed, in the generic format; a failed attempt is retried after the
// backoff.
func TestWebhookDeliveredAndRetried(t *testing.T) {
	t.Parallel()
	rcv := newReceiver(t, 500)
	f := newOrgFixture(t, func(c *Config) { c.WebhookPoll = 5 * time.Millisecond; c.AllowPrivateEgress = true })
	e, acme := f.e, "/organisations/"+f.acme
	conf, _ := json.Marshal(map[string]string{"url": rcv.srv.URL + "/hook", "secret": "verify-me-please"})
	integ := e.must(201, f.alice, "POST", acme+"/integrations", map[string]any{"item_type": "project", "provider": "github", "configuration": string(conf)}).obj(t)["id"].(string)
	e.must(201, f.alice, "POST", acme+"/projects", map[string]any{"name": "Tunnel"})
	waitFor(t, func() bool { _, n := deliveryStatus(t, e, integ); return n == 1 })
	if s, _ := deliveryStatus(t, e, integ); s != "pending" || rcv.count() != 1 {
		t.Fatalf("after a 500: %s with %d requests", s, rcv.count())
	}
	e.clock.Advance(11 * time.Second) // past the first backoff
	waitFor(t, func() bool { s, _ := deliveryStatus(t, e, integ); return s == "delivered" })
	rcv.mu.Lock()
	defer rcv.mu.Unlock()
	req, body := rcv.got[1], rcv.bodies[1]
	mac := hmac.New(sha256.New, []byte("verify-me-please"))
	mac.Write(body)
	if got := req.Header.Get("X-Workspace-Signature"); got != "sha256="+hex.EncodeToString(mac.Sum(nil)) {
		t.Errorf("signature %q does not match the body", got)
	}
	if req.Header.Get("X-Workspace-Event") != "project.created" || req.Header.Get("X-Workspace-Delivery") == "" ||
		req.Header.Get("X-Workspace-Delivery") != rcv.got[0].Header.Get("X-Workspace-Delivery") {
		t.Errorf("headers %v (a retry keeps the delivery id)", req.Header)
	}
	var ev map[string]any
	if err := json.Unmarshal(body, &ev); err != nil || ev["event"] != "project.created" || ev["data"].(map[string]any)["name"] != "Tunnel" {
		t.Errorf("body %s", body)
	}
}

// TestWebhookQueueSurvivesRestart: a delivery queued while no worker runs
// is sent by the next server on the same database, in the chat format of
// its provider.
func TestWebhookQueueSurvivesRestart(t *testing.T) {
	t.Parallel()
	rcv := newReceiver(t)
	f := newOrgFixture(t) // no worker: deliveries only queue
	e, acme := f.e, "/organisations/"+f.acme
	conf, _ := json.Marshal(map[string]string{"url": rcv.srv.URL})
	integ := e.must(201, f.alice, "POST", acme+"/integrations", map[string]any{"item_type": "project", "provider": "slack", "configuration": string(conf)}).obj(t)["id"].(string)
	e.must(202, f.alice, "POST", "/integrations/"+integ+"/sync", nil)
	if s, _ := deliveryStatus(t, e, integ); s != "pending" || rcv.count() != 0 {
		t.Fatalf("before the restart: %s, %d requests", s, rcv.count())
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg := e.cfg
	cfg.WebhookPoll, cfg.AllowPrivateEgress = 5*time.Millisecond, true
	if _, err := New(ctx, e.store, cfg); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { s, _ := deliveryStatus(t, e, integ); return s == "delivered" })
	rcv.mu.Lock()
	defer rcv.mu.Unlock()
	var msg map[string]string
	if err := json.Unmarshal(rcv.bodies[0], &msg); err != nil || !strings.Contains(msg["text"], "integration.sync") {
		t.Errorf("slack body %s", rcv.bodies[0])
	}
}

// TestWebhookNeverReachesPrivateAddresses: without --allow-private-egress
// a delivery to a loopback address is refused before connecting.
func TestWebhookNeverReachesPrivateAddresses(t *testing.T) {
	t.Parallel()
	rcv := newReceiver(t)
	f := newOrgFixture(t, func(c *Config) { c.WebhookPoll = 5 * time.Millisecond })
	e, acme := f.e, "/organisations/"+f.acme
	conf, _ := json.Marshal(map[string]string{"url": rcv.srv.URL})
	integ := e.must(201, f.alice, "POST", acme+"/integrations", map[string]any{"item_type": "project", "provider": "jira", "configuration": string(conf)}).obj(t)["id"].(string)
	e.must(202, f.alice, "POST", "/integrations/"+integ+"/sync", nil)
	waitFor(t, func() bool { _, n := deliveryStatus(t, e, integ); return n >= 1 })
	var lastErr string
	e.store.Writer.QueryRow(`SELECT last_error FROM integration_deliveries WHERE integration_id = ?`, parseTestID(t, integ)).Scan(&lastErr)
	if rcv.count() != 0 || !strings.Contains(lastErr, "loopback") {
		t.Fatalf("%d requests reached the loopback receiver; last error %q", rcv.count(), lastErr)
	}
	for _, addr := range []string{"127.0.0.1:80", "10.1.2.3:443", "192.168.0.1:80", "169.254.169.254:80", "[::1]:80", "100.64.0.1:80", "0.0.0.0:80"} {
		if egressControl("tcp", addr, nil) == nil {
			t.Errorf("%s allowed", addr)
		}
	}
	if err := egressControl("tcp", "93.184.216.34:443", nil); err != nil {
		t.Errorf("a public address refused: %v", err)
	}
}

func TestRetryDelay(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		attempts int64
		want     time.Duration
	}{{1, 10 * time.Second}, {2, 20 * time.Second}, {3, 40 * time.Second}, {9, 2560 * time.Second}, {10, time.Hour}, {40, time.Hour}} {
		if got := retryDelay(tc.attempts); got != tc.want {
			t.Errorf("retryDelay(%d) = %v, want %v", tc.attempts, got, tc.want)
		}
	}
}

// TestEventTargetsFollowIntegrationChanges: the writer remembers which
// integrations an organisation's events go to (eventTargets); creating,
// disabling and enabling an integration changes where the very next event
// goes, and another organisation's integration never receives it.
func TestEventTargetsFollowIntegrationChanges(t *testing.T) {
	t.Parallel()
	f := newOrgFixture(t) // no worker: deliveries only queue
	e, acme := f.e, "/organisations/"+f.acme
	deliveries := func(integration string) int {
		t.Helper()
		var n int
		if err := e.store.Writer.QueryRow(`SELECT count(*) FROM integration_deliveries WHERE integration_id = ? AND event = 'project.created'`,
			parseTestID(t, integration)).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	project := func(owner *testUser, org string) {
		t.Helper()
		e.must(201, owner, "POST", "/organisations/"+org+"/projects", map[string]any{"name": "Project"})
	}
	body := map[string]any{"item_type": "project", "provider": "slack", "configuration": `{"url": "https://hooks.example.com/a"}`}
	project(f.alice, f.acme) // remembered: no integrations
	foreign := e.must(201, f.mallory, "POST", "/organisations/"+f.evil+"/integrations", body).obj(t)["id"].(string)
	integ := e.must(201, f.alice, "POST", acme+"/integrations", body).obj(t)["id"].(string)
	project(f.alice, f.acme)
	if n := deliveries(integ); n != 1 {
		t.Fatalf("integration created, then a project: %d deliveries, want 1", n)
	}
	e.must(200, f.alice, "PATCH", "/integrations/"+integ, map[string]any{"enabled": false})
	project(f.alice, f.acme)
	if n := deliveries(integ); n != 1 {
		t.Fatalf("integration disabled, then a project: %d deliveries, want still 1", n)
	}
	e.must(200, f.alice, "PATCH", "/integrations/"+integ, map[string]any{"enabled": true})
	project(f.alice, f.acme)
	if n := deliveries(integ); n != 2 {
		t.Fatalf("integration enabled again, then a project: %d deliveries, want 2", n)
	}
	if n := deliveries(foreign); n != 0 {
		t.Fatalf("another organisation's integration received %d of Acme's events", n)
	}
	project(f.mallory, f.evil)
	if n := deliveries(foreign); n != 1 {
		t.Fatalf("Evil's own project: %d deliveries, want 1", n)
	}
}
