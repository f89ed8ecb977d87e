package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"workspace/db"
)

// Presence (documents.md "Presence"): who has a document open, held in
// memory. PUT /documents/{id}/presence is a heartbeat of one session of the
// caller; a session without a heartbeat for 60 s shows idle, for 120 s
// offline, and is forgotten 10 minutes after that. GET .../presence lists
// the sessions; GET .../presence/stream is a Server-Sent Events stream of
// presence changes and of new revisions on any branch. A stream looks again
// after every write batch of the store (db.Store.Written): it sends the
// revisions made since its last one, and ends when the caller may no longer
// view the document. It also ends when the server shuts down (StopStreams,
// or New's context ending).

const (
	presenceIdleAfter    = 60 * time.Second
	presenceOfflineAfter = 120 * time.Second
	presenceForgetAfter  = presenceOfflineAfter + 10*time.Minute
	// presenceSweepEvery is how often timeouts are applied in the
	// background (heartbeats, lists and new streams apply them too).
	presenceSweepEvery = 5 * time.Second
	maxSessionID       = 100
	maxDocSessions     = 500 // sessions one document holds
	maxUserSessions    = 20  // sessions one user holds on one document
	maxDocStreams      = 200 // streams open on one document
	maxUserStreams     = 10  // streams one user has open
	streamBuffer       = 64  // events a stream may fall behind before it is ended
	streamKeepAlive    = 25 * time.Second
	streamWriteTimeout = 30 * time.Second
	// streamRecheckGap is the least time between two looks of a stream at
	// the database (a burst of writes costs one look).
	streamRecheckGap   = 200 * time.Millisecond
	maxStreamRevisions = 100 // revisions one look sends at most; the next look sends more
)

var presenceStatuses = map[string]bool{"online": true, "idle": true, "offline": true}

type presenceKey struct {
	user    int64
	session string
}

type presenceEntry struct {
	key      presenceKey
	declared string // what the last heartbeat said
	view     *db.ID
	sheet    *db.ID
	clause   *db.ID
	column   *db.ID
	beat     time.Time
	shown    string // the status last published
}

// status is the entry's status at now: the declared one, unless the
// heartbeats stopped long enough.
func (e *presenceEntry) status(now time.Time) string {
	age := now.Sub(e.beat)
	switch {
	case e.declared == "offline" || age >= presenceOfflineAfter:
		return "offline"
	case age >= presenceIdleAfter:
		return "idle"
	}
	return e.declared
}

type presenceJSON struct {
	SessionID string `json:"session_id"`
	UserID    db.ID  `json:"user_id"`
	User      any    `json:"user"`
	Status    string `json:"status"`
	ViewID    *db.ID `json:"view_id"`
	SheetID   *db.ID `json:"sheet_id"`
	ClauseID  *db.ID `json:"clause_id"`
	ColumnID  *db.ID `json:"column_id"`
	UpdatedAt string `json:"updated_at"`
}

func (e *presenceEntry) json(status string) presenceJSON {
	return presenceJSON{SessionID: e.key.session, UserID: db.ID(e.key.user), User: idJSON{db.ID(e.key.user)}, Status: status,
		ViewID: e.view, SheetID: e.sheet, ClauseID: e.clause, ColumnID: e.column, UpdatedAt: db.FormatTime(e.beat)}
}

// streamEvent is one Server-Sent Event.
type streamEvent struct {
	name string
	data any
}

type presenceSub struct {
	user int64
	ch   chan streamEvent
	full chan struct{} // closed when the stream fell too far behind
}

type docPresence struct {
	entries map[presenceKey]*presenceEntry
	subs    map[*presenceSub]struct{}
}

// presenceHub holds every document's sessions and streams.
type presenceHub struct {
	mu          sync.Mutex
	docs        map[int64]*docPresence
	userStreams map[int64]int
}

func newPresenceHub() *presenceHub {
	return &presenceHub{docs: map[int64]*docPresence{}, userStreams: map[int64]int{}}
}

