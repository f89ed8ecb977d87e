package server

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"workspace/db"
)

// Offline site sync, the transport (docs/sync.md, Pairing, clone and
// exchange): an owner makes a one-time pairing code on the hub; a laptop
// presents it with its Ed25519 public key (POST /sync/pair), fetches its
// clone (GET /sync/clone) and exchanges pages of changes (POST
// /sync/exchange). Every /sync request but the pairing is signed by the
// node's key; the owner's routes list, revoke and report on the nodes.

const (
	// syncCodeTTL is how long a pairing code may wait to be used.
	syncCodeTTL = 15 * time.Minute
	// syncWindow bounds how far a signed request's time may be from the
	// hub's; nonces are kept twice as long, so a replay is refused by its
	// nonce or by its time.
	syncWindow = 5 * time.Minute
	// syncMaxPage bounds the entries a node may ask for in one page.
	syncMaxPage = 5000
	// syncDefaultPage is a page's size when the node names none.
	syncDefaultPage = 500
)

// syncCodeAlphabet has no letters a person confuses when typing a code
// read from a screen (no I, L, O, U, 0, 1): 32 characters, 5 bits each.
const syncCodeAlphabet = "23456789ABCDEFGHJKMNPQRSTVWXYZ"

// newPairingCode is 20 characters (about 98 bits) in groups of five.
func newPairingCode() string {
	var b strings.Builder
	for i := range 20 {
		if i > 0 && i%5 == 0 {
			b.WriteByte('-')
		}
		n, _ := rand.Int(rand.Reader, big.NewInt(int64(len(syncCodeAlphabet))))
		b.WriteByte(syncCodeAlphabet[n.Int64()])
	}
	return b.String()
}

// pairingCodeHash is what the hub keeps of a code: spaces and dashes and
// case do not matter to the person typing it.
func pairingCodeHash(code string) string {
	c := strings.ToUpper(strings.NewReplacer("-", "", " ", "").Replace(code))
	sum := sha256.Sum256([]byte(c))
	return hex.EncodeToString(sum[:])
}

type pairingCodeBody struct {
	// Organisations paired besides the path's (the caller must manage each).
	Organisations []db.ID `json:"organisations"`
}

type pairingCodeJSON struct {
	Code          string  `json:"code"`
	Organisations []db.ID `json:"organisations"`
	ExpiresAt     string  `json:"expires_at"`
}

func (s *Server) syncPairingCodeCreate(rq *request) error {
	orgID, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var b pairingCodeBody
	if err := rq.decode(&b); err != nil {
		return err
	}
	if len(b.Organisations) > 50 {
		return fieldError("organisations", "may name at most 50 organisations")
	}
	orgs := []int64{orgID}
	for _, o := range b.Organisations {
		if !slices.Contains(orgs, int64(o)) {
			orgs = append(orgs, int64(o))
		}
	}
	code := newPairingCode()
	out := pairingCodeJSON{Code: code, ExpiresAt: db.FormatTime(s.now().Add(syncCodeTTL))}
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		if _, err := orgAccess(rq, q, orgID, http.StatusNotFound, ManageOrganisation); err != nil {
			return err
		}
		for _, o := range orgs[1:] {
			// Another organisation is named only when the caller manages
			// it: one answer for absent and not managed, so nothing leaks.
			if _, err := orgAccess(rq, q, o, http.StatusNotFound, ManageOrganisation); err != nil {
				var e *Error
				if errors.As(err, &e) && (e.Status == http.StatusNotFound || e.Status == http.StatusForbidden) {
					return fieldError("organisations", "names an organisation you do not manage")
				}
				return err
			}
		}
		if hub, err := q.SyncHubGet(rq.ctx); err == nil {
			return errorf(http.StatusConflict, "This server is a site node of %s: pair new nodes with head office.", hub.Url)
		} else if !db.IsNotFound(err) {
			return err
		}
		ob, _ := json.Marshal(orgs)
		return q.SyncPairingCodeCreate(rq.ctx, db.SyncPairingCodeCreateParams{ID: s.store.IDs.Next(), CodeHash: pairingCodeHash(code),
			Organisations: string(ob), CreatedBy: rq.user.ID, CreatedAt: s.nowText(), ExpiresAt: out.ExpiresAt})
	})
	if err != nil {
		return err
	}
	for _, o := range orgs {
		out.Organisations = append(out.Organisations, db.ID(o))
	}
	return rq.json(http.StatusCreated, out)
}

