package db

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"workspace/server/docengine"
)

const docTS = `'2026-11-26T00:00:00.000Z'`

// newSyncDoc writes a document of org with one sheet, one text column and
// clauses 1..n ("clause i"), its first revision and its branch main (id
// doc+1), as the documents handler does.
func newSyncDoc(t testing.TB, s *Store, doc, org int64, n int) {
	t.Helper()
	ctx := context.Background()
	if err := s.InTxSQL(ctx, func(tx *sql.Tx, q *Queries) error {
		st := docengine.NewStage(dbChunks{ctx, q})
		d := st.New(docengine.Meta{Title: "Spec"}, 1, "Sheet 1")
		if err := d.AddColumn(docengine.Column{ID: 2, Name: "Status", Type: "text"}); err != nil {
			return err
		}
		var cs []docengine.NewClause
		for i := 1; i <= n; i++ {
			cs = append(cs, docengine.NewClause{ID: int64(i), Text: fmt.Sprintf("clause %d", i)})
		}
		if err := d.AppendClauses(1, cs); err != nil {
			return err
		}
		h, err := d.Save()
		if err != nil {
			return err
		}
		if _, err := st.Flush(h); err != nil {
			return err
		}
		if _, err := tx.Exec(`INSERT INTO documents (id, organisation_id, number, formatted_number, title, created_at, created_by, updated_at, updated_by)
			VALUES (?, ?, ?, 'D', 'Spec', `+docTS+`, 1, `+docTS+`, 1)`, doc, org, doc); err != nil {
			return err
		}
		rev := s.IDs.Next()
		if _, err := q.RevisionCreate(ctx, RevisionCreateParams{ID: rev, DocumentID: doc, Hash: h[:], Parents: "[]",
			Generation: 1, CreatedAt: "2026-11-26T00:00:00.000Z", CreatedBy: 1}); err != nil {
			return err
		}
		_, err = q.BranchCreate(ctx, BranchCreateParams{ID: doc + 1, OrganisationID: org, DocumentID: doc, Name: "main",
			RevisionID: rev, CreatedAt: "2026-11-26T00:00:00.000Z", CreatedBy: 1})
		return err
	}); err != nil {
		t.Fatal(err)
	}
}

// commitDoc applies edit to the head of branch and moves it to the new
// revision, as the change flow does; it returns the revision's id.
func commitDoc(t *testing.T, s *Store, branch int64, edit func(d *docengine.Doc) error) int64 {
	t.Helper()
	return commitDocWith(t, s, branch, edit, false)
}

// commitDocAudited is commitDoc with the audit entry a handler writes.
func commitDocAudited(t *testing.T, s *Store, branch int64, edit func(d *docengine.Doc) error) int64 {
	t.Helper()
	return commitDocWith(t, s, branch, edit, true)
}

func commitDocWith(t *testing.T, s *Store, branch int64, edit func(d *docengine.Doc) error, audit bool) int64 {
	t.Helper()
	ctx := context.Background()
	var id int64
	if err := s.InTxSQL(ctx, func(tx *sql.Tx, q *Queries) error {
		br, err := q.BranchGet(ctx, branch)
		if err != nil {
			return err
		}
		head, err := q.RevisionGet(ctx, br.RevisionID)
		if err != nil {
			return err
		}
		st := docengine.NewStage(dbChunks{ctx, q})
		d, err := st.Open(docengine.Hash(head.Hash))
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
		parents, _ := json.Marshal([]ID{ID(head.ID)})
		id = s.IDs.Next()
		if _, err := q.RevisionCreate(ctx, RevisionCreateParams{ID: id, DocumentID: head.DocumentID, Hash: h[:], ParentID: &head.ID,
			Parents: string(parents), Generation: head.Generation + 1, CreatedAt: "2026-11-26T00:00:00.000Z", CreatedBy: 1}); err != nil {
			return err
		}
		if _, err = tx.Exec(`UPDATE document_branches SET revision_id = ? WHERE id = ?`, id, branch); err != nil || !audit {
			return err
		}
		return s.AppendAudit(ctx, q, AuditLog{ID: s.IDs.Next(), Chain: br.OrganisationID, OrganisationID: &br.OrganisationID,
			Action: "POST /op", TargetIds: "{}", ChangedFields: "[]", CreatedAt: "2026-11-26T00:00:00.000Z"})
	}); err != nil {
		t.Fatal(err)
	}
	return id
}

func setText(id int64, text string) func(d *docengine.Doc) error {
	return func(d *docengine.Doc) error { return d.PatchClause(id, nil, &text) }
}

func setCell(id int64, v string) func(d *docengine.Doc) error {
	return func(d *docengine.Doc) error { return d.SetCell(id, 2, v) }
}

