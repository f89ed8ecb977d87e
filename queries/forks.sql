-- Forks (issue 13): copying revision rows between a document and its forks.

-- Every revision row of a document, for copying its history.
-- name: RevisionsOfDocument :many
SELECT * FROM document_revisions WHERE document_id = @document_id ORDER BY id;

-- A copy of a revision row into another document: same content hash,
-- generation, author, time and message; parents named in the new document.
-- name: RevisionCopy :one
INSERT INTO document_revisions(id, document_id, hash, parent_id, parents, generation, message, created_at, created_by, origin_revision_id)
VALUES (@id, @document_id, @hash, @parent_id, @parents, @generation, @message, @created_at, @created_by, @origin_revision_id)
RETURNING *;

