package db

import (
	"container/heap"
	"context"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"workspace/server/docengine"
)

// Documents in sync (docs/sync.md, "Documents and files"). Revision rows
// travel as changes; their content (chunks) as objects (syncobjects.go).
// A branch head is not merged per column: an entry that moves a head is
// applied without it, and headRule decides: fast-forward when the head
// here is an ancestor of the new one, nothing when the new one is an
// ancestor of the head here, and when both moved the hub runs the
// three-way merge of docengine (a clean merge is a new revision with both
// heads as parents; a conflicting one leaves the site's head on a branch
// site/<node>/<branch> with an open merge request). A node other than the
// hub never merges (two judges would make two merge revisions): it keeps
// its head until the hub's answer arrives, which it then takes.

// blobColumns are the columns naming a blob by its hash (with or without a
// foreign key): a page's rows bring their blobs.
var blobColumns = map[string][]string{
	"users":               {"avatar_hash"},
	"organisations":       {"icon_hash", "banner_hash", "logo_hash"},
	"organisation_blobs":  {"hash"},
	"asset_logs":          {"attachment_hash"},
	"induction_revisions": {"file_hash"},
}

// SyncPageObjects lists the objects a page's rows need on the receiver:
// each new revision's content root and each blob a row names. The
// receiver must hold them (SyncPullObjects, SyncSendObjects) before the
// page applies.
func SyncPageObjects(page []SyncEntry) []SyncObject { return pageObjects(page, false) }

// blobRequired: the columns naming a file by a foreign key: their row
// cannot be written without it. A file another column names (an avatar,
// an image, an induction file) the page applies without, when the hub
// no longer has it to give (an image replaced since: SyncPullObjects
// skips a file the hub answers absent).
var blobRequired = map[string]bool{"organisation_blobs.hash": true, "asset_logs.attachment_hash": true}

func pageObjects(page []SyncEntry, required bool) []SyncObject {
	var out []SyncObject
	seen := map[SyncObject]bool{}
	add := func(o SyncObject) {
		if !seen[o] {
			seen[o] = true
			out = append(out, o)
		}
	}
	for _, e := range page {
		// An account snapshot names its avatar, but may be of someone of
		// no paired organisation, whose files the node is not given.
		if e.Cols == nil || e.Op == "d" || e.Op == "s" {
			continue
		}
		bcols := blobColumns[e.Table]
		if e.Table != "document_revisions" && len(bcols) == 0 {
			continue
		}
		cols, err := decodeCols(*e.Cols)
		if err != nil {
			continue // the apply refuses it
		}
		var org int64
		if e.Org != nil {
			org = *e.Org
		}
		if e.Table == "document_revisions" {
			if h, ok := cols["hash"].([]byte); ok && len(h) == 32 {
				add(SyncObject{Kind: ObjRoot, Hash: hex.EncodeToString(h), Org: org})
			}
		}
		for _, c := range bcols {
			if required && !blobRequired[e.Table+"."+c] {
				continue
			}
			if h, ok := cols[c].(string); ok && h != "" {
				if _, ok := docengine.ParseHash(h); ok {
					add(SyncObject{Kind: ObjBlob, Hash: h, Org: org})
				}
			}
		}
	}
	return out
}

// checkPageObjects refuses a page whose objects are not all here: a
// revision is never seen without its content, nor a row without its blob.
func (s *Store) checkPageObjects(ctx context.Context, q *Queries, page []SyncEntry) error {
	for _, o := range pageObjects(page, true) {
		held, err := s.objectHeld(ctx, q, o)
		if err != nil {
			return err
		}
		if !held {
			return refuse("the %s %s the page needs is not here: objects are sent before their page", o.Kind, o.Hash)
		}
	}
	return nil
}

