-- Merge requests of documents (issue 13).

-- name: MergeRequestCreate :one
INSERT INTO document_merge_requests(id, organisation_id, number, document_id, from_document_id, from_branch_id,
    to_branch_id, title, description, created_at, created_by, updated_at)
VALUES (@id, @organisation_id, @number, @document_id, @from_document_id, @from_branch_id,
    @to_branch_id, @title, @description, @created_at, @created_by, @created_at)
RETURNING *;

-- name: MergeRequestByNumber :one
SELECT * FROM document_merge_requests WHERE document_id = @document_id AND number = @number;

-- name: MergeRequestListByIDs :many
SELECT m.* FROM json_each(@ids_json) j JOIN document_merge_requests m ON m.id = j.value ORDER BY j.key;

-- An open request between the same two branches.
-- name: MergeRequestOpenBetween :one
SELECT * FROM document_merge_requests
WHERE from_branch_id = @from_branch_id AND to_branch_id = @to_branch_id AND status = 'open' LIMIT 1;

-- Moves an open request to merged or closed (only from open, so two
-- requests racing to finish it cannot both win).
-- name: MergeRequestFinish :one
UPDATE document_merge_requests SET status = @status, revision_id = @revision_id, closed_at = @closed_at,
    closed_by = @closed_by, updated_at = @closed_at
WHERE id = @id AND status = 'open' RETURNING *;
