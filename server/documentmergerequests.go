package server

import (
	"container/heap"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"workspace/db"
	"workspace/server/docengine"
)

// Merge requests of documents (design documents.md "Rows the spec leaves
// open"; decisions in docs/documents.md): a request to merge one branch
// into another, numbered per organisation inside the write transaction;
// read with `mergeable` and the conflicts of the three-way merge of the
// two heads from their merge base; merged (optionally settling conflicts
// with resolutions) into a revision with two parents, or closed.

const (
	mergeRequestCounter = "merge_requests"
	maxMergeTitle       = 200
	maxResolutions      = 1000
	maxResolutionID     = 200
	mrOpen              = "open"
	mrMerged            = "merged"
	mrClosed            = "closed"
)

type branchNameJSON struct {
	ID        db.ID  `json:"id"`
	Name      string `json:"name"`
	IsDeleted bool   `json:"is_deleted"`
}

type revisionRefJSON struct {
	ID   db.ID  `json:"id"`
	Hash string `json:"hash"`
}

type mergeRequestJSON struct {
	ID             db.ID            `json:"id"`
	OrganisationID db.ID            `json:"organisation_id"`
	DocumentID     db.ID            `json:"document_id"`
	Number         int64            `json:"number"`
	Title          string           `json:"title"`
	Description    string           `json:"description"`
	Status         string           `json:"status"`
	FromDocumentID db.ID            `json:"from_document_id"`
	FromBranchID   db.ID            `json:"from_branch_id"`
	FromBranch     branchNameJSON   `json:"from_branch"`
	ToBranchID     db.ID            `json:"to_branch_id"`
	ToBranch       branchNameJSON   `json:"to_branch"`
	WorkflowID     *db.ID           `json:"workflow_id"`
	User           idJSON           `json:"user"`
	CreatedAt      string           `json:"created_at"`
	UpdatedAt      string           `json:"updated_at"`
	ClosedAt       *string          `json:"closed_at"`
	ClosedBy       *idJSON          `json:"closed_by"`
	MergeRevision  *revisionRefJSON `json:"merge_revision"`
	// Only on a single request (get, create, merge, close): the state of
	// the merge now.
	Mergeable     *bool           `json:"mergeable,omitempty"`
	Reason        *string         `json:"reason,omitempty"`
	MergeBase     *string         `json:"merge_base,omitempty"`
	Conflicts     *[]conflictJSON `json:"conflicts,omitempty"`
	ConflictCount *int            `json:"conflict_count,omitempty"`
}

func mergeRequestAbsent() *Error { return notFound("The document has no such merge request.") }

// renderMergeRequest is the request without the merge state.
func renderMergeRequest(ctx context.Context, q *db.Queries, m db.DocumentMergeRequest) (mergeRequestJSON, error) {
	out := mergeRequestJSON{ID: db.ID(m.ID), OrganisationID: db.ID(m.OrganisationID), DocumentID: db.ID(m.DocumentID),
		Number: m.Number, Title: m.Title, Description: m.Description, Status: m.Status,
		FromDocumentID: db.ID(m.FromDocumentID), FromBranchID: db.ID(m.FromBranchID), ToBranchID: db.ID(m.ToBranchID),
		User: idJSON{db.ID(m.CreatedBy)}, CreatedAt: m.CreatedAt, UpdatedAt: m.UpdatedAt, ClosedAt: m.ClosedAt}
	if m.ClosedBy != nil {
		out.ClosedBy = &idJSON{db.ID(*m.ClosedBy)}
	}
	for _, b := range []struct {
		id  int64
		dst *branchNameJSON
	}{{m.FromBranchID, &out.FromBranch}, {m.ToBranchID, &out.ToBranch}} {
		br, err := q.BranchGet(ctx, b.id)
		if err != nil {
			return out, err
		}
		*b.dst = branchNameJSON{ID: db.ID(br.ID), Name: br.Name, IsDeleted: br.DeletedAt != nil}
	}
	if m.RevisionID != nil {
		r, err := q.RevisionGet(ctx, *m.RevisionID)
		if err != nil {
			return out, err
		}
		out.MergeRevision = &revisionRefJSON{ID: db.ID(r.ID), Hash: hashOf(r.Hash).String()}
	}
	return out, nil
}

