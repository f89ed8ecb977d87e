-- Document bookmarks and the caller's last access (issue 13).

-- name: BookmarkPut :execrows
INSERT INTO document_bookmarks(document_id, user_id, created_at) VALUES (@document_id, @user_id, @created_at)
ON CONFLICT(document_id, user_id) DO NOTHING;

-- name: BookmarkGet :one
SELECT * FROM document_bookmarks WHERE document_id = @document_id AND user_id = @user_id;

-- name: BookmarkDelete :execrows
DELETE FROM document_bookmarks WHERE document_id = @document_id AND user_id = @user_id;

-- name: BookmarkCount :one
SELECT count(*) FROM document_bookmarks WHERE document_id = @document_id;

-- name: DocumentAccessGet :one
SELECT accessed_at FROM document_accesses WHERE user_id = @user_id AND document_id = @document_id;

-- name: DocumentAccessTouch :exec
INSERT INTO document_accesses(user_id, document_id, accessed_at) VALUES (@user_id, @document_id, @accessed_at)
ON CONFLICT(user_id, document_id) DO UPDATE SET accessed_at = excluded.accessed_at;
