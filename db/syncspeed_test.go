package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"workspace/db/dbtest"
)

// The speed targets of issue 31 (docs/sync.md "Speed of an exchange"): a
// busy site month of 100,000 changes exchanged in under a minute, a clone
// of an organisation with 10,000 projects and a 10,000-clause document in
// under 30 s, and the memory of a node during an exchange under 150 MB.
// Each is one fixed workload: run with -benchtime 1x.
//
//	go test -run '^$' -bench 'SyncBusyMonth|SyncCloneLarge' -benchtime 1x ./db/

const speedT = `'2026-11-01T07:00:00.000Z'`

// busySeed: the organisation's shared rows a site works on.
var busySeed = seedOrg + strings.ReplaceAll(`
INSERT INTO work_item_types (id, organisation_id, name, colour, created_at) VALUES (20, 10, 'Defect', '#cc0000', @T);
INSERT INTO asset_types (id, organisation_id, ephemerality, name, created_at) VALUES (31, 10, 0, 'Crane', @T);
INSERT INTO asset_groups (id, organisation_id, type_id, ephemerality, name, normalised_name, created_at, created_by, updated_at, updated_by) VALUES (30, 10, 31, 0, 'Crane 1', 'crane 1', @T, 1, @T, 1);
INSERT INTO documents (id, organisation_id, number, formatted_number, title, created_at, created_by, updated_at, updated_by) VALUES (40, 10, 1, 'D-1', 'Site diary', @T, 1, @T, 1);
INSERT INTO document_revisions (id, document_id, hash, generation, created_at, created_by) VALUES (41, 40, x'00', 0, @T, 1);
INSERT INTO document_branches (id, organisation_id, document_id, name, revision_id, created_at, created_by) VALUES (42, 10, 40, 'main', 41, @T, 1);
`, "@T", speedT)

// busyDay writes one busy site day on the site (in transactions of about
// 500 rows, as requests would): toolbox talks with their signatures,
// witness records, asset logs, work items made and edited, and cell edits
// of the site diary (a new revision and the branch head moved). It returns
// the next free id.
func busyDay(ctx context.Context, site *Store, day int, perDay int, id int64) (int64, error) {
	at := fmt.Sprintf("'2026-11-%02dT08:00:00.000Z'", 1+day%28)
	made := 0
	var items []int64
	// each day's first edit follows the last day's: one line of history
	var head int64
	if err := site.Reader.QueryRowContext(ctx, `SELECT revision_id FROM document_branches WHERE id = 42`).Scan(&head); err != nil {
		return id, err
	}
	for made < perDay {
		err := site.InTxSQL(ctx, func(tx *sql.Tx, q *Queries) error {
			exec := func(s string, args ...any) error {
				_, err := tx.Exec(strings.ReplaceAll(s, "@T", at), args...)
				return err
			}
			for n := 0; n < 500 && made < perDay; {
				id++
				// A talk and 9 signatures.
				tb := id
				if err := exec(`INSERT INTO toolboxes (id, organisation_id, title, totp_secret, created_at, created_by, updated_at, updated_by) VALUES (?, 10, ?, 'JBSWY3DPEHPK3PXP', @T, 1, @T, 1)`, tb, fmt.Sprint("Talk ", tb)); err != nil {
					return err
				}
				for k := 0; k < 9; k++ {
					id++
					if err := exec(`INSERT INTO toolbox_users (id, organisation_id, toolbox_id, first_name, last_name, signature, signed_at, signed_method) VALUES (?, 10, ?, 'Sam', ?, 'data:image/png;base64,iVBORw0KGgo=', @T, 'signature')`, id, tb, fmt.Sprint("Worker ", k)); err != nil {
						return err
					}
				}
				// Two work items made, three edits, a witness record.
				for k := 0; k < 2; k++ {
					id++
					items = append(items, id)
					if err := exec(`INSERT INTO work_items (id, organisation_id, type_id, number, formatted_number, title, status, project_id, created_at, created_by, updated_at, updated_by) VALUES (?, 10, 20, ?, ?, ?, 'open', 100, @T, 1, @T, 1)`, id, id, fmt.Sprint("W-", id), fmt.Sprint("Defect ", id)); err != nil {
						return err
					}
				}
				for k := 0; k < 3; k++ {
					w := items[(int(id)+k*7)%len(items)]
					if err := exec(`UPDATE work_items SET description = ?, status = ?, updated_at = @T WHERE id = ?`, fmt.Sprint("checked ", id, k), []string{"open", "closed"}[k%2], w); err != nil {
						return err
					}
				}
				id++
				if err := exec(`INSERT INTO witness_records (id, organisation_id, object_type, object_id, user_id, first_name, last_name, email, signed_at) VALUES (?, 10, 'work_item', ?, 1, 'Ann', 'Witness', 'a@example.com', @T)`, id, items[len(items)-1]); err != nil {
					return err
				}
				// Four asset logs.
				for k := 0; k < 4; k++ {
					id++
					if err := exec(`INSERT INTO asset_logs (id, organisation_id, asset_group_id, type, log, log_hash, logged_at, created_at, created_by, updated_at, updated_by) VALUES (?, 10, 30, 'comment', ?, 'h', @T, @T, 1, @T, 1)`, id, fmt.Sprint("Pre-start check ", id, ": hoist, brakes, limits fine")); err != nil {
						return err
					}
				}
				// Three cell edits: a revision each, the head moved.
				for k := 0; k < 3; k++ {
					id++
					// parents as the change flow writes them: the hub's merge base reads
					// them (without, every head the site sent looked unrelated to the
					// hub's and became a merge request, not a fast-forward)
					parents, _ := json.Marshal([]ID{ID(head)})
					if err := exec(`INSERT INTO document_revisions (id, document_id, hash, parent_id, parents, generation, message, created_at, created_by) VALUES (?, 40, ?, ?, ?, ?, 'cell edit', @T, 1)`, id, []byte(strconv.FormatInt(id, 16)), head, string(parents), id); err != nil {
						return err
					}
					head = id
					if err := exec(`UPDATE document_branches SET revision_id = ? WHERE id = 42`, id); err != nil {
						return err
					}
				}
				// 1 + 9 + 2 + 3 + 1 + 4 + 6 = 26 changes.
				n += 26
				made += 26
			}
			return nil
		})
		if err != nil {
			return id, err
		}
	}
	return id, nil
}