// docText reads a branch head's clauses as "id:text|cell" lines.
func docText(t testing.TB, s *Store, branch int64) []string {
	t.Helper()
	ctx := context.Background()
	var out []string
	if err := s.ReadTxSQL(ctx, func(tx *sql.Tx, q *Queries) error {
		br, err := q.BranchGet(ctx, branch)
		if err != nil {
			return err
		}
		head, err := q.RevisionGet(ctx, br.RevisionID)
		if err != nil {
			return err
		}
		st := docengine.NewStage(dbChunks{ctx, q})
		d, err := st.Open(docengine.Hash(head.Hash))
		if err != nil {
			return err
		}
		rows, _, err := d.Clauses(1, 0, 1000)
		if err != nil {
			return err
		}
		for _, r := range rows {
			out = append(out, fmt.Sprintf("%d:%s|%s", r.ID, r.Text, r.Cells[2]))
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// countingSource counts the objects read from a store, and fails after
// failAfter of them (0: never), as a cut link would.
type countingSource struct {
	s         *Store
	n         int
	failAfter int
}

var errCut = errors.New("the link was cut")

func (c *countingSource) SyncObjectFetch(ctx context.Context, o, _ SyncObject) (SyncObjectData, error) {
	if c.failAfter > 0 && c.n >= c.failAfter {
		return SyncObjectData{}, errCut
	}
	c.n++
	return c.s.SyncObjectGet(ctx, o)
}

// syncDocs sends from one node to the other until the receiver lacks
// nothing: per page, the objects it names first (pulled by the receiver),
// then the page. It returns entries applied and objects fetched.
func syncDocs(t *testing.T, from, to *Store, orgs []int64) (entries, objects int) {
	t.Helper()
	return syncDocsPaged(t, from, to, orgs, 7)
}

// syncDocsPaged is syncDocs with pages of size entries.
func syncDocsPaged(t *testing.T, from, to *Store, orgs []int64, size int) (entries, objects int) {
	t.Helper()
	ctx := context.Background()
	for range 1000 {
		vector, err := to.SyncVector(ctx)
		if err != nil {
			t.Fatal(err)
		}
		page, err := from.SyncChangesFor(ctx, vector, orgs, size)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			return entries, objects
		}
		n, err := to.SyncPullObjects(ctx, from, SyncPageObjects(page))
		if err != nil {
			t.Fatal(err)
		}
		objects += n
		k, err := to.ApplySyncChanges(ctx, page, orgs)
		if err != nil {
			t.Fatal(err)
		}
		entries += k
	}
	t.Fatal("the exchange never ended")
	return 0, 0
}

// docPair: a hub with a document of organisation 10 (id 500, branch 501)
// and one of organisation 20 (600), and a clone paired for 10.
func docPair(t *testing.T) (hub, site *syncNode) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	t0 := time.Date(2026, 11, 28, 8, 0, 0, 0, time.UTC)
	hub, site = &syncNode{}, &syncNode{}
	hub.at(t0)
	site.at(t0)
	hub.s = openSyncStore(t, filepath.Join(dir, "hub.db"), 1, hub.clock())
	t.Cleanup(func() { hub.s.Close() })
	hub.exec(t, seedOrg+`INSERT INTO organisations (id, name, owned_by, created_at) VALUES (20, 'Foreign', 1, `+docTS+`)`)
	newSyncDoc(t, hub.s, 500, 10, 5)
	newSyncDoc(t, hub.s, 600, 20, 2)
	commitDoc(t, hub.s, 601, setText(1, "Foreign secret clause"))
	clonePath := filepath.Join(dir, "site.db")
	if _, err := hub.s.SyncWriteClone(ctx, clonePath, []int64{10}, 2); err != nil {
		t.Fatal(err)
	}
	site.s = openSyncStore(t, clonePath, 2, site.clock())
	t.Cleanup(func() { site.s.Close() })
	if err := site.s.SyncFinishClone(ctx, []int64{10}); err != nil {
		t.Fatal(err)
	}
	return hub, site
}

func branchHead(t *testing.T, s *Store, branch int64) int64 {
	t.Helper()
	var id int64
	if err := s.Reader.QueryRow(`SELECT revision_id FROM document_branches WHERE id = ?`, branch).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

// TestSyncDocumentFastForward: a clone holds its organisation's document
// content (and none of the other's); an edit made on one side only moves
// the other's head forward, the content arriving with it, and a second
// exchange sends nothing, entries or objects.
func TestSyncDocumentFastForward(t *testing.T) {
	t.Parallel()
	hub, site := docPair(t)
	orgs := []int64{10}
	if got, want := docText(t, site.s, 501), docText(t, hub.s, 501); !reflect.DeepEqual(got, want) || len(got) != 5 {
		t.Fatalf("the clone's document: %v, want %v", got, want)
	}
	if got := dump(t, site.s, `SELECT count(*) FROM documents WHERE organisation_id = 20`); got[0] != "[0]" {
		t.Fatalf("the foreign document reached the clone: %v", got)
	}
	// The hub takes no change dated ahead of its clock (db.MaxClockSkew):
	// its clock moves with the site's.
	site.at(time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC))
	hub.at(time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC))
	rev := commitDoc(t, site.s, 501, setText(3, "site text"))
	commitDoc(t, site.s, 501, setCell(3, "done"))
	head := branchHead(t, site.s, 501)
	entries, objects := syncDocs(t, site.s, hub.s, orgs)
	if entries == 0 || objects == 0 {
		t.Fatalf("sent %d entries, %d objects", entries, objects)
	}
	if branchHead(t, hub.s, 501) != head || rev == head {
		t.Fatalf("the hub's head %d, want the site's %d", branchHead(t, hub.s, 501), head)
	}
	if got := docText(t, hub.s, 501); got[2] != "3:site text|done" {
		t.Fatalf("the hub reads %v", got)
	}
	if e, o := syncDocs(t, site.s, hub.s, orgs); e != 0 || o != 0 {
		t.Fatalf("a second exchange sent %d entries and %d objects", e, o)
	}
	// The hub's own edit goes the other way; the site fetches only the
	// objects the edit made (a root, the path to one clause, the clause).
	hub.at(time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC))
	commitDoc(t, hub.s, 501, setText(5, "hub text"))
	_, objects = syncDocs(t, hub.s, site.s, orgs)
	if objects == 0 || objects > 6 {
		t.Fatalf("the site fetched %d objects for one clause edit", objects)
	}
	if !reflect.DeepEqual(docText(t, site.s, 501), docText(t, hub.s, 501)) || branchHead(t, site.s, 501) != branchHead(t, hub.s, 501) {
		t.Fatal("the two nodes differ after the fast-forward")
	}
	if got := dump(t, site.s, `SELECT count(*) FROM documents WHERE organisation_id = 20`); got[0] != "[0]" {
		t.Fatalf("the foreign document reached the site: %v", got)
	}
}

