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

-- name: WorkItemCreate :one
INSERT INTO work_items(id, organisation_id, type_id, prefix_id, number, formatted_number, title, description,
    status, project_id, milestone_id, package_id, document_id, asset_group_id, fleet_id, location_id,
    sub_location_id, start_at, finish_at, created_at, created_by, updated_at, updated_by, closed_at, closed_by)
VALUES (@id, @organisation_id, @type_id, sqlc.narg(prefix_id), @number, @formatted_number, @title, @description,
    @status, sqlc.narg(project_id), sqlc.narg(milestone_id), sqlc.narg(package_id), sqlc.narg(document_id),
    sqlc.narg(asset_group_id), sqlc.narg(fleet_id), sqlc.narg(location_id), sqlc.narg(sub_location_id),
    sqlc.narg(start_at), sqlc.narg(finish_at), @created_at, @created_by, @updated_at, @updated_by,
    sqlc.narg(closed_at), sqlc.narg(closed_by))
RETURNING *;

-- name: WorkItemGet :one
SELECT * FROM work_items WHERE id = @id;

-- name: WorkItemListByIDs :many
SELECT w.* FROM json_each(@ids_json) j JOIN work_items w ON w.id = j.value
ORDER BY j.key;

-- name: WorkItemUpdate :one
UPDATE work_items SET type_id = @type_id, title = @title, description = @description, status = @status,
    project_id = sqlc.narg(project_id), milestone_id = sqlc.narg(milestone_id), package_id = sqlc.narg(package_id),
    document_id = sqlc.narg(document_id), asset_group_id = sqlc.narg(asset_group_id), fleet_id = sqlc.narg(fleet_id),
    location_id = sqlc.narg(location_id), sub_location_id = sqlc.narg(sub_location_id),
    start_at = sqlc.narg(start_at), finish_at = sqlc.narg(finish_at), updated_at = @updated_at,
    updated_by = @updated_by, closed_at = sqlc.narg(closed_at), closed_by = sqlc.narg(closed_by)
WHERE id = @id AND organisation_id = @organisation_id
RETURNING *;

-- name: WorkItemAssigneeAdd :exec
INSERT INTO work_item_assignees(work_item_id, user_id) VALUES (@work_item_id, @user_id)
ON CONFLICT DO NOTHING;

-- name: WorkItemAssigneesClear :exec
DELETE FROM work_item_assignees WHERE work_item_id = @work_item_id;

-- Assignees of many work items, for rendering a page.
-- name: WorkItemAssigneesOf :many
SELECT work_item_id, user_id FROM work_item_assignees
WHERE work_item_id IN (SELECT value FROM json_each(@ids_json))
ORDER BY work_item_id, user_id;

-- The ids among user_ids that are members (not pending) of the organisation.
-- name: WorkItemMembersAmong :many
SELECT m.user_id FROM organisation_members m
WHERE m.organisation_id = @organisation_id AND NOT m.pending
  AND m.user_id IN (SELECT value FROM json_each(@ids_json));

-- name: WorkItemRefSubLocation :one
SELECT organisation_id, location_id FROM sub_locations WHERE id = @id;

-- work_item_types_count of a project or milestone: only non-empty entries.
-- name: WorkItemTypeCountsOf :many
SELECT type_id, open_count, closed_count FROM work_item_type_counts
WHERE scope_id = @scope_id AND (open_count <> 0 OR closed_count <> 0)
ORDER BY type_id;

-- work_item_types_count of many projects or milestones.
-- name: WorkItemTypeCountsOfMany :many
SELECT scope_id, type_id, open_count, closed_count FROM work_item_type_counts
WHERE scope_id IN (SELECT value FROM json_each(@ids_json)) AND (open_count <> 0 OR closed_count <> 0)
ORDER BY scope_id, type_id;

-- name: WorkItemSubscribe :exec
INSERT INTO work_item_subscriptions(work_item_id, user_id, created_at) VALUES (@work_item_id, @user_id, @created_at)
ON CONFLICT DO NOTHING;

-- name: WorkItemUnsubscribe :exec
DELETE FROM work_item_subscriptions WHERE work_item_id = @work_item_id AND user_id = @user_id;

-- name: WorkItemSubscriptionsOf :many
SELECT * FROM work_item_subscriptions WHERE work_item_id = @work_item_id ORDER BY created_at, user_id;

-- Followers to tell of a status change: live accounts still members (not
-- pending) of the work item's organisation, the one who changed it left out;
-- at the address they chose for that organisation, else their account's.
-- name: WorkItemFollowersToNotify :many
SELECT u.id, CAST(coalesce((SELECT e.email FROM user_emails e WHERE e.id = m.notification_email_id AND e.user_id = u.id),
                           u.email) AS TEXT) AS email
FROM work_item_subscriptions s
JOIN users u ON u.id = s.user_id AND u.deleted_at IS NULL
JOIN organisation_members m ON m.user_id = s.user_id AND m.organisation_id = @organisation_id AND NOT m.pending
WHERE s.work_item_id = @work_item_id AND s.user_id <> @actor_id
ORDER BY u.id;

-- name: WorkItemRefAssetGroup :one
SELECT organisation_id, fleet_id FROM asset_groups WHERE id = @id;

-- name: WorkItemRefFleet :one
SELECT organisation_id FROM fleets WHERE id = @id;

-- Asset groups' work item counts are kept here, not by a trigger: the
-- asset_groups table comes from a later migration (0025) whose ALTER TABLE
-- RENAME re-checks every trigger, so a trigger of 0021-0024 cannot name it.
-- name: AssetGroupWorkItemCountAdd :exec
UPDATE asset_groups SET open_work_item_count = open_work_item_count + @open_delta,
    closed_work_item_count = closed_work_item_count + @closed_delta
WHERE id = @id AND organisation_id = @organisation_id;

-- Schedules of many work items, for rendering a page.
-- name: WorkItemSchedulesOf :many
SELECT * FROM schedules WHERE work_item_id IN (SELECT value FROM json_each(@ids_json))
ORDER BY scheduled_start_at, id;

-- name: WorkItemRefDocument :one
SELECT organisation_id, deleted_at FROM documents WHERE id = @id;