// syncNodeJSON is a paired node as an owner sees it.
type syncNodeJSON struct {
	Node           int64   `json:"node"`
	Name           string  `json:"name"`
	PairedAt       string  `json:"paired_at"`
	RevokedAt      *string `json:"revoked_at"`
	LastExchangeAt *string `json:"last_exchange_at"`
	// PendingToNode: this organisation's changes the node has not
	// received; PendingFromNode: what the node said it still had to send
	// at its last exchange.
	PendingToNode   int64 `json:"pending_to_node"`
	PendingFromNode int64 `json:"pending_from_node"`
	// The last exchange: entries the hub received from the node and sent
	// it; NumbersLeft: the fewest numbers the node said it had left of any
	// of the organisation's counters (null: none leased).
	LastReceived int64  `json:"last_received"`
	LastSent     int64  `json:"last_sent"`
	NumbersLeft  *int64 `json:"numbers_left"`
}

func (s *Server) toSyncNode(rq *request, orgID int64, n db.SyncNode) (syncNodeJSON, error) {
	out := syncNodeJSON{Node: n.Node, Name: n.Name, PairedAt: n.PairedAt, RevokedAt: n.RevokedAt,
		LastExchangeAt: n.LastExchangeAt, PendingFromNode: n.PendingFrom, LastReceived: n.LastReceived, LastSent: n.LastSent}
	var held []db.NumberBlock
	if err := json.Unmarshal([]byte(n.NumbersHeld), &held); err == nil {
		out.NumbersLeft = numbersLeft(held, orgID)
	}
	if n.RevokedAt == nil {
		v, err := parseVector(n.Vector)
		if err != nil {
			return out, err
		}
		if out.PendingToNode, err = s.store.SyncPending(rq.ctx, v, []int64{orgID}); err != nil {
			return out, err
		}
	}
	return out, nil
}

// syncNodeRevoke refuses the node from now on (its next request is 401);
// the node keeps its own database.
func (s *Server) syncNodeRevoke(rq *request) error {
	orgID, err := rq.pathID("id")
	if err != nil {
		return err
	}
	node, err := strconv.ParseInt(rq.params.ByName("node"), 10, 64)
	if err != nil || node < 0 || node > 1023 {
		return notFound("The node was not found.")
	}
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		if _, err := orgAccess(rq, q, orgID, http.StatusNotFound, ManageOrganisation); err != nil {
			return err
		}
		if _, err := q.SyncNodeGetInOrg(rq.ctx, db.SyncNodeGetInOrgParams{OrganisationID: orgID, Node: node}); db.IsNotFound(err) {
			return notFound("The node was not found.")
		} else if err != nil {
			return err
		}
		return q.SyncNodeRevoke(rq.ctx, db.SyncNodeRevokeParams{Now: ptr(s.nowText()), Node: node})
	})
	if err != nil {
		return err
	}
	return rq.noContent()
}

// syncStatusJSON: this node, its hub (on a node made by sync clone) and
// the nodes paired for the organisation (on a hub).
type syncStatusJSON struct {
	Node  int64          `json:"node"`
	Hub   *syncHubJSON   `json:"hub"`
	Nodes []syncNodeJSON `json:"nodes"`
}

type syncHubJSON struct {
	URL            string  `json:"url"`
	HubNode        int64   `json:"hub_node"`
	LastExchangeAt *string `json:"last_exchange_at"`
	LastError      *string `json:"last_error"`
	PendingToHub   int64   `json:"pending_to_hub"`
	PendingFromHub int64   `json:"pending_from_hub"`
	// The Sync screen's (syncHubExtras): the last whole exchange's counts,
	// the fewest numbers left of any counter, and whether the laptop has
	// gone a day without an exchange (its banner).
	LastSent         int64  `json:"last_sent"`
	LastReceived     int64  `json:"last_received"`
	NumbersLeft      *int64 `json:"numbers_left"`
	NotSyncedForADay bool   `json:"not_synced_for_a_day"`
}