// TestSyncDocumentMerges: both sides edit one branch apart. Edits of
// different clauses merge on the hub into a revision with both heads as
// parents, which the site then fast-forwards to; edits of one clause
// conflict: the hub's head stays, the site's is kept on site/2/main with
// an open merge request, and the site goes back to the hub's head.
func TestSyncDocumentMerges(t *testing.T) {
	t.Parallel()
	hub, site := docPair(t)
	orgs := []int64{10}

	hubRev := commitDoc(t, hub.s, 501, setText(1, "hub one"))
	site.at(time.Date(2026, 11, 28, 8, 30, 0, 0, time.UTC))
	siteRev := commitDoc(t, site.s, 501, setCell(2, "site cell"))
	hub.at(time.Date(2026, 11, 28, 8, 30, 0, 0, time.UTC)) // not behind the site's changes (MaxClockSkew)
	syncDocs(t, site.s, hub.s, orgs)
	merged := branchHead(t, hub.s, 501)
	var parents string
	if err := hub.s.Reader.QueryRow(`SELECT parents FROM document_revisions WHERE id = ?`, merged).Scan(&parents); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf(`["%d","%d"]`, hubRev, siteRev); parents != want {
		t.Fatalf("the merge revision's parents %s, want %s", parents, want)
	}
	want := []string{"1:hub one|", "2:clause 2|site cell", "3:clause 3|", "4:clause 4|", "5:clause 5|"}
	if got := docText(t, hub.s, 501); !reflect.DeepEqual(got, want) {
		t.Fatalf("the merge reads %v, want %v", got, want)
	}
	syncDocs(t, hub.s, site.s, orgs)
	if branchHead(t, site.s, 501) != merged || !reflect.DeepEqual(docText(t, site.s, 501), want) {
		t.Fatalf("the site's head %d, want the merge %d", branchHead(t, site.s, 501), merged)
	}

	// A conflict: one clause edited on both sides.
	hub.at(time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC))
	hubRev = commitDoc(t, hub.s, 501, setText(4, "hub four"))
	site.at(time.Date(2026, 11, 28, 9, 30, 0, 0, time.UTC))
	siteRev = commitDoc(t, site.s, 501, setText(4, "site four"))
	hub.at(time.Date(2026, 11, 28, 9, 30, 0, 0, time.UTC))
	syncDocs(t, site.s, hub.s, orgs)
	syncDocs(t, hub.s, site.s, orgs)
	for _, s := range []*Store{hub.s, site.s} {
		if h := branchHead(t, s, 501); h != hubRev {
			t.Fatalf("node %d: head %d, want the hub's %d (never overwritten)", s.NodeID(), h, hubRev)
		}
		got := dump(t, s, `SELECT b.name, b.revision_id = `+fmt.Sprint(siteRev)+`, m.status, m.to_branch_id FROM document_branches b
			JOIN document_merge_requests m ON m.from_branch_id = b.id WHERE b.document_id = 500`)
		if want := []string{"[site/2/main 1 open 501]"}; !reflect.DeepEqual(got, want) {
			t.Fatalf("node %d: site branch and merge request %v, want %v", s.NodeID(), got, want)
		}
	}
	var siteBranch int64
	if err := site.s.Reader.QueryRow(`SELECT id FROM document_branches WHERE name = 'site/2/main'`).Scan(&siteBranch); err != nil {
		t.Fatal(err)
	}
	if got := docText(t, site.s, siteBranch); got[3] != "4:site four|" {
		t.Fatalf("the site's edit on its branch: %v", got)
	}
	if e, o := syncDocs(t, site.s, hub.s, orgs); e != 0 || o != 0 {
		t.Fatalf("not quiet: %d entries, %d objects", e, o)
	}
	if e, _ := syncDocs(t, hub.s, site.s, orgs); e != 0 {
		t.Fatalf("not quiet: %d entries", e)
	}
	for _, q := range []string{`SELECT id, name, revision_id, deleted_at FROM document_branches WHERE organisation_id = 10 ORDER BY id`,
		`SELECT id, number, from_branch_id, to_branch_id, status FROM document_merge_requests ORDER BY id`,
		`SELECT id, hash, parents FROM document_revisions WHERE document_id = 500 ORDER BY id`,
		`SELECT organisation_id, name, last_number FROM organisation_counters WHERE organisation_id = 10 ORDER BY name`} {
		if a, b := dump(t, hub.s, q), dump(t, site.s, q); !reflect.DeepEqual(a, b) {
			t.Errorf("%s: hub %v, site %v", q, a, b)
		}
	}
}

