package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"

	"workspace/db"
	"workspace/server/docengine"
)

// Objects between a node and the hub (docs/sync.md, "Documents and
// files"): document chunks and blobs move by hash beside the exchange,
// each in a request of its own, streamed from and to the database one
// object at a time, so neither side holds more than one object of an
// exchange in memory. A node pushing a page first asks the hub which of
// the page's objects it lacks (POST /sync/objects/missing, a level of the
// content tree at a time) and sends those, children first (PUT
// /sync/objects/{kind}/{hash}); receiving a page, it fetches what it lacks
// (GET /sync/objects/{kind}/{hash}?root=...), which the hub gives only when
// a row of the node's organisations names it.

const (
	hdrObjectCreated = "Workspace-Object-Created"
	// syncMaxAsk bounds the objects one question names.
	syncMaxAsk = 1000
	// syncMaxObjectBody is the largest object a node may push (a 16 MiB
	// clause text with its encoding, a large PDF).
	syncMaxObjectBody = 64 << 20
	// syncReachLimit bounds the objects under one root the hub walks and
	// keeps (about 70 bytes each: a 10,000-clause document has some
	// 12,000), so the cache below stays under 70 MB at worst.
	syncReachLimit = 250_000
)

// syncReachCache keeps, for the last few roots nodes fetched from, the
// chunks under them: a node fetching a revision's content asks for many
// objects under one root, each checked against this set.
type syncReachCache struct {
	mu    sync.Mutex
	roots []docengine.Hash
	sets  map[docengine.Hash]map[docengine.Hash]bool
}

const syncReachRoots = 4

func (c *syncReachCache) under(ctx context.Context, store *db.Store, root db.SyncObject, h docengine.Hash) (bool, error) {
	rh, _ := docengine.ParseHash(root.Hash)
	c.mu.Lock()
	set, ok := c.sets[rh]
	c.mu.Unlock()
	if !ok {
		var err error
		if set, err = store.SyncReachable(ctx, root, syncReachLimit); err != nil {
			return false, err
		}
		c.mu.Lock()
		if c.sets == nil {
			c.sets = map[docengine.Hash]map[docengine.Hash]bool{}
		}
		if _, there := c.sets[rh]; !there {
			if len(c.roots) >= syncReachRoots {
				delete(c.sets, c.roots[0])
				c.roots = c.roots[1:]
			}
			c.roots = append(c.roots, rh)
			c.sets[rh] = set
		}
		c.mu.Unlock()
	}
	return set[h], nil
}

var syncReach syncReachCache

// syncGrantCache keeps, by content root, the chunks the hub may give a
// node under it without walking the root: those referred to by an object
// it gave under that root (itself given only under a root of the node's
// organisations, so each is reachable from the root). A node's walk asks
// for exactly those, so a catch-up of many revisions of one document
// walks none of them whole (syncReach walks a root the first time a
// chunk is asked for under it, which for 150 revisions of a large
// document was most of the exchange's time).
type syncGrantCache struct {
	mu sync.Mutex
	m  map[[2]docengine.Hash]struct{}
}

// syncGrantLimit bounds the pairs kept (about 100 bytes each); past it the
// cache starts afresh (a chunk not found falls back to syncReach).
const syncGrantLimit = 100_000

var syncGrants syncGrantCache

func (c *syncGrantCache) has(root, h docengine.Hash) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.m[[2]docengine.Hash{root, h}]
	return ok
}

// give records what o, given under root, refers to.
func (c *syncGrantCache) give(o db.SyncObject, root string, data []byte) {
	if o.Kind == db.ObjBlob || o.Kind == db.ObjText {
		return
	}
	if o.Kind == db.ObjRoot {
		root = o.Hash
	}
	rh, ok := docengine.ParseHash(root)
	if !ok {
		return
	}
	refs, err := db.SyncObjectRefs(o, data)
	if err != nil || len(refs) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m)+len(refs) > syncGrantLimit {
		c.m = map[[2]docengine.Hash]struct{}{}
	}
	for _, r := range refs {
		h, _ := docengine.ParseHash(r.Hash)
		c.m[[2]docengine.Hash{rh, h}] = struct{}{}
	}
}

