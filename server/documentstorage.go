package server

import (
	"context"

	"workspace/db"
	"workspace/server/docengine"
)

// flushCharged stores a change's new content objects and adds the bytes
// the chunk table did not hold before to the organisation's storage_usage
// (docs/documents.md "Storage"), in the caller's write transaction.
func (s *Server) flushCharged(ctx context.Context, q *db.Queries, st *docengine.Stage, root docengine.Hash, orgID int64) error {
	n, err := st.Flush(root)
	if err != nil || n == 0 {
		return err
	}
	if err := q.DocumentStorageAdd(ctx, db.DocumentStorageAddParams{OrganisationID: orgID, Bytes: int64(n)}); err != nil {
		return err
	}
	return q.OrgStorageAdd(ctx, db.OrgStorageAddParams{Delta: int64(n), ID: orgID})
}
