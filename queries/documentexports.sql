-- Exports and presence of documents (server/documentexports.go, server/documentpresence.go).

-- Every value of the fields, retired ones included: an exported cell may
-- still name a retired value.
-- name: DocumentFieldValuesAll :many
SELECT * FROM document_field_values WHERE field_id IN (SELECT value FROM json_each(@ids_json))
ORDER BY field_id, position;

-- The newest revision id of a document (0: none), where a stream starts.
-- name: RevisionLastID :one
SELECT CAST(coalesce(max(id), 0) AS INTEGER) FROM document_revisions WHERE document_id = @document_id;

-- Revisions made after a given one, oldest first (the presence stream).
-- name: RevisionsAfter :many
SELECT * FROM document_revisions WHERE document_id = @document_id AND id > @after_id ORDER BY id LIMIT @max_rows;

-- Document chunk bytes an organisation's write stored first.
-- name: DocumentStorageAdd :exec
INSERT INTO organisation_document_storage(organisation_id, bytes) VALUES (@organisation_id, @bytes)
ON CONFLICT(organisation_id) DO UPDATE SET bytes = bytes + excluded.bytes;
