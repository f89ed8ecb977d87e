-- name: ToolboxCreate :one
INSERT INTO toolboxes(id, organisation_id, workgroup_id, location_id, title, is_template, totp_secret,
    created_at, created_by, updated_at, updated_by)
VALUES (@id, @organisation_id, @workgroup_id, @location_id, @title, @is_template, @totp_secret,
    @created_at, @created_by, @created_at, @created_by)
RETURNING *;

-- name: ToolboxGet :one
SELECT * FROM toolboxes WHERE id = @id;

-- name: ToolboxUpdate :one
UPDATE toolboxes SET title = @title, is_template = @is_template, location_id = @location_id,
    workgroup_id = @workgroup_id, updated_at = @updated_at, updated_by = @updated_by
WHERE id = @id AND organisation_id = @organisation_id
RETURNING *;

-- name: ToolboxTouch :exec
UPDATE toolboxes SET updated_at = @updated_at, updated_by = @updated_by
WHERE id = @id AND organisation_id = @organisation_id;

-- name: ToolboxConduct :one
UPDATE toolboxes SET conducted_at = @conducted_at, conducted_by = @conducted_by, latitude = @latitude,
    longitude = @longitude, within_geofence = @within_geofence, updated_at = @conducted_at, updated_by = @conducted_by
WHERE id = @id AND organisation_id = @organisation_id AND conducted_at IS NULL AND archived_at IS NULL
RETURNING *;

-- name: ToolboxArchive :one
UPDATE toolboxes SET archived_at = @archived_at, archived_by = @archived_by, updated_at = @updated_at, updated_by = @updated_by
WHERE id = @id AND organisation_id = @organisation_id
RETURNING *;

-- name: ToolboxListByIDs :many
SELECT t.* FROM json_each(@ids_json) j JOIN toolboxes t ON t.id = j.value ORDER BY j.key;

-- name: ToolboxSectionCreate :one
INSERT INTO toolbox_sections(id, organisation_id, toolbox_id, title, position, created_at, created_by, updated_at, updated_by)
VALUES (@id, @organisation_id, @toolbox_id, @title,
    (SELECT COUNT(*) + 1 FROM toolbox_sections WHERE toolbox_id = @toolbox_id),
    @created_at, @created_by, @created_at, @created_by)
RETURNING *;

-- name: ToolboxSectionGet :one
SELECT * FROM toolbox_sections WHERE id = @id AND toolbox_id = @toolbox_id;

-- name: ToolboxSectionList :many
SELECT * FROM toolbox_sections WHERE toolbox_id = @toolbox_id ORDER BY position;

-- name: ToolboxSectionCount :one
SELECT COUNT(*) FROM toolbox_sections WHERE toolbox_id = @toolbox_id;

-- name: ToolboxSectionUpdate :one
UPDATE toolbox_sections SET title = @title, position = @position, updated_at = @updated_at, updated_by = @updated_by
WHERE id = @id AND toolbox_id = @toolbox_id
RETURNING *;

-- name: ToolboxSectionShift :exec
-- Moves the sections in positions [lo, hi] by delta (+1 or -1), making room
-- for or closing the gap of a moved or removed section.
UPDATE toolbox_sections SET position = position + @delta
WHERE toolbox_id = @toolbox_id AND position >= @lo AND position <= @hi;

-- name: ToolboxSectionDelete :exec
DELETE FROM toolbox_sections WHERE id = @id AND toolbox_id = @toolbox_id;

-- name: ToolboxTopicCreate :one
INSERT INTO toolbox_topics(id, organisation_id, toolbox_id, section_id, body, comments, review_response, position,
    created_at, created_by, updated_at, updated_by)
VALUES (@id, @organisation_id, @toolbox_id, @section_id, @body, @comments, @review_response,
    (SELECT COUNT(*) + 1 FROM toolbox_topics WHERE toolbox_id = @toolbox_id AND section_id IS @section_id),
    @created_at, @created_by, @created_at, @created_by)
RETURNING *;

-- name: ToolboxTopicGet :one
SELECT * FROM toolbox_topics WHERE id = @id AND toolbox_id = @toolbox_id;

