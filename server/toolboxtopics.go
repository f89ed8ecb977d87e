package server

import (
	"context"
	"net/http"
	"strings"

	"workspace/db"
)

// Toolbox sections and topics. Order is 1-based and dense within a parent
// (the toolbox's sections; a section's topics; the top-level topics): an
// insert appends, a move shifts the others, a delete closes the gap.

var sectionReadOnly = []string{"id", "organisation_id", "toolbox_id", "topics", "created_at", "created_by", "updated_at", "updated_by"}

type sectionBody struct {
	Title *string `json:"title"`
	Order *int64  `json:"order"`
}

// renderPart loads the toolbox's parts again after a change, so the
// answer shows the moved order of every sibling.
func renderPart(ctx context.Context, q *db.Queries, toolboxID int64) (toolboxParts, error) {
	t, err := q.ToolboxGet(ctx, toolboxID)
	if err != nil {
		return toolboxParts{}, err
	}
	return loadToolboxParts(ctx, q, t)
}

func sectionOf(p toolboxParts, id int64) (toolboxSectionJSON, error) {
	for _, s := range p.sections {
		if s.ID == id {
			return p.section(s), nil
		}
	}
	return toolboxSectionJSON{}, notFound("The section does not exist.")
}

func topicOf(p toolboxParts, id int64) (toolboxTopicJSON, error) {
	for _, t := range p.topics {
		if t.ID == id {
			return p.topic(t), nil
		}
	}
	return toolboxTopicJSON{}, notFound("The topic does not exist.")
}

func (s *Server) sectionCreate(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var b sectionBody
	if err := rq.decodeCreate(&b, append(sectionReadOnly, "order")...); err != nil {
		return err
	}
	p := problems{}
	if b.Title == nil {
		p.add("title", "is required")
	}
	checkName(p, "title", b.Title, maxSectionTitle)
	if err := p.err(); err != nil {
		return err
	}
	var out toolboxSectionJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		t, err := toolboxForEdit(rq, q, id)
		if err != nil {
			return err
		}
		if err := refuseHeld(t, "sections"); err != nil {
			return err
		}
		now := s.nowText()
		sec, err := q.ToolboxSectionCreate(rq.ctx, db.ToolboxSectionCreateParams{ID: s.store.IDs.Next(), OrganisationID: t.OrganisationID,
			ToolboxID: t.ID, Title: strings.TrimSpace(*b.Title), CreatedAt: now, CreatedBy: rq.user.ID})
		if err != nil {
			return err
		}
		if err := q.ToolboxTouch(rq.ctx, db.ToolboxTouchParams{UpdatedAt: now, UpdatedBy: rq.user.ID, ID: t.ID, OrganisationID: t.OrganisationID}); err != nil {
			return err
		}
		parts, err := renderPart(rq.ctx, q, t.ID)
		if err != nil {
			return err
		}
		out, err = sectionOf(parts, sec.ID)
		return err
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusCreated, out)
}

