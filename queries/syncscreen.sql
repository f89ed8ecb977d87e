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

-- Open merge requests a site's exchange left (from a site/<node>/<branch>
-- branch), read by id for the list shell.
-- name: SyncSiteMergeRequestsByIDs :many
SELECT m.id, m.number, m.document_id, d.title AS document_title, m.title, m.created_at,
       fb.name AS from_branch, tb.name AS to_branch
FROM json_each(@ids_json) j
JOIN document_merge_requests m ON m.id = j.value
JOIN documents d ON d.id = m.document_id
JOIN document_branches fb ON fb.id = m.from_branch_id
JOIN document_branches tb ON tb.id = m.to_branch_id
ORDER BY j.key;
