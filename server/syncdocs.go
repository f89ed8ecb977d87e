package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
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
}

// syncObjectsMissing answers which of the objects named the hub lacks.
func (s *Server) syncObjectsMissing(rq *request) error {
	_, _, body, err := s.syncVerify(rq)
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
	missing, err := s.store.SyncObjectsMissing(rq.ctx, in.Objects)
	if errors.Is(err, db.ErrSyncRefused) {
		return fieldError("objects", err.Error())
	}
	if err != nil {
		return err
	}
	if missing == nil {
		missing = []db.SyncObject{}
	}
	return rq.json(http.StatusOK, syncObjectList{Objects: missing})
}

// syncObjectPut stores an object a node pushes: its bytes must be the
// object its hash names, and what it refers to must be here already.
func (s *Server) syncObjectPut(rq *request) error {
	_, orgs, body, err := s.syncVerify(rq)
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
	err = s.store.SyncObjectPut(rq.ctx, o, d)
	if errors.Is(err, db.ErrSyncRefused) {
		return errorf(http.StatusUnprocessableEntity, "The hub refused the object: %v", err)
	}
	if err != nil {
		return err
	}
	rq.w.WriteHeader(http.StatusNoContent)
	return nil
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
	root := o
	if o.Kind != db.ObjBlob {
		root = db.SyncObject{Kind: db.ObjRoot, Hash: rq.r.URL.Query().Get("root")}
		if _, ok := docengine.ParseHash(root.Hash); !ok {
			return fieldError("root", "must name the revision's content root (64 hex digits)")
		}
	}
	ok, err := s.store.SyncObjectOfOrgs(rq.ctx, root, orgs)
	if err != nil {
		return err
	}
	if ok && root != o {
		h, _ := docengine.ParseHash(o.Hash)
		if ok, err = syncReach.under(rq.ctx, s.store, root, h); err != nil {
			return err
		}
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
	ct := "application/octet-stream"
	if o.Kind == db.ObjBlob {
		ct = d.ContentType
		rq.w.Header().Set(hdrObjectCreated, d.CreatedAt)
	}
	rq.w.Header().Set("Content-Type", ct)
	rq.w.Header().Set("Content-Length", strconv.Itoa(len(d.Data)))
	rq.w.WriteHeader(http.StatusOK)
	_, _ = rq.w.Write(d.Data)
	return nil
}

// hubObjects is the hub's object store seen from a node: a sink for the
// node's pushes, a source of its fetches.
type hubObjects struct {
	n *syncNode
	// counts, for the exchange's result
	sent, fetched int
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
	resp, err := h.n.doWith(ctx, http.MethodPut, uri, d.Data, ct, extra...)
	if err != nil {
		return err
	}
	resp.Body.Close()
	h.sent++
	return nil
}

func (h *hubObjects) SyncObjectFetch(ctx context.Context, o, root db.SyncObject) (db.SyncObjectData, error) {
	uri := "/sync/objects/" + o.Kind + "/" + o.Hash
	if o.Kind != db.ObjBlob {
		uri += "?root=" + url.QueryEscape(root.Hash)
	}
	resp, err := h.n.do(ctx, http.MethodGet, uri, nil)
	var he *hubRefusal
	if errors.As(err, &he) && he.Status == http.StatusNotFound {
		return db.SyncObjectData{}, fmt.Errorf("%w: %v", db.ErrSyncObjectAbsent, err)
	}
	if err != nil {
		return db.SyncObjectData{}, err
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	if _, err := io.Copy(&buf, io.LimitReader(resp.Body, syncMaxObjectBody+1)); err != nil {
		return db.SyncObjectData{}, err
	}
	h.fetched++
	return db.SyncObjectData{Data: buf.Bytes(), ContentType: resp.Header.Get("Content-Type"),
		CreatedAt: resp.Header.Get(hdrObjectCreated)}, nil
}

// isSyncObjectPut: a node pushing an object, whose body may be a whole
// object (bodyLimit).
func isSyncObjectPut(r *http.Request) bool {
	return r.Method == http.MethodPut && len(r.URL.Path) > len("/sync/objects/") && r.URL.Path[:len("/sync/objects/")] == "/sync/objects/"
}
