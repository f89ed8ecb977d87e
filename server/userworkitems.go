package server

// The caller's own work items across organisations, work item schedules
// and subscriptions (operations-data.md, Work items; docs/workitems.md).

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"workspace/db"
)

// userWorkItemFilter is the OData whitelist of GET /users/@me/work-items.
var userWorkItemFilter = db.FilterFields{
	"status":     {Column: "status", Kind: db.FieldEnum, Values: []string{statusOpen, statusClosed}},
	"type_id":    {Column: "type_id", Kind: db.FieldID},
	"project_id": {Column: "project_id", Kind: db.FieldID},
	"start_at":   {Column: "start_at", Kind: db.FieldTime},
	"finish_at":  {Column: "finish_at", Kind: db.FieldTime},
}

// userWorkItemIDFilters: query parameter -> the column it selects on.
var userWorkItemIDFilters = []struct{ param, column string }{
	{"organisation", "organisation_id"}, {"type", "type_id"}, {"work_item", "work_item_id"}, {"document", "document_id"},
	{"fleet", "fleet_id"}, {"project", "project_id"}, {"location", "location_id"},
}

// userWorkItemTimeFilters: query parameter -> condition on the stored time.
var userWorkItemTimeFilters = []struct{ param, cond string }{
	{"open", "created_at >= ?"}, {"closed", "closed_at >= ?"},
	{"start_date", "start_at >= ?"}, {"finish_date", "finish_at <= ?"},
}

// filterTime reads a date (midnight UTC) or an RFC 3339 date-time into the
// stored layout.
func filterTime(v string) (string, bool) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02"} {
		if t, err := time.Parse(layout, v); err == nil && t.UTC().Year() >= 0 && t.UTC().Year() <= 9999 {
			return db.FormatTime(t), true
		}
	}
	return "", false
}

// userWorkItems lists the work items the caller is assigned to, or invited
// to through one of their schedules (not declined), in every organisation
// where the caller is a member, with the row's filters and OData.
// X-Total-Count and X-Status-Count count the filtered items before paging.
func (s *Server) userWorkItems(rq *request) error {
	qv := rq.r.URL.Query()
	p := problems{}
	// user_work_items holds the caller's work items (assigned or invited)
	// with the filtered columns, clustered by user: one range read, never a
	// lookup per work item nor an organisation's whole table (the unary + on
	// organisation_id keeps the planner on the primary key).
	where := "user_id = ?"
	args := []any{rq.user.ID}
	for _, f := range userWorkItemIDFilters {
		if v, ok := qv[f.param]; ok {
			id, ok := db.ParseID(v[0])
			if !ok {
				p.add(f.param, "must be a snowflake id")
				continue
			}
			where += " AND " + f.column + " = ?"
			args = append(args, int64(id))
		}
	}
	includeAssets := false
	if v, ok := qv["include_assets"]; ok {
		b, err := strconv.ParseBool(v[0])
		if err != nil {
			p.add("include_assets", "must be true or false")
		}
		includeAssets = b
	}
	if v, ok := qv["asset_group"]; ok {
		id, ok := db.ParseID(v[0])
		switch {
		case !ok:
			p.add("asset_group", "must be a snowflake id")
		case includeAssets:
			// The group's own work items and those of the assets it holds.
			where += " AND (asset_group_id = ? OR asset_group_id IN (SELECT asset_id FROM asset_group_members WHERE group_id = ?))"
			args = append(args, int64(id), int64(id))
		default:
			where += " AND asset_group_id = ?"
			args = append(args, int64(id))
		}
	}
	if v, ok := qv["status"]; ok {
		if v[0] != statusOpen && v[0] != statusClosed {
			p.add("status", `must be "open" or "closed"`)
		}
		where += " AND status = ?"
		args = append(args, v[0])
	}
	for _, f := range userWorkItemTimeFilters {
		if v, ok := qv[f.param]; ok {
			t, ok := filterTime(v[0])
			if !ok {
				p.add(f.param, "must be an ISO 8601 date or date-time")
				continue
			}
			where += " AND " + f.cond
			args = append(args, t)
		}
	}
	if err := p.err(); err != nil {
		return err
	}
	lq, err := parseListQuery(rq.r, userWorkItemFilter)
	if err != nil {
		return err
	}
	out := []workItemJSON{}
	var open, closed int64
	err = s.store.ReadTxSQL(rq.ctx, func(tx *sql.Tx, q *db.Queries) error {
		all, err := accessAll(rq.ctx, q, rq.user.ID)
		if err != nil {
			return err
		}
		var orgs []int64
		for id, a := range all {
			if a.IsMember() {
				orgs = append(orgs, id)
			}
		}
		if len(orgs) == 0 {
			return nil
		}
		base := "+organisation_id IN (SELECT value FROM json_each(?)) AND " + where
		cond, condArgs := lq.and(base, append([]any{idsJSON(orgs)}, args...))
		// One pass reads the id and status of every match (a caller's own
		// work items, not an organisation's): the two counts and the page
		// come from it, where queryPage would count and page in two.
		matches, err := tx.QueryContext(rq.ctx, "SELECT work_item_id, status = 'open' FROM user_work_items WHERE "+cond+" ORDER BY work_item_id", condArgs...)
		if err != nil {
			return fmt.Errorf("list work items: %w", err)
		}
		defer matches.Close()
		var ids []int64
		for n := 0; matches.Next(); n++ {
			var id int64
			var isOpen bool
			if err := matches.Scan(&id, &isOpen); err != nil {
				return fmt.Errorf("list work items: %w", err)
			}
			if isOpen {
				open++
			} else {
				closed++
			}
			if n >= lq.Skip && len(ids) < lq.Top {
				ids = append(ids, id)
			}
		}
		if err := matches.Err(); err != nil {
			return fmt.Errorf("list work items: %w", err)
		}
		if len(ids) == 0 {
			return nil
		}
		rows, err := q.WorkItemListByIDs(rq.ctx, idsJSON(ids))
		if err != nil {
			return err
		}
		out, err = renderWorkItems(rq.ctx, q, rows)
		return err
	})
	if err != nil {
		return err
	}
	setTotalCount(rq.w, open+closed)
	rq.w.Header().Set("X-Status-Count", fmt.Sprintf("open=%d,closed=%d", open, closed))
	return rq.json(http.StatusOK, out)
}

