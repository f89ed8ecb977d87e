-- name: WorkgroupCreate :one
INSERT INTO workgroups(id, organisation_id, name, description, created_at, created_by)
VALUES (@id, @organisation_id, @name, @description, @created_at, @created_by)
RETURNING *;

-- name: WorkgroupGet :one
SELECT * FROM workgroups WHERE id = @id;

-- name: WorkgroupListByIDs :many
SELECT w.* FROM json_each(@ids_json) j JOIN workgroups w ON w.id = j.value
ORDER BY j.key;

-- name: WorkgroupUpdate :one
UPDATE workgroups SET name = @name, description = @description
WHERE id = @id AND organisation_id = @organisation_id
RETURNING *;

-- name: WorkgroupDelete :exec
DELETE FROM workgroups WHERE id = @id AND organisation_id = @organisation_id;

-- Team places, teams and grants on or for them, before the workgroup goes.
-- name: WorkgroupTeamMembersDelete :exec
DELETE FROM team_members WHERE team_id IN (SELECT id FROM teams WHERE workgroup_id = @workgroup_id);

-- name: WorkgroupGrantsDelete :exec
DELETE FROM permission_grants
WHERE permission_grants.organisation_id = @organisation_id
  AND (permission_grants.scope_id = @workgroup_id OR permission_grants.target_id = @workgroup_id
       OR permission_grants.scope_id IN (SELECT t.id FROM teams t WHERE t.workgroup_id = @workgroup_id)
       OR permission_grants.target_id IN (SELECT t.id FROM teams t WHERE t.workgroup_id = @workgroup_id));

-- name: WorkgroupTeamsDelete :exec
DELETE FROM teams WHERE workgroup_id = @workgroup_id;

-- name: TeamCreate :one
INSERT INTO teams(id, organisation_id, workgroup_id, name, description, color, created_at)
VALUES (@id, @organisation_id, @workgroup_id, @name, @description, @color, @created_at)
RETURNING *;

-- name: TeamGet :one
SELECT * FROM teams WHERE id = @id;

-- name: TeamList :many
SELECT * FROM teams WHERE workgroup_id = @workgroup_id ORDER BY id;

-- name: TeamUpdate :one
UPDATE teams SET name = @name, color = @color
WHERE id = @id AND organisation_id = @organisation_id
RETURNING *;

-- name: TeamGrantsDelete :exec
DELETE FROM permission_grants
WHERE organisation_id = @organisation_id AND (scope_id = @team_id OR target_id = @team_id);

-- name: TeamMembersDelete :exec
DELETE FROM team_members WHERE team_id = @team_id;

-- name: TeamDelete :exec
DELETE FROM teams WHERE id = @id AND organisation_id = @organisation_id;

-- name: TeamMemberGet :one
SELECT * FROM team_members WHERE team_id = @team_id AND user_id = @user_id;

-- name: TeamMemberAdd :exec
INSERT INTO team_members(team_id, user_id, organisation_id, is_leader, joined_at)
VALUES (@team_id, @user_id, @organisation_id, 0, @joined_at);

-- name: TeamMemberSetLeader :exec
UPDATE team_members SET is_leader = @is_leader WHERE team_id = @team_id AND user_id = @user_id;

-- name: TeamMemberRemove :exec
DELETE FROM team_members WHERE team_id = @team_id AND user_id = @user_id;

-- The team's members with their user rows, leaders first, then by joining.
-- name: TeamMemberList :many
SELECT sqlc.embed(users), tm.is_leader, tm.joined_at
FROM team_members tm JOIN users ON users.id = tm.user_id
WHERE tm.team_id = @team_id
ORDER BY tm.is_leader DESC, tm.joined_at, tm.user_id;

-- Leaving or being removed from the organisation ends the user's team places.
-- name: TeamMembersDeleteForUser :exec
DELETE FROM team_members WHERE organisation_id = @organisation_id AND user_id = @user_id;
