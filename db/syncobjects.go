package db

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"workspace/server/docengine"
)

// Objects: document chunks and blobs (docs/sync.md, "Documents and
// files"). They are content-addressed and never change, so they are not
// rows of the change log: a page names them (a revision its content root,
// an avatar, attachment or organisation image its blob) and the receiver
// gets, by hash, only those it lacks, before the page is applied. A node
// stores an object only once everything it refers to is stored (children
// first), so holding an object means holding all that is reachable from
// it, and a walk from a page's roots stops at the first object held.

// Object kinds on the wire.
const (
	ObjRoot       = "root"
	ObjClauseNode = "cnode"
	ObjIndexNode  = "inode"
	ObjClause     = "clause"
	ObjText       = "text"
	ObjBlob       = "blob"
)

var objKinds = map[string]docengine.ObjectKind{ObjRoot: docengine.ObjRoot, ObjClauseNode: docengine.ObjClauseNode,
	ObjIndexNode: docengine.ObjIndexNode, ObjClause: docengine.ObjClause, ObjText: docengine.ObjText}

var objNames = map[docengine.ObjectKind]string{docengine.ObjRoot: ObjRoot, docengine.ObjClauseNode: ObjClauseNode,
	docengine.ObjIndexNode: ObjIndexNode, docengine.ObjClause: ObjClause, docengine.ObjText: ObjText}

// SyncObject names one object: its kind and its hash in hex.
type SyncObject struct {
	Kind string `json:"kind"`
	Hash string `json:"hash"`
	// Org: the organisation whose page needs it. A node stores an object
	// it did not hold as that organisation's (its storage usage).
	Org int64 `json:"org,omitempty"`
}

// SyncObjectData is an object's bytes (and a blob's type and time).
type SyncObjectData struct {
	Data        []byte
	ContentType string
	CreatedAt   string
}

// Limits of one object: a clause text is at most 16 MiB (a chunk holds it
// whole, with its encoding); blobs are avatars, images and PDFs.
const (
	maxChunkBytes = 17 << 20
	maxBlobBytes  = 64 << 20
)

// SyncObjectSource gives objects by name.
type SyncObjectSource interface {
	SyncObjectGet(ctx context.Context, o SyncObject) (SyncObjectData, error)
}

// SyncObjectFetcher gives objects by name, each with the root it was
// reached from (the hub checks the node may read it: docs/sync.md).
type SyncObjectFetcher interface {
	SyncObjectFetch(ctx context.Context, o, root SyncObject) (SyncObjectData, error)
}

// SyncObjectFetch is SyncObjectGet: a node reads its own store freely.
func (s *Store) SyncObjectFetch(ctx context.Context, o, _ SyncObject) (SyncObjectData, error) {
	return s.SyncObjectGet(ctx, o)
}

// SyncObjectSink takes objects: it tells which of a list it lacks and
// stores one whose children it holds.
type SyncObjectSink interface {
	SyncObjectsMissing(ctx context.Context, objs []SyncObject) ([]SyncObject, error)
	SyncObjectPut(ctx context.Context, o SyncObject, d SyncObjectData) error
}

// SyncObjectItem is an object in a batch: its name, the root it was
// reached from (asked for), and its bytes (sent).
type SyncObjectItem struct {
	Kind        string `json:"kind"`
	Hash        string `json:"hash"`
	Org         int64  `json:"org,omitempty"`
	Root        string `json:"root,omitempty"`
	Data        []byte `json:"data,omitempty"`
	ContentType string `json:"content_type,omitempty"`
	CreatedAt   string `json:"created_at,omitempty"`
}

// Object returns the item's name.
func (it SyncObjectItem) Object() SyncObject {
	return SyncObject{Kind: it.Kind, Hash: it.Hash, Org: it.Org}
}

// ObjectData returns the item's bytes.
func (it SyncObjectItem) ObjectData() SyncObjectData {
	return SyncObjectData{Data: it.Data, ContentType: it.ContentType, CreatedAt: it.CreatedAt}
}

// SyncBatchBytes bounds the object bytes of one batch each way (a request
// of many small objects instead of one each: a long catch-up moves
// thousands of document chunks). An object larger than this travels on
// its own (a blob over SyncPieceSize in pieces).
const SyncBatchBytes = 2 << 20

// SyncBatchItems bounds the objects of one batch.
const SyncBatchItems = 1000