// cuttingSink is a node's view of the hub for pushes: it counts the objects
// put and, once failAfter were put (0: never), the link is cut.
type cuttingSink struct {
	s         *Store
	puts      int
	failAfter int
}

func (c *cuttingSink) SyncObjectsMissing(ctx context.Context, objs []SyncObject) ([]SyncObject, error) {
	return c.s.SyncObjectsMissing(ctx, objs)
}

func (c *cuttingSink) SyncObjectPut(ctx context.Context, o SyncObject, d SyncObjectData) error {
	if c.failAfter > 0 && c.puts >= c.failAfter {
		return errCut
	}
	c.puts++
	return c.s.SyncObjectPut(ctx, o, d)
}

// TestSyncFilesSentOnceAndResumed: files (blobs) a site adds reach the hub
// by hash, each once: a push cut after one file sends only the rest next
// time, and a third sends none; the page naming them is refused until
// they are there. Fetching the other way, a cut after one file resumes
// without fetching it again (it waits in sync_object_staging). Another
// organisation's files never reach the site.
func TestSyncFilesSentOnceAndResumed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	hub, site := docPair(t)
	orgs := []int64{10}
	hashes := make([]string, 3)
	for i := range hashes {
		data := []byte(fmt.Sprintf("site file %d", i))
		h := sha256Hex(data)
		hashes[i] = h
		site.exec(t, `INSERT INTO blobs (hash, content_type, size, data, created_at) VALUES (?, 'application/pdf', ?, ?, `+docTS+`);
INSERT INTO organisation_blobs (organisation_id, hash, refs) VALUES (10, ?, 1)`, h, len(data), data, h)
	}
	vector, err := hub.s.SyncVector(ctx)
	if err != nil {
		t.Fatal(err)
	}
	page, err := site.s.SyncChangesFor(ctx, vector, orgs, 100)
	if err != nil {
		t.Fatal(err)
	}
	objs := SyncPageObjects(page)
	if len(objs) != 3 {
		t.Fatalf("the page names %v", objs)
	}
	if _, err := hub.s.ApplySyncChanges(ctx, page, orgs); !errors.Is(err, ErrSyncRefused) {
		t.Fatalf("a page applied before its files: %v", err)
	}
	cut := &cuttingSink{s: hub.s, failAfter: 1}
	if _, err := SyncSendObjects(ctx, site.s, cut, objs); !errors.Is(err, errCut) {
		t.Fatalf("the cut push: %v", err)
	}
	again := &cuttingSink{s: hub.s}
	if n, err := SyncSendObjects(ctx, site.s, again, objs); err != nil || n != 2 || again.puts != 2 {
		t.Fatalf("the resumed push sent %d (%d puts), %v; want the 2 left", n, again.puts, err)
	}
	third := &cuttingSink{s: hub.s}
	if n, err := SyncSendObjects(ctx, site.s, third, objs); err != nil || n != 0 {
		t.Fatalf("a third push sent %d, %v", n, err)
	}
	if _, err := hub.s.ApplySyncChanges(ctx, page, orgs); err != nil {
		t.Fatal(err)
	}

	// The hub's files the other way, with a cut after the first.
	for i := range 3 {
		data := []byte(fmt.Sprintf("hub file %d", i))
		h := sha256Hex(data)
		hub.exec(t, `INSERT INTO blobs (hash, content_type, size, data, created_at) VALUES (?, 'image/png', ?, ?, `+docTS+`);
INSERT INTO organisation_blobs (organisation_id, hash, refs) VALUES (10, ?, 1)`, h, len(data), data, h)
	}
	secret := []byte("foreign file")
	hub.exec(t, `INSERT INTO blobs (hash, content_type, size, data, created_at) VALUES (?, 'image/png', ?, ?, `+docTS+`);
INSERT INTO organisation_blobs (organisation_id, hash, refs) VALUES (20, ?, 1)`, sha256Hex(secret), len(secret), secret, sha256Hex(secret))
	if vector, err = site.s.SyncVector(ctx); err != nil {
		t.Fatal(err)
	}
	if page, err = hub.s.SyncChangesFor(ctx, vector, orgs, 100); err != nil {
		t.Fatal(err)
	}
	objs = SyncPageObjects(page)
	if len(objs) != 3 {
		t.Fatalf("the hub's page names %v (the site's own files came back, or the foreign one went)", objs)
	}
	src := &countingSource{s: hub.s, failAfter: 1}
	if _, err := site.s.SyncPullObjects(ctx, src, objs); !errors.Is(err, errCut) {
		t.Fatalf("the cut fetch: %v", err)
	}
	src = &countingSource{s: hub.s}
	if n, err := site.s.SyncPullObjects(ctx, src, objs); err != nil || n != 2 || src.n != 2 {
		t.Fatalf("the resumed fetch fetched %d (%d reads), %v; want the 2 left", n, src.n, err)
	}
	if n, err := site.s.SyncPullObjects(ctx, &countingSource{s: hub.s}, objs); err != nil || n != 0 {
		t.Fatalf("a third fetch fetched %d, %v", n, err)
	}
	if _, err := site.s.ApplySyncChanges(ctx, page, orgs); err != nil {
		t.Fatal(err)
	}
	if e, o := syncDocs(t, hub.s, site.s, orgs); e != 0 || o != 0 {
		t.Fatalf("not quiet: %d entries, %d objects", e, o)
	}
	if e, o := syncDocs(t, site.s, hub.s, orgs); e != 0 || o != 0 {
		t.Fatalf("not quiet: %d entries, %d objects", e, o)
	}
	q := `SELECT b.hash, b.content_type, b.size, b.data, b.created_at FROM blobs b JOIN organisation_blobs o ON o.hash = b.hash WHERE o.organisation_id = 10 ORDER BY b.hash`
	if a, b := dump(t, hub.s, q), dump(t, site.s, q); len(a) != 6 || !reflect.DeepEqual(a, b) {
		t.Fatalf("files: hub %v, site %v", a, b)
	}
	if got := dump(t, site.s, `SELECT count(*) FROM blobs WHERE data = 'foreign file' OR CAST(data AS TEXT) = 'foreign file'`); got[0] != "[0]" {
		t.Fatal("the foreign organisation's file reached the site")
	}
	if got := dump(t, site.s, `SELECT count(*) FROM sync_object_staging`); got[0] != "[0]" {
		t.Fatalf("objects left in staging: %v", got)
	}
	// An object whose bytes are not what its hash names is refused.
	forged := hashes[0][:63] + "0"
	if hashes[0][63] == '0' {
		forged = hashes[0][:63] + "1"
	}
	if err := hub.s.SyncObjectPut(ctx, SyncObject{Kind: ObjBlob, Hash: forged},
		SyncObjectData{Data: []byte("site file 0"), ContentType: "application/pdf", CreatedAt: "x"}); !errors.Is(err, ErrSyncRefused) {
		t.Fatalf("bytes that are not the hash's object were stored: %v", err)
	}
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// TestSyncDocumentBranchAndTagNames: the hub and a site each make a branch
// draft and a tag v1 on one document while apart. The exchange goes
// through: both branches and both tags stay, the later of each (by clock:
// the site's branch, the hub's tag) renamed draft-2 / v1-2, each a
// conflict listed on both nodes. A renamed branch's head still follows its
// own branch (the site edits its draft after the rename reached it), each
// tag still names its own revision, and the nodes end equal.
func TestSyncDocumentBranchAndTagNames(t *testing.T) {
	t.Parallel()
	hub, site := docPair(t)
	orgs := []int64{10}
	branch := func(n *syncNode, id int64) {
		n.exec(t, `INSERT INTO document_branches (id, organisation_id, document_id, name, revision_id, created_at, created_by)
			SELECT ?, 10, 500, 'draft', revision_id, `+docTS+`, 1 FROM document_branches WHERE id = 501`, id)
	}
	tag := func(n *syncNode, id, rev int64) {
		n.exec(t, `INSERT INTO document_tags (id, organisation_id, document_id, revision_id, label, created_at, created_by)
			VALUES (?, 10, 500, ?, 'v1', `+docTS+`, 1)`, id, rev)
	}
	// The hub's branch first, the site's later; the site's tag first, the
	// hub's later.
	hub.at(time.Date(2026, 11, 28, 8, 10, 0, 0, time.UTC))
	branch(hub, 700)
	hubDraft := commitDoc(t, hub.s, 700, setText(1, "hub draft"))
	site.at(time.Date(2026, 11, 28, 8, 20, 0, 0, time.UTC))
	branch(site, 800)
	siteDraft := commitDoc(t, site.s, 800, setText(2, "site draft"))
	tag(site, 810, siteDraft)
	hub.at(time.Date(2026, 11, 28, 8, 30, 0, 0, time.UTC))
	tag(hub, 710, hubDraft)

	syncDocs(t, site.s, hub.s, orgs)
	syncDocs(t, hub.s, site.s, orgs)
	// The site goes on on its branch, now draft-2 here too.
	site.at(time.Date(2026, 11, 28, 8, 40, 0, 0, time.UTC))
	siteNext := commitDoc(t, site.s, 800, setText(3, "site draft again"))
	hub.at(time.Date(2026, 11, 28, 8, 40, 0, 0, time.UTC))
	syncDocs(t, site.s, hub.s, orgs)
	syncDocs(t, hub.s, site.s, orgs)

	for _, s := range []*Store{hub.s, site.s} {
		got := dump(t, s, `SELECT id, name, revision_id FROM document_branches WHERE document_id = 500 AND id IN (700, 800) ORDER BY id`)
		if want := []string{fmt.Sprintf("[700 draft %d]", hubDraft), fmt.Sprintf("[800 draft-2 %d]", siteNext)}; !reflect.DeepEqual(got, want) {
			t.Errorf("node %d: branches %v, want %v", s.NodeID(), got, want)
		}
		got = dump(t, s, `SELECT id, label, revision_id FROM document_tags WHERE document_id = 500 ORDER BY id`)
		if want := []string{fmt.Sprintf("[710 v1-2 %d]", hubDraft), fmt.Sprintf("[810 v1 %d]", siteDraft)}; !reflect.DeepEqual(got, want) {
			t.Errorf("node %d: tags %v, want %v", s.NodeID(), got, want)
		}
		got = dump(t, s, `SELECT kind, tbl, col, row_id, other_id, value, renamed_to, settled_at FROM sync_conflicts ORDER BY row_id`)
		if want := []string{"[unique document_tags label 710 810 v1 v1-2 <nil>]", "[unique document_branches name 800 700 draft draft-2 <nil>]"}; !reflect.DeepEqual(got, want) {
			t.Errorf("node %d: conflicts %v, want %v", s.NodeID(), got, want)
		}
		if got := docText(t, s, 800); got[1] != "2:site draft|" || got[2] != "3:site draft again|" || got[0] != "1:clause 1|" {
			t.Errorf("node %d: the site's branch reads %v", s.NodeID(), got)
		}
		if got := docText(t, s, 700); got[0] != "1:hub draft|" || got[1] != "2:clause 2|" {
			t.Errorf("node %d: the hub's branch reads %v", s.NodeID(), got)
		}
	}
	for _, q := range []string{`SELECT * FROM document_branches WHERE organisation_id = 10 ORDER BY id`, `SELECT * FROM document_tags ORDER BY id`,
		`SELECT * FROM sync_conflicts ORDER BY id`, `SELECT id, from_branch_id, to_branch_id FROM document_merge_requests ORDER BY id`} {
		if a, b := dump(t, hub.s, q), dump(t, site.s, q); !reflect.DeepEqual(a, b) {
			t.Errorf("%s: hub %v, site %v", q, a, b)
		}
	}
	if got := dump(t, hub.s, `SELECT count(*) FROM document_merge_requests`); got[0] != "[0]" {
		t.Errorf("two branches of one name made %v merge requests: they are two branches, not one", got)
	}
}

