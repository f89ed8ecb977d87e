-- Draws the next number of a per-organisation counter (1 first).
-- name: CounterNext :one
INSERT INTO organisation_counters(organisation_id, name, last_number) VALUES (@organisation_id, @name, 1)
ON CONFLICT(organisation_id, name) DO UPDATE SET last_number = last_number + 1
RETURNING last_number;

-- name: SystemCreate :one
INSERT INTO systems(id, organisation_id, number, code, name, description, root_prefix, root_id, parent_id, created_at, created_by)
VALUES (@id, @organisation_id, @number, @code, @name, @description, @root_prefix, @root_id, @parent_id, @created_at, @created_by)
RETURNING *;

-- name: SystemGet :one
SELECT * FROM systems WHERE id = @id;

-- name: SystemListByIDs :many
SELECT s.* FROM json_each(@ids_json) j JOIN systems s ON s.id = j.value
ORDER BY j.key;

-- name: SystemUpdate :one
UPDATE systems SET code = @code, name = @name, description = @description, unused = @unused
WHERE id = @id AND organisation_id = @organisation_id
RETURNING *;

-- A root's prefix, on the root and every system under it.
-- name: SystemRootPrefixSet :exec
UPDATE systems SET root_prefix = @root_prefix
WHERE organisation_id = @organisation_id AND (id = @root_id OR root_id = @root_id);

-- name: PrefixCreate :one
INSERT INTO prefixes(id, organisation_id, description, number_format, number_digits, unique_number, created_at)
VALUES (@id, @organisation_id, @description, @number_format, @number_digits, @unique_number, @created_at)
RETURNING *;

-- name: PrefixGet :one
SELECT * FROM prefixes WHERE id = @id;

-- name: PrefixListByIDs :many
SELECT p.* FROM json_each(@ids_json) j JOIN prefixes p ON p.id = j.value
ORDER BY j.key;

-- name: PrefixUpdate :one
UPDATE prefixes SET description = @description, last_number = @last_number, enabled = @enabled
WHERE id = @id AND organisation_id = @organisation_id
RETURNING *;

-- name: PrefixDelete :exec
DELETE FROM prefixes WHERE id = @id AND organisation_id = @organisation_id;

-- Draws the next number of an enabled prefix.
-- name: PrefixDraw :one
UPDATE prefixes SET last_number = last_number + 1
WHERE id = @id AND organisation_id = @organisation_id AND enabled
RETURNING *;
