-- Shares of every kind (server/shareshell.go).

-- The projects a page of project shares names, read at once.
-- name: ShareProjectsByIDs :many
SELECT p.* FROM json_each(@ids_json) j JOIN projects p ON p.id = j.value ORDER BY j.key;
