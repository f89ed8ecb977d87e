package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"workspace/db"
	"workspace/server/render"
)

// Completion records (issue 11; the spec does not show how a record is
// made): POST /users/@me/inductions/{id}/records with one answer per
// question of the current revision. Record lists, the record with its
// questions, and CSV and XLSX exports for MANAGE_INDUCTIONS.

// recordAnswer is one stored answer (spec: Induction record answer).
type recordAnswer struct {
	QuestionID db.ID  `json:"question_id"`
	Type       string `json:"type"`
	EnumID     *db.ID `json:"enum_id,omitempty"`
	Value      any    `json:"value"`
}

type recordJSON struct {
	ID            db.ID               `json:"id"`
	InductionID   db.ID               `json:"induction_id"`
	InductionHash string              `json:"induction_hash"`
	User          any                 `json:"user"`
	Email         string              `json:"email"`
	FirstName     string              `json:"first_name"`
	LastName      string              `json:"last_name"`
	Position      string              `json:"position"`
	Company       string              `json:"company"`
	InductedAt    string              `json:"inducted_at"`
	ExpiresAt     *string             `json:"expires_at"`
	Questions     *[]answeredQuestion `json:"questions,omitempty"`
}

// answeredQuestion is a revision's question with the record's answer.
type answeredQuestion struct {
	inductionQuestion
	Answer *recordAnswer `json:"answer"`
}

func (s *Server) toRecord(ctx context.Context, q *db.Queries, r db.InductionRecord, viewerID int64, withQuestions bool) (recordJSON, error) {
	u, err := s.revealUser(ctx, q, r.UserID, viewerID, false)
	if err != nil {
		return recordJSON{}, err
	}
	out := recordJSON{ID: db.ID(r.ID), InductionID: db.ID(r.InductionID), InductionHash: r.InductionHash, User: u,
		Email: r.Email, FirstName: r.FirstName, LastName: r.LastName, Position: r.Position, Company: r.Company,
		InductedAt: r.InductedAt, ExpiresAt: r.ExpiresAt}
	if !withQuestions {
		return out, nil
	}
	rev, err := q.InductionRevisionGet(ctx, r.RevisionID)
	if err != nil {
		return out, err
	}
	qs, err := questionsOf(rev)
	if err != nil {
		return out, err
	}
	var answers []recordAnswer
	if err := json.Unmarshal([]byte(r.Answers), &answers); err != nil {
		return out, fmt.Errorf("record %d answers: %w", r.ID, err)
	}
	byQuestion := map[db.ID]recordAnswer{}
	for _, a := range answers {
		byQuestion[a.QuestionID] = a
	}
	list := make([]answeredQuestion, len(qs))
	for i, question := range qs {
		list[i] = answeredQuestion{inductionQuestion: question}
		if a, ok := byQuestion[question.ID]; ok {
			list[i].Answer = &a
		}
	}
	out.Questions = &list
	return out, nil
}

// validRecord reports whether the record completes the induction now: made
// on its current revision and not expired.
func (s *Server) validRecord(r db.InductionRecord, currentHash string) bool {
	if r.InductionHash != currentHash {
		return false
	}
	return r.ExpiresAt == nil || s.live(*r.ExpiresAt)
}

type recordBody struct {
	Answers []struct {
		QuestionID *db.ID           `json:"question_id"`
		EnumID     *db.ID           `json:"enum_id"`
		Value      *json.RawMessage `json:"value"`
	} `json:"answers"`
}