func (s *Server) syncStatus(rq *request) error {
	orgID, err := rq.pathID("id")
	if err != nil {
		return err
	}
	// nodes=false leaves the paired nodes out: the laptop's banner asks on
	// every organisation page, and counting what waits for each node is
	// head office's cost for nothing.
	withNodes := true
	switch rq.r.URL.Query().Get("nodes") {
	case "", "true":
	case "false":
		withNodes = false
	default:
		return fieldError("nodes", "must be true or false")
	}
	var rows []db.SyncNode
	var hub *db.SyncHubGetRow
	err = s.store.ReadTx(rq.ctx, func(q *db.Queries) error {
		if _, err := orgAccess(rq, q, orgID, http.StatusNotFound, ManageOrganisation); err != nil {
			return err
		}
		h, err := q.SyncHubGet(rq.ctx)
		switch {
		case err == nil:
			hub = &h
		case !db.IsNotFound(err):
			return err
		}
		if !withNodes {
			return nil
		}
		rows, err = q.SyncNodeList(rq.ctx, orgID)
		return err
	})
	if err != nil {
		return err
	}
	out := syncStatusJSON{Node: s.store.NodeID(), Nodes: []syncNodeJSON{}}
	if hub != nil {
		v, err := parseVector(hub.HubVector)
		if err != nil {
			return err
		}
		orgs, err := parseOrgs(hub.Organisations)
		if err != nil {
			return err
		}
		h := &syncHubJSON{URL: hub.Url, HubNode: hub.HubNode, LastExchangeAt: hub.LastExchangeAt, LastError: hub.LastError, PendingFromHub: hub.PendingIn}
		if slices.Contains(orgs, orgID) {
			if h.PendingToHub, err = s.store.SyncPending(rq.ctx, v, []int64{orgID}); err != nil {
				return err
			}
		}
		if err := s.syncHubExtras(rq.ctx, orgID, h); err != nil {
			return err
		}
		out.Hub = h
	}
	for _, n := range rows {
		j, err := s.toSyncNode(rq, orgID, n)
		if err != nil {
			return err
		}
		out.Nodes = append(out.Nodes, j)
	}
	return rq.json(http.StatusOK, out)
}

func parseVector(s string) (map[int64]int64, error) {
	var raw map[string]int64
	if err := json.Unmarshal([]byte(s), &raw); err != nil {
		return nil, fmt.Errorf("sync vector: %w", err)
	}
	v := make(map[int64]int64, len(raw))
	for k, h := range raw {
		o, err := strconv.ParseInt(k, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("sync vector: origin %q", k)
		}
		v[o] = h
	}
	return v, nil
}

func parseOrgs(s string) ([]int64, error) {
	var orgs []int64
	err := json.Unmarshal([]byte(s), &orgs)
	return orgs, err
}

// --- The node's routes (/sync/...) ---

type syncPairBody struct {
	Code      string `json:"code"`
	PublicKey string `json:"public_key"` // base64 of the 32-byte Ed25519 key
	Name      string `json:"name"`
}

type syncPairJSON struct {
	Node          int64   `json:"node"`
	HubNode       int64   `json:"hub_node"`
	Organisations []int64 `json:"organisations"`
}

// syncPair: a laptop presents a pairing code and its public key; the hub
// takes the code (once), assigns a node id no peer of it uses and keeps
// the key.
func (s *Server) syncPair(rq *request) error {
	var b syncPairBody
	if err := rq.decode(&b); err != nil {
		return err
	}
	p := problems{}
	key, err := base64.StdEncoding.DecodeString(b.PublicKey)
	if err != nil || len(key) != ed25519.PublicKeySize {
		p.add("public_key", "must be a base64 Ed25519 public key")
	}
	p.length("name", b.Name, 1, 100)
	if b.Code == "" {
		p.add("code", "is required")
	}
	if err := p.err(); err != nil {
		return err
	}
	// A pairing code is a secret a caller may guess: the guessing limits.
	g := guessOf("sync pairing", "")
	if err := s.allowGuess(rq, g); err != nil {
		return err
	}
	var out syncPairJSON
	badCode := false
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		c, err := q.SyncPairingCodeTake(rq.ctx, db.SyncPairingCodeTakeParams{Now: ptr(s.nowText()), CodeHash: pairingCodeHash(b.Code)})
		if db.IsNotFound(err) {
			badCode = true
			return errUnauthorized("The pairing code is not valid: it may be mistyped, used already or expired. Ask for a new one.")
		}
		if err != nil {
			return err
		}
		if out.Organisations, err = parseOrgs(c.Organisations); err != nil {
			return err
		}
		if c.Node != nil {
			// The code paired a laptop whose clone never arrived whole (a
			// cut download): the laptop pairs again, same node id, its
			// new key (the old one is refused from now on).
			out.Node, out.HubNode = *c.Node, s.store.NodeID()
			if err := q.SyncNodeRekey(rq.ctx, db.SyncNodeRekeyParams{PublicKey: key, Name: b.Name, PairedAt: s.nowText(), Node: out.Node}); err != nil {
				return err
			}
			return s.auditPairing(rq, q, out, c.CreatedBy, b.Name)
		}
		used, err := q.SyncNodeIDsUsed(rq.ctx)
		if err != nil {
			return err
		}
		taken := map[int64]bool{s.store.NodeID(): true}
		for _, u := range used {
			taken[u] = true
		}
		var free []int64
		for n := int64(1); n <= 1023; n++ {
			if !taken[n] {
				free = append(free, n)
			}
		}
		if len(free) == 0 {
			return errorf(http.StatusConflict, "This hub has no node id left to assign.")
		}
		pick, _ := rand.Int(rand.Reader, big.NewInt(int64(len(free))))
		out.Node, out.HubNode = free[pick.Int64()], s.store.NodeID()
		if err := q.SyncNodeCreate(rq.ctx, db.SyncNodeCreateParams{Node: out.Node, PublicKey: key, Name: b.Name,
			PairedBy: c.CreatedBy, PairedAt: s.nowText()}); err != nil {
			return err
		}
		if err := q.SyncPairingCodePaired(rq.ctx, db.SyncPairingCodePairedParams{Node: &out.Node, ID: c.ID}); err != nil {
			return err
		}
		for _, o := range out.Organisations {
			if err := q.SyncNodeOrgAdd(rq.ctx, db.SyncNodeOrgAddParams{OrganisationID: o, Node: out.Node}); err != nil {
				if db.IsConflict(err) || db.IsNotFound(err) {
					return errorf(http.StatusConflict, "An organisation of the pairing code no longer exists.")
				}
				return err
			}
		}
		return s.auditPairing(rq, q, out, c.CreatedBy, b.Name)
	})
	if badCode {
		s.failedGuess(rq, g)
	}
	if err != nil {
		return err
	}
	s.log.Info("sync node paired", "node", out.Node, "name", b.Name, "organisations", out.Organisations)
	return rq.json(http.StatusCreated, out)
}

