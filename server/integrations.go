package server

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"workspace/db"
)

// Integrations (spec: Integrations; decisions.md for creation, providers
// and item types). Every row needs MANAGE_ORGANISATION. Events are queued
// as webhook deliveries by emit and sent by the delivery worker
// (webhooks.go). Decisions in docs/structure.md.

var (
	integrationProviders = []string{"slack", "teams", "discord", "github", "gitlab", "jira", "linear"}
	integrationItemTypes = []string{"project", "document", "work_item", "asset", "toolbox", "induction"}
)

const (
	maxWebhookURL = 2000
	minSecret     = 8
	maxSecret     = 256
	// maxConfiguration bounds the whole string: its two settings fit in far
	// less, and without it spaces around them would be unbounded.
	maxConfiguration = 4096
)

type integrationJSON struct {
	ID             db.ID  `json:"id"`
	OrganisationID db.ID  `json:"organisation_id"`
	ItemType       string `json:"item_type"`
	Provider       string `json:"provider"`
	Enabled        bool   `json:"enabled"`
	Configuration  string `json:"configuration"`
}

// integrationConfig is what the configuration string holds: a JSON object
// with the webhook URL and the signing secret.
type integrationConfig struct {
	URL    string `json:"url"`
	Secret string `json:"secret"`
}

// maskTail shows only the last four characters of a secret.
func maskTail(s string) string {
	if s == "" {
		return ""
	}
	r := []rune(s)
	if len(r) <= 4 {
		return "…"
	}
	return "…" + string(r[len(r)-4:])
}

// maskURL keeps the scheme and host of a webhook URL and hides the rest:
// chat providers put the webhook's secret in its path.
func maskURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || raw == "" {
		return maskTail(raw)
	}
	rest := strings.TrimPrefix(raw, u.Scheme+"://"+u.Host)
	if rest == "" || rest == "/" {
		return raw
	}
	return u.Scheme + "://" + u.Host + "/" + maskTail(rest)
}

func toIntegration(i db.Integration) integrationJSON {
	cfg, _ := json.Marshal(integrationConfig{URL: maskURL(i.Url), Secret: maskTail(i.Secret)})
	return integrationJSON{ID: db.ID(i.ID), OrganisationID: db.ID(i.OrganisationID), ItemType: i.ItemType,
		Provider: i.Provider, Enabled: i.Enabled, Configuration: string(cfg)}
}

// parseConfiguration reads a configuration string over the current values:
// a masked value sent back (as GET shows it) keeps the current one.
func parseConfiguration(raw string, current db.Integration) (integrationConfig, error) {
	cfg := integrationConfig{URL: current.Url, Secret: current.Secret}
	if utf8.RuneCountInString(raw) > maxConfiguration {
		return cfg, fieldError("configuration", fmt.Sprintf("must be at most %d characters", maxConfiguration))
	}
	if strings.TrimSpace(raw) == "" {
		return cfg, nil
	}
	var in struct {
		URL    *string `json:"url"`
		Secret *string `json:"secret"`
	}
	if err := json.Unmarshal([]byte(raw), &in); err != nil {
		return cfg, fieldError("configuration", `must be a JSON object such as {"url": "https://...", "secret": "..."}`)
	}
	// Nothing a caller sends is dropped silently (docs/structure.md): a key
	// the integration does not use is refused, named.
	var keys map[string]json.RawMessage
	_ = json.Unmarshal([]byte(raw), &keys) // an object: the decode above succeeded
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		if k != "url" && k != "secret" {
			return cfg, fieldError("configuration", fmt.Sprintf("%q is not a setting of an integration: it takes only url and secret", k))
		}
	}
	if in.URL != nil && *in.URL != maskURL(current.Url) {
		u, err := url.Parse(*in.URL)
		if *in.URL != "" && (err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil || len(*in.URL) > maxWebhookURL) {
			return cfg, fieldError("configuration", "url must be an http or https URL without credentials, at most 2000 characters")
		}
		cfg.URL = *in.URL
	}
	if in.Secret != nil && *in.Secret != maskTail(current.Secret) {
		if n := len([]rune(*in.Secret)); n < minSecret || n > maxSecret {
			return cfg, fieldError("configuration", "secret must be 8-256 characters")
		}
		cfg.Secret = *in.Secret
	}
	return cfg, nil
}

