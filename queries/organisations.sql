-- name: OrganisationCreate :one
INSERT INTO organisations(id, name, description, location, code, owned_by, created_at)
VALUES (@id, @name, @description, @location, @code, @owned_by, @created_at)
RETURNING *;

-- name: OrganisationGet :one
SELECT * FROM organisations WHERE id = @id AND deleted_at IS NULL;

-- name: MemberCreate :exec
INSERT INTO organisation_members(organisation_id, user_id, pending, joined_at)
VALUES (@organisation_id, @user_id, @pending, @joined_at);

-- name: RoleCreate :one
INSERT INTO roles(id, organisation_id, name, description, sort_order, created_at)
VALUES (@id, @organisation_id, @name, @description, @sort_order, @created_at)
RETURNING *;

-- name: GrantPut :exec
INSERT INTO permission_grants(organisation_id, scope_type, scope_id, target_type, target_id, allow_mask, deny_mask)
VALUES (@organisation_id, @scope_type, @scope_id, @target_type, @target_id, @allow_mask, @deny_mask)
ON CONFLICT(scope_id, target_id) DO UPDATE SET allow_mask = excluded.allow_mask, deny_mask = excluded.deny_mask;

-- name: GrantDelete :exec
DELETE FROM permission_grants WHERE scope_id = @scope_id AND target_id = @target_id;

-- name: GrantListForScope :many
SELECT * FROM permission_grants WHERE scope_id = @scope_id ORDER BY target_type, target_id;

-- name: GrantGet :one
SELECT * FROM permission_grants WHERE scope_id = @scope_id AND target_id = @target_id;

-- What a grant target id names inside an organisation: one of its roles
-- (with rank) or one of its members.
-- name: GrantTargetLookup :one
SELECT CAST('role' AS TEXT) AS target_type, sort_order AS role_rank FROM roles
WHERE roles.id = @target_id AND roles.organisation_id = @organisation_id
UNION ALL
SELECT CAST('user' AS TEXT), CAST(9223372036854775807 AS INTEGER) FROM organisation_members m
WHERE m.user_id = @target_id AND m.organisation_id = @organisation_id
LIMIT 1;
