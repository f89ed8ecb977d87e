-- Exports and presence of documents (server/documentexports.go, server/presence.go).

-- Every value of the fields, retired ones included: an exported cell may
-- still name a retired value.
-- name: DocumentFieldValuesAll :many
SELECT * FROM document_field_values WHERE field_id IN (SELECT value FROM json_each(@ids_json))
ORDER BY field_id, position;
