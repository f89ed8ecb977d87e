package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/julienschmidt/httprouter"
	"golang.org/x/crypto/bcrypt"

	"workspace/db"
)

// Config is everything the server takes from the command line.
type Config struct {
	// Issuer is the public base URL the server names itself by in tokens.
	Issuer            string
	Audience          string
	Registration      bool
	MaxBody           int64
	MaxProjectsPerOrg int
	MaxMembersPerOrg  int
	ExternalIssuers   []ExternalIssuer
	// OAuthClients may use /oauth/authorize besides the built-in web
	// client (WebClientID).
	OAuthClients []OAuthClient
	// PublicURL is the base of the links in mails: where people reach the
	// app (behind a proxy, its outside address). Default: Issuer.
	PublicURL string
	// SMTPURL sends mail through smtp://user:pass@host:port?from=addr when set.
	SMTPURL string
	// SMSURL sends text messages through Twilio or a signed webhook when
	// set (sms.go).
	SMSURL string
	Logger *slog.Logger
	// Now is the clock; tests move it.
	Now func() time.Time
	// LookupTXT resolves DNS TXT records for domain challenges; tests fake it.
	LookupTXT func(ctx context.Context, name string) ([]string, error)
	// HTTPClient fetches external issuers' discovery documents and keys.
	HTTPClient *http.Client
	// AccountAttempts and AddressAttempts are the failed guesses an account
	// and a client address may make at once (0: the defaults in
	// ratelimit.go); docs/security.md.
	AccountAttempts int
	AddressAttempts int
	// WebhookPoll is how often the webhook worker looks for due deliveries;
	// 0 runs no worker (deliveries wait in the table). AllowPrivateEgress
	// lets deliveries reach loopback and private addresses (tests, labs).
	WebhookPoll        time.Duration
	AllowPrivateEgress bool
	// Reminders runs the daily induction reminder mail (serve sets it).
	Reminders bool
	// SyncRetention: how long the sync change log keeps entries every node
	// holds (0: db.DefaultSyncRetention); a node away longer is told to
	// clone again. PruneSyncLog runs the pruning job (serve sets it).
	SyncRetention time.Duration
	PruneSyncLog  bool
	// MaxJSONBody is the largest body of any request but an upload
	// (multipart), 0: 1 MiB. InFlightBody bounds the body bytes of all
	// requests at once (503 with Retry-After beyond), 0: 128 MiB.
	MaxJSONBody  int64
	InFlightBody int64
	// BodyTimeout is the least time a request body may take to arrive; big
	// bodies get more (bodyDeadline). 0: one minute.
	BodyTimeout time.Duration
	// PasswordCost is the bcrypt cost of new password hashes, 0: 10. The
	// browser tests lower it: under -race one hash at 10 took 1.3 s, and
	// every account they make and every sign-in paid it.
	PasswordCost int
}

// Server holds the dependencies of every handler.
type Server struct {
	cfg     Config
	store   *db.Store
	log     *slog.Logger
	auth    *authenticator
	metrics *metrics
	bg      sync.WaitGroup
	users   userCache
	shown   userCache // users shown in objects (creators), deleted ones included
	targets eventTargets
	// projects keeps project rows read by GET /projects/{id}, the hottest
	// read: a project is read again and again between writes. 5,000 rows:
	// with 50,000 the load benchmark's 10,000 projects took the peak past
	// its 100 MB target (README).
	projects genCache[int64, db.Project]
	access   *accessCache
	bodies   *bodyBudget
	// avatars keeps resized avatars (32 MiB).
	avatars *resizedCache
	mailer  *mailer
	router  *httprouter.Router
	now     func() time.Time
	hsts    bool // the public URL is https: tell browsers to keep to it
	limits  attemptLimits
	app     *appFiles // the embedded web app
	// presence holds who has documents open; streamsStop ends the event
	// streams (StopStreams) at shutdown.
	presence    *presenceHub
	streamsStop chan struct{}
	stopStreams sync.Once
	// clones keeps the clones sent to nodes, so a cut one is resumed.
	clones cloneCache
	// ctx is New's: work a request starts that outlives it (an exchange
	// with head office started from the Sync screen) ends with it.
	ctx context.Context
}

