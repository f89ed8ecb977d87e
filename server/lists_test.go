package server

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"workspace/db"
)

var listTestFields = db.FilterFields{
	"status": {Column: "status", Kind: db.FieldEnum, Values: []string{"open", "closed"}},
	"name":   {Column: "name", Kind: db.FieldString, CaseInsensitive: true},
}

func TestParseListQuery(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		query string // raw query string
		want  listQuery
		field string // non-empty: want a 400 naming this field
		msg   string // substring of that field's problem
	}{
		{name: "defaults", query: "", want: listQuery{Top: 50}},
		{name: "skip and top", query: "$skip=20&$top=10", want: listQuery{Skip: 20, Top: 10}},
		{name: "top zero", query: "$top=0", want: listQuery{Top: 0}},
		{name: "top at limit", query: "$top=1000", want: listQuery{Top: 1000}},
		{name: "encoded names", query: "%24skip=3&%24top=4", want: listQuery{Skip: 3, Top: 4}},
		{name: "filter", query: "$filter=" + url.QueryEscape("status eq 'open' and startswith(name, 'A')"),
			want: listQuery{Where: `status = ? AND casefold(name) LIKE ? ESCAPE '\'`, Args: []any{"open", "a%"}, Top: 50}},
		{name: "blank filter", query: "$filter=", want: listQuery{Top: 50}},
		{name: "other parameters ignored", query: "title=x&$orderby=name", want: listQuery{Top: 50}},
		{name: "top over limit", query: "$top=1001", field: "$top", msg: "from 0 to 1000"},
		{name: "negative top", query: "$top=-1", field: "$top", msg: "from 0 to 1000"},
		{name: "non-numeric top", query: "$top=ten", field: "$top", msg: "from 0 to 1000"},
		{name: "empty top", query: "$top=", field: "$top", msg: "from 0 to 1000"},
		{name: "signed top", query: "$top=%2B5", field: "$top", msg: "from 0 to 1000"},
		{name: "huge top", query: "$top=99999999999999999999", field: "$top", msg: "from 0 to 1000"},
		{name: "negative skip", query: "$skip=-1", field: "$skip", msg: "non-negative integer"},
		{name: "non-numeric skip", query: "$skip=1.5", field: "$skip", msg: "non-negative integer"},
		{name: "huge skip", query: "$skip=9999999999999999999", field: "$skip", msg: "non-negative integer"},
		{name: "repeated top", query: "$top=1&$top=2", field: "$top", msg: "at most once"},
		{name: "repeated filter", query: "$filter=a&$filter=b", field: "$filter", msg: "at most once"},
		{name: "unknown filter field", query: "$filter=" + url.QueryEscape("colour eq 'red'"), field: "colour", msg: "is not a filterable field (filterable: name, status)"},
		{name: "wrong value", query: "$filter=" + url.QueryEscape("status eq 'done'"), field: "status", msg: "one of 'open', 'closed'"},
		{name: "filter syntax", query: "$filter=" + url.QueryEscape("status eq"), field: "$filter", msg: "$filter has end of filter where a value for status was expected at position 10"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "/things?"+tc.query, nil)
			got, err := parseListQuery(r, listTestFields)
			if tc.field == "" {
				if err != nil {
					t.Fatalf("error %v, want none", err)
				}
				if !reflect.DeepEqual(got, tc.want) {
					t.Fatalf("got %#v, want %#v", got, tc.want)
				}
				return
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("got %#v, %v; want a 400 naming %s", got, err, tc.field)
			}
			if e.Status != http.StatusBadRequest {
				t.Errorf("status %d, want 400", e.Status)
			}
			if !strings.Contains(e.Fields[tc.field], tc.msg) {
				t.Errorf("errors %v, want %s: ...%s...", e.Fields, tc.field, tc.msg)
			}
		})
	}
}