// syncObjectAllowed: a node of orgs may be given o, reached from the
// content root rootHash (a chunk; a blob is checked by its own rows).
// roots, when not nil, keeps the roots' answers for one request.
func (s *Server) syncObjectAllowed(ctx context.Context, orgs []int64, o db.SyncObject, rootHash string, roots map[string]bool) (bool, error) {
	root := o
	if o.Kind != db.ObjBlob {
		root = db.SyncObject{Kind: db.ObjRoot, Hash: rootHash}
	}
	ok, known := roots[root.Kind+root.Hash]
	if !known {
		var err error
		if ok, err = s.store.SyncObjectOfOrgs(ctx, root, orgs); err != nil {
			return false, err
		}
		if roots != nil {
			roots[root.Kind+root.Hash] = ok
		}
	}
	if !ok || root == o {
		return ok, nil
	}
	rh, _ := docengine.ParseHash(root.Hash)
	h, _ := docengine.ParseHash(o.Hash)
	if syncGrants.has(rh, h) {
		return true, nil
	}
	return syncReach.under(ctx, s.store, root, h)
}

// checkBatch validates a batch of objects sent or asked for: a known kind,
// a hash, a root for a chunk asked for, an organisation of the node's for
// one sent (orgs not nil).
func checkBatch(items []db.SyncObjectItem, field string, orgs []int64) error {
	if len(items) > db.SyncBatchItems {
		return fieldError(field, fmt.Sprintf("must hold at most %d objects", db.SyncBatchItems))
	}
	for _, it := range items {
		switch it.Kind {
		case db.ObjRoot, db.ObjClauseNode, db.ObjIndexNode, db.ObjClause, db.ObjText, db.ObjBlob:
		default:
			return fieldError(field, "each kind must be root, cnode, inode, clause, text or blob")
		}
		if _, ok := docengine.ParseHash(it.Hash); !ok {
			return fieldError(field, "each hash must be 64 hex digits")
		}
		if orgs != nil && it.Org != 0 && !slices.Contains(orgs, it.Org) {
			return fieldError(field, "each org must be an organisation the node was paired for")
		}
		if orgs == nil && it.Kind != db.ObjBlob {
			if _, ok := docengine.ParseHash(it.Root); !ok {
				return fieldError(field, "each document part must name the revision's content root it was reached from (64 hex digits)")
			}
		}
	}
	return nil
}

// syncObjectsGive answers a batch asked for: in order, each object the
// node may have and the hub holds, until db.SyncBatchBytes (at least one);
// one too big for a batch is named in large, one not given in absent (an
// object of another organisation is answered as one the hub lacks).
func (s *Server) syncObjectsGive(ctx context.Context, orgs []int64, want []db.SyncObjectItem, out *syncObjectList) error {
	roots := map[string]bool{}
	size := 0
	for _, it := range want {
		o := db.SyncObject{Kind: it.Kind, Hash: it.Hash}
		ok, err := s.syncObjectAllowed(ctx, orgs, o, it.Root, roots)
		if err != nil {
			return err
		}
		var d db.SyncObjectData
		if ok && o.Kind == db.ObjBlob {
			// A file over a piece is named large without reading it.
			n, err := s.store.SyncBlobSize(ctx, o.Hash)
			if errors.Is(err, db.ErrSyncObjectAbsent) {
				ok = false
			} else if err != nil {
				return err
			} else if n > db.SyncPieceSize || n > db.SyncBatchBytes {
				out.Large = append(out.Large, o)
				continue
			}
		}
		if ok {
			d, err = s.store.SyncObjectGet(ctx, o)
			if errors.Is(err, db.ErrSyncObjectAbsent) {
				ok = false
			} else if err != nil {
				return err
			}
		}
		switch {
		case !ok:
			out.Absent = append(out.Absent, o)
		case len(d.Data) > db.SyncBatchBytes || (o.Kind == db.ObjBlob && len(d.Data) > db.SyncPieceSize):
			out.Large = append(out.Large, o)
		case size > 0 && size+len(d.Data) > db.SyncBatchBytes:
			return nil // the rest in the node's next batch
		default:
			size += len(d.Data)
			out.Data = append(out.Data, db.SyncObjectItem{Kind: o.Kind, Hash: o.Hash, Data: d.Data, ContentType: d.ContentType, CreatedAt: d.CreatedAt})
			syncGrants.give(o, it.Root, d.Data)
		}
	}
	return nil
}

