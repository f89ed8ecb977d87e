package db

import (
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

var testFilterFields = FilterFields{
	"name":    {Column: "name", Kind: FieldString, CaseInsensitive: true},
	"code":    {Column: "code", Kind: FieldString},
	"size":    {Column: "size", Kind: FieldNumber},
	"enabled": {Column: "enabled", Kind: FieldBool},
	"due_at":  {Column: "due_at", Kind: FieldTime},
	"owner":   {Column: "owner_id", Kind: FieldID},
	"status":  {Column: "status", Kind: FieldEnum, Values: []string{"open", "closed"}},
}

const filterTable = `CREATE TABLE items (
	id INTEGER PRIMARY KEY,
	name TEXT,
	code TEXT,
	size REAL,
	enabled BOOLEAN NOT NULL,
	due_at TEXT,
	owner_id INTEGER,
	status TEXT NOT NULL
)`

// filterDB is a real SQLite table with the whitelisted columns and rows
// chosen to tell filters apart: nulls, case, wildcards, quotes, non-ASCII.
func filterDB(t testing.TB) *sql.DB {
	t.Helper()
	d, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "f.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	d.SetMaxOpenConns(1)
	for _, s := range []string{filterTable,
		`INSERT INTO items VALUES (1, 'Alpha', 'A-1', 10, 1, '2026-11-21T09:30:00.000Z', 111, 'open')`,
		`INSERT INTO items VALUES (2, 'beta', 'b_2', 2.5, 0, '2026-11-20T00:00:00.000Z', 222, 'closed')`,
		`INSERT INTO items VALUES (3, 'Ärger 100%', 'C*3', -1, 1, NULL, NULL, 'open')`,
		`INSERT INTO items VALUES (4, NULL, NULL, NULL, 0, '2027-01-01T00:00:00.000Z', 111, 'closed')`,
		`INSERT INTO items VALUES (5, 'O''Brien', 'x?[y]\z', 0, 1, '2026-11-21T09:30:00.001Z', 333, 'open')`,
	} {
		if _, err := d.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	return d
}

func matchingIDs(t testing.TB, d *sql.DB, where string, args []any) ([]int64, error) {
	t.Helper()
	q := "SELECT id FROM items"
	if where != "" {
		q += " WHERE " + where
	}
	rows, err := d.Query(q+" ORDER BY id", args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	ids := []int64{}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

var validFilters = []struct {
	expr string
	sql  string
	args []any
	ids  []int64
}{
	{"", "", nil, []int64{1, 2, 3, 4, 5}},
	{"   ", "", nil, []int64{1, 2, 3, 4, 5}},
	{"status eq 'open'", "status = ?", []any{"open"}, []int64{1, 3, 5}},
	{"status ne 'open'", "status IS NOT ?", []any{"open"}, []int64{2, 4}},
	{"name eq 'ALPHA'", "casefold(name) = ?", []any{"alpha"}, []int64{1}},
	{"name eq 'ärger 100%'", "casefold(name) = ?", []any{"ärger 100%"}, []int64{3}},
	{"name ne 'alpha'", "casefold(name) IS NOT ?", []any{"alpha"}, []int64{2, 3, 4, 5}},
	{"name eq 'O''Brien'", "casefold(name) = ?", []any{"o'brien"}, []int64{5}},
	{"code eq 'a-1'", "code = ?", []any{"a-1"}, []int64{}},
	{"code eq 'A-1'", "code = ?", []any{"A-1"}, []int64{1}},
	{"code gt 'b'", "code > ?", []any{"b"}, []int64{2, 5}},
	{"name eq null", "name IS NULL", nil, []int64{4}},
	{"name ne null", "name IS NOT NULL", nil, []int64{1, 2, 3, 5}},
	{"size gt 2", "size > ?", []any{int64(2)}, []int64{1, 2}},
	{"size ge 2.5", "size >= ?", []any{2.5}, []int64{1, 2}},
	{"size lt 0", "size < ?", []any{int64(0)}, []int64{3}},
	{"size le -1", "size <= ?", []any{int64(-1)}, []int64{3}},
	{"size eq 1e1", "size = ?", []any{10.0}, []int64{1}},
	{"size ne 10", "size IS NOT ?", []any{int64(10)}, []int64{2, 3, 4, 5}},
	{"enabled eq true", "enabled = ?", []any{int64(1)}, []int64{1, 3, 5}},
	{"enabled eq false", "enabled = ?", []any{int64(0)}, []int64{2, 4}},
	{"enabled ne true", "enabled IS NOT ?", []any{int64(1)}, []int64{2, 4}},
	{"enabled", "enabled = 1", nil, []int64{1, 3, 5}},
	{"not enabled", "NOT ifnull(enabled = 1, 0)", nil, []int64{2, 4}},
	{"due_at lt 2026-11-21T09:30:00Z", "due_at < ?", []any{"2026-11-21T09:30:00.000Z"}, []int64{2}},
	{"due_at le 2026-11-21T09:30:00Z", "due_at <= ?", []any{"2026-11-21T09:30:00.000Z"}, []int64{1, 2}},
	{"due_at gt 2026-11-21T09:30:00.000Z", "due_at > ?", []any{"2026-11-21T09:30:00.000Z"}, []int64{4, 5}},
	{"due_at eq 2026-11-21T10:30:00.001+01:00", "due_at = ?", []any{"2026-11-21T09:30:00.001Z"}, []int64{5}},
	{"due_at ge 2026-11-21T09:30:00.0010000Z", "due_at >= ?", []any{"2026-11-21T09:30:00.001Z"}, []int64{4, 5}},
	{"due_at ge 2026-11-21T04:30-05:00", "due_at >= ?", []any{"2026-11-21T09:30:00.000Z"}, []int64{1, 4, 5}},
	{"due_at lt 2026-11-21", "due_at < ?", []any{"2026-11-21T00:00:00.000Z"}, []int64{2}},
	{"due_at lt '2026-11-21T00:00:00Z'", "due_at < ?", []any{"2026-11-21T00:00:00.000Z"}, []int64{2}},
	{"due_at eq null", "due_at IS NULL", nil, []int64{3}},
	{"owner eq 111", "owner_id = ?", []any{int64(111)}, []int64{1, 4}},
	{"owner eq '222'", "owner_id = ?", []any{int64(222)}, []int64{2}},
	{"owner ne 111", "owner_id IS NOT ?", []any{int64(111)}, []int64{2, 3, 5}},
	{"owner gt 200", "owner_id > ?", []any{int64(200)}, []int64{2, 5}},
	{"status eq 'open' and enabled eq true", "status = ? AND enabled = ?", []any{"open", int64(1)}, []int64{1, 3, 5}},
	{"status eq 'closed' or size gt 5", "status = ? OR size > ?", []any{"closed", int64(5)}, []int64{1, 2, 4}},
	// and binds tighter than or; parentheses override it.
	{"size eq 10 or size eq 2.5 and enabled", "size = ? OR size = ? AND enabled = 1", []any{int64(10), 2.5}, []int64{1}},
	{"(size eq 10 or size eq 2.5) and enabled", "(size = ? OR size = ?) AND enabled = 1", []any{int64(10), 2.5}, []int64{1}},
	{"size eq 10 or (size eq 2.5 and enabled)", "size = ? OR size = ? AND enabled = 1", []any{int64(10), 2.5}, []int64{1}},
	// not binds tighter than and.
	{"not enabled and status eq 'closed'", "NOT ifnull(enabled = 1, 0) AND status = ?", []any{"closed"}, []int64{2, 4}},
	{"not (status eq 'open' or size lt 3)", "NOT ifnull(status = ? OR size < ?, 0)", []any{"open", int64(3)}, []int64{4}},
	// OData: a comparison with a null field is false, so its negation is true.
	{"not (size gt 5)", "NOT ifnull(size > ?, 0)", []any{int64(5)}, []int64{2, 3, 4, 5}},
	{"not not enabled", "NOT ifnull(NOT ifnull(enabled = 1, 0), 0)", nil, []int64{1, 3, 5}},
	{"((status eq 'open'))", "status = ?", []any{"open"}, []int64{1, 3, 5}},
	{"startswith(name, 'AL')", `casefold(name) LIKE ? ESCAPE '\'`, []any{"al%"}, []int64{1}},
	{"startswith(name,'är')", `casefold(name) LIKE ? ESCAPE '\'`, []any{"är%"}, []int64{3}},
	{"endswith(name, 'TA')", `casefold(name) LIKE ? ESCAPE '\'`, []any{"%ta"}, []int64{2}},
	{"contains(name, '0%')", `casefold(name) LIKE ? ESCAPE '\'`, []any{`%0\%%`}, []int64{3}},
	{"contains(name, '_')", `casefold(name) LIKE ? ESCAPE '\'`, []any{`%\_%`}, []int64{}},
	{"contains(name, '''')", `casefold(name) LIKE ? ESCAPE '\'`, []any{`%'%`}, []int64{5}},
	{"contains(name, '')", `casefold(name) LIKE ? ESCAPE '\'`, []any{`%%`}, []int64{1, 2, 3, 5}},
	{"startswith(code, 'a')", "code GLOB ?", []any{"a*"}, []int64{}},
	{"startswith(code, 'A')", "code GLOB ?", []any{"A*"}, []int64{1}},
	{"contains(code, '_')", "code GLOB ?", []any{"*_*"}, []int64{2}},
	{"contains(code, '*')", "code GLOB ?", []any{"*[*]*"}, []int64{3}},
	{"contains(code, '?[')", "code GLOB ?", []any{"*[?][[]*"}, []int64{5}},
	{`endswith(code, ']\z')`, "code GLOB ?", []any{`*]\z`}, []int64{5}},
	{"startswith(code, 'A') eq true", "code GLOB ?", []any{"A*"}, []int64{1}},
	{"startswith(code, 'A') eq false", "NOT ifnull(code GLOB ?, 0)", []any{"A*"}, []int64{2, 3, 4, 5}},
	{"startswith(code, 'A') ne true", "NOT ifnull(code GLOB ?, 0)", []any{"A*"}, []int64{2, 3, 4, 5}},
	{"not contains(name, 'a')", `NOT ifnull(casefold(name) LIKE ? ESCAPE '\', 0)`, []any{"%a%"}, []int64{3, 4, 5}},
	{"\tstatus  eq\n'open'  ", "status = ?", []any{"open"}, []int64{1, 3, 5}},
}

func TestCompileFilterValid(t *testing.T) {
	t.Parallel()
	d := filterDB(t)
	for _, tc := range validFilters {
		t.Run(tc.expr, func(t *testing.T) {
			where, args, err := CompileFilter(tc.expr, testFilterFields)
			if err != nil {
				t.Fatalf("error %v, want none", err)
			}
			if where != tc.sql {
				t.Errorf("sql %q, want %q", where, tc.sql)
			}
			if !reflect.DeepEqual(args, tc.args) {
				t.Errorf("args %#v, want %#v", args, tc.args)
			}
			ids, err := matchingIDs(t, d, where, args)
			if err != nil {
				t.Fatalf("query: %v", err)
			}
			if !slices.Equal(ids, tc.ids) {
				t.Errorf("ids %v, want %v", ids, tc.ids)
			}
			if strings.TrimSpace(tc.expr) != "" {
				complementHolds(t, d, tc.expr, ids)
			}
		})
	}
}

var invalidFilters = []struct {
	expr  string
	field string // "" for syntax errors
	msg   string // substring of the message
}{
	{"colour eq 'red'", "colour", "is not a filterable field (filterable: code, due_at, enabled, name, owner, size, status)"},
	{"Status eq 'open'", "Status", "is not a filterable field"},
	{"startswith(colour, 'r')", "colour", "is not a filterable field"},
	{"status eq 'pending'", "status", "one of 'open', 'closed'"},
	{"status gt 'open'", "status", "only by eq or ne"},
	{"status eq 1", "status", "one of"},
	{"name eq 5", "name", "a string"},
	{"name eq true", "name", "a string"},
	{"name eq code", "name", "a string"},
	{"name gt null", "name", "null only by eq or ne"},
	{"size eq '5'", "size", "a number"},
	{"size eq 99999999999999999999", "size", "in range"},
	{"size eq 1e999", "size", "in range"},
	{"enabled eq 1", "enabled", "true or false"},
	{"enabled gt false", "enabled", "only by eq or ne"},
	{"due_at gt 5", "due_at", "date-time"},
	{"due_at gt 'tomorrow'", "due_at", "date-time"},
	{"due_at gt 2026-13-01T00:00:00Z", "due_at", "date-time"},
	{"due_at gt 2026-11-21T09:30:00.0001Z", "due_at", "millisecond"},
	{"owner eq 'abc'", "owner", "an id"},
	{"owner eq -5", "owner", "an id"},
	{"owner eq 1.5", "owner", "an id"},
	{"contains(size, '1')", "size", "text fields only"},
	{"startswith(status, 'o')", "status", "text fields only"},
	{"contains(name, 5)", "name", "a string"},
	{"status", "", "eq, ne, gt, ge, lt or le was expected after status at position 7"},
	{"status eq", "", "end of filter where a value for status was expected at position 10"},
	{"status eq 'open' and", "", "end of filter where a field, a function or '(' was expected at position 21"},
	{"status eq 'open' or or", "", "\"or\" where a field"},
	{"(status eq 'open'", "", "where ')' was expected at position 18"},
	{"status eq 'open')", "", "unexpected ')' at position 17"},
	{"status eq 'open' enabled", "", "unexpected \"enabled\" at position 18"},
	{"status eq 'open", "", "unterminated string starting at position 11"},
	{"status == 'open'", "", "unexpected character '=' at position 8"},
	{"ärger eq 1", "", "unexpected character 'ä' at position 1"},
	{"name eq 'x' and ärger", "", "unexpected character 'ä' at position 17"},
	{"size eq 5abc", "", "invalid literal \"5abc\" at position 9"},
	{"size eq 1.", "", "invalid literal"},
	{"size add 5", "", "\"add\" where eq, ne"},
	{"substringof('a', name)", "", "unknown function \"substringof\""},
	{"startswith(name 'a')", "", "string where ',' was expected"},
	{"startswith(name, 'a'", "", "where ')' was expected"},
	{"startswith(name, 'a') eq 1", "", "where true or false was expected after startswith"},
	{"'open' eq status", "", "string where a field, a function or '(' was expected at position 1"},
	{"size eq 5 and not", "", "end of filter where a field"},
	{"()", "", "')' where a field"},
	{strings.Repeat("(", 33) + "enabled" + strings.Repeat(")", 33), "", "nests deeper than 32 levels"},
	{strings.Repeat("not ", 33) + "enabled", "", "nests deeper than 32 levels"},
	{strings.Repeat("enabled and ", 100) + "enabled", "", "more than 100 conditions"},
	{strings.Repeat(" ", 4097), "", "longer than 4096 bytes"},
	{"name eq '\xff'", "", "not valid UTF-8"},
}

func TestCompileFilterInvalid(t *testing.T) {
	t.Parallel()
	for _, tc := range invalidFilters {
		t.Run(clip(tc.expr), func(t *testing.T) {
			where, args, err := CompileFilter(tc.expr, testFilterFields)
			var fe *FilterError
			if !errors.As(err, &fe) {
				t.Fatalf("got sql %q args %v err %v, want a *FilterError", where, args, err)
			}
			if fe.Field != tc.field {
				t.Errorf("field %q, want %q (message %q)", fe.Field, tc.field, fe.Message)
			}
			if !strings.Contains(fe.Message, tc.msg) {
				t.Errorf("message %q, want it to contain %q", fe.Message, tc.msg)
			}
		})
	}
}

// The limits admit filters right at them.
func TestCompileFilterAtLimits(t *testing.T) {
	t.Parallel()
	d := filterDB(t)
	for name, expr := range map[string]string{
		"depth":  strings.Repeat("(", 32) + "enabled" + strings.Repeat(")", 32),
		"nots":   strings.Repeat("not ", 32) + "enabled",
		"terms":  strings.Repeat("enabled and ", 99) + "enabled",
		"length": "name eq '" + strings.Repeat("x", MaxFilterLength-10) + "'",
	} {
		t.Run(name, func(t *testing.T) {
			where, args, err := CompileFilter(expr, testFilterFields)
			if err != nil {
				t.Fatalf("error %v, want none", err)
			}
			if _, err := matchingIDs(t, d, where, args); err != nil {
				t.Fatalf("query: %v", err)
			}
		})
	}
}

// No filter field set at all: every field is unknown, and the message
// does not list an empty whitelist.
func TestCompileFilterNoFields(t *testing.T) {
	t.Parallel()
	_, _, err := CompileFilter("name eq 'x'", nil)
	var fe *FilterError
	if !errors.As(err, &fe) || fe.Field != "name" || fe.Message != "is not a filterable field" {
		t.Fatalf("got %#v, want name: is not a filterable field", err)
	}
}

func TestFilterErrorText(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		err  FilterError
		want string
	}{
		{FilterError{Field: "size", Message: "must be compared with a number"}, "size must be compared with a number"},
		{FilterError{Message: "has an unexpected ')' at position 3"}, "has an unexpected ')' at position 3"},
	} {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("got %q, want %q", got, tc.want)
		}
	}
}

// noCallerText checks that SQL holds nothing of the caller's: no quote
// other than the fixed ESCAPE clause, and exactly one ? per argument.
func noCallerText(where string, args []any) error {
	if strings.Contains(strings.ReplaceAll(where, `ESCAPE '\'`, ""), "'") {
		return fmt.Errorf("sql %q holds a quote", where)
	}
	if n := strings.Count(where, "?"); n != len(args) {
		return fmt.Errorf("sql %q has %d placeholders for %d args", where, n, len(args))
	}
	return nil
}

// complementHolds checks OData's two-valued logic: "not (e)" selects exactly
// the rows "e" does not, nulls included.
func complementHolds(t testing.TB, d *sql.DB, expr string, ids []int64) {
	t.Helper()
	where, args, err := CompileFilter("not ("+expr+")", testFilterFields)
	if err != nil {
		return // the wrapper itself went past a limit
	}
	neg, err := matchingIDs(t, d, where, args)
	if err != nil {
		t.Fatalf("not (%s): query %q: %v", expr, where, err)
	}
	all := append(slices.Clone(ids), neg...)
	slices.Sort(all)
	if !slices.Equal(all, []int64{1, 2, 3, 4, 5}) {
		t.Fatalf("%q selects %v and its negation %v: want each row exactly once", expr, ids, neg)
	}
}

func FuzzCompileFilter(f *testing.F) {
	for _, tc := range validFilters {
		f.Add(tc.expr)
	}
	for _, tc := range invalidFilters {
		if len(tc.expr) < 200 {
			f.Add(tc.expr)
		}
	}
	d := filterDB(f)
	f.Fuzz(func(t *testing.T, expr string) {
		where, args, err := CompileFilter(expr, testFilterFields)
		if err != nil {
			var fe *FilterError
			if !errors.As(err, &fe) {
				t.Fatalf("%q: error %v is not a *FilterError", expr, err)
			}
			return
		}
		if err := noCallerText(where, args); err != nil {
			t.Fatalf("%q: %v", expr, err)
		}
		q := "SELECT id FROM items"
		if where != "" {
			q += " WHERE " + where
		}
		if where != "" {
			ids, err := matchingIDs(t, d, where, args)
			if err != nil {
				t.Fatalf("%q: query %q %v: %v", expr, q, args, err)
			}
			complementHolds(t, d, expr, ids)
		}
		stmt, err := d.Prepare(q)
		if err != nil {
			t.Fatalf("%q: prepare %q: %v", expr, q, err)
		}
		defer stmt.Close()
		rows, err := stmt.Query(args...)
		if err != nil {
			t.Fatalf("%q: query %q %v: %v", expr, q, args, err)
		}
		defer rows.Close()
		for rows.Next() {
		}
		if err := rows.Err(); err != nil {
			t.Fatalf("%q: rows %q %v: %v", expr, q, args, err)
		}
	})
}

func TestCompileFilterNoCallerText(t *testing.T) {
	t.Parallel()
	for _, tc := range validFilters {
		where, args, err := CompileFilter(tc.expr, testFilterFields)
		if err != nil {
			t.Fatalf("%q: %v", tc.expr, err)
		}
		if err := noCallerText(where, args); err != nil {
			t.Errorf("%q: %v", tc.expr, err)
		}
	}
}