// TestSyncSiteBranchMovedAgain: a second conflict, after the site took the
// hub's head, brings a site head that does not hold the one the first
// conflict kept. The first stays on site/2/main, the second goes on
// site/2/main-2 with a merge request of its own (nothing a site made is
// left in no head), and the site takes the hub's branches and head as
// after the first. Found by the fault run (seed 1795914725053166583):
// the laptop kept its own head on main and the old site branch, both
// sides called the exchange quiet, and the first kept head was in no
// branch on the hub.
func TestSyncSiteBranchMovedAgain(t *testing.T) {
	t.Parallel()
	hub, site := docPair(t)
	orgs := []int64{10}
	var hubRev int64
	var siteRevs []string
	for i, hour := range []int{9, 10} {
		hub.at(time.Date(2026, 11, 28, hour, 0, 0, 0, time.UTC))
		hubRev = commitDoc(t, hub.s, 501, setText(4, fmt.Sprint("hub four ", i)))
		site.at(time.Date(2026, 11, 28, hour, 30, 0, 0, time.UTC))
		siteRevs = append(siteRevs, fmt.Sprint(commitDoc(t, site.s, 501, setText(4, fmt.Sprint("site four ", i)))))
		hub.at(time.Date(2026, 11, 28, hour, 30, 0, 0, time.UTC))
		syncDocs(t, site.s, hub.s, orgs)
		syncDocs(t, hub.s, site.s, orgs)
		want := []string{"[site/2/main " + siteRevs[0] + " open]"}
		if i == 1 {
			want = append(want, "[site/2/main-2 "+siteRevs[1]+" open]")
		}
		for _, s := range []*Store{hub.s, site.s} {
			if h := branchHead(t, s, 501); h != hubRev {
				t.Fatalf("conflict %d, node %d: head %d, want the hub's %d", i, s.NodeID(), h, hubRev)
			}
			got := dump(t, s, `SELECT b.name, b.revision_id, m.status FROM document_branches b
				JOIN document_merge_requests m ON m.from_branch_id = b.id WHERE b.document_id = 500 ORDER BY b.name`)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("conflict %d, node %d: site branches %v, want %v", i, s.NodeID(), got, want)
			}
		}
	}
	if e, _ := syncDocs(t, site.s, hub.s, orgs); e != 0 {
		t.Fatalf("not quiet: %d entries", e)
	}
	syncDocs(t, hub.s, site.s, orgs)
	for _, q := range []string{`SELECT id, name, revision_id, deleted_at FROM document_branches WHERE organisation_id = 10 ORDER BY id`,
		`SELECT id, number, from_branch_id, to_branch_id, status FROM document_merge_requests ORDER BY id`} {
		if a, b := dump(t, hub.s, q), dump(t, site.s, q); !reflect.DeepEqual(a, b) {
			t.Errorf("%s: hub %v, site %v", q, a, b)
		}
	}
}

