-- name: UserCreate :one
INSERT INTO users(id, email, password_hash, first_name, last_name, badges, created_at, updated_at)
VALUES (@id, @email, @password_hash, @first_name, @last_name, @badges, @created_at, @created_at)
RETURNING *;

-- name: UserGet :one
SELECT * FROM users WHERE id = @id AND deleted_at IS NULL;

-- name: UserGetByEmail :one
SELECT * FROM users WHERE email = @email AND deleted_at IS NULL;

-- name: UserEmailCreate :one
INSERT INTO user_emails(id, user_id, email, is_primary, is_verified, created_at)
VALUES (@id, @user_id, @email, @is_primary, @is_verified, @created_at)
RETURNING *;

-- name: UserEmailVerifiedElsewhere :one
SELECT count(*) FROM user_emails e JOIN users u ON u.id = e.user_id
WHERE e.email = @email AND e.user_id <> @user_id AND e.is_verified AND u.deleted_at IS NULL;

-- name: UserEmailPrimaryVerified :one
SELECT count(*) FROM user_emails WHERE user_id = @user_id AND is_primary AND is_verified;

-- name: UserUpdateProfile :one
UPDATE users SET first_name = @first_name, last_name = @last_name, company = @company,
    position = @position, phone_number = @phone_number, phone_number_confirmed = @phone_number_confirmed,
    timezone_code = @timezone_code, language = @language, initials = @initials, signature = @signature,
    avatar_hash = @avatar_hash, email_notifications = @email_notifications,
    sms_notifications = @sms_notifications, email_newsletter = @email_newsletter,
    allow_connections_from = @allow_connections_from, allow_shares_from = @allow_shares_from,
    updated_at = @updated_at
WHERE id = @id AND deleted_at IS NULL
RETURNING *;

-- name: UserPhoneConfirm :exec
UPDATE users SET phone_number_confirmed = 1, updated_at = @updated_at
WHERE id = @id AND phone_number = @phone_number AND deleted_at IS NULL;

-- name: UserEmailAddressSet :exec
UPDATE users SET email = @email, updated_at = @updated_at WHERE id = @id AND deleted_at IS NULL;

-- Soft delete: the row stays for the records that name the user; personal
-- contact data goes, and the sign-in address is freed by the partial index.
-- name: UserSoftDelete :exec
UPDATE users SET deleted_at = @deleted_at, updated_at = @deleted_at, phone_number = '',
    phone_number_confirmed = 0, signature = '', avatar_hash = NULL, password_hash = ''
WHERE id = @id AND deleted_at IS NULL;

-- name: UserIdentityDeleteForUser :exec
DELETE FROM user_identities WHERE user_id = @user_id;

-- A live account holding the address verified (sign-in or secondary).
-- name: UserGetByVerifiedEmail :one
SELECT u.* FROM users u
WHERE u.deleted_at IS NULL
  AND u.id IN (SELECT e.user_id FROM user_emails e WHERE e.email = @email AND e.is_verified)
ORDER BY u.id LIMIT 1;

-- name: UserEmailList :many
SELECT * FROM user_emails WHERE user_id = @user_id ORDER BY id;

-- name: UserEmailGet :one
SELECT * FROM user_emails WHERE id = @id AND user_id = @user_id;

-- name: UserEmailGetByAddress :one
SELECT * FROM user_emails WHERE user_id = @user_id AND email = @email;

-- name: UserEmailCount :one
SELECT count(*) FROM user_emails WHERE user_id = @user_id;

-- name: UserEmailSetToken :exec
UPDATE user_emails SET token_hash = @token_hash, token_expires_at = @token_expires_at
WHERE id = @id AND user_id = @user_id;

-- name: UserEmailMarkVerified :one
UPDATE user_emails SET is_verified = 1, token_hash = NULL, token_expires_at = NULL
WHERE id = @id AND user_id = @user_id
RETURNING *;

-- name: UserEmailSetPrimary :exec
UPDATE user_emails SET is_primary = (id = @id) WHERE user_id = @user_id;

-- name: UserEmailDelete :exec
DELETE FROM user_emails WHERE id = @id AND user_id = @user_id;

-- name: UserEmailDeleteForUser :exec
DELETE FROM user_emails WHERE user_id = @user_id;

-- How many of the user's memberships route notifications to the address.
-- name: UserEmailRoutedCount :one
SELECT count(*) FROM organisation_members WHERE user_id = @user_id AND notification_email_id = @email_id;

-- name: UserOrganisationDomainsApproved :many
SELECT domain FROM organisation_domains
WHERE organisation_id = @organisation_id AND is_approved ORDER BY domain;

-- The caller's membership in a live organisation.
-- name: UserMembershipGet :one
SELECT m.* FROM organisation_members m
JOIN organisations o ON o.id = m.organisation_id AND o.deleted_at IS NULL
WHERE m.organisation_id = @organisation_id AND m.user_id = @user_id;

