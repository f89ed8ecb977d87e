package server

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"workspace/db"
	"workspace/server/docengine"
)

// nodeClauses reads the clause texts of a branch head in a node's file.
func nodeClauses(t testing.TB, s *db.Store, docID int64) []string {
	t.Helper()
	ctx := context.Background()
	var out []string
	if err := s.ReadTx(ctx, func(q *db.Queries) error {
		br, err := q.BranchByName(ctx, db.BranchByNameParams{DocumentID: docID, Name: "main"})
		if err != nil {
			return err
		}
		head, err := q.RevisionGet(ctx, br.RevisionID)
		if err != nil {
			return err
		}
		d, err := docengine.NewStage(chunkStore{ctx, q}).Open(hashOf(head.Hash))
		if err != nil {
			return err
		}
		rows, _, err := d.Clauses(0, 0, 1000)
		for _, r := range rows {
			out = append(out, r.Text)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// cloneStore pairs a laptop for org (its owner makes the code) from the
// hub served at hubURL and opens the clone's file.
func cloneStore(t testing.TB, e *testEnv, owner *testUser, org, hubURL string) *db.Store {
	t.Helper()
	ctx := context.Background()
	code := e.must(201, owner, "POST", "/organisations/"+org+"/sync/pairing-codes", map[string]any{}).obj(t)["code"].(string)
	path := filepath.Join(t.TempDir(), "site.db")
	if _, _, err := SyncClone(ctx, hubURL, code, "Site", path, io.Discard); err != nil {
		t.Fatal(err)
	}
	node, err := db.Open(ctx, db.Options{Path: path, Synchronous: "NORMAL", NodeID: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { node.Close() })
	return node
}

// nodeCommit makes a revision of a document's main branch in a node's file
// as the change flow would (edit on the head, flushed, the branch moved).
func nodeCommit(t testing.TB, node *db.Store, docID int64, edit func(d *docengine.Doc) error) {
	t.Helper()
	ctx := context.Background()
	if err := node.InTxSQL(ctx, func(tx *sql.Tx, q *db.Queries) error {
		br, err := q.BranchByName(ctx, db.BranchByNameParams{DocumentID: docID, Name: "main"})
		if err != nil {
			return err
		}
		head, err := q.RevisionGet(ctx, br.RevisionID)
		if err != nil {
			return err
		}
		st := docengine.NewStage(chunkStore{ctx, q})
		d, err := st.Open(hashOf(head.Hash))
		if err != nil {
			return err
		}
		if err := edit(d); err != nil {
			return err
		}
		h, err := d.Save()
		if err != nil {
			return err
		}
		if _, err := st.Flush(h); err != nil {
			return err
		}
		parents, _ := json.Marshal([]db.ID{db.ID(head.ID)})
		rev, err := q.RevisionCreate(ctx, db.RevisionCreateParams{ID: node.IDs.Next(), DocumentID: head.DocumentID, Hash: h[:],
			ParentID: &head.ID, Parents: string(parents), Generation: head.Generation + 1, CreatedAt: db.FormatTime(time.Now()), CreatedBy: head.CreatedBy})
		if err != nil {
			return err
		}
		_, err = q.BranchMove(ctx, db.BranchMoveParams{ID: br.ID, RevisionID: rev.ID, OldRevisionID: head.ID})
		return err
	}); err != nil {
		t.Fatal(err)
	}
}

// TestSyncDocumentsAndFilesOverHTTP: a clone holds its organisation's
// document content; a clause added on the node and a file reach the hub
// with `sync now` (objects sent before their page), a clause added on the
// hub reaches the node, and a second exchange moves nothing. The object
// routes: every error status, and another organisation's document parts
// and files answered as absent.
func TestSyncDocumentsAndFilesOverHTTP(t *testing.T) {
	t.Parallel()
	f := newDocFixture(t)
	e := f.e
	e.clock.Advance(time.Since(e.clock.Now())) // the node signs with the wall clock
	ctx := context.Background()
	c := content{f: f, doc: "/documents/" + f.doc}
	c.change(t, "POST", c.rev(c.head(t, "main"))+"/clauses", map[string]any{"text": "Hub clause"})
	evil := "/documents/" + f.evilDoc
	evilHead := e.must(200, f.mallory, "GET", evil+"/branches/main", nil).obj(t)["hash"].(string)
	evilHead = e.must(200, f.mallory, "POST", evil+"/revisions/"+evilHead+"/clauses", map[string]any{"text": "Foreign secret clause"}).obj(t)["hash"].(string)
	foreignFile := []byte("foreign file bytes")
	foreignHash := sha256.Sum256(foreignFile)
	evilID, _ := db.ParseID(f.evil)
	if err := e.store.InTxSQL(ctx, func(tx *sql.Tx, q *db.Queries) error {
		if err := q.BlobPut(ctx, db.BlobPutParams{Hash: hex.EncodeToString(foreignHash[:]), ContentType: "application/pdf",
			Size: int64(len(foreignFile)), Data: foreignFile, CreatedAt: "2026-11-26T00:00:00.000Z"}); err != nil {
			return err
		}
		_, err := q.OrgBlobAttach(ctx, db.OrgBlobAttachParams{OrganisationID: int64(evilID), Hash: hex.EncodeToString(foreignHash[:])})
		return err
	}); err != nil {
		t.Fatal(err)
	}

	hub := httptest.NewServer(e.srv)
	t.Cleanup(hub.Close)
	node := cloneStore(t, e, f.alice, f.acme, hub.URL)
	docID, _ := db.ParseID(f.doc)
	if got := nodeClauses(t, node, int64(docID)); len(got) != 1 || got[0] != "Hub clause" {
		t.Fatalf("the clone reads the document as %v", got)
	}

	// On the node: a clause (a revision, as the change flow makes it) and
	// a file.
	siteFile := []byte("site induction pdf")
	siteHash := sha256.Sum256(siteFile)
	acmeID, _ := db.ParseID(f.acme)
	nodeCommit(t, node, int64(docID), func(d *docengine.Doc) error {
		return d.InsertClause(node.IDs.Next(), docengine.Place{}, "Site clause")
	})
	if err := node.InTxSQL(ctx, func(tx *sql.Tx, q *db.Queries) error {
		if err := q.BlobPut(ctx, db.BlobPutParams{Hash: hex.EncodeToString(siteHash[:]), ContentType: "application/pdf",
			Size: int64(len(siteFile)), Data: siteFile, CreatedAt: "2026-11-26T00:00:00.000Z"}); err != nil {
			return err
		}
		_, err := q.OrgBlobAttach(ctx, db.OrgBlobAttachParams{OrganisationID: int64(acmeID), Hash: hex.EncodeToString(siteHash[:])})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	res, err := SyncNow(ctx, node, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.ObjectsSent < 3 || res.ObjectsReceived != 0 {
		t.Fatalf("the exchange moved %d objects up, %d down", res.ObjectsSent, res.ObjectsReceived)
	}
	// The hub counts the site's file and the document parts it stored
	// first in the organisation's storage, as its own writes do.
	var usage, recount int64
	if err := e.store.Reader.QueryRow(`SELECT storage_usage FROM organisations WHERE id = ?`, int64(acmeID)).Scan(&usage); err != nil {
		t.Fatal(err)
	}
	if recount, err = e.store.R.OrgStorageRecount(ctx, int64(acmeID)); err != nil || usage != recount || usage < int64(len(siteFile)) {
		t.Fatalf("storage usage %d, recounted %d (%v)", usage, recount, err)
	}
	var texts []string
	for _, cl := range e.must(200, f.alice, "GET", c.rev(c.head(t, "main"))+"/clauses", nil).arr(t) {
		texts = append(texts, cl["text"].(string))
	}
	if strings.Join(texts, "|") != "Hub clause|Site clause" {
		t.Fatalf("the hub reads %v", texts)
	}
	var held int
	if err := e.store.Reader.QueryRow(`SELECT count(*) FROM blobs WHERE hash = ?`, hex.EncodeToString(siteHash[:])).Scan(&held); err != nil || held != 1 {
		t.Fatalf("the site's file at the hub: %d %v", held, err)
	}
	if res, err = SyncNow(ctx, node, 0, nil); err != nil || res.ObjectsSent+res.ObjectsReceived != 0 {
		t.Fatalf("a second exchange moved %+v, %v", res, err)
	}
	c.change(t, "POST", c.rev(c.head(t, "main"))+"/clauses", map[string]any{"text": "Second hub clause"})
	if res, err = SyncNow(ctx, node, 0, nil); err != nil || res.ObjectsReceived == 0 || res.ObjectsSent != 0 {
		t.Fatalf("the hub's edit: %+v, %v", res, err)
	}
	if got := nodeClauses(t, node, int64(docID)); len(got) != 3 || got[2] != "Second hub clause" {
		t.Fatalf("the node reads %v", got)
	}
	// Files replaced on the hub before the node synced: an image attached
	// and dropped (its rows' entries still name it: sent), an avatar
	// replaced (no row names it now: the page applies without it), and
	// the current ones sent.
	blob := func(data string) string {
		sum := sha256.Sum256([]byte(data))
		h := hex.EncodeToString(sum[:])
		if err := e.store.InTxSQL(ctx, func(tx *sql.Tx, q *db.Queries) error {
			return q.BlobPut(ctx, db.BlobPutParams{Hash: h, ContentType: "image/png", Size: int64(len(data)), Data: []byte(data), CreatedAt: "2026-11-26T00:00:00.000Z"})
		}); err != nil {
			t.Fatal(err)
		}
		return h
	}
	oldImage, newImage, oldAvatar, newAvatar := blob("old image"), blob("new image"), blob("old avatar"), blob("new avatar")
	aliceID := f.alice.id
	for _, stmt := range []struct {
		q    string
		args []any
	}{
		{`INSERT INTO organisation_blobs (organisation_id, hash, refs) VALUES (?, ?, 1)`, []any{int64(acmeID), oldImage}},
		{`UPDATE organisations SET icon_hash = ? WHERE id = ?`, []any{oldImage, int64(acmeID)}},
		{`INSERT INTO organisation_blobs (organisation_id, hash, refs) VALUES (?, ?, 1)`, []any{int64(acmeID), newImage}},
		{`UPDATE organisations SET icon_hash = ? WHERE id = ?`, []any{newImage, int64(acmeID)}},
		{`DELETE FROM organisation_blobs WHERE organisation_id = ? AND hash = ?`, []any{int64(acmeID), oldImage}},
		{`UPDATE users SET avatar_hash = ? WHERE id = ?`, []any{oldAvatar, aliceID}},
		{`UPDATE users SET avatar_hash = ? WHERE id = ?`, []any{newAvatar, aliceID}},
	} {
		if err := e.store.InTxSQL(ctx, func(tx *sql.Tx, q *db.Queries) error {
			_, err := tx.ExecContext(ctx, stmt.q, stmt.args...)
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	if res, err = SyncNow(ctx, node, 0, nil); err != nil {
		t.Fatalf("an exchange with replaced files: %v", err)
	}
	for h, want := range map[string]int{oldImage: 1, newImage: 1, newAvatar: 1, oldAvatar: 0} {
		var n int
		if err := node.Reader.QueryRow(`SELECT count(*) FROM blobs WHERE hash = ?`, h).Scan(&n); err != nil || n != want {
			t.Errorf("blob %s on the node: %d, want %d (%v)", h[:8], n, want, err)
		}
	}
	var foreign int
	if err := node.Reader.QueryRow(`SELECT count(*) FROM documents WHERE organisation_id = ?`, int64(evilID)).Scan(&foreign); err != nil || foreign != 0 {
		t.Fatalf("the foreign document reached the node: %d %v", foreign, err)
	}

	// The object routes, signed with the node's key.
	var key ed25519.PrivateKey
	if err := node.Reader.QueryRow(`SELECT private_key FROM sync_hub`).Scan(&key); err != nil {
		t.Fatal(err)
	}
	pn := pairedNode{node: node.NodeID(), key: key}
	nonce := 0
	call := func(method, uri string, body []byte, ct string) *httptest.ResponseRecorder {
		nonce++
		req := e.signed(pn, key, method, uri, body, e.clock.Now(), fmt.Sprintf("objects-nonce-%08d", nonce))
		if ct != "" {
			req.Header.Set("Content-Type", ct)
		}
		w := httptest.NewRecorder()
		e.srv.ServeHTTP(w, req)
		return w
	}
	acmeRoot := c.head(t, "main") // a revision's hash is its content root
	// An evil chunk under its root: the root's first child.
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
	many, _ := json.Marshal(map[string]any{"objects": make([]db.SyncObject, 1001)})
	for _, tc := range []struct {
		name, method, uri string
		body              []byte
		want              int
	}{
		{"own root", "GET", "/sync/objects/root/" + acmeRoot + "?root=" + acmeRoot, nil, 200},
		{"foreign root", "GET", "/sync/objects/root/" + evilHead + "?root=" + evilHead, nil, 404},
		{"foreign chunk under own root", "GET", "/sync/objects/cnode/" + evilChild + "?root=" + acmeRoot, nil, 404},
		{"foreign file", "GET", "/sync/objects/blob/" + hex.EncodeToString(foreignHash[:]), nil, 404},
		{"own file", "GET", "/sync/objects/blob/" + hex.EncodeToString(siteHash[:]), nil, 200},
		{"chunk without its root", "GET", "/sync/objects/cnode/" + evilChild, nil, 400},
		{"unknown kind", "GET", "/sync/objects/tree/" + acmeRoot, nil, 400},
		{"bad hash", "GET", "/sync/objects/blob/xyz", nil, 400},
		{"bytes not the hash's", "PUT", "/sync/objects/text/" + acmeRoot, []byte("not it"), 422},
		{"a file without its type and time", "PUT", "/sync/objects/blob/" + hex.EncodeToString(siteHash[:]), siteFile, 422},
		{"pushed for another organisation", "PUT", "/sync/objects/blob/" + hex.EncodeToString(siteHash[:]) + "?org=" + f.evil, siteFile, 400},
		{"too many named", "POST", "/sync/objects/missing", many, 400},
		{"malformed list", "POST", "/sync/objects/missing", []byte(`{"objects":`), 400},
		{"missing: only what the hub lacks", "POST", "/sync/objects/missing",
			[]byte(`{"objects":[{"kind":"blob","hash":"` + hex.EncodeToString(siteHash[:]) + `"},{"kind":"blob","hash":"` + strings.Repeat("ab", 32) + `"}]}`), 200},
	} {
		ct := "application/json"
		if tc.method == "PUT" {
			ct = "application/octet-stream"
		}
		w := call(tc.method, tc.uri, tc.body, ct)
		if w.Code != tc.want {
			t.Errorf("%s: %d %s, want %d", tc.name, w.Code, w.Body.String(), tc.want)
		}
		if tc.name == "missing: only what the hub lacks" && !strings.Contains(w.Body.String(), strings.Repeat("ab", 32)) ||
			tc.name == "missing: only what the hub lacks" && strings.Contains(w.Body.String(), hex.EncodeToString(siteHash[:])) {
			t.Errorf("missing answered %s", w.Body.String())
		}
		if w.Code == 200 && tc.method == "GET" && strings.Contains(w.Body.String(), "Foreign secret") {
			t.Errorf("%s: the foreign clause was sent", tc.name)
		}
	}
	// Unsigned: refused before anything.
	req := httptest.NewRequest("GET", "/sync/objects/blob/"+hex.EncodeToString(siteHash[:]), nil)
	w := httptest.NewRecorder()
	e.srv.ServeHTTP(w, req)
	if w.Code != http.StatusUnauthorized {
		t.Errorf("an unsigned fetch: %d", w.Code)
	}
}

// TestSyncMergeOfHeadsChecksConstraints: when head office and a site
// laptop both moved a document's branch, the hub's merge is held to the
// API's own merge rules. Edits of different clauses merge into one head
// with both parents; a site's value of an enum column whose choices head
// office changed meanwhile merges cleanly as text but breaks the column's
// constraint, so the site's head is kept on its own branch with an open
// merge request and head office's head stays. Both judgements are in the
// organisation's audit log, and in no other organisation's.
func TestSyncMergeOfHeadsChecksConstraints(t *testing.T) {
	t.Parallel()
	f := newDocFixture(t)
	e := f.e
	e.clock.Advance(time.Since(e.clock.Now())) // the node signs with the wall clock
	ctx := context.Background()
	c := content{f: f, doc: "/documents/" + f.doc}
	h := c.change(t, "POST", c.rev(c.head(t, "main"))+"/columns", map[string]any{"name": "Status", "type": "enum", "field_id": f.enumID})
	col := e.must(200, f.alice, "GET", c.rev(h)+"/columns", nil).arr(t)[0]["column_id"].(string)
	h = c.change(t, "POST", c.rev(h)+"/clauses", map[string]any{"text": "one"})
	c.change(t, "POST", c.rev(h)+"/clauses", map[string]any{"text": "two"})
	colour := e.must(201, f.alice, "POST", "/organisations/"+f.acme+"/document-fields",
		map[string]any{"name": "Colour", "type": 4, "values": []map[string]any{{"value": "Red"}}}).obj(t)["id"].(string)

	hub := httptest.NewServer(e.srv)
	t.Cleanup(hub.Close)
	node := cloneStore(t, e, f.alice, f.acme, hub.URL)
	docID, _ := db.ParseID(f.doc)
	colID, _ := db.ParseID(col)
	audited := func(action string) []map[string]any {
		return e.must(200, f.alice, "GET", "/organisations/"+f.acme+"/audit-log?action="+url.QueryEscape(action), nil).arr(t)
	}

	// Different clauses on each side: one merged head.
	nodeCommit(t, node, int64(docID), func(d *docengine.Doc) error {
		return d.InsertClause(node.IDs.Next(), docengine.Place{}, "Site clause")
	})
	c.change(t, "POST", c.rev(c.head(t, "main"))+"/clauses", map[string]any{"text": "Hub clause"})
	if _, err := SyncNow(ctx, node, 0, nil); err != nil {
		t.Fatal(err)
	}
	merged := e.must(200, f.alice, "GET", c.doc+"/branches/main", nil).obj(t)
	rev := e.must(200, f.alice, "GET", c.rev(merged["hash"].(string)), nil).obj(t)
	if ps, _ := rev["parents"].([]any); len(ps) != 2 {
		t.Fatalf("the merged head's revision %v", rev)
	}
	if texts := strings.Join(nodeClauses(t, e.store, int64(docID)), "|"); !strings.Contains(texts, "Site clause") || !strings.Contains(texts, "Hub clause") {
		t.Fatalf("the merged head reads %s", texts)
	}
	if l := audited("SYNC document merged"); len(l) != 1 || l[0]["target_ids"].(map[string]any)["id"] != f.doc ||
		l[0]["target_ids"].(map[string]any)["branch"] != "main" {
		t.Fatalf("the merge's audit entries %v", l)
	}
	if l := e.must(200, f.alice, "GET", c.doc+"/merge-requests", nil).arr(t); len(l) != 0 {
		t.Fatalf("a clean merge opened merge requests %v", l)
	}

	// The site sets Status on the first clause to Draft; head office
	// meanwhile makes the column choose from Colour, which has no Draft.
	clauses := c.clauseIDs(t, c.head(t, "main"))
	first, _ := db.ParseID(clauses[0])
	nodeCommit(t, node, int64(docID), func(d *docengine.Doc) error {
		return d.SetCell(int64(first), int64(colID), f.valueA)
	})
	hubHead := c.change(t, "PATCH", c.rev(c.head(t, "main"))+"/columns/"+col, map[string]any{"field_id": colour})
	if _, err := SyncNow(ctx, node, 0, nil); err != nil {
		t.Fatal(err)
	}
	if got := c.head(t, "main"); got != hubHead {
		t.Fatalf("head office's head moved to %s (was %s): a merge that breaks the column's choices was taken", got, hubHead)
	}
	site := db.SiteBranchName(node.NodeID(), "main")
	mrs := e.must(200, f.alice, "GET", c.doc+"/merge-requests", nil).arr(t)
	if len(mrs) != 1 || mrs[0]["from_branch"].(map[string]any)["name"] != site || mrs[0]["to_branch"].(map[string]any)["name"] != "main" ||
		mrs[0]["status"] != "open" {
		t.Fatalf("merge requests %v", mrs)
	}
	mr := e.must(200, f.alice, "GET", c.doc+"/merge-requests/"+fmt.Sprint(mrs[0]["number"]), nil).obj(t)
	cs, _ := mr["conflicts"].([]any)
	if mr["mergeable"] != false || len(cs) != 1 || cs[0].(map[string]any)["kind"] != "constraint" {
		t.Fatalf("the site's merge request %v", mr)
	}
	if l := audited("SYNC document kept apart"); len(l) != 1 || l[0]["target_ids"].(map[string]any)["id"] != f.doc {
		t.Fatalf("the kept-apart audit entries %v", l)
	}
	for _, en := range e.must(200, f.mallory, "GET", "/organisations/"+f.evil+"/audit-log?$top=1000", nil).arr(t) {
		if strings.HasPrefix(en["action"].(string), "SYNC document") {
			t.Fatalf("another organisation's log holds %v", en)
		}
	}
	// The entries written while pages applied keep the chains whole on
	// both nodes once the site has them (audit verify).
	if _, err := SyncNow(ctx, node, 0, nil); err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]*db.Store{"hub": e.store, "site": node} {
		if problems, _, err := db.VerifyAudit(ctx, s.R); err != nil || len(problems) != 0 {
			t.Fatalf("audit verify on the %s: %v %v", name, problems, err)
		}
	}
}

// pieceFile is a file of size bytes, made from seed, and its hash.
func pieceFile(size int, seed byte) ([]byte, string) {
	b := make([]byte, size)
	for i := range b {
		b[i] = byte(i*7) ^ seed
	}
	sum := sha256.Sum256(b)
	return b, hex.EncodeToString(sum[:])
}

// attachFile stores a file in s as one of org's, as an upload there would.
func attachFile(t testing.TB, s *db.Store, org int64, data []byte, hash string) {
	t.Helper()
	ctx := context.Background()
	if err := s.InTxSQL(ctx, func(tx *sql.Tx, q *db.Queries) error {
		if err := q.BlobPut(ctx, db.BlobPutParams{Hash: hash, ContentType: "application/pdf", Size: int64(len(data)), Data: data, CreatedAt: "2026-11-29T00:00:00.000Z"}); err != nil {
			return err
		}
		_, err := q.OrgBlobAttach(ctx, db.OrgBlobAttachParams{OrganisationID: org, Hash: hash})
		return err
	}); err != nil {
		t.Fatal(err)
	}
}

// heldFile is the bytes s holds of the file hash.
func heldFile(t testing.TB, s *db.Store, hash string) []byte {
	t.Helper()
	var data []byte
	if err := s.Reader.QueryRow(`SELECT data FROM blobs WHERE hash = ?`, hash).Scan(&data); err != nil {
		t.Fatalf("the file is not held: %v", err)
	}
	return data
}

// TestSyncLargeFileResumesInsideIt: a file larger than a piece travels in
// pieces both ways, and a cut inside it costs only the piece it cut: the
// hub keeps the pieces a laptop pushed and says how far it holds, the
// laptop keeps the pieces it fetched and asks for the rest (Range); both
// end with the file byte for byte, and no piece that arrived is sent twice.
func TestSyncLargeFileResumesInsideIt(t *testing.T) {
	t.Parallel()
	f := newOrgFixture(t)
	e := f.e
	e.clock.Advance(time.Since(e.clock.Now())) // the node signs with the wall clock
	ctx := context.Background()
	acmeID, _ := db.ParseID(f.acme)

	// The hub, behind a link the test cuts: the second piece a laptop
	// pushes is cut before it arrives; the first fetch of a file is cut
	// after 5 MiB of its body.
	var mu sync.Mutex
	cutting := true
	var pushed int64    // bytes of pieces the hub took
	var ranges []string // the Range of each fetch of the hub's file
	pushes, fetches := 0, 0
	hubFile, hubHash := pieceFile(2*db.SyncPieceSize+db.SyncPieceSize/2, 0x5a) // two pieces and a half
	hub := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		cut := cutting
		switch {
		case r.Method == http.MethodPut && r.URL.Query().Get("pos") != "":
			pushes++
			if cut && pushes == 2 {
				mu.Unlock()
				panic(http.ErrAbortHandler)
			}
			pushed += r.ContentLength
		case r.Method == http.MethodGet && r.URL.Path == "/sync/objects/blob/"+hubHash:
			fetches++
			ranges = append(ranges, r.Header.Get("Range"))
			if cut && fetches == 1 {
				mu.Unlock()
				rec := httptest.NewRecorder()
				e.srv.ServeHTTP(rec, r)
				for k, v := range rec.Header() {
					w.Header()[k] = v
				}
				w.WriteHeader(rec.Code)
				_, _ = w.Write(rec.Body.Bytes()[:5<<20])
				panic(http.ErrAbortHandler)
			}
		}
		mu.Unlock()
		e.srv.ServeHTTP(w, r)
	}))
	t.Cleanup(hub.Close)
	node := cloneStore(t, e, f.alice, f.acme, hub.URL)

	// Up: the laptop's drawing, cut in its second piece.
	siteFile, siteHash := pieceFile(2*db.SyncPieceSize+db.SyncPieceSize/2, 0xa5)
	attachFile(t, node, int64(acmeID), siteFile, siteHash)
	if _, err := SyncNow(ctx, node, 0, nil); err == nil {
		t.Fatal("the cut exchange did not fail")
	}
	if n, err := e.store.SyncPiecesHeld(ctx, node.NodeID(), siteHash); err != nil || n != db.SyncPieceSize {
		t.Fatalf("the hub holds %d bytes of the laptop's file after the cut (%v), want its first piece", n, err)
	}
	// Down: head office's file, cut 5 MiB into its body.
	attachFile(t, e.store, int64(acmeID), hubFile, hubHash)
	if _, err := SyncNow(ctx, node, 0, nil); err == nil {
		t.Fatal("the cut fetch did not fail")
	}
	if n, err := node.SyncPiecesHeld(ctx, 0, hubHash); err != nil || n != 5<<20 {
		t.Fatalf("the laptop holds %d bytes of head office's file after the cut (%v), want the 5 MiB that came", n, err)
	}

	mu.Lock()
	cutting = false
	mu.Unlock()
	if _, err := SyncNow(ctx, node, 0, nil); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(heldFile(t, e.store, siteHash), siteFile) || !bytes.Equal(heldFile(t, node, hubHash), hubFile) {
		t.Fatal("a file differs after the exchange")
	}
	mu.Lock()
	defer mu.Unlock()
	if pushed != int64(len(siteFile)) {
		t.Errorf("the hub took %d bytes of pieces for a file of %d: a piece was sent twice", pushed, len(siteFile))
	}
	if len(ranges) != 2 || ranges[0] != "" || ranges[1] != fmt.Sprintf("bytes=%d-", 5<<20) {
		t.Errorf("the fetches of head office's file asked %q, want the whole file and then the rest", ranges)
	}
	for _, s := range []*db.Store{e.store, node} {
		var n int
		if err := s.Reader.QueryRow(`SELECT count(*) FROM sync_object_pieces`).Scan(&n); err != nil || n != 0 {
			t.Errorf("pieces left after the files came whole: %d %v", n, err)
		}
	}
}

// TestSyncFilePiecesRefused: the pieces of a large file pushed to the hub
// are the sending node's own (another node, even of another organisation,
// cannot continue them and is told where its own transfer stands); a piece
// out of place is refused with what is held; pieces that do not add up to
// the file the hash names are dropped whole and the node is told so; and a
// fetch of the rest (Range) is only of its organisations' files.
func TestSyncFilePiecesRefused(t *testing.T) {
	t.Parallel()
	f := newOrgFixture(t)
	e := f.e
	e.clock.Advance(time.Since(e.clock.Now())) // the nodes sign with the wall clock
	ctx := context.Background()
	hub := httptest.NewServer(e.srv)
	t.Cleanup(hub.Close)
	site := cloneStore(t, e, f.alice, f.acme, hub.URL)
	evil := cloneStore(t, e, f.mallory, f.evil, hub.URL)
	if site.NodeID() == evil.NodeID() {
		t.Fatal("the two laptops have one node id")
	}
	signer := func(s *db.Store) *syncNode {
		t.Helper()
		var h db.SyncHubGetRow
		if err := s.ReadTx(ctx, func(q *db.Queries) error {
			var err error
			h, err = q.SyncHubGet(ctx)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return &syncNode{url: hub.URL, node: s.NodeID(), key: ed25519.PrivateKey(h.PrivateKey)}
	}
	siteN, evilN := signer(site), signer(evil)
	acmeID, _ := db.ParseID(f.acme)
	evilID, _ := db.ParseID(f.evil)

	file := make([]byte, 2*db.SyncPieceSize+1000)
	for i := range file {
		file[i] = byte(i * 13)
	}
	sum := sha256.Sum256(file)
	hash := hex.EncodeToString(sum[:])
	total := int64(len(file))
	piece := func(n *syncNode, org int64, pos int64, data []byte) (int, string) {
		t.Helper()
		uri := fmt.Sprintf("/sync/objects/blob/%s?org=%d&pos=%d&total=%d", hash, org, pos, total)
		resp, err := n.doWith(ctx, http.MethodPut, uri, data, "application/pdf", hdrObjectCreated, "2026-11-29T00:00:00.000Z")
		if err != nil {
			var he *hubRefusal
			if !errors.As(err, &he) {
				t.Fatal(err)
			}
			return he.Status, he.Message
		}
		resp.Body.Close()
		return resp.StatusCode, ""
	}
	heldBy := func(s *db.Store) int64 {
		t.Helper()
		n, err := e.store.SyncPiecesHeld(ctx, s.NodeID(), hash)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	blobHeld := func() bool {
		var n int
		if err := e.store.Reader.QueryRow(`SELECT count(*) FROM blobs WHERE hash = ?`, hash).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n == 1
	}
	first := file[:db.SyncPieceSize]
	second := file[db.SyncPieceSize : 2*db.SyncPieceSize]
	last := file[2*db.SyncPieceSize:]
	tampered := bytes.Clone(second)
	tampered[100] ^= 1

	steps := []struct {
		name     string
		n        *syncNode
		org      int64
		pos      int64
		data     []byte
		status   int
		says     string
		siteHeld int64
	}{
		{"the site's first piece", siteN, int64(acmeID), 0, first, 204, "", db.SyncPieceSize},
		{"another organisation's node cannot continue it", evilN, int64(evilID), db.SyncPieceSize, second, 409, "holds the first 0 bytes", db.SyncPieceSize},
		{"nor send it for the site's organisation", evilN, int64(acmeID), 0, first, 400, "organisation the node was paired for", db.SyncPieceSize},
		{"the first piece again is out of place", siteN, int64(acmeID), 0, first, 409, fmt.Sprintf("holds the first %d bytes", db.SyncPieceSize), db.SyncPieceSize},
		{"a piece past the held ones too", siteN, int64(acmeID), 2 * db.SyncPieceSize, last, 409, fmt.Sprintf("holds the first %d bytes", db.SyncPieceSize), db.SyncPieceSize},
		{"a tampered second piece is kept", siteN, int64(acmeID), db.SyncPieceSize, tampered, 204, "", 2 * db.SyncPieceSize},
		{"the last piece: the whole differs from its hash, all pieces dropped", siteN, int64(acmeID), 2 * db.SyncPieceSize, last, 422, "pieces", 0},
		{"sent again from its first byte", siteN, int64(acmeID), 0, first, 204, "", db.SyncPieceSize},
		{"its second", siteN, int64(acmeID), db.SyncPieceSize, second, 204, "", 2 * db.SyncPieceSize},
		{"its last: the file is whole", siteN, int64(acmeID), 2 * db.SyncPieceSize, last, 204, "", 0},
	}
	for _, st := range steps {
		status, msg := piece(st.n, st.org, st.pos, st.data)
		if status != st.status || !strings.Contains(msg, st.says) {
			t.Fatalf("%s: %d %q, want %d saying %q", st.name, status, msg, st.status, st.says)
		}
		if got := heldBy(site); got != st.siteHeld {
			t.Fatalf("%s: the hub holds %d bytes of the site's pieces, want %d", st.name, got, st.siteHeld)
		}
		if got := heldBy(evil); got != 0 {
			t.Fatalf("%s: the hub holds %d bytes from the other organisation's node", st.name, got)
		}
		if whole := st.name == "its last: the file is whole"; blobHeld() != whole {
			t.Fatalf("%s: the hub holds the file: %v", st.name, !whole)
		}
	}
	var stored []byte
	if err := e.store.Reader.QueryRow(`SELECT data FROM blobs WHERE hash = ?`, hash).Scan(&stored); err != nil || !bytes.Equal(stored, file) {
		t.Fatalf("the hub's file differs from the site's (%v)", err)
	}

	// The rest of the file, fetched: the site's node gets it from byte N
	// (206 with where it stands); the other organisation's node gets 404
	// with or without a Range, as for a file the hub does not hold. A row
	// of the site's organisation names the file, as an upload's would.
	if err := e.store.InTx(ctx, func(q *db.Queries) error {
		_, err := q.OrgBlobAttach(ctx, db.OrgBlobAttachParams{OrganisationID: int64(acmeID), Hash: hash})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	uri := "/sync/objects/blob/" + hash
	resp, err := siteN.doWith(ctx, http.MethodGet, uri, nil, "", "Range", fmt.Sprintf("bytes=%d-", db.SyncPieceSize+7))
	if err != nil {
		t.Fatal(err)
	}
	rest, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusPartialContent || !bytes.Equal(rest, file[db.SyncPieceSize+7:]) ||
		resp.Header.Get("Content-Range") != fmt.Sprintf("bytes %d-%d/%d", db.SyncPieceSize+7, total-1, total) {
		t.Fatalf("the rest of the file: %d %q, %d bytes (%v)", resp.StatusCode, resp.Header.Get("Content-Range"), len(rest), err)
	}
	for _, rng := range []string{"", "bytes=5-"} {
		var extra []string
		if rng != "" {
			extra = []string{"Range", rng}
		}
		_, err := evilN.doWith(ctx, http.MethodGet, uri, nil, "", extra...)
		var he *hubRefusal
		if !errors.As(err, &he) || he.Status != http.StatusNotFound {
			t.Fatalf("another organisation's node fetching the file (Range %q): %v, want 404", rng, err)
		}
	}
}

// TestSyncDamagedPiecesStartOver: pieces kept from a cut transfer that no
// longer add up to the file (damaged where they were kept) fail the hash
// check of the whole, are dropped, and the file is sent again from its
// start, each way: going up, the laptop's sync log says so in plain words
// and the next exchange sends it whole; coming down, the laptop fetches it
// whole at once.
func TestSyncDamagedPiecesStartOver(t *testing.T) {
	t.Parallel()
	f := newOrgFixture(t)
	e := f.e
	e.clock.Advance(time.Since(e.clock.Now())) // the node signs with the wall clock
	ctx := context.Background()
	acmeID, _ := db.ParseID(f.acme)
	damage := func(s *db.Store, hash string) {
		t.Helper()
		if _, err := s.Writer.Exec(`UPDATE sync_object_pieces SET data = zeroblob(length(data)) WHERE hash = ?`, hash); err != nil {
			t.Fatal(err)
		}
	}

	// The hub behind a link that cuts the second piece a laptop pushes and
	// the first fetch of head office's file 2 MiB into its body.
	var mu sync.Mutex
	cutting := true
	var pushed int64
	pushes, fetches := 0, 0
	hubFile, hubHash := pieceFile(db.SyncPieceSize+db.SyncPieceSize/2, 0x33) // a piece and a half
	hub := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		cut := cutting
		switch {
		case r.Method == http.MethodPut && r.URL.Query().Get("pos") != "":
			pushes++
			if cut && pushes == 2 {
				mu.Unlock()
				panic(http.ErrAbortHandler)
			}
			pushed += r.ContentLength
		case r.Method == http.MethodGet && r.URL.Path == "/sync/objects/blob/"+hubHash:
			fetches++
			if cut && fetches == 1 {
				mu.Unlock()
				rec := httptest.NewRecorder()
				e.srv.ServeHTTP(rec, r)
				for k, v := range rec.Header() {
					w.Header()[k] = v
				}
				w.WriteHeader(rec.Code)
				_, _ = w.Write(rec.Body.Bytes()[:2<<20])
				panic(http.ErrAbortHandler)
			}
		}
		mu.Unlock()
		e.srv.ServeHTTP(w, r)
	}))
	t.Cleanup(hub.Close)
	node := cloneStore(t, e, f.alice, f.acme, hub.URL)
	lastError := func() string {
		t.Helper()
		var msg *string
		if err := node.ReadTx(ctx, func(q *db.Queries) error {
			h, err := q.SyncHubGet(ctx)
			msg = h.LastError
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if msg == nil {
			return ""
		}
		return *msg
	}

	// Up: the first piece arrives, then is damaged at the hub.
	siteFile, siteHash := pieceFile(db.SyncPieceSize+db.SyncPieceSize/2, 0xc3)
	attachFile(t, node, int64(acmeID), siteFile, siteHash)
	if _, err := SyncNow(ctx, node, 0, nil); err == nil {
		t.Fatal("the cut exchange did not fail")
	}
	damage(e.store, siteHash)
	mu.Lock()
	cutting = false
	mu.Unlock()
	if _, err := SyncNow(ctx, node, 0, nil); !errors.Is(err, errSyncPiecesDropped) {
		t.Fatalf("the exchange with damaged pieces at the hub: %v, want the pieces dropped", err)
	}
	if msg := lastError(); !strings.Contains(msg, "damaged") || !strings.Contains(msg, "again from its start") {
		t.Errorf("the sync log says %q", msg)
	}
	if n, err := e.store.SyncPiecesHeld(ctx, node.NodeID(), siteHash); err != nil || n != 0 {
		t.Fatalf("the hub still holds %d bytes of the damaged pieces (%v)", n, err)
	}
	mu.Lock()
	pushed = 0
	mu.Unlock()
	if _, err := SyncNow(ctx, node, 0, nil); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(heldFile(t, e.store, siteHash), siteFile) {
		t.Fatal("the laptop's file differs at the hub")
	}
	mu.Lock()
	if pushed != int64(len(siteFile)) {
		t.Errorf("the hub took %d bytes after its pieces were dropped, want the whole file (%d)", pushed, len(siteFile))
	}
	cutting = true
	mu.Unlock()

	// Down: 2 MiB of head office's file arrive, then are damaged on the
	// laptop; the rest joined to them is not the file.
	attachFile(t, e.store, int64(acmeID), hubFile, hubHash)
	if _, err := SyncNow(ctx, node, 0, nil); err == nil {
		t.Fatal("the cut fetch did not fail")
	}
	if n, err := node.SyncPiecesHeld(ctx, 0, hubHash); err != nil || n != 2<<20 {
		t.Fatalf("the laptop holds %d bytes of head office's file after the cut (%v)", n, err)
	}
	damage(node, hubHash)
	mu.Lock()
	cutting = false
	mu.Unlock()
	mu.Lock()
	fetches = 0
	mu.Unlock()
	if _, err := SyncNow(ctx, node, 0, nil); err != nil {
		t.Fatalf("the exchange after the laptop's pieces were damaged: %v", err)
	}
	mu.Lock()
	if fetches != 2 {
		t.Errorf("head office's file was fetched %d times, want the rest and then the whole file", fetches)
	}
	mu.Unlock()
	if !bytes.Equal(heldFile(t, node, hubHash), hubFile) {
		t.Fatal("head office's file differs on the laptop")
	}
	for _, s := range []*db.Store{e.store, node} {
		var n int
		if err := s.Reader.QueryRow(`SELECT count(*) FROM sync_object_pieces`).Scan(&n); err != nil || n != 0 {
			t.Errorf("pieces left after the files came whole: %d %v", n, err)
		}
	}
}
