package server

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"workspace/db"
	"workspace/server/docengine"
)

// batchCounter counts the batches of objects a node sends (put) and asks
// for (fetch) through the hub.
type batchCounter struct {
	h          http.Handler
	mu         sync.Mutex
	puts       []int // objects in each batch sent
	fetches    int
	largestPut int // bytes of the largest batch body
}

func (c *batchCounter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if isSyncObjectBatch(r) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var in syncObjectList
		_ = json.Unmarshal(body, &in)
		c.mu.Lock()
		if len(in.Put) > 0 {
			c.puts = append(c.puts, len(in.Put))
			c.largestPut = max(c.largestPut, len(body))
		}
		if len(in.Fetch) > 0 {
			c.fetches++
		}
		c.mu.Unlock()
	}
	c.h.ServeHTTP(w, r)
}

// TestSyncObjectBatches: objects travel in batches both ways, each under
// the byte cap (files of 900 KB: two a batch), a file over a piece on its
// own; a batch asked for answers a leading part up to the cap, names what
// the hub lacks and another organisation's document parts and files as
// absent, and a file too big for a batch as large; a batch sent is stored
// whole or not at all, and one naming another organisation is refused.
func TestSyncObjectBatches(t *testing.T) {
	t.Parallel()
	f := newDocFixture(t)
	e := f.e
	e.clock.Advance(time.Since(e.clock.Now())) // the node signs with the wall clock
	ctx := context.Background()
	acmeID, _ := db.ParseID(f.acme)
	evilID, _ := db.ParseID(f.evil)
	counted := &batchCounter{h: e.srv}
	hub := httptest.NewServer(counted)
	t.Cleanup(hub.Close)
	node := cloneStore(t, e, f.alice, f.acme, hub.URL)

	// Both ways through `sync now`: three files of 900 KB each side.
	var hubFiles, nodeFiles []string
	for k := 0; k < 3; k++ {
		data, hash := pieceFile(900<<10, byte(10+k))
		attachFile(t, e.store, int64(acmeID), data, hash)
		hubFiles = append(hubFiles, hash)
		data, hash = pieceFile(900<<10, byte(20+k))
		attachFile(t, node, int64(acmeID), data, hash)
		nodeFiles = append(nodeFiles, hash)
	}
	res, err := SyncNow(ctx, node, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hubFiles {
		if len(heldFile(t, node, h)) != 900<<10 {
			t.Fatalf("the node lacks the hub's file %s", h[:8])
		}
	}
	for _, h := range nodeFiles {
		if len(heldFile(t, e.store, h)) != 900<<10 {
			t.Fatalf("the hub lacks the node's file %s", h[:8])
		}
	}
	if res.ObjectsSent != 3 || res.ObjectsReceived != 3 {
		t.Fatalf("the exchange moved %d objects up, %d down; want 3 each", res.ObjectsSent, res.ObjectsReceived)
	}
	if fmt.Sprint(counted.puts) != "[2 1]" || counted.fetches != 2 || counted.largestPut > syncBatchBody {
		t.Fatalf("batches sent %v (largest body %d), fetches %d; want [2 1] under %d and 2", counted.puts, counted.largestPut, counted.fetches, syncBatchBody)
	}

	// The batch routes, signed with the node's key.
	var key ed25519.PrivateKey
	if err := node.Reader.QueryRow(`SELECT private_key FROM sync_hub`).Scan(&key); err != nil {
		t.Fatal(err)
	}
	pn := pairedNode{node: node.NodeID(), key: key}
	nonce := 0
	call := func(in syncObjectList) (int, syncObjectList, string) {
		t.Helper()
		nonce++
		body, _ := json.Marshal(in)
		req := e.signed(pn, key, "POST", "/sync/objects/missing", body, e.clock.Now(), fmt.Sprintf("batch-nonce-%08d", nonce))
		w := httptest.NewRecorder()
		e.srv.ServeHTTP(w, req)
		var out syncObjectList
		_ = json.Unmarshal(w.Body.Bytes(), &out)
		return w.Code, out, w.Body.String()
	}
	c := content{f: f, doc: "/documents/" + f.doc}
	acmeRoot := c.head(t, "main")
	evil := "/documents/" + f.evilDoc
	evilHead := e.must(200, f.mallory, "GET", evil+"/branches/main", nil).obj(t)["hash"].(string)
	evilHead = e.must(200, f.mallory, "POST", evil+"/revisions/"+evilHead+"/clauses", map[string]any{"text": "Foreign secret clause"}).obj(t)["hash"].(string)
	var evilChild string
	if err := e.store.ReadTx(ctx, func(q *db.Queries) error {
		h, _ := docengine.ParseHash(evilHead)
		b, err := q.ChunkGet(ctx, h[:])
		if err != nil {
			return err
		}
		refs, err := docengine.Refs(docengine.ObjRoot, b)
		if err == nil && len(refs) > 0 {
			evilChild = refs[0].Hash.String()
		}
		return err
	}); err != nil || evilChild == "" {
		t.Fatalf("the foreign document's content: %v", err)
	}
	foreignFile, foreignHash := pieceFile(1000, 77)
	attachFile(t, e.store, int64(evilID), foreignFile, foreignHash)
	bigFile, bigHash := pieceFile(db.SyncPieceSize+1, 78)
	attachFile(t, e.store, int64(acmeID), bigFile, bigHash)
	absentHash := strings.Repeat("cd", 32)
	blob := func(h string) db.SyncObjectItem { return db.SyncObjectItem{Kind: db.ObjBlob, Hash: h} }

	// A batch asked for: the cap ends it after the second file (the
	// third is asked again); what the hub lacks, another organisation's
	// root, a chunk of its document under this node's root and its file
	// are absent; the file over a piece is large.
	code, out, raw := call(syncObjectList{Objects: []db.SyncObject{}, Fetch: []db.SyncObjectItem{
		{Kind: db.ObjRoot, Hash: acmeRoot, Root: acmeRoot}, blob(hubFiles[0]), blob(absentHash), blob(foreignHash),
		{Kind: db.ObjRoot, Hash: evilHead, Root: evilHead}, {Kind: db.ObjClauseNode, Hash: evilChild, Root: acmeRoot},
		blob(bigHash), blob(hubFiles[1]), blob(hubFiles[2]),
	}})
	names := func(items []db.SyncObjectItem) string {
		var s []string
		for _, it := range items {
			sum := sha256.Sum256(it.Data)
			if hex.EncodeToString(sum[:]) != it.Hash {
				t.Errorf("object %s answered with other bytes", it.Hash[:8])
			}
			s = append(s, it.Hash[:8])
		}
		return strings.Join(s, " ")
	}
	objNames := func(objs []db.SyncObject) string {
		var s []string
		for _, o := range objs {
			s = append(s, o.Hash[:8])
		}
		return strings.Join(s, " ")
	}
	if code != 200 || strings.Contains(raw, "Foreign secret") ||
		names(out.Data) != acmeRoot[:8]+" "+hubFiles[0][:8]+" "+hubFiles[1][:8] ||
		objNames(out.Absent) != absentHash[:8]+" "+foreignHash[:8]+" "+evilHead[:8]+" "+evilChild[:8] ||
		objNames(out.Large) != bigHash[:8] {
		t.Fatalf("a batch asked for: %d, data [%s], absent [%s], large [%s]", code, names(out.Data), objNames(out.Absent), objNames(out.Large))
	}
	if code, out, _ = call(syncObjectList{Objects: []db.SyncObject{}, Fetch: []db.SyncObjectItem{blob(hubFiles[2])}}); code != 200 || names(out.Data) != hubFiles[2][:8] {
		t.Fatalf("the rest asked again: %d %s", code, names(out.Data))
	}

	// A batch sent: stored whole, or refused whole.
	text := func(s string) db.SyncObjectItem {
		sum := sha256.Sum256([]byte(s))
		return db.SyncObjectItem{Kind: db.ObjText, Hash: hex.EncodeToString(sum[:]), Org: int64(acmeID), Data: []byte(s)}
	}
	held := func(it db.SyncObjectItem) bool {
		missing, err := e.store.SyncObjectsMissing(ctx, []db.SyncObject{it.Object()})
		if err != nil {
			t.Fatal(err)
		}
		return len(missing) == 0
	}
	one, two, three := text("batch text one"), text("batch text two"), text("batch text three")
	huge := text(strings.Repeat("a batch over its body limit ", 130_000)) // 3.5 MB, 4.7 MB in base64
	wrong := text("batch text four")
	wrong.Data = []byte("not its bytes")
	foreign := text("batch text five")
	foreign.Org = int64(evilID)
	for _, tc := range []struct {
		name  string
		put   []db.SyncObjectItem
		want  int
		check []db.SyncObjectItem // held after
		not   []db.SyncObjectItem // not held after
	}{
		{"bytes not an object's hash: none stored", []db.SyncObjectItem{three, wrong}, 422, nil, []db.SyncObjectItem{three}},
		{"another organisation's: refused", []db.SyncObjectItem{three, foreign}, 400, nil, []db.SyncObjectItem{three, foreign}},
		{"too many", make([]db.SyncObjectItem, db.SyncBatchItems+1), 400, nil, nil},
		{"a body over the batch limit", []db.SyncObjectItem{huge}, 413, nil, []db.SyncObjectItem{huge}},
		{"stored", []db.SyncObjectItem{one, two}, 200, []db.SyncObjectItem{one, two}, nil},
	} {
		code, out, raw := call(syncObjectList{Objects: []db.SyncObject{}, Put: tc.put})
		if code != tc.want || (code == 200 && out.Stored != len(tc.put)) {
			t.Errorf("%s: %d %s, want %d", tc.name, code, raw, tc.want)
		}
		for _, it := range tc.check {
			if !held(it) {
				t.Errorf("%s: %s not stored", tc.name, it.Data)
			}
		}
		for _, it := range tc.not {
			if held(it) {
				t.Errorf("%s: %s stored", tc.name, it.Data)
			}
		}
	}
	// Asked for, a chunk needs the root it was reached from.
	if code, _, raw := call(syncObjectList{Objects: []db.SyncObject{}, Fetch: []db.SyncObjectItem{{Kind: db.ObjClauseNode, Hash: evilChild}}}); code != 400 {
		t.Errorf("a chunk asked without its root: %d %s", code, raw)
	}
}
