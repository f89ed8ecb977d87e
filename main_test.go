package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"workspace/db"
	"workspace/db/dbtest"
	"workspace/server"
)

func TestMain(m *testing.M) {
	code := m.Run()
	serveTemplate.Remove()
	os.Exit(code)
}

// serveTemplate is a database migrated once per test binary, with the
// signing key a first start stores: a test that starts `serve` on a new
// database copies it (servedDB) instead of running every migration and
// generating a key again, most of a start's time under -race. The commands
// that migrate (TestCommands' migrate, restore) still start from nothing.
var serveTemplate = dbtest.Template{Build: func(path string) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	store, err := db.Open(ctx, db.Options{Path: path, Synchronous: "NORMAL", NodeID: -1})
	if err != nil {
		return err
	}
	srv, err := server.New(ctx, store, server.Config{Issuer: "http://workspace.test", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		store.Close()
		return err
	}
	cancel()
	srv.Wait() // its background jobs end before the store closes
	// Closing the last connection checkpoints the log into the file.
	return store.Close()
}}

// servedDB puts a copy of serveTemplate at path (a new database, as the
// first start of serve leaves it) and returns path. Copies share the
// template's node id.
func servedDB(t *testing.T, path string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := serveTemplate.CopyTo(path); err != nil {
		t.Fatalf("template database: %v", err)
	}
	return path
}

// syncBuffer collects a command's output while it runs.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func noEnv(string) string { return "" }

// patience bounds every wait in these tests: a deadline, never a timing
// assertion. A server starting under -race on a busy 2-core machine (all
// packages' tests at once) needs far more than it does alone.
const patience = 90 * time.Second

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(patience)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond) // polling interval, not synchronisation
	}
}

// served is a running `serve`.
type served struct {
	base   string
	addr   string
	cancel context.CancelFunc
	done   chan struct{} // closed when run returned
	err    error         // what run returned; read after done
	out    *syncBuffer
}

// startServe runs `serve` in a goroutine and waits until /healthz answers.
func startServe(t *testing.T, args ...string) *served {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s := &served{cancel: cancel, done: make(chan struct{}), out: &syncBuffer{}}
	stderr := &syncBuffer{}
	go func() {
		defer close(s.done)
		s.err = run(ctx, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...), noEnv, s.out, stderr)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-s.done:
		case <-time.After(30 * time.Second):
			t.Error("serve did not stop")
		}
	})
	waitFor(t, "the listening line", func() bool {
		select {
		case <-s.done:
			t.Fatalf("serve returned early: %v; stderr %s", s.err, stderr.String())
		default:
		}
		return strings.Contains(s.out.String(), "listening on http://")
	})
	line := s.out.String()
	line = line[strings.Index(line, "listening on http://")+len("listening on http://"):]
	s.addr = strings.TrimSpace(strings.SplitN(line, "\n", 2)[0])
	s.base = "http://" + s.addr
	waitFor(t, "/healthz", func() bool {
		r, err := http.Get(s.base + "/healthz")
		if err != nil {
			return false
		}
		r.Body.Close()
		return r.StatusCode == http.StatusOK
	})
	return s
}

