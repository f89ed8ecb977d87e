-- Assets, asset groups, memberships, field values, subscriptions and logs
-- (docs/assets.md). An asset is its single group (ephemerality 0).

-- name: AssetGroupCreate :one
INSERT INTO asset_groups(id, organisation_id, type_id, ephemerality, fleet_id, status_id, location_id, sub_location_id,
    subscription_id, prefix_id, number, formatted_number, name, normalised_name, description, active,
    created_at, created_by, updated_at, updated_by)
VALUES (@id, @organisation_id, @type_id, @ephemerality, @fleet_id, @status_id, @location_id, @sub_location_id,
    @subscription_id, @prefix_id, @number, @formatted_number, @name, @normalised_name, @description, @active,
    @created_at, @created_by, @created_at, @created_by)
RETURNING *;

-- name: AssetGroupGet :one
SELECT * FROM asset_groups WHERE id = @id;

-- name: AssetGroupListByIDs :many
SELECT g.* FROM json_each(@ids_json) j JOIN asset_groups g ON g.id = j.value ORDER BY j.key;

-- name: AssetGroupUpdate :one
UPDATE asset_groups SET type_id = @type_id, fleet_id = @fleet_id, status_id = @status_id, location_id = @location_id,
    sub_location_id = @sub_location_id, subscription_id = @subscription_id, name = @name,
    normalised_name = @normalised_name, description = @description, active = @active,
    updated_at = @updated_at, updated_by = @updated_by
WHERE id = @id AND organisation_id = @organisation_id
RETURNING *;

-- Import: the asset numbered formatted_number in an organisation.
-- name: AssetByNumber :one
SELECT * FROM asset_groups
WHERE organisation_id = @organisation_id AND formatted_number = @formatted_number AND ephemerality = 0
LIMIT 1;

-- name: AssetNumberTaken :one
SELECT EXISTS (SELECT 1 FROM asset_groups WHERE prefix_id = @prefix_id AND number = @number) AS taken;

-- An explicit number above the prefix's counter moves the counter up, so
-- later drawn numbers never repeat it.
-- name: PrefixRaise :exec
UPDATE prefixes SET last_number = max(last_number, @number) WHERE id = @id AND organisation_id = @organisation_id;

-- name: PrefixGetInOrg :one
SELECT * FROM prefixes WHERE id = @id AND organisation_id = @organisation_id;

-- name: SubLocationAssetCount :one
SELECT count(*) FROM asset_groups WHERE sub_location_id = @sub_location_id AND ephemerality = 0;

-- name: SubLocationGet :one
SELECT * FROM sub_locations WHERE id = @id;

-- name: LocationsByIDs :many
SELECT l.* FROM json_each(@ids_json) j JOIN locations l ON l.id = j.value ORDER BY j.key;

-- name: SubLocationsOfLocations :many
SELECT * FROM sub_locations WHERE location_id IN (SELECT value FROM json_each(@ids_json)) ORDER BY location_id, id;

-- Members of the given groups in position order.
-- name: AssetGroupMembersOf :many
SELECT group_id, asset_id, position FROM asset_group_members
WHERE group_id IN (SELECT value FROM json_each(@ids_json))
ORDER BY group_id, position;

-- The groups (temporary or permanent) the given assets belong to.
-- name: AssetMembershipsOf :many
SELECT m.asset_id, m.position, sqlc.embed(g) FROM asset_group_members m JOIN asset_groups g ON g.id = m.group_id
WHERE m.asset_id IN (SELECT value FROM json_each(@ids_json))
ORDER BY m.asset_id, g.id;

-- name: AssetGroupMemberCount :one
SELECT count(*) FROM asset_group_members WHERE group_id = @group_id;

-- name: AssetGroupMemberAdd :exec
INSERT INTO asset_group_members(group_id, asset_id, organisation_id, position)
VALUES (@group_id, @asset_id, @organisation_id, (SELECT count(*) FROM asset_group_members m WHERE m.group_id = @group_id));

-- name: AssetGroupMemberGet :one
SELECT * FROM asset_group_members WHERE group_id = @group_id AND asset_id = @asset_id;

-- name: AssetGroupMemberRemove :exec
DELETE FROM asset_group_members WHERE group_id = @group_id AND asset_id = @asset_id;

-- Closes the gap a removed member left at position @position.
-- name: AssetGroupMembersCloseGap :exec
UPDATE asset_group_members SET position = position - 1 WHERE group_id = @group_id AND position > @position;

-- Moves one member from @from to @to, shifting those between.
-- name: AssetGroupMemberMove :exec
UPDATE asset_group_members SET position = CASE
        WHEN asset_id = @asset_id THEN @to
        WHEN @from < @to AND position > @from AND position <= @to THEN position - 1
        WHEN @from > @to AND position >= @to AND position < @from THEN position + 1
        ELSE position END
WHERE group_id = @group_id;

-- The active temporary or permanent groups other than @group_id holding
-- any asset of @group_id (activating a group must not put an asset in two).
-- name: AssetGroupClashes :one
SELECT count(*) FROM asset_group_members m JOIN asset_group_members o ON o.asset_id = m.asset_id AND o.group_id <> m.group_id
JOIN asset_groups g ON g.id = o.group_id AND g.active
WHERE m.group_id = @group_id;

-- The group's assets that are not of @fleet_id (a group with a fleet holds
-- only that fleet's assets).
-- name: AssetGroupMembersOutsideFleet :one
SELECT count(*) FROM asset_group_members m JOIN asset_groups a ON a.id = m.asset_id
WHERE m.group_id = @group_id AND (a.fleet_id IS NULL OR a.fleet_id <> @fleet_id);