// auditPairing writes the pairing to each paired organisation's trail. No
// person signs this request: it is on the authority of the owner who made
// the code.
func (s *Server) auditPairing(rq *request, q *db.Queries, out syncPairJSON, by int64, name string) error {
	targets, _ := json.Marshal(map[string]string{"node": strconv.FormatInt(out.Node, 10)})
	details, _ := json.Marshal(auditDetails{Values: map[string]string{"name": name}})
	for _, o := range out.Organisations {
		if err := s.store.AppendAudit(rq.ctx, q, db.AuditLog{ID: s.store.IDs.Next(), Chain: o, OrganisationID: &o, ActorID: &by,
			Action: "POST /sync/pair", TargetIds: string(targets), ChangedFields: `["name"]`, RequestID: requestID(rq.ctx),
			CreatedAt: s.nowText(), Details: string(details)}); err != nil {
			return err
		}
	}
	return nil
}

// Signed requests. The node signs, with its Ed25519 key, the method, the
// path and query, the SHA-256 of the body, the time and a nonce; the hub
// refuses (401, nothing changed) an unknown or revoked node, a bad
// signature, a time outside the window and a nonce seen within it.
const (
	hdrSyncNode      = "Workspace-Sync-Node"
	hdrSyncTime      = "Workspace-Sync-Time" // unix milliseconds
	hdrSyncNonce     = "Workspace-Sync-Nonce"
	hdrSyncSignature = "Workspace-Sync-Signature"
)

// syncSigned is what a signature covers.
func syncSigned(method, uri string, body []byte, node int64, ms int64, nonce string) []byte {
	sum := sha256.Sum256(body)
	return []byte("workspace-sync-1\n" + method + "\n" + uri + "\n" + hex.EncodeToString(sum[:]) + "\n" +
		strconv.FormatInt(ms, 10) + "\n" + nonce + "\n" + strconv.FormatInt(node, 10))
}

func validNonce(n string) bool {
	if len(n) < 16 || len(n) > 64 {
		return false
	}
	for i := 0; i < len(n); i++ {
		c := n[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// syncVerify checks a node's signed request and returns the node, the
// organisations it was paired for and the body.
func (s *Server) syncVerify(rq *request) (node int64, orgs []int64, body []byte, err error) {
	// The hub's time, as the window is judged by it: a node whose clock
	// is off learns the offset from this header, refused or not.
	rq.w.Header().Set("Date", s.now().UTC().Format(http.TimeFormat))
	body, err = io.ReadAll(rq.r.Body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return 0, nil, nil, errBodyTooLarge
		}
		return 0, nil, nil, badRequest("The request body could not be read.")
	}
	h := rq.r.Header
	node, err1 := strconv.ParseInt(h.Get(hdrSyncNode), 10, 64)
	ms, err2 := strconv.ParseInt(h.Get(hdrSyncTime), 10, 64)
	nonce := h.Get(hdrSyncNonce)
	sig, err3 := base64.StdEncoding.DecodeString(h.Get(hdrSyncSignature))
	if err1 != nil || err2 != nil || err3 != nil || !validNonce(nonce) || len(sig) != ed25519.SignatureSize {
		return 0, nil, nil, errUnauthorized("This request is not signed by a paired node.")
	}
	now := s.now()
	if d := now.Sub(time.UnixMilli(ms)); d > syncWindow || d < -syncWindow {
		return 0, nil, nil, errUnauthorized("This request's time is too far from the hub's: check the node's clock.")
	}
	var key []byte
	err = s.store.ReadTx(rq.ctx, func(q *db.Queries) error {
		n, err := q.SyncNodeActive(rq.ctx, node)
		key = n.PublicKey
		return err
	})
	if db.IsNotFound(err) {
		return 0, nil, nil, errUnauthorized("This node is not paired with this hub, or its pairing was revoked.")
	}
	if err != nil {
		return 0, nil, nil, err
	}
	if !ed25519.Verify(key, syncSigned(rq.r.Method, rq.r.URL.RequestURI(), body, node, ms, nonce), sig) {
		return 0, nil, nil, errUnauthorized("This request's signature is not the node's.")
	}
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		if err := q.SyncNoncePrune(rq.ctx, now.Add(-2*syncWindow).Unix()); err != nil {
			return err
		}
		n, err := q.SyncNonceTake(rq.ctx, db.SyncNonceTakeParams{Node: node, Nonce: nonce, SeenAt: now.Unix()})
		if err != nil {
			return err
		}
		if n == 0 {
			return errUnauthorized("This request was sent before (a replay).")
		}
		orgs, err = q.SyncNodeOrgs(rq.ctx, node)
		return err
	})
	if err != nil {
		return 0, nil, nil, err
	}
	return node, orgs, body, nil
}

