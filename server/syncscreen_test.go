package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"workspace/db"
)

// syncLaptop clones acme of f's hub (served at its own URL) into a new
// file and starts a server over it: a site laptop. Both clocks follow the
// wall clock, as signed requests do.
func syncLaptop(t *testing.T, f *orgFixture) (hub *httptest.Server, l *testEnv, alice *testUser) {
	t.Helper()
	return laptopOf(t, f.e, f.alice, f.acme)
}

// laptopOf clones org of e (served at its own URL), paired by its owner,
// into a laptop's server; owner is the owner's token there.
func laptopOf(t *testing.T, e *testEnv, owner *testUser, org string) (hub *httptest.Server, l *testEnv, ownerThere *testUser) {
	t.Helper()
	e.clock.Advance(time.Since(e.clock.Now()))
	hub = httptest.NewServer(e.srv)
	t.Cleanup(hub.Close)
	code := e.must(201, owner, "POST", "/organisations/"+org+"/sync/pairing-codes", map[string]any{}).obj(t)["code"].(string)
	path := filepath.Join(t.TempDir(), "site.db")
	if _, _, err := SyncClone(context.Background(), hub.URL, code, "Site office", path, io.Discard); err != nil {
		t.Fatal(err)
	}
	l = openEnv(t, path)
	l.clock.Advance(time.Since(l.clock.Now()))
	u, err := l.store.R.UserGet(context.Background(), owner.id)
	if err != nil {
		t.Fatal(err)
	}
	return hub, l, l.tokenFor(u)
}

// waitSync polls the laptop's exchange until it is no longer running.
func waitSync(t *testing.T, l *testEnv, u *testUser, org string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		o := l.must(200, u, "GET", "/organisations/"+org+"/sync/now", nil).obj(t)
		if o["state"] != "running" {
			return o
		}
		if time.Now().After(deadline) {
			t.Fatalf("the exchange is still running: %v", o)
		}
		time.Sleep(20 * time.Millisecond) // polling with a deadline, not a timing assertion
	}
}

