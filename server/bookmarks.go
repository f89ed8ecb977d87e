package server

import (
	"context"
	"net/http"
	"time"

	"workspace/db"
)

// Bookmarks (PUT|DELETE /documents/{id}/bookmark) and accessed_at: each
// user's own, shown on the document objects that user reads (bookmark,
// accessed_at), with bookmark_count counting everyone's. Decisions in
// docs/documents.md "Bookmarks and accessed_at".

// accessedAtStep is how stale a caller's recorded access may get before a
// read records it again: reading a document writes at most once a minute
// per user and document, so reads stay reads.
const accessedAtStep = time.Minute

type bookmarkJSON struct {
	DocumentID db.ID  `json:"document_id"`
	User       idJSON `json:"user"`
	CreatedAt  string `json:"created_at"`
}

func toBookmark(b db.DocumentBookmark) bookmarkJSON {
	return bookmarkJSON{DocumentID: db.ID(b.DocumentID), User: idJSON{db.ID(b.UserID)}, CreatedAt: b.CreatedAt}
}

// renderPersonal fills a document object's per-user parts: bookmark_count,
// and the bookmark and accessed_at of the user the access is for.
func renderPersonal(ctx context.Context, q *db.Queries, out *documentJSON, docID, userID int64) error {
	var err error
	if out.BookmarkCount, err = q.BookmarkCount(ctx, docID); err != nil {
		return err
	}
	if userID == 0 {
		return nil
	}
	b, err := q.BookmarkGet(ctx, db.BookmarkGetParams{DocumentID: docID, UserID: userID})
	switch {
	case err == nil:
		out.Bookmark = toBookmark(b)
	case !db.IsNotFound(err):
		return err
	}
	at, err := q.DocumentAccessGet(ctx, db.DocumentAccessGetParams{UserID: userID, DocumentID: docID})
	switch {
	case err == nil:
		out.AccessedAt = &at
	case !db.IsNotFound(err):
		return err
	}
	return nil
}

// noteAccess records that the caller read the document, unless its last
// recorded access is under accessedAtStep old, and shows it on out. It is
// its own small write after the read's snapshot: bookkeeping of the read,
// not part of what was read.
func (s *Server) noteAccess(rq *request, out *documentJSON) error {
	now := s.now()
	if out.AccessedAt != nil {
		if last, err := db.ParseTime(*out.AccessedAt); err == nil && now.Sub(last) < accessedAtStep && !now.Before(last) {
			return nil
		}
	}
	at := db.FormatTime(now)
	err := s.store.InTx(rq.ctx, func(q *db.Queries) error {
		return q.DocumentAccessTouch(rq.ctx, db.DocumentAccessTouchParams{UserID: rq.user.ID, DocumentID: int64(out.ID), AccessedAt: at})
	})
	if err != nil {
		return err
	}
	out.AccessedAt = &at
	return nil
}

// bookmarkPut bookmarks a live document the caller may view; bookmarking it
// again keeps the first bookmark. The body, if any, must be a JSON object
// (nothing in it is read).
func (s *Server) bookmarkPut(rq *request) error {
	var body struct{}
	if err := rq.decode(&body); err != nil {
		return err
	}
	var out bookmarkJSON
	err := s.store.InTx(rq.ctx, func(q *db.Queries) error {
		d, _, err := docContent(rq, q, DocView)
		if err != nil {
			return err
		}
		if _, err := q.BookmarkPut(rq.ctx, db.BookmarkPutParams{DocumentID: d.ID, UserID: rq.user.ID, CreatedAt: s.nowText()}); err != nil {
			return err
		}
		b, err := q.BookmarkGet(rq.ctx, db.BookmarkGetParams{DocumentID: d.ID, UserID: rq.user.ID})
		if err != nil {
			return err
		}
		out = toBookmark(b)
		return nil
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

// bookmarkDelete removes the caller's bookmark (204 also when there was
// none), on a document the caller may still view.
func (s *Server) bookmarkDelete(rq *request) error {
	err := s.store.InTx(rq.ctx, func(q *db.Queries) error {
		d, _, err := docContent(rq, q, DocView)
		if err != nil {
			return err
		}
		_, err = q.BookmarkDelete(rq.ctx, db.BookmarkDeleteParams{DocumentID: d.ID, UserID: rq.user.ID})
		return err
	})
	if err != nil {
		return err
	}
	return rq.noContent()
}
