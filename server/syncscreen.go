package server

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"time"

	"workspace/db"
)

// The Sync screen's API (docs/sync.md, "The Sync screen"): the paired
// nodes through the list shell, and "Sync now" on a laptop, started from
// the web and followed while it runs. Only one exchange runs at a time in a
// server (the web's, and serve --sync-every's).

// syncRunJSON is an exchange started in this server: the one running, or
// the last one.
type syncRunJSON struct {
	// State: idle (none since the server started), running, done, failed.
	State      string  `json:"state"`
	StartedAt  *string `json:"started_at"`
	FinishedAt *string `json:"finished_at"`
	Sent       int     `json:"sent"`
	Received   int     `json:"received"`
	// ToSend: what this laptop had for head office when it started;
	// ToReceive: what head office said it had for the laptop at the last
	// exchange (both are estimates a progress bar can use).
	ToSend    int64 `json:"to_send"`
	ToReceive int64 `json:"to_receive"`
	// PendingIn: what head office still had after the latest page.
	PendingIn int64 `json:"pending_in"`
	// Error: why it stopped, in words a person understands.
	Error *string `json:"error"`
}

// syncRun is a store's exchange in this process.
type syncRun struct {
	mu    sync.Mutex
	state syncRunJSON
	store *db.Store
	// lease is the token of the file's exchange lease while this
	// process's exchange runs (db.TakeSyncLease).
	lease string
}

// syncLeaseTTL is how long the lease of an exchange killed mid-way keeps
// others out; a running exchange renews it every third of that.
var syncLeaseTTL = 90 * time.Second

// syncRuns: one syncRun per store (a process serves one store; tests run
// several).
var syncRuns sync.Map

func syncRunOf(store *db.Store) *syncRun {
	r, _ := syncRuns.LoadOrStore(store, &syncRun{state: syncRunJSON{State: "idle"}, store: store})
	return r.(*syncRun)
}

func (r *syncRun) get() syncRunJSON {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.state
}

// errSyncBusy: an exchange is running already; errSyncElsewhere: in
// another process using the same database file; errSyncLeaseLost: another
// exchange took this one's lease (this process stalled past syncLeaseTTL).
var (
	errSyncBusy      = errors.New("an exchange with head office is already running")
	errSyncElsewhere = errors.New("an exchange with head office is running in another program using this database")
	errSyncLeaseLost = errors.New("another exchange took over this database's lease")
	// errSyncPiecesDropped: the pieces of a large file did not add up to
	// the file at the hub, which dropped them; the next exchange sends it
	// from its start.
	errSyncPiecesDropped = errors.New("a file sent in pieces arrived damaged and its pieces were dropped")
)

// begin marks an exchange running; false when one is.
func (r *syncRun) begin(toSend, toReceive int64) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.state.State == "running" {
		return false
	}
	now := db.FormatTime(time.Now())
	r.state = syncRunJSON{State: "running", StartedAt: &now, ToSend: toSend, ToReceive: toReceive, PendingIn: toReceive}
	return true
}