// TestSyncScreen: Sync now on a laptop moves changes each way and its
// progress and result are read back; the status and the hub's node list
// show the last exchange's counts and the numbers left; one exchange at a
// time; a hub that cannot be reached or has revoked the laptop is said in
// plain words; the banner's flag after a day; access, the head office
// refusal and the foreign organisation.
func TestSyncScreen(t *testing.T) {
	t.Parallel()
	f := newOrgFixture(t)
	hub, l, alice := syncLaptop(t, f)
	acme := "/organisations/" + f.acme
	bobRow, err := l.store.R.UserGet(context.Background(), f.bob.id)
	if err != nil {
		t.Fatal(err)
	}
	bob := l.tokenFor(bobRow)

	f.e.must(201, f.alice, "POST", acme+"/projects", map[string]any{"name": "Made at head office"})
	l.must(201, alice, "POST", acme+"/projects", map[string]any{"name": "Made on site"})

	l.run(t, []scenario{
		{"nothing ran yet", alice, "GET", acme + "/sync/now", nil, 200, func(t *testing.T, r *testResponse) {
			if o := r.obj(t); o["state"] != "idle" || o["error"] != nil {
				t.Errorf("got %v", o)
			}
		}},
		{"a member cannot start", bob, "POST", acme + "/sync/now", nil, 403, nil},
		{"a member cannot follow", bob, "GET", acme + "/sync/now", nil, 403, nil},
		{"an organisation the laptop lacks", alice, "POST", "/organisations/123456789/sync/now", nil, 404, nil},
		{"no token", nil, "POST", acme + "/sync/now", nil, 401, nil},
		{"the banner's flag before any exchange", alice, "GET", acme + "/sync/status", nil, 200, func(t *testing.T, r *testResponse) {
			h := r.obj(t)["hub"].(map[string]any)
			if h["pending_to_hub"].(float64) < 1 {
				t.Errorf("the site's project does not wait: %v", h)
			}
		}},
	})
	f.e.run(t, []scenario{
		{"head office does not start exchanges", f.alice, "POST", acme + "/sync/now", nil, 409, nil},
		{"another organisation's owner", f.mallory, "POST", acme + "/sync/now", nil, 403, nil},
		{"another organisation's owner cannot follow", f.mallory, "GET", acme + "/sync/now", nil, 403, nil},
		{"the other organisation on head office", f.mallory, "POST", "/organisations/" + f.evil + "/sync/now", nil, 409, nil},
	})

	started := l.must(202, alice, "POST", acme+"/sync/now", nil).obj(t)
	if started["state"] != "running" || started["to_send"].(float64) < 1 {
		t.Fatalf("started %v", started)
	}
	done := waitSync(t, l, alice, f.acme)
	if done["state"] != "done" || done["sent"].(float64) < 1 || done["received"].(float64) < 1 || done["finished_at"] == nil || done["error"] != nil {
		t.Fatalf("done %v", done)
	}
	var n int
	if err := l.store.Reader.QueryRow(`SELECT count(*) FROM projects WHERE name = 'Made at head office'`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("head office's project on the laptop: %d %v", n, err)
	}
	if err := l.store.Reader.QueryRow(`SELECT count(*) FROM audit_log WHERE action = 'POST /organisations/:id/sync/now'`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("the start's audit entries: %d %v", n, err)
	}
	st := l.must(200, alice, "GET", acme+"/sync/status", nil).obj(t)["hub"].(map[string]any)
	if st["last_sent"].(float64) < 1 || st["last_received"].(float64) < 1 || st["numbers_left"] == nil || st["not_synced_for_a_day"] != false || st["last_error"] != nil {
		t.Fatalf("status after the exchange: %v", st)
	}
	r := f.e.must(200, f.alice, "GET", acme+"/sync/nodes?$top=1", nil)
	nodes := r.arr(t)
	if len(nodes) != 1 || nodes[0]["last_received"].(float64) < 1 || nodes[0]["last_sent"].(float64) < 1 || nodes[0]["numbers_left"] == nil || r.Header.Get("X-Total-Count") != "1" {
		t.Fatalf("the hub's nodes: %v %v", nodes, r.Header)
	}
	f.e.run(t, []scenario{
		{"an empty page", f.alice, "GET", acme + "/sync/nodes?$skip=1", nil, 200, func(t *testing.T, r *testResponse) {
			if l := r.arr(t); len(l) != 0 || r.Header.Get("X-Total-Count") != "1" {
				t.Errorf("got %v", l)
			}
		}},
		{"a malformed page size", f.alice, "GET", acme + "/sync/nodes?$top=x", nil, 400, nil},
		{"an absent organisation's nodes", f.alice, "GET", "/organisations/123456789/sync/nodes", nil, 404, nil},
	})

	// One at a time: while one runs, asking again answers that one.
	run, err := beginSync(context.Background(), l.store)
	if err != nil {
		t.Fatal(err)
	}
	again := l.must(202, alice, "POST", acme+"/sync/now", nil).obj(t)
	if again["state"] != "running" || again["started_at"] != *run.get().StartedAt {
		t.Fatalf("a second start: %v", again)
	}
	if _, err := beginSync(context.Background(), l.store); !errors.Is(err, errSyncBusy) {
		t.Fatalf("a second exchange began: %v", err)
	}
	run.end(SyncResult{}, "")

	// Another program on the same file (a `sync now` in a terminal) holds
	// the file's lease: the laptop's server starts none and says so; once
	// it ends, the server starts again (the revocation below).
	var file string
	if err := l.store.Reader.QueryRow(`SELECT file FROM pragma_database_list WHERE name = 'main'`).Scan(&file); err != nil {
		t.Fatal(err)
	}
	other, err := db.Open(context.Background(), db.Options{Path: file, NodeID: -1, Unprepared: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	otherRun, err := beginSync(context.Background(), other)
	if err != nil {
		t.Fatal(err)
	}
	refused := l.must(202, alice, "POST", acme+"/sync/now", nil).obj(t)
	if words, _ := refused["error"].(string); refused["state"] != "failed" || !strings.Contains(words, "another program on this laptop") {
		t.Fatalf("a start beside another program's exchange: %v", refused)
	}
	if _, err := beginSync(context.Background(), l.store); !errors.Is(err, errSyncElsewhere) {
		t.Fatalf("an exchange began beside another program's: %v", err)
	}
	otherRun.end(SyncResult{}, "")

	// Head office revokes the laptop: refused, in words.
	nodeID := strconv.FormatInt(l.store.NodeID(), 10)
	f.e.must(204, f.alice, "DELETE", acme+"/sync/nodes/"+nodeID, nil)
	l.must(202, alice, "POST", acme+"/sync/now", nil)
	if o := waitSync(t, l, alice, f.acme); o["state"] != "failed" || !strings.Contains(o["error"].(string), "no longer accepts this laptop") {
		t.Fatalf("revoked: %v", o)
	}
	// Head office out of reach: said so, and kept as the last error.
	hub.Close()
	l.must(202, alice, "POST", acme+"/sync/now", nil)
	o := waitSync(t, l, alice, f.acme)
	if o["state"] != "failed" || !strings.Contains(o["error"].(string), "could not be reached") {
		t.Fatalf("unreachable: %v", o)
	}
	st = l.must(200, alice, "GET", acme+"/sync/status", nil).obj(t)["hub"].(map[string]any)
	if st["last_error"] != o["error"] {
		t.Fatalf("the last error %v, want %v", st["last_error"], o["error"])
	}

	f.e.run(t, []scenario{
		{"head office's status without its nodes", f.alice, "GET", acme + "/sync/status?nodes=false", nil, 200, func(t *testing.T, r *testResponse) {
			if o := r.obj(t); o["hub"] != nil || len(o["nodes"].([]any)) != 0 {
				t.Errorf("got %v", o)
			}
		}},
		{"head office's status with its nodes", f.alice, "GET", acme + "/sync/status?nodes=true", nil, 200, func(t *testing.T, r *testResponse) {
			if o := r.obj(t); len(o["nodes"].([]any)) != 1 {
				t.Errorf("got %v", o)
			}
		}},
		{"nodes neither true nor false", f.alice, "GET", acme + "/sync/status?nodes=maybe", nil, 400, nil},
		{"another organisation's owner without nodes", f.mallory, "GET", acme + "/sync/status?nodes=false", nil, 403, nil},
	})

	// A day without an exchange raises the banner's flag.
	if _, err := l.store.Writer.Exec(`UPDATE sync_hub SET last_exchange_at = ?`, db.FormatTime(l.clock.Now().Add(-25*time.Hour))); err != nil {
		t.Fatal(err)
	}
	if st := l.must(200, alice, "GET", acme+"/sync/status?nodes=false", nil).obj(t)["hub"].(map[string]any); st["not_synced_for_a_day"] != true {
		t.Fatalf("a day later: %v", st)
	}
}

// TestSyncErrorWords: each way an exchange stops has words a person can
// act on, and none shows a status code.
func TestSyncErrorWords(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		err  error
		want string
	}{
		{&hubRefusal{Status: 401, Message: "revoked"}, "no longer accepts this laptop"},
		{&hubRefusal{Status: 422, Message: "entry 3"}, "refused some of this laptop's changes"},
		{&hubRefusal{Status: 502}, "had a problem"},
		{&hubRefusal{Status: 409}, "refused the exchange"},
		{context.Canceled, "shutting down"},
		{errSyncBusy, "already running"},
		{fmt.Errorf("%w (process 4242 on site-laptop)", errSyncElsewhere), "another program on this laptop"},
		{errSyncLeaseLost, "took over"},
		{fmt.Errorf("%w: %w", errSyncPiecesDropped, &hubRefusal{Status: 422, Message: "dropped its pieces"}), "again from its start"},
		{errors.New("applying the hub's page: disk full"), "stopped before it finished"},
	} {
		got := syncErrorWords("https://hub.example.com", c.err)
		if !strings.Contains(got, c.want) || strings.ContainsAny(got, "0123456789") {
			t.Errorf("%v: %q", c.err, got)
		}
	}
}

// TestSyncSiteMergeRequests: the open merge requests from site branches
// (site/...) are listed for owners, paged; one from another branch, a
// closed one and another organisation's are not.
func TestSyncSiteMergeRequests(t *testing.T) {
	t.Parallel()
	f := newOrgFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	doc := e.must(201, f.alice, "POST", "/documents", map[string]any{"organisation_id": f.acme, "title": "Method statement"}).obj(t)["id"].(string)
	// A person cannot name a branch site/...: only an exchange does (the
	// branches are renamed so below, standing in for it).
	for _, b := range []string{"site-7-main", "site-7-draft", "draft"} {
		e.must(201, f.alice, "POST", "/documents/"+doc+"/branches", map[string]any{"name": b})
	}
	site := e.must(201, f.alice, "POST", "/documents/"+doc+"/merge-requests", map[string]any{"from_branch": "site-7-main", "to_branch": "main", "title": "Site office's edits"}).obj(t)
	closed := e.must(201, f.alice, "POST", "/documents/"+doc+"/merge-requests", map[string]any{"from_branch": "site-7-draft", "to_branch": "main"}).obj(t)
	e.must(200, f.alice, "POST", "/documents/"+doc+"/merge-requests/"+strconv.Itoa(int(closed["number"].(float64)))+"/close", nil)
	e.must(201, f.alice, "POST", "/documents/"+doc+"/merge-requests", map[string]any{"from_branch": "draft", "to_branch": "main"})
	evilDoc := e.must(201, f.mallory, "POST", "/documents", map[string]any{"organisation_id": f.evil, "title": "Evil plan"}).obj(t)["id"].(string)
	e.must(201, f.mallory, "POST", "/documents/"+evilDoc+"/branches", map[string]any{"name": "site-9-main"})
	e.must(201, f.mallory, "POST", "/documents/"+evilDoc+"/merge-requests", map[string]any{"from_branch": "site-9-main", "to_branch": "main"})
	if _, err := e.store.Writer.Exec(`UPDATE document_branches SET name = replace(name, '-', '/') WHERE name LIKE 'site-%'`); err != nil {
		t.Fatal(err)
	}

	e.run(t, []scenario{
		{"the site's open one", f.alice, "GET", acme + "/sync/merge-requests", nil, 200, func(t *testing.T, r *testResponse) {
			l := r.arr(t)
			if len(l) != 1 || l[0]["id"] != site["id"] || l[0]["document_id"] != doc || l[0]["document_title"] != "Method statement" ||
				l[0]["from_branch"] != "site/7/main" || l[0]["to_branch"] != "main" || r.Header.Get("X-Total-Count") != "1" {
				t.Errorf("got %v", l)
			}
		}},
		{"an empty page", f.alice, "GET", acme + "/sync/merge-requests?$skip=1", nil, 200, func(t *testing.T, r *testResponse) {
			if l := r.arr(t); len(l) != 0 || r.Header.Get("X-Total-Count") != "1" {
				t.Errorf("got %v", l)
			}
		}},
		{"a malformed page size", f.alice, "GET", acme + "/sync/merge-requests?$top=-1", nil, 400, nil},
		{"a member", f.bob, "GET", acme + "/sync/merge-requests", nil, 403, nil},
		{"another organisation's owner", f.mallory, "GET", acme + "/sync/merge-requests", nil, 403, nil},
		{"the other organisation's own", f.mallory, "GET", "/organisations/" + f.evil + "/sync/merge-requests", nil, 200, func(t *testing.T, r *testResponse) {
			if l := r.arr(t); len(l) != 1 || l[0]["document_title"] != "Evil plan" {
				t.Errorf("got %v", l)
			}
		}},
		{"an absent organisation", f.alice, "GET", "/organisations/123456789/sync/merge-requests", nil, 404, nil},
		{"no token", nil, "GET", acme + "/sync/merge-requests", nil, 401, nil},
		// The screen's link opens the document on the site's branch: its
		// name's slashes are escaped in the path, and it is one name.
		{"the site's branch, by its escaped name", f.alice, "GET", "/documents/" + doc + "/branches/site%2F7%2Fmain", nil, 200, func(t *testing.T, r *testResponse) {
			if b := r.obj(t)["branch"].(map[string]any); b["name"] != "site/7/main" {
				t.Errorf("got %v", b)
			}
		}},
		{"a name that is not one", f.alice, "GET", "/documents/" + doc + "/branches/site%2F7", nil, 404, nil},
		{"the site's branch, another organisation's owner", f.mallory, "GET", "/documents/" + doc + "/branches/site%2F7%2Fmain", nil, 403, nil},
		{"a plain branch still", f.alice, "GET", "/documents/" + doc + "/branches/draft", nil, 200, nil},
	})
}

// TestSyncNodesPaged: a hub's laptops are paged for the screen, those
// still paired first by name (whatever the case), then the revoked; the
// page limits are the lists' own; another organisation's laptops are not
// in the list, nor is the list theirs to read.
func TestSyncNodesPaged(t *testing.T) {
	t.Parallel()
	f := newOrgFixture(t)
	e, acme := f.e, "/organisations/"+f.acme
	names := map[int64]string{1001: "yard", 1002: "Depot", 1003: "Bridge", 1004: "Annex (old)", 1005: "canal"}
	for n, name := range names {
		e.syncNode(f.acme, n)
		if _, err := e.store.Writer.Exec(`UPDATE sync_nodes SET name = ? WHERE node = ?`, name, n); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.store.Writer.Exec(`UPDATE sync_nodes SET revoked_at = '2026-11-28T00:00:00.000Z' WHERE node = 1004`); err != nil {
		t.Fatal(err)
	}
	e.syncNode(f.evil, 1006)
	page := func(want ...string) func(t *testing.T, r *testResponse) {
		return func(t *testing.T, r *testResponse) {
			l := r.arr(t)
			got := []string{}
			for _, n := range l {
				got = append(got, n["name"].(string))
			}
			if strings.Join(got, ",") != strings.Join(want, ",") || r.Header.Get("X-Total-Count") != "5" {
				t.Errorf("got %v, total %q", got, r.Header.Get("X-Total-Count"))
			}
		}
	}
	list := acme + "/sync/nodes"
	e.run(t, []scenario{
		{"the first page", f.alice, "GET", list + "?$top=2", nil, 200, page("Bridge", "canal")},
		{"the second page", f.alice, "GET", list + "?$top=2&$skip=2", nil, 200, page("Depot", "yard")},
		{"the last page: the revoked laptop", f.alice, "GET", list + "?$top=2&$skip=4", nil, 200, page("Annex (old)")},
		{"past the end", f.alice, "GET", list + "?$skip=9", nil, 200, page()},
		{"a page too large", f.alice, "GET", list + "?$top=1001", nil, 400, nil},
		{"a negative skip", f.alice, "GET", list + "?$skip=-1", nil, 400, nil},
		{"another organisation's owner", f.mallory, "GET", list, nil, 403, nil},
		{"an absent organisation", f.alice, "GET", "/organisations/123456789/sync/nodes", nil, 404, nil},
		{"the other organisation's own", f.mallory, "GET", "/organisations/" + f.evil + "/sync/nodes", nil, 200, func(t *testing.T, r *testResponse) {
			if l := r.arr(t); len(l) != 1 || l[0]["node"] != float64(1006) {
				t.Errorf("got %v", l)
			}
		}},
	})
}

// TestSyncLeaseLostMidExchange: an exchange whose lease another exchange
// took over (this one stalled past the lease's time, here while head
// office held its answer) stops at its next renewal and says why in words;
// the file's lease stays the other's. Not parallel: it shortens the
// package's syncLeaseTTL.
func TestSyncLeaseLostMidExchange(t *testing.T) {
	defer func(ttl time.Duration) { syncLeaseTTL = ttl }(syncLeaseTTL)
	syncLeaseTTL = 300 * time.Millisecond
	f := newOrgFixture(t)
	_, l, alice := syncLaptop(t, f)
	l.must(201, alice, "POST", "/organisations/"+f.acme+"/projects", map[string]any{"name": "Made on site"})
	arrived, release := make(chan struct{}, 1), make(chan struct{})
	held := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/sync/exchange" {
			select {
			case arrived <- struct{}{}:
			default:
			}
			select {
			case <-release:
			case <-r.Context().Done():
				return
			}
		}
		f.e.srv.ServeHTTP(w, r)
	}))
	t.Cleanup(held.Close)
	t.Cleanup(func() { close(release) })
	if _, err := l.store.Writer.Exec(`UPDATE sync_hub SET url = ?`, held.URL); err != nil {
		t.Fatal(err)
	}
	run, err := beginSync(context.Background(), l.store)
	if err != nil {
		t.Fatal(err)
	}
	result := make(chan error, 1)
	go func() {
		_, err := runSync(context.Background(), l.store, run, slog.New(slog.DiscardHandler), nil)
		result <- err
	}()
	select {
	case <-arrived:
	case <-time.After(30 * time.Second):
		t.Fatal("the exchange never reached head office")
	}
	// Another exchange, later than this one's lease, takes the file.
	taken, _, err := l.store.TakeSyncLease(context.Background(), "the other exchange", time.Now().Add(time.Hour), time.Hour)
	if err != nil || !taken {
		t.Fatalf("the other exchange took the lease: %v %v", taken, err)
	}
	select {
	case err = <-result:
	case <-time.After(30 * time.Second):
		t.Fatal("the exchange went on without its lease")
	}
	if !errors.Is(err, errSyncLeaseLost) {
		t.Fatalf("the exchange ended with %v, want its lease lost", err)
	}
	st := run.get()
	if words := derefText(st.Error); st.State != "failed" || !strings.Contains(words, "another exchange on this laptop took over") {
		t.Fatalf("the run's state %q, words %q", st.State, words)
	}
	var holder string
	if err := l.store.Reader.QueryRow(`SELECT holder FROM sync_lease`).Scan(&holder); err != nil || holder != "the other exchange" {
		t.Fatalf("the lease after the stop: %q %v (the stopped exchange must not release the other's)", holder, err)
	}
}

