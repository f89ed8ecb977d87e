package server

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"time"

	"workspace/db"
)

// Webhook deliveries: a queue in the database (integration_deliveries),
// filled by emit in the transaction of the change, sent by one background
// worker, retried with exponential backoff for up to 12 hours. A restart
// loses nothing: the worker starts from the table.

const (
	deliveryPending   = "pending"
	deliveryDelivered = "delivered"
	deliveryFailed    = "failed"

	deliveryGiveUp     = 12 * time.Hour
	deliveryFirstRetry = 10 * time.Second
	deliveryMaxRetry   = time.Hour
	deliveryTimeout    = 10 * time.Second
	deliveryBatch      = 20
)

var errBlockedEgress = errors.New("destination address is loopback, private or link-local")

// webhookEvent is the generic JSON event, for providers without a message
// format of their own.
type webhookEvent struct {
	ID             db.ID  `json:"id"`
	Event          string `json:"event"`
	ItemType       string `json:"item_type"`
	OrganisationID db.ID  `json:"organisation_id"`
	OccurredAt     string `json:"occurred_at"`
	Data           any    `json:"data"`
}

// webhookBody is the delivery's body in the provider's format: the chat
// providers' incoming webhooks take a text message.
func webhookBody(provider string, ev webhookEvent) ([]byte, error) {
	text := fmt.Sprintf("workspace: %s %s", ev.ItemType, ev.Event)
	if m, ok := ev.Data.(interface{ summary() string }); ok {
		text += ": " + m.summary()
	}
	switch provider {
	case "slack", "teams":
		return json.Marshal(map[string]string{"text": text})
	case "discord":
		return json.Marshal(map[string]string{"content": text})
	}
	return json.Marshal(ev)
}

// queueDelivery stores one delivery of an event for an integration.
func (s *Server) queueDelivery(ctx context.Context, q *db.Queries, i db.Integration, event string, data any) (db.IntegrationDelivery, error) {
	id := s.store.IDs.Next()
	now := s.nowText()
	name := i.ItemType + "." + event
	if event == "sync" {
		name = "integration.sync"
	}
	body, err := webhookBody(i.Provider, webhookEvent{ID: db.ID(id), Event: name, ItemType: i.ItemType,
		OrganisationID: db.ID(i.OrganisationID), OccurredAt: now, Data: data})
	if err != nil {
		return db.IntegrationDelivery{}, err
	}
	return q.DeliveryCreate(ctx, db.DeliveryCreateParams{ID: id, OrganisationID: i.OrganisationID, IntegrationID: i.ID,
		Event: name, Body: string(body), CreatedAt: now})
}

// egressControl refuses connections to loopback, private, link-local,
// multicast and unspecified addresses. It runs on the resolved address of
// every connection, redirects included, so neither a DNS name nor a
// redirect can reach the server's own network.
func egressControl(_, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return errBlockedEgress
	}
	ip := net.ParseIP(host)
	if ip == nil || ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsInterfaceLocalMulticast() || ip.IsMulticast() || ip.IsUnspecified() || cgnat.Contains(ip) {
		return errBlockedEgress
	}
	return nil
}

var cgnat = &net.IPNet{IP: net.IPv4(100, 64, 0, 0), Mask: net.CIDRMask(10, 32)}

// webhookClient sends deliveries: no proxy from the environment, a short
// timeout, at most three redirects, and (unless allowed) no private egress.
func webhookClient(allowPrivate bool) *http.Client {
	dialer := &net.Dialer{Timeout: 5 * time.Second}
	if !allowPrivate {
		dialer.Control = egressControl
	}
	return &http.Client{
		Timeout:   deliveryTimeout,
		Transport: &http.Transport{Proxy: nil, DialContext: dialer.DialContext, MaxIdleConns: 4, IdleConnTimeout: time.Minute},
		CheckRedirect: func(_ *http.Request, via []*http.Request) error {
			if len(via) >= 3 {
				return errors.New("too many redirects")
			}
			return nil
		},
	}
}