// New builds the HTTP handler over an open store. ctx is the server's
// lifetime: it bounds background work such as refreshing external issuers'
// keys.
func New(ctx context.Context, store *db.Store, cfg Config) (*Server, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = 32 << 20
	}
	if cfg.MaxJSONBody <= 0 {
		cfg.MaxJSONBody = 1 << 20
	}
	if cfg.InFlightBody <= 0 {
		cfg.InFlightBody = 128 << 20
	}
	if cfg.Audience == "" {
		cfg.Audience = "workspace"
	}
	if cfg.Issuer == "" {
		cfg.Issuer = "http://127.0.0.1:8080"
	}
	cfg.Issuer = strings.TrimSuffix(cfg.Issuer, "/")
	if cfg.PublicURL == "" {
		cfg.PublicURL = cfg.Issuer
	}
	cfg.PublicURL = strings.TrimSuffix(cfg.PublicURL, "/")
	if u, err := url.Parse(cfg.PublicURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("--public-url %q: must be an http:// or https:// URL without a query", cfg.PublicURL)
	}
	if cfg.PasswordCost != 0 && (cfg.PasswordCost < bcrypt.MinCost || cfg.PasswordCost > bcrypt.MaxCost) {
		return nil, fmt.Errorf("password cost %d: must be %d-%d", cfg.PasswordCost, bcrypt.MinCost, bcrypt.MaxCost)
	}
	if cfg.LookupTXT == nil {
		cfg.LookupTXT = net.DefaultResolver.LookupTXT
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	var smtpURL *url.URL
	if cfg.SMTPURL != "" {
		u, err := url.Parse(cfg.SMTPURL)
		if err != nil || (u.Scheme != "smtp" && u.Scheme != "smtps") || u.Host == "" {
			return nil, errors.New("the SMTP URL must look like smtp://user:pass@host:port?from=addr")
		}
		smtpURL = u
	}
	var sms *smsGateway
	if cfg.SMSURL != "" {
		g, err := parseSMSURL(cfg.SMSURL)
		if err != nil {
			return nil, err
		}
		sms = g
	}
	keys, err := loadSigningKeys(ctx, store, cfg.Now())
	if err != nil {
		return nil, err
	}
	s := &Server{
		ctx:     ctx,
		cfg:     cfg,
		store:   store,
		log:     cfg.Logger,
		auth:    newAuthenticator(ctx, cfg.Issuer, cfg.Audience, keys, cfg.ExternalIssuers, cfg.HTTPClient, cfg.Logger, cfg.Now),
		now:     cfg.Now,
		limits:  newAttemptLimits(cfg.AccountAttempts, cfg.AddressAttempts),
		bodies:  &bodyBudget{limit: cfg.InFlightBody},
		avatars: newResizedCache(32 << 20),
		access: &accessCache{store: store, scopes: genCache[int64, []db.AccessScopeGrantsRow]{limit: scopeCacheMax},
			pages: genCache[string, []int64]{limit: pageCacheMax}, paged: genCache[string, int64]{limit: 4 * pageCacheMax},
			rows: genCache[int64, []byte]{limit: 50_000}},
		projects: genCache[int64, db.Project]{limit: 5_000},
		hsts:     strings.HasPrefix(strings.ToLower(cfg.Issuer), "https://"),
		app:      defaultAppFiles,
		presence: newPresenceHub(), streamsStop: make(chan struct{}),
	}
	s.metrics = newMetrics(store)
	s.mailer = &mailer{smtp: smtpURL, sms: sms, store: store, log: cfg.Logger, now: s.clock}
	s.router = s.buildRouter()
	if _, err := apiDocument(); err != nil {
		return nil, err // openapi.yaml does not parse: caught by every test
	}
	if cfg.WebhookPoll > 0 {
		// Runs for the server's lifetime (ctx): the queue is in the table.
		s.background(func() { s.deliverWebhooks(ctx, cfg.WebhookPoll) })
	}
	if cfg.Reminders {
		s.background(func() { s.remindDaily(ctx) })
	}
	s.background(func() { s.reloadKeysEvery(ctx, keyReload) })
	s.background(func() { s.sweepPresence(ctx) })
	s.background(func() { s.everySixHours(ctx, "notification purge", s.purgeNotifications) })
	if cfg.PruneSyncLog {
		s.background(func() { s.everySixHours(ctx, "sync log pruning", s.pruneSyncLog) })
	}
	// Event streams end with the server's lifetime at the latest.
	s.background(func() { <-ctx.Done(); s.StopStreams(); s.clones.removeAll() })
	return s, nil
}

