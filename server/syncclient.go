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
	"log/slog"
	"maps"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"workspace/db"
)

// The node's side of sync (docs/sync.md): `workspace sync clone`,
// `workspace sync now` and `serve --sync-every`.

// syncHTTP is the client of every sync request: a page is applied in one
// transaction on each side, so a request cut by the timeout is retried
// whole by the next exchange.
var syncHTTP = &http.Client{Timeout: 10 * time.Minute}

// syncNode is a node's signing identity.
type syncNode struct {
	url    string
	node   int64
	key    ed25519.PrivateKey
	offset time.Duration // the hub's clock minus this node's, from its Date header
}

func newNonce() string {
	b := make([]byte, 18)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// do sends one signed request and returns the answer, or an error
// carrying the hub's message. The time signed is the node's clock moved by
// the offset learnt from the hub's Date header: a laptop whose clock is
// hours off after weeks away is refused once (401: the time is outside
// the window), learns the hub's time from that answer and signs again.
func (n *syncNode) do(ctx context.Context, method, uri string, body []byte) (*http.Response, error) {
	ct := ""
	if body != nil {
		ct = "application/json"
	}
	return n.doWith(ctx, method, uri, body, ct)
}

// doWith is do with the body's type and extra headers (name, value...).
func (n *syncNode) doWith(ctx context.Context, method, uri string, body []byte, ct string, extra ...string) (*http.Response, error) {
	for attempt := 0; ; attempt++ {
		req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(n.url, "/")+uri, bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		ms := time.Now().Add(n.offset).UnixMilli()
		nonce := newNonce()
		req.Header.Set(hdrSyncNode, strconv.FormatInt(n.node, 10))
		req.Header.Set(hdrSyncTime, strconv.FormatInt(ms, 10))
		req.Header.Set(hdrSyncNonce, nonce)
		req.Header.Set(hdrSyncSignature, base64.StdEncoding.EncodeToString(ed25519.Sign(n.key, syncSigned(method, uri, body, n.node, ms, nonce))))
		if ct != "" {
			req.Header.Set("Content-Type", ct)
		}
		for i := 0; i+1 < len(extra); i += 2 {
			req.Header.Set(extra[i], extra[i+1])
		}
		sent := time.Now()
		resp, err := syncHTTP.Do(req)
		if err != nil {
			return nil, err
		}
		before := n.offset
		if d, err := http.ParseTime(resp.Header.Get("Date")); err == nil {
			// The Date header has whole seconds: an offset under a few
			// seconds is noise, well inside the window.
			if off := d.Sub(sent); off > 5*time.Second || off < -5*time.Second {
				n.offset = off
			} else {
				n.offset = 0
			}
		}
		if resp.StatusCode == http.StatusUnauthorized && attempt == 0 && (n.offset-before > syncWindow/2 || before-n.offset > syncWindow/2) {
			resp.Body.Close()
			continue
		}
		if resp.StatusCode/100 != 2 {
			defer resp.Body.Close()
			return nil, hubError(resp)
		}
		return resp, nil
	}
}

// hubError is the hub's refusal in its own words.
func hubError(resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	// The hub's errors say it in message (respond.go); error is kept
	// for an older hub.
	var e struct {
		Message string            `json:"message"`
		Error   string            `json:"error"`
		Errors  map[string]string `json:"errors"`
	}
	_ = json.Unmarshal(b, &e)
	if e.Message == "" {
		e.Message = e.Error
	}
	for _, k := range slices.Sorted(maps.Keys(e.Errors)) {
		e.Message += " " + k + ": " + e.Errors[k] + "."
	}
	return &hubRefusal{Status: resp.StatusCode, Message: e.Message}
}

// fetchClone fetches the node's clone into part. A part left by a cut
// copy, with the ETag the hub gave it (part.etag), asks for the rest: the
// hub answers it (206) while it keeps that copy, else sends the whole file
// again (200), which starts part over. A cut copy leaves part and its ETag
// for the next run; the answer's length says whether it is whole.
func fetchClone(ctx context.Context, n *syncNode, part string, progress io.Writer) (int64, error) {
	var extra []string
	have := int64(0)
	if etag, err := os.ReadFile(part + ".etag"); err == nil {
		if st, err := os.Stat(part); err == nil && st.Size() > 0 {
			have = st.Size()
			extra = []string{"Range", fmt.Sprintf("bytes=%d-", have), "If-Range", strings.TrimSpace(string(etag))}
		}
	}
	resp, err := n.doWith(ctx, http.MethodGet, "/sync/clone", nil, "", extra...)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	flags := os.O_CREATE | os.O_WRONLY | os.O_TRUNC
	start := int64(0)
	if resp.StatusCode == http.StatusPartialContent {
		if _, err := fmt.Sscanf(resp.Header.Get("Content-Range"), "bytes %d-", &start); err != nil || start != have {
			return 0, fmt.Errorf("the hub sent the copy from byte %d, not %d", start, have)
		}
		flags = os.O_WRONLY | os.O_APPEND
		fmt.Fprintf(progress, "going on from byte %d...\n", have)
	}
	if etag := resp.Header.Get("ETag"); etag != "" {
		if err := os.WriteFile(part+".etag", []byte(etag), 0o600); err != nil {
			return 0, err
		}
	}
	f, err := os.OpenFile(part, flags, 0o600)
	if err != nil {
		return 0, err
	}
	got, err := io.Copy(f, resp.Body)
	if err == nil && resp.ContentLength >= 0 && got != resp.ContentLength {
		err = fmt.Errorf("the copy was cut at %d of %d bytes", start+got, start+resp.ContentLength)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return start + got, err
}

// SyncClone pairs with the hub at hubURL with a pairing code and makes
// dbPath (which must not exist) a node of it: the clone of the paired
// organisations, with the node id the hub assigned and a new key pair.
func SyncClone(ctx context.Context, hubURL, code, name, dbPath string, progress io.Writer) (node int64, orgs []int64, err error) {
	if _, err := os.Stat(dbPath); err == nil {
		return 0, nil, fmt.Errorf("%s exists: a clone makes a new database file", dbPath)
	}
	pub, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return 0, nil, err
	}
	body, _ := json.Marshal(syncPairBody{Code: code, PublicKey: base64.StdEncoding.EncodeToString(pub), Name: name})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(hubURL, "/")+"/sync/pair", bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := syncHTTP.Do(req)
	if err != nil {
		return 0, nil, err
	}
	if resp.StatusCode != http.StatusCreated {
		defer resp.Body.Close()
		return 0, nil, hubError(resp)
	}
	var paired syncPairJSON
	err = json.NewDecoder(resp.Body).Decode(&paired)
	resp.Body.Close()
	if err != nil {
		return 0, nil, fmt.Errorf("pairing answer: %w", err)
	}
	fmt.Fprintf(progress, "paired as node %d for %d organisation(s); copying...\n", paired.Node, len(paired.Organisations))
	n := &syncNode{url: hubURL, node: paired.Node, key: key}
	got, err := fetchClone(ctx, n, dbPath+".part", progress)
	if err != nil {
		return 0, nil, fmt.Errorf("clone (run the same command again with the same code before it expires: it goes on from where it stopped): %w", err)
	}
	if err := os.Rename(dbPath+".part", dbPath); err != nil {
		return 0, nil, err
	}
	os.Remove(dbPath + ".part.etag")
	fmt.Fprintf(progress, "copied %d bytes\n", got)
	store, err := db.Open(ctx, db.Options{Path: dbPath, NodeID: paired.Node})
	if err != nil {
		return 0, nil, err
	}
	defer store.Close()
	if err := store.SyncFinishClone(ctx, paired.Organisations); err != nil {
		return 0, nil, err
	}
	ob, _ := json.Marshal(paired.Organisations)
	vector, err := store.SyncVector(ctx)
	if err != nil {
		return 0, nil, err
	}
	vb, _ := json.Marshal(vector)
	err = store.InTx(ctx, func(q *db.Queries) error {
		if err := q.SyncHubSet(ctx, db.SyncHubSetParams{Url: hubURL, HubNode: paired.HubNode, PrivateKey: key, Organisations: string(ob)}); err != nil {
			return err
		}
		// The hub holds at least what it copied.
		return q.SyncHubExchanged(ctx, db.SyncHubExchangedParams{HubVector: string(vb), Now: ptr(db.FormatTime(time.Now()))})
	})
	if err != nil {
		return 0, nil, err
	}
	return paired.Node, paired.Organisations, nil
}

// SyncResult is what one exchange did.
type SyncResult struct {
	Sent, Received int
	Rounds         int
	// ClockOffset: the hub's clock minus this node's, as seen at the last
	// answer (the network's delay included).
	ClockOffset time.Duration
	PendingIn   int64
	// ObjectsSent and ObjectsReceived: document chunks and files moved
	// (each only to a side that lacked it).
	ObjectsSent, ObjectsReceived int
	// HeldBack: changes of this node dated ahead of the hub's clock (by
	// more than the allowed skew) wait until the hub's clock reaches them.
	HeldBack bool
}

// syncPushBytes bounds a pushed page's body, under the hub's default
// largest JSON body (1 MiB).
const syncPushBytes = 768 << 10

// SyncNow runs one exchange with the hub: pages each way until neither
// side has anything the other lacks. Each page is one transaction on each
// side, so an exchange cut anywhere resumes at the next one.
func SyncNow(ctx context.Context, store *db.Store, pageSize int, progress io.Writer) (res SyncResult, err error) {
	var hub db.SyncHubGetRow
	err = store.ReadTx(ctx, func(q *db.Queries) error {
		hub, err = q.SyncHubGet(ctx)
		return err
	})
	if db.IsNotFound(err) {
		return res, errors.New("this database is not a sync node: make one with workspace sync clone")
	}
	if err != nil {
		return res, err
	}
	defer func() {
		if err != nil {
			// In words a person reads on the Sync screen (the log
			// keeps the error itself).
			msg := syncErrorWords(hub.Url, err)
			wctx := context.WithoutCancel(ctx) // a cut exchange is recorded too
			_ = store.InTx(wctx, func(q *db.Queries) error { return q.SyncHubFailed(wctx, &msg) })
		}
	}()
	orgs, err := parseOrgs(hub.Organisations)
	if err != nil {
		return res, err
	}
	hubVector, err := parseVector(hub.HubVector)
	if err != nil {
		return res, err
	}
	var key ed25519.PrivateKey = hub.PrivateKey
	n := &syncNode{url: hub.Url, node: store.NodeID(), key: key}
	if pageSize <= 0 {
		pageSize = syncDefaultPage
	}
	exchange := newNonce()
	clockRetried := false
	for {
		res.Rounds++
		vector, err := store.SyncVector(ctx)
		if err != nil {
			return res, err
		}
		// The numbers left of each counter: the hub leases more when low.
		held, err := store.HeldNumberBlocks(ctx)
		if err != nil {
			return res, err
		}
		if held == nil {
			held = []db.NumberBlock{}
		}
		// What the hub lacks, a page sized to fit the hub's body limit.
		var push []db.SyncEntry
		var body []byte
		for size := pageSize; ; size /= 2 {
			if push, err = store.SyncChangesFor(ctx, hubVector, orgs, size); err != nil {
				return res, err
			}
			// Only what the hub takes: changes dated within the allowed
			// skew of its clock (a minute spare); later ones wait.
			if cut := clockCut(push, time.Now().Add(n.offset+db.MaxClockSkew-time.Minute)); cut < len(push) {
				push, res.HeldBack = push[:cut], true
			}
			pending, err := store.SyncPending(ctx, hubVector, orgs)
			if err != nil {
				return res, err
			}
			body, _ = json.Marshal(syncExchange{Vector: vector, Changes: push, Limit: pageSize, Pending: pending - int64(countEntries(push)), Time: time.Now().UnixMilli(), Held: held, Exchange: exchange})
			if len(body) <= syncPushBytes || size == 1 {
				break
			}
		}
		// The page's objects the hub lacks go first (syncdocs.go).
		objs := &hubObjects{n: n, store: store}
		if _, err := db.SyncSendObjects(ctx, store, objs, db.SyncPageObjects(push)); err != nil {
			return res, fmt.Errorf("sending documents and files: %w", err)
		}
		res.ObjectsSent += objs.sent
		offsetUsed := n.offset
		resp, err := n.do(ctx, http.MethodPost, "/sync/exchange", body)
		if err != nil {
			if d := n.offset - offsetUsed; !clockRetried && (d > db.MaxClockSkew/2 || d < -db.MaxClockSkew/2) {
				// Refused for changes dated ahead of the hub's clock, which
				// this node has just learnt: the round again, trimmed by it.
				clockRetried = true
				res.Rounds--
				continue
			}
			return res, err
		}
		var in syncExchange
		err = json.NewDecoder(resp.Body).Decode(&in)
		resp.Body.Close()
		if err != nil {
			return res, fmt.Errorf("exchange answer: %w", err)
		}
		res.ClockOffset = time.Until(time.UnixMilli(in.Time))
		// A clock more than the allowed skew off takes the hub's time for
		// its changes from now on (each exchange measures it afresh).
		if res.ClockOffset > db.MaxClockSkew || res.ClockOffset < -db.MaxClockSkew {
			store.SetClockOffset(res.ClockOffset)
		} else {
			store.SetClockOffset(0)
		}
		res.Sent += in.Applied
		sentEntries := countEntries(push)
		fetched, err := store.SyncPullObjects(ctx, objs, db.SyncPageObjects(in.Changes))
		res.ObjectsReceived += fetched
		if err != nil {
			return res, fmt.Errorf("fetching documents and files: %w", err)
		}
		if _, err := store.ApplySyncChanges(ctx, in.Changes, orgs); err != nil {
			return res, fmt.Errorf("applying the hub's page: %w", err)
		}
		got := countEntries(in.Changes)
		res.Received += got
		if len(in.Blocks) > 0 {
			// Kept, and provisional numbers replaced: those changes go
			// to the hub in the next round.
			if err := store.AcceptNumberBlocks(ctx, in.Blocks); err != nil {
				return res, fmt.Errorf("number blocks: %w", err)
			}
			got++
		}
		res.PendingIn = in.Pending
		moved := false
		for o, h := range in.Vector {
			if h > hubVector[o] {
				moved = true
			}
		}
		hubVector = in.Vector
		vb, _ := json.Marshal(hubVector)
		if err := store.InTx(ctx, func(q *db.Queries) error {
			return q.SyncHubExchanged(ctx, db.SyncHubExchangedParams{HubVector: string(vb), Now: ptr(db.FormatTime(time.Now())), PendingIn: in.Pending})
		}); err != nil {
			return res, err
		}
		if progress != nil {
			fmt.Fprintf(progress, "\rsent %d, received %d, %d waiting at the hub ", res.Sent, res.Received, in.Pending)
			if r, ok := progress.(syncRoundReporter); ok {
				r.syncRound(res)
			}
		}
		if sentEntries == 0 && got == 0 && !in.More {
			break
		}
		if sentEntries > 0 && !moved && got == 0 && !in.More {
			return res, errors.New("the hub took none of the changes sent: the exchange stops here")
		}
	}
	if progress != nil {
		fmt.Fprintln(progress)
	}
	// The last whole exchange, for the Sync screen.
	if err := store.InTx(ctx, func(q *db.Queries) error {
		return q.SyncHubTally(ctx, db.SyncHubTallyParams{LastSent: int64(res.Sent), LastReceived: int64(res.Received)})
	}); err != nil {
		return res, err
	}
	return res, nil
}

// clockCut is how many of a page (in clock order, account snapshots
// first) are dated no later than until.
func clockCut(page []db.SyncEntry, until time.Time) int {
	limit := until.UnixMilli() << 16
	for i, e := range page {
		if e.Op != "s" && e.HLC > limit {
			return i
		}
	}
	return len(page)
}

func countEntries(page []db.SyncEntry) int {
	n := 0
	for _, e := range page {
		if e.Op != "s" {
			n++
		}
	}
	return n
}

// SyncEvery runs an exchange every interval until ctx ends, logging one
// line per exchange (a node whose hub cannot be reached logs the failure
// and tries again at the next tick).
func SyncEvery(ctx context.Context, store *db.Store, every time.Duration, logger *slog.Logger) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		LogSyncExchange(ctx, store, logger, nil)
	}
}

// LogSyncExchange runs one exchange and logs its line; with one running
// in this process already (the Sync screen's) it runs none (errSyncBusy).
func LogSyncExchange(ctx context.Context, store *db.Store, logger *slog.Logger, progress io.Writer) (SyncResult, error) {
	run, err := beginSync(ctx, store)
	if err != nil {
		logger.Info("sync exchange skipped: one is running")
		return SyncResult{}, err
	}
	return runSync(ctx, store, run, logger, progress)
}
