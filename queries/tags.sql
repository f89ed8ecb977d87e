-- Tags and release labels of documents (issue 13).

-- name: TagCreate :one
INSERT INTO document_tags(id, organisation_id, document_id, revision_id, label, release, release_index, major, minor,
    patch, message, created_at, created_by)
VALUES (@id, @organisation_id, @document_id, @revision_id, @label, @release, @release_index, @major, @minor,
    @patch, @message, @created_at, @created_by)
RETURNING *;

-- name: TagByLabel :one
SELECT * FROM document_tags WHERE document_id = @document_id AND release = @release AND label = @label;

-- The document's latest release: its current release tag.
-- name: TagLatestRelease :one
SELECT * FROM document_tags WHERE document_id = @document_id AND release ORDER BY id DESC LIMIT 1;

-- The newest release label of a revision (the revision's `revision`).
-- name: TagReleaseOfRevision :one
SELECT * FROM document_tags WHERE revision_id = @revision_id AND release ORDER BY id DESC LIMIT 1;

-- name: TagListByIDs :many
SELECT t.* FROM json_each(@ids_json) j JOIN document_tags t ON t.id = j.value ORDER BY j.key;