// everySixHours runs a clean-up job a minute after start (not in the
// start's own rush of writes) and then every six hours, until ctx ends. A
// failure is logged; the next run tries again.
func (s *Server) everySixHours(ctx context.Context, name string, job func(context.Context, time.Time) (int64, error)) {
	next := time.NewTimer(time.Minute)
	defer next.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-next.C:
		}
		if _, err := job(ctx, s.clock()); err != nil && ctx.Err() == nil {
			s.log.Error(name, "err", err)
		}
		next.Reset(6 * time.Hour)
	}
}

// background runs work for the server's lifetime (New's ctx); Wait waits
// for all of it to stop.
func (s *Server) background(f func()) {
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		f()
	}()
}

// Wait returns when the background work has stopped, after New's context
// ended: the store must not close under a running job.
func (s *Server) Wait() { s.bg.Wait() }

func (s *Server) clock() time.Time { return s.now().UTC() }

// nowText is the current time in the stored layout.
func (s *Server) nowText() string { return db.FormatTime(s.now()) }

type ctxKey int

const (
	requestIDKey ctxKey = iota
	loggerKey
)

var requestCounter atomic.Uint64

func requestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey).(string)
	return id
}

// logger is the server's logger carried by a request, so writeError logs
// where the server logs.
func logger(ctx context.Context) *slog.Logger {
	if l, ok := ctx.Value(loggerKey).(*slog.Logger); ok {
		return l
	}
	return slog.Default()
}

// statusWriter remembers the status for the request log.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// ServeHTTP is the middleware chain: request id, panic recovery, body limit,
// the /users/{id} rewrite, routing, and one log line per request. The query
// string is never logged: signing codes and tokens travel in it.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	id := strconv.FormatUint(requestCounter.Add(1), 36)
	ctx := context.WithValue(r.Context(), requestIDKey, id)
	ctx = withAccessCache(ctx, s.access)
	// A caller may bring its own slot to learn the matched route (the
	// tests' OpenAPI check does).
	route, _ := ctx.Value(routeKey{}).(*routeSlot)
	if route == nil {
		route = &routeSlot{pattern: "unmatched"}
		ctx = context.WithValue(ctx, routeKey{}, route)
	}
	r = r.WithContext(context.WithValue(ctx, loggerKey, s.log))
	// The id is what a 500 names; the header lets a client quote it for any answer.
	h := w.Header()
	h.Set("X-Request-Id", id)
	// Browsers must not guess a type for what we send (an uploaded file
	// served back must never run as HTML or script).
	h.Set("X-Content-Type-Options", "nosniff")
	if s.hsts {
		h.Set("Strict-Transport-Security", "max-age=31536000")
	}
	sw := &statusWriter{ResponseWriter: w}
	path := r.URL.Path
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				panic(p)
			}
			s.log.Error("panic", "panic", p, "request_id", id, "method", r.Method, "path", path)
			if sw.status == 0 {
				writeError(sw, r, errors.New("panic"))
			}
		}
		if sw.status == 0 {
			sw.status = http.StatusOK // what net/http sends for a handler that wrote nothing
		}
		took := time.Since(start)
		s.metrics.observe(route.pattern, sw.status, took)
		s.log.LogAttrs(r.Context(), slog.LevelInfo, "request",
			slog.String("id", id), slog.String("method", r.Method), slog.String("path", path),
			slog.Int("status", sw.status), slog.Duration("duration", took))
	}()
	if r.Body != nil && r.ContentLength != 0 && r.Body != http.NoBody {
		limit := s.bodyLimit(r)
		if r.ContentLength > limit {
			// Refused before a byte is read: the size was announced.
			writeError(sw, r, errBodyTooLarge)
			return
		}
		reserve := limit
		if r.ContentLength > 0 {
			reserve = r.ContentLength
		}
		if !s.bodies.acquire(reserve) {
			sw.Header().Set("Retry-After", "1")
			writeError(sw, r, errorf(http.StatusServiceUnavailable, "The server is receiving too much at once; try again shortly."))
			return
		}
		defer s.bodies.release(reserve)
		r.Body = http.MaxBytesReader(sw, r.Body, limit)
		// A client sending its body a byte at a time must not hold a
		// connection and a goroutine for long. Not supported (tests'
		// recorders) leaves it to the connection's own timeouts.
		_ = http.NewResponseController(sw).SetReadDeadline(time.Now().Add(s.bodyDeadline(r.ContentLength)))
	}
	rewriteUserPath(r)
	rewriteOrgImagePath(r)
	rewriteBranchPath(r)
	s.router.ServeHTTP(sw, r)
}

