-- name: AuditLast :one
SELECT seq, hash FROM audit_log WHERE chain = @chain AND node = @node ORDER BY seq DESC LIMIT 1;

-- name: AuditAppend :exec
INSERT INTO audit_log(id, chain, node, seq, organisation_id, actor_id, action, target_ids, changed_fields, request_id,
    created_at, prev_hash, hash, details)
VALUES (@id, @chain, @node, @seq, @organisation_id, @actor_id, @action, @target_ids, @changed_fields, @request_id,
    @created_at, @prev_hash, @hash, @details);

-- name: AuditListByIDs :many
SELECT a.* FROM json_each(@ids_json) j JOIN audit_log a ON a.id = j.value ORDER BY j.key;

-- Every (organisation, node) chain.
-- name: AuditChains :many
SELECT DISTINCT chain, node FROM audit_log ORDER BY chain, node;

-- name: AuditChain :many
SELECT * FROM audit_log WHERE chain = @chain AND node = @node ORDER BY seq;
