-- Offline site sync (issue 30, docs/sync.md): pairing and transport.
-- All of these are node-local (the sync catalogue says so): they never
-- travel and a clone starts without them.

-- One-time pairing codes an owner made on the hub: only the code's SHA-256
-- is kept (the code is shown once), for the organisations named.
CREATE TABLE sync_pairing_codes (
    id INTEGER PRIMARY KEY,
    code_hash TEXT NOT NULL UNIQUE,
    organisations TEXT NOT NULL, -- JSON array of organisation ids
    created_by INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    used_at TEXT
);

-- The nodes paired with this hub: the node id the hub assigned, the node's
-- Ed25519 public key, and what its last exchange told.
CREATE TABLE sync_nodes (
    node INTEGER PRIMARY KEY,
    public_key BLOB NOT NULL,
    name TEXT NOT NULL,
    paired_by INTEGER NOT NULL,
    paired_at TEXT NOT NULL,
    revoked_at TEXT,
    last_exchange_at TEXT,
    vector TEXT NOT NULL DEFAULT '{}', -- what the node held at its last exchange
    pending_from INTEGER NOT NULL DEFAULT 0 -- changes the node said it still had to send
);

-- The organisations each node was paired for.
CREATE TABLE sync_node_orgs (
    organisation_id INTEGER NOT NULL REFERENCES organisations(id) ON DELETE CASCADE,
    node INTEGER NOT NULL REFERENCES sync_nodes(node) ON DELETE CASCADE,
    PRIMARY KEY (organisation_id, node)
) WITHOUT ROWID;
CREATE INDEX sync_node_orgs_node ON sync_node_orgs(node);

-- Nonces of signed requests seen within the time window (no replay);
-- older ones are pruned, as a request that old is refused by its time.
CREATE TABLE sync_nonces (
    node INTEGER NOT NULL,
    nonce TEXT NOT NULL,
    seen_at INTEGER NOT NULL, -- unix seconds
    PRIMARY KEY (node, nonce)
) WITHOUT ROWID;
CREATE INDEX sync_nonces_seen ON sync_nonces(seen_at);

-- On a node made by `workspace sync clone`: its hub, its private key and
-- the state of its exchanges. One row.
CREATE TABLE sync_hub (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    url TEXT NOT NULL,
    hub_node INTEGER NOT NULL,
    private_key BLOB NOT NULL,
    organisations TEXT NOT NULL, -- JSON array of organisation ids
    hub_vector TEXT NOT NULL DEFAULT '{}', -- what the hub held at the last exchange
    last_exchange_at TEXT,
    last_error TEXT,
    pending_in INTEGER NOT NULL DEFAULT 0 -- changes the hub said it still had for this node
);