// checkAnswers validates one answer per question of the revision by type;
// missing or wrong answers are one 400 naming every such question, so a form
// can mark them all at once (issue 29).
func checkAnswers(b recordBody, qs []inductionQuestion) ([]recordAnswer, error) {
	given := map[db.ID]int{}
	for i, a := range b.Answers {
		if a.QuestionID == nil {
			return nil, fieldError(fmt.Sprintf("answers[%d].question_id", i), "is required")
		}
		given[*a.QuestionID] = i
	}
	out := make([]recordAnswer, 0, len(qs))
	p := problems{}
	for _, q := range qs {
		field := "answers." + q.ID.String()
		i, ok := given[q.ID]
		if !ok {
			p.add(field, "is required: every question needs an answer")
			continue
		}
		delete(given, q.ID)
		a := b.Answers[i]
		ans := recordAnswer{QuestionID: q.ID, Type: q.Type}
		switch q.Type {
		case "enum":
			var id *db.ID
			if a.EnumID != nil {
				id = a.EnumID
			} else if a.Value != nil {
				var v db.ID
				if json.Unmarshal(*a.Value, &v) == nil {
					id = &v
				}
			}
			found := false
			for _, ev := range q.EnumValues {
				if id != nil && ev.ID == *id {
					found, ans.EnumID, ans.Value = true, id, ev.Value
				}
			}
			if !found {
				p.add(field, "must name one of the question's values (enum_id)")
				continue
			}
		case "boolean":
			var v bool
			if a.Value == nil || json.Unmarshal(*a.Value, &v) != nil {
				p.add(field, "must be true or false")
				continue
			}
			ans.Value = v
		default: // string and the other text-like types
			var v string
			if a.Value == nil || json.Unmarshal(*a.Value, &v) != nil || strings.TrimSpace(v) == "" {
				p.add(field, "must be a non-empty string")
				continue
			}
			if len([]rune(v)) > maxQuestionText {
				p.add(field, fmt.Sprintf("must be at most %d characters", maxQuestionText))
				continue
			}
			ans.Value = v
		}
		out = append(out, ans)
	}
	for id := range given {
		p.add("answers."+id.String(), "names no question of this revision")
	}
	if err := p.err(); err != nil {
		return nil, err
	}
	return out, nil
}

// userInductionComplete records the caller's completion of an induction
// assigned to them, on its current revision.
func (s *Server) userInductionComplete(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var b recordBody
	if err := rq.decode(&b); err != nil {
		return err
	}
	// One answer per question: more cannot be right, and each extra would
	// be a problem of its own in the answer.
	if len(b.Answers) > maxQuestions {
		return fieldError("answers", fmt.Sprintf("must list at most %d answers, one per question", maxQuestions))
	}
	var out recordJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		ui, err := q.UserInductionGet(rq.ctx, db.UserInductionGetParams{InductionID: id, UserID: rq.user.ID})
		if db.IsNotFound(err) {
			return notFound("No such induction assigned to you.")
		} else if err != nil {
			return err
		}
		i, r, a, err := inductionAccess(rq.ctx, q, rq.user.ID, ui.InductionID)
		if err != nil {
			return err
		}
		if !a.IsMember() {
			return notFound("No such induction assigned to you.")
		}
		qs, err := questionsOf(r)
		if err != nil {
			return err
		}
		answers, err := checkAnswers(b, qs)
		if err != nil {
			return err
		}
		aj, err := json.Marshal(answers)
		if err != nil {
			return err
		}
		now := s.clock()
		var expires *string
		if r.ValidFor > 0 {
			e := db.FormatTime(now.Add(time.Duration(r.ValidFor) * time.Second))
			expires = &e
		}
		u := rq.user
		rec, err := q.InductionRecordCreate(rq.ctx, db.InductionRecordCreateParams{
			ID: s.store.IDs.Next(), OrganisationID: i.OrganisationID, InductionID: i.ID, RevisionID: r.ID, InductionHash: r.Hash,
			UserID: u.ID, Email: u.Email, FirstName: u.FirstName, LastName: u.LastName, Position: u.Position, Company: u.Company,
			InductedAt: db.FormatTime(now), ExpiresAt: expires, Answers: string(aj),
		})
		if err != nil {
			return err
		}
		if err := s.emitInduction(rq.ctx, q, i, r, "completed", strings.TrimSpace(u.FirstName+" "+u.LastName)); err != nil {
			return err
		}
		out, err = s.toRecord(rq.ctx, q, rec, rq.user.ID, true)
		return err
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusCreated, out)
}

// revisionRecords loads a revision's records for a holder of
// MANAGE_INDUCTIONS.
func (s *Server) revisionRecords(rq *request, q *db.Queries) ([]db.InductionRecord, error) {
	id, err := rq.pathID("id")
	if err != nil {
		return nil, err
	}
	hash := rq.params.ByName("hash")
	if !isSHA256Hex(hash) {
		return nil, notFound("The revision does not exist.")
	}
	i, _, a, err := inductionAccess(rq.ctx, q, rq.user.ID, id)
	if err != nil {
		return nil, err
	}
	if err := a.Require(ManageInductions); err != nil {
		return nil, err
	}
	if _, err := q.InductionRevisionByHash(rq.ctx, db.InductionRevisionByHashParams{InductionID: i.ID, Hash: hash}); db.IsNotFound(err) {
		return nil, notFound("The revision does not exist.")
	} else if err != nil {
		return nil, err
	}
	return q.InductionRecordsForRevision(rq.ctx, db.InductionRecordsForRevisionParams{InductionID: i.ID, InductionHash: hash})
}

