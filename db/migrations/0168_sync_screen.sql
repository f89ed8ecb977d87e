-- == 0168_sync_screen (issue 31) ==
-- The Sync screen (docs/sync.md): how much each way the last exchange
-- moved, on the hub per node and on a laptop for its hub, and the numbers a
-- node said it had left. Node-local, as their tables.
-- exchange_id: the laptop's name of the exchange its requests belong to
-- (the hub sums an exchange's pages under it).
ALTER TABLE sync_nodes ADD COLUMN exchange_id TEXT;
ALTER TABLE sync_nodes ADD COLUMN last_received INTEGER NOT NULL DEFAULT 0; -- entries the hub applied from the node
ALTER TABLE sync_nodes ADD COLUMN last_sent INTEGER NOT NULL DEFAULT 0; -- entries the hub sent the node
ALTER TABLE sync_nodes ADD COLUMN numbers_held TEXT NOT NULL DEFAULT '[]'; -- JSON: what the node had left of each counter
ALTER TABLE sync_hub ADD COLUMN last_sent INTEGER NOT NULL DEFAULT 0; -- entries the hub applied in the last whole exchange
ALTER TABLE sync_hub ADD COLUMN last_received INTEGER NOT NULL DEFAULT 0; -- entries received in it
