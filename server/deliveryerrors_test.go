package server

import (
	"encoding/json"
	"net"
	"strings"
	"testing"
	"time"
)

// TestDeliveryErrorsRevealNothing: issue 35. The deliveries list words a
// failed attempt without the webhook's secret path (masked as the
// integration's own answer masks it) or the server's addresses; before the
// fix last_error held Go's error text: the full URL and the resolver's
// address. Another organisation's user reads no deliveries.
func TestDeliveryErrorsRevealNothing(t *testing.T) {
	t.Parallel()
	// A port nothing listens on: connection refused.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	f := newOrgFixture(t, func(c *Config) { c.WebhookPoll = 5 * time.Millisecond; c.AllowPrivateEgress = true })
	e, acme := f.e, "/organisations/"+f.acme
	const secretPath = "/services/T000/B000/XXXXsecretXXXX"
	cases := []struct{ url, want string }{
		{"http://" + closed + secretPath, "connection refused by http://" + closed + "/…XXXX"},
		{"http://no-such-host.invalid" + secretPath, "could not resolve the host of http://no-such-host.invalid/…XXXX"},
	}
	for _, c := range cases {
		conf, _ := json.Marshal(map[string]string{"url": c.url})
		integ := e.must(201, f.alice, "POST", acme+"/integrations", map[string]any{"item_type": "project", "provider": "slack", "configuration": string(conf)}).obj(t)["id"].(string)
		e.must(202, f.alice, "POST", "/integrations/"+integ+"/sync", nil)
		waitFor(t, func() bool { _, n := deliveryStatus(t, e, integ); return n >= 1 })
		var lastErr string
		waitFor(t, func() bool {
			l := e.must(200, f.alice, "GET", "/integrations/"+integ+"/deliveries", nil).arr(t)
			lastErr, _ = l[0]["last_error"].(string)
			return lastErr != ""
		})
		if !strings.HasPrefix(lastErr, c.want) || strings.Contains(lastErr, "secret") || strings.Contains(lastErr, ":53") || strings.Contains(lastErr, "dial") {
			t.Errorf("last_error %q, want %q and no secret path or resolver", lastErr, c.want)
		}
		e.must(403, f.mallory, "GET", "/integrations/"+integ+"/deliveries", nil)
	}

	// An error stored before the wording: masked and scrubbed on the way out.
	conf, _ := json.Marshal(map[string]string{"url": "https://hooks.slack.com" + secretPath})
	integ := e.must(201, f.alice, "POST", acme+"/integrations", map[string]any{"item_type": "project", "provider": "slack", "configuration": string(conf)}).obj(t)["id"].(string)
	e.must(202, f.alice, "POST", "/integrations/"+integ+"/sync", nil)
	old := `Post "https://hooks.slack.com` + secretPath + `": dial tcp: lookup hooks.slack.com on 10.0.0.2:53: server misbehaving`
	if _, err := e.write(`UPDATE integration_deliveries SET last_error = ?, status = 'failed' WHERE integration_id = ?`, old, parseTestID(t, integ)); err != nil {
		t.Fatal(err)
	}
	got := e.must(200, f.alice, "GET", "/integrations/"+integ+"/deliveries", nil).arr(t)[0]["last_error"].(string)
	if strings.Contains(got, "secret") || strings.Contains(got, "10.0.0.2") || !strings.Contains(got, "https://hooks.slack.com/…XXXX") {
		t.Errorf("stored error shown as %q", got)
	}
}
