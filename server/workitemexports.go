package server

import (
	"net/http"
	"strings"
	"time"

	"workspace/db"
	"workspace/server/render"
)

// Work item exports (issue 32): GET /organisations/{id}/workitems/export.csv
// and export.xlsx, the list (what the caller may view, with the list's
// $filter, e.g. project_id) as a spreadsheet. Access is the list's.

const maxWorkItemExport = 20_000

var workItemExportHeader = []string{"number", "title", "type", "status", "project", "assignees", "start", "finish", "created", "closed", "description"}

// workItemExport reads the rows of an export in the caller's time zone.
func (s *Server) workItemExport(rq *request) (render.Table, error) {
	t := render.Table{Header: workItemExportHeader}
	projects := map[int64]string{}
	l := s.workItemPage(rq, projects)
	lq, err := l.Query(0)
	if err != nil {
		return t, err
	}
	// the whole filtered list, not a page of it
	lq.Skip, lq.Top = 0, maxWorkItemExport
	l.Check = func(total int64) error {
		if total > int64(lq.Top) {
			return badRequest("The list holds %d work items, more than the %d an export can hold: narrow it with a filter.", total, lq.Top)
		}
		return nil
	}
	items, _, err := l.read(s, rq, 0, lq)
	if err != nil {
		return t, err
	}
	loc, err := time.LoadLocation(rq.user.TimezoneCode)
	if rq.user.TimezoneCode == "" || err != nil {
		loc = time.UTC
	}
	at := func(s *string) any {
		if s == nil {
			return nil
		}
		tm, err := db.ParseTime(*s)
		if err != nil {
			return *s
		}
		return tm.In(loc)
	}
	for _, w := range items {
		project := ""
		if w.ProjectID != nil {
			project = projects[int64(*w.ProjectID)]
		}
		names := make([]string, len(w.Assignees))
		for i, u := range w.Assignees {
			names[i] = strings.TrimSpace(u.FirstName + " " + u.LastName)
		}
		created := w.Tracking.CreatedAt
		t.Rows = append(t.Rows, []any{w.FormattedNumber, w.Title, w.Type.Name, w.Status, project, strings.Join(names, ", "),
			at(w.StartAt), at(w.FinishAt), at(&created), at(w.Tracking.ClosedAt), w.Description})
	}
	return t, nil
}

func (s *Server) workItemExportCSV(rq *request) error {
	t, err := s.workItemExport(rq)
	if err != nil {
		return err
	}
	rq.w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	rq.w.Header().Set("Content-Disposition", contentDisposition("work-items.csv"))
	rq.w.WriteHeader(http.StatusOK)
	return render.WriteCSV(rq.w, t)
}

func (s *Server) workItemExportXLSX(rq *request) error {
	t, err := s.workItemExport(rq)
	if err != nil {
		return err
	}
	f, err := render.TableXLSX(t, "Work items")
	if err != nil {
		return err
	}
	defer f.Close()
	rq.w.Header().Set("Content-Type", xlsxType)
	rq.w.Header().Set("Content-Disposition", contentDisposition("work-items.xlsx"))
	rq.w.WriteHeader(http.StatusOK)
	_, err = f.WriteTo(rq.w)
	return err
}
