package server

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/julienschmidt/httprouter"

	"workspace/db"
)

// The audit trail (docs/operations.md, Audit trail): every authenticated
// write through the API appends an entry (actor, action as the route
// pattern, target ids from the path, the body's top-level field names, the
// request id, the time) to its organisation's hash chain, in the write's own
// transaction (db.WithAfterWrite). The organisation is the one the handler
// authorized in; writes outside any organisation go to chain 0.

// auditSlot collects what a write's entry needs while the request runs.
type auditSlot struct {
	orgID   *int64
	fields  []string
	details auditDetails
}

// auditDetails is what a change set, for the log's sentences ("imported 5
// assets", "changed the status to In repair"): noted by the handlers whose
// entries read better with it, never secrets (names and statuses a member
// of the organisation sees anyway).
type auditDetails struct {
	Count  *int              `json:"count,omitempty"`
	Values map[string]string `json:"values,omitempty"`
}

type auditKey struct{}

func auditSlotFrom(ctx context.Context) *auditSlot {
	s, _ := ctx.Value(auditKey{}).(*auditSlot)
	return s
}

// noteAuditOrg records the organisation a request is authorized in.
func noteAuditOrg(ctx context.Context, orgID int64) {
	if s := auditSlotFrom(ctx); s != nil {
		s.orgID = &orgID
	}
}

// noteAuditFields records the top-level keys of a JSON body.
func noteAuditFields(ctx context.Context, keys []string) {
	s := auditSlotFrom(ctx)
	if s == nil {
		return
	}
	s.fields = append(s.fields[:0], keys...)
	slices.Sort(s.fields)
}

// noteAuditCount records how many things the request changed (rows
// imported, notifications marked read).
func noteAuditCount(ctx context.Context, n int) {
	if s := auditSlotFrom(ctx); s != nil {
		s.details.Count = &n
	}
}

// noteAuditValue records a field's new value in words (a status's name,
// not its id).
func noteAuditValue(ctx context.Context, field, value string) {
	s := auditSlotFrom(ctx)
	if s == nil {
		return
	}
	if s.details.Values == nil {
		s.details.Values = map[string]string{}
	}
	s.details.Values[field] = value
}

func isWrite(method string) bool {
	return method != http.MethodGet && method != http.MethodHead && method != http.MethodOptions
}

// withAudit makes every write transaction of an authenticated write request
// append its audit entry.
func (s *Server) withAudit(r *http.Request, pattern string, ps httprouter.Params, actorID int64) *http.Request {
	slot := &auditSlot{}
	targets := map[string]string{}
	for _, p := range ps {
		targets[p.Key] = p.Value
	}
	targetJSON, _ := json.Marshal(targets)
	ctx := context.WithValue(r.Context(), auditKey{}, slot)
	ctx = db.WithAfterWrite(ctx, func(ctx context.Context, q *db.Queries) error {
		fields, _ := json.Marshal(append([]string{}, slot.fields...))
		details := ""
		if slot.details.Count != nil || len(slot.details.Values) > 0 {
			b, _ := json.Marshal(slot.details)
			details = string(b)
		}
		e := db.AuditLog{ID: s.store.IDs.Next(), OrganisationID: slot.orgID, ActorID: &actorID, Action: pattern,
			TargetIds: string(targetJSON), ChangedFields: string(fields), RequestID: requestID(ctx), CreatedAt: s.nowText(), Details: details}
		if slot.orgID != nil {
			e.Chain = *slot.orgID
		}
		return s.store.AppendAudit(ctx, q, e)
	})
	return r.WithContext(ctx)
}

type auditEntryJSON struct {
	ID             db.ID             `json:"id"`
	Seq            int64             `json:"seq"`
	OrganisationID *db.ID            `json:"organisation_id"`
	ActorID        *db.ID            `json:"actor_id"`
	Action         string            `json:"action"`
	TargetIDs      map[string]string `json:"target_ids"`
	ChangedFields  []string          `json:"changed_fields"`
	RequestID      string            `json:"request_id"`
	CreatedAt      string            `json:"created_at"`
	PrevHash       string            `json:"prev_hash"`
	Hash           string            `json:"hash"`
	Details        auditDetails      `json:"details"`
}

func toAuditEntry(e db.AuditLog) auditEntryJSON {
	out := auditEntryJSON{ID: db.ID(e.ID), Seq: e.Seq, OrganisationID: optID(e.OrganisationID), ActorID: optID(e.ActorID),
		Action: e.Action, RequestID: e.RequestID, CreatedAt: e.CreatedAt, PrevHash: e.PrevHash, Hash: e.Hash,
		TargetIDs: map[string]string{}, ChangedFields: []string{}}
	_ = json.Unmarshal([]byte(e.TargetIds), &out.TargetIDs)
	_ = json.Unmarshal([]byte(e.ChangedFields), &out.ChangedFields)
	if e.Details != "" {
		_ = json.Unmarshal([]byte(e.Details), &out.Details)
	}
	return out
}

