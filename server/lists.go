package server

// Paging and filtering shared by every list endpoint ($filter, $skip, $top,
// X-Total-Count). See docs/lists.md.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"workspace/db"
)

const (
	defaultTop = 50
	maxTop     = 1000
)

// listQuery is a list request's compiled filter and page.
type listQuery struct {
	Where string // compiled $filter; "" when none
	Args  []any
	Skip  int
	Top   int
}

// parseListQuery reads $filter, $skip and $top. fields is the endpoint's
// whitelist (nil: nothing is filterable). Every problem is a 400 naming the
// parameter, or the filter field at fault.
func parseListQuery(r *http.Request, fields db.FilterFields) (listQuery, error) {
	lq := listQuery{Top: defaultTop}
	q := r.URL.Query()
	for _, name := range []string{"$filter", "$skip", "$top"} {
		if len(q[name]) > 1 {
			return lq, fieldError(name, "must be given at most once")
		}
	}
	var err error
	if v, ok := q["$skip"]; ok {
		if lq.Skip, err = pageNumber(v[0]); err != nil {
			return lq, fieldError("$skip", "must be a non-negative integer")
		}
	}
	if v, ok := q["$top"]; ok {
		if lq.Top, err = pageNumber(v[0]); err != nil {
			return lq, fieldError("$top", fmt.Sprintf("must be an integer from 0 to %d", maxTop))
		}
		// decisions.md says "at most 1000": a larger page is refused rather
		// than silently cut, so a client never mistakes a short page for the end.
		if lq.Top > maxTop {
			return lq, fieldError("$top", fmt.Sprintf("must be an integer from 0 to %d", maxTop))
		}
	}
	if v, ok := q["$filter"]; ok {
		lq.Where, lq.Args, err = db.CompileFilter(v[0], fields)
		var fe *db.FilterError
		if errors.As(err, &fe) {
			field, problem := fe.Field, fe.Message
			if field == "" {
				field, problem = "$filter", "$filter "+fe.Message
			}
			return lq, &Error{Status: http.StatusBadRequest, Message: "The $filter query parameter is invalid.",
				Fields: map[string]string{field: problem}}
		}
		if err != nil {
			return lq, err
		}
	}
	return lq, nil
}

// pageNumber reads a non-negative decimal integer; signs, spaces and
// anything past 18 digits are refused.
func pageNumber(s string) (int, error) {
	if s == "" || len(s) > 18 {
		return 0, strconv.ErrSyntax
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, strconv.ErrSyntax
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return int(n), err
}

// setTotalCount sets X-Total-Count: the rows matching the filter, before paging.
func setTotalCount(w http.ResponseWriter, n int64) {
	w.Header().Set("X-Total-Count", strconv.FormatInt(n, 10))
}

// listSQL is the fixed part of one list endpoint's page query. Every string
// is ours; the caller's only contribution is the compiled filter in
// listQuery. Only ids are read here: the rows come from the area's sqlc
// XListByIDs query, so the filter compiler stays the only dynamic SQL.
type listSQL struct {
	From    string // one table with an integer id (the page is found by id)
	Where   string // base condition (organisation, visibility, ...); "" for none
	Args    []any  // arguments of Where
	OrderBy string // "" orders by id
	// Total, when set, is X-Total-Count worked out by the caller (from kept
	// counts, say), so no count query runs.
	Total *int64
}

// and joins the compiled $filter to a base condition.
func (lq listQuery) and(where string, args []any) (string, []any) {
	args = append([]any(nil), args...)
	switch {
	case lq.Where == "":
		return where, args
	case where == "":
		return "(" + lq.Where + ")", append(args, lq.Args...)
	}
	return "(" + where + ") AND (" + lq.Where + ")", append(args, lq.Args...)
}

// maxCachedIDs bounds the id lists kept per list query (larger results
// are paged by the database every time).
const maxCachedIDs = 50_000

// matchingIDs is every id a list query matches, in order, kept between
// writes (see genCache): paging through a list then costs no count and no
// OFFSET scan. ok is false when the result is too large to keep.
func (c *accessCache) matchingIDs(ctx context.Context, tx *sql.Tx, gen uint64, key, from, cond, order string, args []any) ([]int64, bool) {
	c.fills.Add(1)
	rows, err := tx.QueryContext(ctx, "SELECT id FROM "+from+cond+" ORDER BY "+order+" LIMIT ?", append(args, maxCachedIDs+1)...)
	if err != nil {
		return nil, false
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, false
		}
		ids = append(ids, id)
	}
	if rows.Err() != nil {
		return nil, false
	}
	if len(ids) > maxCachedIDs {
		c.pages.put(key, nil, gen) // too large: page in the database
		return nil, false
	}
	if ids == nil {
		ids = []int64{}
	}
	c.pages.put(key, ids, gen)
	return ids, true
}