func pathObject(rq *request) (db.SyncObject, error) {
	o := db.SyncObject{Kind: rq.params.ByName("kind"), Hash: rq.params.ByName("hash")}
	if _, ok := docengine.ParseHash(o.Hash); !ok {
		return o, badRequest("The object hash must be 64 hex digits.")
	}
	switch o.Kind {
	case db.ObjRoot, db.ObjClauseNode, db.ObjIndexNode, db.ObjClause, db.ObjText, db.ObjBlob:
		return o, nil
	}
	return o, badRequest("The object kind must be root, cnode, inode, clause, text or blob.")
}

type syncObjectList struct {
	Objects []db.SyncObject `json:"objects"`
	// Received: of the large files missing, the bytes the hub holds in
	// pieces from this node (by hash): the node sends the rest.
	Received map[string]int64 `json:"received,omitempty"`
	// Put (asked): objects a node sends in a batch, children first, stored
	// in one transaction before the rest is answered.
	Put []db.SyncObjectItem `json:"put,omitempty"`
	// Fetch (asked): objects a node wants, each with the root it reached
	// it from; answered in Data (a leading part, up to db.SyncBatchBytes),
	// Absent (not given: not held, or not the node's) and Large (too big
	// for a batch: fetched on their own).
	Fetch  []db.SyncObjectItem `json:"fetch,omitempty"`
	Stored int                 `json:"stored,omitempty"`
	Data   []db.SyncObjectItem `json:"data,omitempty"`
	Absent []db.SyncObject     `json:"absent,omitempty"`
	Large  []db.SyncObject     `json:"large,omitempty"`
}

// syncBatchBody bounds the body of a batch of objects (db.SyncBatchBytes
// of them in base64, and their names).
const syncBatchBody = 4 << 20

// syncObjectsMissing answers which of the objects named the hub lacks.
func (s *Server) syncObjectsMissing(rq *request) error {
	node, orgs, body, err := s.syncVerify(rq)
	if err != nil {
		return err
	}
	var in syncObjectList
	if err := json.Unmarshal(body, &in); err != nil {
		return badRequest("The list of objects is not valid JSON: %v", err)
	}
	if len(in.Objects) > syncMaxAsk {
		return fieldError("objects", fmt.Sprintf("must name at most %d objects", syncMaxAsk))
	}
	for _, o := range in.Objects {
		if _, ok := docengine.ParseHash(o.Hash); !ok {
			return fieldError("objects", "each hash must be 64 hex digits")
		}
	}
	if err := checkBatch(in.Put, "put", orgs); err != nil {
		return err
	}
	if err := checkBatch(in.Fetch, "fetch", nil); err != nil {
		return err
	}
	out := syncObjectList{Objects: []db.SyncObject{}}
	if len(in.Put) > 0 {
		err := s.store.SyncObjectsPut(rq.ctx, in.Put)
		if errors.Is(err, db.ErrSyncRefused) {
			return errorf(http.StatusUnprocessableEntity, "The hub refused the objects: %v", err)
		}
		if err != nil {
			return err
		}
		out.Stored = len(in.Put)
	}
	if len(in.Fetch) > 0 {
		if err := s.syncObjectsGive(rq.ctx, orgs, in.Fetch, &out); err != nil {
			return err
		}
	}
	if len(in.Objects) == 0 {
		return rq.json(http.StatusOK, out)
	}
	missing, err := s.store.SyncObjectsMissing(rq.ctx, in.Objects)
	if errors.Is(err, db.ErrSyncRefused) {
		return fieldError("objects", err.Error())
	}
	if err != nil {
		return err
	}
	if missing != nil {
		out.Objects = missing
	}
	for _, o := range missing {
		if o.Kind != db.ObjBlob {
			continue
		}
		held, err := s.store.SyncPiecesHeld(rq.ctx, node, o.Hash)
		if err != nil {
			return err
		}
		if held > 0 {
			if out.Received == nil {
				out.Received = map[string]int64{}
			}
			out.Received[o.Hash] = held
		}
	}
	return rq.json(http.StatusOK, out)
}

