-- Password reset links (issue 36).

-- name: PasswordResetPut :exec
INSERT INTO password_resets(user_id, token_hash, expires_at, created_at)
VALUES (@user_id, @token_hash, @expires_at, @created_at)
ON CONFLICT(user_id) DO UPDATE SET token_hash = excluded.token_hash,
    expires_at = excluded.expires_at, created_at = excluded.created_at;

-- name: PasswordResetGet :one
SELECT * FROM password_resets WHERE token_hash = @token_hash;

-- name: PasswordResetDelete :exec
DELETE FROM password_resets WHERE user_id = @user_id;

-- name: UserPasswordSet :exec
UPDATE users SET password_hash = @password_hash, updated_at = @updated_at
WHERE id = @id AND deleted_at IS NULL;