// call sends a request and decodes a JSON answer.
func call(t *testing.T, method, u, token, contentType, body string) (int, map[string]any, []any) {
	t.Helper()
	req, err := http.NewRequest(method, u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, u, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var obj map[string]any
	var arr []any
	if json.Unmarshal(b, &obj) != nil {
		_ = json.Unmarshal(b, &arr)
	}
	return resp.StatusCode, obj, arr
}

func signIn(t *testing.T, base, email, password string) string {
	t.Helper()
	form := url.Values{"grant_type": {"password"}, "username": {email}, "password": {password}}.Encode()
	st, tok, _ := call(t, "POST", base+"/oauth/token", "", "application/x-www-form-urlencoded", form)
	if st != http.StatusOK {
		t.Fatalf("sign in %s: status %d, body %v", email, st, tok)
	}
	return tok["access_token"].(string)
}

func TestServeEndToEnd(t *testing.T) {
	t.Parallel()
	dbPath := servedDB(t, filepath.Join(t.TempDir(), "ws.db"))
	ctx := context.Background()
	var out syncBuffer
	if err := run(ctx, []string{"admin", "create", "--db", dbPath, "--email", "root@example.com", "--password", "staff-pass"}, noEnv, &out, io.Discard); err != nil {
		t.Fatalf("admin create: %v", err)
	}
	s := startServe(t, "--db", dbPath, "--synchronous", "NORMAL", "--max-body", "4096")

	st, user, _ := call(t, "POST", s.base+"/auth/register", "", "application/json", `{"email":"e2e@example.com","password":"e2e-password","first_name":"End"}`)
	if st != http.StatusCreated {
		t.Fatalf("register: status %d, body %v", st, user)
	}
	tok := signIn(t, s.base, "e2e@example.com", "e2e-password")
	st, me, _ := call(t, "GET", s.base+"/users/@me", tok, "", "")
	if st != http.StatusOK || me["id"] != user["id"] || me["first_name"] != "End" {
		t.Fatalf("/users/@me: status %d, body %v; want the registered user", st, me)
	}

	t.Run("max-body is wired", func(t *testing.T) {
		big := `{"email":"big@example.com","password":"12345678","first_name":"` + strings.Repeat("x", 5000) + `"}`
		if st, body, _ := call(t, "POST", s.base+"/auth/register", "", "application/json", big); st != http.StatusRequestEntityTooLarge {
			t.Fatalf("status %d, body %v; want 413", st, body)
		}
	})
	t.Run("admin create made a Staff user who reads the outbox", func(t *testing.T) {
		staff := signIn(t, s.base, "root@example.com", "staff-pass")
		st, me, _ := call(t, "GET", s.base+"/users/@me", staff, "", "")
		if badges, _ := me["badges"].(float64); st != 200 || int64(badges)&(1<<31) == 0 {
			t.Fatalf("staff user: status %d, badges %v; want bit 31", st, me["badges"])
		}
		if st, _, arr := call(t, "GET", s.base+"/admin/outbox", staff, "", ""); st != http.StatusOK || arr == nil {
			t.Fatalf("outbox as staff: status %d, want 200 with an array", st)
		}
		if st, _, _ := call(t, "GET", s.base+"/admin/outbox", tok, "", ""); st != http.StatusForbidden {
			t.Fatalf("outbox as a plain user: status %d, want 403", st)
		}
	})
	t.Run("restore is refused while serving", func(t *testing.T) {
		copyPath := filepath.Join(t.TempDir(), "copy.db")
		if err := run(ctx, []string{"backup", "--db", dbPath, "--out", copyPath}, noEnv, io.Discard, io.Discard); err != nil {
			t.Fatalf("backup: %v", err)
		}
		err := run(ctx, []string{"restore", "--db", dbPath, "--from", copyPath}, noEnv, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), "in use by a running server") {
			t.Fatalf("restore while serving: %v, want a refusal", err)
		}
	})
	t.Run("a second server on the same database is refused", func(t *testing.T) {
		err := run(ctx, []string{"serve", "--db", dbPath, "--addr", "127.0.0.1:0"}, noEnv, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), "in use") {
			t.Fatalf("second serve: %v, want a refusal", err)
		}
	})
	t.Run("backup while serving", func(t *testing.T) {
		copyPath := filepath.Join(t.TempDir(), "copy.db")
		var out syncBuffer
		if err := run(ctx, []string{"backup", "--db", dbPath, "--out", copyPath}, noEnv, &out, io.Discard); err != nil {
			t.Fatalf("backup: %v", err)
		}
		cp, err := sql.Open("sqlite", "file:"+copyPath+"?mode=ro")
		if err != nil {
			t.Fatal(err)
		}
		defer cp.Close()
		var n int
		if err := cp.QueryRow(`SELECT count(*) FROM users WHERE email = 'e2e@example.com'`).Scan(&n); err != nil || n != 1 {
			t.Fatalf("the copy holds %d registered users (%v), want 1", n, err)
		}
		// The server still works after the backup.
		if st, _, _ := call(t, "GET", s.base+"/users/@me", tok, "", ""); st != http.StatusOK {
			t.Fatalf("after backup: status %d", st)
		}
	})

	// Graceful shutdown: a request the server is handling when the context
	// is cancelled still completes. The request's body is held back until
	// the listener has closed; Expect: 100-continue tells us when the
	// handler has started reading it.
	body, bodyW := io.Pipe()
	req, err := http.NewRequest("POST", s.base+"/auth/register", body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Expect", "100-continue")
	handling := make(chan struct{})
	var once sync.Once
	req = req.WithContext(httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
		Got100Continue: func() { once.Do(func() { close(handling) }) },
	}))
	client := &http.Client{Transport: &http.Transport{ExpectContinueTimeout: time.Minute}}
	type result struct {
		status int
		err    error
	}
	inflight := make(chan result, 1)
	go func() {
		resp, err := client.Do(req)
		if err != nil {
			inflight <- result{err: err}
			return
		}
		resp.Body.Close()
		inflight <- result{status: resp.StatusCode}
	}()
	select {
	case <-handling:
	case r := <-inflight:
		t.Fatalf("in-flight request ended before its body was sent: %+v", r)
	case <-time.After(patience):
		t.Fatal("the server never asked for the body")
	}
	s.cancel()
	waitFor(t, "the listener to close", func() bool {
		c, err := net.DialTimeout("tcp", s.addr, time.Second)
		if err != nil {
			return true
		}
		c.Close()
		return false
	})
	select {
	case <-s.done:
		t.Fatalf("serve returned (%v) while a request was in flight", s.err)
	default:
	}
	if _, err := io.WriteString(bodyW, `{"email":"late@example.com","password":"late-password"}`); err != nil {
		t.Fatal(err)
	}
	bodyW.Close()
	select {
	case r := <-inflight:
		if r.err != nil || r.status != http.StatusCreated {
			t.Fatalf("in-flight request: status %d, err %v; want 201", r.status, r.err)
		}
	case <-time.After(patience):
		t.Fatal("in-flight request never completed")
	}
	select {
	case <-s.done:
		if s.err != nil {
			t.Fatalf("serve returned %v, want nil after a graceful shutdown", s.err)
		}
	case <-time.After(patience):
		t.Fatal("serve did not return after cancel")
	}
	// The late registration was committed before serve returned.
	store, err := db.Open(ctx, db.Options{Path: dbPath, NodeID: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if _, err := store.R.UserGetByEmail(ctx, "late@example.com"); err != nil {
		t.Fatalf("the in-flight registration is not in the database: %v", err)
	}
}

func TestServeFlags(t *testing.T) {
	t.Parallel()
	t.Run("registration off and a fixed node id", func(t *testing.T) {
		dbPath := servedDB(t, filepath.Join(t.TempDir(), "ws.db"))
		s := startServe(t, "--db", dbPath, "--registration=false", "--node-id", "7")
		if st, _, _ := call(t, "POST", s.base+"/auth/register", "", "application/json", `{"email":"x@example.com","password":"12345678"}`); st != http.StatusForbidden {
			t.Fatalf("register with registration off: status %d, want 403", st)
		}
		if err := run(context.Background(), []string{"admin", "create", "--db", dbPath, "--email", "n@example.com"}, func(k string) string {
			if k == "WORKSPACE_ADMIN_PASSWORD" {
				return "from-the-env"
			}
			return ""
		}, io.Discard, io.Discard); err != nil {
			t.Fatalf("admin create with the password from the environment: %v", err)
		}
		tok := signIn(t, s.base, "n@example.com", "from-the-env")
		// Ids minted by this server carry node 7.
		st, org, _ := call(t, "POST", s.base+"/organisations", tok, "application/json", `{"name":"Node Seven"}`)
		if st != http.StatusCreated {
			t.Fatalf("create organisation: status %d, body %v", st, org)
		}
		oid, _ := strconv.ParseInt(org["id"].(string), 10, 64)
		if node := oid >> 12 & 1023; node != 7 {
			t.Fatalf("id %d has node %d, want 7", oid, node)
		}
	})
	t.Run("issuer URL names the server", func(t *testing.T) {
		s := startServe(t, "--db", servedDB(t, filepath.Join(t.TempDir(), "ws.db")), "--issuer-url", "https://ws.example.com/")
		_, d, _ := call(t, "GET", s.base+"/.well-known/openid-configuration", "", "", "")
		if d["issuer"] != "https://ws.example.com" {
			t.Fatalf("issuer = %v, want https://ws.example.com", d["issuer"])
		}
	})
}

// TestServeExternalIssuer: --oidc-issuer and --oidc-audience reach the
// server; an issuer stood up here signs a token that serve accepts.
func TestServeExternalIssuer(t *testing.T) {
	t.Parallel()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	var iss *httptest.Server
	iss = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/.well-known/openid-configuration":
			json.NewEncoder(w).Encode(map[string]string{"issuer": iss.URL, "jwks_uri": iss.URL + "/jwks"})
		case "/jwks":
			json.NewEncoder(w).Encode(map[string]any{"keys": []map[string]string{{
				"kty": "RSA", "alg": "RS256", "use": "sig", "kid": "cli",
				"n": base64.RawURLEncoding.EncodeToString(key.N.Bytes()),
				"e": base64.RawURLEncoding.EncodeToString(big.NewInt(int64(key.E)).Bytes()),
			}}})
		default:
			http.NotFound(w, r)
		}
	}))
	defer iss.Close()
	s := startServe(t, "--db", servedDB(t, filepath.Join(t.TempDir(), "ws.db")), "--oidc-issuer", iss.URL, "--oidc-audience", "cli-aud")
	sign := func(aud string) string {
		tok := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.MapClaims{
			"iss": iss.URL, "aud": aud, "sub": "cli-user", "email": "cli@corp.example", "email_verified": true,
			"exp": time.Now().Add(time.Hour).Unix(),
		})
		tok.Header["kid"] = "cli"
		raw, err := tok.SignedString(key)
		if err != nil {
			t.Fatal(err)
		}
		return raw
	}
	st, me, _ := call(t, "GET", s.base+"/users/@me", sign("cli-aud"), "", "")
	if st != http.StatusOK || me["email"] != "cli@corp.example" {
		t.Fatalf("external token: status %d, body %v; want the user made from it", st, me)
	}
	if st, _, _ := call(t, "GET", s.base+"/users/@me", sign("other"), "", ""); st != http.StatusUnauthorized {
		t.Fatalf("wrong audience: status %d, want 401", st)
	}
}

