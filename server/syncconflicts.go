package server

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"net/http"

	"workspace/db"
)

// Sync conflicts (docs/sync.md): what an exchange between offices found for
// a person to settle: a code (of a project, package, location,
// sub-location or discipline) two offices gave two records while apart
// (both kept, the later renamed); an e-mail address two offices gave two
// accounts (both kept, the later's address held aside in renamed_to); or
// one domain, induction assignment or asset field option made twice (the
// later removed, renamed_to empty). Or an access decision: two offices
// changed someone's access opposite ways and the hub kept the stricter
// (kind access, field the decision, record_id the person); its owner may
// undo it, which makes the change that lost. Settling says a person has
// looked.

type syncConflictJSON struct {
	ID             db.ID   `json:"id"`
	OrganisationID db.ID   `json:"organisation_id"`
	Kind           string  `json:"kind"`
	RecordType     string  `json:"record_type"`
	RecordID       db.ID   `json:"record_id"`
	OtherID        db.ID   `json:"other_id"`
	Field          string  `json:"field"`
	Value          string  `json:"value"`
	RenamedTo      string  `json:"renamed_to"`
	CreatedAt      string  `json:"created_at"`
	SettledAt      *string `json:"settled_at"`
	SettledBy      *db.ID  `json:"settled_by"`
	Undone         bool    `json:"undone"`
	// Access: what an access decision concerned, named for the screen (nil
	// for a key given twice).
	Access *syncAccessJSON `json:"access"`
}

// syncAccessJSON names what an access decision was about: the person, the
// roles its Undo gives back, the grant's holder, and what was removed.
type syncAccessJSON struct {
	PersonName string   `json:"person_name"`
	Roles      []string `json:"roles"`
	GrantFor   string   `json:"grant_for"`
	GrantName  string   `json:"grant_for_name"`
	Removed    string   `json:"removed"`
}

// syncAccessRemoved names, for the screen, the kind of row a removal over
// an addition took.
var syncAccessRemoved = map[string]string{
	"organisation_members": "membership", "member_roles": "role_given", "permission_grants": "grant",
	"roles": "role", "invites": "invite", "fleet_shares": "share", "project_shares": "share",
	"document_shares": "share", "user_identities": "sign_in",
}

// syncRecordTypes names a conflict's table as the API's record type.
var syncRecordTypes = map[string]string{
	"projects": "project", "project_packages": "package", "locations": "location",
	"sub_locations": "sub_location", "disciplines": "discipline",
	// Keys an index keeps unique (db/syncindexkeys.go): an account's
	// address held aside, or one of two alike rows removed.
	"users": "account", "organisation_domains": "domain", "user_inductions": "induction_assignment",
	"asset_field_enum_values": "asset_field_option",
	// A document's branch name or tag label given twice: both kept, the
	// later renamed, as codes are.
	"document_branches": "document_branch", "document_tags": "document_tag",
}

func toSyncConflict(c db.SyncConflict) syncConflictJSON {
	rt := syncRecordTypes[c.Tbl]
	if rt == "" {
		rt = c.Tbl
	}
	if c.Kind == "access" {
		rt = "access"
	}
	return syncConflictJSON{ID: db.ID(c.ID), OrganisationID: db.ID(c.OrganisationID), Kind: c.Kind, RecordType: rt,
		RecordID: db.ID(c.RowID), OtherID: db.ID(c.OtherID), Field: c.Col, Value: c.Value, RenamedTo: c.RenamedTo,
		CreatedAt: c.CreatedAt, SettledAt: c.SettledAt, SettledBy: optID(c.SettledBy), Undone: c.Undone}
}

// loadSyncConflict is toSyncConflict with an access decision's names read.
func loadSyncConflict(ctx context.Context, q *db.Queries, c db.SyncConflict) (syncConflictJSON, error) {
	out := toSyncConflict(c)
	if c.Kind != "access" || c.Undo == nil {
		return out, nil
	}
	var undo db.AccessUndo
	if err := json.Unmarshal([]byte(*c.Undo), &undo); err != nil {
		return out, err
	}
	a := &syncAccessJSON{Roles: []string{}, Removed: syncAccessRemoved[c.Tbl]}
	if c.RowID != 0 {
		p, err := q.SyncConflictPersonName(ctx, c.RowID)
		if err != nil && !db.IsNotFound(err) {
			return out, err
		}
		a.PersonName = personName(db.User{FirstName: p.FirstName, LastName: p.LastName, Email: p.Email})
	}
	roles := undo.Roles
	if m := undo.Masks; m != nil {
		a.GrantFor = "user"
		switch {
		case m.TargetID == c.OrganisationID:
			a.GrantFor = "organisation"
		case c.RowID == 0:
			a.GrantFor = "role"
			roles = append(roles, m.TargetID)
		}
	}
	if len(roles) > 0 {
		named, err := q.SyncConflictRoleNames(ctx, db.SyncConflictRoleNamesParams{IdsJson: idsJSON(roles), OrganisationID: c.OrganisationID})
		if err != nil {
			return out, err
		}
		for _, r := range named {
			if undo.Masks != nil && r.ID == undo.Masks.TargetID {
				a.GrantName = r.Name
				continue
			}
			a.Roles = append(a.Roles, r.Name)
		}
	}
	out.Access = a
	return out, nil
}

