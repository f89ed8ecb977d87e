package server

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"golang.org/x/crypto/bcrypt"

	"workspace/db"
	"workspace/db/dbtest"
)

func TestMain(m *testing.M) {
	bcryptCost = bcrypt.MinCost // hashing cost is not what these tests are about
	code := m.Run()
	testTemplate.Remove()
	// Then every answer the handler tests got must match the API
	// description (openapi_test.go).
	os.Exit(checkAPIAnswers(code))
}

// testTemplate is a database migrated once per test binary, with the signing
// key a first start makes: each test copies it instead of running every
// migration and generating an RSA key again (most of a test's set-up time).
var testTemplate = dbtest.Template{Build: buildTemplate}

// buildTemplate migrates a database and starts a server on it once (which
// stores the signing key), then closes it: closing the last connection
// checkpoints the write-ahead log into the file, so the file alone is whole.
func buildTemplate(path string) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	store, err := db.Open(ctx, db.Options{Path: path, Synchronous: "NORMAL", NodeID: -1})
	if err != nil {
		return fmt.Errorf("open template: %w", err)
	}
	clock := &testClock{now: testClockStart}
	srv, err := New(ctx, store, Config{Issuer: "http://workspace.test", Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Now: clock.Now})
	if err != nil {
		store.Close()
		return fmt.Errorf("template server: %w", err)
	}
	cancel()
	srv.Wait()
	if err := store.Close(); err != nil {
		return err
	}
	if _, err := os.Stat(path + "-wal"); err == nil {
		return fmt.Errorf("template: %s-wal left after close", path)
	}
	return nil
}

// testClockStart is where every test's clock starts.
var testClockStart = time.Date(2026, 11, 21, 9, 30, 0, 0, time.UTC)

// testClock is a clock tests can move forward.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// testEnv is a server over a fresh SQLite file in a temp dir.
type testEnv struct {
	t     testing.TB
	srv   *Server
	store *db.Store
	clock *testClock
	cfg   Config
}

// newEnv starts a server; opts adjust its Config before it is built.
func newEnv(t testing.TB, opts ...func(*Config)) *testEnv {
	t.Helper()
	return newEnvAt(t, filepath.Join(t.TempDir(), "test.db"), opts...)
}

// newEnvAt is newEnv with the database file at path.
func newEnvAt(t testing.TB, path string, opts ...func(*Config)) *testEnv {
	t.Helper()
	if err := testTemplate.CopyTo(path); err != nil {
		t.Fatalf("template database: %v", err)
	}
	return openEnv(t, path, opts...)
}

// openEnv starts a server over the database file at path as it is (a
// site laptop's clone, say).
func openEnv(t testing.TB, path string, opts ...func(*Config)) *testEnv {
	t.Helper()
	ctx := context.Background()
	// Unprepared: a test runs a few dozen of the queries; buildTemplate
	// prepared them all once (so one SQLite cannot parse still fails)
	store, err := db.Open(ctx, db.Options{Path: path, Synchronous: "NORMAL", NodeID: -1, Unprepared: true})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { store.Close() })
	// The server's lifetime: background work (webhook deliveries, key
	// refreshes) stops before the store closes (cleanups run last first).
	ctx, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel)
	clock := &testClock{now: testClockStart}
	cfg := Config{
		Issuer:       "http://workspace.test",
		Registration: true,
		Logger:       slog.New(slog.NewTextHandler(io.Discard, nil)),
		Now:          clock.Now,
	}
	for _, o := range opts {
		o(&cfg)
	}
	srv, err := New(ctx, store, cfg)
	if err != nil {
		t.Fatalf("new server: %v", err)
	}
	t.Cleanup(func() { cancel(); srv.Wait() }) // jobs stop before the store closes
	return &testEnv{t: t, srv: srv, store: store, clock: clock, cfg: cfg}
}

// testUser is an account with a valid access token.
type testUser struct {
	ID    string // decimal snowflake
	id    int64
	Email string
	Token string
}

// user makes an account (e-mail name@example.com, verified) and a token for it.
func (e *testEnv) user(name string) *testUser {
	e.t.Helper()
	email := strings.ToLower(name) + "@example.com"
	u, err := e.srv.createUser(context.Background(), email, "", name, "Tester", 0, true)
	if err != nil {
		e.t.Fatalf("create user %s: %v", name, err)
	}
	return e.tokenFor(u)
}

