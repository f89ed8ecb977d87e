package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"workspace/db"
	"workspace/server/docengine"
)

// Document content: every change of sheets, columns, clauses and cells
// goes through one change flow (documents.md "A change"): read the branch
// head, apply the operation to the base revision, merge onto the head when
// the base is older, answer 409 with the conflicts, answer the head when
// nothing changed, else store the new objects and move the branch, all in
// one write transaction. Reads (revision, tree, clauses, columns, history,
// diff, branches) come from the engine without replay.

const (
	maxSheetName     = 20
	maxColumnName    = 20
	maxBranchName    = 50
	maxClauseText    = 16 << 20
	maxCellValue     = 64 << 10
	maxConflictsBody = 100
	// sheets and columns live in the content root, rewritten by every
	// change: bounded so a change stays small (docs/documents.md)
	maxSheets    = 200
	maxColumns   = 500
	conflictCode = 4090
)

var columnTypes = map[string]bool{"text": true, "number": true, "boolean": true, "date": true, "enum": true, "formula": true}

type docRevisionJSON struct {
	ID                 db.ID     `json:"id"`
	Hash               string    `json:"hash"`
	DocumentID         db.ID     `json:"document_id"`
	User               idJSON    `json:"user"`
	CreatedBy          idJSON    `json:"created_by"`
	CreatedAt          string    `json:"created_at"`
	Parents            []string  `json:"parents"`
	Message            *string   `json:"message"`
	Signed             bool      `json:"signed"`
	TOTPToken          *string   `json:"totp_token"`
	Revision           string    `json:"revision"`
	Title              string    `json:"title"`
	ClausePrefixFormat *string   `json:"clause_prefix_format"`
	ClausePrefixID     *db.ID    `json:"clause_prefix_id"`
	ClauseDigits       *int64    `json:"clause_digits"`
	TemplateName       *string   `json:"template_name"`
	TemplateHash       *string   `json:"template_hash"`
	TemplateNameXLSX   *string   `json:"template_name_xlsx"`
	TemplateHashXLSX   *string   `json:"template_hash_xlsx"`
	Tree               *treeJSON `json:"tree,omitempty"`
}

// revisionPartial is the partial revision (spec: id, hash, user, created_at).
type revisionPartial struct {
	ID        db.ID  `json:"id"`
	Hash      string `json:"hash"`
	User      idJSON `json:"user"`
	CreatedAt string `json:"created_at"`
}

type branchJSON struct {
	ID             db.ID           `json:"id"`
	OrganisationID db.ID           `json:"organisation_id"`
	RevisionID     db.ID           `json:"revision_id"`
	Revision       revisionPartial `json:"revision"`
	Name           string          `json:"name"`
	Protected      bool            `json:"protected"`
	Strict         bool            `json:"strict"`
	CommitCount    int64           `json:"commit_count"`
	CreatedAt      string          `json:"created_at"`
	DocumentID     db.ID           `json:"document_id"`
	Document       idJSON          `json:"document"`
	CreatedBy      idJSON          `json:"created_by"`
	IsDeleted      bool            `json:"is_deleted"`
	DeletedAt      *string         `json:"deleted_at"`
	DeletedBy      *idJSON         `json:"deleted_by"`
}

type sheetJSON struct {
	RevisionID db.ID  `json:"revision_id"`
	SheetID    db.ID  `json:"sheet_id"`
	Name       string `json:"name"`
	Order      int    `json:"order"`
}

type columnJSON struct {
	RevisionID            db.ID  `json:"revision_id"`
	ColumnID              db.ID  `json:"column_id"`
	Name                  string `json:"name"`
	Description           string `json:"description"`
	Type                  string `json:"type"`
	DataFormat            int64  `json:"data_format"`
	Formula               string `json:"formula"`
	ConditionalFormatting string `json:"conditional_formatting"`
	FieldID               *db.ID `json:"field_id"`
	Order                 int    `json:"order"`
}

// cellJSON is a cell as read; formatted_value is the value in the
// column's data format (when it has one and the value is a number).
type cellJSON struct {
	ColumnID         db.ID   `json:"column_id"`
	Value            string  `json:"value"`
	FormattedValue   *string `json:"formatted_value,omitempty"`
	BackgroundColour *string `json:"background_colour"`
}