// integrationAccess loads an integration the caller may manage: 404 when
// absent, 403 without MANAGE_ORGANISATION.
func integrationAccess(ctx context.Context, q *db.Queries, userID, id int64) (db.Integration, error) {
	i, err := q.IntegrationGet(ctx, id)
	if db.IsNotFound(err) {
		return i, notFound("The integration does not exist.")
	}
	if err != nil {
		return i, err
	}
	a, err := authorize(ctx, q, userID, i.OrganisationID, Scopes{})
	if db.IsNotFound(err) {
		return i, notFound("The integration does not exist.")
	}
	if err != nil {
		return i, err
	}
	return i, a.Require(ManageOrganisation)
}

type integrationBody struct {
	ItemType      *string `json:"item_type"`
	Provider      *string `json:"provider"`
	Configuration *string `json:"configuration"`
	Enabled       *bool   `json:"enabled"`
}

func (s *Server) integrationCreate(rq *request) error {
	orgID, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var b integrationBody
	if err := rq.decodeCreate(&b, "id", "organisation_id"); err != nil {
		return err
	}
	var out integrationJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		// Access before the body's values: someone else's organisation
		// answers 403 whatever the body holds (issue 35).
		if _, err := orgAccess(rq, q, orgID, http.StatusBadRequest, ManageOrganisation); err != nil {
			return err
		}
		p := problems{}
		if b.ItemType == nil || !slices.Contains(integrationItemTypes, *b.ItemType) {
			p.add("item_type", "must be one of "+strings.Join(integrationItemTypes, ", "))
		}
		if b.Provider == nil || !slices.Contains(integrationProviders, *b.Provider) {
			p.add("provider", "must be one of "+strings.Join(integrationProviders, ", "))
		}
		cfg, err := parseConfiguration(orDefault(b.Configuration, ""), db.Integration{})
		if err != nil {
			return err
		}
		if err := p.err(); err != nil {
			return err
		}
		if cfg.Secret == "" {
			// Every delivery is signed; without a secret of the owner's, one is
			// made (shown masked; set your own to verify signatures).
			cfg.Secret = randomToken(24)
		}
		i, err := q.IntegrationCreate(rq.ctx, db.IntegrationCreateParams{
			ID: s.store.IDs.Next(), OrganisationID: orgID, ItemType: *b.ItemType, Provider: *b.Provider,
			Enabled: b.Enabled == nil || *b.Enabled, Url: cfg.URL, Secret: cfg.Secret, CreatedAt: s.nowText(),
		})
		if err != nil {
			return err
		}
		out = toIntegration(i)
		return nil
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusCreated, out)
}

func (s *Server) integrationList(rq *request) error {
	orgID, err := rq.pathID("id")
	if err != nil {
		return err
	}
	out := []integrationJSON{}
	err = s.store.ReadTx(rq.ctx, func(q *db.Queries) error {
		if _, err := orgAccess(rq, q, orgID, http.StatusBadRequest, ManageOrganisation); err != nil {
			return err
		}
		rows, err := q.IntegrationList(rq.ctx, orgID)
		if err != nil {
			return err
		}
		for _, i := range rows {
			out = append(out, toIntegration(i))
		}
		return nil
	})
	if err != nil {
		return err
	}
	setTotalCount(rq.w, int64(len(out)))
	return rq.json(http.StatusOK, out)
}

func (s *Server) integrationGet(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	i, err := integrationAccess(rq.ctx, s.store.R, rq.user.ID, id)
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, toIntegration(i))
}

// integrationPatch changes configuration and enabled; item_type and
// provider are read-only.
func (s *Server) integrationPatch(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var b integrationBody
	ro, err := rq.decodePatch(&b, "id", "organisation_id", "item_type", "provider")
	if err != nil {
		return err
	}
	var out integrationJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		i, err := integrationAccess(rq.ctx, q, rq.user.ID, id)
		if err != nil {
			return err
		}
		if err := ro.check(toIntegration(i)); err != nil {
			return err
		}
		cfg, err := parseConfiguration(orDefault(b.Configuration, ""), i)
		if err != nil {
			return err
		}
		enabled := i.Enabled
		if b.Enabled != nil {
			enabled = *b.Enabled
		}
		i, err = q.IntegrationUpdate(rq.ctx, db.IntegrationUpdateParams{Enabled: enabled, Url: cfg.URL, Secret: cfg.Secret, ID: i.ID, OrganisationID: i.OrganisationID})
		if err != nil {
			return err
		}
		out = toIntegration(i)
		return nil
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

// integrationSync queues a sync delivery: 202 with it; a disabled
// integration (or one without a URL) is 400.
func (s *Server) integrationSync(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var out deliveryJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		i, err := integrationAccess(rq.ctx, q, rq.user.ID, id)
		if err != nil {
			return err
		}
		if !i.Enabled {
			return badRequest("The integration is disabled.")
		}
		if i.Url == "" {
			return fieldError("configuration", "needs a url to deliver to")
		}
		d, err := s.queueDelivery(rq.ctx, q, i, "sync", map[string]any{"integration_id": db.ID(i.ID)})
		if err != nil {
			return err
		}
		out = toDelivery(i, d)
		return nil
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusAccepted, out)
}

