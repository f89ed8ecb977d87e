-- The Sync screen (docs/sync.md, "The Sync screen").

-- name: SyncNodeListByIDs :many
SELECT n.* FROM json_each(@ids_json) j JOIN sync_nodes n ON n.node = j.value
ORDER BY j.key;

-- One request of an exchange: its pages are summed under the laptop's
-- name of the exchange; a request of another (or of none) starts anew.
-- name: SyncNodeTally :exec
UPDATE sync_nodes SET
  last_received = CASE WHEN exchange_id = @exchange_id THEN last_received + @received ELSE @received END,
  last_sent = CASE WHEN exchange_id = @exchange_id THEN last_sent + @sent ELSE @sent END,
  exchange_id = @exchange_id,
  numbers_held = @numbers_held
WHERE node = @node;

-- name: SyncHubTally :exec
UPDATE sync_hub SET last_sent = @last_sent, last_received = @last_received WHERE id = 1;

-- name: SyncHubScreen :one
SELECT url, hub_node, organisations, hub_vector, last_exchange_at, last_error, pending_in, last_sent, last_received
FROM sync_hub WHERE id = 1;