type clauseJSON struct {
	RevisionID db.ID      `json:"revision_id"`
	ClauseID   db.ID      `json:"clause_id"`
	SheetID    db.ID      `json:"sheet_id"`
	Order      int        `json:"order"`
	Text       string     `json:"text"`
	Fields     []cellJSON `json:"fields"`
}

type treeJSON struct {
	Sheets      []sheetJSON  `json:"sheets"`
	Columns     []columnJSON `json:"columns"`
	Clauses     []clauseJSON `json:"clauses"`
	ClauseCount int          `json:"clause_count"`
}

func hashOf(b []byte) docengine.Hash {
	var h docengine.Hash
	copy(h[:], b)
	return h
}

func revisionParents(r db.DocumentRevision) []string {
	var ids []db.ID
	_ = json.Unmarshal([]byte(r.Parents), &ids)
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		out = append(out, id.String())
	}
	return out
}

func nilIfEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func toDocRevision(r db.DocumentRevision, root *docengine.Root) docRevisionJSON {
	out := docRevisionJSON{ID: db.ID(r.ID), Hash: hashOf(r.Hash).String(), DocumentID: db.ID(r.DocumentID),
		User: idJSON{db.ID(r.CreatedBy)}, CreatedBy: idJSON{db.ID(r.CreatedBy)}, CreatedAt: r.CreatedAt,
		Parents: revisionParents(r), Message: r.Message}
	if root != nil {
		m := root.Meta
		out.Title = m.Title
		out.ClausePrefixFormat = nilIfEmpty(m.ClausePrefixFormat)
		if m.ClausePrefixID != 0 {
			out.ClausePrefixID = optID(&m.ClausePrefixID)
		}
		if m.ClauseDigits != 0 {
			out.ClauseDigits = &m.ClauseDigits
		}
		out.TemplateName, out.TemplateHash = nilIfEmpty(m.TemplateName), nilIfEmpty(m.TemplateHash)
		out.TemplateNameXLSX, out.TemplateHashXLSX = nilIfEmpty(m.TemplateNameXLSX), nilIfEmpty(m.TemplateHashXLSX)
	}
	return out
}

func toDocRevisionPartial(r db.DocumentRevision) revisionPartial {
	return revisionPartial{ID: db.ID(r.ID), Hash: hashOf(r.Hash).String(), User: idJSON{db.ID(r.CreatedBy)}, CreatedAt: r.CreatedAt}
}

func renderBranch(ctx context.Context, q *db.Queries, b db.DocumentBranch) (branchJSON, error) {
	r, err := q.RevisionGet(ctx, b.RevisionID)
	if err != nil {
		return branchJSON{}, err
	}
	out := branchJSON{ID: db.ID(b.ID), OrganisationID: db.ID(b.OrganisationID), RevisionID: db.ID(b.RevisionID),
		Revision: toDocRevisionPartial(r), Name: b.Name, Protected: b.Protected, Strict: b.Strict, CommitCount: r.Generation + 1,
		CreatedAt: b.CreatedAt, DocumentID: db.ID(b.DocumentID), Document: idJSON{db.ID(b.DocumentID)},
		CreatedBy: idJSON{db.ID(b.CreatedBy)}, IsDeleted: b.DeletedAt != nil, DeletedAt: b.DeletedAt}
	if b.DeletedBy != nil {
		out.DeletedBy = &idJSON{db.ID(*b.DeletedBy)}
	}
	return out, nil
}

func revisionAbsent() *Error { return notFound("The document has no such revision.") }

func branchAbsent() *Error { return notFound("The document has no such branch.") }

// contentAccess loads a live document and the caller's access for a
// content request. VIEW_DOCUMENTS and EDIT_DOCUMENTS are the view and edit
// scopes (a share holder passes with those); any other permission is for
// members only.
func contentAccess(rq *request, q *db.Queries, perm Permission) (db.Document, Access, error) {
	switch perm {
	case ViewDocuments:
		return docContent(rq, q, DocView)
	case EditDocuments:
		return docContent(rq, q, DocEdit)
	}
	return docContentCheck(rq, q, func(a Access) error { return a.Require(perm) })
}

