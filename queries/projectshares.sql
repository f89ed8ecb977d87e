-- Project shares (docs/projects.md "Project shares").

-- Whether the user holds an accepted share of the project: addressed to it,
-- or to an organisation it is a (not pending) member of.
-- name: ProjectShareHeld :one
SELECT EXISTS (SELECT 1 FROM project_shares s WHERE s.project_id = @project_id AND s.status = 1 AND (
    s.recipient_user_id = @user_id OR s.recipient_organisation_id IN (
        SELECT m.organisation_id FROM organisation_members m WHERE m.user_id = @user_id AND NOT m.pending))) AS held;

-- name: ProjectShareCreate :one
INSERT INTO project_shares(id, organisation_id, project_id, recipient_organisation_id, recipient_user_id, status, shared_by, created_at)
VALUES (@id, @organisation_id, @project_id, @recipient_organisation_id, @recipient_user_id, 0, @shared_by, @created_at)
RETURNING *;

-- name: ProjectShareGet :one
SELECT * FROM project_shares WHERE id = @id;

-- name: ProjectShareListForProject :many
SELECT * FROM project_shares WHERE project_id = @project_id ORDER BY id;

-- name: ProjectShareSetStatus :one
UPDATE project_shares SET status = @status, responded_at = @responded_at, responded_by = @responded_by WHERE id = @id
RETURNING *;

-- A pending or accepted share of the project to the same recipient.
-- name: ProjectShareOpenExists :one
SELECT EXISTS (SELECT 1 FROM project_shares WHERE project_id = @project_id AND status IN (0, 1)
    AND (recipient_organisation_id = @recipient_organisation_id OR recipient_user_id = @recipient_user_id)) AS found;

-- Pending and accepted shares addressed to the user or to an organisation
-- it is a (not pending) member of, of projects of live organisations.
-- name: ProjectSharesForUser :many
SELECT s.* FROM project_shares s JOIN organisations o ON o.id = s.organisation_id AND o.deleted_at IS NULL
WHERE s.status IN (0, 1) AND (s.recipient_user_id = @user_id OR s.recipient_organisation_id IN (
    SELECT m.organisation_id FROM organisation_members m WHERE m.user_id = @user_id AND NOT m.pending))
ORDER BY s.id;
