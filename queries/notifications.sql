-- name: NotificationCreate :exec
INSERT INTO notifications(id, user_id, organisation_id, kind, title, body, link, created_at)
VALUES (@id, @user_id, @organisation_id, @kind, @title, @body, @link, @created_at);

-- The recipient's delivery preferences, and the address their mail goes
-- to: the one routed for the organisation (organisation_members'
-- notification_email_id) when there is one, else the sign-in address.
-- name: NotificationRecipient :one
SELECT u.id, u.email_notifications, u.sms_notifications, u.phone_number, u.phone_number_confirmed,
       CAST(coalesce((SELECT e.email FROM organisation_members m JOIN user_emails e ON e.id = m.notification_email_id AND e.user_id = m.user_id
                      WHERE m.organisation_id = sqlc.narg(organisation_id) AND m.user_id = u.id), u.email) AS TEXT) AS email
FROM users u WHERE u.id = @id AND u.deleted_at IS NULL;

-- available: the recipient may still see what the row names (a live
-- organisation they are an approved member of, or a row needing none).
-- name: NotificationListByIDs :many
SELECT n.*, CAST(n.organisation_id IS NULL OR EXISTS (
           SELECT 1 FROM organisation_members m JOIN organisations o ON o.id = m.organisation_id AND o.deleted_at IS NULL
           WHERE m.organisation_id = n.organisation_id AND m.user_id = n.user_id AND NOT m.pending) AS BOOLEAN) AS available
FROM notifications n WHERE n.id IN (SELECT value FROM json_each(@ids_json)) ORDER BY n.id DESC;

-- name: NotificationSetRead :one
UPDATE notifications SET read_at = @read_at WHERE id = @id AND user_id = @user_id RETURNING id;

-- name: NotificationReadAll :execrows
UPDATE notifications SET read_at = @read_at WHERE user_id = @user_id AND read_at IS NULL;

-- name: NotificationUnreadCount :one
SELECT count(*) FROM notifications WHERE user_id = @user_id AND read_at IS NULL;

-- Kept 90 days: the background purge deletes what is older.
-- name: NotificationPurge :execrows
DELETE FROM notifications WHERE created_at < @before;

-- "For you": invites addressed to one of the caller's verified addresses,
-- still open, to organisations they are not in yet.
-- name: ForYouInvites :many
SELECT i.id, i.code, i.expires_at, i.organisation_id, o.name AS organisation_name
FROM invites i JOIN organisations o ON o.id = i.organisation_id AND o.deleted_at IS NULL
WHERE i.email <> '' AND i.email IN (SELECT e.email FROM user_emails e WHERE e.user_id = @user_id AND e.is_verified)
  AND i.status = 'pending' AND NOT i.revoked AND (i.expires_at IS NULL OR i.expires_at > @now)
  AND NOT EXISTS (SELECT 1 FROM organisation_members m WHERE m.organisation_id = i.organisation_id AND m.user_id = @user_id)
ORDER BY i.id DESC LIMIT 50;

-- "For you": the caller's toolbox sessions not declined that have not
-- finished, soonest first, in organisations they are an approved member of.
-- name: ForYouSessions :many
SELECT sc.id, sc.toolbox_id, t.title, o.name AS organisation_name, sc.scheduled_start_at, sc.scheduled_finish_at, si.status
FROM schedule_invitees si
JOIN schedules sc ON sc.id = si.schedule_id AND sc.toolbox_id IS NOT NULL
JOIN toolboxes t ON t.id = sc.toolbox_id AND t.archived_at IS NULL
JOIN organisations o ON o.id = sc.organisation_id AND o.deleted_at IS NULL
JOIN organisation_members m ON m.organisation_id = sc.organisation_id AND m.user_id = si.user_id AND NOT m.pending
WHERE si.user_id = @user_id AND si.status <> 'declined' AND sc.scheduled_finish_at >= @now AND sc.actual_finish_at IS NULL
ORDER BY sc.scheduled_start_at, sc.id LIMIT 100;

-- "For you": open merge requests on documents the caller created, in
-- organisations they are an approved member of.
-- name: ForYouReviews :many
SELECT mr.id, mr.number, mr.title, mr.document_id, d.formatted_number, d.title AS document_title,
       o.name AS organisation_name, mr.created_at
FROM documents d
JOIN document_merge_requests mr ON mr.document_id = d.id AND mr.status = 'open'
JOIN organisations o ON o.id = d.organisation_id AND o.deleted_at IS NULL
JOIN organisation_members m ON m.organisation_id = d.organisation_id AND m.user_id = d.created_by AND NOT m.pending
WHERE d.created_by = @user_id AND d.deleted_at IS NULL
ORDER BY mr.id DESC LIMIT 100;
