package server

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestPresenceHeartbeatAndList(t *testing.T) {
	t.Parallel()
	f := newDocFixture(t)
	e := f.e
	doc := "/documents/" + f.doc
	pres := doc + "/presence"
	sheet := e.must(200, f.alice, "GET", doc+"/revisions/"+content{f: f, doc: doc}.head(t, "main")+"/sheets", nil).arr(t)[0]["sheet_id"].(string)
	e.run(t, []scenario{
		{"session_id required", f.bob, "PUT", pres, map[string]any{"status": "online"}, 400, wantField("session_id")},
		{"session_id empty", f.bob, "PUT", pres, map[string]any{"session_id": " ", "status": "online"}, 400, wantField("session_id")},
		{"session_id over 100", f.bob, "PUT", pres, map[string]any{"session_id": strings.Repeat("s", 101), "status": "online"}, 400, wantField("session_id")},
		{"status required", f.bob, "PUT", pres, map[string]any{"session_id": "s1"}, 400, wantField("status")},
		{"status unknown", f.bob, "PUT", pres, map[string]any{"session_id": "s1", "status": "away"}, 400, wantField("status")},
		{"status wrong type", f.bob, "PUT", pres, map[string]any{"session_id": "s1", "status": 1}, 400, wantField("status")},
		{"sheet_id not a snowflake", f.bob, "PUT", pres, map[string]any{"session_id": "s1", "status": "online", "sheet_id": "x"}, 400, nil},
		{"malformed JSON", f.bob, "PUT", pres, `{"session_id":`, 400, nil},
		{"foreign organisation", f.mallory, "PUT", pres, map[string]any{"session_id": "m", "status": "online"}, 403, nil},
		{"no organisation", f.nobody, "PUT", pres, map[string]any{"session_id": "n", "status": "online"}, 403, nil},
		{"pending member", f.pen, "PUT", pres, map[string]any{"session_id": "p", "status": "online"}, 403, nil},
		{"absent document", f.bob, "PUT", "/documents/123456789/presence", map[string]any{"session_id": "s1", "status": "online"}, 404, nil},
		{"member beats", f.bob, "PUT", pres, map[string]any{"session_id": "s1", "status": "online", "sheet_id": sheet, "unknown": 1}, 200,
			func(t *testing.T, r *testResponse) {
				o := r.obj(t)
				if o["status"] != "online" || o["session_id"] != "s1" || o["user_id"] != f.bob.ID || o["sheet_id"] != sheet || o["clause_id"] != nil {
					t.Fatalf("heartbeat answered %v", o)
				}
			}},
		{"owner beats idle", f.alice, "PUT", pres, map[string]any{"session_id": "a1", "status": "idle"}, 200, wantKey("status", "idle")},
		{"foreign list", f.mallory, "GET", pres, nil, 403, nil},
		{"foreign does not see own document's sessions here", f.mallory, "GET", "/documents/" + f.evilDoc + "/presence", nil, 200, wantLen(0)},
		{"list", f.bob, "GET", pres, nil, 200, func(t *testing.T, r *testResponse) {
			a := r.arr(t)
			if len(a) != 2 || r.Header.Get("X-Total-Count") != "2" {
				t.Fatalf("list %v", a)
			}
			byUser := map[string]map[string]any{}
			for _, p := range a {
				byUser[p["user_id"].(string)] = p
			}
			if byUser[f.bob.ID]["status"] != "online" || byUser[f.alice.ID]["status"] != "idle" {
				t.Fatalf("statuses %v", a)
			}
			if u, _ := byUser[f.alice.ID]["user"].(map[string]any); u["first_name"] == nil {
				t.Fatalf("a member sees the user object: %v", byUser[f.alice.ID]["user"])
			}
		}},
	})
	status := func() map[string]string {
		out := map[string]string{}
		for _, p := range e.must(200, f.alice, "GET", pres, nil).arr(t) {
			out[p["user_id"].(string)+"/"+p["session_id"].(string)] = p["status"].(string)
		}
		return out
	}
	e.clock.Advance(30 * time.Second)
	e.must(200, f.alice, "PUT", pres, map[string]any{"session_id": "a1", "status": "online"})
	e.clock.Advance(31 * time.Second) // bob: 61 s without a heartbeat
	if st := status(); st[f.bob.ID+"/s1"] != "idle" || st[f.alice.ID+"/a1"] != "online" {
		t.Fatalf("after 61 s: %v", st)
	}
	e.clock.Advance(60 * time.Second) // bob: 121 s
	if st := status(); st[f.bob.ID+"/s1"] != "offline" || st[f.alice.ID+"/a1"] != "idle" {
		t.Fatalf("after 121 s: %v", st)
	}
	e.must(200, f.bob, "PUT", pres, map[string]any{"session_id": "s1", "status": "online"})
	if st := status(); st[f.bob.ID+"/s1"] != "online" {
		t.Fatalf("a heartbeat brings the session back: %v", st)
	}
	e.must(200, f.bob, "PUT", pres, map[string]any{"session_id": "s1", "status": "offline"})
	if st := status(); st[f.bob.ID+"/s1"] != "offline" {
		t.Fatalf("declared offline: %v", st)
	}
	e.clock.Advance(presenceForgetAfter)
	if st := status(); len(st) != 0 {
		t.Fatalf("sessions long offline are forgotten: %v", st)
	}
	// At most 20 sessions of one user on one document.
	for i := 0; i < maxUserSessions; i++ {
		e.must(200, f.bob, "PUT", pres, map[string]any{"session_id": fmt.Sprint("tab", i), "status": "online"})
	}
	e.must(429, f.bob, "PUT", pres, map[string]any{"session_id": "one too many", "status": "online"})
	e.must(200, f.bob, "PUT", pres, map[string]any{"session_id": "tab0", "status": "idle"}) // an existing session still beats
	// A deleted document has no presence.
	e.must(200, f.alice, "DELETE", doc, nil)
	e.must(404, f.bob, "PUT", pres, map[string]any{"session_id": "tab0", "status": "online"})
	e.must(404, f.bob, "GET", pres, nil)
}

