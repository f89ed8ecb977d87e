-- == 0190_sync_object_pieces (issue 31) ==
-- Pieces of a large file on its way between offices, kept as they arrive,
-- so a cut transfer goes on from the last piece that came, not from the
-- file's first byte (docs/sync.md). peer: on the hub, the node sending it;
-- on a laptop, 0 (fetched from the hub). Node-local; joined, checked
-- against the hash and dropped when the last piece comes.
CREATE TABLE sync_object_pieces (
    peer INTEGER NOT NULL,
    hash TEXT NOT NULL,
    pos INTEGER NOT NULL,
    data BLOB NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (peer, hash, pos)
) WITHOUT ROWID;
-- the week's pruning finds abandoned transfers without reading the pieces
CREATE INDEX sync_object_pieces_created ON sync_object_pieces(created_at);