// docContent loads a live document for a content request that needs one of
// the scopes (members: the scope's permission; Access.RequireDoc).
func docContent(rq *request, q *db.Queries, anyOf ...DocScope) (db.Document, Access, error) {
	return docContentCheck(rq, q, func(a Access) error {
		var err error
		for _, s := range anyOf {
			if err = a.RequireDoc(s); err == nil {
				return nil
			}
		}
		return err
	})
}

// docContentCheck: access is checked before the deletion, so an outsider
// learns nothing of a deleted document; a deleted one has no content.
func docContentCheck(rq *request, q *db.Queries, check func(Access) error) (db.Document, Access, error) {
	id, err := rq.pathID("id")
	if err != nil {
		return db.Document{}, Access{}, err
	}
	d, a, err := documentAccess(rq.ctx, q, rq.user.ID, id, documentAbsent(http.StatusNotFound))
	if err != nil {
		return d, a, err
	}
	if err := check(a); err != nil {
		return d, a, err
	}
	if d.DeletedAt != nil {
		return d, a, documentAbsent(http.StatusNotFound)
	}
	return d, a, nil
}

// pathHash reads a revision hash from the path.
func (rq *request) pathHash(name string) (docengine.Hash, error) {
	h, ok := docengine.ParseHash(strings.ToLower(rq.params.ByName(name)))
	if !ok {
		return h, badRequest("The path parameter %s must be a revision hash (64 hex digits).", name)
	}
	return h, nil
}

// revisionIn finds a revision by hash within its own document only.
func revisionIn(ctx context.Context, q *db.Queries, docID int64, h docengine.Hash) (db.DocumentRevision, error) {
	r, err := q.RevisionByHash(ctx, db.RevisionByHashParams{DocumentID: docID, Hash: h[:]})
	if db.IsNotFound(err) {
		return r, revisionAbsent()
	}
	return r, err
}

// branchOf is the ?branch= branch, or the default branch.
func branchOf(rq *request, q *db.Queries, d db.Document) (db.DocumentBranch, error) {
	name := rq.r.URL.Query().Get("branch")
	if name == "" {
		if d.DefaultBranchID == nil {
			return db.DocumentBranch{}, branchAbsent()
		}
		return q.BranchGet(rq.ctx, *d.DefaultBranchID)
	}
	b, err := q.BranchByName(rq.ctx, db.BranchByNameParams{DocumentID: d.ID, Name: name})
	if db.IsNotFound(err) {
		return b, branchAbsent()
	}
	return b, err
}

// engineError maps the engine's refusals of an operation to answers.
func engineError(err error) error {
	switch {
	case errors.Is(err, docengine.ErrNoSheet):
		return notFound("The revision has no such sheet.")
	case errors.Is(err, docengine.ErrNoColumn):
		return notFound("The revision has no such column.")
	case errors.Is(err, docengine.ErrNoClause):
		return notFound("The revision has no such clause.")
	case errors.Is(err, docengine.ErrLastSheet):
		return badRequest("The last sheet of a document cannot be deleted.")
	case errors.Is(err, docengine.ErrSheetName):
		return fieldError("name", "is the name of another sheet")
	case errors.Is(err, docengine.ErrColumnName):
		return fieldError("name", "is the name of another column")
	case errors.Is(err, docengine.ErrBadPosition):
		return fieldError("sheet_id", "is not the sheet of the clause to place next to")
	case errors.Is(err, docengine.ErrSelfPosition):
		return badRequest("A clause cannot be placed next to itself.")
	}
	return err
}

// changeResult is what a change answers.
type changeResult struct {
	rev    db.DocumentRevision
	branch db.DocumentBranch
	doc    *docengine.Doc // the resulting content
}

type branchRef struct {
	ID        db.ID  `json:"id"`
	Name      string `json:"name"`
	User      idJSON `json:"user"`
	CreatedAt string `json:"created_at"`
}

type changeJSON struct {
	ID     db.ID     `json:"id"`
	Hash   string    `json:"hash"`
	Branch branchRef `json:"branch"`
}

func (c changeResult) json() changeJSON {
	return changeJSON{ID: db.ID(c.rev.ID), Hash: hashOf(c.rev.Hash).String(), Branch: branchRef{ID: db.ID(c.branch.ID),
		Name: c.branch.Name, User: idJSON{db.ID(c.branch.CreatedBy)}, CreatedAt: c.branch.CreatedAt}}
}

