-- Pairing and transport of offline site sync (docs/sync.md).

-- name: SyncPairingCodeCreate :exec
INSERT INTO sync_pairing_codes(id, code_hash, organisations, created_by, created_at, expires_at)
VALUES (@id, @code_hash, @organisations, @created_by, @created_at, @expires_at);

-- A code is used once: the first pairing that presents it in time takes it;
-- presented again before it expires, it pairs again only while the node it
-- paired has not received its clone whole (node: that node, to pair anew).
-- name: SyncPairingCodeTake :one
UPDATE sync_pairing_codes SET used_at = coalesce(used_at, @now)
WHERE code_hash = @code_hash AND expires_at > @now AND (used_at IS NULL OR node IS NOT NULL AND NOT EXISTS (
    SELECT 1 FROM sync_nodes n WHERE n.node = sync_pairing_codes.node AND (n.cloned_at IS NOT NULL OR n.revoked_at IS NOT NULL)))
RETURNING id, organisations, created_by, node;

-- name: SyncPairingCodePaired :exec
UPDATE sync_pairing_codes SET node = @node WHERE id = @id;

-- A node paired again with its code before its clone arrived: its new key.
-- name: SyncNodeRekey :exec
UPDATE sync_nodes SET public_key = @public_key, name = @name, paired_at = @paired_at WHERE node = @node AND cloned_at IS NULL;

-- The clone was sent whole: the pairing code is consumed.
-- name: SyncNodeCloned :exec
UPDATE sync_nodes SET cloned_at = coalesce(cloned_at, @now) WHERE node = @node;

-- name: SyncNodeCreate :exec
INSERT INTO sync_nodes(node, public_key, name, paired_by, paired_at)
VALUES (@node, @public_key, @name, @paired_by, @paired_at);

-- name: SyncNodeOrgAdd :exec
INSERT INTO sync_node_orgs(organisation_id, node) VALUES (@organisation_id, @node);

-- The node ids in use: the hub's peers, and every origin its log knows.
-- name: SyncNodeIDsUsed :many
SELECT node FROM sync_nodes
UNION SELECT origin FROM sync_received;

-- name: SyncNodeActive :one
SELECT node, public_key FROM sync_nodes WHERE node = @node AND revoked_at IS NULL;

-- name: SyncNodeOrgs :many
SELECT organisation_id FROM sync_node_orgs WHERE node = @node ORDER BY organisation_id;

-- name: SyncNodeList :many
SELECT n.*
FROM sync_node_orgs o JOIN sync_nodes n ON n.node = o.node
WHERE o.organisation_id = @organisation_id
ORDER BY n.node;

-- name: SyncNodeGetInOrg :one
SELECT n.node, n.name, n.paired_at, n.revoked_at, n.last_exchange_at, n.vector, n.pending_from
FROM sync_node_orgs o JOIN sync_nodes n ON n.node = o.node
WHERE o.organisation_id = @organisation_id AND o.node = @node;

-- name: SyncNodeRevoke :exec
UPDATE sync_nodes SET revoked_at = coalesce(revoked_at, @now) WHERE node = @node;

-- name: SyncNodeExchanged :exec
UPDATE sync_nodes SET last_exchange_at = @now, vector = @vector, pending_from = @pending_from WHERE node = @node;

-- A nonce is taken once; a second request with it is a replay.
-- name: SyncNonceTake :execrows
INSERT INTO sync_nonces(node, nonce, seen_at) VALUES (@node, @nonce, @seen_at)
ON CONFLICT DO NOTHING;

-- name: SyncNoncePrune :exec
DELETE FROM sync_nonces WHERE seen_at < @before;

-- name: SyncHubSet :exec
INSERT INTO sync_hub(id, url, hub_node, private_key, organisations) VALUES (1, @url, @hub_node, @private_key, @organisations);

-- name: SyncHubGet :one
SELECT url, hub_node, private_key, organisations, hub_vector, last_exchange_at, last_error, pending_in FROM sync_hub WHERE id = 1;

-- name: SyncHubExchanged :exec
UPDATE sync_hub SET hub_vector = @hub_vector, last_exchange_at = @now, last_error = NULL, pending_in = @pending_in WHERE id = 1;

-- name: SyncHubFailed :exec
UPDATE sync_hub SET last_error = @error WHERE id = 1;

-- How many entries of the organisations a node holding the vector lacks
-- (the shape of SyncChangesAfter, counted).
-- name: SyncChangesPending :one
SELECT count(*) FROM sync_changes c
WHERE c.hlc > @min_hlc
  AND c.hlc > coalesce((SELECT v.value FROM json_each(@vector_json) v WHERE v.key = CAST(c.origin AS TEXT)), 0)
  AND (c.org IN (SELECT value FROM json_each(@orgs_json))
    OR (c.org IS NULL AND c.tbl = 'users' AND EXISTS (SELECT 1 FROM organisation_members m
        WHERE m.organisation_id IN (SELECT value FROM json_each(@orgs_json)) AND m.user_id = json_extract(c.pk, '$[0]'))));

-- name: SyncTallyAdd :exec
INSERT INTO sync_exchange_tally(node, organisation_id, received, sent) VALUES (@node, @organisation_id, @received, @sent)
ON CONFLICT(node, organisation_id) DO UPDATE SET received = received + excluded.received, sent = sent + excluded.sent;

-- The exchange's last round: what it moved, per organisation, taken.
-- name: SyncTallyTake :many
DELETE FROM sync_exchange_tally WHERE node = @node RETURNING organisation_id, received, sent;

-- When the node was last heard from (its last exchange, else its pairing).
-- name: SyncNodeLastContact :one
SELECT CAST(coalesce(last_exchange_at, paired_at) AS TEXT) FROM sync_nodes WHERE node = @node;