// workItemForViewer loads a work item the caller may read (VIEW_WORKITEMS
// on its layer, or assigned to it); absent is 404.
func workItemForViewer(ctx context.Context, q *db.Queries, userID, id int64) (db.WorkItem, Access, error) {
	w, a, err := workItemAccess(ctx, q, userID, id, workItemAbsent(http.StatusNotFound))
	if err != nil {
		return w, a, err
	}
	if err := a.Require(0); err != nil {
		return w, a, err
	}
	v, err := loadWorkItemView(ctx, q, []db.WorkItem{w})
	if err != nil {
		return w, a, err
	}
	return w, a, requireView(a, v, w)
}

type workItemSubscriptionJSON struct {
	WorkItemID db.ID     `json:"work_item_id"`
	User       *userJSON `json:"user"`
	CreatedAt  string    `json:"created_at"`
}

// workItemSubscribe: the caller follows a work item it may read, and is
// told of its status changes. Following twice is following once.
func (s *Server) workItemSubscribe(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var out workItemSubscriptionJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		w, _, err := workItemForViewer(rq.ctx, q, rq.user.ID, id)
		if err != nil {
			return err
		}
		if err := q.WorkItemSubscribe(rq.ctx, db.WorkItemSubscribeParams{WorkItemID: w.ID, UserID: rq.user.ID, CreatedAt: s.nowText()}); err != nil {
			return err
		}
		subs, err := mySubscriptions(rq.ctx, q, w.ID, rq.user.ID)
		if err == nil && len(subs) == 1 {
			out = subs[0]
		}
		return err
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

// workItemUnsubscribe stops following; not following is fine (204).
func (s *Server) workItemUnsubscribe(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		w, a, err := workItemAccess(rq.ctx, q, rq.user.ID, id, workItemAbsent(http.StatusNotFound))
		if err != nil {
			return err
		}
		// Leaving needs no read access: someone who lost it may still stop
		// following. Only a member of another organisation is refused.
		if !a.Member {
			return a.Require(0)
		}
		return q.WorkItemUnsubscribe(rq.ctx, db.WorkItemUnsubscribeParams{WorkItemID: w.ID, UserID: rq.user.ID})
	})
	if err != nil {
		return err
	}
	return rq.noContent()
}

func mySubscriptions(ctx context.Context, q *db.Queries, workItemID, userID int64) ([]workItemSubscriptionJSON, error) {
	rows, err := q.WorkItemSubscriptionsOf(ctx, workItemID)
	if err != nil {
		return nil, err
	}
	users, err := userObjects(ctx, q, &userID)
	if err != nil {
		return nil, err
	}
	out := []workItemSubscriptionJSON{}
	for _, r := range rows {
		if r.UserID == userID {
			out = append(out, workItemSubscriptionJSON{WorkItemID: db.ID(r.WorkItemID), User: userRef(users, &r.UserID), CreatedAt: r.CreatedAt})
		}
	}
	return out, nil
}

// userWorkItemSubscriptions lists the caller's subscriptions to one work
// item it may read (none or one).
func (s *Server) userWorkItemSubscriptions(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var out []workItemSubscriptionJSON
	err = s.store.ReadTx(rq.ctx, func(q *db.Queries) error {
		w, _, err := workItemForViewer(rq.ctx, q, rq.user.ID, id)
		if err != nil {
			return err
		}
		out, err = mySubscriptions(rq.ctx, q, w.ID, rq.user.ID)
		return err
	})
	if err != nil {
		return err
	}
	setTotalCount(rq.w, int64(len(out)))
	return rq.json(http.StatusOK, out)
}

// workItemScheduleCreate adds a schedule held by the work item
// (CREATE_WORKITEMS where the work item is), through the schedules area.
func (s *Server) workItemScheduleCreate(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var b scheduleBody
	if err := rq.decodeCreate(&b, scheduleReadOnly...); err != nil {
		return err
	}
	sc := db.Schedule{}
	if err := b.apply(&sc, true); err != nil {
		return err
	}
	var out scheduleJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		w, a, err := workItemAccess(rq.ctx, q, rq.user.ID, id, workItemAbsent(http.StatusNotFound))
		if err != nil {
			return err
		}
		if err := a.Require(CreateWorkitems); err != nil {
			return err
		}
		sc.OrganisationID, sc.WorkItemID = w.OrganisationID, &w.ID
		out, err = s.createSchedule(rq.ctx, q, sc, b.InviteeIDs, rq.user.ID)
		return err
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusCreated, out)
}
