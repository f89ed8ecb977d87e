package server

// The caller's own work items: still a placeholder until step 4 of issue 14.

import (
	"net/http"
	"strconv"

	"workspace/db"
)

var workItemIDFilters = []string{"organisation", "type", "work_item", "document", "fleet", "asset_group", "project", "status", "location"}

// userWorkItems checks the row's filters and paging, then lists nothing.
func (s *Server) userWorkItems(rq *request) error {
	qv := rq.r.URL.Query()
	p := problems{}
	for _, name := range workItemIDFilters {
		if v, ok := qv[name]; ok {
			if _, ok := db.ParseID(v[0]); !ok {
				p.add(name, "must be a snowflake id")
			}
		}
	}
	if v, ok := qv["include_assets"]; ok {
		if _, err := strconv.ParseBool(v[0]); err != nil {
			p.add("include_assets", "must be true or false")
		}
	}
	for _, name := range []string{"start_date", "finish_date"} {
		if v, ok := qv[name]; ok && !validDate(v[0]) {
			p.add(name, "must be an ISO 8601 date or date-time")
		}
	}
	if err := p.err(); err != nil {
		return err
	}
	if _, err := parseListQuery(rq.r, db.FilterFields{}); err != nil {
		return err
	}
	rq.w.Header().Set("X-Total-Count", "0")
	rq.w.Header().Set("X-Status-Count", "{}")
	return rq.json(http.StatusOK, []struct{}{})
}

func (s *Server) userWorkItemSubscriptions(rq *request) error {
	if _, err := rq.pathID("id"); err != nil {
		return err
	}
	return notFound("No such work item.")
}