// syncClone sends the node its clone: a database file of its
// organisations (db.SyncWriteClone), made for its node id.
func (s *Server) syncClone(rq *request) error {
	node, orgs, _, err := s.syncVerify(rq)
	if err != nil {
		return err
	}
	// The rest of a copy sent before (docs/sync.md): from the byte the
	// laptop has, when it names the copy the hub keeps for it.
	from := int64(0)
	kept, resumed := s.clones.get(node, rq.r.Header.Get("If-Range"))
	if resumed {
		n, ok := strings.CutPrefix(rq.r.Header.Get("Range"), "bytes=")
		n, ok2 := strings.CutSuffix(n, "-")
		from, err = strconv.ParseInt(n, 10, 64)
		resumed = ok && ok2 && err == nil && from >= 0 && from < kept.size
	}
	if !resumed {
		path, etag, err := s.clones.newPath()
		if err != nil {
			return err
		}
		dropped, err := s.store.SyncWriteClone(rq.ctx, path, orgs, node)
		if err != nil {
			os.Remove(path)
			return err
		}
		st, err := os.Stat(path)
		if err != nil {
			return err
		}
		kept = keptClone{path: path, etag: etag, size: st.Size(), built: time.Now()}
		s.clones.keep(node, kept)
		from = 0
		s.log.Info("sync clone", "node", node, "organisations", orgs, "bytes", st.Size(), "dropped_rows", dropped)
	}
	f, err := os.Open(kept.path)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := f.Seek(from, io.SeekStart); err != nil {
		return err
	}
	h := rq.w.Header()
	h.Set("Content-Type", "application/vnd.sqlite3")
	h.Set("ETag", kept.etag)
	h.Set("Accept-Ranges", "bytes")
	h.Set("Content-Length", strconv.FormatInt(kept.size-from, 10))
	status := http.StatusOK
	if resumed {
		h.Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", from, kept.size-1, kept.size))
		status = http.StatusPartialContent
		s.log.Info("sync clone resumed", "node", node, "from", from, "bytes", kept.size)
	}
	rq.w.WriteHeader(status)
	// All but the last byte, then the code is consumed, then the last
	// byte: a laptop that has the whole file never finds its code still
	// usable (a cut copy is refused by the node, by its length, and may be
	// fetched again, from where it was cut, with the same code until it
	// expires).
	rest := kept.size - from
	sent, err := io.CopyN(rq.w, f, rest-1)
	if err != nil || sent != rest-1 {
		s.log.Warn("sync clone cut", "node", node, "sent", from+sent, "bytes", kept.size)
		return nil
	}
	ctx := context.WithoutCancel(rq.ctx)
	if err := s.store.InTx(ctx, func(q *db.Queries) error {
		return q.SyncNodeCloned(ctx, db.SyncNodeClonedParams{Now: ptr(s.nowText()), Node: node})
	}); err != nil {
		s.log.Error("sync clone: recording it", "node", node, "err", err)
		return nil // the answer has begun: the node finds the copy cut
	}
	s.clones.done(node)
	_, _ = io.Copy(rq.w, f)
	return nil
}

