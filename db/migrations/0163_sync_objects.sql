-- == 0163_sync_objects (issue 31) ==
-- Objects (document chunks and blobs) a node fetched from the hub for a
-- page, kept here until everything they refer to has arrived, then stored
-- children first (docs/sync.md, "Documents and files"): a cut exchange
-- resumes without fetching them again, and document_chunks and blobs only
-- ever hold an object together with everything reachable from it.
-- Node-local.
CREATE TABLE sync_object_staging (
    hash TEXT NOT NULL,
    kind TEXT NOT NULL,
    data BLOB NOT NULL,
    content_type TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (hash, kind)
) WITHOUT ROWID;
