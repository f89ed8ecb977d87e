package server

// TEMPORARY: replaced by server/lists.go from the filter branch at merge
// (and filterFields/filterField by db.FilterFields/db.FilterField). This shim
// only parses $skip and $top and refuses any $filter, so the list handlers
// can be written against the final API now. Delete this file at merge.

import (
	"net/http"
	"strconv"
)

type filterFields = map[string]filterField

type filterField struct {
	Column          string
	Kind            int
	Values          []string
	CaseInsensitive bool
}

// Field kinds, standing in for db.FieldString ... db.FieldEnum.
const (
	fieldString = iota
	fieldNumber
	fieldBool
	fieldTime
	fieldID
	fieldEnum
)

type listQuery struct {
	Where string
	Args  []any
	Skip  int
	Top   int
}

func parseListQuery(r *http.Request, fields filterFields) (listQuery, error) {
	q := r.URL.Query()
	lq := listQuery{Top: 50}
	if f := q.Get("$filter"); f != "" {
		return listQuery{}, badRequest("$filter is not supported yet.")
	}
	if v := q.Get("$skip"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return listQuery{}, badRequest("$skip must be a non-negative integer.")
		}
		lq.Skip = n
	}
	if v := q.Get("$top"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > 1000 {
			return listQuery{}, badRequest("$top must be an integer from 0 to 1000.")
		}
		lq.Top = n
	}
	return lq, nil
}

func setTotalCount(w http.ResponseWriter, n int64) {
	w.Header().Set("X-Total-Count", strconv.FormatInt(n, 10))
}