// mergeState is the merge of a request's two heads as things stand.
type mergeState struct {
	from, to         db.DocumentBranch
	fromHead, toHead db.DocumentRevision
	base             db.DocumentRevision
	stage            *docengine.Stage
	result           docengine.Hash
	conflicts        []docengine.Conflict
	upToDate         bool   // the source head is already in the target's history
	blocked          string // why it cannot merge at all ("" when it can)
}

// analyseMerge finds the heads and their merge base and merges them (the
// target's head is ours, the source's theirs), honouring the target's
// strict policy and the resolutions given.
func analyseMerge(ctx context.Context, q *db.Queries, m db.DocumentMergeRequest, resolve map[string]docengine.Resolution) (*mergeState, error) {
	st := &mergeState{stage: docengine.NewStage(chunkStore{ctx, q})}
	var err error
	if st.from, err = q.BranchGet(ctx, m.FromBranchID); err != nil {
		return nil, err
	}
	if st.to, err = q.BranchGet(ctx, m.ToBranchID); err != nil {
		return nil, err
	}
	if m.FromDocumentID != m.DocumentID {
		fork, err := q.DocumentGet(ctx, m.FromDocumentID)
		if err != nil {
			return nil, err
		}
		if fork.DeletedAt != nil {
			st.blocked = "The fork " + fork.FormattedNumber + " was deleted."
			return st, nil
		}
	}
	switch {
	case st.from.DeletedAt != nil:
		st.blocked = "The branch " + st.from.Name + " was deleted."
		return st, nil
	case st.to.DeletedAt != nil:
		st.blocked = "The branch " + st.to.Name + " was deleted."
		return st, nil
	}
	if st.fromHead, err = q.RevisionGet(ctx, st.from.RevisionID); err != nil {
		return nil, err
	}
	if st.toHead, err = q.RevisionGet(ctx, st.to.RevisionID); err != nil {
		return nil, err
	}
	base, found, err := mergeBase(ctx, q, st.toHead, st.fromHead)
	if err != nil {
		return nil, err
	}
	if !found {
		st.blocked = "The branches share no history."
		return st, nil
	}
	st.base = base
	if revisionIdentity(base) == revisionIdentity(st.fromHead) {
		st.upToDate = true
		st.result = hashOf(st.toHead.Hash)
		return st, nil
	}
	merged, conflicts, err := st.stage.MergeWith(hashOf(base.Hash), hashOf(st.toHead.Hash), hashOf(st.fromHead.Hash),
		docengine.MergeOptions{Strict: st.to.Strict, Resolve: resolve})
	if err != nil {
		return nil, err
	}
	if len(conflicts) == 0 {
		// expressions still compile, enum cells name values, and (the gate
		// of a merge request only) the clauses the source changed fill
		// their required cells (documentconstraints.go)
		if conflicts, err = mergeConstraints(ctx, q, st.stage, hashOf(base.Hash), hashOf(st.toHead.Hash), hashOf(st.fromHead.Hash), merged); err != nil {
			return nil, err
		}
		required, err := requiredConflicts(ctx, q, st.stage, m.OrganisationID, hashOf(base.Hash), hashOf(st.fromHead.Hash), merged)
		if err != nil {
			return nil, err
		}
		if len(required) > 0 {
			conflicts = append(conflicts, required...)
			sort.Slice(conflicts, func(i, j int) bool { return conflicts[i].ID < conflicts[j].ID })
		}
	}
	st.result, st.conflicts = merged, conflicts
	return st, nil
}