func (e *testEnv) tokenFor(u db.User) *testUser {
	e.t.Helper()
	tok, err := e.srv.auth.accessToken(u, e.clock.Now())
	if err != nil {
		e.t.Fatalf("token: %v", err)
	}
	return &testUser{ID: db.ID(u.ID).String(), id: u.ID, Email: u.Email, Token: tok}
}

// testResponse is a recorded answer.
type testResponse struct {
	Status int
	Header http.Header
	Body   []byte
}

// do sends a request as u (nil: no token). body is sent raw when it is a
// string or []byte, else JSON-encoded; nil sends none.
func (e *testEnv) do(u *testUser, method, path string, body any) *testResponse {
	e.t.Helper()
	var rd io.Reader
	ct := ""
	switch b := body.(type) {
	case nil:
	case string:
		rd, ct = strings.NewReader(b), "application/json"
	case []byte:
		rd, ct = bytes.NewReader(b), "application/json"
	default:
		j, err := json.Marshal(b)
		if err != nil {
			e.t.Fatalf("encode body: %v", err)
		}
		rd, ct = bytes.NewReader(j), "application/json"
	}
	req := httptest.NewRequest(method, path, rd)
	if ct != "" {
		req.Header.Set("Content-Type", ct)
	}
	if u != nil {
		req.Header.Set("Authorization", "Bearer "+e.bearer(u))
	}
	return e.serve(req)
}

// serve runs a prepared request through the whole handler.
func (e *testEnv) serve(req *http.Request) *testResponse {
	rec := httptest.NewRecorder()
	route := &routeSlot{pattern: "unmatched"} // the server names the matched route here
	req = req.WithContext(context.WithValue(req.Context(), routeKey{}, route))
	body := requestBody(req)
	e.srv.ServeHTTP(rec, req)
	r := &testResponse{Status: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()}
	apiResponses.record(req, body, route.pattern, r)
	return r
}

// must sends a request and fails the test unless the status is want.
func (e *testEnv) must(want int, u *testUser, method, path string, body any) *testResponse {
	e.t.Helper()
	r := e.do(u, method, path, body)
	if r.Status != want {
		e.t.Fatalf("%s %s: status %d, want %d; body %s", method, path, r.Status, want, r.Body)
	}
	return r
}

// obj decodes the body as a JSON object.
func (r *testResponse) obj(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatalf("body is not a JSON object: %v: %s", err, r.Body)
	}
	return m
}

// arr decodes the body as a JSON array of objects.
func (r *testResponse) arr(t testing.TB) []map[string]any {
	t.Helper()
	var a []map[string]any
	if err := json.Unmarshal(r.Body, &a); err != nil {
		t.Fatalf("body is not a JSON array: %v: %s", err, r.Body)
	}
	return a
}

// scenario is one row of a handler test table.
type scenario struct {
	name   string
	as     *testUser
	method string
	path   string
	body   any
	want   int
	check  func(t *testing.T, r *testResponse) // optional extra assertions
}

// run runs scenarios in order (later rows may depend on earlier ones).
func (e *testEnv) run(t *testing.T, rows []scenario) {
	t.Helper()
	for _, sc := range rows {
		t.Run(sc.name, func(t *testing.T) {
			r := e.do(sc.as, sc.method, sc.path, sc.body)
			if r.Status != sc.want {
				t.Fatalf("%s %s: status %d, want %d; body %s", sc.method, sc.path, r.Status, sc.want, r.Body)
			}
			if r.Status >= 400 {
				assertErrorBody(t, r)
			}
			if sc.check != nil {
				sc.check(t, r)
			}
		})
	}
}

// assertErrorBody checks the error body shape every error must have.
func assertErrorBody(t testing.TB, r *testResponse) {
	t.Helper()
	var body struct {
		Code    *int    `json:"code"`
		Message *string `json:"message"`
	}
	if err := json.Unmarshal(r.Body, &body); err != nil || body.Code == nil || body.Message == nil || *body.Message == "" {
		t.Fatalf("error body is not {code, message}: %s", r.Body)
	}
	if r.Status == http.StatusUnauthorized && r.Header.Get("WWW-Authenticate") == "" {
		t.Fatalf("401 without WWW-Authenticate")
	}
}