// fillPays decides whether to fill the id cache for a list whose total is
// known without counting (kept counts): filling reads every matching id,
// a cost that grows with the organisation and that the next write throws
// away, while paging in the database reads $skip+$top index entries.
// Under a steady stream of writes (the soak: a create every 20 ms) a fill
// per write made every list page cost the whole organisation, so its p99
// grew with it. As in ski rental, the pages of one generation are read
// from the database until they have read as many entries as a fill would,
// then the cache is filled: a list between writes never costs more than
// twice the cheaper of the two, and a quiet list still pays the fill once.
func (c *accessCache) fillPays(key string, gen uint64, cost int, total int64) bool {
	spent, _ := c.paged.get(key, gen)
	spent += int64(cost)
	if spent >= total {
		return true
	}
	c.paged.put(key, spent, gen)
	return false
}

// queryPage counts the rows matching base condition and filter and returns
// the ids of the requested page in order, inside the caller's read
// transaction so the access checks, the count and the page see one
// snapshot. The ids come from the indexes alone, so rows skipped by $skip
// are never read; the caller reads the page's rows by XListByIDs(idsJSON(ids)).
func queryPage(ctx context.Context, q *db.Queries, tx *sql.Tx, s listSQL, lq listQuery) (ids []int64, total int64, err error) {
	where, args := lq.and(s.Where, s.Args)
	cond := ""
	if where != "" {
		cond = " WHERE " + where
	}
	order := s.OrderBy
	if order == "" {
		order = "id"
	}
	if c, gen := cachedAccess(ctx, q); c != nil {
		key := s.From + "\x00" + cond + "\x00" + order + "\x00" + fmt.Sprintf("%#v", args)
		all, ok := c.pages.get(key, gen)
		if !ok && (s.Total == nil || c.fillPays(key, gen, lq.Skip+lq.Top, *s.Total)) {
			all, ok = c.matchingIDs(ctx, tx, gen, key, s.From, cond, order, args)
		}
		if ok && all != nil {
			skip := min(lq.Skip, len(all))
			return all[skip:min(skip+lq.Top, len(all))], int64(len(all)), nil
		}
	}
	if s.Total != nil {
		total = *s.Total
	} else if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM "+s.From+cond, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count %s: %w", s.From, err)
	}
	if lq.Top == 0 || int64(lq.Skip) >= total {
		return nil, total, nil
	}
	rows, err := tx.QueryContext(ctx, "SELECT id FROM "+s.From+cond+" ORDER BY "+order+" LIMIT ? OFFSET ?",
		append(args, lq.Top, lq.Skip)...)
	if err != nil {
		return nil, 0, fmt.Errorf("list %s: %w", s.From, err)
	}
	defer rows.Close()
	ids = make([]int64, 0, lq.Top)
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, 0, fmt.Errorf("list %s: %w", s.From, err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("list %s: %w", s.From, err)
	}
	return ids, total, nil
}

// listSpec is what one list endpoint says; listPage is the shell they all
// share (decode, check, page, render, answer), so an endpoint cannot forget
// X-Total-Count, the read transaction or the empty page's [].
type listSpec[T any] struct {
	// Path, when set, is the path parameter read first (a malformed one is
	// a 400 before anything else); Scope gets its value.
	Path string
	// Fields is the $filter whitelist (nil: nothing is filterable).
	Fields db.FilterFields
	// Query, when set, decodes the request's list parameters in place of
	// parseListQuery(Fields): an endpoint with parameters of its own reads
	// them there, in the order its errors take precedence.
	Query func(id int64) (listQuery, error)
	// Scope runs first in the read transaction: it checks access and names
	// the rows. A listSQL with no From means nothing is visible: an empty
	// page, X-Total-Count 0.
	Scope func(tx *sql.Tx, q *db.Queries, id int64, lq listQuery) (listSQL, error)
	// Check, when set, may refuse a page by its total before its rows are
	// read (an export larger than it can hold).
	Check func(total int64) error
	// Rows reads and renders a non-empty page's rows, in the order of ids.
	Rows func(ctx context.Context, q *db.Queries, ids []int64) ([]T, error)
	// Header, when set, adds the endpoint's own headers to a 200 answer.
	Header func(h http.Header)
}