-- name: AssetFieldValuesOf :many
SELECT * FROM asset_field_values WHERE group_id IN (SELECT value FROM json_each(@ids_json)) ORDER BY group_id, field_id;

-- name: AssetFieldValuePut :exec
INSERT INTO asset_field_values(group_id, field_id, organisation_id, value, units) VALUES (@group_id, @field_id, @organisation_id, @value, @units)
ON CONFLICT(group_id, field_id) DO UPDATE SET value = excluded.value, units = excluded.units;

-- name: AssetFieldValueDelete :exec
DELETE FROM asset_field_values WHERE group_id = @group_id AND field_id = @field_id;

-- Values of fields no longer attached to the group's type go with a type change.
-- name: AssetFieldValuesPrune :exec
DELETE FROM asset_field_values
WHERE group_id = @group_id AND field_id NOT IN (SELECT field_id FROM asset_type_fields WHERE type_id = @type_id);

-- name: AssetUserIsMember :one
SELECT EXISTS (SELECT 1 FROM organisation_members WHERE organisation_id = @organisation_id AND user_id = @user_id AND NOT pending) AS member;

-- name: AssetSubscriptionCreate :one
INSERT INTO asset_subscriptions(id, organisation_id, name, capacity, created_at)
VALUES (@id, @organisation_id, @name, @capacity, @created_at)
RETURNING *;

-- name: AssetSubscriptionGet :one
SELECT * FROM asset_subscriptions WHERE id = @id;

-- name: AssetSubscriptionListByIDs :many
SELECT s.* FROM json_each(@ids_json) j JOIN asset_subscriptions s ON s.id = j.value ORDER BY j.key;

-- name: AssetSubscriptionUpdate :one
UPDATE asset_subscriptions SET name = @name, capacity = @capacity WHERE id = @id AND organisation_id = @organisation_id
RETURNING *;

-- Allocates one asset when the pool has room; no row means it is full.
-- name: AssetSubscriptionAllocate :one
UPDATE asset_subscriptions SET allocated = allocated + 1
WHERE id = @id AND organisation_id = @organisation_id AND allocated < capacity
RETURNING *;

-- name: AssetSubscriptionRelease :exec
UPDATE asset_subscriptions SET allocated = allocated - 1 WHERE id = @id AND allocated > 0;

-- name: AssetLogCreate :one
INSERT INTO asset_logs(id, organisation_id, asset_group_id, type, log, log_hash, embed, duration, latitude, longitude,
    logged_at, created_at, created_by, updated_at, updated_by)
VALUES (@id, @organisation_id, @asset_group_id, @type, @log, @log_hash, @embed, @duration, @latitude, @longitude,
    @logged_at, @created_at, @created_by, @created_at, @created_by)
RETURNING *;

-- name: AssetLogGet :one
SELECT * FROM asset_logs WHERE id = @id;

-- name: AssetLogListByIDs :many
SELECT l.* FROM json_each(@ids_json) j JOIN asset_logs l ON l.id = j.value ORDER BY j.key;

-- name: AssetLogUpdate :one
UPDATE asset_logs SET log = @log, log_hash = @log_hash, embed = @embed, duration = @duration, latitude = @latitude,
    longitude = @longitude, logged_at = @logged_at, updated_at = @updated_at, updated_by = @updated_by
WHERE id = @id AND organisation_id = @organisation_id
RETURNING *;

-- name: AssetLogAttach :one
UPDATE asset_logs SET attachment_id = @attachment_id, attachment_hash = @attachment_hash, attachment_name = @attachment_name,
    updated_at = @updated_at, updated_by = @updated_by
WHERE id = @id AND organisation_id = @organisation_id
RETURNING *;

-- name: AssetLogDelete :exec
DELETE FROM asset_logs WHERE id = @id AND organisation_id = @organisation_id;

-- Export: an organisation's assets in number order.
-- name: AssetsOfOrganisation :many
SELECT * FROM asset_groups WHERE organisation_id = @organisation_id AND ephemerality = 0 ORDER BY prefix_id, number, id;

-- name: AssetTypesOfOrganisation :many
SELECT * FROM asset_types WHERE organisation_id = @organisation_id ORDER BY id;

-- name: AssetStatusesOfOrganisation :many
SELECT * FROM asset_statuses WHERE organisation_id = @organisation_id ORDER BY id;

-- name: FleetsOfOrganisation :many
SELECT * FROM fleets WHERE organisation_id = @organisation_id ORDER BY id;

-- Deleting a temporary or permanent group: what refers to it from other
-- areas keeps it (documents name it by asset_group_id).
-- name: AssetGroupNamedByDocument :one
SELECT EXISTS (SELECT 1 FROM documents WHERE asset_group_id = @group_id) AS named;

-- The attachments of a group's log entries, released when the group goes.
-- name: AssetLogAttachmentsOfGroup :many
SELECT attachment_hash FROM asset_logs WHERE asset_group_id = @group_id AND attachment_hash IS NOT NULL;

-- name: AssetLogsDeleteOfGroup :exec
DELETE FROM asset_logs WHERE asset_group_id = @group_id;

-- name: AssetGroupMembersDeleteAll :exec
DELETE FROM asset_group_members WHERE group_id = @group_id;

-- name: AssetFieldValuesDeleteOfGroup :exec
DELETE FROM asset_field_values WHERE group_id = @group_id;

-- name: AssetGroupDelete :exec
DELETE FROM asset_groups WHERE id = @id AND organisation_id = @organisation_id AND ephemerality <> 0;
