-- name: SyncConflictCreate :exec
INSERT INTO sync_conflicts(id, organisation_id, kind, tbl, col, row_id, other_id, value, renamed_to, created_at, undo)
VALUES (@id, @organisation_id, @kind, @tbl, @col, @row_id, @other_id, @value, @renamed_to, @created_at, @undo);

-- name: SyncConflictListByIDs :many
SELECT c.* FROM json_each(@ids_json) j JOIN sync_conflicts c ON c.id = j.value
ORDER BY j.key;

-- name: SyncConflictGet :one
SELECT * FROM sync_conflicts WHERE id = @id AND organisation_id = @organisation_id;

-- name: SyncConflictSettle :one
UPDATE sync_conflicts SET settled_at = @settled_at, settled_by = @settled_by
WHERE id = @id AND organisation_id = @organisation_id AND settled_at IS NULL
RETURNING *;

-- name: SyncConflictUndone :one
UPDATE sync_conflicts SET settled_at = @settled_at, settled_by = @settled_by, undone = 1
WHERE id = @id AND organisation_id = @organisation_id AND settled_at IS NULL
RETURNING *;

-- name: SyncConflictPersonName :one
SELECT first_name, last_name, email FROM users WHERE id = @id;

-- name: SyncConflictRoleNames :many
SELECT r.id, r.name FROM json_each(@ids_json) j JOIN roles r ON r.id = j.value
WHERE r.organisation_id = @organisation_id
ORDER BY r.sort_order;

-- The conflicts an exchange recorded (ids after the mark taken before it),
-- by organisation: what its owner is told.
-- name: SyncConflictsRecordedSince :many
SELECT organisation_id, count(*) AS total, CAST(total(kind = 'access') AS INTEGER) AS access
FROM sync_conflicts WHERE id > @after AND settled_at IS NULL
GROUP BY +organisation_id ORDER BY +organisation_id; -- the ids after the mark, not the organisation index
