-- name: WorkItemTypeCreate :one
INSERT INTO work_item_types(id, organisation_id, name, description, colour, prefix_id, enabled, created_at)
VALUES (@id, @organisation_id, @name, @description, @colour, sqlc.narg(prefix_id), @enabled, @created_at)
RETURNING *;

-- name: WorkItemTypeGet :one
SELECT * FROM work_item_types WHERE id = @id;

-- name: WorkItemTypeListByIDs :many
SELECT t.* FROM json_each(@ids_json) j JOIN work_item_types t ON t.id = j.value
ORDER BY j.key;

-- name: WorkItemTypeUpdate :one
UPDATE work_item_types SET name = @name, description = @description, colour = @colour,
    prefix_id = sqlc.narg(prefix_id), enabled = @enabled
WHERE id = @id AND organisation_id = @organisation_id
RETURNING *;
