-- name: SyncChangeAppend :exec
INSERT INTO sync_changes(origin, hlc, org, tbl, pk, op, cols, seen)
VALUES (@origin, @hlc, @org, @tbl, @pk, @op, @cols, @seen);

-- The highest clock in the log: the node's clock restarts above it.
-- name: SyncLastHLC :one
SELECT CAST(coalesce(max(hlc), 0) AS INTEGER) FROM sync_changes;

-- The highest clock received from any other node (its entries may have
-- been pruned from the log one day; the vector keeps it).
-- name: SyncLastReceived :one
SELECT CAST(coalesce(max(hlc), 0) AS INTEGER) FROM sync_received;

-- name: SyncReceived :many
SELECT origin, hlc FROM sync_received ORDER BY origin;

-- name: SyncReceivedSet :exec
INSERT INTO sync_received(origin, hlc) VALUES (@origin, @hlc)
ON CONFLICT(origin) DO UPDATE SET hlc = max(hlc, excluded.hlc);

-- The entries a node lacks: after the clock it holds of each origin (the
-- vector as a JSON object of origin -> hlc), of the organisations named
-- and of the accounts of their members, in clock order.
-- name: SyncChangesAfter :many
SELECT c.seq, c.origin, c.hlc, c.org, c.tbl, c.pk, c.op, c.cols, c.seen
FROM sync_changes c
WHERE c.hlc > @min_hlc
  AND c.hlc > coalesce((SELECT v.value FROM json_each(@vector_json) v WHERE v.key = CAST(c.origin AS TEXT)), 0)
  AND (c.org IN (SELECT value FROM json_each(@orgs_json))
    OR (c.org IS NULL AND c.tbl = 'users' AND EXISTS (SELECT 1 FROM organisation_members m
        WHERE m.organisation_id IN (SELECT value FROM json_each(@orgs_json)) AND m.user_id = json_extract(c.pk, '$[0]'))))
ORDER BY c.hlc, c.origin, c.seq
LIMIT @page_size;

-- A row's changes later than (hlc, origin): what a change that arrives
-- must not overwrite.
-- name: SyncRowLater :many
SELECT hlc, origin, op, cols FROM sync_changes
WHERE tbl = @tbl AND pk = @pk AND hlc >= @hlc
ORDER BY hlc, origin;


-- A clone starts holding what the log it copied holds of every origin.
-- name: SyncReceivedRecordLog :exec
INSERT INTO sync_received(origin, hlc)
SELECT c.origin, max(c.hlc) FROM sync_changes c WHERE c.origin <> @own GROUP BY c.origin
ON CONFLICT(origin) DO UPDATE SET hlc = max(sync_received.hlc, excluded.hlc);

-- The latest entry of a row: the clock a snapshot of it carries.
-- name: SyncRowLatest :one
SELECT origin, hlc FROM sync_changes WHERE tbl = @tbl AND pk = @pk ORDER BY hlc DESC LIMIT 1;

-- name: SyncIsMember :one
SELECT EXISTS (SELECT 1 FROM organisation_members WHERE user_id = @user_id
    AND organisation_id IN (SELECT value FROM json_each(@orgs_json)));

-- Whether the log knows a row (any entry of it): a row the log knows that
-- is not here was deleted here, or dropped with its deleted parent.
-- name: SyncRowKnown :one
SELECT EXISTS (SELECT 1 FROM sync_changes WHERE tbl = @tbl AND pk = @pk);

-- The latest entry of a row that set a column: when a unique key was
-- given, and by which node (the later of two colliding rows is renamed).
-- name: SyncColumnStamp :one
SELECT hlc, origin FROM sync_changes
WHERE tbl = @tbl AND pk = @pk AND json_type(cols, '$.' || CAST(@col AS TEXT)) IS NOT NULL
ORDER BY hlc DESC, origin DESC LIMIT 1;

-- Every insert and delete of a row, with what its maker had seen: the
-- security rule's judgement of whether the row is there.
-- name: SyncRowPresence :many
SELECT hlc, origin, op, seen, cols FROM sync_changes
WHERE tbl = @tbl AND pk = @pk AND (op = 'i' OR op = 'd')
ORDER BY hlc, origin;

-- Every entry of a row, with what its maker had seen: the stricter merge
-- of a grant's concurrent edits.
-- name: SyncRowHistory :many
SELECT hlc, origin, op, seen, cols FROM sync_changes
WHERE tbl = @tbl AND pk = @pk
ORDER BY hlc, origin;

-- The exchange's lease of this file, taken (TakeSyncLease decides when).
-- name: SyncLeasePut :exec
INSERT OR REPLACE INTO sync_lease(id, holder, pid, host, started_at, expires_at)
VALUES (1, @holder, @pid, @host, @started_at, @expires_at);

-- name: SyncLeaseGet :one
SELECT holder, pid, host, started_at, expires_at FROM sync_lease WHERE id = 1;

-- name: SyncLeaseRenew :execrows
UPDATE sync_lease SET expires_at = @expires_at WHERE id = 1 AND holder = @holder;

-- name: SyncLeaseRelease :exec
DELETE FROM sync_lease WHERE id = 1 AND holder = @holder;