// bodyLimit is the largest body a request may send: uploads (multipart)
// up to MaxBody, everything else (JSON, forms, public routes) up to
// MaxJSONBody, so unauthenticated requests cannot make the server hold
// large bodies.
func (s *Server) bodyLimit(r *http.Request) int64 {
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); strings.HasPrefix(mt, "multipart/") {
		return s.cfg.MaxBody
	}
	if isClauseWrite(r) {
		return min(maxClauseBody, s.cfg.MaxBody)
	}
	if isSyncObjectPut(r) {
		return min(syncMaxObjectBody, s.cfg.MaxBody)
	}
	if isSyncObjectBatch(r) {
		return min(max(syncBatchBody, s.cfg.MaxJSONBody), s.cfg.MaxBody)
	}
	return min(s.cfg.MaxJSONBody, s.cfg.MaxBody)
}

// bodyBudget bounds the body bytes all requests in flight may hold at once
// (each reserves its announced length, or its limit when none is given).
type bodyBudget struct {
	mu    sync.Mutex
	used  int64
	limit int64
}

func (b *bodyBudget) acquire(n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	// One request larger than the whole budget may still run alone.
	if b.used > 0 && b.used+n > b.limit {
		return false
	}
	b.used += n
	return true
}

func (b *bodyBudget) release(n int64) {
	b.mu.Lock()
	b.used -= n
	b.mu.Unlock()
}

// bodyDeadline is how long a body of n bytes (-1: unknown, so the largest
// allowed) may take to arrive: BodyTimeout, plus a second for every 64 KiB,
// so an upload needs at least 64 KiB/s; at most 15 minutes.
func (s *Server) bodyDeadline(n int64) time.Duration {
	base := s.cfg.BodyTimeout
	if base <= 0 {
		base = time.Minute
	}
	if n < 0 || n > s.cfg.MaxBody {
		n = s.cfg.MaxBody
	}
	return min(base+time.Duration(n>>16)*time.Second, 15*time.Minute)
}

// request is what a handler gets: the exchange, path params and the caller.
type request struct {
	w      http.ResponseWriter
	r      *http.Request
	params httprouter.Params
	user   db.User // the caller; zero for public routes
	ctx    context.Context
	// peeked is the body as a body-scoped route's check read it
	// (routebody.go); nil when unread or unreadable.
	peeked []byte
}

type handlerFunc func(rq *request) error