func TestCommands(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "ws.db")
	t.Run("migrate twice", func(t *testing.T) {
		for i := range 2 {
			var out syncBuffer
			if err := run(ctx, []string{"migrate", "--db", dbPath}, noEnv, &out, io.Discard); err != nil {
				t.Fatalf("migrate #%d: %v", i+1, err)
			}
			if !strings.Contains(out.String(), "up to date") {
				t.Fatalf("migrate #%d said %q", i+1, out.String())
			}
		}
		d, err := sql.Open("sqlite", dbPath)
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		var applied, distinct int
		if err := d.QueryRow(`SELECT count(*), count(DISTINCT version) FROM schema_migrations`).Scan(&applied, &distinct); err != nil {
			t.Fatal(err)
		}
		if applied == 0 || applied != distinct {
			t.Fatalf("schema_migrations: %d rows, %d versions; want each migration once", applied, distinct)
		}
	})
	t.Run("admin rotate-keys", func(t *testing.T) {
		var out syncBuffer
		if err := run(ctx, []string{"admin", "rotate-keys", "--db", dbPath}, noEnv, &out, io.Discard); err != nil {
			t.Fatal(err)
		}
		d, err := sql.Open("sqlite", dbPath)
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		var n int
		if err := d.QueryRow(`SELECT count(*) FROM signing_keys`).Scan(&n); err != nil || n != 1 || !strings.Contains(out.String(), "new signing key") {
			t.Fatalf("%d keys after rotating an empty database (%v); said %q", n, err, out.String())
		}
	})
	t.Run("admin create twice with one e-mail", func(t *testing.T) {
		args := []string{"admin", "create", "--db", dbPath, "--email", "twice@example.com", "--password", "12345678"}
		if err := run(ctx, args, noEnv, io.Discard, io.Discard); err != nil {
			t.Fatal(err)
		}
		err := run(ctx, args, noEnv, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), "email") {
			t.Fatalf("second admin create: %v, want an error naming the e-mail", err)
		}
	})
	bad := []struct {
		name string
		args []string
	}{
		{"no command args", []string{"nonsense"}},
		{"unknown flag", []string{"serve", "--no-such-flag"}},
		{"positional argument", []string{"migrate", "--db", dbPath, "extra"}},
		{"node id too big", []string{"serve", "--db", dbPath, "--addr", "127.0.0.1:0", "--node-id", "1024"}},
		{"node id negative", []string{"serve", "--db", dbPath, "--addr", "127.0.0.1:0", "--node-id", "-5"}},
		{"node id not a number", []string{"serve", "--node-id", "seven"}},
		{"synchronous unknown", []string{"serve", "--db", dbPath, "--addr", "127.0.0.1:0", "--synchronous", "fast"}},
		{"max body zero", []string{"serve", "--db", dbPath, "--addr", "127.0.0.1:0", "--max-body", "0"}},
		{"negative quota", []string{"serve", "--db", dbPath, "--addr", "127.0.0.1:0", "--max-members-per-org", "-1"}},
		{"issuer without audience", []string{"serve", "--db", dbPath, "--addr", "127.0.0.1:0", "--oidc-issuer", "https://id.example.com"}},
		{"issuer not a URL", []string{"serve", "--db", dbPath, "--addr", "127.0.0.1:0", "--oidc-issuer", "id.example.com", "--oidc-audience", "a"}},
		{"bad smtp url", []string{"serve", "--db", dbPath, "--addr", "127.0.0.1:0", "--smtp-url", "mail.example.com"}},
		{"bad sms url", []string{"serve", "--db", dbPath, "--addr", "127.0.0.1:0", "--sms-url", "https://hooks.example.com/sms"}},
		{"bad listen address", []string{"serve", "--db", dbPath, "--addr", "not-an-address"}},
		{"public url not http", []string{"serve", "--db", dbPath, "--addr", "127.0.0.1:0", "--public-url", "work.example.com"}},
		{"public url with a query", []string{"serve", "--db", dbPath, "--addr", "127.0.0.1:0", "--public-url", "https://work.example.com/?x=1"}},
		{"backup without --out", []string{"backup", "--db", dbPath}},
		{"backup of a missing database", []string{"backup", "--db", filepath.Join(dir, "missing.db"), "--out", filepath.Join(dir, "x.db")}},
		{"backup onto the database", []string{"backup", "--db", dbPath, "--out", dbPath}},
		{"restore without --from", []string{"restore", "--db", dbPath}},
		{"restore from a missing copy", []string{"restore", "--db", dbPath, "--from", filepath.Join(dir, "missing.db")}},
		{"restore from the database itself", []string{"restore", "--db", dbPath, "--from", dbPath}},
		{"backups too often", []string{"serve", "--db", dbPath, "--addr", "127.0.0.1:0", "--backup-dir", dir, "--backup-every", "1s"}},
		{"negative backup-keep", []string{"serve", "--db", dbPath, "--addr", "127.0.0.1:0", "--backup-keep", "-1"}},
		{"admin create without e-mail", []string{"admin", "create", "--db", dbPath, "--password", "12345678"}},
		{"admin create without password", []string{"admin", "create", "--db", dbPath, "--email", "a@example.com"}},
		{"admin create short password", []string{"admin", "create", "--db", dbPath, "--email", "a@example.com", "--password", "short"}},
		{"admin create bad e-mail", []string{"admin", "create", "--db", dbPath, "--email", "nope", "--password", "12345678"}},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			done := make(chan error, 1)
			go func() { done <- run(ctx, tc.args, noEnv, io.Discard, io.Discard) }()
			select {
			case err := <-done:
				if err == nil {
					t.Fatal("want an error")
				}
			case <-time.After(patience):
				t.Fatal("the command did not fail; it may be serving")
			}
		})
	}
}