// syncObjectPut stores an object a node pushes: its bytes must be the
// object its hash names, and what it refers to must be here already.
func (s *Server) syncObjectPut(rq *request) error {
	node, orgs, body, err := s.syncVerify(rq)
	if err != nil {
		return err
	}
	o, err := pathObject(rq)
	if err != nil {
		return err
	}
	if v := rq.r.URL.Query().Get("org"); v != "" {
		org, err := strconv.ParseInt(v, 10, 64)
		if err != nil || !slices.Contains(orgs, org) {
			return fieldError("org", "must be an organisation the node was paired for")
		}
		o.Org = org
	}
	d := db.SyncObjectData{Data: body}
	if o.Kind == db.ObjBlob {
		d.ContentType, d.CreatedAt = rq.r.Header.Get("Content-Type"), rq.r.Header.Get(hdrObjectCreated)
	}
	v := rq.r.URL.Query().Get("pos")
	if v != "" {
		// A piece of a large file: kept until the last comes.
		whole, err := s.syncObjectPiece(rq, node, o, v, body)
		if err != nil || whole == nil {
			return err
		}
		d.Data = whole
	}
	err = s.store.SyncObjectPut(rq.ctx, o, d)
	if errors.Is(err, db.ErrSyncRefused) && v != "" {
		// The pieces were dropped when joined: the node must know its
		// next attempt starts from the file's first byte.
		return errorf(http.StatusUnprocessableEntity, "The hub refused the file sent in pieces, and dropped its pieces: it will be sent again from its start (%v)", err)
	}
	if errors.Is(err, db.ErrSyncRefused) {
		return errorf(http.StatusUnprocessableEntity, "The hub refused the object: %v", err)
	}
	if err != nil {
		return err
	}
	rq.w.WriteHeader(http.StatusNoContent)
	return nil
}

// syncObjectPiece keeps one piece of a large file a node pushes (pos, and
// total in the query, both signed with the request). A piece that does not
// start where the held ones end is refused with what is held (409), so the
// node goes on from there. It returns the whole file when this piece was
// its last, nil before.
func (s *Server) syncObjectPiece(rq *request, node int64, o db.SyncObject, posText string, piece []byte) ([]byte, error) {
	pos, err := strconv.ParseInt(posText, 10, 64)
	if err != nil || pos < 0 {
		return nil, fieldError("pos", "must be the piece's first byte in the file, from 0")
	}
	total, err := strconv.ParseInt(rq.r.URL.Query().Get("total"), 10, 64)
	switch {
	case err != nil || total < 1 || total > syncMaxObjectBody:
		return nil, fieldError("total", fmt.Sprintf("must be the file's size in bytes, 1 to %d", syncMaxObjectBody))
	case o.Kind != db.ObjBlob:
		return nil, fieldError("pos", "only files travel in pieces")
	case len(piece) == 0 || len(piece) > db.SyncPieceSize || pos+int64(len(piece)) > total:
		return nil, fieldError("pos", fmt.Sprintf("a piece holds 1 to %d bytes inside the file", db.SyncPieceSize))
	}
	held, added, err := s.store.SyncPieceAdd(rq.ctx, node, o.Hash, pos, piece)
	if err != nil {
		return nil, err
	}
	if !added {
		return nil, &Error{Status: http.StatusConflict, Message: fmt.Sprintf("The hub holds the first %d bytes of this file: send the rest from there.", held),
			Extra: map[string]any{"received": held}}
	}
	if held < total {
		rq.w.WriteHeader(http.StatusNoContent)
		return nil, nil
	}
	return s.store.SyncPiecesTake(rq.ctx, node, o.Hash)
}

