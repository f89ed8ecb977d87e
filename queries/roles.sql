-- name: RoleGet :one
SELECT * FROM roles WHERE id = @id;

-- Roles by rank, @everyone (the highest sort_order) last.
-- name: RoleList :many
SELECT * FROM roles WHERE organisation_id = @organisation_id ORDER BY sort_order, id;

-- Roles other than @everyone: their orders are 0..n-1.
-- name: RoleCount :one
SELECT count(*) FROM roles WHERE organisation_id = @organisation_id AND id <> organisation_id;

-- name: RoleUpdate :one
UPDATE roles SET name = @name, description = @description
WHERE id = @id AND organisation_id = @organisation_id
RETURNING *;

-- name: RoleDelete :exec
DELETE FROM roles WHERE id = @id AND organisation_id = @organisation_id AND id <> organisation_id;

-- name: RoleShift :exec
UPDATE roles SET sort_order = sort_order + @delta
WHERE organisation_id = @organisation_id AND id <> organisation_id
  AND sort_order >= @lo AND sort_order <= @hi;

-- name: RoleSetOrder :exec
UPDATE roles SET sort_order = @sort_order WHERE id = @id AND organisation_id = @organisation_id;

-- Members holding the role; pending members are no members yet, as in
-- the @everyone list.
-- name: RoleMembers :many
SELECT users.* FROM member_roles mr
JOIN users ON users.id = mr.user_id
JOIN organisation_members m ON m.organisation_id = mr.organisation_id AND m.user_id = mr.user_id AND NOT m.pending
WHERE mr.organisation_id = @organisation_id AND mr.role_id = @role_id
ORDER BY users.id;

-- Every member of the organisation: the holders of @everyone.
-- name: RoleEveryoneMembers :many
SELECT users.* FROM organisation_members m
JOIN users ON users.id = m.user_id
WHERE m.organisation_id = @organisation_id AND NOT m.pending
ORDER BY users.id;

-- name: MemberRoleAdd :exec
INSERT INTO member_roles(organisation_id, user_id, role_id) VALUES (@organisation_id, @user_id, @role_id)
ON CONFLICT DO NOTHING;

-- name: MemberRoleRemove :exec
DELETE FROM member_roles WHERE organisation_id = @organisation_id AND user_id = @user_id AND role_id = @role_id;

-- name: MemberRoleIDs :many
SELECT mr.role_id FROM member_roles mr JOIN roles r ON r.id = mr.role_id
WHERE mr.organisation_id = @organisation_id AND mr.user_id = @user_id
ORDER BY r.sort_order;

-- Every role assignment in the organisation, each member's roles highest
-- first: one read for a whole member list.
-- name: MemberRoleIDsForOrganisation :many
SELECT mr.user_id, mr.role_id FROM member_roles mr JOIN roles r ON r.id = mr.role_id
WHERE mr.organisation_id = @organisation_id
ORDER BY r.sort_order;

-- name: MemberExists :one
SELECT count(*) FROM organisation_members WHERE organisation_id = @organisation_id AND user_id = @user_id;

-- name: MemberRolesDeleteForRole :exec
DELETE FROM member_roles WHERE organisation_id = @organisation_id AND role_id = @role_id;