// sseClient reads a Server-Sent Events stream into a channel.
type sseClient struct {
	t      *testing.T
	resp   *http.Response
	events chan sseEvent
}

type sseEvent struct {
	name string
	data map[string]any
}

func openStream(t *testing.T, e *testEnv, ts *httptest.Server, u *testUser, path string) (*sseClient, int) {
	t.Helper()
	req, _ := http.NewRequest("GET", ts.URL+path, nil)
	req.Header.Set("Authorization", "Bearer "+e.bearer(u))
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		resp.Body.Close()
		return nil, resp.StatusCode
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	c := &sseClient{t: t, resp: resp, events: make(chan sseEvent, 100)}
	go func() {
		defer close(c.events)
		sc := bufio.NewScanner(resp.Body)
		var ev sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				ev.name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				_ = json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &ev.data)
			case line == "" && ev.name != "":
				c.events <- ev
				ev = sseEvent{}
			}
		}
	}()
	t.Cleanup(func() { resp.Body.Close() })
	return c, 200
}

// next waits (with a deadline, never a fixed sleep) for the next event of
// the name that passes ok, skipping others.
func (c *sseClient) next(name string, ok func(map[string]any) bool) map[string]any {
	c.t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case ev, open := <-c.events:
			if !open {
				c.t.Fatalf("stream closed while waiting for %s", name)
			}
			if ev.name == name && (ok == nil || ok(ev.data)) {
				return ev.data
			}
		case <-deadline:
			c.t.Fatalf("no %s event within 30 s", name)
		}
	}
}

// closed waits for the stream to end.
func (c *sseClient) closed() {
	c.t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case _, open := <-c.events:
			if !open {
				return
			}
		case <-deadline:
			c.t.Fatalf("stream still open after 30 s")
		}
	}
}

