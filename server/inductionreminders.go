package server

import (
	"context"
	"time"

	"workspace/db"
)

// Daily induction reminders (issue 11): an assigned user is mailed when the
// induction is due within 7 days, when it is overdue, and when their record
// expires within 30 days. Each kind goes to each assignment at most once a
// day (induction_reminders), however often the job runs.

const (
	remindDueWithin    = 7 * 24 * time.Hour
	remindExpiryWithin = 30 * 24 * time.Hour
)

// remindInductions mails the reminders due at now; it returns how many it
// sent.
func (s *Server) remindInductions(ctx context.Context, now time.Time) (int, error) {
	sent := 0
	day := now.UTC().Format("2006-01-02")
	err := s.store.InTx(ctx, func(q *db.Queries) error {
		rows, err := q.InductionReminderCandidates(ctx)
		if err != nil {
			return err
		}
		for _, r := range rows {
			kind, when := reminderFor(r, now)
			if kind == "" {
				continue
			}
			n, err := q.InductionReminderMark(ctx, db.InductionReminderMarkParams{UserInductionID: r.ID, Kind: kind, Day: day})
			if err != nil {
				return err
			}
			if n == 0 {
				continue // already mailed today
			}
			// The day is the recipient's: a due time of 20:00 UTC is the
			// next morning in Perth (as whenText writes notifications).
			loc, _, err := userZone(ctx, q, r.UserID)
			if err != nil {
				return err
			}
			when = when.In(loc)
			// A reminder is a notification: in the app, and mailed (or
			// texted) by the person's preferences.
			m := s.mailInductionReminder(r, kind, when)
			err = s.notify(ctx, q, notification{UserID: r.UserID, OrgID: r.OrganisationID, Kind: notifyInductionDue,
				Title: m.Subject, Body: reminderText(kind, when), Link: "/app/me/inductions/" + db.ID(r.InductionID).String(), Mail: &m})
			if err != nil {
				return err
			}
			sent++
		}
		return nil
	})
	return sent, err
}

// reminderFor picks the one reminder an assignment gets now, if any, and
// the day it names (the expiry or the due date).
func reminderFor(r db.InductionReminderCandidatesRow, now time.Time) (kind string, day time.Time) {
	parse := func(s *string) (time.Time, bool) {
		if s == nil {
			return time.Time{}, false
		}
		t, err := db.ParseTime(*s)
		return t, err == nil
	}
	completed := r.RecordHash == r.Hash
	expires, expiring := parse(r.RecordExpiresAt)
	if completed && expiring && !expires.After(now) {
		completed = false // the record has expired: due again
	}
	if completed {
		if expiring && expires.Sub(now) <= remindExpiryWithin {
			return "expiring", expires
		}
		return "", time.Time{}
	}
	due, hasDue := parse(r.DueAt)
	switch {
	case hasDue && due.Before(now):
		return "overdue", due
	case hasDue && due.Sub(now) <= remindDueWithin:
		return "due", due
	}
	return "", time.Time{}
}

// reminderText is a reminder's sentence in the notifications list (the
// mail says more: mailInductionReminder). day is in the recipient's zone.
func reminderText(kind string, day time.Time) string {
	switch kind {
	case "expiring":
		return "It expires on " + localDate(day) + ". Complete it again before then."
	case "overdue":
		return "It was due on " + localDate(day) + ". Please complete it now."
	}
	return "It is due on " + localDate(day) + "."
}

// remindDaily runs remindInductions once a day until ctx ends (serve).
func (s *Server) remindDaily(ctx context.Context) {
	t := time.NewTicker(time.Hour) // hourly checks; each kind still once a day
	defer t.Stop()
	for {
		if _, err := s.remindInductions(ctx, s.clock()); err != nil && ctx.Err() == nil {
			s.log.Error("induction reminders", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