-- name: UserMembershipSetNotificationEmail :exec
UPDATE organisation_members SET notification_email_id = @notification_email_id
WHERE organisation_id = @organisation_id AND user_id = @user_id;

-- name: UserMembershipClearNotificationEmails :exec
UPDATE organisation_members SET notification_email_id = NULL WHERE user_id = @user_id;

-- name: UserOwnedOrganisationCount :one
SELECT count(*) FROM organisations WHERE owned_by = @user_id AND deleted_at IS NULL;

-- Memberships in live organisations, pending ones included.
-- name: UserMembershipCount :one
SELECT count(*) FROM organisation_members m
JOIN organisations o ON o.id = m.organisation_id AND o.deleted_at IS NULL
WHERE m.user_id = @user_id;

-- Live organisations where both users are members, not pending. With
-- user_id = viewer_id: the user's own organisations.
-- name: UserSharedOrganisations :many
SELECT o.* FROM organisations o
JOIN organisation_members a ON a.organisation_id = o.id AND a.user_id = @user_id AND NOT a.pending
JOIN organisation_members b ON b.organisation_id = o.id AND b.user_id = @viewer_id AND NOT b.pending
WHERE o.deleted_at IS NULL
ORDER BY o.id;

-- The roles the user holds in organisations shared with the viewer, with
-- their explicit organisation-level grants.
-- name: UserSharedRoles :many
SELECT r.id, r.organisation_id, r.name, r.description, r.sort_order,
       CAST(coalesce(g.allow_mask, 0) AS INTEGER) AS allow_mask,
       CAST(coalesce(g.deny_mask, 0) AS INTEGER) AS deny_mask
FROM member_roles mr
JOIN roles r ON r.id = mr.role_id
JOIN organisations o ON o.id = mr.organisation_id AND o.deleted_at IS NULL
JOIN organisation_members a ON a.organisation_id = o.id AND a.user_id = mr.user_id AND NOT a.pending
JOIN organisation_members b ON b.organisation_id = o.id AND b.user_id = @viewer_id AND NOT b.pending
LEFT JOIN permission_grants g ON g.scope_id = r.organisation_id AND g.target_id = r.id
WHERE mr.user_id = @user_id
ORDER BY r.organisation_id, r.sort_order, r.id;

-- name: UserTokenPut :exec
INSERT INTO user_tokens(user_id, purpose, token_hash, subject, attempts, expires_at, created_at)
VALUES (@user_id, @purpose, @token_hash, @subject, 0, @expires_at, @created_at)
ON CONFLICT(user_id, purpose) DO UPDATE SET token_hash = excluded.token_hash,
    subject = excluded.subject, attempts = 0, expires_at = excluded.expires_at,
    created_at = excluded.created_at;

-- name: UserTokenGet :one
SELECT * FROM user_tokens WHERE user_id = @user_id AND purpose = @purpose;

-- name: UserTokenAttempt :exec
UPDATE user_tokens SET attempts = attempts + 1 WHERE user_id = @user_id AND purpose = @purpose;

-- name: UserTokenDelete :exec
DELETE FROM user_tokens WHERE user_id = @user_id AND purpose = @purpose;

-- name: UserTokenDeleteForUser :exec
DELETE FROM user_tokens WHERE user_id = @user_id;

-- name: UserTotpPut :exec
INSERT INTO user_totp_secrets(user_id, secret, created_at, expires_at)
VALUES (@user_id, @secret, @created_at, @expires_at)
ON CONFLICT(user_id) DO UPDATE SET secret = excluded.secret, created_at = excluded.created_at,
    expires_at = excluded.expires_at;

-- name: UserTotpGet :one
SELECT * FROM user_totp_secrets WHERE user_id = @user_id;

-- name: UserTotpDelete :exec
DELETE FROM user_totp_secrets WHERE user_id = @user_id;

-- name: UserTotpDeleteExpired :exec
DELETE FROM user_totp_secrets WHERE expires_at <= @now;

-- name: UserAvatarBlobPut :exec
INSERT INTO blobs(hash, content_type, size, data, created_at)
VALUES (@hash, @content_type, @size, @data, @created_at)
ON CONFLICT(hash) DO NOTHING;

-- name: UserAvatarBlobGet :one
SELECT b.* FROM blobs b
WHERE b.hash = @hash
  AND EXISTS (SELECT 1 FROM users u WHERE u.avatar_hash = b.hash AND u.deleted_at IS NULL);

-- Unverified claims on an address by accounts other than the one that has
-- just proved it owns it (issue 20: the verified owner wins).
-- name: UserEmailUnverifiedClaims :many
SELECT e.* FROM user_emails e JOIN users u ON u.id = e.user_id
WHERE e.email = @email AND e.user_id <> @user_id AND NOT e.is_verified AND u.deleted_at IS NULL;

-- name: UserEmailUnroute :exec
UPDATE organisation_members SET notification_email_id = NULL WHERE notification_email_id = @email_id;