// TestSyncHeadsJudgedOncePerBranch: a page that moves a branch head many
// times (a site's edits while the hub's head moved too) is merged once,
// on its last head, and reads as judging each move alone did (pages of
// one entry, as every page's heads were judged before): every edit of
// both sides in the head, one merge revision instead of one per move;
// and a fast-forward of many moves ends on the last.
func TestSyncHeadsJudgedOncePerBranch(t *testing.T) {
	t.Parallel()
	orgs := []int64{10}
	var texts [2][]string
	var merges [2]string
	for k, size := range []int{1000, 1} {
		hub, site := docPair(t)
		commitDoc(t, hub.s, 501, setText(1, "hub one"))
		site.at(time.Date(2026, 11, 28, 8, 30, 0, 0, time.UTC))
		for c := int64(2); c <= 5; c++ {
			commitDoc(t, site.s, 501, setText(c, fmt.Sprint("site ", c)))
		}
		hub.at(time.Date(2026, 11, 28, 8, 30, 0, 0, time.UTC))
		syncDocsPaged(t, site.s, hub.s, orgs, size)
		texts[k] = docText(t, hub.s, 501)
		merges[k] = dump(t, hub.s, `SELECT count(*) FROM document_revisions WHERE document_id = 500 AND json_array_length(parents) = 2`)[0]
		// The site takes the hub's judgement (a fast-forward of its own
		// moves, whatever the page size) and reads the same.
		syncDocsPaged(t, hub.s, site.s, orgs, size)
		if !reflect.DeepEqual(docText(t, site.s, 501), texts[k]) || branchHead(t, site.s, 501) != branchHead(t, hub.s, 501) {
			t.Fatalf("pages of %d: the site reads %v, the hub %v", size, docText(t, site.s, 501), texts[k])
		}
		// The hub's many moves the other way: a fast-forward to the last.
		hub.at(time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC))
		for c := int64(1); c <= 3; c++ {
			commitDoc(t, hub.s, 501, setText(c, fmt.Sprint("hub again ", c)))
		}
		syncDocsPaged(t, hub.s, site.s, orgs, size)
		if branchHead(t, site.s, 501) != branchHead(t, hub.s, 501) || !reflect.DeepEqual(docText(t, site.s, 501), docText(t, hub.s, 501)) {
			t.Fatalf("pages of %d: the site's head %d after the hub's moves, want %d", size, branchHead(t, site.s, 501), branchHead(t, hub.s, 501))
		}
	}
	want := []string{"1:hub one|", "2:site 2|", "3:site 3|", "4:site 4|", "5:site 5|"}
	if !reflect.DeepEqual(texts[0], want) || !reflect.DeepEqual(texts[1], want) {
		t.Fatalf("one page reads %v, pages of one entry %v, want %v", texts[0], texts[1], want)
	}
	if merges[0] != "[1]" || merges[1] != "[4]" {
		t.Fatalf("merge revisions: %s in one page, %s in pages of one entry; want one, and one per move", merges[0], merges[1])
	}
}

