package server

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"workspace/db/dbtest"

	"workspace/db"
	"workspace/server/docengine"
)

// BenchmarkSyncCatchUp: the long catch-up of issue 31 (docs/sync.md,
// "A long catch-up"): a laptop away while both sides worked exchanges over
// real HTTP with the hub: tens of thousands of change-log entries each way,
// a large document (thousands of clauses) edited on both sides in many
// revisions (so many chunks each way and heads merged by the hub), and
// files. One fixed workload (-benchtime 1x):
//
//	go test -run '^$' -bench SyncCatchUp -benchtime 1x ./server/
//
// It reports the exchange's seconds, the HTTP requests it made, and the
// process's peak Go heap and RSS during it (hub and laptop share this
// process, so both are the two nodes together).
func BenchmarkSyncCatchUp(b *testing.B) {
	const (
		clauses   = 2000 // the document's size before the laptop left
		revisions = 150  // made on each side while apart
		rows      = 14000
		files     = 150 // small files on each side
	)
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		e := newEnv(b)
		e.clock.Advance(time.Since(e.clock.Now())) // the laptop signs with the wall clock
		ctx := context.Background()
		alice := e.user("alice")
		acme := e.org(alice, "Acme")
		org, _ := db.ParseID(acme)
		user, _ := db.ParseID(alice.ID)
		docText := e.must(201, alice, "POST", "/documents", map[string]any{"organisation_id": acme, "title": "Site spec"}).obj(b)["id"].(string)
		docID, _ := db.ParseID(docText)
		text := strings.Repeat("The contractor shall keep the works in good order. ", 12)
		nodeCommit(b, e.store, int64(docID), func(d *docengine.Doc) error {
			items := make([]docengine.NewClause, clauses)
			for k := range items {
				items[k] = docengine.NewClause{ID: 1_000_000 + int64(k), Text: fmt.Sprint(k, " ", text)}
			}
			return d.AppendClauses(0, items)
		})
		counted := &countingHandler{h: e.srv}
		hub := httptest.NewServer(counted)
		node := cloneStore(b, e, alice, acme, hub.URL)

		// Apart: each side edits its own clauses in many revisions (clean
		// merges for the hub), writes rows and attaches files.
		for k := 0; k < revisions; k++ {
			for side, s := range []*db.Store{e.store, node} {
				id := int64(1_000_000 + (k*2+side)*(clauses/(2*revisions)))
				t := fmt.Sprint("edited on side ", side, " in revision ", k, " ", text)
				nodeCommit(b, s, int64(docID), func(d *docengine.Doc) error { return d.PatchClause(id, nil, &t) })
			}
		}
		for side, s := range []*db.Store{e.store, node} {
			if err := writeRows(ctx, s, int64(org), int64(user), rows, side); err != nil {
				b.Fatal(err)
			}
			for k := 0; k < files; k++ {
				data, hash := pieceFile(8<<10+k, byte(side*files+k))
				attachFile(b, s, int64(org), data, hash)
			}
		}
		big, bigHash := pieceFile(6<<20, 99) // one large file, in pieces
		attachFile(b, node, int64(org), big, bigHash)

		counted.n.Store(0)
		m := dbtest.StartMemPeak()
		b.ReportMetric(dbtest.RSSNow(), "start-RSS-MB")
		b.StartTimer()
		start := time.Now()
		res, err := SyncNow(ctx, node, 0, nil)
		took := time.Since(start)
		b.StopTimer()
		heapMB, rssMB := m.End()
		if err != nil {
			b.Fatal(err)
		}
		hubText, nodeText := nodeClauses(b, e.store, int64(docID)), nodeClauses(b, node, int64(docID))
		if !slices.Equal(hubText, nodeText) || len(hubText) != min(clauses, 1000) {
			b.Fatalf("the document differs after the exchange: hub %d clauses, laptop %d", len(hubText), len(nodeText))
		}
		for side, s := range []*db.Store{e.store, node} {
			var n int
			if err := s.Reader.QueryRow(`SELECT count(*) FROM projects WHERE organisation_id = ?`, int64(org)).Scan(&n); err != nil || n != 2*rows/2 {
				b.Fatalf("side %d holds %d projects (%v), want %d", side, n, err, rows)
			}
			if len(heldFile(b, s, bigHash)) != len(big) {
				b.Fatalf("side %d lacks the large file", side)
			}
		}
		b.ReportMetric(took.Seconds(), "s/exchange")
		b.ReportMetric(float64(res.Sent), "sent")
		b.ReportMetric(float64(res.Received), "received")
		b.ReportMetric(float64(res.ObjectsSent+res.ObjectsReceived), "objects")
		b.ReportMetric(float64(counted.n.Load()), "requests")
		b.ReportMetric(heapMB, "peak-heap-MB")
		b.ReportMetric(rssMB, "peak-RSS-MB")
		hub.Close()
	}
}

// writeRows writes n change-log entries on s in transactions of 500, as
// requests would: a project made, then edits of it (half each).
func writeRows(ctx context.Context, s *db.Store, org, user int64, n, side int) error {
	for done := 0; done < n; {
		err := s.InTxSQL(ctx, func(tx *sql.Tx, q *db.Queries) error {
			var project int64
			for k := 0; k < 500 && done < n; k++ {
				var err error
				if done%2 == 0 {
					project = s.IDs.Next()
					_, err = tx.Exec(`INSERT INTO projects (id, organisation_id, name, status, created_at, created_by) VALUES (?, ?, ?, 'open', ?, ?)`,
						project, org, "Project "+strconv.Itoa(side)+"-"+strconv.Itoa(done), db.FormatTime(time.Now()), user)
				} else {
					_, err = tx.Exec(`UPDATE projects SET description = ? WHERE id = ?`, "Checked on side "+strconv.Itoa(side)+" "+strconv.Itoa(done), project)
				}
				if err != nil {
					return err
				}
				done++
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// countingHandler counts the requests the hub answers.
type countingHandler struct {
	h http.Handler
	n atomic.Int64
}

func (c *countingHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.n.Add(1)
	c.h.ServeHTTP(w, r)
}