type conflictJSON struct {
	ID       string `json:"id"`
	Kind     string `json:"kind"`
	SheetID  *db.ID `json:"sheet_id"`
	ClauseID *db.ID `json:"clause_id"`
	ColumnID *db.ID `json:"column_id"`
	Base     any    `json:"base"`
	Ours     any    `json:"ours"`
	Theirs   any    `json:"theirs"`
}

func nonZeroID(v int64) *db.ID {
	if v == 0 {
		return nil
	}
	id := db.ID(v)
	return &id
}

// conflictsJSON lists at most maxConflictsBody conflicts.
func conflictsJSON(cs []docengine.Conflict) []conflictJSON {
	list := make([]conflictJSON, 0, min(len(cs), maxConflictsBody))
	for i, c := range cs {
		if i == maxConflictsBody {
			break
		}
		list = append(list, conflictJSON{ID: c.ID, Kind: c.Kind, SheetID: nonZeroID(c.SheetID), ClauseID: nonZeroID(c.ClauseID),
			ColumnID: nonZeroID(c.ColumnID), Base: c.Base, Ours: c.Ours, Theirs: c.Theirs})
	}
	return list
}

func conflictError(head db.DocumentRevision, cs []docengine.Conflict) error {
	list := conflictsJSON(cs)
	return &Error{Status: http.StatusConflict, Code: conflictCode,
		Message: "The change conflicts with the head of the branch; nothing was changed.",
		Extra: map[string]any{"head": map[string]any{"id": db.ID(head.ID), "hash": hashOf(head.Hash).String()},
			"conflicts": list, "conflict_count": len(cs)}}
}

// change runs one change of a document's content through the change flow.
// check runs after access with the base content (validation that needs
// it); op applies the change.
func (s *Server) change(rq *request, op func(q *db.Queries, d db.Document, doc *docengine.Doc) error) (changeResult, error) {
	return s.changeThen(rq, op, nil)
}

// changeThen is change with finish, which runs on the change's final
// content (after any merge onto the head and its constraints) before it is
// stored: what depends on the columns the new revision has (item field
// defaults of a new clause).
func (s *Server) changeThen(rq *request, op, finish func(q *db.Queries, d db.Document, doc *docengine.Doc) error) (changeResult, error) {
	base, err := rq.pathHash("hash")
	if err != nil {
		return changeResult{}, err
	}
	var res changeResult
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		d, _, err := contentAccess(rq, q, EditDocuments)
		if err != nil {
			return err
		}
		br, err := branchOf(rq, q, d)
		if err != nil {
			return err
		}
		if br.Protected {
			return forbidden("The branch %s is protected: it changes only through merge requests.", br.Name)
		}
		if _, err := revisionIn(rq.ctx, q, d.ID, base); err != nil {
			return err
		}
		head, err := q.RevisionGet(rq.ctx, br.RevisionID)
		if err != nil {
			return err
		}
		st := docengine.NewStage(chunkStore{rq.ctx, q})
		doc, err := st.Open(base)
		if err != nil {
			return err
		}
		if err := op(q, d, doc); err != nil {
			return engineError(err)
		}
		t, err := doc.Save()
		if err != nil {
			return err
		}
		headHash := hashOf(head.Hash)
		result := t
		if headHash != base {
			// a strict branch refuses any change of a clause the head changed too
			merged, conflicts, err := st.MergeWith(base, headHash, t, docengine.MergeOptions{Strict: br.Strict})
			if err != nil {
				return err
			}
			if len(conflicts) > 0 {
				return conflictError(head, conflicts)
			}
			// expressions still compile, enum cells name values (documentconstraints.go)
			if conflicts, err = mergeConstraints(rq.ctx, q, st, base, headHash, t, merged); err != nil {
				return err
			}
			if len(conflicts) > 0 {
				return conflictError(head, conflicts)
			}
			result = merged
		}
		if finish != nil {
			fin, err := st.Open(result)
			if err != nil {
				return err
			}
			if err := finish(q, d, fin); err != nil {
				return err
			}
			if result, err = fin.Save(); err != nil {
				return err
			}
		}
		res.branch = br
		if result == headHash {
			res.rev = head // nothing changed: no empty revision
		} else {
			if err := s.flushCharged(rq.ctx, q, st, result, d.OrganisationID); err != nil {
				return err
			}
			parents, _ := json.Marshal([]db.ID{db.ID(head.ID)})
			res.rev, err = q.RevisionCreate(rq.ctx, db.RevisionCreateParams{ID: s.store.IDs.Next(), DocumentID: d.ID, Hash: result[:],
				ParentID: &head.ID, Parents: string(parents), Generation: head.Generation + 1, CreatedAt: s.nowText(), CreatedBy: rq.user.ID})
			if err != nil {
				return err
			}
			n, err := q.BranchMove(rq.ctx, db.BranchMoveParams{ID: br.ID, RevisionID: res.rev.ID, OldRevisionID: head.ID})
			if err != nil {
				return err
			}
			if n != 1 {
				return errors.New("branch head moved inside the write transaction")
			}
		}
		res.doc, err = st.Open(result)
		return err
	})
	return res, err
}