type deliveryJSON struct {
	ID            db.ID   `json:"id"`
	IntegrationID db.ID   `json:"integration_id"`
	Event         string  `json:"event"`
	Status        string  `json:"status"`
	Attempts      int64   `json:"attempts"`
	ResponseCode  *int64  `json:"response_code"`
	LastError     string  `json:"last_error"`
	NextAttemptAt *string `json:"next_attempt_at"`
	CreatedAt     string  `json:"created_at"`
	DeliveredAt   *string `json:"delivered_at"`
}

// storedAddress is an IP address (with its port) in an error stored before
// errors were worded (deliveryError): the server's resolver or local end.
var storedAddress = regexp.MustCompile(`\[[0-9a-fA-F:.]+\](:\d+)?|\b\d{1,3}(\.\d{1,3}){3}(:\d+)?\b`)

// toDelivery shows a delivery of integration i; an error stored before
// errors were worded has the URL masked and addresses hidden on the way out.
func toDelivery(i db.Integration, d db.IntegrationDelivery) deliveryJSON {
	lastError := d.LastError
	if i.Url != "" { // the URL (raw or masked) is kept apart from the address scrub
		lastError = strings.ReplaceAll(strings.ReplaceAll(lastError, i.Url, "\x00"), maskURL(i.Url), "\x00")
	}
	lastError = storedAddress.ReplaceAllString(lastError, "an address")
	lastError = strings.ReplaceAll(lastError, "\x00", maskURL(i.Url))
	out := deliveryJSON{ID: db.ID(d.ID), IntegrationID: db.ID(d.IntegrationID), Event: d.Event, Status: d.Status,
		Attempts: d.Attempts, ResponseCode: d.ResponseCode, LastError: lastError, CreatedAt: d.CreatedAt, DeliveredAt: d.DeliveredAt}
	if d.Status == deliveryPending {
		out.NextAttemptAt = &d.NextAttemptAt
	}
	return out
}

// integrationDeliveries lists the latest 200 deliveries, newest first.
func (s *Server) integrationDeliveries(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	out := []deliveryJSON{}
	err = s.store.ReadTx(rq.ctx, func(q *db.Queries) error {
		i, err := integrationAccess(rq.ctx, q, rq.user.ID, id)
		if err != nil {
			return err
		}
		rows, err := q.DeliveryList(rq.ctx, i.ID)
		if err != nil {
			return err
		}
		for _, d := range rows {
			out = append(out, toDelivery(i, d))
		}
		return nil
	})
	if err != nil {
		return err
	}
	setTotalCount(rq.w, int64(len(out)))
	return rq.json(http.StatusOK, out)
}

// eventTargets remembers inside write transactions which integrations an
// organisation's events of an item type go to: every create asks, and
// integrations rarely change (db.WriterStamp says when they did).
type eventTargets = stampMemo[eventTargetKey, []db.Integration]

type eventTargetKey struct {
	orgID    int64
	itemType string
}

// emit queues an event of an item (created, updated, closed) for every
// enabled integration of its organisation and type, in the caller's write
// transaction: the delivery exists exactly when the change does.
func (s *Server) emit(ctx context.Context, q *db.Queries, orgID int64, itemType, event string, item any) error {
	stamp, key := s.store.WriterStamp(db.TableIntegrations), eventTargetKey{orgID, itemType}
	targets, ok := s.targets.get(key, stamp)
	if !ok {
		var err error
		if targets, err = q.IntegrationsForEvent(ctx, db.IntegrationsForEventParams{OrganisationID: orgID, ItemType: itemType}); err != nil {
			return err
		}
		s.targets.put(key, targets, stamp)
	}
	for _, i := range targets {
		if _, err := s.queueDelivery(ctx, q, i, event, item); err != nil {
			return err
		}
	}
	return nil
}
