-- Completed inductions (issue 11): a record is valid for the revision hash
-- it was made on, until expires_at (null: never). The user's details are
-- captured as they were at that moment.
CREATE TABLE induction_records (
    id INTEGER PRIMARY KEY,
    organisation_id INTEGER NOT NULL REFERENCES organisations(id),
    induction_id INTEGER NOT NULL REFERENCES inductions(id),
    revision_id INTEGER NOT NULL REFERENCES induction_revisions(id),
    induction_hash TEXT NOT NULL,
    user_id INTEGER NOT NULL REFERENCES users(id),
    email TEXT NOT NULL,
    first_name TEXT NOT NULL,
    last_name TEXT NOT NULL,
    position TEXT NOT NULL,
    company TEXT NOT NULL,
    inducted_at TEXT NOT NULL,
    expires_at TEXT,
    answers TEXT NOT NULL
);
CREATE INDEX induction_records_revision ON induction_records(induction_id, induction_hash, inducted_at);
CREATE INDEX induction_records_user ON induction_records(user_id, induction_id);
