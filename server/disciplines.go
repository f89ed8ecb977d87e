package server

import (
	"context"
	"net/http"

	"workspace/db"
)

// Disciplines (spec: Disciplines): a code, a name and a description, created
// enabled; managed with MANAGE_ORGANISATION.

const defaultDisciplineName = "new discipline"

type disciplineJSON struct {
	ID             db.ID  `json:"id"`
	OrganisationID db.ID  `json:"organisation_id"`
	Code           string `json:"code"`
	Name           string `json:"name"`
	Description    string `json:"description"`
	Enabled        bool   `json:"enabled"`
}

func toDiscipline(d db.Discipline) disciplineJSON {
	return disciplineJSON{ID: db.ID(d.ID), OrganisationID: db.ID(d.OrganisationID), Code: d.Code, Name: d.Name,
		Description: d.Description, Enabled: d.Enabled}
}

type disciplineBody struct {
	Code        *string `json:"code"`
	Name        *string `json:"name"`
	Description *string `json:"description"`
	Enabled     *bool   `json:"enabled"`
}

func (b *disciplineBody) validate() error {
	p := problems{}
	optText(p, "code", b.Code, maxCode)
	checkName(p, "name", b.Name, maxLocationName)
	optText(p, "description", b.Description, maxDescriptionLen)
	return p.err()
}

// disciplineAccess loads a discipline and the caller's access; the spec's
// discipline rows answer an absent one with 400.
func disciplineAccess(ctx context.Context, q *db.Queries, userID, id int64) (db.Discipline, Access, error) {
	d, err := q.DisciplineGet(ctx, id)
	if db.IsNotFound(err) {
		return d, Access{}, badRequest("The discipline does not exist.")
	}
	if err != nil {
		return d, Access{}, err
	}
	a, err := authorize(ctx, q, userID, d.OrganisationID, Scopes{})
	if db.IsNotFound(err) {
		return d, Access{}, badRequest("The discipline does not exist.")
	}
	return d, a, err
}

func (s *Server) disciplineCreate(rq *request) error {
	orgID, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var b disciplineBody
	if err := rq.decodeCreate(&b, "id", "organisation_id", "enabled"); err != nil {
		return err
	}
	if err := b.validate(); err != nil {
		return err
	}
	var out disciplineJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		if _, err := orgAccess(rq, q, orgID, http.StatusBadRequest, ManageOrganisation); err != nil {
			return err
		}
		d, err := q.DisciplineCreate(rq.ctx, db.DisciplineCreateParams{
			ID: s.store.IDs.Next(), OrganisationID: orgID, Code: orDefault(b.Code, ""),
			Name: orDefault(b.Name, defaultDisciplineName), Description: orDefault(b.Description, ""), CreatedAt: s.nowText(),
		})
		if err != nil {
			return err
		}
		out = toDiscipline(d)
		return nil
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusCreated, out)
}

func (s *Server) disciplineList(rq *request) error {
	orgID, err := rq.pathID("id")
	if err != nil {
		return err
	}
	out := []disciplineJSON{}
	err = s.store.ReadTx(rq.ctx, func(q *db.Queries) error {
		if _, err := orgAccess(rq, q, orgID, http.StatusBadRequest, 0); err != nil {
			return err
		}
		rows, err := q.DisciplineList(rq.ctx, orgID)
		if err != nil {
			return err
		}
		for _, d := range rows {
			out = append(out, toDiscipline(d))
		}
		return nil
	})
	if err != nil {
		return err
	}
	setTotalCount(rq.w, int64(len(out)))
	return rq.json(http.StatusOK, out)
}

func (s *Server) disciplineGet(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	d, a, err := disciplineAccess(rq.ctx, s.store.R, rq.user.ID, id)
	if err != nil {
		return err
	}
	if err := a.Require(0); err != nil {
		return err
	}
	return rq.json(http.StatusOK, toDiscipline(d))
}

func (s *Server) disciplinePatch(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var b disciplineBody
	ro, err := rq.decodePatch(&b, "id", "organisation_id")
	if err != nil {
		return err
	}
	if err := b.validate(); err != nil {
		return err
	}
	var out disciplineJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		d, a, err := disciplineAccess(rq.ctx, q, rq.user.ID, id)
		if err != nil {
			return err
		}
		if err := a.Require(ManageOrganisation); err != nil {
			return err
		}
		if err := ro.check(toDiscipline(d)); err != nil {
			return err
		}
		enabled := d.Enabled
		if b.Enabled != nil {
			enabled = *b.Enabled
		}
		d, err = q.DisciplineUpdate(rq.ctx, db.DisciplineUpdateParams{
			ID: d.ID, OrganisationID: d.OrganisationID, Code: orDefault(b.Code, d.Code), Name: orDefault(b.Name, d.Name),
			Description: orDefault(b.Description, d.Description), Enabled: enabled,
		})
		if err != nil {
			return err
		}
		out = toDiscipline(d)
		return nil
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}