// TestSyncConflictsNotifyOwner: an exchange page that records things for a
// person to settle (a code both offices gave, a member removed at head
// office while the laptop gave him a role) tells the organisation's owner
// once, in words, by the in-app list and mail, linking to the Sync screen;
// no one else is told, and a page that records nothing tells no one.
func TestSyncConflictsNotifyOwner(t *testing.T) {
	t.Parallel()
	f := newOrgFixture(t)
	acme := "/organisations/" + f.acme
	role := f.e.must(201, f.alice, "POST", acme+"/roles", map[string]any{"name": "Site lead"}).obj(t)["id"].(string)
	_, l, alice := syncLaptop(t, f)
	// Apart: both give B7; head office removes bob while the laptop gives him the role.
	f.e.must(201, f.alice, "POST", acme+"/projects", map[string]any{"name": "Depot", "code": "B7"})
	f.e.must(204, f.alice, "DELETE", acme+"/members/"+f.bob.ID, nil)
	l.must(201, alice, "POST", acme+"/projects", map[string]any{"name": "Site hut", "code": "B7"})
	l.must(204, alice, "PUT", acme+"/members/"+f.bob.ID+"/roles/"+role, nil)
	l.must(202, alice, "POST", acme+"/sync/now", nil)
	if o := waitSync(t, l, alice, f.acme); o["state"] != "done" {
		t.Fatalf("the exchange: %v", o)
	}
	if n := f.e.countKind(f.alice, notifySyncConflict); n != 1 {
		t.Fatalf("the owner has %d notifications of the exchange's conflicts, want 1", n)
	}
	n := f.e.notificationOfKind(t, f.alice, notifySyncConflict)
	if n["title"] != "Changes from Site office need you to look at them" || n["link"] != "/app/orgs/"+f.acme+"/sync" ||
		n["body"] != "An exchange with Site office found 2 things two offices did at once while apart (1 about someone's access: head office kept the stricter change). Open Sync to keep what was decided or change it." {
		t.Errorf("got %v", n)
	}
	subject, body := f.e.lastMailTo(t, f.alice.Email)
	if subject != n["title"] || !strings.Contains(body, "1 about someone's access") || !strings.Contains(body, "/app/orgs/"+f.acme+"/sync") {
		t.Errorf("the mail: %q %q", subject, body)
	}
	for _, u := range []*testUser{f.bob, f.mallory, f.pen} {
		if got := f.e.countKind(u, notifySyncConflict); got != 0 {
			t.Errorf("%s was told %d times", u.Email, got)
		}
	}
	// An exchange that records nothing new tells no one again.
	l.must(201, alice, "POST", acme+"/projects", map[string]any{"name": "Another hut", "code": "C1"})
	l.must(202, alice, "POST", acme+"/sync/now", nil)
	if o := waitSync(t, l, alice, f.acme); o["state"] != "done" {
		t.Fatalf("the second exchange: %v", o)
	}
	if n := f.e.countKind(f.alice, notifySyncConflict); n != 1 {
		t.Errorf("after a quiet exchange the owner has %d, want still 1", n)
	}
}