func (s *Server) inductionRecords(rq *request) error {
	out := []recordJSON{}
	err := s.store.ReadTx(rq.ctx, func(q *db.Queries) error {
		rows, err := s.revisionRecords(rq, q)
		if err != nil {
			return err
		}
		for _, r := range rows {
			rj, err := s.toRecord(rq.ctx, q, r, rq.user.ID, false)
			if err != nil {
				return err
			}
			out = append(out, rj)
		}
		return nil
	})
	if err != nil {
		return err
	}
	setTotalCount(rq.w, int64(len(out)))
	return rq.json(http.StatusOK, out)
}

// inductionRecordGet: a record with its revision's questions and answers
// (MANAGE_INDUCTIONS); 404 when absent.
func (s *Server) inductionRecordGet(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var out recordJSON
	err = s.store.ReadTx(rq.ctx, func(q *db.Queries) error {
		r, err := q.InductionRecordGet(rq.ctx, id)
		if db.IsNotFound(err) {
			return notFound("The record does not exist.")
		} else if err != nil {
			return err
		}
		a, err := authorize(rq.ctx, q, rq.user.ID, r.OrganisationID, Scopes{})
		if db.IsNotFound(err) {
			return notFound("The record does not exist.")
		} else if err != nil {
			return err
		}
		if err := a.Require(ManageInductions); err != nil {
			return err
		}
		out, err = s.toRecord(rq.ctx, q, r, rq.user.ID, true)
		return err
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

// exportHeader is the spec's column list.
var exportHeader = []string{"first name", "last name", "position", "company", "inducted at", "expires at"}

// exportRows renders the records in the caller's time zone (UTC when it
// has none or an unknown one): times are that zone's wall-clock times.
func exportRows(rows []db.InductionRecord, tz string) render.Table {
	loc, err := time.LoadLocation(tz)
	if tz == "" || err != nil {
		loc = time.UTC
	}
	at := func(s *string) any {
		if s == nil {
			return nil
		}
		t, err := db.ParseTime(*s)
		if err != nil {
			return *s
		}
		return t.In(loc)
	}
	out := render.Table{Header: exportHeader, Rows: make([][]any, 0, len(rows))}
	for _, r := range rows {
		inducted := r.InductedAt
		out.Rows = append(out.Rows, []any{r.FirstName, r.LastName, r.Position, r.Company, at(&inducted), at(r.ExpiresAt)})
	}
	return out
}

func (s *Server) inductionRecordsCSV(rq *request) error {
	var rows []db.InductionRecord
	err := s.store.ReadTx(rq.ctx, func(q *db.Queries) (err error) {
		rows, err = s.revisionRecords(rq, q)
		return err
	})
	if err != nil {
		return err
	}
	h := rq.w.Header()
	h.Set("Content-Type", "text/csv; charset=utf-8")
	h.Set("Content-Disposition", contentDisposition("induction-records.csv"))
	rq.w.WriteHeader(http.StatusOK)
	return render.WriteCSV(rq.w, exportRows(rows, rq.user.TimezoneCode))
}

// inductionRecordsXLSX writes the same rows as an XLSX workbook (typed
// cells, see render/sheets.go).
func (s *Server) inductionRecordsXLSX(rq *request) error {
	var rows []db.InductionRecord
	err := s.store.ReadTx(rq.ctx, func(q *db.Queries) (err error) {
		rows, err = s.revisionRecords(rq, q)
		return err
	})
	if err != nil {
		return err
	}
	f, err := render.TableXLSX(exportRows(rows, rq.user.TimezoneCode), "Induction records")
	if err != nil {
		return err
	}
	defer f.Close()
	h := rq.w.Header()
	h.Set("Content-Type", xlsxType)
	h.Set("Content-Disposition", contentDisposition("induction-records.xlsx"))
	rq.w.WriteHeader(http.StatusOK)
	_, err = f.WriteTo(rq.w)
	return err
}