// syncConflictFilter: the screen pages the open conflicts
// (settled_at eq null) apart from the settled ones.
var syncConflictFilter = db.FilterFields{
	"settled_at": {Column: "settled_at", Kind: db.FieldTime},
}

// syncConflictList pages an organisation's conflicts, newest first, through
// the list shell (an absent organisation is 404, as for the settle route).
func (s *Server) syncConflictList(rq *request) error {
	return listPage(s, rq, listSpec[syncConflictJSON]{Path: "id", Fields: syncConflictFilter,
		Scope: func(_ *sql.Tx, q *db.Queries, orgID int64, _ listQuery) (listSQL, error) {
			if _, err := orgAccess(rq, q, orgID, http.StatusNotFound, ManageOrganisation); err != nil {
				return listSQL{}, err
			}
			return listSQL{From: "sync_conflicts", Where: "organisation_id = ?", Args: []any{orgID}, OrderBy: "id DESC"}, nil
		},
		Rows: byIDs((*db.Queries).SyncConflictListByIDs, eachQ(loadSyncConflict))})
}

// syncConflictPath reads the organisation's and the conflict's ids.
func syncConflictPath(rq *request) (orgID, id int64, err error) {
	if orgID, err = rq.pathID("id"); err != nil {
		return 0, 0, err
	}
	id, err = rq.pathID("conflict")
	return orgID, id, err
}

// syncConflictGet reads one of the organisation's conflicts (404 for
// another's).
func syncConflictGet(rq *request, q *db.Queries, orgID, id int64) (db.SyncConflict, error) {
	c, err := q.SyncConflictGet(rq.ctx, db.SyncConflictGetParams{ID: id, OrganisationID: orgID})
	if db.IsNotFound(err) {
		return c, notFound("The conflict was not found.")
	}
	return c, err
}

// syncConflictSettle marks a conflict settled by the caller; settling one
// already settled keeps who settled it first.
func (s *Server) syncConflictSettle(rq *request) error {
	orgID, id, err := syncConflictPath(rq)
	if err != nil {
		return err
	}
	var out syncConflictJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		if _, err := orgAccess(rq, q, orgID, http.StatusNotFound, ManageOrganisation); err != nil {
			return err
		}
		c, err := syncConflictGet(rq, q, orgID, id)
		if err != nil {
			return err
		}
		if c.SettledAt == nil {
			by := rq.user.ID
			if c, err = q.SyncConflictSettle(rq.ctx, db.SyncConflictSettleParams{ID: id, OrganisationID: orgID,
				SettledAt: ptr(s.nowText()), SettledBy: &by}); err != nil {
				return err
			}
		}
		out, err = loadSyncConflict(rq.ctx, q, c)
		return err
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

// syncConflictUndo, for the organisation's owner (the route's check):
// makes the change an access decision kept out (the member back, the role
// given again, the ban lifted, the grant as the later change set it)
// through this node's ordinary writes, and settles the decision as undone,
// in one transaction. Only an open access decision can be undone.
func (s *Server) syncConflictUndo(rq *request) error {
	orgID, id, err := syncConflictPath(rq)
	if err != nil {
		return err
	}
	var out syncConflictJSON
	err = s.store.InTxSQL(rq.ctx, func(tx *sql.Tx, q *db.Queries) error {
		c, err := syncConflictGet(rq, q, orgID, id)
		if err != nil {
			return err
		}
		if c.Kind != "access" || c.Undo == nil {
			return errorf(http.StatusConflict, "Only a decision about someone's access can be undone; this one can only be settled.")
		}
		if c.SettledAt != nil {
			if c.Undone {
				return errorf(http.StatusConflict, "This decision was undone already.")
			}
			return errorf(http.StatusConflict, "This decision was marked settled already; to give the access now, use Members.")
		}
		now := s.nowText()
		if err := s.store.ApplyAccessUndo(rq.ctx, tx, q, orgID, c.RowID, *c.Undo, now); err != nil {
			if errors.Is(err, db.ErrUndoBlocked) {
				return errorf(http.StatusConflict, "This decision cannot be undone: %s.", undoBlockedReason(err))
			}
			return err
		}
		by := rq.user.ID
		if c, err = q.SyncConflictUndone(rq.ctx, db.SyncConflictUndoneParams{ID: id, OrganisationID: orgID,
			SettledAt: &now, SettledBy: &by}); err != nil {
			return err
		}
		out, err = loadSyncConflict(rq.ctx, q, c)
		return err
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}

// undoBlockedReason is what db.ApplyAccessUndo said stands in the way.
func undoBlockedReason(err error) string {
	msg := err.Error()
	prefix := db.ErrUndoBlocked.Error() + ": "
	if len(msg) > len(prefix) && msg[:len(prefix)] == prefix {
		return msg[len(prefix):]
	}
	return msg
}