func TestParseOAuthClients(t *testing.T) {
	t.Parallel()
	env := func(k string) string {
		if k == "WORKSPACE_OAUTH_SECRET_MY_PROXY" {
			return "s3cret"
		}
		return ""
	}
	for _, tc := range []struct {
		vals   []string
		ok     bool
		secret string
		uris   int
	}{
		{[]string{"my-proxy=https://p.example/cb,https://p.example/cb2"}, true, "s3cret", 2},
		{[]string{"mobile=com.example.app:/cb"}, true, "", 1},
		{[]string{"no-uri"}, false, "", 0},
		{[]string{"workspace-web=https://x.example/cb"}, false, "", 0},
		{[]string{"app=/relative"}, false, "", 0},
	} {
		got, err := parseOAuthClients(tc.vals, env)
		if (err == nil) != tc.ok {
			t.Errorf("%v: err %v, want ok=%v", tc.vals, err, tc.ok)
			continue
		}
		if tc.ok && (got[0].Secret != tc.secret || len(got[0].RedirectURIs) != tc.uris) {
			t.Errorf("%v: got %+v", tc.vals, got)
		}
	}
}

// TestScheduledBackups: the serve loop takes checked copies on its
// interval and rotates them.
func TestScheduledBackups(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	dbPath := servedDB(t, filepath.Join(dir, "ws.db"))
	if err := run(ctx, []string{"migrate", "--db", dbPath}, noEnv, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	backups := filepath.Join(dir, "backups")
	stop := scheduleBackups(ctx, slog.New(slog.NewTextHandler(io.Discard, nil)), dbPath, backups, 20*time.Millisecond, 2)
	deadline := time.Now().Add(patience)
	for {
		copies, _ := filepath.Glob(filepath.Join(backups, "workspace-*.db"))
		if len(copies) == 2 && !db.LastBackup().IsZero() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("copies %v after 20 s", copies)
		}
		time.Sleep(10 * time.Millisecond)
	}
	stop()
	copies, _ := filepath.Glob(filepath.Join(backups, "workspace-*.db"))
	if len(copies) > 2 {
		t.Fatalf("kept %d copies, want at most 2", len(copies))
	}
}

