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

-- The newest revision carrying this PDF.
-- name: InductionRevisionByFileHash :one
SELECT * FROM induction_revisions WHERE induction_id = @induction_id AND file_hash = @file_hash
ORDER BY id DESC LIMIT 1;

-- name: BlobGet :one
SELECT * FROM blobs WHERE hash = @hash;

-- name: UserInductionGet :one
SELECT * FROM user_inductions WHERE induction_id = @induction_id AND user_id = @user_id;

-- name: UserInductionCreate :one
INSERT INTO user_inductions(id, organisation_id, induction_id, user_id, due_at, created_at, created_by)
VALUES (@id, @organisation_id, @induction_id, @user_id, @due_at, @created_at, @created_by)
RETURNING *;

-- name: UserInductionDelete :execrows
DELETE FROM user_inductions WHERE induction_id = @induction_id AND user_id = @user_id;

-- name: UserInductionList :many
SELECT * FROM user_inductions WHERE induction_id = @induction_id ORDER BY created_at, id;

-- The caller's assignments in organisations where they are a member.
-- name: UserInductionsForUser :many
SELECT ui.* FROM user_inductions ui
JOIN organisation_members m ON m.organisation_id = ui.organisation_id AND m.user_id = ui.user_id AND NOT m.pending
JOIN organisations o ON o.id = ui.organisation_id AND o.deleted_at IS NULL
WHERE ui.user_id = @user_id
ORDER BY ui.created_at, ui.id;

-- Leaving or being removed from the organisation ends the assignments.
-- name: UserInductionsDeleteForUser :exec
DELETE FROM user_inductions WHERE organisation_id = @organisation_id AND user_id = @user_id;

-- name: InductionRecordCreate :one
INSERT INTO induction_records(id, organisation_id, induction_id, revision_id, induction_hash, user_id, email,
    first_name, last_name, position, company, inducted_at, expires_at, answers)
VALUES (@id, @organisation_id, @induction_id, @revision_id, @induction_hash, @user_id, @email,
    @first_name, @last_name, @position, @company, @inducted_at, @expires_at, @answers)
RETURNING *;

-- name: InductionRecordGet :one
SELECT * FROM induction_records WHERE id = @id;

-- name: InductionRecordsForRevision :many
SELECT * FROM induction_records WHERE induction_id = @induction_id AND induction_hash = @induction_hash
ORDER BY inducted_at, id;

-- The user's newest record of an induction.
-- name: InductionRecordLatest :one
SELECT * FROM induction_records WHERE induction_id = @induction_id AND user_id = @user_id
ORDER BY inducted_at DESC, id DESC LIMIT 1;

-- Assignments with what a reminder needs: the user's address, the
-- induction's current revision, and the user's newest record, if any.
-- name: InductionReminderCandidates :many
SELECT ui.id, ui.user_id, ui.organisation_id, ui.induction_id, ui.due_at, u.email, r.name, r.hash, o.name AS org_name, o.logo_hash AS org_logo_hash,
       CAST(coalesce((SELECT rec.induction_hash FROM induction_records rec
                      WHERE rec.induction_id = ui.induction_id AND rec.user_id = ui.user_id
                      ORDER BY rec.inducted_at DESC, rec.id DESC LIMIT 1), '') AS TEXT) AS record_hash,
       (SELECT rec.expires_at FROM induction_records rec
        WHERE rec.induction_id = ui.induction_id AND rec.user_id = ui.user_id
        ORDER BY rec.inducted_at DESC, rec.id DESC LIMIT 1) AS record_expires_at
FROM user_inductions ui
JOIN users u ON u.id = ui.user_id AND u.deleted_at IS NULL
JOIN inductions i ON i.id = ui.induction_id
JOIN induction_revisions r ON r.id = i.revision_id
JOIN organisations o ON o.id = ui.organisation_id AND o.deleted_at IS NULL
ORDER BY ui.id;

-- Records a reminder; 0 rows when it was already sent that day.
-- name: InductionReminderMark :execrows
INSERT INTO induction_reminders(user_induction_id, kind, day) VALUES (@user_induction_id, @kind, @day)
ON CONFLICT DO NOTHING;