// splitBranchHead takes the head out of an entry that moves the head of a
// branch this node holds: headRule decides it after the rest is applied.
func (s *Store) splitBranchHead(ctx context.Context, tx *sql.Tx, e SyncEntry) (SyncEntry, int64, int64, error) {
	if e.Table != "document_branches" || e.Cols == nil || (e.Op != "u" && e.Op != "i") {
		return e, 0, 0, nil
	}
	key, err := decodeKey(e.Key, 1)
	if err != nil {
		return e, 0, 0, nil // applyEntry refuses it
	}
	id, _ := key[0].(int64)
	cols, err := decodeCols(*e.Cols)
	if err != nil {
		return e, 0, 0, nil
	}
	head, ok := cols["revision_id"].(int64)
	if !ok {
		return e, 0, 0, nil
	}
	var here int64
	err = tx.QueryRowContext(ctx, `SELECT revision_id FROM document_branches WHERE id = ?`, id).Scan(&here)
	if errors.Is(err, sql.ErrNoRows) {
		return e, 0, 0, nil // a new branch: inserted as it comes
	}
	if err != nil {
		return e, 0, 0, err
	}
	delete(cols, "revision_id")
	b := []byte{'{'}
	for c, v := range cols {
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = appendValue(append(appendJSONString(b, c), ':'), v)
	}
	rest := string(append(b, '}'))
	e.Cols = &rest
	return e, id, head, nil
}

type docRev struct {
	id, doc, gen, identity int64
	hash                   []byte
	parents                []int64
	createdBy              int64
}

func readRev(ctx context.Context, q *Queries, id int64) (docRev, error) {
	r, err := q.RevisionGet(ctx, id)
	if err != nil {
		return docRev{}, err
	}
	var ps []ID
	_ = json.Unmarshal([]byte(r.Parents), &ps)
	d := docRev{id: r.ID, doc: r.DocumentID, gen: r.Generation, identity: r.ID, hash: r.Hash, createdBy: r.CreatedBy}
	if r.OriginRevisionID != nil {
		d.identity = *r.OriginRevisionID
	}
	for _, p := range ps {
		d.parents = append(d.parents, int64(p))
	}
	return d, nil
}

type revHeap []docRev

