-- Fleets (docs/assets.md).

-- name: FleetCreate :one
INSERT INTO fleets(id, organisation_id, name, description, prefix_id, created_at, created_by)
VALUES (@id, @organisation_id, @name, @description, @prefix_id, @created_at, @created_by)
RETURNING *;

-- name: FleetGet :one
SELECT * FROM fleets WHERE id = @id;

-- name: FleetListByIDs :many
SELECT f.* FROM json_each(@ids_json) j JOIN fleets f ON f.id = j.value ORDER BY j.key;

-- name: FleetUpdate :one
UPDATE fleets SET name = @name, description = @description, prefix_id = @prefix_id
WHERE id = @id AND organisation_id = @organisation_id
RETURNING *;

-- What still refers to a fleet: a fleet is deleted only when nothing does.
-- name: FleetInUse :one
SELECT CAST(EXISTS (SELECT 1 FROM asset_types t WHERE t.fleet_id = @fleet_id)
    OR EXISTS (SELECT 1 FROM asset_groups g WHERE g.fleet_id = @fleet_id)
    OR EXISTS (SELECT 1 FROM work_items w WHERE w.fleet_id = @fleet_id) AS BOOLEAN) AS in_use;

-- A fleet's grants go with it.
-- name: FleetDelete :exec
DELETE FROM fleets WHERE id = @id AND organisation_id = @organisation_id;

-- name: FleetGrantsDelete :exec
DELETE FROM permission_grants WHERE scope_id = @scope_id AND organisation_id = @organisation_id AND scope_type = 'fleet';
