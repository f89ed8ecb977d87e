-- name: OAuthCodeCreate :exec
INSERT INTO oauth_codes(code_hash, client_id, redirect_uri, user_id, code_challenge, nonce, family_id, expires_at, created_at)
VALUES (@code_hash, @client_id, @redirect_uri, @user_id, @code_challenge, @nonce, @family_id, @expires_at, @created_at);

-- name: OAuthCodeGet :one
SELECT * FROM oauth_codes WHERE code_hash = @code_hash;

-- OAuthCodeUse marks a live code used; no row means it was used before.
-- name: OAuthCodeUse :execrows
UPDATE oauth_codes SET used_at = @used_at WHERE code_hash = @code_hash AND used_at IS NULL;

-- name: OAuthCodeDeleteExpired :exec
DELETE FROM oauth_codes WHERE expires_at <= @now;