// TestServeMetricsListener: --metrics-addr serves the metrics on a listener
// of their own; the API's listener does not have them.
func TestServeMetricsListener(t *testing.T) {
	t.Parallel()
	s := startServe(t, "--db", servedDB(t, filepath.Join(t.TempDir(), "ws.db")), "--synchronous", "NORMAL", "--metrics-addr", "127.0.0.1:0")
	out := s.out.String()
	i := strings.Index(out, "metrics on http://")
	if i < 0 {
		t.Fatalf("no metrics line in %q", out)
	}
	url := strings.TrimSpace(strings.SplitN(out[i+len("metrics on "):], "\n", 2)[0])
	if st, _, _ := call(t, "GET", s.base+"/readyz", "", "", ""); st != http.StatusOK {
		t.Fatalf("readyz: %d", st)
	}
	r, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(r.Body)
	r.Body.Close()
	if r.StatusCode != 200 || !strings.Contains(string(body), `workspace_http_requests_total{code="200",route="GET /readyz"}`) {
		t.Fatalf("metrics: %d %s", r.StatusCode, body)
	}
	if r, err := http.Get(s.base + "/metrics"); err != nil || r.StatusCode != http.StatusNotFound {
		t.Fatalf("the API listener answers /metrics: %v %v", err, r.StatusCode)
	}
	// Profiles come from the metrics listener only.
	pprofURL := strings.TrimSuffix(url, "/metrics") + "/debug/pprof/heap?debug=1"
	if r, err := http.Get(pprofURL); err != nil || r.StatusCode != http.StatusOK {
		t.Fatalf("metrics listener pprof heap: %v %v", err, r)
	}
	if r, err := http.Get(s.base + "/debug/pprof/heap?debug=1"); err != nil || r.StatusCode != http.StatusNotFound {
		t.Fatalf("the API listener answers pprof: %v %v", err, r)
	}
}

