-- == 0189_sync_lease (issue 31) ==
-- One exchange with head office at a time per database file, across
-- processes (a `sync now` beside `serve`): the exchange holds this row,
-- renews it while it runs and deletes it at its end; a holder killed
-- mid-exchange leaves a row that expires (docs/sync.md). Node-local.
CREATE TABLE sync_lease (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    holder TEXT NOT NULL,
    pid INTEGER NOT NULL,
    host TEXT NOT NULL,
    started_at TEXT NOT NULL,
    expires_at TEXT NOT NULL
);
