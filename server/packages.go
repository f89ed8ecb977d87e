package server

import (
	"context"
	"database/sql"
	"net/http"

	"workspace/db"
)

// packageJSON is the project package object.
type packageJSON struct {
	ID             db.ID  `json:"id"`
	OrganisationID db.ID  `json:"organisation_id"`
	ProjectID      db.ID  `json:"project_id"`
	Code           string `json:"code"`
	Name           string `json:"name"`
	Description    string `json:"description"`
	Enabled        bool   `json:"enabled"`
}

func toPackage(p db.ProjectPackage) packageJSON {
	return packageJSON{
		ID: db.ID(p.ID), OrganisationID: db.ID(p.OrganisationID), ProjectID: db.ID(p.ProjectID),
		Code: p.Code, Name: p.Name, Description: p.Description, Enabled: p.Enabled,
	}
}

var packageReadOnly = []string{"id", "organisation_id", "project_id"}

type packageBody struct {
	Code        *string `json:"code"`
	Name        *string `json:"name"`
	Description *string `json:"description"`
	Enabled     *bool   `json:"enabled"`
}

func (b *packageBody) validate() error {
	p := problems{}
	optText(p, "code", b.Code, maxCode)
	checkName(p, "name", b.Name, maxNameLen)
	optText(p, "description", b.Description, maxDescriptionLen)
	return p.err()
}

// packageCreate: ADMIN_PROJECTS on the project.
func (s *Server) packageCreate(rq *request) error {
	projectID, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var b packageBody
	if err := rq.decodeCreate(&b, packageReadOnly...); err != nil {
		return err
	}
	if err := b.validate(); err != nil {
		return err
	}
	var out packageJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		p, a, err := projectAccess(rq.ctx, q, rq.user.ID, projectID, projectAbsent(http.StatusBadRequest))
		if err != nil {
			return err
		}
		if err := a.Require(AdminProjects); err != nil {
			return err
		}
		enabled := true
		if b.Enabled != nil {
			enabled = *b.Enabled
		}
		pkg, err := q.PackageCreate(rq.ctx, db.PackageCreateParams{
			ID: s.store.IDs.Next(), OrganisationID: p.OrganisationID, ProjectID: p.ID,
			Code: orDefault(b.Code, ""), Name: orDefault(b.Name, "new package"),
			Description: orDefault(b.Description, ""), Enabled: enabled,
			CreatedAt: s.nowText(), CreatedBy: rq.user.ID,
		})
		if err != nil {
			return err
		}
		out = toPackage(pkg)
		return nil
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusCreated, out)
}

// packageAccess loads a package and the caller's access in it, resolved
// with the package layer above the project and organisation layers.
func packageAccess(ctx context.Context, q *db.Queries, userID, id int64, absent *Error) (db.ProjectPackage, Access, error) {
	pkg, err := q.PackageGet(ctx, id)
	if db.IsNotFound(err) {
		return pkg, Access{}, absent
	}
	if err != nil {
		return pkg, Access{}, err
	}
	a, err := authorize(ctx, q, userID, pkg.OrganisationID, Scopes{Project: pkg.ProjectID, Package: pkg.ID})
	if db.IsNotFound(err) {
		return pkg, Access{}, absent
	}
	return pkg, a, err
}

func packageAbsent(status int) *Error { return errorf(status, "The package does not exist.") }

func (s *Server) packageGet(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	pkg, a, err := packageAccess(rq.ctx, s.store.R, rq.user.ID, id, packageAbsent(http.StatusNotFound))
	if err != nil {
		return err
	}
	if err := a.Require(ViewProjects); err != nil {
		return err
	}
	return rq.json(http.StatusOK, toPackage(pkg))
}

// packagePatch: ADMIN_PROJECTS on the package (package layer first).
func (s *Server) packagePatch(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var b packageBody
	ro, err := rq.decodePatch(&b, packageReadOnly...)
	if err != nil {
		return err
	}
	if err := b.validate(); err != nil {
		return err
	}
	var out packageJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		pkg, a, err := packageAccess(rq.ctx, q, rq.user.ID, id, packageAbsent(http.StatusBadRequest))
		if err != nil {
			return err
		}
		if err := a.Require(AdminProjects); err != nil {
			return err
		}
		if err := ro.check(toPackage(pkg)); err != nil {
			return err
		}
		enabled := pkg.Enabled
		if b.Enabled != nil {
			enabled = *b.Enabled
		}
		pkg, err = q.PackageUpdate(rq.ctx, db.PackageUpdateParams{
			ID: pkg.ID, OrganisationID: pkg.OrganisationID, Code: orDefault(b.Code, pkg.Code),
			Name: orDefault(b.Name, pkg.Name), Description: orDefault(b.Description, pkg.Description),
			Enabled: enabled,
		})
		if err != nil {
			return err
		}
		out = toPackage(pkg)
		return nil
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

// packageFilter is the $filter whitelist of the package list: only the
// fields its row names (decisions.md, Lists).
var packageFilter = db.FilterFields{
	"enabled": {Column: "enabled", Kind: db.FieldBool},
}

// packageList: VIEW_PROJECTS on the project; packages whose own grants hide
// them from the caller are left out, as in the project list.
func (s *Server) packageList(rq *request) error {
	return listPage(s, rq, listSpec[packageJSON]{Path: "id", Fields: packageFilter,
		Scope: func(_ *sql.Tx, q *db.Queries, projectID int64, _ listQuery) (listSQL, error) {
			p, a, err := projectAccess(rq.ctx, q, rq.user.ID, projectID, projectAbsent(http.StatusBadRequest))
			if err != nil {
				return listSQL{}, err
			}
			if err := a.Require(ViewProjects); err != nil {
				return listSQL{}, err
			}
			vis, err := visibleIn(rq.ctx, q, a, p.ID, "package")
			if err != nil || vis.none() {
				return listSQL{}, err
			}
			where, args := vis.where("project_id = ? AND organisation_id = ?", p.ID, p.OrganisationID)
			return listSQL{From: "project_packages", Where: where, Args: args}, nil
		},
		Rows: byIDs((*db.Queries).PackageListByIDs, each(toPackage))})
}

// packageGrantPatch: 404 when the package is absent.
func (s *Server) packageGrantPatch(rq *request) error {
	return s.grantPatch(rq, "package", func(q *db.Queries, id int64) (Access, error) {
		_, a, err := packageAccess(rq.ctx, q, rq.user.ID, id, packageAbsent(http.StatusNotFound))
		return a, err
	})
}

// packageGrantList: 404 when the package is absent.
func (s *Server) packageGrantList(rq *request) error {
	return s.scopeGrantList(rq, func(q *db.Queries, id int64) (Access, error) {
		_, a, err := packageAccess(rq.ctx, q, rq.user.ID, id, packageAbsent(http.StatusNotFound))
		return a, err
	})
}