func (h *presenceHub) doc(id int64) *docPresence {
	d := h.docs[id]
	if d == nil {
		d = &docPresence{entries: map[presenceKey]*presenceEntry{}, subs: map[*presenceSub]struct{}{}}
		h.docs[id] = d
	}
	return d
}

// publish sends an event to the document's streams (h.mu held). A stream
// whose buffer is full is ended rather than blocking everyone.
func (d *docPresence) publish(ev streamEvent) {
	for s := range d.subs {
		select {
		case s.ch <- ev:
		default:
			select {
			case <-s.full:
			default:
				close(s.full)
			}
		}
	}
}

// sweepDoc applies the timeouts to one document (h.mu held): a changed
// status is published, long-offline sessions are forgotten.
func (h *presenceHub) sweepDoc(id int64, d *docPresence, now time.Time) {
	for k, e := range d.entries {
		st := e.status(now)
		if st != e.shown {
			e.shown = st
			d.publish(streamEvent{"presence", e.json(st)})
		}
		if now.Sub(e.beat) >= presenceForgetAfter {
			delete(d.entries, k)
		}
	}
	if len(d.entries) == 0 && len(d.subs) == 0 {
		delete(h.docs, id)
	}
}

// sweep applies the timeouts everywhere.
func (h *presenceHub) sweep(now time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for id, d := range h.docs {
		h.sweepDoc(id, d, now)
	}
}

type heartbeat struct {
	SessionID *string `json:"session_id"`
	Status    *string `json:"status"`
	ViewID    *db.ID  `json:"view_id"`
	SheetID   *db.ID  `json:"sheet_id"`
	ClauseID  *db.ID  `json:"clause_id"`
	ColumnID  *db.ID  `json:"column_id"`
}

// beat records a heartbeat and publishes it.
func (h *presenceHub) beat(docID, userID int64, b heartbeat, now time.Time) (presenceJSON, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	d := h.doc(docID)
	h.sweepDoc(docID, d, now)
	d = h.doc(docID) // the sweep may have dropped an empty one
	k := presenceKey{userID, *b.SessionID}
	e := d.entries[k]
	if e == nil {
		if len(d.entries) >= maxDocSessions {
			return presenceJSON{}, errorf(http.StatusTooManyRequests, "The document has %d sessions present; try again later.", maxDocSessions)
		}
		n := 0
		for k2 := range d.entries {
			if k2.user == userID {
				n++
			}
		}
		if n >= maxUserSessions {
			return presenceJSON{}, errorf(http.StatusTooManyRequests, "You have %d sessions present on this document; let one go offline first.", maxUserSessions)
		}
		e = &presenceEntry{key: k}
		d.entries[k] = e
	}
	e.declared, e.view, e.sheet, e.clause, e.column, e.beat = *b.Status, b.ViewID, b.SheetID, b.ClauseID, b.ColumnID, now
	e.shown = e.status(now)
	out := e.json(e.shown)
	d.publish(streamEvent{"presence", out})
	return out, nil
}

// list is the document's sessions at now, by user then session.
func (h *presenceHub) list(docID int64, now time.Time) []presenceJSON {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := []presenceJSON{}
	d, ok := h.docs[docID]
	if !ok {
		return out
	}
	h.sweepDoc(docID, d, now)
	for _, e := range d.entries {
		out = append(out, e.json(e.shown))
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].UserID != out[j].UserID {
			return out[i].UserID < out[j].UserID
		}
		return out[i].SessionID < out[j].SessionID
	})
	return out
}

// subscribe opens a stream on the document, with the current sessions as
// its first events.
func (h *presenceHub) subscribe(docID, userID int64, now time.Time) (*presenceSub, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	d := h.doc(docID)
	if len(d.subs) >= maxDocStreams {
		return nil, errorf(http.StatusTooManyRequests, "The document has %d streams open; try again later.", maxDocStreams)
	}
	if h.userStreams[userID] >= maxUserStreams {
		return nil, errorf(http.StatusTooManyRequests, "You have %d streams open; close one first.", maxUserStreams)
	}
	h.sweepDoc(docID, d, now)
	d = h.doc(docID)
	s := &presenceSub{user: userID, ch: make(chan streamEvent, streamBuffer+maxDocSessions), full: make(chan struct{})}
	for _, e := range d.entries {
		s.ch <- streamEvent{"presence", e.json(e.shown)}
	}
	d.subs[s] = struct{}{}
	h.userStreams[userID]++
	return s, nil
}