// syncExchange is one page each way. Named sections: other payloads
// (number blocks, conflicts) travel beside "changes" as fields of their
// own; a side that does not know a section ignores it.
type syncExchange struct {
	// Vector: what the sender holds of each origin (origin -> clock).
	Vector map[int64]int64 `json:"vector"`
	// Changes: entries the receiver lacks, in clock order (account
	// snapshots first).
	Changes []db.SyncEntry `json:"changes"`
	// Limit (request): the largest page the node wants back.
	Limit int `json:"limit,omitempty"`
	// Pending: entries the sender still has for the other after this page.
	Pending int64 `json:"pending"`
	// More (answer): the hub has more for the node.
	More bool `json:"more,omitempty"`
	// Applied (answer): entries of the request the hub applied.
	Applied int `json:"applied"`
	// Time: the sender's wall clock, unix milliseconds (the node reports
	// how far apart the two are).
	Time int64 `json:"time"`
	// Held (request): the numbers the node has left of each counter
	// (docs/sync.md "Number blocks"); absent, the hub leases nothing.
	Held []db.NumberBlock `json:"held"`
	// Blocks (answer): number blocks the hub leased the node.
	Blocks []db.NumberBlock `json:"blocks,omitempty"`
	// Exchange (request): the node's name of the exchange the page
	// belongs to; the hub sums an exchange's pages for the Sync screen.
	Exchange string `json:"exchange,omitempty"`
}

func (s *Server) syncExchangeHandler(rq *request) error {
	node, orgs, body, err := s.syncVerify(rq)
	if err != nil {
		return err
	}
	if err := s.syncNodeAwayTooLong(rq, node); err != nil {
		return err
	}
	var in syncExchange
	if err := json.Unmarshal(body, &in); err != nil {
		return badRequest("The exchange is not valid JSON: %v", err)
	}
	limit := in.Limit
	if limit == 0 {
		limit = syncDefaultPage
	}
	if limit < 1 || limit > syncMaxPage {
		return fieldError("limit", fmt.Sprintf("must be 1-%d", syncMaxPage))
	}
	if in.Changes, err = s.syncAccountsOfNode(rq, in.Changes, orgs); err != nil {
		return err
	}
	// Conflicts the page records get ids after this one: their owners are told.
	mark := s.store.IDs.Next()
	applied, err := s.store.ApplySyncChanges(rq.ctx, in.Changes, orgs)
	if errors.Is(err, db.ErrSyncRefused) {
		return errorf(http.StatusUnprocessableEntity, "The hub refused the changes: %v", err)
	}
	if err != nil {
		return err
	}
	// Number blocks: a node running low gets new ones (conflicts travel
	// as rows of sync_conflicts, in the changes).
	var blocks []db.NumberBlock
	if in.Held != nil {
		if blocks, err = s.store.GrantNumberBlocks(rq.ctx, node, orgs, in.Held); err != nil {
			return err
		}
	}
	// The exchange's last round: nothing to move either way.
	waiting, err := s.store.SyncPending(rq.ctx, in.Vector, orgs)
	if err != nil {
		return err
	}
	if quiet := countEntries(in.Changes) == 0 && len(blocks) == 0 && waiting == 0; quiet || applied > 0 {
		if err := s.store.InTx(rq.ctx, func(q *db.Queries) error {
			if applied > 0 {
				if err := tallyExchange(rq, q, node, in.Changes, false); err != nil {
					return err
				}
				if err := s.notifySyncConflicts(rq, q, node, mark); err != nil {
					return err
				}
			}
			if quiet {
				return s.auditExchangeEnd(rq, q, node)
			}
			return nil
		}); err != nil {
			return err
		}
	}
	page, err := s.store.SyncChangesFor(rq.ctx, in.Vector, orgs, limit)
	if err != nil {
		return err
	}
	entries := 0
	for _, e := range page {
		if e.Op != "s" {
			entries++
		}
	}
	pending, err := s.store.SyncPending(rq.ctx, in.Vector, orgs)
	if err != nil {
		return err
	}
	vector, err := s.store.SyncVector(rq.ctx)
	if err != nil {
		return err
	}
	vb, _ := json.Marshal(in.Vector)
	if in.Vector == nil {
		vb = []byte("{}")
	}
	more := pending > int64(entries)
	if err := s.store.InTx(rq.ctx, func(q *db.Queries) error {
		if err := q.SyncNodeExchanged(rq.ctx, db.SyncNodeExchangedParams{Now: ptr(s.nowText()), Vector: string(vb), PendingFrom: in.Pending, Node: node}); err != nil {
			return err
		}
		if err := syncNodeTally(rq.ctx, q, node, &in, applied, entries); err != nil {
			return err
		}
		return tallyExchange(rq, q, node, page, true)
	}); err != nil {
		return err
	}
	out := syncExchange{Vector: vector, Changes: page, Pending: pending - int64(entries), More: more,
		Applied: applied, Time: s.now().UnixMilli(), Blocks: blocks}
	if out.Changes == nil {
		out.Changes = []db.SyncEntry{}
	}
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(out); err != nil {
		return err
	}
	rq.w.Header().Set("Content-Type", "application/json")
	rq.w.WriteHeader(http.StatusOK)
	_, _ = rq.w.Write(buf.Bytes())
	return nil
}