// auditFilter reads the log's filters: actor and target (ids), action (a
// route pattern, or its method alone), from and to (RFC 3339).
// maxAuditActions bounds the action filter's list (the server has about
// 200 write routes).
const maxAuditActions = 300

func auditFilter(rq *request, orgID int64) (listSQL, error) {
	qs := rq.r.URL.Query()
	where, args := []string{"chain = ?"}, []any{orgID}
	p := problems{}
	if v := qs.Get("actor"); v != "" {
		if id, ok := db.ParseID(v); ok {
			where, args = append(where, "actor_id = ?"), append(args, int64(id))
		} else {
			p.add("actor", "must be a snowflake id")
		}
	}
	if v := qs.Get("target"); v != "" {
		if _, ok := db.ParseID(v); ok {
			where, args = append(where, "EXISTS (SELECT 1 FROM json_each(target_ids) WHERE value = ?)"), append(args, v)
		} else {
			p.add("target", "must be a snowflake id")
		}
	}
	if v := qs.Get("action"); v != "" {
		// A comma-separated list matches any of its items, each a method or
		// a whole route pattern (patterns hold no commas): the web app asks
		// for "what happened" (everything created, say) as the patterns of
		// its sentence table (issue 29).
		items := strings.Split(v, ",")
		if len(items) > maxAuditActions {
			p.add("action", fmt.Sprintf("must list at most %d actions", maxAuditActions))
		}
		var anyOf []string
		for _, it := range items {
			it = strings.TrimSpace(it)
			p.length("action", it, 1, 300)
			if strings.Contains(it, " ") {
				anyOf, args = append(anyOf, "action = ?"), append(args, it)
			} else {
				anyOf, args = append(anyOf, "action LIKE ? ESCAPE '\\'"), append(args, likeEscape(strings.ToUpper(it))+" %")
			}
		}
		where = append(where, "("+strings.Join(anyOf, " OR ")+")")
	}
	for _, f := range []struct{ param, cond string }{{"from", "created_at >= ?"}, {"to", "created_at < ?"}} {
		if v := qs.Get(f.param); v != "" {
			t, err := time.Parse(time.RFC3339Nano, v)
			if err != nil {
				p.add(f.param, "must be an RFC 3339 date and time")
				continue
			}
			where, args = append(where, f.cond), append(args, db.FormatTime(t))
		}
	}
	// By time across the organisation's chains (one per node that wrote
	// to it, docs/sync.md): ids are minted in time order.
	return listSQL{From: "audit_log", Where: strings.Join(where, " AND "), Args: args, OrderBy: "id DESC"}, p.err()
}

// auditLog: the organisation's entries, newest first (MANAGE_ORGANISATION).
func (s *Server) auditLog(rq *request) error {
	var ls listSQL
	return listPage(s, rq, listSpec[auditEntryJSON]{Path: "id",
		Query: func(orgID int64) (listQuery, error) {
			lq, err := parseListQuery(rq.r, nil)
			if err != nil {
				return lq, err
			}
			ls, err = auditFilter(rq, orgID)
			return lq, err
		},
		Scope: func(_ *sql.Tx, q *db.Queries, orgID int64, _ listQuery) (listSQL, error) {
			_, err := orgAccess(rq, q, orgID, http.StatusNotFound, ManageOrganisation)
			return ls, err
		},
		Rows: byIDs((*db.Queries).AuditListByIDs, each(toAuditEntry))})
}

// auditExport: every matching entry as JSON Lines, oldest first, read in
// pages so a long trail is never held in memory at once.
func (s *Server) auditExport(rq *request) error {
	orgID, err := rq.pathID("id")
	if err != nil {
		return err
	}
	ls, err := auditFilter(rq, orgID)
	if err != nil {
		return err
	}
	ls.OrderBy = "id"
	if err := s.store.ReadTx(rq.ctx, func(q *db.Queries) error {
		_, err := orgAccess(rq, q, orgID, http.StatusNotFound, ManageOrganisation)
		return err
	}); err != nil {
		return err
	}
	rq.w.Header().Set("Content-Type", "application/x-ndjson")
	rq.w.Header().Set("Content-Disposition", contentDisposition("audit-log.jsonl"))
	rq.w.WriteHeader(http.StatusOK)
	enc := json.NewEncoder(rq.w)
	for skip := 0; ; skip += maxTop {
		var rows []db.AuditLog
		err := s.store.ReadTxSQL(rq.ctx, func(tx *sql.Tx, q *db.Queries) error {
			ids, _, err := queryPage(rq.ctx, q, tx, ls, listQuery{Skip: skip, Top: maxTop})
			if err != nil || len(ids) == 0 {
				return err
			}
			rows, err = q.AuditListByIDs(rq.ctx, idsJSON(ids))
			return err
		})
		if err != nil {
			// The status is sent; end the stream short and log why.
			s.log.ErrorContext(rq.ctx, "audit export", "err", err)
			return nil
		}
		for _, e := range rows {
			if err := enc.Encode(toAuditEntry(e)); err != nil {
				return nil // the client went away
			}
		}
		if len(rows) < maxTop {
			return nil
		}
	}
}