// speedPair makes a hub with the busy seed and a clone of it (node 2).
func speedPair(b *testing.B, seed string) (hub, site *Store) {
	ctx := context.Background()
	dir := b.TempDir()
	hub, err := Open(ctx, Options{Path: filepath.Join(dir, "hub.db"), Synchronous: "NORMAL", NodeID: 1})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { hub.Close() })
	if err := hub.InTxSQL(ctx, func(tx *sql.Tx, q *Queries) error { _, err := tx.Exec(seed); return err }); err != nil {
		b.Fatal(err)
	}
	clonePath := filepath.Join(dir, "site.db")
	if _, err := hub.Writer.ExecContext(ctx, `VACUUM INTO ?`, clonePath); err != nil {
		b.Fatal(err)
	}
	site, err = Open(ctx, Options{Path: clonePath, Synchronous: "NORMAL", NodeID: 2})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { site.Close() })
	if err := site.SyncRecordClonedLog(ctx); err != nil {
		b.Fatal(err)
	}
	return hub, site
}

// BenchmarkSyncBusyMonth: 30 busy site days, 100,000 changes (talks and
// signatures, witness records, asset logs, work items made and edited, cell
// edits of a document), made on a site and sent to the hub in pages of
// 1,000 (the transport's page is 500; bigger pages are fewer rounds), each
// read from the site's log, encoded and decoded as the transport's JSON and
// applied on the hub as the exchange does (the HTTP round trip is left out).
// Reports the seconds the 100,000 took, changes/s, and the peak heap and
// RSS of the process during the exchange (both nodes are in this one
// process: the server's own share is less).
func BenchmarkSyncBusyMonth(b *testing.B) {
	ctx := context.Background()
	const days, perDay = 30, 3334 // 100,020 changes
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		hub, site := speedPair(b, busySeed)
		id := int64(100000)
		var err error
		for d := 0; d < days; d++ {
			if id, err = busyDay(ctx, site, d, perDay, id); err != nil {
				b.Fatal(err)
			}
		}
		var logged int
		if err := site.Reader.QueryRowContext(ctx, `SELECT count(*) FROM sync_changes WHERE origin = 2`).Scan(&logged); err != nil {
			b.Fatal(err)
		}
		mem := dbtest.StartMemPeak()
		b.StartTimer()
		start := time.Now()
		total, bytesSent := 0, 0
		for {
			vector, err := hub.SyncVector(ctx)
			if err != nil {
				b.Fatal(err)
			}
			page, err := site.SyncChangesFor(ctx, vector, []int64{10}, 1000)
			if err != nil {
				b.Fatal(err)
			}
			if len(page) == 0 {
				break
			}
			// Through the transport's JSON, as a page travels.
			body, err := json.Marshal(page)
			if err != nil {
				b.Fatal(err)
			}
			bytesSent += len(body)
			var got []SyncEntry
			if err := json.Unmarshal(body, &got); err != nil {
				b.Fatal(err)
			}
			n, err := hub.ApplySyncChanges(ctx, got, []int64{10})
			if err != nil {
				b.Fatal(err)
			}
			total += n
		}
		took := time.Since(start)
		b.StopTimer()
		heapMB, rssMB := mem.End()
		if total < 100000 {
			b.Fatalf("exchanged %d changes (%d logged), want 100,000", total, logged)
		}
		var evidence int
		if err := hub.Reader.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM toolbox_users) + (SELECT count(*) FROM asset_logs) + (SELECT count(*) FROM witness_records)`).Scan(&evidence); err != nil {
			b.Fatal(err)
		}
		if want := logged * 14 / 26; evidence < want-30 || evidence > want+30 {
			b.Fatalf("the hub holds %d evidence rows, want about %d", evidence, want)
		}
		// Only the site edited the diary: the hub fast-forwarded to its head
		// and opened no merge request.
		var hubHead, siteHead, requests int64
		if err := hub.Reader.QueryRowContext(ctx, `SELECT (SELECT revision_id FROM document_branches WHERE id = 42), (SELECT count(*) FROM document_merge_requests)`).Scan(&hubHead, &requests); err != nil {
			b.Fatal(err)
		}
		if err := site.Reader.QueryRowContext(ctx, `SELECT revision_id FROM document_branches WHERE id = 42`).Scan(&siteHead); err != nil {
			b.Fatal(err)
		}
		if hubHead != siteHead || requests != 0 {
			b.Fatalf("the hub's diary head %d, the site's %d, merge requests %d: want a fast-forward", hubHead, siteHead, requests)
		}
		b.ReportMetric(took.Seconds(), "s/exchange")
		b.ReportMetric(float64(total)/took.Seconds(), "changes/s")
		b.ReportMetric(heapMB, "peak-heap-MB")
		b.ReportMetric(rssMB, "peak-RSS-MB")
		b.ReportMetric(float64(total), "changes")
		b.ReportMetric(float64(bytesSent)/(1<<20), "JSON-MB")
		hub.Close()
		site.Close()
	}
}

// BenchmarkSyncCloneLarge: the hub's clone of an organisation with 10,000
// projects and a document of 10,000 clauses (its revision chain's chunks,
// one a clause), and a second organisation the clone leaves out: the
// hub's copy and prune (SyncWriteClone) and the laptop's finish
// (SyncFinishClone: the log marked, the derived tables rebuilt). The HTTP
// transfer is a file stream on top. Reports seconds, the clone's size and
// the peak heap and RSS.
func BenchmarkSyncCloneLarge(b *testing.B) {
	ctx := context.Background()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		dir := b.TempDir()
		hub, err := Open(ctx, Options{Path: filepath.Join(dir, "hub.db"), Synchronous: "NORMAL", NodeID: 1})
		if err != nil {
			b.Fatal(err)
		}
		if err := hub.InTxSQL(ctx, func(tx *sql.Tx, q *Queries) error {
			if _, err := tx.Exec(busySeed); err != nil {
				return err
			}
			if _, err := tx.Exec(`INSERT INTO organisations (id, name, owned_by, created_at) VALUES (11, 'Other', 1, ` + speedT + `)`); err != nil {
				return err
			}
			for k := 0; k < 10000; k++ {
				for _, org := range []int{10, 11} {
					if _, err := tx.Exec(`INSERT INTO projects (id, organisation_id, code, name, description, status, created_at, created_by) VALUES (?, ?, ?, ?, ?, 'open', `+speedT+`, 1)`,
						200000+org*100000+k, org, fmt.Sprint("P", k), fmt.Sprint("Project ", k), "A project of the site programme, phase "+strconv.Itoa(k%7)); err != nil {
						return err
					}
				}
			}
			return nil
		}); err != nil {
			b.Fatal(err)
		}
		// A real 10,000-clause document in each organisation (the engine's
		// chunks under a revision): the clone copies its own organisation's.
		newSyncDoc(b, hub, 500, 10, 10000)
		newSyncDoc(b, hub, 600, 11, 10000)
		mem := dbtest.StartMemPeak()
		b.StartTimer()
		start := time.Now()
		clonePath := filepath.Join(dir, "site.db")
		if _, err := hub.SyncWriteClone(ctx, clonePath, []int64{10}, 2); err != nil {
			b.Fatal(err)
		}
		site, err := Open(ctx, Options{Path: clonePath, Synchronous: "NORMAL", NodeID: 2})
		if err != nil {
			b.Fatal(err)
		}
		if err := site.SyncFinishClone(ctx, []int64{10}); err != nil {
			b.Fatal(err)
		}
		took := time.Since(start)
		b.StopTimer()
		heapMB, rssMB := mem.End()
		var n int
		if err := site.Reader.QueryRowContext(ctx, `SELECT count(*) FROM projects`).Scan(&n); err != nil || n != 10001 {
			b.Fatalf("the clone holds %d projects (%v), want 10,001", n, err)
		}
		// The document reads on the laptop (its first 1,000 clauses, from
		// the copied chunks); the other organisation's is not there.
		if got := docText(b, site, 501); len(got) != 1000 || got[999] != "1000:clause 1000|" {
			b.Fatalf("the clone reads %d clauses of its document", len(got))
		}
		if err := site.Reader.QueryRowContext(ctx, `SELECT count(*) FROM document_branches WHERE id = 601`).Scan(&n); err != nil || n != 0 {
			b.Fatalf("the other organisation's document reached the clone (%d, %v)", n, err)
		}
		st, err := os.Stat(clonePath)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(took.Seconds(), "s/clone")
		b.ReportMetric(float64(st.Size())/(1<<20), "clone-MB")
		b.ReportMetric(heapMB, "peak-heap-MB")
		b.ReportMetric(rssMB, "peak-RSS-MB")
		site.Close()
		hub.Close()
	}
}
