-- name: InductionCreate :one
INSERT INTO inductions(id, organisation_id, revision_id, created_at, created_by, updated_at, updated_by)
VALUES (@id, @organisation_id, @revision_id, @created_at, @created_by, @created_at, @created_by)
RETURNING *;

-- name: InductionGet :one
SELECT * FROM inductions WHERE id = @id;

-- name: InductionListByIDs :many
SELECT i.* FROM json_each(@ids_json) j JOIN inductions i ON i.id = j.value
ORDER BY j.key;

-- name: InductionSetRevision :exec
UPDATE inductions SET revision_id = @revision_id, updated_at = @updated_at, updated_by = @updated_by
WHERE id = @id AND organisation_id = @organisation_id;

-- name: InductionRevisionCreate :one
INSERT INTO induction_revisions(id, organisation_id, induction_id, hash, name, revision, description, valid_for,
    content_type, length, file_name, file_hash, questions, updated_at, updated_by)
VALUES (@id, @organisation_id, @induction_id, @hash, @name, @revision, @description, @valid_for,
    @content_type, @length, @file_name, @file_hash, @questions, @updated_at, @updated_by)
RETURNING *;

-- name: InductionRevisionGet :one
SELECT * FROM induction_revisions WHERE id = @id;

-- The newest revision with this content hash.
-- name: InductionRevisionByHash :one
SELECT * FROM induction_revisions WHERE induction_id = @induction_id AND hash = @hash
ORDER BY id DESC LIMIT 1;

-- name: InductionRevisionList :many
SELECT * FROM induction_revisions WHERE induction_id = @induction_id ORDER BY id;

-- The current revisions of the given inductions, for a list page.
-- name: InductionCurrentRevisions :many
SELECT r.* FROM json_each(@ids_json) j JOIN inductions i ON i.id = j.value
JOIN induction_revisions r ON r.id = i.revision_id;
