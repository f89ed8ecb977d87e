-- == 0160_sync_merge (issue 30) ==
-- Evidence two nodes recorded of one person apart (two signatures of one
-- person on one toolbox talk, two witness records of one person on one
-- object): both are kept, never dropped. duplicate_of flags all but the
-- first (by id) with the id of the first; sync keeps it on each node
-- (docs/sync.md), and a second signature made on one node is still refused.
ALTER TABLE toolbox_users ADD COLUMN duplicate_of INTEGER;
DROP INDEX toolbox_users_once;
CREATE UNIQUE INDEX toolbox_users_once ON toolbox_users(toolbox_id, user_id) WHERE user_id IS NOT NULL AND duplicate_of IS NULL;
ALTER TABLE witness_records ADD COLUMN duplicate_of INTEGER;
DROP INDEX witness_records_once;
CREATE UNIQUE INDEX witness_records_once ON witness_records(object_type, object_id, user_id) WHERE duplicate_of IS NULL;

-- What sync found for a person to settle (docs/sync.md): a unique key (a
-- project, location or discipline code) two nodes gave two rows apart.
-- Both rows are kept; row_id, the later, was renamed to renamed_to; other_id
-- kept value. Replicated: made on the hub, listed and settled on any node.
CREATE TABLE sync_conflicts (
    id INTEGER PRIMARY KEY,
    organisation_id INTEGER NOT NULL REFERENCES organisations(id),
    kind TEXT NOT NULL CHECK (kind = 'unique'),
    tbl TEXT NOT NULL,
    col TEXT NOT NULL,
    row_id INTEGER NOT NULL,
    other_id INTEGER NOT NULL,
    value TEXT NOT NULL,
    renamed_to TEXT NOT NULL,
    created_at TEXT NOT NULL,
    settled_at TEXT,
    settled_by INTEGER REFERENCES users(id)
);
CREATE INDEX sync_conflicts_organisation ON sync_conflicts(organisation_id, id);