// batchSource gives objects in batches of at most per, and is cut after
// failAfter batches (0: never); it records what it was asked for.
type batchSource struct {
	s         *Store
	per       int
	calls     int
	failAfter int
	asked     map[string]bool
}

func (b *batchSource) SyncObjectFetch(ctx context.Context, o, _ SyncObject) (SyncObjectData, error) {
	b.asked[o.Hash] = true
	return b.s.SyncObjectGet(ctx, o)
}

func (b *batchSource) SyncObjectsFetch(ctx context.Context, want []SyncObjectItem) (got []SyncObjectItem, absent, large []SyncObject, err error) {
	if b.failAfter > 0 && b.calls >= b.failAfter {
		return nil, nil, nil, errCut
	}
	b.calls++
	for _, it := range want[:min(b.per, len(want))] {
		b.asked[it.Hash] = true
		d, err := b.s.SyncObjectGet(ctx, it.Object())
		if errors.Is(err, ErrSyncObjectAbsent) {
			absent = append(absent, it.Object())
			continue
		}
		if err != nil {
			return nil, nil, nil, err
		}
		got = append(got, SyncObjectItem{Kind: it.Kind, Hash: it.Hash, Data: d.Data, ContentType: d.ContentType, CreatedAt: d.CreatedAt})
	}
	return got, absent, nil, nil
}

