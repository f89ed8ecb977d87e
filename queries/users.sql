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