// handle wraps a handler with authentication, the route's access check
// (routeaccess.go) and the one error exit. The check runs before the
// handler reads the body, so a caller without access is refused as such
// whatever it sends.
func (s *Server) handle(pattern string, acc access, h handlerFunc) httprouter.Handle {
	return func(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
		if slot, ok := r.Context().Value(routeKey{}).(*routeSlot); ok {
			slot.pattern = pattern
		}
		rq := &request{w: w, r: r, params: ps, ctx: r.Context()}
		if acc.auth {
			u, err := s.authenticate(r)
			if err != nil {
				writeError(w, r, err)
				return
			}
			rq.user = u
			if isWrite(r.Method) {
				rq.r = s.withAudit(r, pattern, ps, u.ID)
				rq.ctx = rq.r.Context()
			}
			// An answer made for one caller must not be kept by a shared
			// cache or the browser's history.
			w.Header().Set("Cache-Control", "no-store")
			if err := s.checkAccess(rq, acc); err != nil {
				writeError(w, r, err)
				return
			}
		}
		if err := h(rq); err != nil {
			writeError(w, r, err)
		}
	}
}

func errUnauthorized(msg string) *Error { return errorf(http.StatusUnauthorized, "%s", msg) }

// authenticate checks the bearer token and loads the caller. A token for a
// deleted user is as good as no token.
func (s *Server) authenticate(r *http.Request) (db.User, error) {
	scheme, raw, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	raw = strings.TrimSpace(raw)
	if !ok || !strings.EqualFold(scheme, "Bearer") || raw == "" {
		return db.User{}, errUnauthorized("A bearer token is required.")
	}
	now := s.clock()
	var u db.User
	var err error
	if uid, ok := s.auth.cached(r.Context(), raw, now); ok {
		u, err = s.caller(r.Context(), uid)
	} else {
		u, err = s.verifiedUser(r.Context(), raw, now)
	}
	if db.IsNotFound(err) {
		return db.User{}, errUnauthorized("The token's user no longer exists.")
	}
	return u, err
}

// verifiedUser checks a token the cache does not know, loads its user (an
// external issuer's first token makes one) and remembers the token.
func (s *Server) verifiedUser(ctx context.Context, raw string, now time.Time) (db.User, error) {
	c, local, err := s.auth.verify(ctx, raw)
	if err != nil {
		return db.User{}, errUnauthorized("The bearer token is invalid or expired.")
	}
	var u db.User
	if !local {
		u, err = s.externalUser(ctx, c)
	} else if id, ok := db.ParseID(c.Subject); ok {
		u, err = s.caller(ctx, int64(id))
	} else {
		return db.User{}, errUnauthorized("The bearer token is invalid.")
	}
	if err == nil {
		s.auth.remember(raw, u.ID, c, now)
	}
	return u, err
}

// queryBool reads an optional true/false query parameter (also 1/0, any
// case); absent or empty, it is def.
func (rq *request) queryBool(name string, def bool) (bool, error) {
	switch strings.ToLower(rq.r.URL.Query().Get(name)) {
	case "":
		return def, nil
	case "true", "1":
		return true, nil
	case "false", "0":
		return false, nil
	}
	return false, fieldError(name, "must be true or false")
}

// pathID reads a snowflake path parameter; anything else is a 400.
func (rq *request) pathID(name string) (int64, error) {
	v, ok := db.ParseID(rq.params.ByName(name))
	if !ok {
		return 0, badRequest("The path parameter %s must be a snowflake id.", name)
	}
	return int64(v), nil
}

// pathIDs reads a parent's and a child's snowflake path parameters.
func (rq *request) pathIDs(parent, child string) (parentID, childID int64, err error) {
	if parentID, err = rq.pathID(parent); err != nil {
		return 0, 0, err
	}
	childID, err = rq.pathID(child)
	return parentID, childID, err
}

func (rq *request) decode(dst any) error { return decodeJSON(rq.r, dst) }

func (rq *request) json(status int, v any) error {
	writeJSON(rq.w, status, v)
	return nil
}

func (rq *request) noContent() error {
	rq.w.WriteHeader(http.StatusNoContent)
	return nil
}

// decodeLimited decodes a small JSON document from another service.
func decodeLimited(r io.Reader, dst any) error {
	return json.NewDecoder(io.LimitReader(r, 1<<20)).Decode(dst)
}