// withState adds the merge state to a rendered request.
func (out *mergeRequestJSON) withState(m db.DocumentMergeRequest, st *mergeState) {
	ok := m.Status == mrOpen && st != nil && st.blocked == "" && len(st.conflicts) == 0
	out.Mergeable = &ok
	none := []conflictJSON{}
	out.Conflicts = &none
	n := 0
	out.ConflictCount = &n
	if st == nil {
		return
	}
	if st.blocked != "" {
		out.Reason = &st.blocked
		return
	}
	b := hashOf(st.base.Hash).String()
	out.MergeBase = &b
	list := conflictsJSON(st.conflicts)
	out.Conflicts = &list
	n = len(st.conflicts)
	if st.upToDate && m.Status == mrOpen {
		reason := "The target already has every revision of the source: merging changes nothing."
		out.Reason = &reason
	}
}

// revisionHeap orders revisions newest generation first, then by id.
type revisionHeap []db.DocumentRevision

func (h revisionHeap) Len() int { return len(h) }
func (h revisionHeap) Less(i, j int) bool {
	if h[i].Generation != h[j].Generation {
		return h[i].Generation > h[j].Generation
	}
	return h[i].ID < h[j].ID
}
func (h revisionHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *revisionHeap) Push(x any)   { *h = append(*h, x.(db.DocumentRevision)) }
func (h *revisionHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

func parentIDs(r db.DocumentRevision) []int64 {
	var ids []db.ID
	_ = json.Unmarshal([]byte(r.Parents), &ids)
	out := make([]int64, len(ids))
	for i, id := range ids {
		out[i] = int64(id)
	}
	return out
}

// mergeBase is the lowest common ancestor of a and b by generation (ties:
// the smallest id). Revisions are visited newest generation first, each
// marked with the heads it is reachable from; as every parent has a lower
// generation than its child, a revision's marks are final when it is
// visited, so the first one reachable from both is the answer. Only the
// history since the branches parted is read. Revisions are told apart by
// identity (revisionIdentity), so a and b may be rows of a fork and of its
// origin: the copies of one revision are one node.
func mergeBase(ctx context.Context, q *db.Queries, a, b db.DocumentRevision) (db.DocumentRevision, bool, error) {
	if revisionIdentity(a) == revisionIdentity(b) {
		return a, true, nil
	}
	marks := map[int64]uint8{revisionIdentity(a): 1, revisionIdentity(b): 2}
	h := &revisionHeap{a, b}
	heap.Init(h)
	for h.Len() > 0 {
		r := heap.Pop(h).(db.DocumentRevision)
		f := marks[revisionIdentity(r)]
		if f == 3 {
			return r, true, nil
		}
		for _, p := range parentIDs(r) {
			pr, err := q.RevisionGet(ctx, p)
			if err != nil {
				return pr, false, err
			}
			id := revisionIdentity(pr)
			old, seen := marks[id]
			if old|f == old {
				continue
			}
			marks[id] = old | f
			if seen {
				continue // queued already; its marks grew
			}
			heap.Push(h, pr)
		}
	}
	return db.DocumentRevision{}, false, nil
}

// mergeRequestByPath reads the {number} request of the document.
func mergeRequestByPath(rq *request, q *db.Queries, d db.Document) (db.DocumentMergeRequest, error) {
	n, err := strconv.ParseInt(rq.params.ByName("number"), 10, 64)
	if err != nil || n < 1 {
		return db.DocumentMergeRequest{}, badRequest("The path parameter number must be a merge request number (an integer from 1).")
	}
	m, err := q.MergeRequestByNumber(rq.ctx, db.MergeRequestByNumberParams{DocumentID: d.ID, Number: n})
	if db.IsNotFound(err) {
		return m, mergeRequestAbsent()
	}
	return m, err
}

type mergeRequestBody struct {
	FromDocumentID *db.ID  `json:"from_document_id"`
	FromBranch     *string `json:"from_branch"`
	ToBranch       *string `json:"to_branch"`
	Title          *string `json:"title"`
	Description    *string `json:"description"`
}

var mergeRequestReadOnly = []string{"id", "organisation_id", "document_id", "number", "status", "from_branch_id",
	"to_branch_id", "workflow_id", "user", "created_at", "updated_at", "closed_at", "closed_by", "merge_revision",
	"mergeable", "conflicts", "conflict_count", "merge_base"}

func (s *Server) mergeRequestCreate(rq *request) error {
	var b mergeRequestBody
	if err := rq.decodeCreate(&b, mergeRequestReadOnly...); err != nil {
		return err
	}
	p := problems{}
	for _, f := range []struct {
		name string
		v    *string
	}{{"from_branch", b.FromBranch}, {"to_branch", b.ToBranch}} {
		if f.v == nil {
			p.add(f.name, "is required (a branch name)")
			continue
		}
		p.length(f.name, *f.v, 1, 256)
	}
	if b.Title != nil {
		*b.Title = strings.TrimSpace(*b.Title)
		p.length("title", *b.Title, 1, maxMergeTitle)
	}
	optText(p, "description", b.Description, maxDescriptionLen)
	if err := p.err(); err != nil {
		return err
	}
	var out mergeRequestJSON
	err := s.store.InTx(rq.ctx, func(q *db.Queries) error {
		d, _, err := contentAccess(rq, q, EditDocuments)
		if err != nil {
			return err
		}
		// the source: a branch of this document, or of a fork of it the
		// caller may read (from_document_id)
		from, fromLabel := d, *b.FromBranch
		if b.FromDocumentID != nil && int64(*b.FromDocumentID) != d.ID {
			fork, fa, err := documentAccess(rq.ctx, q, rq.user.ID, int64(*b.FromDocumentID), fieldError("from_document_id", "names no fork of this document"))
			if err != nil {
				return err
			}
			if fork.OriginID == nil || *fork.OriginID != d.ID || fork.DeletedAt != nil {
				return fieldError("from_document_id", "names no fork of this document")
			}
			if err := fa.RequireDoc(DocView); err != nil {
				return err
			}
			from, fromLabel = fork, *b.FromBranch+" of fork "+fork.FormattedNumber
		}
		var ids [2]int64
		for i, f := range []struct {
			name, v string
			doc     int64
		}{{"from_branch", *b.FromBranch, from.ID}, {"to_branch", *b.ToBranch, d.ID}} {
			br, err := q.BranchByName(rq.ctx, db.BranchByNameParams{DocumentID: f.doc, Name: f.v})
			if db.IsNotFound(err) {
				return fieldError(f.name, "names no branch of its document")
			}
			if err != nil {
				return err
			}
			ids[i] = br.ID
		}
		if ids[0] == ids[1] {
			return fieldError("to_branch", "must be another branch than from_branch")
		}
		if o, err := q.MergeRequestOpenBetween(rq.ctx, db.MergeRequestOpenBetweenParams{FromBranchID: ids[0], ToBranchID: ids[1]}); err == nil {
			return errorf(http.StatusConflict, "The open merge request #%d already merges %s into %s.", o.Number, fromLabel, *b.ToBranch)
		} else if !db.IsNotFound(err) {
			return err
		}
		n, err := counterNext(rq.ctx, q, d.OrganisationID, mergeRequestCounter)
		if err != nil {
			return err
		}
		title := orDefault(b.Title, "Merge "+fromLabel+" into "+*b.ToBranch)
		if utf8.RuneCountInString(title) > maxMergeTitle {
			title = string([]rune(title)[:maxMergeTitle])
		}
		m, err := q.MergeRequestCreate(rq.ctx, db.MergeRequestCreateParams{ID: s.store.IDs.Next(), OrganisationID: d.OrganisationID,
			Number: n, DocumentID: d.ID, FromDocumentID: from.ID, FromBranchID: ids[0], ToBranchID: ids[1], Title: title,
			Description: orDefault(b.Description, ""), CreatedAt: s.nowText(), CreatedBy: rq.user.ID})
		if err != nil {
			return err
		}
		if err := s.notifyMergeRequest(rq.ctx, q, d, m, rq.user.ID); err != nil {
			return err
		}
		return answerMergeRequest(rq.ctx, q, m, &out)
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusCreated, out)
}

// answerMergeRequest renders a request with its merge state.
func answerMergeRequest(ctx context.Context, q *db.Queries, m db.DocumentMergeRequest, out *mergeRequestJSON) error {
	var err error
	if *out, err = renderMergeRequest(ctx, q, m); err != nil {
		return err
	}
	var st *mergeState
	if m.Status == mrOpen {
		if st, err = analyseMerge(ctx, q, m, nil); err != nil {
			return err
		}
	}
	out.withState(m, st)
	return nil
}

var mergeRequestFilter = db.FilterFields{
	"status":         {Column: "status", Kind: db.FieldEnum, Values: []string{mrOpen, mrMerged, mrClosed}},
	"number":         {Column: "number", Kind: db.FieldNumber},
	"title":          {Column: "title", Kind: db.FieldString, CaseInsensitive: true},
	"from_branch_id": {Column: "from_branch_id", Kind: db.FieldID},
	"to_branch_id":   {Column: "to_branch_id", Kind: db.FieldID},
	"created_by":     {Column: "created_by", Kind: db.FieldID},
}

// mergeRequestList pages the document's requests by number (without the
// merge state, which costs a merge each).
func (s *Server) mergeRequestList(rq *request) error {
	return listPage(s, rq, listSpec[mergeRequestJSON]{Fields: mergeRequestFilter,
		Scope: func(_ *sql.Tx, q *db.Queries, _ int64, _ listQuery) (listSQL, error) {
			d, _, err := contentAccess(rq, q, ViewDocuments)
			return listSQL{From: "document_merge_requests", Where: "document_id = ?", Args: []any{d.ID}, OrderBy: "number"}, err
		},
		Rows: byIDs((*db.Queries).MergeRequestListByIDs, eachQ(renderMergeRequest))})
}

func (s *Server) mergeRequestGet(rq *request) error {
	var out mergeRequestJSON
	err := s.store.ReadTx(rq.ctx, func(q *db.Queries) error {
		d, _, err := contentAccess(rq, q, ViewDocuments)
		if err != nil {
			return err
		}
		m, err := mergeRequestByPath(rq, q, d)
		if err != nil {
			return err
		}
		return answerMergeRequest(rq.ctx, q, m, &out)
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

type resolutionBody struct {
	ID    *string `json:"id"`
	Take  *string `json:"take"`
	Value *string `json:"value"`
}

type mergeBody struct {
	Resolutions []resolutionBody `json:"resolutions"`
	Message     *string          `json:"message"`
}

var takes = map[string]docengine.Take{"ours": docengine.TakeOurs, "theirs": docengine.TakeTheirs,
	"base": docengine.TakeBase, "value": docengine.TakeValue}

// check validates the body on its own; the resolutions are checked
// against the conflicts in the transaction.
func (b *mergeBody) check() (map[string]docengine.Resolution, map[string]int, error) {
	p := problems{}
	optText(p, "message", b.Message, maxDescriptionLen)
	if len(b.Resolutions) > maxResolutions {
		p.add("resolutions", fmt.Sprintf("must list at most %d resolutions", maxResolutions))
		return nil, nil, p.err()
	}
	res := map[string]docengine.Resolution{}
	at := map[string]int{}
	for i, r := range b.Resolutions {
		f := func(name string) string { return fmt.Sprintf("resolutions[%d].%s", i, name) }
		switch {
		case r.ID == nil || *r.ID == "":
			p.add(f("id"), "is required (the id of a conflict)")
			continue
		case len(*r.ID) > maxResolutionID:
			p.add(f("id"), fmt.Sprintf("must be at most %d characters", maxResolutionID))
			continue
		}
		if _, dup := at[*r.ID]; dup {
			p.add(f("id"), "resolves a conflict an earlier resolution resolves")
			continue
		}
		take, ok := docengine.Take(""), false
		if r.Take != nil {
			take, ok = takes[*r.Take]
		}
		if !ok {
			p.add(f("take"), "must be ours, theirs, base or value")
			continue
		}
		switch {
		case take == docengine.TakeValue && r.Value == nil:
			p.add(f("value"), "is required when take is value")
			continue
		case take != docengine.TakeValue && r.Value != nil:
			p.add(f("value"), "is only for take value")
			continue
		case r.Value != nil && len(*r.Value) > maxClauseText:
			p.add(f("value"), "must be at most 16 MiB")
			continue
		}
		at[*r.ID] = i
		res[*r.ID] = docengine.Resolution{Take: take, Value: orDefault(r.Value, "")}
	}
	return res, at, p.err()
}

// checkResolutions holds each resolution against the conflict it names:
// it must name one, a constraint is settled by changing a branch, and a
// value fits a text or cell conflict (a cell's value its column's type).
func checkResolutions(ctx context.Context, q *db.Queries, st *mergeState, res map[string]docengine.Resolution, at map[string]int) error {
	byID := map[string]docengine.Conflict{}
	for _, c := range st.conflicts {
		byID[c.ID] = c
	}
	p := problems{}
	for id, r := range res {
		f := func(name string) string { return fmt.Sprintf("resolutions[%d].%s", at[id], name) }
		c, ok := byID[id]
		if !ok {
			p.add(f("id"), "names no conflict of this merge")
			continue
		}
		if c.Kind == docengine.KindConstraint {
			p.add(f("id"), "names a constraint conflict: change one of the branches instead")
			continue
		}
		if r.Take != docengine.TakeValue {
			continue
		}
		switch c.Kind {
		case docengine.KindText:
		case docengine.KindCell, docengine.KindColumnDeleted:
			if len(r.Value) > maxCellValue {
				p.add(f("value"), "must be at most 64 KiB for a cell")
				continue
			}
			col, found, err := conflictColumn(st, c.ColumnID)
			if err != nil {
				return err
			}
			if found {
				if err := checkCell(ctx, q, col, r.Value); err != nil {
					var e *Error
					if errors.As(err, &e) && e.Fields != nil {
						p.add(f("value"), e.Fields["value"])
						continue
					}
					return err
				}
			}
		default:
			p.add(f("take"), "must be ours, theirs or base for a "+c.Kind+" conflict (a value is for text and cells)")
		}
	}
	return p.err()
}

// conflictColumn is the column of a cell conflict as the target has it,
// else as the source has it.
func conflictColumn(st *mergeState, id int64) (docengine.Column, bool, error) {
	for _, h := range []db.DocumentRevision{st.toHead, st.fromHead} {
		r, err := st.stage.Root(hashOf(h.Hash))
		if err != nil {
			return docengine.Column{}, false, err
		}
		for _, c := range r.Columns {
			if c.ID == id {
				return c, true, nil
			}
		}
	}
	return docengine.Column{}, false, nil
}

// mergeRequestMerge merges the source into the target in one write
// transaction: a revision with two parents (the target's head first) on
// the target branch, or 409 with the conflicts left.
func (s *Server) mergeRequestMerge(rq *request) error {
	var b mergeBody
	if err := rq.decode(&b); err != nil {
		return err
	}
	res, at, err := b.check()
	if err != nil {
		return err
	}
	var out mergeRequestJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		d, a, err := contentAccess(rq, q, EditDocuments)
		if err != nil {
			return err
		}
		m, err := mergeRequestByPath(rq, q, d)
		if err != nil {
			return err
		}
		if m.Status != mrOpen {
			return badRequest("The merge request is %s: only an open request merges.", m.Status)
		}
		plain, err := analyseMerge(rq.ctx, q, m, nil)
		if err != nil {
			return err
		}
		if plain.blocked != "" {
			return badRequest("%s", plain.blocked)
		}
		if plain.to.Protected {
			// a protected branch is the organisation's workflow: a share's
			// scope_edit proposes and merges elsewhere, members merge here
			if err := a.Require(EditDocuments); err != nil {
				return err
			}
		}
		if err := checkResolutions(rq.ctx, q, plain, res, at); err != nil {
			return err
		}
		st := plain
		if len(res) > 0 {
			var re *docengine.ResolutionError
			if st, err = analyseMerge(rq.ctx, q, m, res); errors.As(err, &re) {
				return fieldError(fmt.Sprintf("resolutions[%d].take", at[re.ID]), re.Msg)
			} else if err != nil {
				return err
			}
		}
		if len(st.conflicts) > 0 {
			return conflictError(st.toHead, st.conflicts)
		}
		now := s.nowText()
		revID := st.toHead.ID
		if !st.upToDate {
			if err := s.flushCharged(rq.ctx, q, st.stage, st.result, d.OrganisationID); err != nil {
				return err
			}
			if m.FromDocumentID != m.DocumentID {
				// a fork's head joins the origin's history: its revisions
				// are copied in (rows only; the content is shared)
				copied, err := s.copyRevisions(rq.ctx, q, m.FromDocumentID, m.DocumentID, []int64{st.fromHead.ID})
				if err != nil {
					return err
				}
				st.fromHead = copied[st.fromHead.ID]
			}
			parents, _ := json.Marshal([]db.ID{db.ID(st.toHead.ID), db.ID(st.fromHead.ID)})
			msg := orDefault(b.Message, fmt.Sprintf("Merge request #%d: %s", m.Number, m.Title))
			rev, err := q.RevisionCreate(rq.ctx, db.RevisionCreateParams{ID: s.store.IDs.Next(), DocumentID: d.ID, Hash: st.result[:],
				ParentID: &st.toHead.ID, Parents: string(parents), Generation: max(st.toHead.Generation, st.fromHead.Generation) + 1,
				Message: &msg, CreatedAt: now, CreatedBy: rq.user.ID})
			if err != nil {
				return err
			}
			n, err := q.BranchMove(rq.ctx, db.BranchMoveParams{ID: st.to.ID, RevisionID: rev.ID, OldRevisionID: st.toHead.ID})
			if err != nil {
				return err
			}
			if n != 1 {
				return errors.New("branch head moved inside the write transaction")
			}
			revID = rev.ID
		}
		if m, err = q.MergeRequestFinish(rq.ctx, db.MergeRequestFinishParams{ID: m.ID, Status: mrMerged, RevisionID: &revID,
			ClosedAt: &now, ClosedBy: &rq.user.ID}); err != nil {
			return err
		}
		return answerMergeRequest(rq.ctx, q, m, &out)
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

func (s *Server) mergeRequestClose(rq *request) error {
	var out mergeRequestJSON
	err := s.store.InTx(rq.ctx, func(q *db.Queries) error {
		d, _, err := contentAccess(rq, q, EditDocuments)
		if err != nil {
			return err
		}
		m, err := mergeRequestByPath(rq, q, d)
		if err != nil {
			return err
		}
		if m.Status != mrOpen {
			return badRequest("The merge request is %s already.", m.Status)
		}
		now := s.nowText()
		if m, err = q.MergeRequestFinish(rq.ctx, db.MergeRequestFinishParams{ID: m.ID, Status: mrClosed, ClosedAt: &now, ClosedBy: &rq.user.ID}); err != nil {
			return err
		}
		return answerMergeRequest(rq.ctx, q, m, &out)
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}
