-- Objects sync moves by hash (docs/sync.md, "Documents and files").

-- name: SyncChunkHeld :one
SELECT count(*) FROM document_chunks WHERE hash = @hash;

-- name: SyncBlobHeld :one
SELECT count(*) FROM blobs WHERE hash = @hash;

-- name: SyncBlobSize :one
SELECT size FROM blobs WHERE hash = @hash;

-- name: SyncStagedGet :one
SELECT * FROM sync_object_staging WHERE hash = @hash AND kind = @kind;

-- name: SyncStagedPut :exec
INSERT INTO sync_object_staging(hash, kind, data, content_type, created_at)
VALUES (@hash, @kind, @data, @content_type, @created_at)
ON CONFLICT(hash, kind) DO NOTHING;

-- name: SyncStagedDelete :exec
DELETE FROM sync_object_staging WHERE hash = @hash AND kind = @kind;

-- A content root of a revision of one of the organisations.
-- name: SyncRootOfOrgs :one
SELECT count(*) FROM document_revisions r JOIN documents d ON d.id = r.document_id
WHERE r.hash = @hash AND d.organisation_id IN (SELECT value FROM json_each(@orgs_json));

-- A blob a row of the organisations names (their images and files, their
-- members' avatars).
-- name: SyncBlobOfOrgs :one
SELECT CAST((EXISTS (SELECT 1 FROM organisation_blobs ob WHERE ob.hash = @blob AND ob.organisation_id IN (SELECT value FROM json_each(@orgs_json)))
    OR EXISTS (SELECT 1 FROM organisations o WHERE (o.icon_hash = @blob OR o.banner_hash = @blob OR o.logo_hash = @blob)
        AND o.id IN (SELECT value FROM json_each(@orgs_json)))
    OR EXISTS (SELECT 1 FROM asset_logs a WHERE a.attachment_hash = @blob AND a.organisation_id IN (SELECT value FROM json_each(@orgs_json)))
    OR EXISTS (SELECT 1 FROM induction_revisions ir WHERE ir.file_hash = @blob AND ir.organisation_id IN (SELECT value FROM json_each(@orgs_json)))
    OR EXISTS (SELECT 1 FROM users u JOIN organisation_members m ON m.user_id = u.id
        WHERE u.avatar_hash = @blob AND m.organisation_id IN (SELECT value FROM json_each(@orgs_json)))
    -- attached to one of them once (an image replaced since: its entries still name it)
    OR EXISTS (SELECT 1 FROM json_each(@orgs_json) o JOIN sync_changes c
        ON c.tbl = 'organisation_blobs' AND c.pk = json_array(o.value, @blob))) AS INTEGER)
AS held;

-- Staged objects this node came to hold another way (a file a person here
-- added too): the staging table is small, read whole.
-- name: SyncStagedPrune :exec
DELETE FROM sync_object_staging
WHERE (kind = 'blob' AND EXISTS (SELECT 1 FROM blobs b WHERE b.hash = sync_object_staging.hash))
   OR (kind <> 'blob' AND EXISTS (SELECT 1 FROM document_chunks c WHERE c.hash = unhex(sync_object_staging.hash)));

-- Bytes of a file held in pieces from a peer.
-- name: SyncPiecesHeld :one
SELECT CAST(coalesce(sum(length(data)), 0) AS INTEGER) FROM sync_object_pieces WHERE peer = @peer AND hash = @hash;

-- name: SyncPieceAdd :exec
INSERT INTO sync_object_pieces(peer, hash, pos, data, created_at) VALUES (@peer, @hash, @pos, @data, @created_at);

-- name: SyncPieces :many
SELECT data FROM sync_object_pieces WHERE peer = @peer AND hash = @hash ORDER BY pos;

-- name: SyncPiecesDrop :exec
DELETE FROM sync_object_pieces WHERE peer = @peer AND hash = @hash;

-- Pieces of transfers abandoned long ago.
-- name: SyncPiecesPrune :execrows
DELETE FROM sync_object_pieces WHERE created_at < @before;