// batchSink takes batches into a store, recording their sizes, and is cut
// after failAfter batches (0: never).
type batchSink struct {
	s         *Store
	batches   []int
	failAfter int
}

func (b *batchSink) SyncObjectsMissing(ctx context.Context, objs []SyncObject) ([]SyncObject, error) {
	return b.s.SyncObjectsMissing(ctx, objs)
}

func (b *batchSink) SyncObjectPut(ctx context.Context, o SyncObject, d SyncObjectData) error {
	b.batches = append(b.batches, -1) // one sent alone
	return b.s.SyncObjectPut(ctx, o, d)
}

func (b *batchSink) SyncObjectsPut(ctx context.Context, items []SyncObjectItem) error {
	if b.failAfter > 0 && len(b.batches) >= b.failAfter {
		return errCut
	}
	b.batches = append(b.batches, len(items))
	return b.s.SyncObjectsPut(ctx, items)
}

// TestSyncObjectBatchesResume: batches keep resume working. Pushed, files
// of 900 KB go two a batch (SyncBatchBytes) and a cut after the first
// batch leaves its files at the hub, the next push sends only the rest.
// Fetched, a document's new content comes in batches; a cut after two
// keeps what came in staging, and the next fetch asks for none of it.
func TestSyncObjectBatchesResume(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	hub, site := docPair(t)
	orgs := []int64{10}
	var files []SyncObject
	for i := range 3 {
		data := make([]byte, 900<<10)
		for k := range data {
			data[k] = byte(k*7 + i)
		}
		h := sha256Hex(data)
		files = append(files, SyncObject{Kind: ObjBlob, Hash: h, Org: 10})
		site.exec(t, `INSERT INTO blobs (hash, content_type, size, data, created_at) VALUES (?, 'application/pdf', ?, ?, `+docTS+`);
INSERT INTO organisation_blobs (organisation_id, hash, refs) VALUES (10, ?, 1)`, h, len(data), data, h)
	}
	cut := &batchSink{s: hub.s, failAfter: 1}
	if _, err := SyncSendObjects(ctx, site.s, cut, files); !errors.Is(err, errCut) || fmt.Sprint(cut.batches) != "[2]" {
		t.Fatalf("the cut push: batches %v, %v", cut.batches, err)
	}
	again := &batchSink{s: hub.s}
	if n, err := SyncSendObjects(ctx, site.s, again, files); err != nil || n != 1 || fmt.Sprint(again.batches) != "[1]" {
		t.Fatalf("the resumed push sent %d in batches %v, %v; want the one left", n, again.batches, err)
	}
	if missing, err := hub.s.SyncObjectsMissing(ctx, files); err != nil || len(missing) != 0 {
		t.Fatalf("the hub lacks %v (%v)", missing, err)
	}

	// The hub's edits the other way, fetched in batches of two.
	for c := int64(1); c <= 5; c++ {
		commitDoc(t, hub.s, 501, setText(c, fmt.Sprint("hub edit ", c)))
	}
	vector, err := site.s.SyncVector(ctx)
	if err != nil {
		t.Fatal(err)
	}
	page, err := hub.s.SyncChangesFor(ctx, vector, orgs, 1000)
	if err != nil {
		t.Fatal(err)
	}
	objs := SyncPageObjects(page)
	src := &batchSource{s: hub.s, per: 2, failAfter: 2, asked: map[string]bool{}}
	if _, err := site.s.SyncPullObjects(ctx, src, objs); !errors.Is(err, errCut) {
		t.Fatalf("the cut fetch: %v", err)
	}
	staged := dump(t, site.s, `SELECT hash FROM sync_object_staging`)
	if len(staged) == 0 {
		t.Fatal("nothing kept from the cut fetch")
	}
	src = &batchSource{s: hub.s, per: 2, asked: map[string]bool{}}
	n, err := site.s.SyncPullObjects(ctx, src, objs)
	if err != nil || n == 0 {
		t.Fatalf("the resumed fetch: %d, %v", n, err)
	}
	for _, h := range staged {
		if h = strings.Trim(h, "[]"); len(h) != 64 {
			t.Fatalf("a staged hash %q", h)
		}
		if src.asked[h] {
			t.Fatalf("the resumed fetch asked again for %s, kept from the cut one", h)
		}
	}
	if n != len(src.asked) || src.calls < (n+1)/2 {
		t.Fatalf("fetched %d objects, asked for %d in %d batches", n, len(src.asked), src.calls)
	}
	if _, err := site.s.ApplySyncChanges(ctx, page, orgs); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(docText(t, site.s, 501), docText(t, hub.s, 501)) {
		t.Fatalf("the site reads %v, the hub %v", docText(t, site.s, 501), docText(t, hub.s, 501))
	}
}