func (h revHeap) Len() int { return len(h) }
func (h revHeap) Less(i, j int) bool {
	if h[i].gen != h[j].gen {
		return h[i].gen > h[j].gen
	}
	return h[i].id < h[j].id
}
func (h revHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *revHeap) Push(x any)   { *h = append(*h, x.(docRev)) }
func (h *revHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// mergeBase is the lowest common ancestor of a and b (newest generation
// first, ties by the smallest id), as server/documentmergerequests.go
// finds it for merge requests; found is false when they share none.
func mergeBase(ctx context.Context, q *Queries, a, b docRev) (docRev, bool, error) {
	if a.identity == b.identity {
		return a, true, nil
	}
	marks := map[int64]uint8{a.identity: 1, b.identity: 2}
	h := &revHeap{a, b}
	heap.Init(h)
	for h.Len() > 0 {
		r := heap.Pop(h).(docRev)
		f := marks[r.identity]
		if f == 3 {
			return r, true, nil
		}
		for _, p := range r.parents {
			pr, err := readRev(ctx, q, p)
			if err != nil {
				return pr, false, err
			}
			old, seen := marks[pr.identity]
			if old|f == old {
				continue
			}
			marks[pr.identity] = old | f
			if !seen {
				heap.Push(h, pr)
			}
		}
	}
	return docRev{}, false, nil
}

// dbChunks is the docengine store over the chunks table, in a transaction.
type dbChunks struct {
	ctx context.Context
	q   *Queries
}

func (c dbChunks) Get(h docengine.Hash) ([]byte, error) {
	b, err := c.q.ChunkGet(c.ctx, h[:])
	if errors.Is(err, sql.ErrNoRows) {
		return nil, docengine.ErrMissing
	}
	return b, err
}

func (c dbChunks) Put(h docengine.Hash, data []byte) (bool, error) {
	n, err := c.q.ChunkPut(c.ctx, ChunkPutParams{Hash: h[:], Data: data})
	return n == 1, err
}

// SiteBranchName is the branch a site's head is kept on when it conflicts
// with the hub's.
func SiteBranchName(node int64, branch string) string {
	return "site/" + strconv.FormatInt(node, 10) + "/" + branch
}

// SyncMergeCheck lists what a merge of document heads breaks that the
// document engine cannot see (formulas that no longer compile, enum cells
// naming a value their column lost: the server's mergeConstraints), so the
// hub never makes a head the API's own merge would refuse. The server sets
// it when it is linked in (db cannot import server); nil checks nothing.
var SyncMergeCheck func(ctx context.Context, q *Queries, st *docengine.Stage, base, ours, theirs, merged docengine.Hash) ([]docengine.Conflict, error)

// auditDocumentSync writes the hub's judgement of a document's heads (a
// merge made, or the site's head kept apart for a person) in the
// organisation's audit chain, and logs it so every node holds it.
func (s *Store) auditDocumentSync(ctx context.Context, tx *sql.Tx, q *Queries, org, document int64, branch, action string) error {
	targets, _ := json.Marshal(map[string]string{"id": strconv.FormatInt(document, 10), "branch": branch})
	id := s.IDs.Next()
	if err := s.AppendAudit(ctx, q, AuditLog{ID: id, Chain: org, OrganisationID: &org, Action: action,
		TargetIds: string(targets), ChangedFields: "[]", CreatedAt: FormatTime(s.clock.now())}); err != nil {
		return err
	}
	return s.logOwnRow(ctx, tx, q, "audit_log", id, &org)
}

// headRule decides the head of branch id after an entry (e) moved it to
// incoming (docs/sync.md, "Documents and files").
func (s *Store) headRule(ctx context.Context, tx *sql.Tx, q *Queries, e SyncEntry, id, incoming int64) error {
	br, err := q.BranchGet(ctx, id)
	if err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		return err
	}
	if br.RevisionID == incoming {
		return nil
	}
	in, err := readRev(ctx, q, incoming)
	if errors.Is(err, sql.ErrNoRows) {
		return refuse("document_branches %d: a head on revision %d this node does not hold", id, incoming)
	}
	if err != nil {
		return err
	}
	here, err := readRev(ctx, q, br.RevisionID)
	if err != nil {
		return err
	}
	base, found, err := mergeBase(ctx, q, here, in)
	if err != nil {
		return err
	}
	move := func(to int64) error {
		_, err := tx.ExecContext(ctx, `UPDATE document_branches SET revision_id = ? WHERE id = ?`, to, id)
		return err
	}
	switch {
	case found && base.identity == here.identity:
		// Only the other side moved: fast-forward. The hub logs the move
		// as its own too: the nodes then meet the hub's heads in the order
		// the hub took them (by its clock), and the last is its head, even
		// when the entry that moved it carries an older clock than a
		// reset the hub logged before (a laptop's clock behind).
		if err := move(incoming); err != nil || !s.IsSyncHub() {
			return err
		}
		return s.logHead(ctx, q, id, incoming, br.OrganisationID)
	case found && base.identity == in.identity:
		return nil // the head here already holds it
	case !s.IsSyncHub() && strings.HasPrefix(br.Name, "site/"):
		// A site branch is the hub's: only its judgement moves one, and a
		// later conflict moves it to a head that need not descend from the
		// one it kept before (the site took the hub's head in between).
		// Keeping the old one here would leave the site's head on main
		// unrecognised as set aside, and the two nodes apart for good.
		return move(incoming)
	case !s.IsSyncHub():
		// Both moved: the hub judges. Until its answer comes the head here
		// stays; its answer is taken when the head here was set aside on a
		// site branch (a conflict the hub kept for a person to settle).
		var n int
		err := tx.QueryRowContext(ctx, `SELECT count(*) FROM document_branches WHERE document_id = ? AND revision_id = ?
			AND deleted_at IS NULL AND name LIKE 'site/%' AND id <> ?`, br.DocumentID, br.RevisionID, id).Scan(&n)
		if err != nil || n == 0 {
			return err
		}
		return move(incoming)
	}
	org := br.OrganisationID
	now := FormatTime(s.clock.now())
	if found {
		st := docengine.NewStage(dbChunks{ctx, q})
		merged, conflicts, err := st.MergeWith(docengine.Hash(base.hash), docengine.Hash(here.hash), docengine.Hash(in.hash),
			docengine.MergeOptions{Strict: br.Strict})
		if err != nil {
			return fmt.Errorf("merge of branch %d: %w", id, err)
		}
		if len(conflicts) == 0 && SyncMergeCheck != nil {
			conflicts, err = SyncMergeCheck(ctx, q, st, docengine.Hash(base.hash), docengine.Hash(here.hash), docengine.Hash(in.hash), merged)
			if err != nil {
				return fmt.Errorf("constraints of the merge of branch %d: %w", id, err)
			}
		}
		if len(conflicts) == 0 {
			n, err := st.Flush(merged)
			if err != nil {
				return err
			}
			if n > 0 {
				if err := q.DocumentStorageAdd(ctx, DocumentStorageAddParams{OrganisationID: org, Bytes: int64(n)}); err != nil {
					return err
				}
				if err := q.OrgStorageAdd(ctx, OrgStorageAddParams{Delta: int64(n), ID: org}); err != nil {
					return err
				}
			}
			parents, _ := json.Marshal([]ID{ID(here.id), ID(in.id)})
			msg := "Merged the changes of site " + strconv.FormatInt(e.Origin, 10) + " on " + br.Name
			m, err := q.RevisionCreate(ctx, RevisionCreateParams{ID: s.IDs.Next(), DocumentID: br.DocumentID, Hash: merged[:],
				ParentID: &here.id, Parents: string(parents), Generation: max(here.gen, in.gen) + 1, Message: &msg,
				CreatedAt: now, CreatedBy: in.createdBy})
			if err != nil {
				return err
			}
			if err := s.logOwnRow(ctx, tx, q, "document_revisions", m.ID, &org); err != nil {
				return err
			}
			if err := move(m.ID); err != nil {
				return err
			}
			if err := s.auditDocumentSync(ctx, tx, q, org, br.DocumentID, br.Name, "SYNC document merged"); err != nil {
				return err
			}
			return s.logHead(ctx, q, id, m.ID, org)
		}
	}
	// A conflict (or no shared history): the head here stays, the site's
	// is kept on its own branch with a merge request a person settles.
	// The site branch moves on only to a head holding the one it keeps: a
	// later conflict after the site took the hub's head in between brings
	// a head apart from it, which goes on a branch of its own
	// (site/<node>/<branch>-2, -3, ...), so no kept head is dropped.
	siteID, err := s.siteBranchFor(ctx, tx, q, br, e.Origin, in, now)
	if err != nil {
		return err
	}
	if _, err := q.MergeRequestOpenBetween(ctx, MergeRequestOpenBetweenParams{FromBranchID: siteID, ToBranchID: id}); errors.Is(err, sql.ErrNoRows) {
		n, err := s.counterNextLogged(ctx, q, org, "merge_requests")
		if err != nil {
			return err
		}
		m, err := q.MergeRequestCreate(ctx, MergeRequestCreateParams{ID: s.IDs.Next(), OrganisationID: org, Number: n,
			DocumentID: br.DocumentID, FromDocumentID: br.DocumentID, FromBranchID: siteID, ToBranchID: id,
			Title:       "Changes made on site " + strconv.FormatInt(e.Origin, 10) + " to " + br.Name,
			Description: "Made on a site office while head office changed the same part of the document: choose what to keep.",
			CreatedAt:   now, CreatedBy: in.createdBy})
		if err != nil {
			return err
		}
		if err := s.logOwnRow(ctx, tx, q, "document_merge_requests", m.ID, &org); err != nil {
			return err
		}
		if err := s.auditDocumentSync(ctx, tx, q, org, br.DocumentID, br.Name, "SYNC document kept apart"); err != nil {
			return err
		}
	} else if err != nil {
		return err
	}
	// Nodes that took the site's head (the site itself) go back to the
	// hub's: this change is later than the one that moved it.
	return s.logHead(ctx, q, id, br.RevisionID, org)
}