// syncRetention is how long the log keeps what every node holds.
func (s *Server) syncRetention() time.Duration {
	if s.cfg.SyncRetention > 0 {
		return s.cfg.SyncRetention
	}
	return db.DefaultSyncRetention
}

// syncNodeAwayTooLong refuses a node last heard from longer ago than the
// log's retention: what it lacks may be pruned, so it cannot catch up by
// exchanging (410, in plain words: clone again).
func (s *Server) syncNodeAwayTooLong(rq *request, node int64) error {
	var last string
	if err := s.store.ReadTx(rq.ctx, func(q *db.Queries) (err error) {
		last, err = q.SyncNodeLastContact(rq.ctx, node)
		return err
	}); err != nil {
		return err
	}
	t, err := db.ParseTime(last)
	if err != nil {
		return err
	}
	if s.now().Sub(t) <= s.syncRetention() {
		return nil
	}
	days := int(s.syncRetention().Hours() / 24)
	return errorf(http.StatusGone, "This laptop has not synced for longer than head office keeps changes (%d days), so it can no longer catch up. Make a new copy: ask an owner for a new pairing code and run workspace sync clone into a new file. Changes made on this laptop since its last sync stay in its old file only.", days)
}

// pruneSyncLog removes the entries every node holds that are older than
// the retention.
func (s *Server) pruneSyncLog(ctx context.Context, now time.Time) (int64, error) {
	since := now.Add(-s.syncRetention())
	ack, err := s.store.SyncAcknowledged(ctx, since)
	if err != nil {
		return 0, err
	}
	n, err := s.store.PruneSyncLog(ctx, ack, since.UnixMilli()<<16)
	if err == nil && n > 0 {
		s.log.Info("sync log pruned", "entries", n)
	}
	if err != nil {
		return n, err
	}
	// Pieces of a file whose transfer was never finished: a week is many
	// exchanges of a laptop that still means to send it.
	pieces, err := s.store.SyncPiecesPrune(ctx, now.Add(-7*24*time.Hour))
	if err == nil && pieces > 0 {
		s.log.Info("sync file pieces pruned", "pieces", pieces)
	}
	return n, err
}

// Exchanges in the audit trail: an exchange is in each of its
// organisations' trails once, with what it moved, not once per page. Each
// page's changes (applied from the node, sent to it; audit entries aside,
// so an exchange's own entry does not make the next one audited) are
// added up per organisation in sync_exchange_tally; the round in which
// nothing is left to move either way writes one entry per organisation
// that moved anything, before the hub's answer is read, so the entries
// travel in this exchange (one more round) and the next one finds nothing.
// A cut exchange's count waits for the next exchange's last round.

// notifySyncConflicts tells each organisation's owner what an exchange
// page recorded for a person to settle (conflicts with ids after mark), in
// one notification per organisation and page, linking to the Sync screen.
func (s *Server) notifySyncConflicts(rq *request, q *db.Queries, node, mark int64) error {
	recorded, err := q.SyncConflictsRecordedSince(rq.ctx, mark)
	if err != nil || len(recorded) == 0 {
		return err
	}
	for _, r := range recorded {
		o, err := q.OrganisationGet(rq.ctx, r.OrganisationID)
		if db.IsNotFound(err) {
			continue
		}
		if err != nil {
			return err
		}
		n, err := q.SyncNodeGetInOrg(rq.ctx, db.SyncNodeGetInOrgParams{OrganisationID: o.ID, Node: node})
		if err != nil && !db.IsNotFound(err) {
			return err
		}
		site := "a site laptop"
		if n.Name != "" {
			site = n.Name
		}
		what := "things"
		if r.Total == 1 {
			what = "thing"
		}
		body := fmt.Sprintf("An exchange with %s found %d %s two offices did at once while apart", site, r.Total, what)
		switch {
		case r.Access == r.Total && r.Total == 1:
			body = fmt.Sprintf("An exchange with %s found that two offices changed someone's access opposite ways while apart: head office kept the stricter change", site)
		case r.Access > 0:
			body += fmt.Sprintf(" (%d about someone's access: head office kept the stricter change)", r.Access)
		}
		body += ". Open Sync to keep what was decided or change it."
		if err := s.notify(rq.ctx, q, notification{UserID: o.OwnedBy, OrgID: o.ID, Kind: notifySyncConflict,
			Title: "Changes from " + site + " need you to look at them", Body: body,
			Link: "/app/orgs/" + strconv.FormatInt(o.ID, 10) + "/sync"}); err != nil {
			return err
		}
	}
	return nil
}

