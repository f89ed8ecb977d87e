-- Item fields: which documents bind them (0064), for refusing a type change
-- while a column of a branch head is bound to the field.

-- name: DocumentFieldBindingAdd :exec
INSERT OR IGNORE INTO document_field_bindings(field_id, document_id) VALUES (@field_id, @document_id);

-- A fork (or a merge from a fork) carries the columns of the document it
-- copies revisions from: their bindings too.
-- name: DocumentFieldBindingsCopy :exec
INSERT OR IGNORE INTO document_field_bindings(field_id, document_id)
SELECT b.field_id, CAST(@to_document_id AS INTEGER) FROM document_field_bindings b WHERE b.document_id = @from_document_id;

-- The distinct head hashes of the live branches of every document (deleted
-- ones too: they can be restored) that ever bound the field.
-- name: DocumentFieldBoundHeads :many
SELECT DISTINCT r.hash FROM document_field_bindings b
JOIN document_branches br ON br.document_id = b.document_id AND br.deleted_at IS NULL
JOIN document_revisions r ON r.id = br.revision_id
WHERE b.field_id = @field_id;