// answerChange answers a change with the revision.
func (s *Server) answerChange(rq *request, op func(q *db.Queries, d db.Document, doc *docengine.Doc) error) error {
	res, err := s.change(rq, op)
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, res.json())
}

// Sheets.

type sheetBody struct {
	Name  *string `json:"name"`
	Order *int    `json:"order"`
}

func checkSheetName(p problems, name *string, required bool) {
	if name == nil {
		if required {
			p.add("name", "is required")
		}
		return
	}
	*name = strings.TrimSpace(*name)
	p.length("name", *name, 2, maxSheetName)
}

func (s *Server) sheetCreate(rq *request) error {
	var b sheetBody
	if err := rq.decodeCreate(&b, "sheet_id", "revision_id"); err != nil {
		return err
	}
	p := problems{}
	checkSheetName(p, b.Name, true)
	if b.Order != nil && *b.Order < 0 {
		p.add("order", "must be a position from 0")
	}
	if err := p.err(); err != nil {
		return err
	}
	return s.answerChange(rq, func(_ *db.Queries, _ db.Document, doc *docengine.Doc) error {
		if len(doc.R.Sheets) >= maxSheets {
			return badRequest("A document has at most %d sheets.", maxSheets)
		}
		id := s.store.IDs.Next()
		if err := doc.AddSheet(id, *b.Name); err != nil {
			return err
		}
		if b.Order == nil {
			return nil
		}
		// The new sheet goes last; an order places it, as a PATCH would.
		return doc.PatchSheet(id, nil, b.Order)
	})
}

func (s *Server) sheetPatch(rq *request) error {
	sheetID, err := rq.pathID("sheet")
	if err != nil {
		return err
	}
	var b sheetBody
	if _, err := rq.decodePatch(&b); err != nil {
		return err
	}
	p := problems{}
	checkSheetName(p, b.Name, false)
	if b.Order != nil && *b.Order < 0 {
		p.add("order", "must be a position from 0")
	}
	if err := p.err(); err != nil {
		return err
	}
	return s.answerChange(rq, func(_ *db.Queries, _ db.Document, doc *docengine.Doc) error {
		return doc.PatchSheet(sheetID, b.Name, b.Order)
	})
}

func (s *Server) sheetDelete(rq *request) error {
	sheetID, err := rq.pathID("sheet")
	if err != nil {
		return err
	}
	return s.answerChange(rq, func(_ *db.Queries, _ db.Document, doc *docengine.Doc) error {
		return doc.DeleteSheet(sheetID)
	})
}

// Columns.

type columnBody struct {
	Name                  *string    `json:"name"`
	Description           *string    `json:"description"`
	Type                  *string    `json:"type"`
	DataFormat            *int64     `json:"data_format"`
	Formula               *string    `json:"formula"`
	ConditionalFormatting *string    `json:"conditional_formatting"`
	FieldID               Opt[db.ID] `json:"field_id"`
	Order                 *int       `json:"order"` // a position from 0: moves the column
}

