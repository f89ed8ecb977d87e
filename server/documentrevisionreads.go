package server

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"unicode"

	"workspace/db"
	"workspace/server/docengine"
)

// Reading document content (revision, tree, sheets, columns, clauses,
// history, diff) and branches. Reads need VIEW_DOCUMENTS; branch changes
// EDIT_DOCUMENTS. A share holder needs scope_view (branch heads),
// scope_revisions (any revision, history, diff) or scope_branch (branches).

// maxTreeClauses bounds the clauses ?tree=true inlines; the tree says how
// many there are, and the clauses endpoint pages the rest.
const maxTreeClauses = 10000

// readContent opens a revision of a live document the caller may view.
func readContent(rq *request, q *db.Queries, h docengine.Hash) (db.Document, db.DocumentRevision, *docengine.Doc, error) {
	return readContentFor(rq, q, h, 0)
}

// readContentFor is readContent that also needs the scope also (0: none).
// Members read any revision with VIEW_DOCUMENTS. A share holder reads the
// head of a live branch with scope_view, and any revision only with
// scope_revisions.
func readContentFor(rq *request, q *db.Queries, h docengine.Hash, also DocScope) (db.Document, db.DocumentRevision, *docengine.Doc, error) {
	d, a, err := docContent(rq, q, DocRevisions, DocView)
	if err != nil {
		return d, db.DocumentRevision{}, nil, err
	}
	if also != 0 {
		if err := a.RequireDoc(also); err != nil {
			return d, db.DocumentRevision{}, nil, err
		}
	}
	rev, err := revisionIn(rq.ctx, q, d.ID, h)
	if err != nil {
		return d, rev, nil, err
	}
	if !a.CanDoc(DocRevisions) {
		head, err := q.RevisionIsBranchHead(rq.ctx, db.RevisionIsBranchHeadParams{DocumentID: d.ID, Hash: h[:]})
		if err != nil {
			return d, rev, nil, err
		}
		if !head {
			return d, rev, nil, a.RequireDoc(DocRevisions)
		}
	}
	doc, err := docengine.NewStage(chunkStore{rq.ctx, q}).Open(h)
	return d, rev, doc, err
}

func sheetsOf(rev db.DocumentRevision, doc *docengine.Doc) []sheetJSON {
	out := make([]sheetJSON, 0, len(doc.R.Sheets))
	for i, sh := range doc.R.Sheets {
		out = append(out, sheetJSON{RevisionID: db.ID(rev.ID), SheetID: db.ID(sh.ID), Name: sh.Name, Order: i})
	}
	return out
}

func columnsOf(rev db.DocumentRevision, doc *docengine.Doc) []columnJSON {
	out := make([]columnJSON, 0, len(doc.R.Columns))
	for i, c := range doc.R.Columns {
		cj := columnJSON{RevisionID: db.ID(rev.ID), ColumnID: db.ID(c.ID), Name: c.Name, Description: c.Description,
			Type: c.Type, DataFormat: c.DataFormat, Formula: c.Formula, ConditionalFormatting: c.ConditionalFormatting, Order: i}
		if c.FieldID != 0 {
			cj.FieldID = optID(&c.FieldID)
		}
		out = append(out, cj)
	}
	return out
}

// clausesOf renders a page of clauses; order is the position within the
// clause's sheet.
func clausesOf(ctx context.Context, q *db.Queries, rev db.DocumentRevision, doc *docengine.Doc, sheet int64, skip, top int) ([]clauseJSON, int, error) {
	rows, total, err := doc.Clauses(sheet, skip, top)
	if err != nil {
		return nil, 0, err
	}
	enums, err := enumTexts(ctx, q, doc.R.Columns)
	if err != nil {
		return nil, 0, err
	}
	plan, _ := planCalc(doc.R.Columns) // a stored revision's plan compiles (checked on save)
	// positions within each sheet: the rank of the first row's key
	first := map[int64]int{}
	out := make([]clauseJSON, 0, len(rows))
	for _, r := range rows {
		pos, ok := first[r.Sheet]
		if !ok {
			n, err := doc.SheetPosition(r.ClausePos)
			if err != nil {
				return nil, 0, err
			}
			pos = n
		}
		first[r.Sheet] = pos + 1
		cj := clauseJSON{RevisionID: db.ID(rev.ID), ClauseID: db.ID(r.ID), SheetID: db.ID(r.Sheet), Order: pos, Text: r.Text,
			Fields: cellsOf(plan, doc.R.Columns, r.Cells, enums)}
		out = append(out, cj)
	}
	return out, total, nil
}