// SyncObjectBatchSink takes many objects in one call, in the order given
// (children first), all or none.
type SyncObjectBatchSink interface {
	SyncObjectsPut(ctx context.Context, items []SyncObjectItem) error
}

// SyncObjectBatchFetcher gives many objects in one call, each asked with
// the root it was reached from: it answers a leading part of want (at
// least one, up to its byte cap) with got (their bytes) and absent (those
// it does not hold or will not give), and names in large those too big for
// a batch (fetched one at a time with SyncObjectFetch). What it does not
// answer is asked again.
type SyncObjectBatchFetcher interface {
	SyncObjectsFetch(ctx context.Context, want []SyncObjectItem) (got []SyncObjectItem, absent, large []SyncObject, err error)
}

// ErrSyncObjectAbsent: the source does not hold the object asked for.
var ErrSyncObjectAbsent = errors.New("sync: no such object")

func (o SyncObject) isBlob() bool { return o.Kind == ObjBlob }

// check: a known kind and a hash of the form the kind stores.
func (o SyncObject) check() error {
	if _, ok := objKinds[o.Kind]; !ok && o.Kind != ObjBlob {
		return refuse("an object of unknown kind %q", o.Kind)
	}
	if _, ok := docengine.ParseHash(o.Hash); !ok {
		return refuse("an object hash that is not 64 hex digits")
	}
	return nil
}

func (o SyncObject) chunkHash() []byte {
	h, _ := docengine.ParseHash(o.Hash)
	return h[:]
}

// refs: the objects o refers to (none for blobs and texts).
func (o SyncObject) refs(data []byte) ([]SyncObject, error) {
	k, ok := objKinds[o.Kind]
	if !ok {
		return nil, nil
	}
	rs, err := docengine.Refs(k, data)
	if err != nil {
		return nil, fmt.Errorf("object %s %s: %w", o.Kind, o.Hash, err)
	}
	out := make([]SyncObject, len(rs))
	for i, r := range rs {
		out[i] = SyncObject{Kind: objNames[r.Kind], Hash: r.Hash.String(), Org: o.Org}
	}
	return out, nil
}

// SyncObjectsMissing lists those of objs this node does not hold.
func (s *Store) SyncObjectsMissing(ctx context.Context, objs []SyncObject) ([]SyncObject, error) {
	var out []SyncObject
	for _, o := range objs {
		if err := o.check(); err != nil {
			return nil, err
		}
		held, err := s.objectHeld(ctx, s.R, o)
		if err != nil {
			return nil, err
		}
		if !held {
			out = append(out, o)
		}
	}
	return out, nil
}

func (s *Store) objectHeld(ctx context.Context, q *Queries, o SyncObject) (bool, error) {
	var n int64
	var err error
	if o.isBlob() {
		n, err = q.SyncBlobHeld(ctx, o.Hash)
	} else {
		n, err = q.SyncChunkHeld(ctx, o.chunkHash())
	}
	return n > 0, err
}

// SyncBlobSize is the size of a file this node holds (ErrSyncObjectAbsent
// when it holds none): a batch names a large one without reading it.
func (s *Store) SyncBlobSize(ctx context.Context, hash string) (int64, error) {
	n, err := s.R.SyncBlobSize(ctx, hash)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, ErrSyncObjectAbsent
	}
	return n, err
}

// SyncObjectGet reads one object this node holds.
func (s *Store) SyncObjectGet(ctx context.Context, o SyncObject) (SyncObjectData, error) {
	if err := o.check(); err != nil {
		return SyncObjectData{}, err
	}
	if o.isBlob() {
		b, err := s.R.BlobGet(ctx, o.Hash)
		if errors.Is(err, sql.ErrNoRows) {
			return SyncObjectData{}, ErrSyncObjectAbsent
		}
		return SyncObjectData{Data: b.Data, ContentType: b.ContentType, CreatedAt: b.CreatedAt}, err
	}
	b, err := s.R.ChunkGet(ctx, o.chunkHash())
	if errors.Is(err, sql.ErrNoRows) {
		return SyncObjectData{}, ErrSyncObjectAbsent
	}
	return SyncObjectData{Data: b}, err
}

