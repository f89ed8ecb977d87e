package server

import (
	"context"
	"database/sql"
	"net/http"

	"workspace/db"
)

// The system breakdown structure (spec: Systems). Decisions in
// docs/structure.md.

const (
	maxSystemName      = 60
	maxCode            = 12
	maxRootPrefix      = 20
	defaultSystemName  = "new system"
	defaultSystemDescr = "new system description"
	systemCounter      = "system"
)

// systemRefJSON is a system as another system names it (its root, its
// parent): enough to show it without nesting the tree.
type systemRefJSON struct {
	ID              db.ID  `json:"id"`
	Number          int64  `json:"number"`
	FormattedNumber string `json:"formatted_number"`
	Code            string `json:"code"`
	Name            string `json:"name"`
}

type systemJSON struct {
	ID              db.ID          `json:"id"`
	OrganisationID  db.ID          `json:"organisation_id"`
	Number          int64          `json:"number"`
	FormattedNumber string         `json:"formatted_number"`
	Code            string         `json:"code"`
	Name            string         `json:"name"`
	Description     string         `json:"description"`
	RootPrefix      string         `json:"root_prefix"`
	RootID          *db.ID         `json:"root_id"`
	Root            *systemRefJSON `json:"root"`
	ParentID        *db.ID         `json:"parent_id"`
	Parent          *systemRefJSON `json:"parent"`
	Unused          bool           `json:"unused"`
}

// formattedNumber is the root prefix followed by the number (decisions.md).
// A provisional number (offline, no block left: docs/sync.md) reads PROV-<node>-<n>.
func formattedNumber(s db.System) string { return s.RootPrefix + plainNumber(s.Number) }

func systemRef(s db.System) *systemRefJSON {
	return &systemRefJSON{ID: db.ID(s.ID), Number: s.Number, FormattedNumber: formattedNumber(s), Code: s.Code, Name: s.Name}
}

// toSystem renders a system; refs holds its root and parent when loaded.
func toSystem(s db.System, refs map[int64]db.System) systemJSON {
	out := systemJSON{
		ID: db.ID(s.ID), OrganisationID: db.ID(s.OrganisationID), Number: s.Number, FormattedNumber: formattedNumber(s),
		Code: s.Code, Name: s.Name, Description: s.Description, RootPrefix: s.RootPrefix,
		RootID: optID(s.RootID), ParentID: optID(s.ParentID), Unused: s.Unused,
	}
	if s.RootID != nil {
		if r, ok := refs[*s.RootID]; ok {
			out.Root = systemRef(r)
		}
	}
	if s.ParentID != nil {
		if p, ok := refs[*s.ParentID]; ok {
			out.Parent = systemRef(p)
		}
	}
	return out
}

// systemRefs loads the roots and parents the systems name.
func systemRefs(ctx context.Context, q *db.Queries, systems ...db.System) (map[int64]db.System, error) {
	var ids []int64
	for _, s := range systems {
		for _, id := range []*int64{s.RootID, s.ParentID} {
			if id != nil {
				ids = append(ids, *id)
			}
		}
	}
	refs := map[int64]db.System{}
	if len(ids) == 0 {
		return refs, nil
	}
	rows, err := q.SystemListByIDs(ctx, idsJSON(ids))
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		refs[r.ID] = r
	}
	return refs, nil
}

func (s *Server) renderSystems(ctx context.Context, q *db.Queries, systems []db.System) ([]systemJSON, error) {
	refs, err := systemRefs(ctx, q, systems...)
	if err != nil {
		return nil, err
	}
	out := make([]systemJSON, len(systems))
	for i, sys := range systems {
		out[i] = toSystem(sys, refs)
	}
	return out, nil
}

// systemAccess loads a system and the caller's access. The spec's system
// rows answer an absent system with 400.
func systemAccess(ctx context.Context, q *db.Queries, userID, id int64) (db.System, Access, error) {
	sys, err := q.SystemGet(ctx, id)
	if db.IsNotFound(err) {
		return sys, Access{}, badRequest("The system does not exist.")
	}
	if err != nil {
		return sys, Access{}, err
	}
	a, err := authorize(ctx, q, userID, sys.OrganisationID, Scopes{})
	if db.IsNotFound(err) {
		return sys, Access{}, badRequest("The system does not exist.")
	}
	return sys, a, err
}

var systemReadOnly = []string{"id", "organisation_id", "number", "formatted_number", "root_id", "root", "parent_id", "parent"}

type systemBody struct {
	ParentID    Opt[db.ID] `json:"parent_id"`
	RootPrefix  *string    `json:"root_prefix"`
	Name        *string    `json:"name"`
	Code        *string    `json:"code"`
	Description *string    `json:"description"`
	Unused      *bool      `json:"unused"`
}

func (b *systemBody) validate() error {
	p := problems{}
	checkName(p, "name", b.Name, maxSystemName)
	optText(p, "code", b.Code, maxCode)
	optText(p, "description", b.Description, maxDescriptionLen)
	optText(p, "root_prefix", b.RootPrefix, maxRootPrefix)
	return p.err()
}

