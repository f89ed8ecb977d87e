package server

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"testing"
	"time"

	"workspace/db"
)

// benchWorkItems seeds 100,000 work items in 20 organisations (5,000 each),
// the caller a member of all 20 and assigned to every every-th, another user
// to the rest. Rows go in by SQL: the handlers are not what is measured here.
func benchWorkItems(b *testing.B, every int) (*testEnv, *testUser, []string) {
	b.Helper()
	e := newEnv(b)
	owner, me := e.user("owner"), e.user("me")
	var orgs []string
	for i := range 20 {
		org := e.org(owner, fmt.Sprint("Org ", i))
		e.addMember(org, me)
		orgs = append(orgs, org)
	}
	now := e.srv.nowText()
	err := e.store.InTxSQL(context.Background(), func(tx *sql.Tx, _ *db.Queries) error {
		for _, org := range orgs {
			oid, _ := db.ParseID(org)
			types := []int64{e.store.IDs.Next(), e.store.IDs.Next()}
			for _, t := range types {
				if _, err := tx.Exec(`INSERT INTO work_item_types(id, organisation_id, name, colour, created_at) VALUES (?, ?, 'T', '#000000', ?)`, t, int64(oid), now); err != nil {
					return err
				}
			}
			for n := 1; n <= 5000; n++ {
				id := e.store.IDs.Next()
				status := "open"
				if n%3 == 0 {
					status = "closed"
				}
				start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(n) * time.Hour)
				if _, err := tx.Exec(`INSERT INTO work_items(id, organisation_id, type_id, number, formatted_number, title, status, start_at,
					created_at, created_by, updated_at, updated_by) VALUES (?, ?, ?, ?, ?, 'Work', ?, ?, ?, ?, ?, ?)`,
					id, int64(oid), types[n%2], n, fmt.Sprint(n), status, db.FormatTime(start), now, owner.id, now, owner.id); err != nil {
					return err
				}
				who := owner.id
				if n%every == 0 {
					who = me.id
				}
				if _, err := tx.Exec(`INSERT INTO work_item_assignees(work_item_id, user_id) VALUES (?, ?)`, id, who); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return e, me, orgs
}

// BenchmarkUserWorkItems: filtered pages of GET /users/@me/work-items over
// 100,000 work items in 20 organisations, for a caller assigned to 2,000 and
// to 10,000 of them; reports the p99 latency (the issue asks under 50 ms)
// beside ns/op. Each request reads every work item of the caller's that its
// filter matches (for the counts), so cost grows with the caller's share.
func BenchmarkUserWorkItems(b *testing.B) {
	for _, every := range []int{50, 10} {
		b.Run(fmt.Sprintf("assigned=%d", 100_000/every), func(b *testing.B) { benchUserWorkItems(b, every) })
	}
}

func benchUserWorkItems(b *testing.B, every int) {
	e, me, orgs := benchWorkItems(b, every)
	filters := []string{
		"status=open&$top=50",
		"organisation=%s&status=closed&$top=50",
		"$filter=" + url.QueryEscape("start_at ge 2026-03-01T00:00:00Z and status eq 'open'") + "&$top=50&$skip=100",
		"organisation=%s&start_date=2026-02-01&$top=50",
	}
	var lat []time.Duration
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		path := "/users/@me/work-items?" + filters[i%len(filters)]
		if i%len(filters)%2 == 1 {
			path = fmt.Sprintf(path, orgs[i%len(orgs)])
		}
		r := httptest.NewRequest("GET", path, nil)
		r.Header.Set("Authorization", "Bearer "+e.bearer(me))
		rec := httptest.NewRecorder()
		t0 := time.Now()
		e.srv.ServeHTTP(rec, r)
		lat = append(lat, time.Since(t0))
		if rec.Code != http.StatusOK {
			b.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}