// verify: the bytes are the object the hash names, within the limits.
func (o SyncObject) verify(d SyncObjectData) error {
	if err := o.check(); err != nil {
		return err
	}
	limit := maxChunkBytes
	if o.isBlob() {
		limit = maxBlobBytes
	}
	if len(d.Data) > limit {
		return refuse("object %s is larger than %d bytes", o.Hash, limit)
	}
	sum := sha256.Sum256(d.Data)
	if hex.EncodeToString(sum[:]) != o.Hash {
		return refuse("object %s: the bytes are not the object the hash names", o.Hash)
	}
	if o.isBlob() && (d.ContentType == "" || len(d.ContentType) > 200 || d.CreatedAt == "") {
		return refuse("blob %s without its type and time", o.Hash)
	}
	return nil
}

// SyncObjectPut stores an object after checking its bytes against its hash
// and that every object it refers to is held (children first). Storing one
// held already changes nothing.
func (s *Store) SyncObjectPut(ctx context.Context, o SyncObject, d SyncObjectData) error {
	if err := o.verify(d); err != nil {
		return err
	}
	return s.InTxSQL(context.WithValue(ctx, noCaptureKey{}, true), func(tx *sql.Tx, q *Queries) error {
		return s.installObject(ctx, q, o, d)
	})
}

// SyncObjectsPut stores a batch of objects in one transaction, in order
// (an object may refer to one before it in the batch): all or none.
func (s *Store) SyncObjectsPut(ctx context.Context, items []SyncObjectItem) error {
	for _, it := range items {
		if err := it.Object().verify(it.ObjectData()); err != nil {
			return err
		}
	}
	return s.InTxSQL(context.WithValue(ctx, noCaptureKey{}, true), func(tx *sql.Tx, q *Queries) error {
		for _, it := range items {
			if err := s.installObject(ctx, q, it.Object(), it.ObjectData()); err != nil {
				return err
			}
		}
		return nil
	})
}

func (s *Store) installObject(ctx context.Context, q *Queries, o SyncObject, d SyncObjectData) error {
	refs, err := o.refs(d.Data)
	if err != nil {
		return refuse("%v", err)
	}
	for _, r := range refs {
		held, err := s.objectHeld(ctx, q, r)
		if err != nil {
			return err
		}
		if !held {
			return refuse("object %s %s before the %s %s it refers to", o.Kind, o.Hash, r.Kind, r.Hash)
		}
	}
	// Fetched earlier by a walk a cut ended, it is here now by another way.
	if err := q.SyncStagedDelete(ctx, SyncStagedDeleteParams{Hash: o.Hash, Kind: o.Kind}); err != nil {
		return err
	}
	if o.isBlob() {
		// A file counts in an organisation's storage by its rows
		// (organisation_blobs, recounted after the page: syncOrgRebuilds).
		return q.BlobPut(ctx, BlobPutParams{Hash: o.Hash, ContentType: d.ContentType, Size: int64(len(d.Data)),
			Data: d.Data, CreatedAt: d.CreatedAt})
	}
	n, err := q.ChunkPut(ctx, ChunkPutParams{Hash: o.chunkHash(), Data: d.Data})
	if err != nil || n == 0 || o.Org == 0 {
		return err
	}
	// New here: charged to the organisation it came for, as a change made
	// here charges the chunks it stores first (organisation_document_storage).
	if err := q.DocumentStorageAdd(ctx, DocumentStorageAddParams{OrganisationID: o.Org, Bytes: int64(len(d.Data))}); err != nil {
		return err
	}
	return q.OrgStorageAdd(ctx, OrgStorageAddParams{Delta: int64(len(d.Data)), ID: o.Org})
}

// syncWalkBatch bounds one question to the other side (which of these do
// you lack).
const syncWalkBatch = 500

