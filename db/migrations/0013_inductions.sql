-- Inductions and their revisions (issue 11). Every change makes a new
-- revision; a revision keeps its questions as a JSON snapshot (ids of
-- questions and enum values are stable across revisions, so records made
-- on an older revision still resolve).
CREATE TABLE inductions (
    id INTEGER PRIMARY KEY,
    organisation_id INTEGER NOT NULL REFERENCES organisations(id),
    revision_id INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    created_by INTEGER NOT NULL REFERENCES users(id),
    updated_at TEXT NOT NULL,
    updated_by INTEGER NOT NULL REFERENCES users(id)
);
CREATE INDEX inductions_organisation ON inductions(organisation_id);

CREATE TABLE induction_revisions (
    id INTEGER PRIMARY KEY,
    organisation_id INTEGER NOT NULL REFERENCES organisations(id),
    induction_id INTEGER NOT NULL REFERENCES inductions(id),
    hash TEXT NOT NULL,
    name TEXT NOT NULL,
    revision TEXT NOT NULL DEFAULT '',
    description TEXT NOT NULL DEFAULT '',
    valid_for INTEGER NOT NULL DEFAULT 0,
    content_type TEXT,
    length INTEGER,
    file_name TEXT,
    file_hash TEXT,
    questions TEXT NOT NULL DEFAULT '[]',
    updated_at TEXT NOT NULL,
    updated_by INTEGER NOT NULL REFERENCES users(id)
);
CREATE INDEX induction_revisions_induction ON induction_revisions(induction_id, id);
CREATE INDEX induction_revisions_hash ON induction_revisions(induction_id, hash);
