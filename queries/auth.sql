-- name: MetaGet :one
SELECT value FROM meta WHERE key = @key;

-- name: MetaPut :exec
INSERT INTO meta(key, value) VALUES (@key, @value)
ON CONFLICT(key) DO UPDATE SET value = excluded.value;

-- name: SigningKeyList :many
SELECT * FROM signing_keys ORDER BY created_at;

-- name: SigningKeyCreate :exec
INSERT INTO signing_keys(kid, private_key_pem, created_at) VALUES (@kid, @private_key_pem, @created_at);

-- name: RefreshTokenCreate :exec
INSERT INTO refresh_tokens(token_hash, user_id, family_id, expires_at, created_at)
VALUES (@token_hash, @user_id, @family_id, @expires_at, @created_at);

-- name: RefreshTokenGet :one
SELECT * FROM refresh_tokens WHERE token_hash = @token_hash;

-- RefreshTokenUse marks a live token used; no row means it was used before.
-- name: RefreshTokenUse :execrows
UPDATE refresh_tokens SET used_at = @used_at WHERE token_hash = @token_hash AND used_at IS NULL;

-- name: RefreshTokenRevokeFamily :exec
DELETE FROM refresh_tokens WHERE family_id = @family_id;

-- name: RefreshTokenDeleteExpired :exec
DELETE FROM refresh_tokens WHERE user_id = @user_id AND expires_at <= @now;

-- name: RefreshTokenDeleteForUser :exec
DELETE FROM refresh_tokens WHERE user_id = @user_id;

-- name: IdentityGet :one
SELECT * FROM user_identities WHERE issuer = @issuer AND subject = @subject;

-- name: IdentityCreate :exec
INSERT INTO user_identities(issuer, subject, user_id, created_at)
VALUES (@issuer, @subject, @user_id, @created_at);

-- name: OutboxCreate :exec
INSERT INTO outbox(id, kind, recipient, subject, body, html, link, created_at)
VALUES (@id, @kind, @recipient, @subject, @body, @html, @link, @created_at);

-- name: OutboxList :many
SELECT * FROM outbox ORDER BY id DESC LIMIT @limit;
