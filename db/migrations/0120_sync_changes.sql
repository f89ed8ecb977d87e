-- Offline site sync (issue 30, docs/sync.md): the change log. Every change
-- of a replicated row appends one entry in the transaction that made it
-- (captured at the store, db/sync.go), and changes received from another
-- node are kept verbatim, so the hub can pass a laptop's changes on and the
-- later-wins rule can see which columns a later change already set.
-- origin is the node that made the change, hlc its hybrid logical clock
-- (milliseconds << 16 | counter), org the organisation the row belongs to
-- (NULL: not of one organisation, such as a user's own rows), pk the row's
-- primary key as a JSON array, op 'i', 'u' or 'd', cols the inserted or
-- changed columns' values as a JSON object (NULL for a delete).
CREATE TABLE sync_changes (
    seq INTEGER PRIMARY KEY,
    origin INTEGER NOT NULL,
    hlc INTEGER NOT NULL,
    org INTEGER,
    tbl TEXT NOT NULL,
    pk TEXT NOT NULL,
    op TEXT NOT NULL,
    cols TEXT
);
-- Pages are sent in clock order; the clock restarts from the highest entry.
CREATE INDEX sync_changes_hlc ON sync_changes(hlc, origin);
-- A row's history, for the later-wins rule when a change arrives.
CREATE INDEX sync_changes_row ON sync_changes(tbl, pk, hlc);

-- What this node holds of each origin node's changes: the highest clock
-- received from it (a version vector; the node's own origin is read from
-- sync_changes itself).
CREATE TABLE sync_received (
    origin INTEGER PRIMARY KEY,
    hlc INTEGER NOT NULL
);
