-- == 0176_sync_exchange_tally (issue 30) ==
-- On the hub, what the current exchange with a node has moved so far, per
-- organisation, until its last round writes one audit entry per
-- organisation (docs/sync.md, "Audit"). Node-local.
CREATE TABLE sync_exchange_tally (
    node INTEGER NOT NULL,
    organisation_id INTEGER NOT NULL,
    received INTEGER NOT NULL DEFAULT 0,
    sent INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (node, organisation_id)
) WITHOUT ROWID;
