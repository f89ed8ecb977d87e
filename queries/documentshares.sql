-- Document shares (issue 13): lifecycle pending -> accepted | rejected,
-- pending | accepted -> revoked.

-- name: DocumentShareCreate :one
INSERT INTO document_shares(id, organisation_id, document_id, recipient_organisation_id, recipient_user_id,
    scope_view, scope_edit, scope_branch, scope_fork, scope_revisions, scope_export, share_to_users_organisation,
    shared_by, created_at, updated_at)
VALUES (@id, @organisation_id, @document_id, @recipient_organisation_id, @recipient_user_id,
    @scope_view, @scope_edit, @scope_branch, @scope_fork, @scope_revisions, @scope_export, @share_to_users_organisation,
    @shared_by, @created_at, @created_at)
RETURNING *;

-- name: DocumentShareGet :one
SELECT * FROM document_shares WHERE id = @id;

-- name: DocumentShareListForDocument :many
SELECT * FROM document_shares WHERE document_id = @document_id ORDER BY id;

-- A pending or accepted share of the document to the same recipient.
-- name: DocumentShareOpenExists :one
SELECT EXISTS(SELECT 1 FROM document_shares WHERE document_id = @document_id AND status IN (0, 1)
    AND recipient_organisation_id IS sqlc.narg(recipient_organisation_id) AND recipient_user_id IS sqlc.narg(recipient_user_id));

-- name: DocumentShareSetStatus :one
UPDATE document_shares SET status = @status, responded_at = @responded_at, responded_by = @responded_by, updated_at = @responded_at
WHERE id = @id RETURNING *;

-- name: DocumentShareUpdate :one
UPDATE document_shares SET scope_view = @scope_view, scope_edit = @scope_edit, scope_branch = @scope_branch,
    scope_fork = @scope_fork, scope_revisions = @scope_revisions, scope_export = @scope_export,
    share_to_users_organisation = @share_to_users_organisation, updated_at = @updated_at
WHERE id = @id RETURNING *;

-- The accepted shares of a document that may apply to a user: addressed
-- to the user, or to a live organisation the user is a member of (not
-- pending). Whether an organisation share without propagation applies is
-- decided by the caller (server/documentshares.go).
-- name: DocumentShareGrantsFor :many
SELECT s.* FROM document_shares s
WHERE s.document_id = @document_id AND s.status = 1
  AND (s.recipient_user_id = @user_id OR s.recipient_organisation_id IN (
    SELECT m.organisation_id FROM organisation_members m JOIN organisations o ON o.id = m.organisation_id
    WHERE m.user_id = @user_id AND NOT m.pending AND o.deleted_at IS NULL));

-- Pending and accepted shares addressed to the user or to a live
-- organisation it is a member of (not pending), of documents of live
-- organisations.
-- name: DocumentSharesForUser :many
SELECT s.* FROM document_shares s JOIN organisations o ON o.id = s.organisation_id AND o.deleted_at IS NULL
WHERE s.status IN (0, 1) AND (s.recipient_user_id = @user_id OR s.recipient_organisation_id IN (
    SELECT m.organisation_id FROM organisation_members m JOIN organisations ro ON ro.id = m.organisation_id
    WHERE m.user_id = @user_id AND NOT m.pending AND ro.deleted_at IS NULL))
ORDER BY s.id;

-- Whether the hash is the head of a live branch of the document (what a
-- share without scope_revisions may read).
-- name: RevisionIsBranchHead :one
SELECT EXISTS(SELECT 1 FROM document_branches b JOIN document_revisions r ON r.id = b.revision_id
    WHERE b.document_id = @document_id AND b.deleted_at IS NULL AND r.hash = @hash);