// org creates an organisation owned by u and returns its id.
func (e *testEnv) org(u *testUser, name string) string {
	e.t.Helper()
	r := e.must(http.StatusCreated, u, "POST", "/organisations", map[string]any{"name": name})
	return r.obj(e.t)["id"].(string)
}

// addMember puts u into the organisation directly (not pending).
func (e *testEnv) addMember(orgID string, u *testUser) {
	e.t.Helper()
	oid, _ := db.ParseID(orgID)
	err := e.store.InTx(context.Background(), func(q *db.Queries) error {
		return q.MemberCreate(context.Background(), db.MemberCreateParams{OrganisationID: int64(oid), UserID: u.id, JoinedAt: e.srv.nowText()})
	})
	if err != nil {
		e.t.Fatalf("add member: %v", err)
	}
}

// wantField checks that a 400 names the field.
func wantField(field string) func(t *testing.T, r *testResponse) {
	return func(t *testing.T, r *testResponse) {
		t.Helper()
		errs, _ := r.obj(t)["errors"].(map[string]any)
		if _, ok := errs[field]; !ok {
			t.Errorf("errors = %v, want the field %q named", errs, field)
		}
	}
}

func wantKey(key string, want any) func(t *testing.T, r *testResponse) {
	return func(t *testing.T, r *testResponse) {
		t.Helper()
		if got := r.obj(t)[key]; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%s = %v, want %v", key, got, want)
		}
	}
}

func wantLen(n int) func(t *testing.T, r *testResponse) {
	return func(t *testing.T, r *testResponse) {
		t.Helper()
		if got := len(r.arr(t)); got != n {
			t.Fatalf("got %d items, want %d: %s", got, n, r.Body)
		}
	}
}

// rawRole makes a role directly in the store (rank is its sort_order, 0
// highest) and assigns it to members, for areas tested before the role
// endpoints exist. Returns the role id.
func (e *testEnv) rawRole(orgID, name string, rank int64, members ...*testUser) string {
	e.t.Helper()
	oid, _ := db.ParseID(orgID)
	ctx := context.Background()
	id := e.store.IDs.Next()
	err := e.store.InTx(ctx, func(q *db.Queries) error {
		_, err := q.RoleCreate(ctx, db.RoleCreateParams{ID: id, OrganisationID: int64(oid), Name: name, SortOrder: rank, CreatedAt: e.srv.nowText()})
		return err
	})
	if err != nil {
		e.t.Fatalf("create role: %v", err)
	}
	for _, u := range members {
		if _, err := e.write(`INSERT INTO member_roles(organisation_id, user_id, role_id) VALUES (?, ?, ?)`, int64(oid), u.id, id); err != nil {
			e.t.Fatalf("assign role: %v", err)
		}
	}
	return db.ID(id).String()
}

var bearerMu sync.Mutex

// bearer is the token do sends for u. Token expiry follows the test clock,
// so for accounts made by e.user (id set) a token that has expired at the
// current test clock is minted afresh: tests that move the clock by days keep
// their users signed in. Tokens set by hand (id 0) are sent as they are,
// which is how a test sends an expired or forged token.
func (e *testEnv) bearer(u *testUser) string {
	if u.id == 0 {
		return u.Token
	}
	bearerMu.Lock()
	defer bearerMu.Unlock()
	var c jwt.RegisteredClaims
	now := e.clock.Now()
	if _, _, err := jwt.NewParser().ParseUnverified(u.Token, &c); err == nil && c.ExpiresAt != nil && now.Add(time.Minute).Before(c.ExpiresAt.Time) {
		return u.Token
	}
	tok, err := e.srv.auth.accessToken(db.User{ID: u.id, Email: u.Email}, now)
	if err != nil {
		e.t.Fatalf("token: %v", err)
	}
	u.Token = tok
	return tok
}

// write runs fixture SQL through the store's write path (so the store's
// write generation moves, as for every real write).
func (e *testEnv) write(query string, args ...any) (sql.Result, error) {
	var res sql.Result
	err := e.store.InTxSQL(context.Background(), func(tx *sql.Tx, _ *db.Queries) error {
		var err error
		res, err = tx.ExecContext(context.Background(), query, args...)
		return err
	})
	return res, err
}