// A rejected filter reaches the client as the JSON error body.
func TestParseListQueryErrorBody(t *testing.T) {
	t.Parallel()
	r := httptest.NewRequest(http.MethodGet, "/things?$filter="+url.QueryEscape("colour eq 'red'"), nil)
	_, err := parseListQuery(r, listTestFields)
	rec := httptest.NewRecorder()
	writeError(rec, r, err)
	if rec.Code != http.StatusBadRequest {
		t.Fatalf("status %d, want 400", rec.Code)
	}
	var body errorBody
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatalf("body %s: %v", rec.Body, err)
	}
	want := errorBody{Message: "The $filter query parameter is invalid.", Errors: map[string]string{"colour": "is not a filterable field (filterable: name, status)"}}
	if !reflect.DeepEqual(body, want) {
		t.Fatalf("body %+v, want %+v", body, want)
	}
}

func TestSetTotalCount(t *testing.T) {
	t.Parallel()
	rec := httptest.NewRecorder()
	setTotalCount(rec, 1234)
	if got := rec.Header().Get("X-Total-Count"); got != "1234" {
		t.Fatalf("X-Total-Count %q, want 1234", got)
	}
}

// listStore is a real database with a table of things in two organisations.
func listStore(t *testing.T) *db.Store {
	t.Helper()
	ctx := context.Background()
	store, err := db.Open(ctx, db.Options{Path: filepath.Join(t.TempDir(), "list.db"), Synchronous: "NORMAL", NodeID: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	if _, err := store.Writer.Exec(`CREATE TABLE things (id INTEGER PRIMARY KEY, org INTEGER NOT NULL, name TEXT NOT NULL, status TEXT NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	// Org 1: ids 1..12, odd ids open; org 2: ids 13..15, all open.
	for id := 1; id <= 15; id++ {
		org, status := 1, "closed"
		if id > 12 {
			org = 2
		}
		if id%2 == 1 || org == 2 {
			status = "open"
		}
		if _, err := store.Writer.Exec(`INSERT INTO things VALUES (?, ?, ?, ?)`, id, org, fmt.Sprintf("Thing %02d", id), status); err != nil {
			t.Fatal(err)
		}
	}
	return store
}

func TestQueryPage(t *testing.T) {
	t.Parallel()
	store := listStore(t)
	base := listSQL{From: "things", Where: "org = ?", Args: []any{int64(1)}}
	tests := []struct {
		name  string
		spec  listSQL
		query string
		total int64
		ids   []int64
	}{
		{"first page, default size", base, "", 12, []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}},
		{"page", base, "$skip=4&$top=3", 12, []int64{5, 6, 7}},
		{"last partial page", base, "$skip=10&$top=5", 12, []int64{11, 12}},
		{"skip past the end", base, "$skip=12", 12, []int64{}},
		{"top zero counts only", base, "$top=0", 12, []int64{}},
		{"filter and page", base, "$filter=" + url.QueryEscape("status eq 'open'") + "&$skip=1&$top=2", 6, []int64{3, 5}},
		// The filter's OR stays inside the organisation's condition.
		{"or filter stays in organisation", base, "$filter=" + url.QueryEscape("status eq 'open' or status eq 'closed'") + "&$top=1000", 12,
			[]int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}},
		{"case-insensitive filter", base, "$filter=" + url.QueryEscape("startswith(name, 'THING 1')"), 3, []int64{10, 11, 12}},
		{"no match", base, "$filter=" + url.QueryEscape("name eq 'nothing'"), 0, []int64{}},
		{"other organisation", listSQL{From: "things", Where: "org = ?", Args: []any{int64(2)}}, "", 3, []int64{13, 14, 15}},
		{"no base condition", listSQL{From: "things"}, "$filter=" + url.QueryEscape("status eq 'closed'") + "&$top=2", 6, []int64{2, 4}},
		{"order by", listSQL{From: "things", Where: "org = ?", Args: []any{int64(2)}, OrderBy: "id DESC"}, "", 3, []int64{15, 14, 13}},
	}
	// Uncached, then through the id cache (filled on the first pass of
	// each query, served on the second): the same pages and totals.
	cached := withAccessCache(context.Background(), &accessCache{store: store})
	modes := []struct {
		name string
		ctx  context.Context
	}{{"database", context.Background()}, {"cache fill", cached}, {"cache", cached}}
	for _, mode := range modes {
		for _, tc := range tests {
			t.Run(mode.name+"/"+tc.name, func(t *testing.T) {
				runPageCase(t, store, mode.ctx, tc.spec, tc.query, tc.total, tc.ids)
			})
		}
	}
}

func runPageCase(t *testing.T, store *db.Store, ctx context.Context, spec listSQL, query string, wantTotal int64, wantIDs []int64) {
	t.Helper()
	lq, err := parseListQuery(httptest.NewRequest(http.MethodGet, "/things?"+query, nil), listTestFields)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	ids := []int64{}
	var total int64
	err = store.ReadTxSQL(ctx, func(tx *sql.Tx, q *db.Queries) (err error) {
		var page []int64
		page, total, err = queryPage(ctx, q, tx, spec, lq)
		ids = append(ids, page...)
		return err
	})
	if err != nil {
		t.Fatalf("queryPage: %v", err)
	}
	if total != wantTotal {
		t.Errorf("total %d, want %d", total, wantTotal)
	}
	if !slices.Equal(ids, wantIDs) {
		t.Errorf("ids %v, want %v", ids, wantIDs)
	}
}

// TestListPagesUnderWrites: a list whose total is kept (projects) pages in
// the database while writes keep moving the generation, instead of reading
// every matching id after each write (which made a page's cost, and the
// soak's p99, grow with the organisation: issue 35); between writes it
// fills the id cache once its pages have read as many entries as the fill
// would. Pages and totals are the same either way.
func TestListPagesUnderWrites(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	alice := e.user("alice")
	org := e.org(alice, "Acme")
	projects := "/organisations/" + org + "/projects"
	for i := 0; i < 400; i++ {
		e.must(201, alice, "POST", projects, map[string]any{"name": fmt.Sprintf("P%03d", i)})
	}
	page := projects + "?$filter=" + url.QueryEscape("status eq 'open'") + "&$skip=100&$top=50"
	fills := func() int64 { return e.srv.access.fills.Load() }
	names := func(r *testResponse) []string {
		var out []string
		for _, p := range r.arr(t) {
			out = append(out, p["name"].(string))
		}
		return out
	}
	before := fills()
	for i := 0; i < 20; i++ {
		e.must(201, alice, "POST", projects, map[string]any{"name": fmt.Sprintf("Q%03d", i)})
		r := e.must(200, alice, "GET", page, nil)
		if got := r.Header.Get("X-Total-Count"); got != strconv.Itoa(401+i) {
			t.Fatalf("X-Total-Count %s after %d creates, want %d", got, 401+i, 401+i)
		}
		if n := names(r); len(n) != 50 || n[0] != "P100" || n[49] != "P149" {
			t.Fatalf("page %v", n)
		}
	}
	if n := fills() - before; n != 0 {
		t.Fatalf("%d id-cache fills with a write before every page, want 0 (each reads every project)", n)
	}
	// No more writes: pages are read from the database until this
	// generation's have cost as much as a fill (150 entries a page, 420
	// projects: the third page, counting the last one above), then from
	// the cache.
	var bodies []string
	for i := 0; i < 8; i++ {
		r := e.must(200, alice, "GET", page, nil)
		if r.Header.Get("X-Total-Count") != "420" {
			t.Fatalf("X-Total-Count %s, want 420", r.Header.Get("X-Total-Count"))
		}
		bodies = append(bodies, string(r.Body))
		if want := min(int64(i), 1); fills()-before != want {
			t.Fatalf("page %d without writes: %d fills, want %d", i+1, fills()-before, want)
		}
	}
	if n := fills() - before; n != 1 {
		t.Fatalf("%d fills over 8 pages without writes, want 1", n)
	}
	for i, b := range bodies {
		if b != bodies[0] {
			t.Fatalf("page %d from the cache differs from the database's:\n%s\n%s", i+1, b, bodies[0])
		}
	}
}