// TestAuditVerifyCommand: `audit verify` passes a whole trail and names the
// entry that was changed directly in the file.
func TestAuditVerifyCommand(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dbPath := servedDB(t, filepath.Join(t.TempDir(), "ws.db"))
	store, err := db.Open(ctx, db.Options{Path: dbPath, NodeID: -1})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		err := store.InTx(ctx, func(q *db.Queries) error {
			return db.AuditAppendEntry(ctx, q, db.AuditLog{ID: store.IDs.Next(), Chain: 7, Action: "POST /things", TargetIds: "{}",
				ChangedFields: `["name"]`, RequestID: strconv.Itoa(i), CreatedAt: "2026-11-25T10:00:00.000Z"})
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	store.Close()
	var out syncBuffer
	if err := run(ctx, []string{"audit", "verify", "--db", dbPath}, noEnv, &out, io.Discard); err != nil || !strings.Contains(out.String(), "3 audit entries checked") {
		t.Fatalf("verify a whole trail: %v, %q", err, out.String())
	}
	d, err := sql.Open("sqlite", dbPath)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Exec(`UPDATE audit_log SET request_id = 'forged' WHERE seq = 2`); err != nil {
		t.Fatal(err)
	}
	d.Close()
	err = run(ctx, []string{"audit", "verify", "--db", dbPath}, noEnv, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "entry 2 ") {
		t.Fatalf("verify a tampered trail: %v, want entry 2 named", err)
	}
	if err := run(ctx, []string{"audit", "verify", "--db", filepath.Join(t.TempDir(), "missing.db")}, noEnv, io.Discard, io.Discard); err == nil {
		t.Fatal("verify of a missing database: want an error")
	}
}
