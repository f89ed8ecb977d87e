-- name: DocumentTypeInUse :one
-- Whether any document of the organisation, deleted or not, has the type.
SELECT EXISTS (SELECT 1 FROM documents WHERE type_id = @type_id) AS used;

-- name: DocumentTypeDelete :exec
DELETE FROM document_types WHERE id = @id AND organisation_id = @organisation_id;