-- name: ToolboxTopicList :many
SELECT * FROM toolbox_topics WHERE toolbox_id = @toolbox_id ORDER BY section_id IS NOT NULL, section_id, position;

-- name: ToolboxTopicCount :one
SELECT COUNT(*) FROM toolbox_topics WHERE toolbox_id = @toolbox_id AND section_id IS @section_id;

-- name: ToolboxTopicUpdate :one
UPDATE toolbox_topics SET section_id = @section_id, body = @body, comments = @comments,
    review_response = @review_response, position = @position, reviewed_at = @reviewed_at, reviewed_by = @reviewed_by,
    updated_at = @updated_at, updated_by = @updated_by
WHERE id = @id AND toolbox_id = @toolbox_id
RETURNING *;

-- name: ToolboxTopicShift :exec
UPDATE toolbox_topics SET position = position + @delta
WHERE toolbox_id = @toolbox_id AND section_id IS @section_id AND position >= @lo AND position <= @hi;

-- name: ToolboxTopicDelete :exec
DELETE FROM toolbox_topics WHERE id = @id AND toolbox_id = @toolbox_id;

-- name: ToolboxUserCreate :one
INSERT INTO toolbox_users(id, organisation_id, toolbox_id, schedule_id, user_id, first_name, last_name, email,
    phone_number, company, position, signature, signed_at, signed_method, signed_by)
VALUES (@id, @organisation_id, @toolbox_id, @schedule_id, @user_id, @first_name, @last_name, @email,
    @phone_number, @company, @position, @signature, @signed_at, @signed_method, @signed_by)
RETURNING *;

-- name: ToolboxUserByUser :one
SELECT * FROM toolbox_users WHERE toolbox_id = @toolbox_id AND user_id = @user_id AND duplicate_of IS NULL;

-- name: SigningCodeUse :execrows
-- Records a TOTP code as used; 0 rows means it was used before.
INSERT INTO signing_code_uses(key, used_at) VALUES (@key, @used_at) ON CONFLICT(key) DO NOTHING;

-- name: SigningCodeSweep :exec
DELETE FROM signing_code_uses WHERE used_at < @before;

-- name: ToolboxUserUnlinkSchedule :exec
UPDATE toolbox_users SET schedule_id = NULL WHERE schedule_id = @schedule_id;

-- name: ToolboxesClearWorkgroup :exec
UPDATE toolboxes SET workgroup_id = NULL WHERE workgroup_id = @workgroup_id;

-- The parts of several toolboxes at once (lists: one read per part, not
-- per toolbox), each in the order its single-toolbox query gives.
-- name: ToolboxSectionListFor :many
SELECT * FROM toolbox_sections WHERE toolbox_id IN (SELECT value FROM json_each(@ids_json)) ORDER BY toolbox_id, position;

-- name: ToolboxTopicListFor :many
SELECT * FROM toolbox_topics WHERE toolbox_id IN (SELECT value FROM json_each(@ids_json))
ORDER BY toolbox_id, section_id IS NOT NULL, section_id, position;

-- name: ToolboxUserListFor :many
SELECT * FROM toolbox_users WHERE toolbox_id IN (SELECT value FROM json_each(@ids_json)) ORDER BY toolbox_id, id;

-- A member of the organisation reachable at the address (the sign-in one or
-- a verified one) or at the confirmed phone number: a "visitor" signing with
-- these details is that member (docs/toolboxes.md). Walks the organisation's
-- members by its key, a user each by theirs.
-- name: ToolboxMemberByContact :one
SELECT count(*) FROM organisation_members m JOIN users u ON u.id = m.user_id
WHERE m.organisation_id = @organisation_id AND NOT m.pending AND u.deleted_at IS NULL
  AND ((CAST(@email AS TEXT) <> '' AND (u.email = CAST(@email AS TEXT) OR EXISTS (SELECT 1 FROM user_emails e
        WHERE e.user_id = u.id AND e.email = CAST(@email AS TEXT) AND e.is_verified)))
    OR (CAST(@phone AS TEXT) <> '' AND u.phone_number_confirmed AND u.phone_number = CAST(@phone AS TEXT)));
