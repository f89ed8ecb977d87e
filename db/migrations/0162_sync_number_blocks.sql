-- == 0162_sync_number_blocks (issue 30) ==
-- Numbers on a clone come from blocks leased from the hub (docs/sync.md,
-- "Number blocks"): a clone's own blocks of each organisation's counters
-- ("prefix:<id>" or a counter's name), next the number it draws next; rows
-- "provisional:<counter>" count the provisional numbers it handed out with
-- no block left. Node-local.
CREATE TABLE sync_number_blocks (
    organisation_id INTEGER NOT NULL,
    counter TEXT NOT NULL,
    first INTEGER NOT NULL,
    last INTEGER NOT NULL,
    next INTEGER NOT NULL,
    PRIMARY KEY (organisation_id, counter, first)
) WITHOUT ROWID;

-- The blocks the hub granted each node. Node-local (the hub's book).
CREATE TABLE sync_number_grants (
    node INTEGER NOT NULL,
    organisation_id INTEGER NOT NULL,
    counter TEXT NOT NULL,
    first INTEGER NOT NULL,
    last INTEGER NOT NULL,
    granted_at TEXT NOT NULL,
    PRIMARY KEY (node, organisation_id, counter, first)
) WITHOUT ROWID;
-- Provisional numbers a clone handed out offline, found when blocks arrive.
CREATE INDEX work_items_provisional ON work_items(id) WHERE number < 0;
CREATE INDEX systems_provisional ON systems(id) WHERE number < 0;