// siteBranchFor finds or makes the site branch that keeps the incoming
// head in: the first of site/<node>/<branch>, then -2, -3, ..., whose
// head the incoming one holds (moved to it) or that does not exist yet
// (made on it).
func (s *Store) siteBranchFor(ctx context.Context, tx *sql.Tx, q *Queries, br DocumentBranch, origin int64, in docRev, now string) (int64, error) {
	org := br.OrganisationID
	base := SiteBranchName(origin, br.Name)
	for k := 1; ; k++ {
		name := base
		if k > 1 {
			name = base + "-" + strconv.Itoa(k)
		}
		var siteID, head int64
		err := tx.QueryRowContext(ctx, `SELECT id, revision_id FROM document_branches WHERE document_id = ? AND name = ? AND deleted_at IS NULL`,
			br.DocumentID, name).Scan(&siteID, &head)
		if errors.Is(err, sql.ErrNoRows) {
			b, err := q.BranchCreate(ctx, BranchCreateParams{ID: s.IDs.Next(), OrganisationID: org, DocumentID: br.DocumentID,
				Name: name, RevisionID: in.id, CreatedAt: now, CreatedBy: in.createdBy})
			if err != nil {
				return 0, err
			}
			return b.ID, s.logOwnRow(ctx, tx, q, "document_branches", b.ID, &org)
		}
		if err != nil {
			return 0, err
		}
		if head == in.id {
			return siteID, nil
		}
		kept, err := readRev(ctx, q, head)
		if err != nil {
			return 0, err
		}
		mb, found, err := mergeBase(ctx, q, kept, in)
		if err != nil {
			return 0, err
		}
		if found && mb.identity == kept.identity {
			if _, err := tx.ExecContext(ctx, `UPDATE document_branches SET revision_id = ? WHERE id = ?`, in.id, siteID); err != nil {
				return 0, err
			}
			return siteID, s.logHead(ctx, q, siteID, in.id, org)
		}
	}
}