func (r *syncRun) end(res SyncResult, words string) {
	r.mu.Lock()
	lease := r.lease
	r.lease = ""
	r.mu.Unlock()
	if lease != "" {
		// Released before the state says done, so a start that follows
		// finds the file free. One left behind expires (syncLeaseTTL).
		_ = r.store.ReleaseSyncLease(context.Background(), lease)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	now := db.FormatTime(time.Now())
	r.state.FinishedAt = &now
	r.state.Sent, r.state.Received, r.state.PendingIn = res.Sent, res.Received, res.PendingIn
	r.state.State = "done"
	if words != "" {
		r.state.State, r.state.Error = "failed", &words
	}
}

// syncProgress passes SyncNow's terminal lines on (when there is a
// terminal) and keeps each round's counts for the screen.
type syncProgress struct {
	w   io.Writer
	run *syncRun
}

func (p syncProgress) Write(b []byte) (int, error) {
	if p.w == nil {
		return len(b), nil
	}
	return p.w.Write(b)
}

func (p syncProgress) syncRound(res SyncResult) {
	p.run.mu.Lock()
	defer p.run.mu.Unlock()
	p.run.state.Sent, p.run.state.Received, p.run.state.PendingIn = res.Sent, res.Received, res.PendingIn
}

// syncRoundReporter is told each round's counts by SyncNow.
type syncRoundReporter interface{ syncRound(SyncResult) }

// beginSync marks the store's exchange running, with its estimates, and
// takes the database file's lease; it fails with errSyncBusy when one runs
// in this process, errSyncElsewhere when one runs in another.
func beginSync(ctx context.Context, store *db.Store) (*syncRun, error) {
	var toSend, toReceive int64
	var hub db.SyncHubScreenRow
	err := store.ReadTx(ctx, func(q *db.Queries) error {
		var err error
		hub, err = q.SyncHubScreen(ctx)
		return err
	})
	if err == nil {
		// Estimates only: a laptop that cannot count still exchanges.
		v, verr := parseVector(hub.HubVector)
		orgs, oerr := parseOrgs(hub.Organisations)
		if verr == nil && oerr == nil {
			toSend, _ = store.SyncPending(ctx, v, orgs)
		}
		toReceive = hub.PendingIn
	}
	run := syncRunOf(store)
	if !run.begin(toSend, toReceive) {
		return run, errSyncBusy
	}
	lease := rand.Text()
	taken, other, err := store.TakeSyncLease(ctx, lease, time.Now(), syncLeaseTTL)
	if err == nil && !taken {
		err = fmt.Errorf("%w (process %d on %s, since %s)", errSyncElsewhere, other.Pid, other.Host, other.StartedAt.Format(time.RFC3339))
	}
	if err != nil {
		run.end(SyncResult{}, syncErrorWords("", err))
		return run, err
	}
	run.mu.Lock()
	run.lease = lease
	run.mu.Unlock()
	return run, nil
}

// keepLease renews the run's lease until done is closed; when another
// exchange has taken it, it stops this one.
func (r *syncRun) keepLease(ctx context.Context, stop context.CancelCauseFunc, done <-chan struct{}) {
	t := time.NewTicker(syncLeaseTTL / 3)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-ctx.Done():
			return
		case <-t.C:
		}
		r.mu.Lock()
		lease := r.lease
		r.mu.Unlock()
		if held, err := r.store.RenewSyncLease(ctx, lease, time.Now(), syncLeaseTTL); err == nil && !held {
			stop(errSyncLeaseLost)
			return
		}
	}
}

// runSync runs the exchange begun by beginSync and logs its line.
func runSync(ctx context.Context, store *db.Store, run *syncRun, logger *slog.Logger, progress io.Writer) (SyncResult, error) {
	start := time.Now()
	leaseCtx, stop := context.WithCancelCause(ctx)
	done := make(chan struct{})
	go run.keepLease(leaseCtx, stop, done)
	res, err := SyncNow(leaseCtx, store, 0, syncProgress{w: progress, run: run})
	close(done)
	if cause := context.Cause(leaseCtx); err != nil && errors.Is(cause, errSyncLeaseLost) {
		err = cause
	}
	stop(nil)
	words := ""
	hubURL := ""
	if err != nil {
		// The hub's address names where it failed, even for a cancelled exchange.
		wctx := context.WithoutCancel(ctx)
		_ = store.ReadTx(wctx, func(q *db.Queries) error {
			h, herr := q.SyncHubScreen(wctx)
			hubURL = h.Url
			return herr
		})
		words = syncErrorWords(hubURL, err)
	}
	run.end(res, words)
	attrs := []any{"sent", res.Sent, "received", res.Received, "rounds", res.Rounds, "duration", time.Since(start).Round(time.Millisecond)}
	if err != nil {
		logger.Error("sync exchange failed", append(attrs, "err", err)...)
		return res, err
	}
	offset := res.ClockOffset.Round(time.Second)
	if res.HeldBack {
		logger.Warn("sync exchange: changes made here are dated ahead of the hub's clock (this computer's clock was wrong when they were made); they wait until the hub's clock reaches them",
			append(attrs, "clock_offset", offset)...)
	} else if offset > 2*time.Minute || offset < -2*time.Minute {
		logger.Warn("sync exchange: this node's clock is off from the hub's", append(attrs, "clock_offset", offset)...)
	} else {
		logger.Info("sync exchange", append(attrs, "clock_offset", offset)...)
	}
	return res, nil
}

// hubRefusal is the hub's answer to a request it refused.
type hubRefusal struct {
	Status  int
	Message string
}

func (e *hubRefusal) Error() string {
	if e.Message != "" {
		return fmt.Sprintf("the hub answered %d: %s", e.Status, e.Message)
	}
	return fmt.Sprintf("the hub answered %d", e.Status)
}

