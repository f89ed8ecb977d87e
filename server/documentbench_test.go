package server

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"workspace/db"
	"workspace/server/docengine"
)

// newEnvFull is newEnv on a store with synchronous=FULL, the default of
// serve, for benchmarks that quote write costs.
func newEnvFull(b *testing.B) *testEnv {
	b.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	store, err := db.Open(ctx, db.Options{Path: filepath.Join(b.TempDir(), "bench.db"), Synchronous: "FULL", NodeID: -1})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { store.Close() })
	b.Cleanup(cancel)
	clock := &testClock{now: time.Date(2026, 11, 21, 9, 30, 0, 0, time.UTC)}
	cfg := Config{Issuer: "http://workspace.test", Registration: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Now: clock.Now}
	srv, err := New(ctx, store, cfg)
	if err != nil {
		b.Fatal(err)
	}
	return &testEnv{t: b, srv: srv, store: store, clock: clock, cfg: cfg}
}

// seedDocument makes a document whose default branch holds n clauses
// with one cell each in column "Val", built by the engine in one write.
func seedDocument(b *testing.B, e *testEnv, n int) (owner *testUser, docID string, head string, column, firstClause int64) {
	b.Helper()
	owner = e.user("owner")
	org := e.org(owner, "Bench")
	docID = e.must(http.StatusCreated, owner, "POST", "/documents", map[string]any{"organisation_id": org, "title": "Big"}).obj(b)["id"].(string)
	id, _ := db.ParseID(docID)
	ctx := context.Background()
	err := e.store.InTx(ctx, func(q *db.Queries) error {
		d, err := q.DocumentGet(ctx, int64(id))
		if err != nil {
			return err
		}
		br, err := q.BranchGet(ctx, *d.DefaultBranchID)
		if err != nil {
			return err
		}
		rev, err := q.RevisionGet(ctx, br.RevisionID)
		if err != nil {
			return err
		}
		st := docengine.NewStage(chunkStore{ctx, q})
		doc, err := st.Open(hashOf(rev.Hash))
		if err != nil {
			return err
		}
		column = e.store.IDs.Next()
		if err := doc.AddColumn(docengine.Column{ID: column, Name: "Val", Type: "text"}); err != nil {
			return err
		}
		items := make([]docengine.NewClause, n)
		for i := range items {
			items[i] = docengine.NewClause{ID: e.store.IDs.Next(), Text: fmt.Sprintf("Clause %d: the contractor shall provide the works described.", i),
				Cells: map[int64]string{column: fmt.Sprint(i)}}
		}
		firstClause = items[0].ID
		if err := doc.AppendClauses(0, items); err != nil {
			return err
		}
		h, err := doc.Save()
		if err != nil {
			return err
		}
		if _, err := st.Flush(h); err != nil {
			return err
		}
		nr, err := q.RevisionCreate(ctx, db.RevisionCreateParams{ID: e.store.IDs.Next(), DocumentID: d.ID, Hash: h[:], ParentID: &rev.ID,
			Parents: "[]", Generation: 1, CreatedAt: e.srv.nowText(), CreatedBy: rev.CreatedBy})
		if err != nil {
			return err
		}
		head = h.String()
		_, err = q.BranchMove(ctx, db.BranchMoveParams{ID: br.ID, RevisionID: nr.ID, OldRevisionID: rev.ID})
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	return owner, docID, head, column, firstClause
}

func chunkBytes(b *testing.B, e *testEnv) int64 {
	var n int64
	if err := e.store.Reader.QueryRowContext(context.Background(), "SELECT coalesce(sum(length(hash) + length(data)), 0) FROM document_chunks").Scan(&n); err != nil {
		b.Fatal(err)
	}
	return n
}

// BenchmarkDocumentCellEdit: one-cell edits of a 10,000-clause document
// through HTTP on synchronous=FULL, one after another on the head (server
// time per edit; new-bytes/op is the chunk storage each edit adds).
func BenchmarkDocumentCellEdit(b *testing.B) {
	e := newEnvFull(b)
	owner, docID, head, column, _ := seedDocument(b, e, 10000)
	clauses := e.must(http.StatusOK, owner, "GET", "/documents/"+docID+"/revisions/"+head+"/clauses?$top=1000", nil).arr(b)
	before := chunkBytes(b, e)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cl := clauses[i%len(clauses)]["clause_id"]
		r := e.do(owner, "PATCH", "/documents/"+docID+"/revisions/"+head+"/fields",
			map[string]any{"clause_id": cl, "column_id": db.ID(column).String(), "value": fmt.Sprint("edit ", i)})
		if r.Status != http.StatusOK {
			b.Fatalf("status %d: %s", r.Status, r.Body)
		}
		head = r.obj(b)["hash"].(string)
	}
	b.StopTimer()
	b.ReportMetric(float64(chunkBytes(b, e)-before)/float64(b.N), "new-bytes/op")
}

// BenchmarkDocumentClausePage: a page of 100 clauses from the middle of a
// 100,000-clause document.
func BenchmarkDocumentClausePage(b *testing.B) {
	e := newEnvFull(b)
	owner, docID, head, _, _ := seedDocument(b, e, 100000)
	path := "/documents/" + docID + "/revisions/" + head + "/clauses?$skip=50000&$top=100"
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r := e.do(owner, "GET", path, nil)
		if r.Status != http.StatusOK {
			b.Fatalf("status %d", r.Status)
		}
	}
}