func (s *Server) sectionGet(rq *request) error {
	id, sectionID, err := rq.pathIDs("id", "section")
	if err != nil {
		return err
	}
	var out toolboxSectionJSON
	err = s.store.ReadTx(rq.ctx, func(q *db.Queries) error {
		t, a, err := toolboxAccess(rq.ctx, q, rq.user.ID, id)
		if err != nil {
			return err
		}
		if err := a.Require(0); err != nil {
			return err
		}
		parts, err := loadToolboxParts(rq.ctx, q, t)
		if err != nil {
			return err
		}
		out, err = sectionOf(parts, sectionID)
		return err
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

// checkOrder refuses an order outside 1..n, n being the number of places in
// the destination list.
func checkOrder(p problems, order *int64, n int64) {
	if order != nil && (*order < 1 || *order > n) {
		p.add("order", "must be from 1 to the number of items in the list")
	}
}

// moveWithin shifts the siblings between a list position from and to so
// that the moved item can take position to.
func moveWithin(from, to int64, shift func(delta, lo, hi int64) error) error {
	switch {
	case to < from:
		return shift(1, to, from-1)
	case to > from:
		return shift(-1, from+1, to)
	}
	return nil
}

func (s *Server) sectionPatch(rq *request) error {
	id, sectionID, err := rq.pathIDs("id", "section")
	if err != nil {
		return err
	}
	var b sectionBody
	ro, err := rq.decodePatch(&b, sectionReadOnly...)
	if err != nil {
		return err
	}
	p := problems{}
	if b.Title != nil {
		checkName(p, "title", b.Title, maxSectionTitle)
	}
	if err := p.err(); err != nil {
		return err
	}
	var out toolboxSectionJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		t, err := toolboxForEdit(rq, q, id)
		if err != nil {
			return err
		}
		if err := refuseHeld(t, "sections"); err != nil {
			return err
		}
		sec, err := q.ToolboxSectionGet(rq.ctx, db.ToolboxSectionGetParams{ID: sectionID, ToolboxID: t.ID})
		if db.IsNotFound(err) {
			return notFound("The section does not exist.")
		} else if err != nil {
			return err
		}
		if err := ro.checkLoaded(func() (any, error) {
			parts, err := loadToolboxParts(rq.ctx, q, t)
			if err != nil {
				return nil, err
			}
			return sectionOf(parts, sec.ID)
		}); err != nil {
			return err
		}
		n, err := q.ToolboxSectionCount(rq.ctx, t.ID)
		if err != nil {
			return err
		}
		p := problems{}
		checkOrder(p, b.Order, n)
		if err := p.err(); err != nil {
			return err
		}
		if b.Order != nil {
			err := moveWithin(sec.Position, *b.Order, func(delta, lo, hi int64) error {
				return q.ToolboxSectionShift(rq.ctx, db.ToolboxSectionShiftParams{Delta: delta, ToolboxID: t.ID, Lo: lo, Hi: hi})
			})
			if err != nil {
				return err
			}
			sec.Position = *b.Order
		}
		if b.Title != nil {
			sec.Title = strings.TrimSpace(*b.Title)
		}
		now := s.nowText()
		if _, err := q.ToolboxSectionUpdate(rq.ctx, db.ToolboxSectionUpdateParams{Title: sec.Title, Position: sec.Position,
			UpdatedAt: now, UpdatedBy: rq.user.ID, ID: sec.ID, ToolboxID: t.ID}); err != nil {
			return err
		}
		if err := q.ToolboxTouch(rq.ctx, db.ToolboxTouchParams{UpdatedAt: now, UpdatedBy: rq.user.ID, ID: t.ID, OrganisationID: t.OrganisationID}); err != nil {
			return err
		}
		parts, err := renderPart(rq.ctx, q, t.ID)
		if err != nil {
			return err
		}
		out, err = sectionOf(parts, sec.ID)
		return err
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

// sectionDelete removes an empty section (400 while it holds topics) and
// answers with the removed section.
func (s *Server) sectionDelete(rq *request) error {
	id, sectionID, err := rq.pathIDs("id", "section")
	if err != nil {
		return err
	}
	var out toolboxSectionJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		t, err := toolboxForEdit(rq, q, id)
		if err != nil {
			return err
		}
		if err := refuseHeld(t, "sections"); err != nil {
			return err
		}
		parts, err := loadToolboxParts(rq.ctx, q, t)
		if err != nil {
			return err
		}
		if out, err = sectionOf(parts, sectionID); err != nil {
			return err
		}
		if len(out.Topics) > 0 {
			return badRequest("The section still holds topics: move or delete them first.")
		}
		if err := q.ToolboxSectionDelete(rq.ctx, db.ToolboxSectionDeleteParams{ID: sectionID, ToolboxID: t.ID}); err != nil {
			return err
		}
		n, err := q.ToolboxSectionCount(rq.ctx, t.ID)
		if err != nil {
			return err
		}
		if err := q.ToolboxSectionShift(rq.ctx, db.ToolboxSectionShiftParams{Delta: -1, ToolboxID: t.ID, Lo: out.Order + 1, Hi: n + 1}); err != nil {
			return err
		}
		return q.ToolboxTouch(rq.ctx, db.ToolboxTouchParams{UpdatedAt: s.nowText(), UpdatedBy: rq.user.ID, ID: t.ID, OrganisationID: t.OrganisationID})
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

var topicReadOnly = []string{"id", "organisation_id", "toolbox_id", "reviewed_at", "reviewed_by", "created_at", "created_by", "updated_at", "updated_by"}

type topicBody struct {
	SectionID      Opt[db.ID] `json:"section_id"`
	Body           *string    `json:"body"`
	Comments       *string    `json:"comments"`
	ReviewResponse Opt[bool]  `json:"review_response"`
	Order          *int64     `json:"order"`
}

// rewords says whether the patch changes what a topic says or where it
// stands, rather than the meeting's notes on it.
func (b *topicBody) rewords(tp db.ToolboxTopic) bool {
	if b.Body != nil && *b.Body != tp.Body || b.Order != nil && *b.Order != tp.Position {
		return true
	}
	if !b.SectionID.Set {
		return false
	}
	if b.SectionID.Null {
		return tp.SectionID != nil
	}
	return tp.SectionID == nil || *tp.SectionID != int64(b.SectionID.Value)
}

func (b *topicBody) validate() error {
	p := problems{}
	if b.Body != nil {
		p.length("body", *b.Body, 0, maxTopicBody)
	}
	if b.Comments != nil {
		p.length("comments", *b.Comments, 0, maxTopicComments)
	}
	return p.err()
}

// topicSection resolves a body's section_id to a section of the toolbox
// (400 otherwise); nil is the top level.
func topicSection(rq *request, q *db.Queries, t db.Toolbox, o Opt[db.ID]) (*int64, error) {
	if !o.Set || o.Null {
		return nil, nil
	}
	sec, err := q.ToolboxSectionGet(rq.ctx, db.ToolboxSectionGetParams{ID: int64(o.Value), ToolboxID: t.ID})
	if db.IsNotFound(err) {
		return nil, fieldError("section_id", "must name a section of this toolbox")
	}
	if err != nil {
		return nil, err
	}
	return &sec.ID, nil
}

func (s *Server) topicCreate(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var b topicBody
	if err := rq.decodeCreate(&b, append(topicReadOnly, "order")...); err != nil {
		return err
	}
	if err := b.validate(); err != nil {
		return err
	}
	var out toolboxTopicJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		t, err := toolboxForEdit(rq, q, id)
		if err != nil {
			return err
		}
		if err := refuseHeld(t, "topics"); err != nil {
			return err
		}
		section, err := topicSection(rq, q, t, b.SectionID)
		if err != nil {
			return err
		}
		now := s.nowText()
		params := db.ToolboxTopicCreateParams{ID: s.store.IDs.Next(), OrganisationID: t.OrganisationID, ToolboxID: t.ID, SectionID: section,
			Body: orDefault(b.Body, ""), Comments: orDefault(b.Comments, ""), CreatedAt: now, CreatedBy: rq.user.ID}
		if b.ReviewResponse.Set && !b.ReviewResponse.Null {
			params.ReviewResponse = &b.ReviewResponse.Value
		}
		tp, err := q.ToolboxTopicCreate(rq.ctx, params)
		if err != nil {
			return err
		}
		if tp.ReviewResponse != nil {
			if tp, err = q.ToolboxTopicUpdate(rq.ctx, reviewedTopic(tp, now, rq.user.ID)); err != nil {
				return err
			}
		}
		if err := q.ToolboxTouch(rq.ctx, db.ToolboxTouchParams{UpdatedAt: now, UpdatedBy: rq.user.ID, ID: t.ID, OrganisationID: t.OrganisationID}); err != nil {
			return err
		}
		parts, err := renderPart(rq.ctx, q, t.ID)
		if err != nil {
			return err
		}
		out, err = topicOf(parts, tp.ID)
		return err
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusCreated, out)
}

// reviewedTopic stamps who recorded a topic's review response and when.
func reviewedTopic(tp db.ToolboxTopic, now string, userID int64) db.ToolboxTopicUpdateParams {
	return db.ToolboxTopicUpdateParams{SectionID: tp.SectionID, Body: tp.Body, Comments: tp.Comments, ReviewResponse: tp.ReviewResponse,
		Position: tp.Position, ReviewedAt: &now, ReviewedBy: &userID, UpdatedAt: now, UpdatedBy: userID, ID: tp.ID, ToolboxID: tp.ToolboxID}
}

func (s *Server) topicGet(rq *request) error {
	id, topicID, err := rq.pathIDs("id", "topic")
	if err != nil {
		return err
	}
	var out toolboxTopicJSON
	err = s.store.ReadTx(rq.ctx, func(q *db.Queries) error {
		t, a, err := toolboxAccess(rq.ctx, q, rq.user.ID, id)
		if err != nil {
			return err
		}
		if err := a.Require(0); err != nil {
			return err
		}
		parts, err := loadToolboxParts(rq.ctx, q, t)
		if err != nil {
			return err
		}
		out, err = topicOf(parts, topicID)
		return err
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

// topicPatch edits a topic's text, review response and comments, and moves
// it: within its list (order), or to another section or the top level
// (section_id), where it goes to the end unless order says where.
func (s *Server) topicPatch(rq *request) error {
	id, topicID, err := rq.pathIDs("id", "topic")
	if err != nil {
		return err
	}
	var b topicBody
	ro, err := rq.decodePatch(&b, topicReadOnly...)
	if err != nil {
		return err
	}
	if err := b.validate(); err != nil {
		return err
	}
	var out toolboxTopicJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		t, err := toolboxForEdit(rq, q, id)
		if err != nil {
			return err
		}
		tp, err := q.ToolboxTopicGet(rq.ctx, db.ToolboxTopicGetParams{ID: topicID, ToolboxID: t.ID})
		if db.IsNotFound(err) {
			return notFound("The topic does not exist.")
		} else if err != nil {
			return err
		}
		// At a held talk the notes (review, comments) still change; what
		// was presented (wording, place) does not.
		if b.rewords(tp) {
			if err := refuseHeld(t, "topics"); err != nil {
				return err
			}
		}
		if err := ro.checkLoaded(func() (any, error) {
			parts, err := loadToolboxParts(rq.ctx, q, t)
			if err != nil {
				return nil, err
			}
			return topicOf(parts, tp.ID)
		}); err != nil {
			return err
		}
		dest := tp.SectionID
		if b.SectionID.Set {
			if dest, err = topicSection(rq, q, t, b.SectionID); err != nil {
				return err
			}
		}
		shift := func(section *int64) func(delta, lo, hi int64) error {
			return func(delta, lo, hi int64) error {
				return q.ToolboxTopicShift(rq.ctx, db.ToolboxTopicShiftParams{Delta: delta, ToolboxID: t.ID, SectionID: section, Lo: lo, Hi: hi})
			}
		}
		n, err := q.ToolboxTopicCount(rq.ctx, db.ToolboxTopicCountParams{ToolboxID: t.ID, SectionID: dest})
		if err != nil {
			return err
		}
		moving := !sameSection(dest, tp.SectionID)
		p := problems{}
		if moving {
			checkOrder(p, b.Order, n+1)
		} else {
			checkOrder(p, b.Order, n)
		}
		if err := p.err(); err != nil {
			return err
		}
		switch {
		case moving:
			// Leave the old list (closing its gap), then open a gap in the new one.
			oldN, err := q.ToolboxTopicCount(rq.ctx, db.ToolboxTopicCountParams{ToolboxID: t.ID, SectionID: tp.SectionID})
			if err != nil {
				return err
			}
			if err := shift(tp.SectionID)(-1, tp.Position+1, oldN); err != nil {
				return err
			}
			to := n + 1
			if b.Order != nil {
				to = *b.Order
			}
			if err := shift(dest)(1, to, n); err != nil {
				return err
			}
			tp.SectionID, tp.Position = dest, to
		case b.Order != nil:
			if err := moveWithin(tp.Position, *b.Order, shift(dest)); err != nil {
				return err
			}
			tp.Position = *b.Order
		}
		setIf(&tp.Body, b.Body)
		setIf(&tp.Comments, b.Comments)
		now := s.nowText()
		params := db.ToolboxTopicUpdateParams{SectionID: tp.SectionID, Body: tp.Body, Comments: tp.Comments, ReviewResponse: tp.ReviewResponse,
			Position: tp.Position, ReviewedAt: tp.ReviewedAt, ReviewedBy: tp.ReviewedBy, UpdatedAt: now, UpdatedBy: rq.user.ID, ID: tp.ID, ToolboxID: t.ID}
		if b.ReviewResponse.Set {
			params.ReviewResponse, params.ReviewedAt, params.ReviewedBy = nil, nil, nil
			if !b.ReviewResponse.Null {
				v := b.ReviewResponse.Value
				params.ReviewResponse, params.ReviewedAt, params.ReviewedBy = &v, &now, &rq.user.ID
			}
		}
		if _, err := q.ToolboxTopicUpdate(rq.ctx, params); err != nil {
			return err
		}
		if err := q.ToolboxTouch(rq.ctx, db.ToolboxTouchParams{UpdatedAt: now, UpdatedBy: rq.user.ID, ID: t.ID, OrganisationID: t.OrganisationID}); err != nil {
			return err
		}
		parts, err := renderPart(rq.ctx, q, t.ID)
		if err != nil {
			return err
		}
		out, err = topicOf(parts, tp.ID)
		return err
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

func sameSection(a, b *int64) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}

// topicDelete removes a topic, closes the gap and answers with the removed topic.
func (s *Server) topicDelete(rq *request) error {
	id, topicID, err := rq.pathIDs("id", "topic")
	if err != nil {
		return err
	}
	var out toolboxTopicJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		t, err := toolboxForEdit(rq, q, id)
		if err != nil {
			return err
		}
		if err := refuseHeld(t, "topics"); err != nil {
			return err
		}
		parts, err := loadToolboxParts(rq.ctx, q, t)
		if err != nil {
			return err
		}
		if out, err = topicOf(parts, topicID); err != nil {
			return err
		}
		section := (*int64)(out.SectionID)
		if err := q.ToolboxTopicDelete(rq.ctx, db.ToolboxTopicDeleteParams{ID: topicID, ToolboxID: t.ID}); err != nil {
			return err
		}
		n, err := q.ToolboxTopicCount(rq.ctx, db.ToolboxTopicCountParams{ToolboxID: t.ID, SectionID: section})
		if err != nil {
			return err
		}
		if err := q.ToolboxTopicShift(rq.ctx, db.ToolboxTopicShiftParams{Delta: -1, ToolboxID: t.ID, SectionID: section, Lo: out.Order + 1, Hi: n + 1}); err != nil {
			return err
		}
		return q.ToolboxTouch(rq.ctx, db.ToolboxTouchParams{UpdatedAt: s.nowText(), UpdatedBy: rq.user.ID, ID: t.ID, OrganisationID: t.OrganisationID})
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}
