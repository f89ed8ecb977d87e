package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// buildBinary builds workspace into a temporary directory.
func buildBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "workspace")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// serveProcess starts `workspace serve` as a process and returns its base URL.
func serveProcess(t *testing.T, bin string, args ...string) (string, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, append([]string{"serve", "--addr", "127.0.0.1:0", "--synchronous", "NORMAL"}, args...)...)
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			_ = cmd.Wait()
			if t.Failed() {
				t.Logf("serve %v:\n%s", args, stderr.String())
			}
		})
	}
	t.Cleanup(stop)
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if l := sc.Text(); strings.HasPrefix(l, "listening on ") {
				lines <- strings.TrimPrefix(l, "listening on ")
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	select {
	case base := <-lines:
		return base, stop
	case <-time.After(patience):
		t.Fatalf("serve did not start: %s", stderr.String())
	}
	return "", stop
}

func runBin(t *testing.T, bin string, args ...string) (string, error) {
	t.Helper()
	out, err := exec.Command(bin, args...).CombinedOutput()
	return string(out), err
}

// nodeDB reads the node's file directly (the processes have closed it).
func nodeDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	d, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func projectNames(t *testing.T, base, tok, org string) map[string]bool {
	t.Helper()
	st, _, arr := call(t, "GET", base+"/organisations/"+org+"/projects", tok, "", "")
	if st != http.StatusOK {
		t.Fatalf("projects: status %d", st)
	}
	out := map[string]bool{}
	for _, p := range arr {
		out[p.(map[string]any)["name"].(string)] = true
	}
	return out
}