// SyncSendObjects gives dst the objects reachable from roots that it
// lacks, reading them from src (this node's own store when pushing to the
// hub): a walk from the roots asks dst, a level at a time, which it lacks
// and descends only into those (dst holds whatever is reachable from an
// object it holds), then sends them children first, one at a time, so a
// cut leaves dst holding whole subtrees and the next call sends only the
// rest. It returns how many objects were sent.
func SyncSendObjects(ctx context.Context, src SyncObjectSource, dst SyncObjectSink, roots []SyncObject) (int, error) {
	children := map[SyncObject][]SyncObject{}
	var order []SyncObject
	frontier := dedupObjects(roots, children)
	for len(frontier) > 0 {
		var next []SyncObject
		for start := 0; start < len(frontier); start += syncWalkBatch {
			batch := frontier[start:min(start+syncWalkBatch, len(frontier))]
			missing, err := dst.SyncObjectsMissing(ctx, batch)
			if err != nil {
				return 0, err
			}
			for _, m := range missing {
				if _, seen := children[m]; seen {
					continue
				}
				order = append(order, m)
				children[m] = nil
				if _, ok := objKinds[m.Kind]; !ok || m.Kind == ObjText {
					continue
				}
				d, err := src.SyncObjectGet(ctx, m)
				if err != nil {
					return 0, fmt.Errorf("object %s %s: %w", m.Kind, m.Hash, err)
				}
				refs, err := m.refs(d.Data)
				if err != nil {
					return 0, err
				}
				children[m] = refs
				next = append(next, refs...)
			}
		}
		frontier = dedupObjects(next, children)
	}
	sent := 0
	// Small objects go in batches (up to SyncBatchBytes) where dst takes
	// them; a batch is sent before the next large object, so the order
	// (children first) holds across them.
	bdst, batched := dst.(SyncObjectBatchSink)
	var batch []SyncObjectItem
	batchBytes := 0
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		if err := bdst.SyncObjectsPut(ctx, batch); err != nil {
			return err
		}
		sent += len(batch)
		batch, batchBytes = batch[:0], 0
		return nil
	}
	err := childrenFirst(order, children, func(o SyncObject) error {
		d, err := src.SyncObjectGet(ctx, o)
		if o.isBlob() && errors.Is(err, ErrSyncObjectAbsent) {
			return nil // a file this node never had (see pageObjects)
		}
		if err != nil {
			return fmt.Errorf("object %s %s: %w", o.Kind, o.Hash, err)
		}
		if batched && len(d.Data) <= SyncBatchBytes {
			if batchBytes+len(d.Data) > SyncBatchBytes || len(batch) >= SyncBatchItems {
				if err := flush(); err != nil {
					return err
				}
			}
			batch = append(batch, SyncObjectItem{Kind: o.Kind, Hash: o.Hash, Org: o.Org, Data: d.Data, ContentType: d.ContentType, CreatedAt: d.CreatedAt})
			batchBytes += len(d.Data)
			return nil
		}
		if batched {
			if err := flush(); err != nil {
				return err
			}
		}
		if err := dst.SyncObjectPut(ctx, o, d); err != nil {
			return err
		}
		sent++
		return nil
	})
	if err == nil && batched {
		err = flush()
	}
	return sent, err
}

// dedupObjects drops repeats and objects already walked.
func dedupObjects(objs []SyncObject, walked map[SyncObject][]SyncObject) []SyncObject {
	seen := map[SyncObject]bool{}
	var out []SyncObject
	for _, o := range objs {
		if _, ok := walked[o]; ok || seen[o] {
			continue
		}
		seen[o] = true
		out = append(out, o)
	}
	return out
}

// childrenFirst calls fn for each of objs after the objects of objs it
// refers to (post-order; an object reached twice is done once).
func childrenFirst(objs []SyncObject, children map[SyncObject][]SyncObject, fn func(SyncObject) error) error {
	done := map[SyncObject]bool{}
	var visit func(o SyncObject) error
	visit = func(o SyncObject) error {
		if done[o] {
			return nil
		}
		done[o] = true
		for _, c := range children[o] {
			if _, ours := children[c]; ours {
				if err := visit(c); err != nil {
					return err
				}
			}
		}
		return fn(o)
	}
	for _, o := range objs {
		if err := visit(o); err != nil {
			return err
		}
	}
	return nil
}