func (b *columnBody) validate() error {
	p := problems{}
	if b.Name != nil {
		*b.Name = strings.TrimSpace(*b.Name)
		p.length("name", *b.Name, 2, maxColumnName)
	}
	optText(p, "description", b.Description, maxDescriptionLen)
	if b.Type != nil && !columnTypes[*b.Type] {
		p.add("type", "must be text, number, boolean, date, enum or formula")
	}
	if b.DataFormat != nil && (*b.DataFormat < 0 || *b.DataFormat > 5) {
		p.add("data_format", "must be from 0 to 5")
	}
	optText(p, "formula", b.Formula, maxDescriptionLen)
	optText(p, "conditional_formatting", b.ConditionalFormatting, maxDescriptionLen)
	if b.Order != nil && *b.Order < 0 {
		p.add("order", "must be a position from 0")
	}
	return p.err()
}

// apply writes the body over c and checks what needs the organisation: an
// enum column names an enum item field of the document's organisation.
func (b *columnBody) apply(ctx context.Context, q *db.Queries, d db.Document, c *docengine.Column) error {
	setIf(&c.Name, b.Name)
	setIf(&c.Description, b.Description)
	setIf(&c.Type, b.Type)
	setIf(&c.DataFormat, b.DataFormat)
	setIf(&c.Formula, b.Formula)
	setIf(&c.ConditionalFormatting, b.ConditionalFormatting)
	if b.FieldID.Set {
		c.FieldID = 0
		if !b.FieldID.Null {
			c.FieldID = int64(b.FieldID.Value)
		}
	}
	if c.Type != "enum" {
		if b.FieldID.Set && !b.FieldID.Null {
			return fieldError("field_id", "is only for enum columns")
		}
		c.FieldID = 0
		return nil
	}
	if c.FieldID == 0 {
		return fieldError("field_id", "is required for an enum column (an enum item field)")
	}
	f, err := q.DocumentFieldGet(ctx, c.FieldID)
	if db.IsNotFound(err) || (err == nil && (f.OrganisationID != d.OrganisationID || f.Type != fieldEnum)) {
		return fieldError("field_id", "names no enum document field of this organisation")
	}
	if err != nil {
		return err
	}
	// the field's type is fixed while a head binds it (documentfielddefaults.go)
	return q.DocumentFieldBindingAdd(ctx, db.DocumentFieldBindingAddParams{FieldID: f.ID, DocumentID: d.ID})
}

func (s *Server) columnCreate(rq *request) error {
	var b columnBody
	if err := rq.decodeCreate(&b, "column_id", "revision_id"); err != nil {
		return err
	}
	if err := b.validate(); err != nil {
		return err
	}
	return s.answerChange(rq, func(q *db.Queries, d db.Document, doc *docengine.Doc) error {
		if len(doc.R.Columns) >= maxColumns {
			return badRequest("A document has at most %d columns.", maxColumns)
		}
		c := docengine.Column{ID: s.store.IDs.Next(), Type: "text"}
		if b.Name == nil {
			c.Name = "Column " + strconv.Itoa(len(doc.R.Columns)+1)
			for n := len(doc.R.Columns) + 2; columnNamed(doc, c.Name); n++ {
				c.Name = "Column " + strconv.Itoa(n)
			}
		}
		if err := b.apply(rq.ctx, q, d, &c); err != nil {
			return err
		}
		if err := doc.AddColumn(c); err != nil {
			return err
		}
		if b.Order != nil {
			if err := doc.MoveColumn(c.ID, *b.Order); err != nil {
				return err
			}
		}
		return checkCalc(doc)
	})
}

func columnNamed(doc *docengine.Doc, name string) bool {
	for _, c := range doc.R.Columns {
		if c.Name == name {
			return true
		}
	}
	return false
}

func (s *Server) columnPatch(rq *request) error {
	colID, err := rq.pathID("column")
	if err != nil {
		return err
	}
	var b columnBody
	if _, err := rq.decodePatch(&b); err != nil {
		return err
	}
	if err := b.validate(); err != nil {
		return err
	}
	return s.answerChange(rq, func(q *db.Queries, d db.Document, doc *docengine.Doc) error {
		c, ok := doc.Column(colID)
		if !ok {
			return docengine.ErrNoColumn
		}
		if err := b.apply(rq.ctx, q, d, &c); err != nil {
			return err
		}
		if err := doc.PatchColumn(c); err != nil {
			return err
		}
		if b.Order != nil {
			if err := doc.MoveColumn(colID, *b.Order); err != nil {
				return err
			}
		}
		return checkCalc(doc)
	})
}