func (h *presenceHub) unsubscribe(docID int64, s *presenceSub) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if d, ok := h.docs[docID]; ok {
		delete(d.subs, s)
		if len(d.entries) == 0 && len(d.subs) == 0 {
			delete(h.docs, docID)
		}
	}
	if h.userStreams[s.user]--; h.userStreams[s.user] <= 0 {
		delete(h.userStreams, s.user)
	}
}

// sweepPresence applies the timeouts for the server's lifetime.
func (s *Server) sweepPresence(ctx context.Context) {
	t := time.NewTicker(presenceSweepEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.presence.sweep(s.now())
		}
	}
}

// StopStreams ends every open event stream (server shutdown: give it to
// http.Server.RegisterOnShutdown, which does not wait for streams itself).
func (s *Server) StopStreams() { s.stopStreams.Do(func() { close(s.streamsStop) }) }

func checkHeartbeat(b *heartbeat) error {
	p := problems{}
	if b.SessionID == nil {
		p.add("session_id", "is required")
	} else {
		*b.SessionID = strings.TrimSpace(*b.SessionID)
		p.length("session_id", *b.SessionID, 1, maxSessionID)
	}
	if b.Status == nil {
		p.add("status", "is required")
	} else if !presenceStatuses[*b.Status] {
		p.add("status", "must be online, idle or offline")
	}
	return p.err()
}

// viewable checks that the caller may view the live document of the path.
func (s *Server) viewable(rq *request) (db.Document, error) {
	var d db.Document
	err := s.store.ReadTx(rq.ctx, func(q *db.Queries) (err error) {
		d, _, err = contentAccess(rq, q, ViewDocuments)
		return err
	})
	return d, err
}