// SyncPullObjects fetches from src (the hub, when a node receives a page)
// the objects reachable from roots that this node lacks. Each fetched
// object is kept in sync_object_staging as it arrives (a cut loses at most
// the one in flight: the next call fetches only the rest), and once the
// walk is complete they are stored children first. It returns how many
// objects were fetched from src.
func (s *Store) SyncPullObjects(ctx context.Context, src SyncObjectFetcher, roots []SyncObject) (int, error) {
	children := map[SyncObject][]SyncObject{}
	rootOf := map[SyncObject]SyncObject{}
	for _, r := range roots {
		rootOf[r] = r
	}
	var order []SyncObject
	fetched := 0
	nc := context.WithValue(ctx, noCaptureKey{}, true)
	frontier := dedupObjects(roots, children)
	bsrc, batched := src.(SyncObjectBatchFetcher)
	for len(frontier) > 0 {
		missing, err := s.SyncObjectsMissing(ctx, frontier)
		if err != nil {
			return fetched, err
		}
		var next []SyncObject
		// take walks into an object held in staging.
		take := func(m SyncObject, d SyncObjectData) error {
			order = append(order, m)
			refs, err := m.refs(d.Data)
			if err != nil {
				return err
			}
			children[m] = refs
			for _, r := range refs {
				if _, ok := rootOf[r]; !ok {
					rootOf[r] = rootOf[m]
				}
			}
			next = append(next, refs...)
			return nil
		}
		// stage keeps fetched objects as they arrive, one transaction for
		// a batch.
		stage := func(objs []SyncObject, ds []SyncObjectData) error {
			for i, m := range objs {
				if err := m.verify(ds[i]); err != nil {
					return err
				}
			}
			if err := s.InTxSQL(nc, func(tx *sql.Tx, q *Queries) error {
				for i, m := range objs {
					if err := q.SyncStagedPut(ctx, SyncStagedPutParams{Hash: m.Hash, Kind: m.Kind, Data: ds[i].Data,
						ContentType: ds[i].ContentType, CreatedAt: ds[i].CreatedAt}); err != nil {
						return err
					}
				}
				return nil
			}); err != nil {
				return err
			}
			fetched += len(objs)
			for i, m := range objs {
				if err := take(m, ds[i]); err != nil {
					return err
				}
			}
			return nil
		}
		// absent: a file no longer named by any row the source may give
		// (an image replaced since) is left to the page's check; a chunk
		// must come.
		absent := func(m SyncObject, err error) error {
			if m.isBlob() {
				delete(children, m)
				return nil
			}
			return fmt.Errorf("object %s %s: %w", m.Kind, m.Hash, err)
		}
		fetchOne := func(m SyncObject) error {
			d, err := src.SyncObjectFetch(ctx, m, rootOf[m])
			if errors.Is(err, ErrSyncObjectAbsent) {
				return absent(m, err)
			}
			if err != nil {
				return fmt.Errorf("object %s %s: %w", m.Kind, m.Hash, err)
			}
			return stage([]SyncObject{m}, []SyncObjectData{d})
		}
		var toFetch []SyncObject
		for _, m := range missing {
			children[m] = nil
			st, err := s.R.SyncStagedGet(ctx, SyncStagedGetParams{Hash: m.Hash, Kind: m.Kind})
			switch {
			case err == nil:
				if err := take(m, SyncObjectData{Data: st.Data, ContentType: st.ContentType, CreatedAt: st.CreatedAt}); err != nil {
					return fetched, err
				}
			case errors.Is(err, sql.ErrNoRows):
				toFetch = append(toFetch, m)
			default:
				return fetched, err
			}
		}
		for !batched && len(toFetch) > 0 {
			if err := fetchOne(toFetch[0]); err != nil {
				return fetched, err
			}
			toFetch = toFetch[1:]
		}
		for len(toFetch) > 0 {
			want := make([]SyncObjectItem, 0, min(len(toFetch), SyncBatchItems))
			byName := map[[2]string]SyncObject{}
			for _, m := range toFetch[:cap(want)] {
				it := SyncObjectItem{Kind: m.Kind, Hash: m.Hash}
				if !m.isBlob() {
					it.Root = rootOf[m].Hash
				}
				want = append(want, it)
				byName[[2]string{m.Kind, m.Hash}] = m
			}
			got, gone, large, err := bsrc.SyncObjectsFetch(ctx, want)
			if err != nil {
				return fetched, err
			}
			answered := map[[2]string]bool{}
			var objs []SyncObject
			var ds []SyncObjectData
			for _, it := range got {
				m, ok := byName[[2]string{it.Kind, it.Hash}]
				if !ok || answered[[2]string{it.Kind, it.Hash}] {
					return fetched, fmt.Errorf("object %s %s: not asked for", it.Kind, it.Hash)
				}
				answered[[2]string{it.Kind, it.Hash}] = true
				objs, ds = append(objs, m), append(ds, it.ObjectData())
			}
			if err := stage(objs, ds); err != nil {
				return fetched, err
			}
			for _, g := range gone {
				if m, ok := byName[[2]string{g.Kind, g.Hash}]; ok && !answered[[2]string{g.Kind, g.Hash}] {
					answered[[2]string{g.Kind, g.Hash}] = true
					if err := absent(m, ErrSyncObjectAbsent); err != nil {
						return fetched, err
					}
				}
			}
			for _, l := range large {
				if m, ok := byName[[2]string{l.Kind, l.Hash}]; ok && !answered[[2]string{l.Kind, l.Hash}] {
					answered[[2]string{l.Kind, l.Hash}] = true
					if err := fetchOne(m); err != nil {
						return fetched, err
					}
				}
			}
			if len(answered) == 0 {
				return fetched, errors.New("sync: the source answered none of the objects asked for")
			}
			rest := toFetch[:0:0]
			for _, m := range toFetch {
				if !answered[[2]string{m.Kind, m.Hash}] {
					rest = append(rest, m)
				}
			}
			toFetch = rest
		}
		frontier = dedupObjects(next, children)
	}
	// Stored children first, a batch of objects per transaction.
	var batch []SyncObject
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		err := s.InTxSQL(nc, func(tx *sql.Tx, q *Queries) error {
			for _, o := range batch {
				st, err := q.SyncStagedGet(ctx, SyncStagedGetParams{Hash: o.Hash, Kind: o.Kind})
				if err != nil {
					return err
				}
				if err := s.installObject(ctx, q, o, SyncObjectData{Data: st.Data, ContentType: st.ContentType, CreatedAt: st.CreatedAt}); err != nil {
					return err
				}
			}
			return nil
		})
		batch = batch[:0]
		return err
	}
	err := childrenFirst(order, children, func(o SyncObject) error {
		batch = append(batch, o)
		if len(batch) >= 200 {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	if err == nil {
		err = s.InTxSQL(nc, func(tx *sql.Tx, q *Queries) error { return q.SyncStagedPrune(ctx) })
	}
	return fetched, err
}

// SyncReachable lists the hashes of the chunks reachable from a content
// root (the root included), at most limit of them: the hub checks with it
// that a chunk a node asks for is part of a revision of its organisations.
func (s *Store) SyncReachable(ctx context.Context, root SyncObject, limit int) (map[docengine.Hash]bool, error) {
	if root.Kind != ObjRoot {
		return nil, refuse("a root of kind %q", root.Kind)
	}
	out := map[docengine.Hash]bool{}
	stack := []SyncObject{root}
	for len(stack) > 0 {
		o := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		h, _ := docengine.ParseHash(o.Hash)
		if out[h] {
			continue
		}
		if len(out) >= limit {
			return nil, fmt.Errorf("sync: more than %d objects under root %s", limit, root.Hash)
		}
		out[h] = true
		if o.Kind == ObjText {
			continue
		}
		d, err := s.SyncObjectGet(ctx, o)
		if errors.Is(err, ErrSyncObjectAbsent) {
			continue
		}
		if err != nil {
			return nil, err
		}
		refs, err := o.refs(d.Data)
		if err != nil {
			return nil, err
		}
		stack = append(stack, refs...)
	}
	return out, nil
}

// SyncObjectOfOrgs: a row of orgs names the object, so a node paired for
// them may read it. A blob is named by its columns (blobColumns); a chunk
// is read by a node only from under a root it names, a revision of orgs
// (the hub then checks the chunk is under it: SyncReachable).
func (s *Store) SyncObjectOfOrgs(ctx context.Context, o SyncObject, orgs []int64) (bool, error) {
	if err := o.check(); err != nil {
		return false, err
	}
	ob, _ := json.Marshal(orgs)
	if o.isBlob() {
		n, err := s.R.SyncBlobOfOrgs(ctx, SyncBlobOfOrgsParams{Blob: o.Hash, OrgsJson: string(ob)})
		return n > 0, err
	}
	if o.Kind != ObjRoot {
		return false, nil
	}
	n, err := s.R.SyncRootOfOrgs(ctx, SyncRootOfOrgsParams{Hash: o.chunkHash(), OrgsJson: string(ob)})
	return n > 0, err
}

// SyncObjectRefs lists the objects o (with its bytes) refers to: the hub
// grants a node what an object it gave refers to (server/syncdocs.go).
func SyncObjectRefs(o SyncObject, data []byte) ([]SyncObject, error) { return o.refs(data) }
