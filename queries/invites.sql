-- name: InviteCreate :one
INSERT INTO invites(id, organisation_id, code, email, expires_at, domain, auto_add, approval, created_by, created_at)
VALUES (@id, @organisation_id, @code, @email, @expires_at, @domain, @auto_add, @approval, @created_by, @created_at)
RETURNING *;

-- name: InviteGetByCode :one
SELECT * FROM invites WHERE code = @code;

-- name: InviteGetByID :one
SELECT * FROM invites WHERE id = @id;

-- name: InviteList :many
SELECT * FROM invites WHERE organisation_id = @organisation_id ORDER BY id;

-- name: InviteUpdate :one
UPDATE invites SET expires_at = @expires_at, domain = @domain, auto_add = @auto_add, approval = @approval
WHERE id = @id AND organisation_id = @organisation_id
RETURNING *;

-- name: InviteRevoke :one
UPDATE invites SET revoked = 1, status = 'revoked'
WHERE id = @id AND organisation_id = @organisation_id
RETURNING *;

-- name: InviteAccept :exec
UPDATE invites SET status = 'accepted' WHERE id = @id AND organisation_id = @organisation_id;
