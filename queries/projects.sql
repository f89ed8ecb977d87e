-- Projects, milestones and packages.

-- The caller builds the row from its values (a new project's counts are
-- zero): RETURNING cost the busiest write a result set.
-- name: ProjectCreate :exec
INSERT INTO projects(id, organisation_id, code, name, description, readme, status, created_at, created_by, closed_at, closed_by)
VALUES (@id, @organisation_id, @code, @name, @description, @readme, @status, @created_at, @created_by,
        sqlc.narg(closed_at), sqlc.narg(closed_by));

-- name: ProjectGet :one
SELECT * FROM projects WHERE id = @id;

-- name: ProjectUpdate :one
UPDATE projects SET code = @code, name = @name, description = @description, readme = @readme,
    status = @status, closed_at = sqlc.narg(closed_at), closed_by = sqlc.narg(closed_by)
WHERE id = @id AND organisation_id = @organisation_id
RETURNING *;

-- Recounts a project's milestones after any milestone write, inside the same
-- transaction, so the counters can never drift from the rows.
-- name: ProjectMilestoneCountsRefresh :exec
UPDATE projects SET
    open_milestone_count = (SELECT count(*) FROM project_milestones m WHERE m.project_id = projects.id AND m.status = 'open'),
    closed_milestone_count = (SELECT count(*) FROM project_milestones m WHERE m.project_id = projects.id AND m.status = 'closed')
WHERE projects.id = @id AND projects.organisation_id = @organisation_id;

-- User objects for created_by and closed_by, deleted accounts included so
-- history still names them.
-- name: ProjectUserGet :one
SELECT * FROM users WHERE id = @id;

-- name: ProjectUserList :many
SELECT * FROM users WHERE id IN (SELECT value FROM json_each(@ids_json));

-- Project-scope (or package-scope) grants that apply to a caller and touch
-- one of @bits in their deny mask: the only grants that can hide a project
-- (package) when the layers above already allow viewing it. The targets are
-- one IN list so that each is a seek on (organisation, scope type, target);
-- written as ORs the planner read every grant of the scope type.
-- name: ScopeGrantDenyingIDs :many
SELECT DISTINCT g.scope_id FROM permission_grants g
WHERE g.organisation_id = @organisation_id AND g.scope_type = @scope_type
  AND g.deny_mask <> 0 AND (g.deny_mask & @bits) <> 0
  AND g.target_id IN (SELECT CAST(@user_id AS INTEGER) AS target UNION ALL SELECT CAST(@organisation_id AS INTEGER)
                      UNION ALL SELECT mr.role_id FROM member_roles mr
                      WHERE mr.organisation_id = @organisation_id AND mr.user_id = @user_id);

-- The same for grants that allow one of @bits: the only grants that can
-- show a project (package) when the layers above do not allow viewing it.
-- name: ScopeGrantAllowingIDs :many
SELECT DISTINCT g.scope_id FROM permission_grants g
WHERE g.organisation_id = @organisation_id AND g.scope_type = @scope_type
  AND (g.allow_mask & @bits) <> 0
  AND g.target_id IN (SELECT CAST(@user_id AS INTEGER) AS target UNION ALL SELECT CAST(@organisation_id AS INTEGER)
                      UNION ALL SELECT mr.role_id FROM member_roles mr
                      WHERE mr.organisation_id = @organisation_id AND mr.user_id = @user_id);

-- Every grant applying to a caller in the given scopes (a JSON array of ids):
-- looked up by scope (the primary key); the unary plus keeps the planner
-- from reading every grant of the organisation through
-- permission_grants_target instead.
-- name: ScopeGrantsForUser :many
SELECT g.scope_id, g.scope_type, g.target_type, g.allow_mask, g.deny_mask,
       coalesce(r.sort_order, 0) AS role_rank
FROM permission_grants g
LEFT JOIN roles r ON r.id = g.target_id AND g.target_type = 'role'
WHERE +g.organisation_id = @organisation_id
  AND g.scope_id IN (SELECT value FROM json_each(@scope_ids_json))
  AND (g.target_id = @user_id
       OR g.target_id = @organisation_id
       OR g.target_id IN (SELECT mr.role_id FROM member_roles mr
                          WHERE mr.organisation_id = @organisation_id AND mr.user_id = @user_id));

-- name: MilestoneCreate :one
INSERT INTO project_milestones(id, organisation_id, project_id, name, description, due_at, status,
    created_at, created_by, closed_at, closed_by)
VALUES (@id, @organisation_id, @project_id, @name, @description, sqlc.narg(due_at), @status,
    @created_at, @created_by, sqlc.narg(closed_at), sqlc.narg(closed_by))
RETURNING *;

-- name: MilestoneGet :one
SELECT * FROM project_milestones WHERE id = @id;

-- name: MilestoneUpdate :one
UPDATE project_milestones SET name = @name, description = @description, due_at = sqlc.narg(due_at),
    status = @status, closed_at = sqlc.narg(closed_at), closed_by = sqlc.narg(closed_by)
WHERE id = @id AND organisation_id = @organisation_id
RETURNING *;

-- name: MilestoneOpenCount :one
SELECT count(*) FROM project_milestones
WHERE project_id = @project_id AND organisation_id = @organisation_id AND status = 'open';

-- name: PackageCreate :one
INSERT INTO project_packages(id, organisation_id, project_id, code, name, description, enabled, created_at, created_by)
VALUES (@id, @organisation_id, @project_id, @code, @name, @description, @enabled, @created_at, @created_by)
RETURNING *;

-- name: PackageGet :one
SELECT * FROM project_packages WHERE id = @id;

-- name: PackageUpdate :one
UPDATE project_packages SET code = @code, name = @name, description = @description, enabled = @enabled
WHERE id = @id AND organisation_id = @organisation_id
RETURNING *;

-- Projects of an organisation with one status, from the trigger-kept counts.
-- name: ProjectStatusCount :one
SELECT CAST(coalesce((SELECT n FROM project_status_counts WHERE organisation_id = @organisation_id AND status = @status), 0) AS INTEGER);

-- All projects of an organisation, from the trigger-kept counts.
-- name: ProjectTotalCount :one
SELECT CAST(coalesce(sum(n), 0) AS INTEGER) FROM project_status_counts WHERE organisation_id = @organisation_id;

-- The project with its creator, for GET /projects/{id}: one read instead of
-- two on the hottest path. Users are never hard-deleted, so the join holds.
-- name: ProjectGetWithCreator :one
SELECT sqlc.embed(projects), sqlc.embed(users)
FROM projects JOIN users ON users.id = projects.created_by
WHERE projects.id = @id;

-- The rows of one list page, in the page's order (ids_json from queryPage).
-- name: ProjectListByIDs :many
SELECT p.id, p.organisation_id, p.code, p.name, p.description, p.status, p.open_milestone_count,
       p.closed_milestone_count, p.open_work_item_count, p.closed_work_item_count, p.document_count
FROM json_each(@ids_json) j JOIN projects p ON p.id = j.value
ORDER BY j.key;

-- name: MilestoneListByIDs :many
SELECT m.* FROM json_each(@ids_json) j JOIN project_milestones m ON m.id = j.value
ORDER BY j.key;

-- name: PackageListByIDs :many
SELECT k.* FROM json_each(@ids_json) j JOIN project_packages k ON k.id = j.value
ORDER BY j.key;
