-- name: AuditLast :one
SELECT seq, hash FROM audit_log WHERE chain = @chain ORDER BY seq DESC LIMIT 1;

-- name: AuditAppend :exec
INSERT INTO audit_log(id, chain, seq, organisation_id, actor_id, action, target_ids, changed_fields, request_id,
    created_at, prev_hash, hash, details)
VALUES (@id, @chain, @seq, @organisation_id, @actor_id, @action, @target_ids, @changed_fields, @request_id,
    @created_at, @prev_hash, @hash, @details);

-- name: AuditListByIDs :many
SELECT a.* FROM json_each(@ids_json) j JOIN audit_log a ON a.id = j.value ORDER BY j.key;

-- name: AuditChains :many
SELECT DISTINCT chain FROM audit_log ORDER BY chain;

-- name: AuditChain :many
SELECT * FROM audit_log WHERE chain = @chain ORDER BY seq;