// logHead logs this node's move of a branch head.
func (s *Store) logHead(ctx context.Context, q *Queries, branch, rev, org int64) error {
	cols := `{"revision_id":` + strconv.FormatInt(rev, 10) + `}`
	return s.logOwn(ctx, q, "document_branches", "["+strconv.FormatInt(branch, 10)+"]", "u", &cols, &org)
}

// counterNextLogged draws the hub's next number of a counter while a page
// is applied (no capture), logging the counter's new value.
func (s *Store) counterNextLogged(ctx context.Context, q *Queries, org int64, name string) (int64, error) {
	n, err := q.CounterNext(ctx, CounterNextParams{OrganisationID: org, Name: name})
	if err != nil {
		return 0, err
	}
	b := appendJSONString([]byte(`{"organisation_id":`+strconv.FormatInt(org, 10)+`,"name":`), name)
	cols := string(b) + `,"last_number":` + strconv.FormatInt(n, 10) + `}`
	key := "[" + strconv.FormatInt(org, 10) + "," + string(appendJSONString(nil, name)) + "]"
	return n, s.logOwn(ctx, q, "organisation_counters", key, "i", &cols, &org)
}

// keepReachableChunks (in a clone being pruned, after the revisions of
// other organisations went): only the chunks a kept revision reaches stay.
// No row names a chunk but a revision's root; the rest is found by walking
// from the roots, each object once.
func keepReachableChunks(ctx context.Context, tx *sql.Tx) error {
	if _, err := tx.ExecContext(ctx, `CREATE TEMP TABLE sync_keep_chunks (hash BLOB PRIMARY KEY) WITHOUT ROWID`); err != nil {
		return err
	}
	var stack []SyncObject
	rows, err := tx.QueryContext(ctx, `SELECT DISTINCT hash FROM document_revisions`)
	if err != nil {
		return err
	}
	for rows.Next() {
		var h []byte
		if err := rows.Scan(&h); err != nil {
			rows.Close()
			return err
		}
		stack = append(stack, SyncObject{Kind: ObjRoot, Hash: hex.EncodeToString(h)})
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for len(stack) > 0 {
		o := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		res, err := tx.ExecContext(ctx, `INSERT INTO sync_keep_chunks(hash) VALUES (?) ON CONFLICT DO NOTHING`, o.chunkHash())
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 || o.Kind == ObjText {
			continue // walked already, or refers to nothing
		}
		var data []byte
		err = tx.QueryRowContext(ctx, `SELECT data FROM document_chunks WHERE hash = ?`, o.chunkHash()).Scan(&data)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return err
		}
		refs, err := o.refs(data)
		if err != nil {
			return err
		}
		stack = append(stack, refs...)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM document_chunks WHERE hash NOT IN (SELECT hash FROM temp.sync_keep_chunks)`); err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `DROP TABLE temp.sync_keep_chunks`)
	return err
}
