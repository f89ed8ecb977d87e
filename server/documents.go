package server

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"workspace/db"
	"workspace/server/docengine"
)

// Documents (spec: Documents; design ../shared/design/documents.md):
// create with a number drawn in the write transaction, get, patch, soft
// delete and restore, list. Content lives in the revision engine
// (server/docengine, documentrevisions.go). Decisions in docs/documents.md.

const (
	maxDocumentTitle   = 200
	documentCounter    = "documents"
	firstSheetName     = "Sheet 1"
	documentMediaType  = "application/vnd.workspace.document"
	maxFieldValueChars = 10000
)

type documentJSON struct {
	ID                  db.ID                      `json:"id"`
	OrganisationID      db.ID                      `json:"organisation_id"`
	Organisation        idJSON                     `json:"organisation"`
	OriginID            *db.ID                     `json:"origin_id"`
	Number              int64                      `json:"number"`
	FormattedNumber     string                     `json:"formatted_number"`
	Title               string                     `json:"title"`
	TypeID              *db.ID                     `json:"type_id"`
	Type                *documentTypeJSON          `json:"type"`
	ContentType         string                     `json:"content_type"`
	DefaultBranchID     *db.ID                     `json:"default_branch_id"`
	DefaultBranch       *branchJSON                `json:"default_branch"`
	CurrentReleaseTagID *db.ID                     `json:"current_release_tag_id"`
	CurrentReleaseTag   any                        `json:"current_release_tag"`
	BookmarkCount       int64                      `json:"bookmark_count"`
	ForkCount           int64                      `json:"fork_count"`
	BranchCount         int64                      `json:"branch_count"`
	OpenWorkItemCount   int64                      `json:"open_work_item_count"`
	ClosedWorkItemCount int64                      `json:"closed_work_item_count"`
	WorkItemTypesCount  map[string]any             `json:"work_item_types_count"`
	ProjectID           *db.ID                     `json:"project_id"`
	Project             *idJSON                    `json:"project"`
	PackageID           *db.ID                     `json:"package_id"`
	Package             *idJSON                    `json:"package"`
	DisciplineID        *db.ID                     `json:"discipline_id"`
	Discipline          *idJSON                    `json:"discipline"`
	AssetGroupID        *db.ID                     `json:"asset_group_id"`
	AssetGroup          *idJSON                    `json:"asset_group"`
	AssetID             *db.ID                     `json:"asset_id"`
	Asset               *idJSON                    `json:"asset"`
	Fields              map[string]docFieldValue   `json:"fields"`
	CreatedAt           string                     `json:"created_at"`
	CreatedBy           idJSON                     `json:"created_by"`
	UpdatedAt           string                     `json:"updated_at"`
	UpdatedBy           idJSON                     `json:"updated_by"`
	AccessedAt          *string                    `json:"accessed_at"`
	Tracking            map[string]any             `json:"tracking"`
	Bookmark            any                        `json:"bookmark"`
	Permissions         PermBools                  `json:"permissions"`
	ProtectionRules     map[string]any             `json:"protection_rules"`
	IsDeleted           bool                       `json:"is_deleted"`
	DeletedAt           *string                    `json:"deleted_at"`
	DeletedBy           *idJSON                    `json:"deleted_by"`
	fieldsRaw           map[string]json.RawMessage // stored values, for patching
}

// docFieldValue is one custom field value of a document.
type docFieldValue struct {
	ID    string          `json:"id"`
	Name  *string         `json:"name"`
	Type  int64           `json:"type"`
	Value json.RawMessage `json:"value"`
	Units *string         `json:"units"`
}

func optIDObj(p *int64) *idJSON {
	if p == nil {
		return nil
	}
	return &idJSON{db.ID(*p)}
}