// syncErrorWords says why an exchange stopped in words a person at the
// laptop can act on (the log keeps the technical error).
func syncErrorWords(hubURL string, err error) string {
	where := "Head office"
	if u, perr := url.Parse(hubURL); perr == nil && u.Host != "" {
		where = "Head office (" + u.Host + ")"
	}
	var refusal *hubRefusal
	var netErr net.Error
	var urlErr *url.Error
	switch {
	case errors.Is(err, errSyncBusy):
		return "An exchange with head office is already running: wait for it to finish."
	case errors.Is(err, errSyncElsewhere):
		return "An exchange with head office is already running in another program on this laptop: wait for it to finish, then try again."
	case errors.Is(err, errSyncLeaseLost):
		return "This exchange stopped because another exchange on this laptop took over after this one had stalled. Nothing was lost: the other goes on from where this one stopped."
	case errors.Is(err, errSyncPiecesDropped):
		return where + " received a large file from this laptop damaged and set it aside, so the exchange stopped. Nothing was lost: the next exchange sends the file again from its start."
	case errors.Is(err, context.Canceled):
		return "The exchange stopped because this server was shutting down. Nothing was lost: the next exchange goes on from where it stopped."
	case errors.As(err, &refusal) && refusal.Status == http.StatusUnauthorized:
		return where + " no longer accepts this laptop: its pairing may have been revoked, or this laptop's clock may be far off. Check the clock, or ask an owner at head office. What was made here stays on this laptop."
	case errors.As(err, &refusal) && refusal.Status == http.StatusUnprocessableEntity:
		return where + " refused some of this laptop's changes, so the exchange stopped. Nothing was lost: the changes stay here. Tell whoever looks after head office's server."
	case errors.As(err, &refusal) && refusal.Status >= 500:
		return where + " had a problem and the exchange stopped. Nothing was lost: try again in a few minutes."
	case errors.As(err, &refusal):
		return where + " refused the exchange. Nothing was lost: try again later, or ask an owner at head office."
	case errors.As(err, &netErr), errors.As(err, &urlErr), errors.Is(err, io.ErrUnexpectedEOF):
		return where + " could not be reached. Check this laptop's connection (the office Wi-Fi or a 4G dongle) and try again: what was made here stays here until then."
	}
	return "The exchange stopped before it finished. Nothing was lost: the next exchange goes on from where it stopped."
}

// syncNowStart starts an exchange with head office on a laptop (202), or
// answers the running one: one at a time. The exchange goes on after the
// answer, for the server's lifetime; GET follows it.
func (s *Server) syncNowStart(rq *request) error {
	orgID, err := rq.pathID("id")
	if err != nil {
		return err
	}
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		if _, err := orgAccess(rq, q, orgID, http.StatusNotFound, ManageOrganisation); err != nil {
			return err
		}
		hub, err := q.SyncHubScreen(rq.ctx)
		if db.IsNotFound(err) {
			return errorf(http.StatusConflict, "This server is head office: exchanges start from each site laptop.")
		}
		if err != nil {
			return err
		}
		orgs, err := parseOrgs(hub.Organisations)
		if err != nil {
			return err
		}
		if !slices.Contains(orgs, orgID) {
			return errorf(http.StatusConflict, "This laptop does not sync this organisation with head office.")
		}
		return nil
	})
	if err != nil {
		return err
	}
	// The server's context: the exchange and its lease outlive the request
	// (whose writes would each add an audit entry).
	run, err := beginSync(s.ctx, s.store)
	if err == nil {
		s.background(func() { _, _ = runSync(s.ctx, s.store, run, s.log, nil) })
	}
	return rq.json(http.StatusAccepted, run.get())
}