// syncObjectGet sends a node an object a row of its organisations names:
// a blob by its columns, a chunk when it is under the root the node names,
// a revision of its organisations. Another organisation's object is
// answered as absent (404), as one the hub does not hold.
func (s *Server) syncObjectGet(rq *request) error {
	_, orgs, _, err := s.syncVerify(rq)
	if err != nil {
		return err
	}
	o, err := pathObject(rq)
	if err != nil {
		return err
	}
	absent := notFound("The hub has no such object for this node.")
	rootHash := rq.r.URL.Query().Get("root")
	if _, ok := docengine.ParseHash(rootHash); !ok && o.Kind != db.ObjBlob {
		return fieldError("root", "must name the revision's content root (64 hex digits)")
	}
	ok, err := s.syncObjectAllowed(rq.ctx, orgs, o, rootHash, nil)
	if err != nil {
		return err
	}
	if !ok {
		return absent
	}
	d, err := s.store.SyncObjectGet(rq.ctx, o)
	if errors.Is(err, db.ErrSyncObjectAbsent) {
		return absent
	}
	if err != nil {
		return err
	}
	syncGrants.give(o, rootHash, d.Data)
	ct := "application/octet-stream"
	if o.Kind == db.ObjBlob {
		ct = d.ContentType
		rq.w.Header().Set(hdrObjectCreated, d.CreatedAt)
	}
	data, status := d.Data, http.StatusOK
	// A node that holds the first pieces of a large file asks for the rest
	// (Range: bytes=N-); anything else gets the whole file.
	if from, ok := strings.CutPrefix(rq.r.Header.Get("Range"), "bytes="); ok && o.Kind == db.ObjBlob && strings.HasSuffix(from, "-") {
		if n, err := strconv.Atoi(strings.TrimSuffix(from, "-")); err == nil && n > 0 && n < len(data) {
			rq.w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", n, len(data)-1, len(data)))
			data, status = data[n:], http.StatusPartialContent
		}
	}
	rq.w.Header().Set("Content-Type", ct)
	rq.w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	rq.w.WriteHeader(status)
	_, _ = rq.w.Write(data)
	return nil
}

// hubObjects is the hub's object store seen from a node: a sink for the
// node's pushes, a source of its fetches.
type hubObjects struct {
	n     *syncNode
	store *db.Store // where pieces of a large file fetched are kept
	// counts, for the exchange's result
	sent, fetched int
	// received: bytes of large files the hub holds in pieces from this
	// node, as its list of missing objects said.
	received map[string]int64
}

func (h *hubObjects) SyncObjectsMissing(ctx context.Context, objs []db.SyncObject) ([]db.SyncObject, error) {
	body, _ := json.Marshal(syncObjectList{Objects: objs})
	resp, err := h.n.do(ctx, http.MethodPost, "/sync/objects/missing", body)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var out syncObjectList
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return nil, fmt.Errorf("objects the hub lacks: %w", err)
	}
	if h.received == nil {
		h.received = map[string]int64{}
	}
	for hash, n := range out.Received {
		h.received[hash] = n
	}
	return out.Objects, nil
}

