package server

// GET /users/@me/for-you (issue 36): what waits for the caller that has no
// list of its own under /users/@me: invitations to organisations, toolbox
// sessions not yet finished, and merge requests on the caller's documents.
// The "For you" page reads inductions, work items and shares from their
// own routes.

import (
	"net/http"

	"workspace/db"
)

type forYouInviteJSON struct {
	ID               db.ID   `json:"id"`
	OrganisationID   db.ID   `json:"organisation_id"`
	OrganisationName string  `json:"organisation_name"`
	ExpiresAt        *string `json:"expires_at"`
	Link             string  `json:"link"`
}

type forYouSessionJSON struct {
	ID                db.ID  `json:"id"`
	ToolboxID         db.ID  `json:"toolbox_id"`
	Title             string `json:"title"`
	OrganisationName  string `json:"organisation_name"`
	ScheduledStartAt  string `json:"scheduled_start_at"`
	ScheduledFinishAt string `json:"scheduled_finish_at"`
	Status            string `json:"status"`
	Link              string `json:"link"`
}

type forYouReviewJSON struct {
	ID               db.ID  `json:"id"`
	Number           int64  `json:"number"`
	Title            string `json:"title"`
	DocumentID       db.ID  `json:"document_id"`
	DocumentNumber   string `json:"document_number"`
	DocumentTitle    string `json:"document_title"`
	OrganisationName string `json:"organisation_name"`
	CreatedAt        string `json:"created_at"`
	Link             string `json:"link"`
}

type forYouJSON struct {
	Invitations []forYouInviteJSON  `json:"invitations"`
	Sessions    []forYouSessionJSON `json:"sessions"`
	Reviews     []forYouReviewJSON  `json:"reviews"`
	UnreadCount int64               `json:"unread_count"`
}

func (s *Server) forYou(rq *request) error {
	out := forYouJSON{Invitations: []forYouInviteJSON{}, Sessions: []forYouSessionJSON{}, Reviews: []forYouReviewJSON{}}
	now := s.nowText()
	err := s.store.ReadTx(rq.ctx, func(q *db.Queries) error {
		invites, err := q.ForYouInvites(rq.ctx, db.ForYouInvitesParams{UserID: rq.user.ID, Now: &now})
		if err != nil {
			return err
		}
		for _, i := range invites {
			out.Invitations = append(out.Invitations, forYouInviteJSON{ID: db.ID(i.ID), OrganisationID: db.ID(i.OrganisationID),
				OrganisationName: i.OrganisationName, ExpiresAt: i.ExpiresAt, Link: "/app/join/" + i.Code})
		}
		sessions, err := q.ForYouSessions(rq.ctx, db.ForYouSessionsParams{UserID: rq.user.ID, Now: now})
		if err != nil {
			return err
		}
		for _, sc := range sessions {
			if sc.ToolboxID == nil {
				continue
			}
			out.Sessions = append(out.Sessions, forYouSessionJSON{ID: db.ID(sc.ID), ToolboxID: db.ID(*sc.ToolboxID), Title: sc.Title,
				OrganisationName: sc.OrganisationName, ScheduledStartAt: sc.ScheduledStartAt, ScheduledFinishAt: sc.ScheduledFinishAt,
				Status: sc.Status, Link: "/app/sign/" + db.ID(*sc.ToolboxID).String()})
		}
		reviews, err := q.ForYouReviews(rq.ctx, rq.user.ID)
		if err != nil {
			return err
		}
		for _, m := range reviews {
			out.Reviews = append(out.Reviews, forYouReviewJSON{ID: db.ID(m.ID), Number: m.Number, Title: m.Title, DocumentID: db.ID(m.DocumentID),
				DocumentNumber: m.FormattedNumber, DocumentTitle: m.DocumentTitle, OrganisationName: m.OrganisationName,
				CreatedAt: m.CreatedAt, Link: "/app/documents/" + db.ID(m.DocumentID).String()})
		}
		out.UnreadCount, err = q.NotificationUnreadCount(rq.ctx, rq.user.ID)
		return err
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}