func (s *Server) columnDelete(rq *request) error {
	colID, err := rq.pathID("column")
	if err != nil {
		return err
	}
	return s.answerChange(rq, func(_ *db.Queries, _ db.Document, doc *docengine.Doc) error {
		if err := doc.DeleteColumn(colID); err != nil {
			return err
		}
		if _, err := planCalc(doc.R.Columns); err != nil {
			return badRequest("The column is used by an expression of another column; change that first.")
		}
		return nil
	})
}

// checkCalc refuses a column change whose expressions do not compile or
// make a formula cycle (400 naming formula or conditional_formatting).
func checkCalc(doc *docengine.Doc) error {
	_, err := planCalc(doc.R.Columns)
	var pe *calcPlanError
	if errors.As(err, &pe) {
		return fieldError(pe.field, pe.msg)
	}
	return err
}

// Clauses.

// maxClauseBody lets a clause's text reach the spec's 16 MiB (JSON escapes
// included) on the clause writes of a caller presenting a token.
const maxClauseBody = 20 << 20

// isClauseWrite: POST or PATCH of a clause, with a bearer token.
func isClauseWrite(r *http.Request) bool {
	if (r.Method != http.MethodPost && r.Method != http.MethodPatch) || r.Header.Get("Authorization") == "" {
		return false
	}
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	return len(parts) >= 5 && parts[0] == "documents" && parts[2] == "revisions" && parts[4] == "clauses"
}

type clauseBody struct {
	After   *db.ID  `json:"after"`
	Below   *db.ID  `json:"below"`
	Before  *db.ID  `json:"before"`
	SheetID *db.ID  `json:"sheet_id"`
	Text    *string `json:"text"`
}

// place reads the position: below means after; more than one is 400.
func (b *clauseBody) place() (*docengine.Place, error) {
	n := 0
	pl := docengine.Place{}
	for _, v := range []struct {
		id  *db.ID
		dst *int64
	}{{b.After, &pl.After}, {b.Below, &pl.After}, {b.Before, &pl.Before}} {
		if v.id != nil {
			n++
			*v.dst = int64(*v.id)
		}
	}
	if n > 1 {
		return nil, badRequest("Give at most one of after, below and before.")
	}
	if b.SheetID != nil {
		pl.Sheet = int64(*b.SheetID)
	}
	if n == 0 && b.SheetID == nil {
		return nil, nil
	}
	return &pl, nil
}

func checkClauseText(t *string) error {
	if t != nil && len(*t) > maxClauseText {
		return fieldError("text", "must be at most 16 MiB")
	}
	return nil
}

