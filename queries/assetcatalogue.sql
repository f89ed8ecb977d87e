-- Asset statuses, zones, fields and types (docs/assets.md).

-- name: AssetStatusCreate :one
INSERT INTO asset_statuses(id, organisation_id, name, description, active, created_at)
VALUES (@id, @organisation_id, @name, @description, @active, @created_at)
RETURNING *;

-- name: AssetStatusGet :one
SELECT * FROM asset_statuses WHERE id = @id;

-- name: AssetStatusListByIDs :many
SELECT s.* FROM json_each(@ids_json) j JOIN asset_statuses s ON s.id = j.value ORDER BY j.key;

-- name: AssetStatusUpdate :one
UPDATE asset_statuses SET name = @name, description = @description, active = @active
WHERE id = @id AND organisation_id = @organisation_id
RETURNING *;

-- name: AssetZoneCreate :one
INSERT INTO asset_zones(id, organisation_id, name, code, description, created_at)
VALUES (@id, @organisation_id, @name, @code, @description, @created_at)
RETURNING *;

-- name: AssetZoneGet :one
SELECT * FROM asset_zones WHERE id = @id;

-- name: AssetZoneListByIDs :many
SELECT z.* FROM json_each(@ids_json) j JOIN asset_zones z ON z.id = j.value ORDER BY j.key;

-- name: AssetZoneUpdate :one
UPDATE asset_zones SET name = @name, code = @code, description = @description
WHERE id = @id AND organisation_id = @organisation_id
RETURNING *;

-- name: AssetFieldCreate :one
INSERT INTO asset_fields(id, organisation_id, name, description, type, units, created_at)
VALUES (@id, @organisation_id, @name, @description, @type, @units, @created_at)
RETURNING *;

-- name: AssetFieldGet :one
SELECT * FROM asset_fields WHERE id = @id;

-- name: AssetFieldListByIDs :many
SELECT f.* FROM json_each(@ids_json) j JOIN asset_fields f ON f.id = j.value ORDER BY j.key;

-- name: AssetFieldUpdate :one
UPDATE asset_fields SET name = @name, description = @description, type = @type, units = @units
WHERE id = @id AND organisation_id = @organisation_id
RETURNING *;

-- name: AssetFieldEnumValueCreate :one
INSERT INTO asset_field_enum_values(id, organisation_id, asset_field_id, value, position)
VALUES (@id, @organisation_id, @asset_field_id, @value, @position)
RETURNING *;

-- name: AssetFieldEnumValueMove :exec
UPDATE asset_field_enum_values SET position = @position WHERE id = @id AND asset_field_id = @asset_field_id;

-- name: AssetFieldEnumValueDelete :exec
DELETE FROM asset_field_enum_values WHERE id = @id AND asset_field_id = @asset_field_id;

-- Enum values of the given fields (a JSON array of ids), in order.
-- name: AssetFieldEnumValuesFor :many
SELECT v.* FROM asset_field_enum_values v
WHERE v.asset_field_id IN (SELECT value FROM json_each(@field_ids_json))
ORDER BY v.asset_field_id, v.position;

-- name: AssetTypeCreate :one
INSERT INTO asset_types(id, organisation_id, fleet_id, prefix_id, ephemerality, name, description, created_at)
VALUES (@id, @organisation_id, @fleet_id, @prefix_id, @ephemerality, @name, @description, @created_at)
RETURNING *;

-- name: AssetTypeGet :one
SELECT * FROM asset_types WHERE id = @id;

-- name: AssetTypeListByIDs :many
SELECT t.* FROM json_each(@ids_json) j JOIN asset_types t ON t.id = j.value ORDER BY j.key;

-- name: AssetTypeUpdate :one
UPDATE asset_types SET name = @name, description = @description, fleet_id = @fleet_id, prefix_id = @prefix_id
WHERE id = @id AND organisation_id = @organisation_id
RETURNING *;

-- name: AssetTypeFieldAttach :exec
INSERT INTO asset_type_fields(type_id, field_id, organisation_id) VALUES (@type_id, @field_id, @organisation_id)
ON CONFLICT DO NOTHING;

-- name: AssetTypeFieldDetach :execrows
DELETE FROM asset_type_fields WHERE type_id = @type_id AND field_id = @field_id;

-- name: AssetTypeZoneAttach :exec
INSERT INTO asset_type_zones(type_id, zone_id, organisation_id) VALUES (@type_id, @zone_id, @organisation_id)
ON CONFLICT DO NOTHING;

-- name: AssetTypeZoneDetach :execrows
DELETE FROM asset_type_zones WHERE type_id = @type_id AND zone_id = @zone_id;

-- The fields attached to the given types (a JSON array of ids).
-- name: AssetTypeFieldsFor :many
SELECT tf.type_id, sqlc.embed(f) FROM asset_type_fields tf JOIN asset_fields f ON f.id = tf.field_id
WHERE tf.type_id IN (SELECT value FROM json_each(@type_ids_json))
ORDER BY tf.type_id, f.name, f.id;

-- The zones attached to the given types (a JSON array of ids).
-- name: AssetTypeZonesFor :many
SELECT tz.type_id, sqlc.embed(z) FROM asset_type_zones tz JOIN asset_zones z ON z.id = tz.zone_id
WHERE tz.type_id IN (SELECT value FROM json_each(@type_ids_json))
ORDER BY tz.type_id, z.name, z.id;

-- name: AssetFieldInUse :one
SELECT EXISTS (SELECT 1 FROM asset_field_values WHERE field_id = @field_id) AS in_use;

-- Whether an asset or group holds the given enum value (stored as its id
-- in JSON text).
-- name: AssetEnumValueInUse :one
SELECT EXISTS (SELECT 1 FROM asset_field_values WHERE field_id = @field_id AND value = @value) AS in_use;

-- Deleting a zone takes it off every type first.
-- name: AssetZoneDetachAll :exec
DELETE FROM asset_type_zones WHERE zone_id = @zone_id;

-- name: AssetZoneDelete :exec
DELETE FROM asset_zones WHERE id = @id AND organisation_id = @organisation_id;

-- Deleting a field (none holding a value) takes it off every type and drops
-- its enum values first.
-- name: AssetFieldDetachAll :exec
DELETE FROM asset_type_fields WHERE field_id = @field_id;

-- name: AssetFieldEnumValuesDeleteAll :exec
DELETE FROM asset_field_enum_values WHERE asset_field_id = @asset_field_id;

-- name: AssetFieldDelete :exec
DELETE FROM asset_fields WHERE id = @id AND organisation_id = @organisation_id;

-- Deleting a status or a type is refused while an asset or group has it
-- (docs/assets.md, "Deleting").
-- name: AssetStatusInUse :one
SELECT EXISTS (SELECT 1 FROM asset_groups WHERE status_id = @status_id) AS in_use;

-- name: AssetStatusDelete :exec
DELETE FROM asset_statuses WHERE id = @id AND organisation_id = @organisation_id;

-- name: AssetTypeInUse :one
SELECT EXISTS (SELECT 1 FROM asset_groups WHERE type_id = @type_id) AS in_use;

-- A type's field and zone attachments go with it.
-- name: AssetTypeFieldsDetachAll :exec
DELETE FROM asset_type_fields WHERE type_id = @type_id;

-- name: AssetTypeZonesDetachAll :exec
DELETE FROM asset_type_zones WHERE type_id = @type_id;

-- name: AssetTypeDelete :exec
DELETE FROM asset_types WHERE id = @id AND organisation_id = @organisation_id;
