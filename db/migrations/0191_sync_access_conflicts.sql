-- == 0191_sync_access_conflicts (issue 31) ==
-- An access decision of the hub (docs/sync.md, "Security state fails
-- closed") is a conflict a person settles too: kind 'access', col the
-- decision, row_id the person it concerns (0: a role's or everyone's grant),
-- other_id the role or grant's scope it concerns (0: none), undo what an
-- owner's Undo applies (the change that lost, as JSON), undone whether it
-- was applied. The table is rebuilt because its kind CHECK allowed only
-- 'unique'; no table references it and it has no triggers.
CREATE TABLE sync_conflicts_v2 (
    id INTEGER PRIMARY KEY,
    organisation_id INTEGER NOT NULL REFERENCES organisations(id),
    kind TEXT NOT NULL CHECK (kind = 'unique' OR kind = 'access'),
    tbl TEXT NOT NULL,
    col TEXT NOT NULL,
    row_id INTEGER NOT NULL,
    other_id INTEGER NOT NULL,
    value TEXT NOT NULL,
    renamed_to TEXT NOT NULL,
    created_at TEXT NOT NULL,
    settled_at TEXT,
    settled_by INTEGER REFERENCES users(id),
    undo TEXT,
    undone BOOLEAN NOT NULL DEFAULT 0
);
INSERT INTO sync_conflicts_v2 (id, organisation_id, kind, tbl, col, row_id, other_id, value, renamed_to, created_at, settled_at, settled_by)
SELECT id, organisation_id, kind, tbl, col, row_id, other_id, value, renamed_to, created_at, settled_at, settled_by FROM sync_conflicts;
DROP TABLE sync_conflicts;
ALTER TABLE sync_conflicts_v2 RENAME TO sync_conflicts;
CREATE INDEX sync_conflicts_organisation ON sync_conflicts(organisation_id, id);