// syncNowGet follows the exchange started in this server (idle when none
// has run since it started).
func (s *Server) syncNowGet(rq *request) error {
	orgID, err := rq.pathID("id")
	if err != nil {
		return err
	}
	err = s.store.ReadTx(rq.ctx, func(q *db.Queries) error {
		_, err := orgAccess(rq, q, orgID, http.StatusNotFound, ManageOrganisation)
		return err
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, syncRunOf(s.store).get())
}

// syncNodeList pages the nodes paired for an organisation through the list
// shell: those still paired by name, then the revoked.
func (s *Server) syncNodeList(rq *request) error {
	var org int64
	return listPage(s, rq, listSpec[syncNodeJSON]{Path: "id",
		Scope: func(_ *sql.Tx, q *db.Queries, orgID int64, _ listQuery) (listSQL, error) {
			if _, err := orgAccess(rq, q, orgID, http.StatusNotFound, ManageOrganisation); err != nil {
				return listSQL{}, err
			}
			org = orgID
			// sync_node_orgs has no id column: the node is the page's id.
			// Laptops still paired first, by name (a hub of hundreds is
			// read by name), then the revoked ones.
			return listSQL{From: "(SELECT o.node AS id, o.organisation_id, n.name, n.revoked_at FROM sync_node_orgs o JOIN sync_nodes n ON n.node = o.node)",
				Where: "organisation_id = ?", Args: []any{orgID}, OrderBy: "revoked_at IS NOT NULL, casefold(name), id"}, nil
		},
		Rows: func(ctx context.Context, q *db.Queries, ids []int64) ([]syncNodeJSON, error) {
			rows, err := q.SyncNodeListByIDs(ctx, idsJSON(ids))
			if err != nil {
				return nil, err
			}
			out := make([]syncNodeJSON, 0, len(rows))
			for _, n := range rows {
				j, err := s.toSyncNode(rq, org, n)
				if err != nil {
					return nil, err
				}
				out = append(out, j)
			}
			return out, nil
		}})
}

// numbersLeft is the fewest numbers left of any counter of the
// organisation (nil when none is held): the one that runs out first.
func numbersLeft(held []db.NumberBlock, orgID int64) *int64 {
	var least *int64
	for _, h := range held {
		if h.OrganisationID == orgID && (least == nil || h.Left < *least) {
			l := h.Left
			least = &l
		}
	}
	return least
}

// syncNodeTally records, on the hub, one request of a node's exchange:
// what moved each way (summed over the exchange's pages) and the numbers
// the node said it had left.
func syncNodeTally(ctx context.Context, q *db.Queries, node int64, in *syncExchange, applied, sent int) error {
	held, _ := json.Marshal(in.Held)
	if in.Held == nil {
		held = []byte("[]")
	}
	var ex *string
	if in.Exchange != "" {
		ex = &in.Exchange
	}
	return q.SyncNodeTally(ctx, db.SyncNodeTallyParams{ExchangeID: ex, Received: int64(applied), Sent: int64(sent),
		NumbersHeld: string(held), Node: node})
}

// syncHubExtras fills in what the screen shows of a laptop's hub: the last
// whole exchange's counts, the numbers left and whether it is a day old.
func (s *Server) syncHubExtras(ctx context.Context, orgID int64, h *syncHubJSON) error {
	var row db.SyncHubScreenRow
	if err := s.store.ReadTx(ctx, func(q *db.Queries) error {
		var err error
		row, err = q.SyncHubScreen(ctx)
		return err
	}); err != nil {
		return err
	}
	h.LastSent, h.LastReceived = row.LastSent, row.LastReceived
	held, err := s.store.HeldNumberBlocks(ctx)
	if err != nil {
		return err
	}
	h.NumbersLeft = numbersLeft(held, orgID)
	h.NotSyncedForADay = true
	if row.LastExchangeAt != nil {
		if t, err := db.ParseTime(*row.LastExchangeAt); err == nil {
			h.NotSyncedForADay = s.now().Sub(t) > 24*time.Hour
		}
	}
	return nil
}

// syncMergeRequestJSON is an open merge request an exchange left for a
// person: a site's edits of a document that did not merge cleanly with head
// office's, on the branch site/<node>/<branch>.
type syncMergeRequestJSON struct {
	ID            db.ID  `json:"id"`
	Number        int64  `json:"number"`
	DocumentID    db.ID  `json:"document_id"`
	DocumentTitle string `json:"document_title"`
	Title         string `json:"title"`
	FromBranch    string `json:"from_branch"`
	ToBranch      string `json:"to_branch"`
	CreatedAt     string `json:"created_at"`
}

// syncMergeRequestList pages the organisation's open merge requests from
// site branches (site/...), of the documents the caller may view, oldest
// first.
func (s *Server) syncMergeRequestList(rq *request) error {
	return listPage(s, rq, listSpec[syncMergeRequestJSON]{Path: "id",
		Scope: func(_ *sql.Tx, q *db.Queries, orgID int64, _ listQuery) (listSQL, error) {
			if _, err := orgAccess(rq, q, orgID, http.StatusNotFound, ManageOrganisation); err != nil {
				return listSQL{}, err
			}
			visible, err := viewableDocumentLayers(rq, q, orgID, nil)
			if err != nil {
				return listSQL{}, err
			}
			if len(visible) == 0 {
				return listSQL{}, nil
			}
			vis, _ := json.Marshal(visible)
			return listSQL{From: "document_merge_requests",
				Where: "organisation_id = ? AND status = 'open'" +
					" AND EXISTS (SELECT 1 FROM document_branches b WHERE b.id = from_branch_id AND b.name LIKE 'site/%')" +
					" AND document_id IN (SELECT d.id FROM documents d WHERE d.organisation_id = ? AND d.deleted_at IS NULL" +
					" AND (coalesce(d.project_id, 0) || ':' || coalesce(d.package_id, 0)) IN (SELECT value FROM json_each(?)))",
				Args: []any{orgID, orgID, string(vis)}}, nil
		},
		Rows: byIDs((*db.Queries).SyncSiteMergeRequestsByIDs, each(func(m db.SyncSiteMergeRequestsByIDsRow) syncMergeRequestJSON {
			return syncMergeRequestJSON{ID: db.ID(m.ID), Number: m.Number, DocumentID: db.ID(m.DocumentID), DocumentTitle: m.DocumentTitle,
				Title: m.Title, FromBranch: m.FromBranch, ToBranch: m.ToBranch, CreatedAt: m.CreatedAt}
		}))})
}