// systemCreate numbers the system from the organisation's counter in the
// same transaction. A child takes its parent's root and root prefix.
func (s *Server) systemCreate(rq *request) error {
	orgID, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var b systemBody
	if err := rq.decodeCreate(&b, "id", "organisation_id", "number", "formatted_number", "root_id", "root", "parent", "unused"); err != nil {
		return err
	}
	if err := b.validate(); err != nil {
		return err
	}
	var out systemJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		if _, err := orgAccess(rq, q, orgID, http.StatusBadRequest, ManageSystems); err != nil {
			return err
		}
		params := db.SystemCreateParams{
			ID: s.store.IDs.Next(), OrganisationID: orgID, Code: orDefault(b.Code, ""),
			Name: orDefault(b.Name, defaultSystemName), Description: orDefault(b.Description, defaultSystemDescr),
			RootPrefix: orDefault(b.RootPrefix, ""), CreatedAt: s.nowText(), CreatedBy: rq.user.ID,
		}
		if b.ParentID.Set && !b.ParentID.Null {
			parent, err := q.SystemGet(rq.ctx, int64(b.ParentID.Value))
			if db.IsNotFound(err) || (err == nil && parent.OrganisationID != orgID) {
				return fieldError("parent_id", "names no system of this organisation")
			} else if err != nil {
				return err
			}
			root := parent.ID
			if parent.RootID != nil {
				root = *parent.RootID
			}
			params.ParentID, params.RootID, params.RootPrefix = &parent.ID, &root, parent.RootPrefix
		}
		if params.Number, err = counterNext(rq.ctx, q, orgID, systemCounter); err != nil {
			return err
		}
		sys, err := q.SystemCreate(rq.ctx, params)
		if err != nil {
			return err
		}
		refs, err := systemRefs(rq.ctx, q, sys)
		if err != nil {
			return err
		}
		out = toSystem(sys, refs)
		return nil
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusCreated, out)
}

// systemList: root (default true) lists root systems only; unused (default
// false) lists the systems whose unused flag has that value.
func (s *Server) systemList(rq *request) error {
	// root and unused are read before the list's own parameters (their
	// errors come first)
	var root, unused bool
	return listPage(s, rq, listSpec[systemJSON]{Path: "id",
		Query: func(int64) (listQuery, error) {
			var err error
			if root, err = rq.queryBool("root", true); err != nil {
				return listQuery{}, err
			}
			if unused, err = rq.queryBool("unused", false); err != nil {
				return listQuery{}, err
			}
			return parseListQuery(rq.r, nil)
		},
		Scope: func(_ *sql.Tx, q *db.Queries, orgID int64, _ listQuery) (listSQL, error) {
			// Members, and holders of an accepted fleet share (spec).
			a, err := orgAccess(rq, q, orgID, http.StatusBadRequest, undecided)
			if err != nil {
				return listSQL{}, err
			}
			if err := requireMemberOrShare(rq.ctx, q, a); err != nil {
				return listSQL{}, err
			}
			where := "organisation_id = ? AND unused = ?"
			if root {
				where += " AND parent_id IS NULL"
			}
			return listSQL{From: "systems", Where: where, Args: []any{orgID, unused}, OrderBy: "number"}, nil
		},
		Rows: byIDs((*db.Queries).SystemListByIDs, s.renderSystems)})
}

func (s *Server) systemGet(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var out systemJSON
	err = s.store.ReadTx(rq.ctx, func(q *db.Queries) error {
		sys, a, err := systemAccess(rq.ctx, q, rq.user.ID, id)
		if err != nil {
			return err
		}
		if err := a.Require(0); err != nil {
			return err
		}
		refs, err := systemRefs(rq.ctx, q, sys)
		if err != nil {
			return err
		}
		out = toSystem(sys, refs)
		return nil
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

// systemSubsystems lists the systems under a root, in number order.
func (s *Server) systemSubsystems(rq *request) error {
	return listPage(s, rq, listSpec[systemJSON]{Path: "id",
		Scope: func(_ *sql.Tx, q *db.Queries, id int64, _ listQuery) (listSQL, error) {
			sys, a, err := systemAccess(rq.ctx, q, rq.user.ID, id)
			if err != nil {
				return listSQL{}, err
			}
			return listSQL{From: "systems", Where: "organisation_id = ? AND root_id = ?", Args: []any{sys.OrganisationID, sys.ID}, OrderBy: "number"},
				a.Require(0)
		},
		Rows: byIDs((*db.Queries).SystemListByIDs, s.renderSystems)})
}

// systemPatch: name, code, description, unused; root_prefix only on a root,
// where it changes the prefix of every system under that root.
func (s *Server) systemPatch(rq *request) error {
	id, err := rq.pathID("id")
	if err != nil {
		return err
	}
	var b systemBody
	ro, err := rq.decodePatch(&b, systemReadOnly...)
	if err != nil {
		return err
	}
	if err := b.validate(); err != nil {
		return err
	}
	var out systemJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		sys, a, err := systemAccess(rq.ctx, q, rq.user.ID, id)
		if err != nil {
			return err
		}
		if err := a.Require(ManageSystems); err != nil {
			return err
		}
		if err := ro.checkLoaded(func() (any, error) {
			refs, err := systemRefs(rq.ctx, q, sys)
			return toSystem(sys, refs), err
		}); err != nil {
			return err
		}
		if b.RootPrefix != nil && *b.RootPrefix != sys.RootPrefix {
			if sys.ParentID != nil {
				return fieldError("root_prefix", "can be changed only on a root system")
			}
			if err := q.SystemRootPrefixSet(rq.ctx, db.SystemRootPrefixSetParams{RootPrefix: *b.RootPrefix, OrganisationID: sys.OrganisationID, RootID: sys.ID}); err != nil {
				return err
			}
		}
		unused := sys.Unused
		if b.Unused != nil {
			unused = *b.Unused
		}
		sys, err = q.SystemUpdate(rq.ctx, db.SystemUpdateParams{
			ID: sys.ID, OrganisationID: sys.OrganisationID, Code: orDefault(b.Code, sys.Code),
			Name: orDefault(b.Name, sys.Name), Description: orDefault(b.Description, sys.Description), Unused: unused,
		})
		if err != nil {
			return err
		}
		refs, err := systemRefs(rq.ctx, q, sys)
		if err != nil {
			return err
		}
		out = toSystem(sys, refs)
		return nil
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}
