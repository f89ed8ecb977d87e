-- Everything the permission engine needs about one caller in one
-- organisation: the organisation row, membership, ownership and highest
-- role rank.
-- name: AccessMembership :one
SELECT sqlc.embed(o), o.owned_by = @user_id AS is_owner,
       m.user_id IS NOT NULL AS is_member,
       coalesce(m.pending, 0) AS pending,
       CAST(coalesce((SELECT min(r.sort_order) FROM member_roles mr JOIN roles r ON r.id = mr.role_id
                 WHERE mr.organisation_id = o.id AND mr.user_id = @user_id), -1) AS INTEGER) AS top_rank
FROM organisations o
LEFT JOIN organisation_members m ON m.organisation_id = o.id AND m.user_id = @user_id
WHERE o.id = @organisation_id AND o.deleted_at IS NULL;

-- The grants that can apply to a caller in the given scopes (the
-- organisation and any layers below it, as a JSON array of ids): the
-- caller's own, those of the caller's roles (with their rank) and
-- @everyone's.
-- name: AccessGrants :many
SELECT g.scope_type, g.target_type, g.target_id, g.allow_mask, g.deny_mask,
       coalesce(r.sort_order, 0) AS role_rank
FROM permission_grants g
LEFT JOIN roles r ON r.id = g.target_id AND g.target_type = 'role'
WHERE g.scope_id IN (SELECT value FROM json_each(@scope_ids_json))
  -- One IN list per primary-key column, so each grant is a key lookup.
  AND g.target_id IN (SELECT CAST(@user_id AS INTEGER) AS target UNION ALL SELECT CAST(@organisation_id AS INTEGER)
                      UNION ALL SELECT mr.role_id FROM member_roles mr
                      WHERE mr.organisation_id = @organisation_id AND mr.user_id = @user_id)
  -- The unary plus keeps the planner off permission_grants_target: on the
  -- organisation column alone it read every grant of the organisation
  -- (tens of milliseconds in one with 50,000 project grants, on the writer).
  AND +g.organisation_id = @organisation_id;

-- AccessMembership for every live organisation the caller belongs to.
-- name: AccessMembershipsForUser :many
SELECT sqlc.embed(o),
       o.owned_by = @user_id AS is_owner,
       m.pending,
       CAST(coalesce((SELECT min(r.sort_order) FROM member_roles mr JOIN roles r ON r.id = mr.role_id
                 WHERE mr.organisation_id = o.id AND mr.user_id = @user_id), -1) AS INTEGER) AS top_rank
FROM organisation_members m
JOIN organisations o ON o.id = m.organisation_id
WHERE m.user_id = @user_id AND o.deleted_at IS NULL;

-- The organisation-scope grants that apply to the caller in every
-- organisation where it is a member (not pending): its own, its roles'
-- (with their rank) and @everyone's.
-- name: AccessGrantsForUser :many
SELECT g.organisation_id, g.target_type, g.allow_mask, g.deny_mask,
       coalesce(r.sort_order, 0) AS role_rank
FROM organisation_members m
JOIN permission_grants g ON g.scope_id = m.organisation_id AND g.organisation_id = m.organisation_id
LEFT JOIN roles r ON r.id = g.target_id AND g.target_type = 'role'
WHERE m.user_id = @user_id AND NOT m.pending
  AND (g.target_id IN (@user_id, m.organisation_id)
       OR g.target_id IN (SELECT mr.role_id FROM member_roles mr
                          WHERE mr.organisation_id = m.organisation_id AND mr.user_id = @user_id));

-- The caller's roles in one organisation, for the cached access path.
-- name: AccessMemberRoles :many
SELECT role_id FROM member_roles WHERE organisation_id = @organisation_id AND user_id = @user_id;

-- Every grant on one scope below the organisation (a project or package),
-- whoever it is for, with role ranks: cached per scope and filtered per
-- caller, so one read serves every caller.
-- name: AccessScopeGrants :many
SELECT g.scope_type, g.target_type, g.target_id, g.allow_mask, g.deny_mask,
       coalesce(r.sort_order, 0) AS role_rank
FROM permission_grants g
LEFT JOIN roles r ON r.id = g.target_id AND g.target_type = 'role'
WHERE g.scope_id = @scope_id AND g.organisation_id = @organisation_id;

-- The tag of the state an organisation's access is resolved from (0 before
-- any change since the table was made).
-- name: AccessVersion :one
SELECT CAST(coalesce((SELECT tag FROM access_versions WHERE organisation_id = @organisation_id), 0) AS INTEGER) AS tag;
