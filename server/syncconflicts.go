package server

import (
	"database/sql"
	"net/http"

	"workspace/db"
)

// Sync conflicts (docs/sync.md): what an exchange between offices found for
// a person to settle: a code (of a project, package, location,
// sub-location or discipline) two offices gave two records while apart
// (both kept, the later renamed); an e-mail address two offices gave two
// accounts (both kept, the later's address held aside in renamed_to); or
// one domain, induction assignment or asset field option made twice (the
// later removed, renamed_to empty). Settling says a person has looked.

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
	return syncConflictJSON{ID: db.ID(c.ID), OrganisationID: db.ID(c.OrganisationID), Kind: c.Kind, RecordType: rt,
		RecordID: db.ID(c.RowID), OtherID: db.ID(c.OtherID), Field: c.Col, Value: c.Value, RenamedTo: c.RenamedTo,
		CreatedAt: c.CreatedAt, SettledAt: c.SettledAt, SettledBy: optID(c.SettledBy)}
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
		Rows: byIDs((*db.Queries).SyncConflictListByIDs, each(toSyncConflict))})
}

// syncConflictSettle marks a conflict settled by the caller; settling one
// already settled keeps who settled it first.
func (s *Server) syncConflictSettle(rq *request) error {
	orgID, err := rq.pathID("id")
	if err != nil {
		return err
	}
	id, err := rq.pathID("conflict")
	if err != nil {
		return err
	}
	var out syncConflictJSON
	err = s.store.InTx(rq.ctx, func(q *db.Queries) error {
		if _, err := orgAccess(rq, q, orgID, http.StatusNotFound, ManageOrganisation); err != nil {
			return err
		}
		c, err := q.SyncConflictGet(rq.ctx, db.SyncConflictGetParams{ID: id, OrganisationID: orgID})
		if db.IsNotFound(err) {
			return notFound("The conflict was not found.")
		}
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
		out = toSyncConflict(c)
		return nil
	})
	if err != nil {
		return err
	}
	return rq.json(http.StatusOK, out)
}
