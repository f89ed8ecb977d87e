-- name: ScheduleCreate :one
INSERT INTO schedules(id, organisation_id, work_item_id, toolbox_id, scheduled_start_at, scheduled_finish_at,
    actual_start_at, actual_finish_at, created_at, created_by, updated_at, updated_by)
VALUES (@id, @organisation_id, @work_item_id, @toolbox_id, @scheduled_start_at, @scheduled_finish_at,
    @actual_start_at, @actual_finish_at, @created_at, @created_by, @created_at, @created_by)
RETURNING *;

-- name: ScheduleGet :one
SELECT * FROM schedules WHERE id = @id;

-- name: ScheduleUpdate :one
UPDATE schedules SET scheduled_start_at = @scheduled_start_at, scheduled_finish_at = @scheduled_finish_at,
    actual_start_at = @actual_start_at, actual_finish_at = @actual_finish_at, updated_at = @updated_at, updated_by = @updated_by
WHERE id = @id AND organisation_id = @organisation_id
RETURNING *;

-- name: ScheduleSetToolbox :exec
UPDATE schedules SET toolbox_id = @toolbox_id WHERE id = @id AND organisation_id = @organisation_id;

-- name: ScheduleDelete :exec
DELETE FROM schedules WHERE id = @id AND organisation_id = @organisation_id;

-- name: ScheduleListByWorkItem :many
SELECT * FROM schedules WHERE work_item_id = @work_item_id ORDER BY scheduled_start_at, id;

-- name: ScheduleListByIDs :many
SELECT s.* FROM json_each(@ids_json) j JOIN schedules s ON s.id = j.value ORDER BY j.key;

-- name: ScheduleInviteeList :many
SELECT * FROM schedule_invitees WHERE schedule_id = @schedule_id ORDER BY updated_at, user_id;

-- name: ScheduleInviteeListForSchedules :many
SELECT i.* FROM schedule_invitees i WHERE i.schedule_id IN (SELECT value FROM json_each(@ids_json))
ORDER BY i.schedule_id, i.updated_at, i.user_id;

-- name: ScheduleInviteeGet :one
SELECT * FROM schedule_invitees WHERE schedule_id = @schedule_id AND user_id = @user_id;

-- name: ScheduleInviteePut :one
-- Inviting again keeps the invitee's current status.
INSERT INTO schedule_invitees(schedule_id, user_id, status, updated_at) VALUES (@schedule_id, @user_id, 'invited', @updated_at)
ON CONFLICT(schedule_id, user_id) DO UPDATE SET schedule_id = excluded.schedule_id
RETURNING *;

-- name: ScheduleInviteeSetStatus :one
UPDATE schedule_invitees SET status = @status, latitude = @latitude, longitude = @longitude, updated_at = @updated_at
WHERE schedule_id = @schedule_id AND user_id = @user_id
RETURNING *;

-- name: ScheduleInviteeDelete :execrows
DELETE FROM schedule_invitees WHERE schedule_id = @schedule_id AND user_id = @user_id;

-- name: ScheduleInvitedToToolbox :one
-- Whether the user is invited (in any status but declined) to a schedule of the toolbox.
SELECT EXISTS (SELECT 1 FROM schedules s JOIN schedule_invitees i ON i.schedule_id = s.id
    WHERE s.toolbox_id = @toolbox_id AND i.user_id = @user_id AND i.status <> 'declined');

-- name: ScheduleListByToolboxes :many
SELECT * FROM schedules WHERE toolbox_id IN (SELECT value FROM json_each(@ids_json)) ORDER BY toolbox_id, scheduled_start_at, id;