func deref(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

func documentAbsent(status int) *Error { return errorf(status, "The document does not exist.") }

// documentAccess loads a document and the caller's access, on the project
// (and package) layer when it has one.
func documentAccess(ctx context.Context, q *db.Queries, userID, id int64, absent *Error) (db.Document, Access, error) {
	d, err := q.DocumentGet(ctx, id)
	if db.IsNotFound(err) {
		return d, Access{}, absent
	}
	if err != nil {
		return d, Access{}, err
	}
	a, err := authorize(ctx, q, userID, d.OrganisationID, Scopes{Project: deref(d.ProjectID), Package: deref(d.PackageID), Document: d.ID})
	if db.IsNotFound(err) {
		return d, Access{}, absent
	}
	return d, a, err
}

// renderDocument builds the full document object.
func renderDocument(ctx context.Context, q *db.Queries, d db.Document, a Access) (documentJSON, error) {
	out := documentJSON{
		ID: db.ID(d.ID), OrganisationID: db.ID(d.OrganisationID), Organisation: idJSON{db.ID(d.OrganisationID)},
		OriginID: optID(d.OriginID), Number: d.Number, FormattedNumber: d.FormattedNumber, Title: d.Title,
		TypeID: optID(d.TypeID), ContentType: documentMediaType, DefaultBranchID: optID(d.DefaultBranchID),
		WorkItemTypesCount: map[string]any{}, ProjectID: optID(d.ProjectID), Project: optIDObj(d.ProjectID),
		PackageID: optID(d.PackageID), Package: optIDObj(d.PackageID), DisciplineID: optID(d.DisciplineID),
		Discipline: optIDObj(d.DisciplineID), AssetGroupID: optID(d.AssetGroupID), AssetGroup: optIDObj(d.AssetGroupID),
		AssetID: optID(d.AssetID), Asset: optIDObj(d.AssetID), Fields: map[string]docFieldValue{},
		CreatedAt: d.CreatedAt, CreatedBy: idJSON{db.ID(d.CreatedBy)}, UpdatedAt: d.UpdatedAt, UpdatedBy: idJSON{db.ID(d.UpdatedBy)},
		Tracking: map[string]any{}, ProtectionRules: map[string]any{},
		Permissions: a.Permissions().Bools(ViewDocuments | EditDocuments),
		IsDeleted:   d.DeletedAt != nil, DeletedAt: d.DeletedAt,
	}
	if a.Owner {
		out.Permissions = AllPermissions.Bools(ViewDocuments | EditDocuments)
	}
	if !a.IsMember() && a.Shared != 0 {
		// a share holder's scope_view and scope_edit
		var held PermSet
		if a.CanDoc(DocView) {
			held |= ViewDocuments
		}
		if a.CanDoc(DocEdit) {
			held |= EditDocuments
		}
		out.Permissions = held.Bools(ViewDocuments | EditDocuments)
	}
	var err error
	if out.OpenWorkItemCount, out.ClosedWorkItemCount, out.WorkItemTypesCount, err = documentWorkItemCounts(ctx, q, d.ID); err != nil {
		return out, err
	}
	if d.DeletedBy != nil {
		out.DeletedBy = &idJSON{db.ID(*d.DeletedBy)}
	}
	if d.TypeID != nil {
		t, err := q.DocumentTypeGet(ctx, *d.TypeID)
		if err != nil {
			return out, err
		}
		tj := toDocumentType(t)
		out.Type = &tj
	}
	if d.DefaultBranchID != nil {
		b, err := q.BranchGet(ctx, *d.DefaultBranchID)
		if err != nil {
			return out, err
		}
		bj, err := renderBranch(ctx, q, b)
		if err != nil {
			return out, err
		}
		out.DefaultBranch = &bj
	}
	if out.BranchCount, err = q.DocumentBranchCount(ctx, d.ID); err != nil {
		return out, err
	}
	if out.ForkCount, err = q.DocumentForkCount(ctx, &d.ID); err != nil {
		return out, err
	}
	if err := renderPersonal(ctx, q, &out, d.ID, a.UserID); err != nil {
		return out, err
	}
	if cur, err := currentReleaseTag(ctx, q, d.ID); err != nil {
		return out, err
	} else if cur != nil {
		out.CurrentReleaseTagID, out.CurrentReleaseTag = &cur.ID, cur
	}
	if err := json.Unmarshal([]byte(d.Fields), &out.fieldsRaw); err != nil {
		return out, err
	}
	if len(out.fieldsRaw) > 0 {
		ids := make([]int64, 0, len(out.fieldsRaw))
		for k := range out.fieldsRaw {
			id, _ := strconv.ParseInt(k, 10, 64)
			ids = append(ids, id)
		}
		fields, err := q.DocumentFieldListByIDs(ctx, idsJSON(ids))
		if err != nil {
			return out, err
		}
		for _, f := range fields {
			k := strconv.FormatInt(f.ID, 10)
			name, units := f.Name, f.Units
			out.Fields[k] = docFieldValue{ID: k, Name: &name, Type: f.Type, Value: out.fieldsRaw[k], Units: &units}
		}
	}
	return out, nil
}

type documentBody struct {
	OrganisationID *db.ID                     `json:"organisation_id"`
	Title          *string                    `json:"title"`
	TypeID         Opt[db.ID]                 `json:"type_id"`
	ProjectID      Opt[db.ID]                 `json:"project_id"`
	PackageID      Opt[db.ID]                 `json:"package_id"`
	DisciplineID   Opt[db.ID]                 `json:"discipline_id"`
	AssetGroupID   Opt[db.ID]                 `json:"asset_group_id"`
	AssetID        Opt[db.ID]                 `json:"asset_id"`
	PrefixID       *db.ID                     `json:"prefix_id"`
	Fields         map[string]json.RawMessage `json:"fields"`
}

var documentReadOnly = []string{"id", "organisation", "origin_id", "number", "formatted_number", "type", "content_type",
	"default_branch_id", "default_branch", "current_release_tag_id", "current_release_tag", "bookmark_count", "fork_count",
	"branch_count", "open_work_item_count", "closed_work_item_count", "work_item_types_count", "project", "package",
	"discipline", "asset_group", "asset", "created_at", "created_by", "updated_at", "updated_by", "accessed_at", "tracking",
	"bookmark", "permissions", "protection_rules", "is_deleted", "deleted_at", "deleted_by"}

func setLink(dst **int64, o Opt[db.ID]) {
	if !o.Set {
		return
	}
	if o.Null {
		*dst = nil
		return
	}
	v := int64(o.Value)
	*dst = &v
}

// applyLinks validates the body's links (each must name a row of the
// document's organisation; a package must belong to the project) and
// custom field values, and writes them over d.
func applyDocumentBody(ctx context.Context, q *db.Queries, b *documentBody, d *db.Document) error {
	p := problems{}
	if b.Title != nil {
		d.Title = strings.TrimSpace(*b.Title)
		p.length("title", d.Title, 2, maxDocumentTitle)
	}
	setLink(&d.TypeID, b.TypeID)
	setLink(&d.ProjectID, b.ProjectID)
	setLink(&d.PackageID, b.PackageID)
	setLink(&d.DisciplineID, b.DisciplineID)
	setLink(&d.AssetGroupID, b.AssetGroupID)
	setLink(&d.AssetID, b.AssetID)
	// asset_group_id names any group of the organisation (an asset is its
	// single group, docs/assets.md); asset_id an asset (ephemerality 0).
	for _, l := range []struct {
		field string
		id    *int64
		asset bool
	}{{"asset_group_id", d.AssetGroupID, false}, {"asset_id", d.AssetID, true}} {
		if l.id == nil {
			continue
		}
		g, err := q.AssetGroupGet(ctx, *l.id)
		switch {
		case db.IsNotFound(err) || (err == nil && g.OrganisationID != d.OrganisationID):
			p.add(l.field, "names no "+strings.TrimSuffix(strings.ReplaceAll(l.field, "_", " "), " id")+" of this organisation")
		case err != nil:
			return err
		case l.asset && g.Ephemerality != 0:
			p.add(l.field, "names an asset group, not an asset")
		}
	}
	if d.TypeID != nil {
		t, err := q.DocumentTypeGet(ctx, *d.TypeID)
		if db.IsNotFound(err) || (err == nil && t.OrganisationID != d.OrganisationID) {
			p.add("type_id", "names no document type of this organisation")
		} else if err != nil {
			return err
		}
	}
	if d.ProjectID != nil {
		pr, err := q.ProjectGet(ctx, *d.ProjectID)
		if db.IsNotFound(err) || (err == nil && pr.OrganisationID != d.OrganisationID) {
			p.add("project_id", "names no project of this organisation")
		} else if err != nil {
			return err
		}
	}
	if d.PackageID != nil {
		pk, err := q.PackageGet(ctx, *d.PackageID)
		switch {
		case db.IsNotFound(err) || (err == nil && pk.OrganisationID != d.OrganisationID):
			p.add("package_id", "names no package of this organisation")
		case err != nil:
			return err
		case d.ProjectID == nil || pk.ProjectID != *d.ProjectID:
			p.add("package_id", "must be a package of the document's project")
		}
	}
	if d.DisciplineID != nil {
		di, err := q.DisciplineGet(ctx, *d.DisciplineID)
		if db.IsNotFound(err) || (err == nil && di.OrganisationID != d.OrganisationID) {
			p.add("discipline_id", "names no discipline of this organisation")
		} else if err != nil {
			return err
		}
	}
	if b.Fields != nil {
		if err := applyFieldValues(ctx, q, d, b.Fields, p); err != nil {
			return err
		}
	}
	return p.err()
}

// applyFieldValues checks custom field values against their fields (type,
// max_length, enum value ids) and merges them into d.Fields; null removes
// a value.
func applyFieldValues(ctx context.Context, q *db.Queries, d *db.Document, in map[string]json.RawMessage, p problems) error {
	cur := map[string]json.RawMessage{}
	if err := json.Unmarshal([]byte(d.Fields), &cur); err != nil {
		return err
	}
	keys := make([]string, 0, len(in))
	for k := range in {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		raw := in[k]
		name := "fields." + k
		id, ok := db.ParseID(k)
		if !ok {
			p.add(name, "must be keyed by a document field id")
			continue
		}
		f, err := q.DocumentFieldGet(ctx, int64(id))
		if db.IsNotFound(err) || (err == nil && f.OrganisationID != d.OrganisationID) {
			p.add(name, "names no document field of this organisation")
			continue
		}
		if err != nil {
			return err
		}
		if string(raw) == "null" {
			delete(cur, k)
			continue
		}
		stored, problem, err := fieldValueProblem(ctx, q, f, raw, false)
		if err != nil {
			return err
		}
		if problem != "" {
			p.add(name, problem)
			continue
		}
		raw = stored
		cur[k] = raw
	}
	b, err := json.Marshal(cur)
	if err != nil {
		return err
	}
	d.Fields = string(b)
	return nil
}

// chunkStore is the engine's Store over document_chunks in the caller's
// transaction.
type chunkStore struct {
	ctx context.Context
	q   *db.Queries
}

func (c chunkStore) Get(h docengine.Hash) ([]byte, error) {
	b, err := c.q.ChunkGet(c.ctx, h[:])
	if db.IsNotFound(err) {
		return nil, docengine.ErrMissing
	}
	return b, err
}

func (c chunkStore) Put(h docengine.Hash, data []byte) (bool, error) {
	n, err := c.q.ChunkPut(c.ctx, db.ChunkPutParams{Hash: h[:], Data: data})
	return n == 1, err
}

func (s *Server) documentCreate(rq *request) error {
	var b documentBody
	if err := rq.decodeCreate(&b, documentReadOnly...); err != nil {
		return err
	}
	p := problems{}
	if b.OrganisationID == nil {
		p.add("organisation_id", "is required")
	}
	if b.Title == nil {
		p.add("title", "is required")
	}
	if err := p.err(); err != nil {
		return err
	}
	var out documentJSON
	err := s.store.InTx(rq.ctx, func(q *db.Queries) error {
		orgID := int64(*b.OrganisationID)
		d := db.Document{OrganisationID: orgID, Fields: "{}"}
		// links are checked before access so the permission is asked on the
		// right layer (the project's when the document has one)
		if _, err := orgAccess(rq, q, orgID, http.StatusBadRequest, 0); err != nil {
			return err
		}
		if err := applyDocumentBody(rq.ctx, q, &b, &d); err != nil {
			return err
		}
		a, err := authorize(rq.ctx, q, rq.user.ID, orgID, Scopes{Project: deref(d.ProjectID), Package: deref(d.PackageID)})
		if err != nil {
			return err
		}
		if err := a.Require(EditDocuments); err != nil {
			return err
		}
		if d, err = s.insertDocument(rq.ctx, q, d, b.PrefixID, rq.user.ID); err != nil {
			return err
		}
		branchName := a.Org.DefaultBranchName
		if strings.TrimSpace(branchName) == "" {
			branchName = "main"
		}
		if d, err = s.initialRevision(rq.ctx, q, d, branchName, rq.user.ID); err != nil {
			return err
		}
		out, err = renderDocument(rq.ctx, q, d, a)
		return err
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusCreated, out)
}

// insertDocument stores a new document d (organisation, title, links and
// fields set) with a number drawn in the write transaction: the
// organisation's next, formatted by the type's number_format, or by the
// prefix when one is named (its own sequence).
func (s *Server) insertDocument(ctx context.Context, q *db.Queries, d db.Document, prefixID *db.ID, userID int64) (db.Document, error) {
	n, err := counterNext(ctx, q, d.OrganisationID, documentCounter)
	if err != nil {
		return d, err
	}
	formatted := plainNumber(n)
	if d.TypeID != nil {
		t, err := q.DocumentTypeGet(ctx, *d.TypeID)
		if err != nil {
			return d, err
		}
		if t.NumberFormat != "" {
			formatted = formatNumber(t.NumberFormat, nil, n)
		}
		if err := q.DocumentTypeNumbered(ctx, db.DocumentTypeNumberedParams{ID: t.ID, Number: n}); err != nil {
			return d, err
		}
	}
	if prefixID != nil {
		if _, formatted, err = drawNumber(ctx, q, d.OrganisationID, int64(*prefixID)); err != nil {
			return d, err
		}
	}
	d, err = q.DocumentCreate(ctx, db.DocumentCreateParams{ID: s.store.IDs.Next(), OrganisationID: d.OrganisationID,
		OriginID: d.OriginID, Number: n, FormattedNumber: formatted, Title: d.Title, TypeID: d.TypeID, ProjectID: d.ProjectID,
		PackageID: d.PackageID, DisciplineID: d.DisciplineID, AssetGroupID: d.AssetGroupID, AssetID: d.AssetID, Fields: d.Fields, CreatedAt: s.nowText(), CreatedBy: userID})
	if err != nil {
		return d, err
	}
	if d.ProjectID != nil {
		err = q.ProjectDocumentCountAdd(ctx, db.ProjectDocumentCountAddParams{ID: *d.ProjectID, Delta: 1})
	}
	return d, err
}

// initialRevision gives a new document its first revision (one sheet,
// nothing else) on its default branch.
func (s *Server) initialRevision(ctx context.Context, q *db.Queries, d db.Document, branch string, userID int64) (db.Document, error) {
	st := docengine.NewStage(chunkStore{ctx, q})
	doc := st.New(docengine.Meta{Title: d.Title}, s.store.IDs.Next(), firstSheetName)
	h, err := doc.Save()
	if err != nil {
		return d, err
	}
	if err := s.flushCharged(ctx, q, st, h, d.OrganisationID); err != nil {
		return d, err
	}
	now := s.nowText()
	rev, err := q.RevisionCreate(ctx, db.RevisionCreateParams{ID: s.store.IDs.Next(), DocumentID: d.ID, Hash: h[:], Parents: "[]",
		Generation: 0, CreatedAt: now, CreatedBy: userID})
	if err != nil {
		return d, err
	}
	br, err := q.BranchCreate(ctx, db.BranchCreateParams{ID: s.store.IDs.Next(), OrganisationID: d.OrganisationID, DocumentID: d.ID,
		Name: branch, RevisionID: rev.ID, CreatedAt: now, CreatedBy: userID})
	if err != nil {
		return d, err
	}
	if err := q.DocumentSetDefaultBranch(ctx, db.DocumentSetDefaultBranchParams{ID: d.ID, DefaultBranchID: &br.ID}); err != nil {
		return d, err
	}
	d.DefaultBranchID = &br.ID
	return d, nil
}

func (s *Server) documentGet(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var out documentJSON
	err = s.store.ReadTx(rq.ctx, func(q *db.Queries) error {
		d, a, err := documentAccess(rq.ctx, q, rq.user.ID, id, documentAbsent(http.StatusNotFound))
		if err != nil {
			return err
		}
		if err := a.RequireDoc(DocView); err != nil {
			return err
		}
		out, err = renderDocument(rq.ctx, q, d, a)
		return err
	})
	if err != nil {
		return err
	}
	if err := s.noteAccess(rq, &out); err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

func (s *Server) documentPatch(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var b documentBody
	ro, err := rq.decodePatch(&b, append(documentReadOnly, "organisation_id")...)
	if err != nil {
		return err
	}
	var out documentJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		d, a, err := documentAccess(rq.ctx, q, rq.user.ID, id, documentAbsent(http.StatusNotFound))
		if err != nil {
			return err
		}
		if err := a.Require(EditDocuments); err != nil {
			return err
		}
		cur, err := renderDocument(rq.ctx, q, d, a)
		if err != nil {
			return err
		}
		if err := ro.check(cur); err != nil {
			return err
		}
		oldProject := d.ProjectID
		if err := applyDocumentBody(rq.ctx, q, &b, &d); err != nil {
			return err
		}
		if deref(oldProject) != deref(d.ProjectID) || b.PackageID.Set {
			// moving into a project needs EDIT_DOCUMENTS there too
			na, err := authorize(rq.ctx, q, rq.user.ID, d.OrganisationID, Scopes{Project: deref(d.ProjectID), Package: deref(d.PackageID)})
			if err != nil {
				return err
			}
			if err := na.Require(EditDocuments); err != nil {
				return err
			}
			a = na
		}
		if d.DeletedAt == nil && deref(oldProject) != deref(d.ProjectID) {
			if err := moveDocumentCount(rq.ctx, q, oldProject, d.ProjectID); err != nil {
				return err
			}
		}
		d, err = q.DocumentUpdate(rq.ctx, db.DocumentUpdateParams{ID: d.ID, Title: d.Title, TypeID: d.TypeID, ProjectID: d.ProjectID,
			PackageID: d.PackageID, DisciplineID: d.DisciplineID, AssetGroupID: d.AssetGroupID, AssetID: d.AssetID, Fields: d.Fields,
			UpdatedAt: s.nowText(), UpdatedBy: rq.user.ID})
		if err != nil {
			return err
		}
		out, err = renderDocument(rq.ctx, q, d, a)
		return err
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

// moveDocumentCount keeps projects.document_count (documents not deleted).
func moveDocumentCount(ctx context.Context, q *db.Queries, from, to *int64) error {
	if from != nil {
		if err := q.ProjectDocumentCountAdd(ctx, db.ProjectDocumentCountAddParams{ID: *from, Delta: -1}); err != nil {
			return err
		}
	}
	if to != nil {
		return q.ProjectDocumentCountAdd(ctx, db.ProjectDocumentCountAddParams{ID: *to, Delta: 1})
	}
	return nil
}

// documentDelete is a soft delete; documentRestore undoes it.
func (s *Server) documentDelete(rq *request) error { return s.documentSetDeleted(rq, true) }

func (s *Server) documentRestore(rq *request) error { return s.documentSetDeleted(rq, false) }

func (s *Server) documentSetDeleted(rq *request, deleted bool) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var out documentJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		d, a, err := documentAccess(rq.ctx, q, rq.user.ID, id, documentAbsent(http.StatusNotFound))
		if err != nil {
			return err
		}
		if err := a.Require(EditDocuments); err != nil {
			return err
		}
		if (d.DeletedAt != nil) == deleted {
			out, err = renderDocument(rq.ctx, q, d, a) // already so: nothing changes
			return err
		}
		now := s.nowText()
		params := db.DocumentSetDeletedParams{ID: d.ID, UpdatedAt: now, UpdatedBy: rq.user.ID}
		if deleted {
			params.DeletedAt, params.DeletedBy = &now, &rq.user.ID
			err = moveDocumentCount(rq.ctx, q, d.ProjectID, nil)
		} else {
			err = moveDocumentCount(rq.ctx, q, nil, d.ProjectID)
		}
		if err != nil {
			return err
		}
		if d, err = q.DocumentSetDeleted(rq.ctx, params); err != nil {
			return err
		}
		out, err = renderDocument(rq.ctx, q, d, a)
		return err
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

var documentFilter = db.FilterFields{
	"title":      {Column: "title", Kind: db.FieldString, CaseInsensitive: true},
	"type_id":    {Column: "type_id", Kind: db.FieldID},
	"project_id": {Column: "project_id", Kind: db.FieldID},
	"number":     {Column: "number", Kind: db.FieldNumber},
	"is_deleted": {Column: "(deleted_at IS NOT NULL)", Kind: db.FieldBool},
}

// documentList: the documents of the organisation the caller may view
// (VIEW_DOCUMENTS on each document's layer), deleted ones only when the
// filter names is_deleted.
// viewableDocumentLayers: the layers of the organisation (the
// organisation, a project, a package, keyed "project:package" with 0 for
// none) whose documents the caller may view. The layers are few: each is
// authorised once, and its access kept in access when that is not nil.
func viewableDocumentLayers(rq *request, q *db.Queries, orgID int64, access map[string]Access) ([]string, error) {
	scopes, err := q.DocumentScopes(rq.ctx, orgID)
	if err != nil {
		return nil, err
	}
	var visible []string
	for _, sc := range scopes {
		a, err := authorize(rq.ctx, q, rq.user.ID, orgID, Scopes{Project: sc.ProjectID, Package: sc.PackageID})
		if err != nil {
			return nil, err
		}
		key := fmt.Sprintf("%d:%d", sc.ProjectID, sc.PackageID)
		if access != nil {
			access[key] = a
		}
		if a.Can(ViewDocuments) {
			visible = append(visible, key)
		}
	}
	return visible, nil
}

func (s *Server) documentList(rq *request) error {
	// the caller's access per layer, for each row's permissions
	access := map[string]Access{}
	return listPage(s, rq, listSpec[documentJSON]{Path: "id", Fields: documentFilter,
		Scope: func(_ *sql.Tx, q *db.Queries, orgID int64, lq listQuery) (listSQL, error) {
			if _, err := orgAccess(rq, q, orgID, http.StatusBadRequest, 0); err != nil {
				return listSQL{}, err
			}
			visible, err := viewableDocumentLayers(rq, q, orgID, access)
			if err != nil {
				return listSQL{}, err
			}
			if len(visible) == 0 {
				return listSQL{}, nil
			}
			vis, _ := json.Marshal(visible)
			where := "organisation_id = ? AND (coalesce(project_id, 0) || ':' || coalesce(package_id, 0)) IN (SELECT value FROM json_each(?))"
			if !strings.Contains(lq.Where, "deleted_at IS NOT NULL") {
				where += " AND deleted_at IS NULL"
			}
			return listSQL{From: "documents", Where: where, Args: []any{orgID, string(vis)}, OrderBy: "number"}, nil
		},
		Rows: byIDs((*db.Queries).DocumentListByIDs, eachQ(func(ctx context.Context, q *db.Queries, d db.Document) (documentJSON, error) {
			return renderDocument(ctx, q, d, access[fmt.Sprintf("%d:%d", deref(d.ProjectID), deref(d.PackageID))])
		}))})
}