// tallyExchange adds a page's changes per organisation.
func tallyExchange(rq *request, q *db.Queries, node int64, page []db.SyncEntry, sent bool) error {
	by := map[int64]int64{}
	for _, e := range page {
		if e.Op != "s" && e.Org != nil && e.Table != "audit_log" {
			by[*e.Org]++
		}
	}
	for org, n := range by {
		p := db.SyncTallyAddParams{Node: node, OrganisationID: org, Received: n}
		if sent {
			p.Received, p.Sent = 0, n
		}
		if err := q.SyncTallyAdd(rq.ctx, p); err != nil {
			return err
		}
	}
	return nil
}

// auditExchangeEnd writes the finished exchange's entries.
func (s *Server) auditExchangeEnd(rq *request, q *db.Queries, node int64) error {
	rows, err := q.SyncTallyTake(rq.ctx, node)
	if err != nil {
		return err
	}
	targets, _ := json.Marshal(map[string]string{"node": strconv.FormatInt(node, 10)})
	for _, r := range rows {
		if r.Received+r.Sent == 0 {
			continue
		}
		org := r.OrganisationID
		details, _ := json.Marshal(map[string]any{"count": r.Received + r.Sent, "values": map[string]string{
			"received": strconv.FormatInt(r.Received, 10), "sent": strconv.FormatInt(r.Sent, 10)}})
		if err := s.store.AppendAudit(rq.ctx, q, db.AuditLog{ID: s.store.IDs.Next(), Chain: org, OrganisationID: &org,
			Action: "SYNC exchange", TargetIds: string(targets), ChangedFields: "[]", RequestID: requestID(rq.ctx),
			CreatedAt: s.nowText(), Details: string(details)}); err != nil {
			return err
		}
	}
	return nil
}

// syncAccountsOfNode refuses a page that changes an account of the hub
// whose person is no member of the node's organisations: an account row
// carries no organisation, so the node's pairing alone does not bound it,
// and a node must not reach the accounts of people it was never given. A
// new account (one the hub does not have) is the node's to make. A
// snapshot (op "s": an account a row of the page names, sent so the
// receiver has it) of an account the hub holds whose person is no member
// here any more is left out of the page, not refused: the node made no
// change to it (its rows naming a person removed here since, or the page
// that adds them again), and refusing would stop that node's exchanges
// for good (found by the fault run: a member removed on the hub while the
// laptop added them again).
func (s *Server) syncAccountsOfNode(rq *request, page []db.SyncEntry, orgs []int64) ([]db.SyncEntry, error) {
	ob, _ := json.Marshal(orgs)
	out := page[:0:0]
	err := s.store.ReadTx(rq.ctx, func(q *db.Queries) error {
		out = out[:0]
		for i, e := range page {
			if e.Table != "users" {
				out = append(out, e)
				continue
			}
			var key []int64
			if err := json.Unmarshal([]byte(e.Key), &key); err != nil || len(key) != 1 {
				return errorf(http.StatusUnprocessableEntity, "The hub refused the changes: entry %d: a malformed account key.", i)
			}
			// Staff is the hub's to give: no node makes or unmakes it.
			var staffNow int64
			u, err := q.UserGet(rq.ctx, key[0])
			exists := err == nil
			if exists {
				staffNow = u.Badges & BadgeStaff
			} else if !db.IsNotFound(err) {
				return err
			}
			if e.Cols != nil {
				var cols struct {
					Badges *int64 `json:"badges"`
				}
				if err := json.Unmarshal([]byte(*e.Cols), &cols); err != nil {
					return errorf(http.StatusUnprocessableEntity, "The hub refused the changes: entry %d: malformed columns.", i)
				}
				if cols.Badges != nil && *cols.Badges&BadgeStaff != staffNow {
					return errorf(http.StatusUnprocessableEntity, "The hub refused the changes: entry %d gives or takes the Staff badge, which only the hub does.", i)
				}
			}
			if !exists {
				out = append(out, e)
				continue
			}
			member, err := q.SyncIsMember(rq.ctx, db.SyncIsMemberParams{UserID: key[0], OrgsJson: string(ob)})
			if err != nil {
				return err
			}
			if !member && e.Op == "s" {
				continue
			}
			if !member {
				return errorf(http.StatusUnprocessableEntity, "The hub refused the changes: entry %d changes the account of a person who is no member of this node's organisations.", i)
			}
			out = append(out, e)
		}
		return nil
	})
	return out, err
}