// deliverWebhooks runs the worker until ctx ends.
func (s *Server) deliverWebhooks(ctx context.Context, every time.Duration) {
	client := webhookClient(s.cfg.AllowPrivateEgress)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if err := s.deliverDue(ctx, client); err != nil && ctx.Err() == nil {
			s.log.Error("webhook deliveries", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// deliverDue sends the deliveries that are due, one at a time.
func (s *Server) deliverDue(ctx context.Context, client *http.Client) error {
	due, err := s.store.R.DeliveriesDue(ctx, db.DeliveriesDueParams{Now: s.nowText(), Max: deliveryBatch})
	if err != nil {
		return err
	}
	for _, d := range due {
		if ctx.Err() != nil {
			return nil
		}
		if err := s.deliverOne(ctx, client, d); err != nil {
			return err
		}
	}
	return nil
}

func (s *Server) deliverOne(ctx context.Context, client *http.Client, d db.IntegrationDelivery) error {
	i, err := s.store.R.IntegrationGet(ctx, d.IntegrationID)
	if err != nil {
		return err
	}
	code, sendErr := sendWebhook(ctx, client, i, d)
	now := s.clock()
	rec := db.DeliveryRecordParams{ID: d.ID, Status: deliveryPending, NextAttemptAt: d.NextAttemptAt}
	if code != 0 {
		c := int64(code)
		rec.ResponseCode = &c
	}
	switch {
	case sendErr == nil && code >= 200 && code < 300:
		rec.Status = deliveryDelivered
		at := db.FormatTime(now)
		rec.DeliveredAt = &at
	default:
		rec.LastError = deliveryError(i.Url, code, sendErr)
		created, _ := db.ParseTime(d.CreatedAt)
		next := now.Add(retryDelay(d.Attempts + 1))
		if next.Sub(created) > deliveryGiveUp || !i.Enabled {
			rec.Status = deliveryFailed
		} else {
			rec.NextAttemptAt = db.FormatTime(next)
		}
	}
	return s.store.InTx(ctx, func(q *db.Queries) error { return q.DeliveryRecord(ctx, rec) })
}

// deliveryError words a failed attempt for the deliveries list, which the
// organisation's managers read: the URL as the integration's answer masks
// it (chat providers put the webhook's secret in its path) and none of the
// server's own addresses (the resolver's, the local end of a connection)
// that Go's errors carry.
func deliveryError(rawURL string, code int, err error) string {
	where := maskURL(rawURL)
	var dnsErr *net.DNSError
	var netErr net.Error
	switch {
	case err == nil:
		return fmt.Sprintf("%s answered %d", where, code)
	case errors.Is(err, errBlockedEgress):
		return "refused to connect to " + where + ": its " + errBlockedEgress.Error()
	case errors.As(err, &dnsErr):
		if dnsErr.IsNotFound {
			return "could not resolve the host of " + where + ": no such host"
		}
		return "could not resolve the host of " + where
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused by " + where
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset by " + where
	case errors.Is(err, context.DeadlineExceeded) || errors.As(err, &netErr) && netErr.Timeout():
		return where + " timed out"
	case strings.Contains(err.Error(), "too many redirects"):
		return where + " redirected too many times"
	case strings.Contains(err.Error(), "tls:") || strings.Contains(err.Error(), "x509:"):
		return "the secure connection to " + where + " failed"
	case strings.Contains(err.Error(), "disabled or has no url"):
		return "the integration is disabled or has no url"
	}
	return "could not deliver to " + where
}

// retryDelay doubles from 10 s after each failed attempt, up to an hour.
func retryDelay(attempts int64) time.Duration {
	d := deliveryFirstRetry
	for n := int64(1); n < attempts && d < deliveryMaxRetry; n++ {
		d *= 2
	}
	return min(d, deliveryMaxRetry)
}

// webhookSignature is the X-Workspace-Signature of a body: "sha256=" and
// the hex HMAC-SHA256 of the body under the secret. Integrations' webhooks
// and the SMS webhook (sms.go) sign alike, so a receiver checks both the
// same way.
func webhookSignature(secret, body []byte) string {
	mac := hmac.New(sha256.New, secret)
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// sendWebhook posts the delivery, signed with the integration's secret.
func sendWebhook(ctx context.Context, client *http.Client, i db.Integration, d db.IntegrationDelivery) (int, error) {
	if !i.Enabled || i.Url == "" {
		return 0, errors.New("the integration is disabled or has no url")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, i.Url, bytes.NewReader([]byte(d.Body)))
	if err != nil {
		return 0, err
	}
	h := req.Header
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", "workspace-webhooks")
	h.Set("X-Workspace-Event", d.Event)
	h.Set("X-Workspace-Delivery", db.ID(d.ID).String())
	h.Set("X-Workspace-Signature", webhookSignature([]byte(i.Secret), []byte(d.Body)))
	resp, err := client.Do(req)
	if err != nil {
		if errors.Is(err, errBlockedEgress) {
			return 0, errBlockedEgress
		}
		return 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	return resp.StatusCode, nil
}