func (h *hubObjects) SyncObjectPut(ctx context.Context, o db.SyncObject, d db.SyncObjectData) error {
	ct := "application/octet-stream"
	var extra []string
	if o.Kind == db.ObjBlob {
		ct, extra = d.ContentType, []string{hdrObjectCreated, d.CreatedAt}
	}
	uri := "/sync/objects/" + o.Kind + "/" + o.Hash
	if o.Org != 0 {
		uri += "?org=" + strconv.FormatInt(o.Org, 10) // whose storage it counts in
	}
	if o.Kind == db.ObjBlob && len(d.Data) > db.SyncPieceSize {
		if err := h.putPieces(ctx, uri, o, d.Data, ct, extra); err != nil {
			return err
		}
		h.sent++
		return nil
	}
	resp, err := h.n.doWith(ctx, http.MethodPut, uri, d.Data, ct, extra...)
	if err != nil {
		return err
	}
	resp.Body.Close()
	h.sent++
	return nil
}

// SyncObjectsPut sends a batch of objects in one request.
func (h *hubObjects) SyncObjectsPut(ctx context.Context, items []db.SyncObjectItem) error {
	body, _ := json.Marshal(syncObjectList{Objects: []db.SyncObject{}, Put: items})
	resp, err := h.n.do(ctx, http.MethodPost, "/sync/objects/missing", body)
	if err != nil {
		return err
	}
	resp.Body.Close()
	h.sent += len(items)
	return nil
}

// SyncObjectsFetch asks for a batch of objects in one request.
func (h *hubObjects) SyncObjectsFetch(ctx context.Context, want []db.SyncObjectItem) (got []db.SyncObjectItem, absent, large []db.SyncObject, err error) {
	body, _ := json.Marshal(syncObjectList{Objects: []db.SyncObject{}, Fetch: want})
	resp, err := h.n.do(ctx, http.MethodPost, "/sync/objects/missing", body)
	if err != nil {
		return nil, nil, nil, err
	}
	defer resp.Body.Close()
	var out syncObjectList
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return nil, nil, nil, fmt.Errorf("objects from the hub: %w", err)
	}
	h.fetched += len(out.Data)
	return out.Data, out.Absent, out.Large, nil
}

// putPieces sends a large file in pieces from what the hub holds of it;
// when the hub holds other than it said (a piece of a cut request arrived
// after all), it asks again and goes on from there.
func (h *hubObjects) putPieces(ctx context.Context, uri string, o db.SyncObject, data []byte, ct string, extra []string) error {
	total := int64(len(data))
	pos := h.received[o.Hash]
	for conflicts := 0; pos < total; {
		end := min(pos+db.SyncPieceSize, total)
		sep := "?"
		if strings.Contains(uri, "?") {
			sep = "&"
		}
		resp, err := h.n.doWith(ctx, http.MethodPut, fmt.Sprintf("%s%spos=%d&total=%d", uri, sep, pos, total), data[pos:end], ct, extra...)
		var he *hubRefusal
		if errors.As(err, &he) && he.Status == http.StatusConflict && conflicts < 3 {
			conflicts++
			missing, err := h.SyncObjectsMissing(ctx, []db.SyncObject{o})
			if err != nil {
				return err
			}
			if len(missing) == 0 {
				return nil // it came whole meanwhile
			}
			pos = h.received[o.Hash]
			continue
		}
		if errors.As(err, &he) && he.Status == http.StatusUnprocessableEntity && end == total {
			// The last piece joined the held ones into something else
			// than the file (a piece damaged on the way): the hub dropped
			// them all.
			return fmt.Errorf("%w: %w", errSyncPiecesDropped, err)
		}
		if err != nil {
			return err
		}
		resp.Body.Close()
		pos = end
	}
	return nil
}

