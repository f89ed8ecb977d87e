-- == 0177_sync_pruned (issue 30) ==
-- How far the change log was pruned, per origin (docs/sync.md, "Pruning
-- the log"): entries of it up to hlc were deleted once every node had them
-- and they were older than the retention. Node-local.
CREATE TABLE sync_pruned (
    origin INTEGER PRIMARY KEY,
    hlc INTEGER NOT NULL
);