// listPage answers a list request as l says: 200 with the page as a JSON
// array and X-Total-Count. A page of pre-encoded items (T is []byte, the
// project list's row cache) is joined as it is.
func listPage[T any](s *Server, rq *request, l listSpec[T]) error {
	var id int64
	var err error
	if l.Path != "" {
		if id, err = rq.pathID(l.Path); err != nil {
			return err
		}
	}
	var lq listQuery
	if l.Query != nil {
		lq, err = l.Query(id)
	} else {
		lq, err = parseListQuery(rq.r, l.Fields)
	}
	if err != nil {
		return err
	}
	out, total, err := l.read(s, rq, id, lq)
	if err != nil {
		return err
	}
	setTotalCount(rq.w, total)
	if l.Header != nil {
		l.Header(rq.w.Header())
	}
	if items, ok := any(out).([][]byte); ok {
		writeJSONArray(rq.w, http.StatusOK, items)
		return nil
	}
	return rq.json(http.StatusOK, out)
}

// read is the page of lq and the total, in one read transaction so the
// access check, the count and the rows see one snapshot. An empty page is
// [] (never null).
func (l listSpec[T]) read(s *Server, rq *request, id int64, lq listQuery) ([]T, int64, error) {
	var out []T
	var total int64
	err := s.store.ReadTxSQL(rq.ctx, func(tx *sql.Tx, q *db.Queries) error {
		ls, err := l.Scope(tx, q, id, lq)
		if err != nil || ls.From == "" {
			return err
		}
		var ids []int64
		if ids, total, err = queryPage(rq.ctx, q, tx, ls, lq); err != nil {
			return err
		}
		if l.Check != nil {
			if err := l.Check(total); err != nil {
				return err
			}
		}
		if len(ids) == 0 {
			return nil
		}
		out, err = l.Rows(rq.ctx, q, ids)
		return err
	})
	if out == nil {
		out = []T{}
	}
	return out, total, err
}

// orgScope is the scope of most lists: the organisation named by the path
// id, checked by orgAccess for perm (an absent one is a 400), and the rows
// of table from in it that also meet where (may be "").
func orgScope(rq *request, perm Permission, from, where string, args ...any) func(*sql.Tx, *db.Queries, int64, listQuery) (listSQL, error) {
	return func(_ *sql.Tx, q *db.Queries, orgID int64, _ listQuery) (listSQL, error) {
		if _, err := orgAccess(rq, q, orgID, http.StatusBadRequest, perm); err != nil {
			return listSQL{}, err
		}
		w := "organisation_id = ?"
		if where != "" {
			w += " AND " + where
		}
		return listSQL{From: from, Where: w, Args: append([]any{orgID}, args...)}, nil
	}
}

// byIDs is the Rows of a page read by an area's sqlc XListByIDs query
// (given as a method expression, (*db.Queries).XListByIDs) and rendered
// whole by render.
func byIDs[R, T any](list func(*db.Queries, context.Context, any) ([]R, error),
	render func(context.Context, *db.Queries, []R) ([]T, error)) func(context.Context, *db.Queries, []int64) ([]T, error) {
	return func(ctx context.Context, q *db.Queries, ids []int64) ([]T, error) {
		rows, err := list(q, ctx, idsJSON(ids))
		if err != nil {
			return nil, err
		}
		return render(ctx, q, rows)
	}
}

// each renders rows one at a time by a plain conversion.
func each[R, T any](to func(R) T) func(context.Context, *db.Queries, []R) ([]T, error) {
	return func(_ context.Context, _ *db.Queries, rows []R) ([]T, error) {
		out := make([]T, 0, len(rows))
		for _, r := range rows {
			out = append(out, to(r))
		}
		return out, nil
	}
}

// eachQ renders rows one at a time by a conversion that reads more.
func eachQ[R, T any](to func(context.Context, *db.Queries, R) (T, error)) func(context.Context, *db.Queries, []R) ([]T, error) {
	return func(ctx context.Context, q *db.Queries, rows []R) ([]T, error) {
		out := make([]T, 0, len(rows))
		for _, r := range rows {
			t, err := to(ctx, q, r)
			if err != nil {
				return nil, err
			}
			out = append(out, t)
		}
		return out, nil
	}
}
