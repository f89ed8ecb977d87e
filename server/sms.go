package server

// The SMS gateway (serve --sms-url, docs/operations.md "Text messages"):
// Twilio's REST API (a form POST with Basic auth, no SDK) or a generic
// HTTPS webhook (JSON {"to", "text"}, signed like the integrations'
// webhooks). Without one every text message stays in the outbox. Like
// mail, a message is tried once, within smsTimeout, inside the caller's
// transaction, and kept in the outbox when it fails.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// smsTimeout bounds one delivery, as smtpTimeout does mail's.
var smsTimeout = 10 * time.Second

type smsGateway struct {
	twilio   bool
	endpoint string // where the POST goes
	sid      string // Twilio: account SID (Basic auth user) ...
	token    string // ... and auth token (Basic auth password)
	from     string // Twilio: the sending number
	secret   []byte // webhook: the HMAC key
	client   *http.Client
}

// errSMSURL says what a valid --sms-url looks like.
var errSMSURL = errors.New("the SMS URL must look like twilio://ACCOUNT_SID:AUTH_TOKEN@api.twilio.com?from=+15550001234 " +
	"or https://host/path?secret=KEY (a webhook, signed with KEY)")

// parseSMSURL reads --sms-url.
//   - twilio://SID:TOKEN@api.twilio.com?from=+1555...: messages go to
//     https://api.twilio.com/2010-04-01/Accounts/SID/Messages.json;
//     base_url=http://127.0.0.1:port replaces https://api.twilio.com (tests,
//     or a proxy).
//   - https://host/path?secret=KEY (http:// too, for a gateway on the same
//     machine): the secret parameter is taken out of the address the
//     messages are posted to.
func parseSMSURL(raw string) (*smsGateway, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return nil, errSMSURL
	}
	g := &smsGateway{client: &http.Client{Timeout: smsTimeout}}
	qv := u.Query()
	switch u.Scheme {
	case "twilio":
		g.twilio = true
		g.sid = u.User.Username()
		g.token, _ = u.User.Password()
		g.from = qv.Get("from")
		if g.sid == "" || g.token == "" || g.from == "" {
			return nil, errSMSURL
		}
		base := "https://" + u.Host
		if b := qv.Get("base_url"); b != "" {
			bu, err := url.Parse(b)
			if err != nil || (bu.Scheme != "http" && bu.Scheme != "https") || bu.Host == "" {
				return nil, errSMSURL
			}
			base = strings.TrimSuffix(b, "/")
		}
		g.endpoint = base + "/2010-04-01/Accounts/" + url.PathEscape(g.sid) + "/Messages.json"
	case "https", "http":
		secret := qv.Get("secret")
		if secret == "" {
			return nil, errSMSURL
		}
		g.secret = []byte(secret)
		qv.Del("secret")
		u.RawQuery = qv.Encode()
		g.endpoint = u.String()
	default:
		return nil, errSMSURL
	}
	return g, nil
}

// send delivers one text message; an answer other than 2xx is a failure.
func (g *smsGateway) send(ctx context.Context, to, text string) error {
	ctx, cancel := context.WithTimeout(ctx, smsTimeout)
	defer cancel()
	var req *http.Request
	var err error
	if g.twilio {
		form := url.Values{"To": {to}, "From": {g.from}, "Body": {text}}
		req, err = http.NewRequestWithContext(ctx, http.MethodPost, g.endpoint, strings.NewReader(form.Encode()))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.SetBasicAuth(g.sid, g.token)
	} else {
		body, err := json.Marshal(map[string]string{"to": to, "text": text})
		if err != nil {
			return err
		}
		req, err = http.NewRequestWithContext(ctx, http.MethodPost, g.endpoint, bytes.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Workspace-Event", "sms")
		req.Header.Set("X-Workspace-Signature", webhookSignature(g.secret, body))
	}
	req.Header.Set("User-Agent", "workspace-sms")
	resp, err := g.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("the SMS gateway answered %s", resp.Status)
	}
	return nil
}
