-- Documents (issue 12): types, item fields, documents, chunks, revisions,
-- branches.

-- name: DocumentTypeCreate :one
INSERT INTO document_types(id, organisation_id, name, description, number_format, revision_format, created_at)
VALUES (@id, @organisation_id, @name, @description, @number_format, @revision_format, @created_at)
RETURNING *;

-- name: DocumentTypeGet :one
SELECT * FROM document_types WHERE id = @id;

-- name: DocumentTypeListByIDs :many
SELECT t.* FROM json_each(@ids_json) j JOIN document_types t ON t.id = j.value ORDER BY j.key;

-- name: DocumentTypeUpdate :one
UPDATE document_types SET name = @name, description = @description, number_format = @number_format,
    revision_format = @revision_format
WHERE id = @id RETURNING *;

-- Records the largest number issued with the type.
-- name: DocumentTypeNumbered :exec
UPDATE document_types SET last_number = max(last_number, @number) WHERE id = @id;

-- name: DocumentFieldCreate :one
INSERT INTO document_fields(id, organisation_id, required, name, description, type, units, multi_line, max_length, default_value, enabled, created_at)
VALUES (@id, @organisation_id, @required, @name, @description, @type, @units, @multi_line, @max_length, @default_value, @enabled, @created_at)
RETURNING *;

-- name: DocumentFieldGet :one
SELECT * FROM document_fields WHERE id = @id;

-- name: DocumentFieldListByIDs :many
SELECT f.* FROM json_each(@ids_json) j JOIN document_fields f ON f.id = j.value ORDER BY j.key;

-- name: DocumentFieldUpdate :one
UPDATE document_fields SET required = @required, name = @name, description = @description, type = @type,
    units = @units, multi_line = @multi_line, max_length = @max_length, default_value = @default_value, enabled = @enabled
WHERE id = @id RETURNING *;

-- name: DocumentFieldValues :many
SELECT * FROM document_field_values WHERE field_id IN (SELECT value FROM json_each(@ids_json)) AND NOT retired
ORDER BY field_id, position;

-- name: DocumentFieldValueCreate :exec
INSERT INTO document_field_values(id, field_id, position, value, updated_at, updated_by)
VALUES (@id, @field_id, @position, @value, @updated_at, @updated_by);

-- name: DocumentFieldValueKeep :exec
UPDATE document_field_values SET position = @position WHERE id = @id;

-- name: DocumentFieldValuesRetire :exec
UPDATE document_field_values SET retired = 1 WHERE field_id = @field_id AND NOT retired;

-- name: DocumentFieldValueUnretire :exec
UPDATE document_field_values SET retired = 0, position = @position WHERE id = @id AND field_id = @field_id;

-- name: DocumentCreate :one
INSERT INTO documents(id, organisation_id, origin_id, number, formatted_number, title, type_id, project_id, package_id,
    discipline_id, asset_group_id, asset_id, default_branch_id, fields, created_at, created_by, updated_at, updated_by)
VALUES (@id, @organisation_id, @origin_id, @number, @formatted_number, @title, @type_id, @project_id, @package_id,
    @discipline_id, @asset_group_id, @asset_id, @default_branch_id, @fields, @created_at, @created_by, @created_at, @created_by)
RETURNING *;

-- name: DocumentGet :one
SELECT * FROM documents WHERE id = @id;

-- name: DocumentListByIDs :many
SELECT d.* FROM json_each(@ids_json) j JOIN documents d ON d.id = j.value ORDER BY j.key;

-- name: DocumentUpdate :one
UPDATE documents SET title = @title, type_id = @type_id, project_id = @project_id, package_id = @package_id,
    discipline_id = @discipline_id, asset_group_id = @asset_group_id, asset_id = @asset_id, fields = @fields,
    updated_at = @updated_at, updated_by = @updated_by
WHERE id = @id RETURNING *;

-- name: DocumentSetDeleted :one
UPDATE documents SET deleted_at = @deleted_at, deleted_by = @deleted_by, updated_at = @updated_at, updated_by = @updated_by
WHERE id = @id RETURNING *;

-- name: DocumentSetDefaultBranch :exec
UPDATE documents SET default_branch_id = @default_branch_id WHERE id = @id;

-- name: DocumentScopes :many
SELECT DISTINCT coalesce(project_id, 0) AS project_id, coalesce(package_id, 0) AS package_id
FROM documents WHERE organisation_id = @organisation_id;

-- name: DocumentBranchCount :one
SELECT count(*) FROM document_branches WHERE document_id = @document_id AND deleted_at IS NULL;

-- name: DocumentForkCount :one
SELECT count(*) FROM documents WHERE origin_id = @origin_id AND deleted_at IS NULL;

-- Keeps projects.document_count (documents not deleted) current.
-- name: ProjectDocumentCountAdd :exec
UPDATE projects SET document_count = document_count + @delta WHERE id = @id;

-- name: ChunkGet :one
SELECT data FROM document_chunks WHERE hash = @hash;

-- name: ChunkPut :execrows
INSERT INTO document_chunks(hash, data) VALUES (@hash, @data) ON CONFLICT(hash) DO NOTHING;

-- name: RevisionCreate :one
INSERT INTO document_revisions(id, document_id, hash, parent_id, parents, generation, message, created_at, created_by)
VALUES (@id, @document_id, @hash, @parent_id, @parents, @generation, @message, @created_at, @created_by)
RETURNING *;

-- name: RevisionGet :one
SELECT * FROM document_revisions WHERE id = @id;

-- A hash is looked up only within its own document; the newest row of
-- equal content answers.
-- name: RevisionByHash :one
SELECT * FROM document_revisions WHERE document_id = @document_id AND hash = @hash ORDER BY id DESC LIMIT 1;

-- name: BranchCreate :one
INSERT INTO document_branches(id, organisation_id, document_id, name, revision_id, protected, created_at, created_by)
VALUES (@id, @organisation_id, @document_id, @name, @revision_id, @protected, @created_at, @created_by)
RETURNING *;

-- name: BranchByName :one
SELECT * FROM document_branches WHERE document_id = @document_id AND name = @name AND deleted_at IS NULL;

-- name: BranchGet :one
SELECT * FROM document_branches WHERE id = @id;

-- name: BranchList :many
SELECT * FROM document_branches WHERE document_id = @document_id AND deleted_at IS NULL ORDER BY name;

-- name: BranchMove :execrows
UPDATE document_branches SET revision_id = @revision_id WHERE id = @id AND revision_id = @old_revision_id;

-- name: BranchUpdate :one
UPDATE document_branches SET name = @name, protected = @protected, strict = @strict WHERE id = @id RETURNING *;

-- name: BranchDelete :exec
UPDATE document_branches SET deleted_at = @deleted_at, deleted_by = @deleted_by WHERE id = @id;