func TestPresenceStream(t *testing.T) {
	t.Parallel()
	f := newDocFixture(t)
	e := f.e
	ts := httptest.NewServer(e.srv)
	t.Cleanup(func() { e.srv.StopStreams(); ts.Close() }) // a failing test leaves no stream open
	c := content{f: f, doc: "/documents/" + f.doc}
	stream := c.doc + "/presence/stream"

	if _, status := openStream(t, e, ts, f.mallory, stream); status != 403 {
		t.Fatalf("foreign organisation: %d", status)
	}
	if _, status := openStream(t, e, ts, f.nobody, stream); status != 403 {
		t.Fatalf("no organisation: %d", status)
	}
	if _, status := openStream(t, e, ts, f.alice, "/documents/123456789/presence/stream"); status != 404 {
		t.Fatalf("absent document: %d", status)
	}

	// A session present before the stream opens comes first.
	e.must(200, f.alice, "PUT", c.doc+"/presence", map[string]any{"session_id": "a1", "status": "online"})
	alice, _ := openStream(t, e, ts, f.alice, stream)
	alice.next("ready", nil)
	alice.next("presence", func(d map[string]any) bool { return d["session_id"] == "a1" })
	bob, _ := openStream(t, e, ts, f.bob, stream)
	bob.next("ready", nil)

	// Heartbeats reach every stream.
	e.must(200, f.bob, "PUT", c.doc+"/presence", map[string]any{"session_id": "b1", "status": "online"})
	alice.next("presence", func(d map[string]any) bool { return d["user_id"] == f.bob.ID && d["status"] == "online" })

	// A new revision on any branch is sent with the branches it heads.
	h := c.head(t, "main")
	e.must(201, f.alice, "POST", c.doc+"/branches", map[string]any{"name": "draft"})
	h1 := c.change(t, "POST", c.rev(h)+"/clauses?branch=draft", map[string]any{"text": "on draft"})
	rev := bob.next("revision", func(d map[string]any) bool { return d["hash"] == h1 })
	if br := rev["branches"].([]any); len(br) != 1 || br[0] != "draft" || rev["document_id"] != f.doc {
		t.Fatalf("revision event %v", rev)
	}
	h2 := c.change(t, "POST", c.rev(h)+"/clauses", map[string]any{"text": "on main"})
	alice.next("revision", func(d map[string]any) bool { return d["hash"] == h2 })
	// Another document's changes are not sent.
	evil := content{f: f, doc: "/documents/" + f.evilDoc}
	eh := e.must(200, f.mallory, "GET", evil.doc+"/branches/main", nil).obj(t)["hash"].(string)
	e.must(200, f.mallory, "POST", evil.rev(eh)+"/clauses", map[string]any{"text": "evil"})
	h3 := c.change(t, "POST", c.rev(h2)+"/clauses", map[string]any{"text": "after evil"})
	got := alice.next("revision", nil)
	if got["hash"] != h3 {
		t.Fatalf("after h2 the next revision sent is %v, want %s (and nothing of the other document)", got["hash"], h3)
	}

	// Timeouts reach the streams: bob's session goes idle after 60 s.
	e.clock.Advance(61 * time.Second)
	e.must(200, f.alice, "PUT", c.doc+"/presence", map[string]any{"session_id": "a1", "status": "online"})
	alice.next("presence", func(d map[string]any) bool { return d["user_id"] == f.bob.ID && d["status"] == "idle" })

	// Removing bob from the organisation ends his stream at once.
	e.must(204, f.alice, "DELETE", "/organisations/"+f.acme+"/members/"+f.bob.ID, nil)
	if end := bob.next("end", nil); end["reason"] != "access_revoked" {
		t.Fatalf("bob's stream ended with %v", end)
	}
	bob.closed()

	// A share holder with scope_view streams; revoking the share ends it.
	carol := e.user("carol")
	e.sharesFromAnyone(carol)
	sid := e.must(201, f.alice, "POST", c.doc+"/shares", map[string]any{"user_id": carol.ID, "scope_view": true}).obj(t)["id"].(string)
	if _, status := openStream(t, e, ts, carol, stream); status != 403 {
		t.Fatalf("a pending share: %d", status)
	}
	e.must(200, carol, "POST", "/users/@me/document-shares/"+sid+"/accept", nil)
	shared, _ := openStream(t, e, ts, carol, stream)
	shared.next("ready", nil)
	e.must(204, f.alice, "DELETE", c.doc+"/shares/"+sid, nil)
	if end := shared.next("end", nil); end["reason"] != "access_revoked" {
		t.Fatalf("carol's stream ended with %v", end)
	}
	shared.closed()

	// Deleting the document ends the streams on it.
	other := e.must(201, f.alice, "POST", "/documents", map[string]any{"organisation_id": f.acme, "title": "Other"}).obj(t)["id"].(string)
	gone, _ := openStream(t, e, ts, f.alice, "/documents/"+other+"/presence/stream")
	gone.next("ready", nil)
	e.must(200, f.alice, "DELETE", "/documents/"+other, nil)
	if end := gone.next("end", nil); end["reason"] != "document_gone" {
		t.Fatalf("stream of a deleted document ended with %v", end)
	}
	gone.closed()

	// At most 10 streams per user.
	var extra []*sseClient
	for i := 1; i < maxUserStreams; i++ { // alice has one open
		s, status := openStream(t, e, ts, f.alice, stream)
		if status != 200 {
			t.Fatalf("stream %d: %d", i, status)
		}
		s.next("ready", nil)
		extra = append(extra, s)
	}
	if _, status := openStream(t, e, ts, f.alice, stream); status != 429 {
		t.Fatalf("11th stream: %d", status)
	}

	// Shutdown ends every stream cleanly.
	e.srv.StopStreams()
	if end := alice.next("end", nil); end["reason"] != "shutdown" {
		t.Fatalf("alice's stream ended with %v", end)
	}
	alice.closed()
	for _, s := range extra {
		s.closed()
	}
}