func (s *Server) revisionGet(rq *request) error {
	h, err := rq.pathHash("hash")
	if err != nil {
		return err
	}
	tree, err := rq.queryBool("tree", false)
	if err != nil {
		return err
	}
	var out docRevisionJSON
	err = s.store.ReadTx(rq.ctx, func(q *db.Queries) error {
		_, rev, doc, err := readContent(rq, q, h)
		if err != nil {
			return err
		}
		out, err = revisionShown(rq.ctx, q, rev, doc, tree)
		return err
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

// revisionShown is a revision as GET /documents/{id}/revisions/{hash} shows
// it: its release label, and its tree when asked for. PATCH of the revision
// compares the read-only fields a client echoes with this very object.
func revisionShown(ctx context.Context, q *db.Queries, rev db.DocumentRevision, doc *docengine.Doc, tree bool) (docRevisionJSON, error) {
	out := toDocRevision(rev, &doc.R)
	var err error
	if out.Revision, err = revisionLabel(ctx, q, rev.ID); err != nil {
		return out, err
	}
	if tree {
		t := &treeJSON{Sheets: sheetsOf(rev, doc), Columns: columnsOf(rev, doc)}
		if t.Clauses, t.ClauseCount, err = clausesOf(ctx, q, rev, doc, 0, 0, maxTreeClauses); err != nil {
			return out, err
		}
		out.Tree = t
	}
	return out, nil
}

func (s *Server) sheetList(rq *request) error {
	h, err := rq.pathHash("hash")
	if err != nil {
		return err
	}
	var out []sheetJSON
	err = s.store.ReadTx(rq.ctx, func(q *db.Queries) error {
		_, rev, doc, err := readContent(rq, q, h)
		if err == nil {
			out = sheetsOf(rev, doc)
		}
		return err
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

func (s *Server) columnList(rq *request) error {
	h, err := rq.pathHash("hash")
	if err != nil {
		return err
	}
	var out []columnJSON
	err = s.store.ReadTx(rq.ctx, func(q *db.Queries) error {
		_, rev, doc, err := readContent(rq, q, h)
		if err == nil {
			out = columnsOf(rev, doc)
		}
		return err
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

// clauseList pages clauses in document order (?sheet_id= for one sheet).
func (s *Server) clauseList(rq *request) error {
	h, err := rq.pathHash("hash")
	if err != nil {
		return err
	}
	lq, err := parseListQuery(rq.r, nil)
	if err != nil {
		return err
	}
	var sheet int64
	if v := rq.r.URL.Query().Get("sheet_id"); v != "" {
		id, ok := db.ParseID(v)
		if !ok {
			return fieldError("sheet_id", "must be a snowflake id")
		}
		sheet = int64(id)
	}
	var out []clauseJSON
	total := 0
	err = s.store.ReadTx(rq.ctx, func(q *db.Queries) error {
		_, rev, doc, err := readContent(rq, q, h)
		if err != nil {
			return err
		}
		out, total, err = clausesOf(rq.ctx, q, rev, doc, sheet, lq.Skip, lq.Top)
		return engineError(err)
	})
	if err != nil {
		return err
	}
	setTotalCount(rq.w, int64(total))
	return rq.json(http.StatusOK, out)
}

// revisionList is the first-parent history of a branch, newest first.
func (s *Server) revisionList(rq *request) error {
	lq, err := parseListQuery(rq.r, nil)
	if err != nil {
		return err
	}
	out := []docRevisionJSON{}
	var total int64
	err = s.store.ReadTx(rq.ctx, func(q *db.Queries) error {
		d, _, err := docContent(rq, q, DocRevisions)
		if err != nil {
			return err
		}
		br, err := branchOf(rq, q, d)
		if err != nil {
			return err
		}
		r, err := q.RevisionGet(rq.ctx, br.RevisionID)
		if err != nil {
			return err
		}
		total = r.Generation + 1
		st := docengine.NewStage(chunkStore{rq.ctx, q})
		for i := 0; i < lq.Skip+lq.Top; i++ {
			if i >= lq.Skip {
				root, err := st.Root(hashOf(r.Hash))
				if err != nil {
					return err
				}
				rj := toDocRevision(r, root)
				if rj.Revision, err = revisionLabel(rq.ctx, q, r.ID); err != nil {
					return err
				}
				out = append(out, rj)
			}
			if r.ParentID == nil {
				total = int64(i + 1)
				break
			}
			if r, err = q.RevisionGet(rq.ctx, *r.ParentID); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	setTotalCount(rq.w, total)
	return rq.json(http.StatusOK, out)
}

func (s *Server) revisionDiff(rq *request) error {
	a, err := rq.pathHash("hash")
	if err != nil {
		return err
	}
	b, err := rq.pathHash("other")
	if err != nil {
		return err
	}
	var out []docengine.Change
	err = s.store.ReadTx(rq.ctx, func(q *db.Queries) error {
		d, _, doc, err := readContentFor(rq, q, a, DocRevisions)
		if err != nil {
			return err
		}
		if _, err := revisionIn(rq.ctx, q, d.ID, b); err != nil {
			return err
		}
		out, err = doc.S.DiffRevisions(a, b)
		return err
	})
	if err != nil {
		return err
	}
	if out == nil {
		out = []docengine.Change{}
	}
	return rq.json(http.StatusOK, map[string]any{"from": a.String(), "to": b.String(), "changes": out})
}

// Branches.

func checkBranchName(p problems, name *string, max int) {
	if name == nil {
		return
	}
	*name = strings.TrimSpace(*name)
	p.length("name", *name, 2, max)
	if strings.ContainsAny(*name, "/\\?#%") || strings.IndexFunc(*name, unicode.IsControl) >= 0 {
		p.add("name", "must not contain / \\ ? # % or control characters")
	}
}

type branchBody struct {
	Name      *string `json:"name"`
	Revision  *string `json:"revision"`
	Protected *bool   `json:"protected"`
	Strict    *bool   `json:"strict"`
}

var branchReadOnly = []string{"id", "organisation_id", "revision_id", "commit_count", "created_at", "document_id",
	"document", "created_by", "is_deleted", "deleted_at", "deleted_by"}

func (s *Server) branchList(rq *request) error {
	out := []branchJSON{}
	err := s.store.ReadTx(rq.ctx, func(q *db.Queries) error {
		d, _, err := contentAccess(rq, q, ViewDocuments)
		if err != nil {
			return err
		}
		rows, err := q.BranchList(rq.ctx, d.ID)
		if err != nil {
			return err
		}
		for _, b := range rows {
			bj, err := renderBranch(rq.ctx, q, b)
			if err != nil {
				return err
			}
			out = append(out, bj)
		}
		return nil
	})
	if err != nil {
		return err
	}
	setTotalCount(rq.w, int64(len(out)))
	return rq.json(http.StatusOK, out)
}

func (s *Server) branchCreate(rq *request) error {
	var b branchBody
	if err := rq.decodeCreate(&b, branchReadOnly...); err != nil {
		return err
	}
	p := problems{}
	if b.Name == nil {
		p.add("name", "is required")
	}
	checkBranchName(p, b.Name, maxBranchName)
	var from docengine.Hash
	if b.Revision != nil {
		h, ok := docengine.ParseHash(strings.ToLower(*b.Revision))
		if !ok {
			p.add("revision", "must be a revision hash (64 hex digits)")
		}
		from = h
	}
	if err := p.err(); err != nil {
		return err
	}
	var out branchJSON
	err := s.store.InTx(rq.ctx, func(q *db.Queries) error {
		d, _, err := docContent(rq, q, DocBranch)
		if err != nil {
			return err
		}
		var rev db.DocumentRevision
		if b.Revision != nil {
			if rev, err = revisionIn(rq.ctx, q, d.ID, from); err != nil {
				return err
			}
		} else {
			def, err := q.BranchGet(rq.ctx, deref(d.DefaultBranchID))
			if err != nil {
				return err
			}
			rev.ID = def.RevisionID
		}
		if _, err := q.BranchByName(rq.ctx, db.BranchByNameParams{DocumentID: d.ID, Name: *b.Name}); err == nil {
			return errorf(http.StatusConflict, "The document has a branch of that name.")
		} else if !db.IsNotFound(err) {
			return err
		}
		br, err := q.BranchCreate(rq.ctx, db.BranchCreateParams{ID: s.store.IDs.Next(), OrganisationID: d.OrganisationID,
			DocumentID: d.ID, Name: *b.Name, RevisionID: rev.ID, CreatedAt: s.nowText(), CreatedBy: rq.user.ID})
		if err != nil {
			return err
		}
		out, err = renderBranch(rq.ctx, q, br)
		return err
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusCreated, out)
}

// branchByPath reads the {name} branch of the document.
func branchByPath(rq *request, q *db.Queries, d db.Document) (db.DocumentBranch, error) {
	// rewriteBranchPath routed the name escaped (it may hold slashes).
	name, err := url.PathUnescape(rq.params.ByName("name"))
	if err != nil {
		return db.DocumentBranch{}, branchAbsent()
	}
	b, err := q.BranchByName(rq.ctx, db.BranchByNameParams{DocumentID: d.ID, Name: name})
	if db.IsNotFound(err) {
		return b, branchAbsent()
	}
	return b, err
}

// branchGet answers the latest revision of the branch, with the branch.
func (s *Server) branchGet(rq *request) error {
	var out struct {
		docRevisionJSON
		Branch branchJSON `json:"branch"`
	}
	err := s.store.ReadTx(rq.ctx, func(q *db.Queries) error {
		d, _, err := contentAccess(rq, q, ViewDocuments)
		if err != nil {
			return err
		}
		b, err := branchByPath(rq, q, d)
		if err != nil {
			return err
		}
		if out.Branch, err = renderBranch(rq.ctx, q, b); err != nil {
			return err
		}
		rev, err := q.RevisionGet(rq.ctx, b.RevisionID)
		if err != nil {
			return err
		}
		root, err := docengine.NewStage(chunkStore{rq.ctx, q}).Root(hashOf(rev.Hash))
		if err != nil {
			return err
		}
		out.docRevisionJSON = toDocRevision(rev, root)
		out.Revision, err = revisionLabel(rq.ctx, q, rev.ID)
		return err
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

func (s *Server) branchPatch(rq *request) error {
	var b branchBody
	ro, err := rq.decodePatch(&b, append(branchReadOnly, "revision")...)
	if err != nil {
		return err
	}
	p := problems{}
	checkBranchName(p, b.Name, 256)
	if err := p.err(); err != nil {
		return err
	}
	var out branchJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		d, a, err := docContent(rq, q, DocBranch)
		if err != nil {
			return err
		}
		br, err := branchByPath(rq, q, d)
		if err != nil {
			return err
		}
		cur, err := renderBranch(rq.ctx, q, br)
		if err != nil {
			return err
		}
		if err := ro.check(cur); err != nil {
			return err
		}
		if (b.Protected != nil && *b.Protected != br.Protected) || (b.Strict != nil && *b.Strict != br.Strict) {
			// protection and the merge policy guard the organisation's
			// workflow: members only
			if err := a.Require(EditDocuments); err != nil {
				return err
			}
		}
		if b.Name != nil && *b.Name != br.Name {
			if _, err := q.BranchByName(rq.ctx, db.BranchByNameParams{DocumentID: d.ID, Name: *b.Name}); err == nil {
				return errorf(http.StatusConflict, "The document has a branch of that name.")
			} else if !db.IsNotFound(err) {
				return err
			}
		}
		setIf(&br.Name, b.Name)
		setIf(&br.Protected, b.Protected)
		setIf(&br.Strict, b.Strict)
		if br, err = q.BranchUpdate(rq.ctx, db.BranchUpdateParams{ID: br.ID, Name: br.Name, Protected: br.Protected, Strict: br.Strict}); err != nil {
			return err
		}
		out, err = renderBranch(rq.ctx, q, br)
		return err
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

func (s *Server) branchDelete(rq *request) error {
	err := s.store.InTx(rq.ctx, func(q *db.Queries) error {
		d, _, err := docContent(rq, q, DocBranch)
		if err != nil {
			return err
		}
		br, err := branchByPath(rq, q, d)
		if err != nil {
			return err
		}
		if d.DefaultBranchID != nil && *d.DefaultBranchID == br.ID {
			return badRequest("The default branch cannot be deleted.")
		}
		if br.Protected {
			return forbidden("The branch %s is protected from deletion.", br.Name)
		}
		now := s.nowText()
		return q.BranchDelete(rq.ctx, db.BranchDeleteParams{ID: br.ID, DeletedAt: &now, DeletedBy: &rq.user.ID})
	})
	if err != nil {
		return err
	}
	return rq.noContent()
}

// cellsOf renders a clause's cells in column order with calculated values
// and background colours; an enum cell's formatted_value is its value's
// text (enums: enumTexts), so clients need not look the id up.
func cellsOf(plan *calcPlan, cols []docengine.Column, cells map[int64]string, enums map[string]string) []cellJSON {
	var values, colours map[int64]string
	if plan != nil {
		values, colours = plan.row(cells)
	}
	out := []cellJSON{}
	for _, c := range cols {
		v, ok := cells[c.ID]
		if c.Type == "formula" {
			v, ok = values[c.ID], values[c.ID] != ""
		}
		colour, coloured := colours[c.ID]
		if !ok && !coloured {
			continue
		}
		cj := cellJSON{ColumnID: db.ID(c.ID), Value: v}
		if c.Type == "number" || c.Type == "formula" {
			if fv, ok := formatData(c.DataFormat, v); ok {
				cj.FormattedValue = &fv
			}
		}
		if t, ok := enums[v]; ok && c.Type == "enum" {
			cj.FormattedValue = &t
		}
		if coloured {
			cj.BackgroundColour = &colour
		}
		out = append(out, cj)
	}
	return out
}