func (s *Server) clauseCreate(rq *request) error {
	var b clauseBody
	if err := rq.decodeCreate(&b, "clause_id", "revision_id"); err != nil {
		return err
	}
	pl, err := b.place()
	if err != nil {
		return err
	}
	if err := checkClauseText(b.Text); err != nil {
		return err
	}
	id := s.store.IDs.Next()
	res, err := s.changeThen(rq, func(_ *db.Queries, _ db.Document, doc *docengine.Doc) error {
		at := docengine.Place{}
		if pl != nil {
			at = *pl
		}
		return doc.InsertClause(id, at, orDefault(b.Text, ""))
	}, func(q *db.Queries, d db.Document, doc *docengine.Doc) error {
		// its bound cells start with their item fields' defaults, set on the
		// final content so every column the new revision has counts
		return applyDefaults(rq.ctx, q, d.OrganisationID, doc, id)
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, res.json())
}

func (s *Server) clausePatch(rq *request) error {
	clauseID, err := rq.pathID("clause")
	if err != nil {
		return err
	}
	var b clauseBody
	if _, err := rq.decodePatch(&b, "clause_id", "revision_id"); err != nil {
		return err
	}
	pl, err := b.place()
	if err != nil {
		return err
	}
	if err := checkClauseText(b.Text); err != nil {
		return err
	}
	return s.answerChange(rq, func(_ *db.Queries, _ db.Document, doc *docengine.Doc) error {
		return doc.PatchClause(clauseID, pl, b.Text)
	})
}

func (s *Server) clauseDelete(rq *request) error {
	clauseID, err := rq.pathID("clause")
	if err != nil {
		return err
	}
	return s.answerChange(rq, func(_ *db.Queries, _ db.Document, doc *docengine.Doc) error {
		return doc.DeleteClause(clauseID)
	})
}

// Cells.

type fieldUpdateBody struct {
	ClauseID *db.ID  `json:"clause_id"`
	ColumnID *db.ID  `json:"column_id"`
	Value    *string `json:"value"`
}

type fieldUpdateJSON struct {
	ID        db.ID           `json:"id"`
	Hash      string          `json:"hash"`
	User      idJSON          `json:"user"`
	CreatedAt string          `json:"created_at"`
	Fields    []fieldCellJSON `json:"fields"`
}

type fieldCellJSON struct {
	ColumnID         db.ID   `json:"column_id"`
	ClauseID         db.ID   `json:"clause_id"`
	Value            string  `json:"value"`
	FormattedValue   *string `json:"formatted_value,omitempty"`
	BackgroundColour *string `json:"background_colour"`
}

// checkCell validates a value by its column's type ("" clears any cell).
func checkCell(ctx context.Context, q *db.Queries, c docengine.Column, v string) error {
	if v == "" {
		return nil
	}
	bad := func(msg string) error { return fieldError("value", msg) }
	switch c.Type {
	case "number":
		if _, err := strconv.ParseFloat(v, 64); err != nil || strings.ContainsAny(v, "xXpP_") {
			return bad("must be a decimal number for a number column")
		}
	case "boolean":
		if v != "true" && v != "false" {
			return bad("must be true or false for a boolean column")
		}
	case "date":
		if !validDate(v) {
			return bad("must be a date as YYYY-MM-DD for a date column")
		}
	case "enum":
		id, ok := db.ParseID(v)
		if !ok {
			return bad("must be the id of a value of the column's field")
		}
		vals, err := q.DocumentFieldValues(ctx, idsJSON([]int64{c.FieldID}))
		if err != nil {
			return err
		}
		for _, x := range vals {
			if x.ID == int64(id) {
				return nil
			}
		}
		return bad("must be the id of a value of the column's field")
	case "formula":
		return bad("cannot be set: a formula column is calculated")
	}
	return nil
}

func (s *Server) fieldUpdate(rq *request) error {
	var b fieldUpdateBody
	if err := rq.decode(&b); err != nil {
		return err
	}
	p := problems{}
	if b.ClauseID == nil {
		p.add("clause_id", "is required")
	}
	if b.ColumnID == nil {
		p.add("column_id", "is required")
	}
	if b.Value == nil {
		p.add("value", "is required")
	} else if len(*b.Value) > maxCellValue {
		p.add("value", "must be at most 64 KiB")
	}
	if err := p.err(); err != nil {
		return err
	}
	clauseID, columnID := int64(*b.ClauseID), int64(*b.ColumnID)
	res, err := s.change(rq, func(q *db.Queries, _ db.Document, doc *docengine.Doc) error {
		c, ok := doc.Column(columnID)
		if !ok {
			return docengine.ErrNoColumn
		}
		if err := checkCell(rq.ctx, q, c, *b.Value); err != nil {
			return err
		}
		return doc.SetCell(clauseID, columnID, *b.Value)
	})
	if err != nil {
		return err
	}
	out := fieldUpdateJSON{ID: db.ID(res.rev.ID), Hash: hashOf(res.rev.Hash).String(), User: idJSON{db.ID(res.rev.CreatedBy)},
		CreatedAt: res.rev.CreatedAt, Fields: []fieldCellJSON{}}
	// the clause's cells as they are in the result (the value sent, or the
	// head's when the change merged onto a newer head)
	if _, cl, err := res.doc.ClauseAt(clauseID); err == nil {
		plan, _ := planCalc(res.doc.R.Columns)
		// enum value texts read after the commit: values are never deleted
		enums, err := enumTexts(rq.ctx, s.store.R, res.doc.R.Columns)
		if err != nil {
			return err
		}
		for _, c := range cellsOf(plan, res.doc.R.Columns, cl.Cells, enums) {
			out.Fields = append(out.Fields, fieldCellJSON{ColumnID: c.ColumnID, ClauseID: db.ID(clauseID), Value: c.Value, FormattedValue: c.FormattedValue, BackgroundColour: c.BackgroundColour})
		}
	}
	return rq.json(http.StatusOK, out)
}