// signedExchange is a signed POST /sync/exchange made here, by the format
// docs/sync.md describes, so a test can replay and forge it.
func signedExchange(t *testing.T, base string, node int64, key ed25519.PrivateKey, body []byte, nonce string) *http.Request {
	t.Helper()
	ms := time.Now().UnixMilli()
	sum := sha256.Sum256(body)
	msg := "workspace-sync-1\nPOST\n/sync/exchange\n" + hex.EncodeToString(sum[:]) + "\n" + strconv.FormatInt(ms, 10) + "\n" + nonce + "\n" + strconv.FormatInt(node, 10)
	req, err := http.NewRequest("POST", base+"/sync/exchange", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Workspace-Sync-Node", strconv.FormatInt(node, 10))
	req.Header.Set("Workspace-Sync-Time", strconv.FormatInt(ms, 10))
	req.Header.Set("Workspace-Sync-Nonce", nonce)
	req.Header.Set("Workspace-Sync-Signature", base64.StdEncoding.EncodeToString(ed25519.Sign(key, []byte(msg))))
	return req
}

func send(t *testing.T, req *http.Request) int {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

func cloneReq(r *http.Request, body []byte) *http.Request {
	c := r.Clone(context.Background())
	c.Body = io.NopCloser(bytes.NewReader(body))
	return c
}

// TestSyncTwoProcesses: a hub (`serve`) and a node made by `sync clone`,
// both real processes, exchanging over HTTP with `sync now`: a write on
// each side arrives on the other; a replayed and a forged signed request
// are refused (401) and change nothing; a revoked node is refused.
func TestSyncTwoProcesses(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	dir := t.TempDir()
	hubDB := servedDB(t, filepath.Join(dir, "hub.db"))
	hub, _ := serveProcess(t, bin, "--db", hubDB)

	st, _, _ := call(t, "POST", hub+"/auth/register", "", "application/json", `{"email":"owner@example.com","password":"owner-password","first_name":"Olive"}`)
	if st != http.StatusCreated {
		t.Fatalf("register: %d", st)
	}
	tok := signIn(t, hub, "owner@example.com", "owner-password")
	_, org, _ := call(t, "POST", hub+"/organisations", tok, "application/json", `{"name":"Acme"}`)
	_, other, _ := call(t, "POST", hub+"/organisations", tok, "application/json", `{"name":"Other"}`)
	orgID, otherID := org["id"].(string), other["id"].(string)
	if st, _, _ := call(t, "POST", hub+"/organisations/"+orgID+"/projects", tok, "application/json", `{"name":"Before the clone"}`); st != http.StatusCreated {
		t.Fatalf("project: %d", st)
	}
	if st, _, _ := call(t, "POST", hub+"/organisations/"+otherID+"/projects", tok, "application/json", `{"name":"Not for the site"}`); st != http.StatusCreated {
		t.Fatalf("project: %d", st)
	}
	st, code, _ := call(t, "POST", hub+"/organisations/"+orgID+"/sync/pairing-codes", tok, "application/json", `{}`)
	if st != http.StatusCreated {
		t.Fatalf("pairing code: %d %v", st, code)
	}

	siteDB := filepath.Join(dir, "site.db")
	if out, err := runBin(t, bin, "sync", "clone", "--from", hub, "--code", code["code"].(string), "--db", siteDB, "--name", "Site office"); err != nil {
		t.Fatalf("sync clone: %v\n%s", err, out)
	}
	// The code was used once.
	if out, err := runBin(t, bin, "sync", "clone", "--from", hub, "--code", code["code"].(string), "--db", filepath.Join(dir, "again.db")); err == nil || !strings.Contains(out, "401") {
		t.Fatalf("a used code cloned again: %v\n%s", err, out)
	}
	var node int64
	var key []byte
	site := nodeDB(t, siteDB)
	if err := site.QueryRow(`SELECT (SELECT value FROM meta WHERE key = 'node_id'), private_key FROM sync_hub`).Scan(&node, &key); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := site.QueryRow(`SELECT count(*) FROM projects WHERE name = 'Not for the site'`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("the other organisation's project reached the clone: %d %v", n, err)
	}
	if err := site.QueryRow(`SELECT count(*) FROM projects WHERE name = 'Before the clone'`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("the clone lacks the organisation's project: %d %v", n, err)
	}
	site.Close()

	// A write on each side, then one exchange.
	if st, _, _ := call(t, "POST", hub+"/organisations/"+orgID+"/projects", tok, "application/json", `{"name":"Made at head office"}`); st != http.StatusCreated {
		t.Fatalf("project: %d", st)
	}
	siteURL, stopSite := serveProcess(t, bin, "--db", siteDB, "--registration=false")
	siteTok := signIn(t, siteURL, "owner@example.com", "owner-password") // the account travelled
	if st, _, _ := call(t, "POST", siteURL+"/organisations/"+orgID+"/projects", siteTok, "application/json", `{"name":"Made on site"}`); st != http.StatusCreated {
		t.Fatalf("site project: %d", st)
	}
	if out, err := runBin(t, bin, "sync", "now", "--db", siteDB); err != nil || !strings.Contains(out, "sync exchange") {
		t.Fatalf("sync now: %v\n%s", err, out)
	}
	if got := projectNames(t, hub, tok, orgID); !got["Made on site"] || !got["Made at head office"] {
		t.Fatalf("hub projects %v: want the site's", got)
	}
	if got := projectNames(t, siteURL, siteTok, orgID); !got["Made at head office"] || !got["Made on site"] {
		t.Fatalf("site projects %v: want head office's", got)
	}
	if got := projectNames(t, siteURL, siteTok, orgID); len(got) != 3 {
		t.Fatalf("site projects %v: want 3", got)
	}

	// serve --sync-every on the node: a write on the node reaches the hub,
	// and one on the hub the node, with no command run.
	stopSite()
	siteURL2, _ := serveProcess(t, bin, "--db", siteDB, "--registration=false", "--sync-every", "1s")
	siteTok2 := signIn(t, siteURL2, "owner@example.com", "owner-password")
	if st, _, _ := call(t, "POST", siteURL2+"/organisations/"+orgID+"/projects", siteTok2, "application/json", `{"name":"Made on site, synced by serve"}`); st != http.StatusCreated {
		t.Fatalf("site project: %d", st)
	}
	if st, _, _ := call(t, "POST", hub+"/organisations/"+orgID+"/projects", tok, "application/json", `{"name":"Made at head office, synced by serve"}`); st != http.StatusCreated {
		t.Fatalf("project: %d", st)
	}
	waitFor(t, "serve --sync-every to exchange both ways", func() bool {
		return projectNames(t, hub, tok, orgID)["Made on site, synced by serve"] && projectNames(t, siteURL2, siteTok2, orgID)["Made at head office, synced by serve"]
	})

	// The node's status names its hub and its last exchange.
	waitFor(t, "the node's status to show nothing waiting", func() bool {
		st, status, _ := call(t, "GET", siteURL2+"/organisations/"+orgID+"/sync/status", siteTok2, "", "")
		h, _ := status["hub"].(map[string]any)
		if st != http.StatusOK || h == nil || h["url"] != hub || h["last_exchange_at"] == nil {
			t.Fatalf("node status: %d %v", st, status)
		}
		return h["pending_to_hub"] == float64(0) && h["last_error"] == nil
	})

	// The hub lists the node, exchanged.
	nodeAt := func() any {
		st, _, arr := call(t, "GET", hub+"/organisations/"+orgID+"/sync/nodes", tok, "", "")
		if st != http.StatusOK || len(arr) != 1 {
			t.Fatalf("nodes: %d %v", st, arr)
		}
		return arr[0].(map[string]any)["last_exchange_at"]
	}
	before := nodeAt()
	if before == nil {
		t.Fatal("the node's exchange is not listed")
	}

	// A signed request made here goes through once; its replay, and the
	// same request signed by another key, are refused and change nothing.
	body := []byte(`{"vector":{},"changes":[],"limit":1}`)
	req := signedExchange(t, hub, node, key, body, "nonce-0123456789abcdef")
	if st := send(t, cloneReq(req, body)); st != http.StatusOK {
		t.Fatalf("signed request: %d", st)
	}
	first := nodeAt()
	if st := send(t, cloneReq(req, body)); st != http.StatusUnauthorized {
		t.Fatalf("replay: %d, want 401", st)
	}
	_, other2, _ := ed25519.GenerateKey(rand.Reader)
	if st := send(t, signedExchange(t, hub, node, other2, body, "nonce-forged-0123456789")); st != http.StatusUnauthorized {
		t.Fatalf("forged: %d, want 401", st)
	}
	tampered := []byte(`{"vector":{},"changes":[],"limit":2}`)
	if st := send(t, cloneReq(signedExchange(t, hub, node, key, body, "nonce-tampered-012345"), tampered)); st != http.StatusUnauthorized {
		t.Fatalf("tampered body: %d, want 401", st)
	}
	if after := nodeAt(); after != first {
		t.Fatalf("refused requests changed the node's exchange: %v -> %v", first, after)
	}

	// Revoked: refused at once.
	if st, _, _ := call(t, "DELETE", hub+"/organisations/"+orgID+"/sync/nodes/"+strconv.FormatInt(node, 10), tok, "", ""); st != http.StatusNoContent {
		t.Fatalf("revoke: %d", st)
	}
	if st := send(t, signedExchange(t, hub, node, key, body, "nonce-after-revoke-0123")); st != http.StatusUnauthorized {
		t.Fatalf("revoked node: %d, want 401", st)
	}
	if out, err := runBin(t, bin, "sync", "now", "--db", siteDB); err == nil || !strings.Contains(out, "401") {
		t.Fatalf("sync now of a revoked node: %v\n%s", err, out)
	}
}