func (h *hubObjects) SyncObjectFetch(ctx context.Context, o, root db.SyncObject) (db.SyncObjectData, error) {
	uri := "/sync/objects/" + o.Kind + "/" + o.Hash
	if o.Kind != db.ObjBlob {
		uri += "?root=" + url.QueryEscape(root.Hash)
	}
	var held int64
	var extra []string
	if o.Kind == db.ObjBlob && h.store != nil {
		var err error
		if held, err = h.store.SyncPiecesHeld(ctx, 0, o.Hash); err != nil {
			return db.SyncObjectData{}, err
		}
		if held > 0 {
			extra = []string{"Range", fmt.Sprintf("bytes=%d-", held)}
		}
	}
	resp, err := h.n.doWith(ctx, http.MethodGet, uri, nil, "", extra...)
	var he *hubRefusal
	if errors.As(err, &he) && he.Status == http.StatusNotFound {
		return db.SyncObjectData{}, fmt.Errorf("%w: %v", db.ErrSyncObjectAbsent, err)
	}
	if err != nil {
		return db.SyncObjectData{}, err
	}
	defer resp.Body.Close()
	d := db.SyncObjectData{ContentType: resp.Header.Get("Content-Type"), CreatedAt: resp.Header.Get(hdrObjectCreated)}
	if resp.StatusCode != http.StatusPartialContent && held > 0 {
		// The whole file came instead: the pieces held go.
		if _, err := h.store.SyncPiecesTake(ctx, 0, o.Hash); err != nil {
			return d, err
		}
		held = 0
	}
	if o.Kind == db.ObjBlob && h.store != nil && held+resp.ContentLength > db.SyncPieceSize {
		if d.Data, err = h.fetchPieces(ctx, o, held, held+resp.ContentLength, resp.Body); err != nil {
			return d, err
		}
		if sum := sha256.Sum256(d.Data); held > 0 && hex.EncodeToString(sum[:]) != o.Hash {
			// The pieces kept from an earlier fetch and the rest do not
			// make the file (damaged where they were kept): they are
			// dropped already, so the file is fetched whole once more.
			resp.Body.Close()
			return h.SyncObjectFetch(ctx, o, root)
		}
		h.fetched++
		return d, nil
	}
	var buf bytes.Buffer
	if _, err := io.Copy(&buf, io.LimitReader(resp.Body, syncMaxObjectBody+1)); err != nil {
		return d, err
	}
	h.fetched++
	d.Data = buf.Bytes()
	return d, nil
}

// fetchPieces reads a large file's body from pos on, keeping each piece as
// it comes (a cut keeps what arrived: the next exchange asks for the
// rest), and returns the whole file once the body has ended.
func (h *hubObjects) fetchPieces(ctx context.Context, o db.SyncObject, pos, total int64, body io.Reader) ([]byte, error) {
	buf := make([]byte, db.SyncPieceSize)
	body = io.LimitReader(body, total-pos)
	for {
		n, err := io.ReadFull(body, buf)
		if n > 0 {
			if _, _, aerr := h.store.SyncPieceAdd(ctx, 0, o.Hash, pos, buf[:n]); aerr != nil {
				return nil, aerr
			}
			pos += int64(n)
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	if pos != total {
		// Cut: the pieces stay for the next exchange.
		return nil, fmt.Errorf("a file from the hub stopped after %d of %d bytes: %w", pos, total, io.ErrUnexpectedEOF)
	}
	return h.store.SyncPiecesTake(ctx, 0, o.Hash)
}

// isSyncObjectPut: a node pushing an object, whose body may be a whole
// object (bodyLimit).
func isSyncObjectPut(r *http.Request) bool {
	return r.Method == http.MethodPut && len(r.URL.Path) > len("/sync/objects/") && r.URL.Path[:len("/sync/objects/")] == "/sync/objects/"
}

// isSyncObjectBatch: a node sending or asking for a batch of objects
// (syncBatchBody).
func isSyncObjectBatch(r *http.Request) bool {
	return r.Method == http.MethodPost && r.URL.Path == "/sync/objects/missing"
}
