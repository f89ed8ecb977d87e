-- Objects sync moves by hash (docs/sync.md, "Documents and files").

-- name: SyncChunkHeld :one
SELECT count(*) FROM document_chunks WHERE hash = @hash;

-- name: SyncBlobHeld :one
SELECT count(*) FROM blobs WHERE hash = @hash;

-- name: SyncStagedGet :one
SELECT * FROM sync_object_staging WHERE hash = @hash AND kind = @kind;

-- name: SyncStagedPut :exec
INSERT INTO sync_object_staging(hash, kind, data, content_type, created_at)
VALUES (@hash, @kind, @data, @content_type, @created_at)
ON CONFLICT(hash, kind) DO NOTHING;

-- name: SyncStagedDelete :exec
DELETE FROM sync_object_staging WHERE hash = @hash AND kind = @kind;
