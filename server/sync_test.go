package server

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"workspace/db"
)

// syncNode pairs a node directly (a fixture: the pairing route is tested
// below) for the organisation and returns its id as a path segment.
func (e *testEnv) syncNode(orgID string, node int64) string {
	e.t.Helper()
	oid, _ := db.ParseID(orgID)
	pub, _, _ := ed25519.GenerateKey(rand.Reader)
	err := e.store.InTx(context.Background(), func(q *db.Queries) error {
		if err := q.SyncNodeCreate(context.Background(), db.SyncNodeCreateParams{Node: node, PublicKey: pub, Name: "Fixture node",
			PairedBy: 1, PairedAt: db.FormatTime(e.clock.Now())}); err != nil {
			return err
		}
		return q.SyncNodeOrgAdd(context.Background(), db.SyncNodeOrgAddParams{OrganisationID: int64(oid), Node: node})
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return strconv.FormatInt(node, 10)
}

// pairedNode is a node paired through POST /sync/pair, with its key.
type pairedNode struct {
	node int64
	key  ed25519.PrivateKey
	orgs []int64
}

func (e *testEnv) pair(t *testing.T, code string) pairedNode {
	t.Helper()
	pub, key, _ := ed25519.GenerateKey(rand.Reader)
	r := e.must(http.StatusCreated, nil, "POST", "/sync/pair", map[string]any{"code": code, "public_key": base64.StdEncoding.EncodeToString(pub), "name": "Site office"})
	var out syncPairJSON
	if err := json.Unmarshal(r.Body, &out); err != nil {
		t.Fatal(err)
	}
	return pairedNode{node: out.Node, key: key, orgs: out.Organisations}
}

// signed is a request signed as the node would (syncclient.go), at the
// test clock's time.
func (e *testEnv) signed(n pairedNode, key ed25519.PrivateKey, method, uri string, body []byte, at time.Time, nonce string) *http.Request {
	req := httptest.NewRequest(method, uri, bytes.NewReader(body))
	ms := at.UnixMilli()
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(hdrSyncNode, strconv.FormatInt(n.node, 10))
	req.Header.Set(hdrSyncTime, strconv.FormatInt(ms, 10))
	req.Header.Set(hdrSyncNonce, nonce)
	req.Header.Set(hdrSyncSignature, base64.StdEncoding.EncodeToString(ed25519.Sign(key, syncSigned(method, uri, body, n.node, ms, nonce))))
	return req
}

// TestSyncPairingCodes: an owner makes a code for its organisations only;
// the code pairs once, in time; every error status.
func TestSyncPairingCodes(t *testing.T) {
	t.Parallel()
	f := newOrgFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	codes := acme + "/sync/pairing-codes"
	second := e.org(f.alice, "Acme North")
	var code, multi string
	e.run(t, []scenario{
		{"owner makes a code", f.alice, "POST", codes, map[string]any{}, 201, func(t *testing.T, r *testResponse) {
			o := r.obj(t)
			code, _ = o["code"].(string)
			if len(code) != 23 || strings.Count(code, "-") != 3 || len(o["organisations"].([]any)) != 1 || o["organisations"].([]any)[0] != f.acme {
				t.Errorf("got %v", o)
			}
			exp, err := db.ParseTime(o["expires_at"].(string))
			if err != nil || exp.Sub(e.clock.Now()) != syncCodeTTL {
				t.Errorf("expires_at %v, want %v after now", o["expires_at"], syncCodeTTL)
			}
		}},
		{"for two organisations", f.alice, "POST", codes, map[string]any{"organisations": []string{second, f.acme}}, 201, func(t *testing.T, r *testResponse) {
			o := r.obj(t)
			multi, _ = o["code"].(string)
			if got := o["organisations"].([]any); len(got) != 2 || got[0] != f.acme || got[1] != second {
				t.Errorf("organisations %v, want acme then the second", got)
			}
		}},
		{"another's organisation named", f.alice, "POST", codes, map[string]any{"organisations": []string{f.evil}}, 400, wantField("organisations")},
		{"an absent organisation named", f.alice, "POST", codes, map[string]any{"organisations": []string{"123456789"}}, 400, wantField("organisations")},
		{"organisations not a list", f.alice, "POST", codes, map[string]any{"organisations": "x"}, 400, wantField("organisations")},
		{"malformed JSON", f.alice, "POST", codes, `{"organisations": [`, 400, nil},
		{"member without MANAGE_ORGANISATION", f.bob, "POST", codes, map[string]any{}, 403, nil},
		{"other organisation", f.mallory, "POST", codes, map[string]any{}, 403, nil},
		{"no token", nil, "POST", codes, map[string]any{}, 401, nil},
		{"absent organisation", f.alice, "POST", "/organisations/123456789/sync/pairing-codes", map[string]any{}, 404, nil},
	})
	// The hub keeps only the code's hash.
	var stored int
	if err := e.store.Reader.QueryRow(`SELECT count(*) FROM sync_pairing_codes WHERE code_hash = ? OR code_hash = ?`, code, multi).Scan(&stored); err != nil || stored != 0 {
		t.Fatalf("a code is stored as given: %d %v", stored, err)
	}
	pub, _, _ := ed25519.GenerateKey(rand.Reader)
	pk := base64.StdEncoding.EncodeToString(pub)
	e.run(t, []scenario{
		{"pair: no key", nil, "POST", "/sync/pair", map[string]any{"code": code, "name": "Site"}, 400, wantField("public_key")},
		{"pair: a key of the wrong size", nil, "POST", "/sync/pair", map[string]any{"code": code, "name": "Site", "public_key": base64.StdEncoding.EncodeToString([]byte("short"))}, 400, wantField("public_key")},
		{"pair: no name", nil, "POST", "/sync/pair", map[string]any{"code": code, "public_key": pk}, 400, wantField("name")},
		{"pair: no code", nil, "POST", "/sync/pair", map[string]any{"name": "Site", "public_key": pk}, 400, wantField("code")},
		{"pair: a wrong code", nil, "POST", "/sync/pair", map[string]any{"code": "ABCDE-ABCDE-ABCDE-ABCDE", "name": "Site", "public_key": pk}, 401, nil},
		{"pair: name of a wrong type", nil, "POST", "/sync/pair", map[string]any{"code": code, "name": 5, "public_key": pk}, 400, wantField("name")},
	})
	// Typed in lower case with spaces, the code still pairs; then it is used.
	n := e.pair(t, strings.ToLower(strings.ReplaceAll(code, "-", " ")))
	if n.node < 1 || n.node > 1023 || n.node == e.store.NodeID() || len(n.orgs) != 1 {
		t.Fatalf("paired %+v", n)
	}
	// The pairing is in the organisation's trail, by the code's maker.
	trail := e.must(200, f.alice, "GET", acme+"/audit-log?action=POST%20/sync/pair", nil).arr(t)
	if len(trail) != 1 || trail[0]["actor_id"] != f.alice.ID || trail[0]["target_ids"].(map[string]any)["node"] != strconv.FormatInt(n.node, 10) {
		t.Fatalf("audit trail of the pairing: %v", trail)
	}
	// Once its clone was sent whole the code is used (TestSyncCloneRetry:
	// before that it pairs again).
	if r := e.serve(e.signed(n, n.key, "GET", "/sync/clone", nil, e.clock.Now(), "nonce-pairing-codes-clone")); r.Status != http.StatusOK {
		t.Fatalf("clone: %d", r.Status)
	}
	e.run(t, []scenario{
		{"pair: the code again", nil, "POST", "/sync/pair", map[string]any{"code": code, "name": "Site", "public_key": pk}, 401, nil},
	})
	// Expired.
	e.clock.Advance(syncCodeTTL + time.Second)
	e.run(t, []scenario{
		{"pair: an expired code", nil, "POST", "/sync/pair", map[string]any{"code": multi, "name": "Site", "public_key": pk}, 401, nil},
	})
}

// TestSyncNodesAndStatus: the owner lists, revokes and reads the status of
// the organisation's nodes; another organisation's node is not found; a
// revoked node is refused at once.
func TestSyncNodesAndStatus(t *testing.T) {
	t.Parallel()
	f := newOrgFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	evilNode := e.syncNode(f.evil, 1000) // first: the hub assigns no id in use
	code := e.must(201, f.alice, "POST", acme+"/sync/pairing-codes", map[string]any{}).obj(t)["code"].(string)
	n := e.pair(t, code)
	if n.node == 1000 {
		t.Fatal("the hub assigned a node id in use")
	}
	node := strconv.FormatInt(n.node, 10)
	e.must(201, f.alice, "POST", "/organisations/"+f.acme+"/projects", map[string]any{"name": "Waiting for the node"})
	e.run(t, []scenario{
		{"list", f.alice, "GET", acme + "/sync/nodes", nil, 200, func(t *testing.T, r *testResponse) {
			list := r.arr(t)
			if len(list) != 1 || list[0]["node"] != float64(n.node) || list[0]["name"] != "Site office" || list[0]["revoked_at"] != nil {
				t.Fatalf("got %v", list)
			}
			if p, _ := list[0]["pending_to_node"].(float64); p < 1 {
				t.Errorf("pending_to_node %v: the project made after pairing waits", list[0]["pending_to_node"])
			}
		}},
		{"status on the hub", f.alice, "GET", acme + "/sync/status", nil, 200, func(t *testing.T, r *testResponse) {
			o := r.obj(t)
			if o["hub"] != nil || o["node"] != float64(e.store.NodeID()) || len(o["nodes"].([]any)) != 1 {
				t.Errorf("got %v", o)
			}
		}},
		{"member cannot list", f.bob, "GET", acme + "/sync/nodes", nil, 403, nil},
		{"other organisation cannot list", f.mallory, "GET", acme + "/sync/nodes", nil, 403, nil},
		{"other organisation's list holds its own only", f.mallory, "GET", "/organisations/" + f.evil + "/sync/nodes", nil, 200, func(t *testing.T, r *testResponse) {
			if l := r.arr(t); len(l) != 1 || l[0]["node"] != float64(1000) {
				t.Errorf("got %v", l)
			}
		}},
		{"member cannot read status", f.bob, "GET", acme + "/sync/status", nil, 403, nil},
		{"other organisation cannot read status", f.mallory, "GET", acme + "/sync/status", nil, 403, nil},
		{"absent organisation", f.alice, "GET", "/organisations/123456789/sync/status", nil, 404, nil},
		{"no token", nil, "GET", acme + "/sync/nodes", nil, 401, nil},
		{"member cannot revoke", f.bob, "DELETE", acme + "/sync/nodes/" + node, nil, 403, nil},
		{"other organisation cannot revoke", f.mallory, "DELETE", acme + "/sync/nodes/" + node, nil, 403, nil},
		{"another organisation's node through ours", f.alice, "DELETE", acme + "/sync/nodes/" + evilNode, nil, 404, nil},
		{"not a node id", f.alice, "DELETE", acme + "/sync/nodes/abc", nil, 404, nil},
		{"a node id out of range", f.alice, "DELETE", acme + "/sync/nodes/5000", nil, 404, nil},
	})

	// The node exchanges (signed), then is revoked: refused at once.
	body := []byte(`{"vector":{},"changes":[],"limit":10}`)
	r := e.serve(e.signed(n, n.key, "POST", "/sync/exchange", body, e.clock.Now(), "nonce-before-revoke-01"))
	if r.Status != http.StatusOK {
		t.Fatalf("exchange: %d %s", r.Status, r.Body)
	}
	e.run(t, []scenario{
		{"revoke", f.alice, "DELETE", acme + "/sync/nodes/" + node, nil, 204, nil},
		{"revoke again", f.alice, "DELETE", acme + "/sync/nodes/" + node, nil, 204, nil},
		{"listed as revoked", f.alice, "GET", acme + "/sync/nodes", nil, 200, func(t *testing.T, r *testResponse) {
			if l := r.arr(t); len(l) != 1 || l[0]["revoked_at"] == nil || l[0]["last_exchange_at"] == nil {
				t.Errorf("got %v", l)
			}
		}},
	})
	r = e.serve(e.signed(n, n.key, "POST", "/sync/exchange", body, e.clock.Now(), "nonce-after-revoke-001"))
	if r.Status != http.StatusUnauthorized {
		t.Fatalf("revoked node: %d %s", r.Status, r.Body)
	}
	assertErrorBody(t, r)
}

// TestSyncSignedRequests: the exchange moves a page each way; a replay, a
// forged or tampered request, a stale time, a malformed header and an
// unknown node are 401 and change nothing; a refused page is 422.
func TestSyncSignedRequests(t *testing.T) {
	t.Parallel()
	f := newOrgFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	code := e.must(201, f.alice, "POST", acme+"/sync/pairing-codes", map[string]any{}).obj(t)["code"].(string)
	n := e.pair(t, code)
	e.must(201, f.mallory, "POST", "/organisations/"+f.evil+"/projects", map[string]any{"name": "Evil plans"})
	e.must(201, f.alice, "POST", acme+"/projects", map[string]any{"name": "Acme plans"})

	exchange := func(req *http.Request) (*testResponse, syncExchange) {
		t.Helper()
		r := e.serve(req)
		var out syncExchange
		if r.Status == http.StatusOK {
			if err := json.Unmarshal(r.Body, &out); err != nil {
				t.Fatal(err)
			}
		} else {
			assertErrorBody(t, r)
		}
		return r, out
	}
	body := []byte(`{"vector":{},"changes":[],"limit":5000}`)
	req := e.signed(n, n.key, "POST", "/sync/exchange", body, e.clock.Now(), "nonce-first-0000000001")
	replay := req.Clone(context.Background())
	replay.Body = httptestBody(body)
	r, page := exchange(req)
	if r.Status != http.StatusOK {
		t.Fatalf("exchange: %d %s", r.Status, r.Body)
	}
	acmeID, _ := db.ParseID(f.acme)
	sawAcme := false
	for _, c := range page.Changes {
		if c.Org != nil && *c.Org != int64(acmeID) {
			t.Fatalf("an entry of another organisation was sent: %+v", c)
		}
		if c.Table == "projects" && c.Cols != nil && strings.Contains(*c.Cols, "Acme plans") {
			sawAcme = true
		}
	}
	if !sawAcme || page.More || page.Vector[e.store.NodeID()] == 0 {
		t.Fatalf("page %+v: want the organisation's project, all of it, and the hub's vector", page)
	}
	nonces := func() (n int) {
		if err := e.store.Reader.QueryRow(`SELECT count(*) FROM sync_nonces`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	seen := nonces()

	_, other, _ := ed25519.GenerateKey(rand.Reader)
	tampered := e.signed(n, n.key, "POST", "/sync/exchange", body, e.clock.Now(), "nonce-tampered-0000001")
	tampered.Body = httptestBody([]byte(`{"vector":{},"changes":[],"limit":1}`))
	otherPath := e.signed(n, n.key, "POST", "/sync/exchange?x=1", body, e.clock.Now(), "nonce-path-00000000001")
	otherPath.URL.RawQuery = ""
	otherPath.RequestURI = "/sync/exchange"
	unknown := pairedNode{node: 999, key: n.key}
	noSig := e.signed(n, n.key, "POST", "/sync/exchange", body, e.clock.Now(), "nonce-nosig-0000000001")
	noSig.Header.Del(hdrSyncSignature)
	shortNonce := e.signed(n, n.key, "POST", "/sync/exchange", body, e.clock.Now(), "short")
	for name, req := range map[string]*http.Request{
		"replayed":                 replay,
		"signed by another key":    e.signed(n, other, "POST", "/sync/exchange", body, e.clock.Now(), "nonce-forged-000000001"),
		"body changed":             tampered,
		"path changed":             otherPath,
		"stale":                    e.signed(n, n.key, "POST", "/sync/exchange", body, e.clock.Now().Add(-syncWindow-time.Second), "nonce-stale-0000000001"),
		"from the future":          e.signed(n, n.key, "POST", "/sync/exchange", body, e.clock.Now().Add(syncWindow+time.Second), "nonce-future-000000001"),
		"unknown node":             e.signed(unknown, n.key, "POST", "/sync/exchange", body, e.clock.Now(), "nonce-unknown-00000001"),
		"no signature":             noSig,
		"a nonce too short":        shortNonce,
		"clone signed by another":  e.signed(n, other, "GET", "/sync/clone", nil, e.clock.Now(), "nonce-clone-forged-001"),
		"unsigned exchange":        httptest.NewRequest("POST", "/sync/exchange", bytes.NewReader(body)),
		"unsigned clone":           httptest.NewRequest("GET", "/sync/clone", nil),
		"a replay with a new time": e.signed(n, n.key, "POST", "/sync/exchange", body, e.clock.Now().Add(time.Second), "nonce-first-0000000001"),
	} {
		t.Run(name, func(t *testing.T) {
			if r, _ := exchange(req); r.Status != http.StatusUnauthorized {
				t.Fatalf("status %d, want 401: %s", r.Status, r.Body)
			}
		})
	}
	if got := nonces(); got != seen {
		t.Fatalf("refused requests took nonces: %d -> %d", seen, got)
	}

	// Bad pages, signed: 400 and 422, nothing applied (nor the snapshot
	// left out).
	before := func() (n int) {
		if err := e.store.Reader.QueryRow(`SELECT count(*) FROM sync_changes`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	count := before()
	evilID, _ := db.ParseID(f.evil)
	foreign, _ := json.Marshal(syncExchange{Vector: map[int64]int64{}, Changes: []db.SyncEntry{{Origin: n.node, HLC: 1 << 40, Org: ptr(int64(evilID)), Table: "projects",
		Key: "[1]", Op: "u", Cols: ptr(`{"name":"Taken over"}`)}}})
	takeover, _ := json.Marshal(syncExchange{Vector: map[int64]int64{}, Changes: []db.SyncEntry{{Origin: n.node, HLC: 1 << 40, Table: "users", Key: "[" + f.mallory.ID + "]", Op: "s",
		Cols: ptr(`{"id":` + f.mallory.ID + `,"password_hash":"taken"}`)}}})
	// The same as a change of the account: refused. As a snapshot (what a
	// page carries of a person its rows name) it is left out, not refused:
	// a laptop's rows may name a person removed at the hub since.
	takeoverChange, _ := json.Marshal(syncExchange{Changes: []db.SyncEntry{{Origin: n.node, HLC: 1 << 40, Table: "users", Key: "[" + f.mallory.ID + "]", Op: "u",
		Cols: ptr(`{"password_hash":"taken"}`)}}})
	newStaff, _ := json.Marshal(syncExchange{Changes: []db.SyncEntry{{Origin: n.node, HLC: 1 << 40, Table: "users", Key: "[77]", Op: "i",
		Cols: ptr(`{"id":77,"email":"new@example.com","badges":2147483648}`)}}})
	unknownTable, _ := json.Marshal(syncExchange{Changes: []db.SyncEntry{{Origin: n.node, HLC: 1 << 40, Org: ptr(int64(acmeID)), Table: "refresh_tokens", Key: "[1]", Op: "d"}}})
	for _, c := range []struct {
		name  string
		body  []byte
		nonce string
		want  int
	}{
		{"not JSON", []byte(`{"vector":`), "nonce-bad-json-0000001", 400},
		{"limit too large", []byte(`{"limit":5001}`), "nonce-bad-limit-000001", 400},
		{"limit negative", []byte(`{"limit":-1}`), "nonce-neg-limit-000001", 400},
		{"another organisation's row", foreign, "nonce-foreign-00000001", 422},
		{"a table that does not travel", unknownTable, "nonce-table-0000000001", 422},
		{"an account of no member of the node's organisations", takeoverChange, "nonce-takeover-0000001", 422},
		{"a snapshot of an account of no member: left out", takeover, "nonce-takeover-snap-01", 200},
		{"a new account with the Staff badge", newStaff, "nonce-new-staff-000001", 422},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, _ := exchange(e.signed(n, n.key, "POST", "/sync/exchange", c.body, e.clock.Now(), c.nonce))
			if r.Status != c.want {
				t.Fatalf("status %d, want %d: %s", r.Status, c.want, r.Body)
			}
		})
	}
	if got := before(); got != count {
		t.Fatalf("refused pages changed the log: %d -> %d", count, got)
	}
	var hash string
	if err := e.store.Reader.QueryRow(`SELECT password_hash FROM users WHERE id = ?`, f.mallory.id).Scan(&hash); err != nil || hash == "taken" {
		t.Fatalf("a node changed another organisation's member's account: %q %v", hash, err)
	}

	// The clone: a database file, signed.
	r = e.serve(e.signed(n, n.key, "GET", "/sync/clone", nil, e.clock.Now(), "nonce-clone-0000000001"))
	if r.Status != http.StatusOK || !bytes.HasPrefix(r.Body, []byte("SQLite format 3\x00")) {
		t.Fatalf("clone: %d, %d bytes", r.Status, len(r.Body))
	}
	if bytes.Contains(r.Body, []byte("Evil plans")) {
		t.Fatal("the clone holds another organisation's project")
	}
	if !bytes.Contains(r.Body, []byte("Acme plans")) {
		t.Fatal("the clone lacks the organisation's project")
	}
}

func httptestBody(b []byte) *readCloser { return &readCloser{bytes.NewReader(b)} }

type readCloser struct{ *bytes.Reader }

func (readCloser) Close() error { return nil }

// TestSyncCloneRetry: a laptop whose clone download was cut pairs again
// with the same code (same node id, its new key; the old key refused) and
// fetches its clone; once a clone was sent whole the code is consumed; a
// half-paired node an owner revoked cannot be paired again with it.
func TestSyncCloneRetry(t *testing.T) {
	t.Parallel()
	f := newOrgFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	code := e.must(201, f.alice, "POST", acme+"/sync/pairing-codes", map[string]any{}).obj(t)["code"].(string)
	first := e.pair(t, code)
	// The download never came (the laptop's process ended): pair again.
	again := e.pair(t, code)
	if again.node != first.node {
		t.Fatalf("paired again as node %d, want %d (the same)", again.node, first.node)
	}
	if r := e.serve(e.signed(first, first.key, "GET", "/sync/clone", nil, e.clock.Now(), "nonce-old-key-clone-01")); r.Status != http.StatusUnauthorized {
		t.Fatalf("the first key after pairing again: %d, want 401", r.Status)
	}
	r := e.serve(e.signed(again, again.key, "GET", "/sync/clone", nil, e.clock.Now(), "nonce-new-key-clone-01"))
	if r.Status != http.StatusOK || len(r.Body) < 1024 || !bytes.HasPrefix(r.Body, []byte("SQLite format 3")) {
		t.Fatalf("clone with the new key: %d, %d bytes", r.Status, len(r.Body))
	}
	// Sent whole: the code is consumed.
	pub, _, _ := ed25519.GenerateKey(rand.Reader)
	pk := base64.StdEncoding.EncodeToString(pub)
	e.run(t, []scenario{
		{"pair: the code after the clone", nil, "POST", "/sync/pair", map[string]any{"code": code, "name": "Site", "public_key": pk}, 401, nil},
	})
	// The pairing is in the trail each time, by the code's maker.
	if trail := e.must(200, f.alice, "GET", acme+"/audit-log?action=POST%20/sync/pair", nil).arr(t); len(trail) != 2 {
		t.Fatalf("pairings in the trail: %d, want 2", len(trail))
	}

	// A half-paired node the owner revoked: its code pairs no more.
	code2 := e.must(201, f.alice, "POST", acme+"/sync/pairing-codes", map[string]any{}).obj(t)["code"].(string)
	half := e.pair(t, code2)
	e.must(204, f.alice, "DELETE", acme+"/sync/nodes/"+strconv.FormatInt(half.node, 10), nil)
	e.run(t, []scenario{
		{"pair: the code of a revoked node", nil, "POST", "/sync/pair", map[string]any{"code": code2, "name": "Site", "public_key": pk}, 401, nil},
		{"foreign organisation cannot make a code here", f.mallory, "POST", acme + "/sync/pairing-codes", map[string]any{}, 403, nil},
	})
}

// TestSyncPairingGuessesLimited: wrong pairing codes spend the client
// address's attempts; when they run out the next pairing, even with a
// good code, is 429 with Retry-After, and nothing is paired.
func TestSyncPairingGuessesLimited(t *testing.T) {
	t.Parallel()
	f := newOrgFixture(t, func(c *Config) { c.AddressAttempts = 3 })
	e, acme := f.e, "/organisations/"+f.acme
	code := e.must(201, f.alice, "POST", acme+"/sync/pairing-codes", map[string]any{}).obj(t)["code"].(string)
	pub, _, _ := ed25519.GenerateKey(rand.Reader)
	pk := base64.StdEncoding.EncodeToString(pub)
	for i := range 3 {
		e.must(401, nil, "POST", "/sync/pair", map[string]any{"code": "ABCDE-ABCDE-ABCDE-ABCD" + strconv.Itoa(i+2), "name": "Site", "public_key": pk})
	}
	r := e.must(429, nil, "POST", "/sync/pair", map[string]any{"code": code, "name": "Site", "public_key": pk})
	if secs, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || secs < 1 {
		t.Fatalf("Retry-After %q", r.Header.Get("Retry-After"))
	}
	var nodes int
	if err := e.store.Reader.QueryRow(`SELECT count(*) FROM sync_nodes`).Scan(&nodes); err != nil || nodes != 0 {
		t.Fatalf("paired while limited: %d %v", nodes, err)
	}
	// In time the attempts come back and the good code pairs.
	e.clock.Advance(2 * time.Minute)
	e.pair(t, code)
}

// TestSyncNodeAwayTooLong: a node not heard from for longer than the log's
// retention is told, in words, to clone again (410, nothing applied); a
// node heard from within it exchanges; the pruning job runs.
func TestSyncNodeAwayTooLong(t *testing.T) {
	t.Parallel()
	f := newOrgFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	code := e.must(201, f.alice, "POST", acme+"/sync/pairing-codes", map[string]any{}).obj(t)["code"].(string)
	n := e.pair(t, code)
	body := []byte(`{"vector":{},"changes":[],"limit":10}`)
	if r := e.serve(e.signed(n, n.key, "POST", "/sync/exchange", body, e.clock.Now(), "nonce-away-within-0001")); r.Status != http.StatusOK {
		t.Fatalf("within the retention: %d %s", r.Status, r.Body)
	}
	e.clock.Advance(db.DefaultSyncRetention + time.Hour)
	r := e.serve(e.signed(n, n.key, "POST", "/sync/exchange", body, e.clock.Now(), "nonce-away-too-long-01"))
	if r.Status != http.StatusGone || !strings.Contains(string(r.Body), "Make a new copy") || !strings.Contains(string(r.Body), "30 days") {
		t.Fatalf("away too long: %d %s", r.Status, r.Body)
	}
	// The job prunes what no node served within the retention lacks.
	if _, err := e.srv.pruneSyncLog(context.Background(), e.clock.Now()); err != nil {
		t.Fatal(err)
	}
}

// TestSyncCloneResumes: a clone download cut part-way leaves the part and
// the copy's ETag; running the clone again with the same code asks for the
// rest and gets it (206 from the byte it had), ending with a whole,
// working copy for the same node; a part whose copy the hub no longer
// keeps gets the whole file again (200) and still ends whole.
func TestSyncCloneResumes(t *testing.T) {
	t.Parallel()
	f := newOrgFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	e.clock.Advance(time.Since(e.clock.Now())) // signed requests carry the wall clock
	const cutAt = 64 << 10
	var mu sync.Mutex
	var cut bool
	var ranges []string
	var statuses []int
	hub := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/sync/clone" {
			e.srv.ServeHTTP(w, r)
			return
		}
		mu.Lock()
		cutThis := cut
		cut = false
		ranges = append(ranges, r.Header.Get("Range"))
		mu.Unlock()
		rec := &cuttingWriter{ResponseWriter: w, left: -1}
		if cutThis {
			rec.left = cutAt
		}
		e.srv.ServeHTTP(rec, r)
		mu.Lock()
		statuses = append(statuses, rec.status)
		mu.Unlock()
	}))
	t.Cleanup(hub.Close)
	clone := func(code, path string) (int64, error) {
		node, _, err := SyncClone(context.Background(), hub.URL, code, "Site office", path, io.Discard)
		return node, err
	}
	for _, c := range []struct {
		name     string
		lostETag bool
		want     []int
		wantFrom string
	}{
		{"resumed from the byte it had", false, []int{http.StatusOK, http.StatusPartialContent}, fmt.Sprintf("bytes=%d-", cutAt)},
		{"the hub keeps no such copy: whole again", true, []int{http.StatusOK, http.StatusOK}, fmt.Sprintf("bytes=%d-", cutAt)},
	} {
		t.Run(c.name, func(t *testing.T) {
			code := e.must(201, f.alice, "POST", acme+"/sync/pairing-codes", map[string]any{}).obj(t)["code"].(string)
			path := filepath.Join(t.TempDir(), "site.db")
			mu.Lock()
			cut, ranges, statuses = true, nil, nil
			mu.Unlock()
			if _, err := clone(code, path); err == nil || !strings.Contains(err.Error(), "goes on from where it stopped") {
				t.Fatalf("a cut clone: %v", err)
			}
			if st, err := os.Stat(path + ".part"); err != nil || st.Size() != cutAt {
				t.Fatalf("the part kept: %v %v, want %d bytes", st, err, cutAt)
			}
			if c.lostETag {
				if err := os.WriteFile(path+".part.etag", []byte(`"another-copy"`), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			node, err := clone(code, path)
			if err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			defer mu.Unlock()
			if fmt.Sprint(statuses) != fmt.Sprint(c.want) || len(ranges) != 2 || ranges[0] != "" || ranges[1] != c.wantFrom {
				t.Fatalf("answers %v to ranges %q, want %v", statuses, ranges, c.want)
			}
			for _, leftover := range []string{path + ".part", path + ".part.etag"} {
				if _, err := os.Stat(leftover); !os.IsNotExist(err) {
					t.Errorf("%s is left: %v", leftover, err)
				}
			}
			s, err := db.Open(context.Background(), db.Options{Path: path, NodeID: node})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			var ok string
			if err := s.Reader.QueryRow(`PRAGMA integrity_check`).Scan(&ok); err != nil || ok != "ok" {
				t.Fatalf("the copy: %q %v", ok, err)
			}
			var orgs int
			if err := s.Reader.QueryRow(`SELECT count(*) FROM organisations WHERE id = ?`, f.acme).Scan(&orgs); err != nil || orgs != 1 {
				t.Fatalf("the organisation in the copy: %d %v", orgs, err)
			}
		})
	}
}

// cuttingWriter records the answer's status and, with left >= 0, fails
// every write past left bytes (a connection cut part-way).
type cuttingWriter struct {
	http.ResponseWriter
	status int
	left   int
}

func (w *cuttingWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

func (w *cuttingWriter) Write(p []byte) (int, error) {
	if w.left < 0 {
		return w.ResponseWriter.Write(p)
	}
	if len(p) > w.left {
		n, _ := w.ResponseWriter.Write(p[:w.left])
		w.left = 0
		return n, errors.New("the connection was cut")
	}
	w.left -= len(p)
	return w.ResponseWriter.Write(p)
}