func (s *Server) presencePut(rq *request) error {
	var b heartbeat
	if err := rq.decode(&b); err != nil {
		return err
	}
	if err := checkHeartbeat(&b); err != nil {
		return err
	}
	d, err := s.viewable(rq)
	if err != nil {
		return err
	}
	out, err := s.presence.beat(d.ID, rq.user.ID, b, s.now())
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

func (s *Server) presenceList(rq *request) error {
	var out []presenceJSON
	err := s.store.ReadTx(rq.ctx, func(q *db.Queries) error {
		d, _, err := contentAccess(rq, q, ViewDocuments)
		if err != nil {
			return err
		}
		out = s.presence.list(d.ID, s.now())
		for i := range out {
			if out[i].User, err = s.revealUser(rq.ctx, q, int64(out[i].UserID), rq.user.ID, false); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	setTotalCount(rq.w, int64(len(out)))
	return rq.json(http.StatusOK, out)
}

// streamRevisionJSON is a new revision as a stream sends it, with the
// branches it is now the head of.
type streamRevisionJSON struct {
	revisionPartial
	DocumentID db.ID    `json:"document_id"`
	Parents    []string `json:"parents"`
	Branches   []string `json:"branches"`
}

// streamLook is what a stream finds when it looks at the database: the
// revisions since its last, or the reason it ends.
func (s *Server) streamLook(rq *request, docID int64, after *int64) ([]streamRevisionJSON, error) {
	var out []streamRevisionJSON
	err := s.store.ReadTx(rq.ctx, func(q *db.Queries) error {
		if _, _, err := contentAccess(rq, q, ViewDocuments); err != nil {
			return err
		}
		revs, err := q.RevisionsAfter(rq.ctx, db.RevisionsAfterParams{DocumentID: docID, AfterID: *after, MaxRows: maxStreamRevisions})
		if err != nil || len(revs) == 0 {
			return err
		}
		branches, err := q.BranchList(rq.ctx, docID)
		if err != nil {
			return err
		}
		heads := map[int64][]string{}
		for _, b := range branches {
			heads[b.RevisionID] = append(heads[b.RevisionID], b.Name)
		}
		for _, r := range revs {
			names := heads[r.ID]
			if names == nil {
				names = []string{}
			}
			out = append(out, streamRevisionJSON{revisionPartial: toDocRevisionPartial(r), DocumentID: db.ID(docID),
				Parents: revisionParents(r), Branches: names})
			*after = r.ID
		}
		return nil
	})
	return out, err
}

// presenceStream is the Server-Sent Events stream: `presence` events
// (presence objects), `revision` events (new revisions), comments as
// keep-alives, and a last `end` event {reason} when the server ends it
// (shutdown, access_revoked, document_gone, too_slow, error).
func (s *Server) presenceStream(rq *request) error {
	// Taken before the first look, so a write racing the opening (a revoke,
	// a revision) wakes the stream.
	written := s.store.Written()
	var d db.Document
	var after int64
	err := s.store.ReadTx(rq.ctx, func(q *db.Queries) (err error) {
		if d, _, err = contentAccess(rq, q, ViewDocuments); err != nil {
			return err
		}
		after, err = q.RevisionLastID(rq.ctx, d.ID)
		return err
	})
	if err != nil {
		return err
	}
	sub, err := s.presence.subscribe(d.ID, rq.user.ID, s.now())
	if err != nil {
		return err
	}
	defer s.presence.unsubscribe(d.ID, sub)

	rc := http.NewResponseController(rq.w)
	h := rq.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no") // proxies must pass events on at once
	rq.w.WriteHeader(http.StatusOK)
	send := func(ev streamEvent) error {
		_ = rc.SetWriteDeadline(time.Now().Add(streamWriteTimeout)) // unsupported by test recorders
		if ev.name == "" {
			if _, err := fmt.Fprint(rq.w, ": keep-alive\n\n"); err != nil {
				return err
			}
		} else {
			data, err := json.Marshal(ev.data)
			if err != nil {
				return err
			}
			if _, err := fmt.Fprintf(rq.w, "event: %s\ndata: %s\n\n", ev.name, data); err != nil {
				return err
			}
		}
		return rc.Flush()
	}
	end := func(reason string) error {
		_ = send(streamEvent{"end", map[string]string{"reason": reason}})
		return nil
	}
	if err := send(streamEvent{"ready", map[string]any{"document_id": db.ID(d.ID)}}); err != nil {
		return nil // the client is gone
	}
	keepAlive := time.NewTicker(streamKeepAlive)
	defer keepAlive.Stop()
	var gap <-chan time.Time
	pending := false
	for {
		select {
		case <-rq.ctx.Done():
			return nil
		case <-s.streamsStop:
			return end("shutdown")
		case <-sub.full:
			return end("too_slow")
		case ev := <-sub.ch:
			if send(ev) != nil {
				return nil
			}
		case <-keepAlive.C:
			if send(streamEvent{}) != nil {
				return nil
			}
		case <-written:
			written, pending = nil, true
		case <-gap:
			gap = nil
		}
		if !pending || gap != nil {
			continue
		}
		pending = false
		written = s.store.Written() // before looking: a write racing the look wakes the next one
		revs, err := s.streamLook(rq, d.ID, &after)
		var e *Error
		switch {
		case errors.As(err, &e) && e.Status == http.StatusForbidden:
			return end("access_revoked")
		case errors.As(err, &e) && e.Status == http.StatusNotFound:
			return end("document_gone")
		case rq.ctx.Err() != nil:
			return nil
		case err != nil:
			logger(rq.ctx).Error("presence stream", "err", err, "request_id", requestID(rq.ctx))
			return end("error")
		}
		for _, r := range revs {
			if send(streamEvent{"revision", r}) != nil {
				return nil
			}
		}
		if len(revs) == maxStreamRevisions {
			pending = true // more to send at the next look
		}
		gap = time.After(streamRecheckGap)
	}
}
