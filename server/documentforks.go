package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"workspace/db"
)

// Forks (spec: POST /documents/{document.id}; documents.md "Forks";
// decisions in docs/documents.md). A fork is a new document of the caller's
// chosen organisation whose origin_id names the document it came from. It
// copies its origin's revision rows and live branches, never their content:
// document_chunks is content-addressed, so both documents read the same
// stored objects. A copied row keeps the identity of the revision it copies
// (revisionIdentity), which is how a merge request from a fork finds the
// history both sides share.

// revisionIdentity is a revision's identity across a document and its
// forks: the id of the row it was first made as.
func revisionIdentity(r db.DocumentRevision) int64 {
	if r.OriginRevisionID != nil {
		return *r.OriginRevisionID
	}
	return r.ID
}

// copyRevisions makes sure document to holds the revisions heads (rows of
// document from) and their whole ancestry, copying the rows it lacks (by
// identity) parents first. It answers, for each head, the row of to that
// stands for it. Content is never copied: a copy names the same hash.
func (s *Server) copyRevisions(ctx context.Context, q *db.Queries, from, to int64, heads []int64) (map[int64]db.DocumentRevision, error) {
	// the copied revisions' columns bind what the source's bound
	if err := q.DocumentFieldBindingsCopy(ctx, db.DocumentFieldBindingsCopyParams{ToDocumentID: to, FromDocumentID: from}); err != nil {
		return nil, err
	}
	src, err := q.RevisionsOfDocument(ctx, from)
	if err != nil {
		return nil, err
	}
	byID := make(map[int64]db.DocumentRevision, len(src))
	for _, r := range src {
		byID[r.ID] = r
	}
	dst, err := q.RevisionsOfDocument(ctx, to)
	if err != nil {
		return nil, err
	}
	have := make(map[int64]db.DocumentRevision, len(dst)) // identity -> row of to
	for _, r := range dst {
		if _, ok := have[revisionIdentity(r)]; !ok {
			have[revisionIdentity(r)] = r
		}
	}
	parentsOf := func(r db.DocumentRevision) ([]int64, error) {
		var ps []db.ID
		if err := json.Unmarshal([]byte(r.Parents), &ps); err != nil {
			return nil, fmt.Errorf("revision %d: parents: %w", r.ID, err)
		}
		out := make([]int64, len(ps))
		for i, p := range ps {
			out[i] = int64(p)
		}
		return out, nil
	}
	copied := make(map[int64]db.DocumentRevision, len(src)) // row of from -> row of to
	// an explicit stack, parents before children: histories are long
	type frame struct {
		id      int64
		visited bool
	}
	for _, head := range heads {
		stack := []frame{{id: head}}
		for len(stack) > 0 {
			f := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if _, done := copied[f.id]; done {
				continue
			}
			r, ok := byID[f.id]
			if !ok {
				return nil, fmt.Errorf("revision %d is not a revision of document %d", f.id, from)
			}
			if row, ok := have[revisionIdentity(r)]; ok {
				copied[f.id] = row
				continue
			}
			ps, err := parentsOf(r)
			if err != nil {
				return nil, err
			}
			if !f.visited {
				stack = append(stack, frame{id: f.id, visited: true})
				for _, p := range ps {
					if _, done := copied[p]; !done {
						stack = append(stack, frame{id: p})
					}
				}
				continue
			}
			mapped := make([]db.ID, len(ps))
			for i, p := range ps {
				mapped[i] = db.ID(copied[p].ID)
			}
			var parentID *int64
			if r.ParentID != nil {
				id := copied[*r.ParentID].ID
				parentID = &id
			}
			pj, _ := json.Marshal(mapped)
			ident := revisionIdentity(r)
			row, err := q.RevisionCopy(ctx, db.RevisionCopyParams{ID: s.store.IDs.Next(), DocumentID: to, Hash: r.Hash,
				ParentID: parentID, Parents: string(pj), Generation: r.Generation, Message: r.Message, CreatedAt: r.CreatedAt,
				CreatedBy: r.CreatedBy, OriginRevisionID: &ident})
			if err != nil {
				return nil, err
			}
			copied[f.id], have[ident] = row, row
		}
	}
	return copied, nil
}

// documentFork is POST /documents/{id}: scope_fork of a share or
// EDIT_DOCUMENTS on the origin, and EDIT_DOCUMENTS where the fork will sit
// (organisation_id, default the origin's; project_id and package_id as for
// creation). The body is optional: {organisation_id?, title?, type_id?,
// project_id?, package_id?, discipline_id?, prefix_id?, fields?}. Within
// the origin's organisation the fork starts with the origin's title, type,
// links and field values; in another it starts with the title only (the
// rest names rows of the origin's organisation).
func (s *Server) documentFork(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var b documentBody
	if err := rq.decodeCreate(&b, documentReadOnly...); err != nil {
		return err
	}
	var out documentJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		origin, oa, err := documentAccess(rq.ctx, q, rq.user.ID, id, documentAbsent(http.StatusNotFound))
		if err != nil {
			return err
		}
		if err := oa.RequireDoc(DocFork); err != nil {
			return err
		}
		if origin.DeletedAt != nil {
			return documentAbsent(http.StatusNotFound)
		}
		orgID := origin.OrganisationID
		if b.OrganisationID != nil {
			orgID = int64(*b.OrganisationID)
		}
		if _, err := orgAccess(rq, q, orgID, http.StatusBadRequest, 0); err != nil {
			return err
		}
		d := db.Document{OrganisationID: orgID, Title: origin.Title, Fields: "{}", OriginID: &origin.ID}
		if orgID == origin.OrganisationID {
			d.TypeID, d.ProjectID, d.PackageID, d.DisciplineID, d.Fields = origin.TypeID, origin.ProjectID, origin.PackageID, origin.DisciplineID, origin.Fields
			d.AssetGroupID, d.AssetID = origin.AssetGroupID, origin.AssetID
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
		branches, err := q.BranchList(rq.ctx, origin.ID)
		if err != nil {
			return err
		}
		heads := make([]int64, len(branches))
		for i, br := range branches {
			heads[i] = br.RevisionID
		}
		copied, err := s.copyRevisions(rq.ctx, q, origin.ID, d.ID, heads)
		if err != nil {
			return err
		}
		now := s.nowText()
		for _, br := range branches {
			nb, err := q.BranchCreate(rq.ctx, db.BranchCreateParams{ID: s.store.IDs.Next(), OrganisationID: d.OrganisationID,
				DocumentID: d.ID, Name: br.Name, RevisionID: copied[br.RevisionID].ID, CreatedAt: now, CreatedBy: rq.user.ID})
			if err != nil {
				return err
			}
			if origin.DefaultBranchID != nil && *origin.DefaultBranchID == br.ID {
				if err := q.DocumentSetDefaultBranch(rq.ctx, db.DocumentSetDefaultBranchParams{ID: d.ID, DefaultBranchID: &nb.ID}); err != nil {
					return err
				}
				d.DefaultBranchID = &nb.ID
			}
		}
		a.Scopes.Document = d.ID
		out, err = renderDocument(rq.ctx, q, d, a)
		return err
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusCreated, out)
}
