-- Inductions assigned to users (issue 11): one assignment per user and
-- induction; due_at is optional.
CREATE TABLE user_inductions (
    id INTEGER PRIMARY KEY,
    organisation_id INTEGER NOT NULL REFERENCES organisations(id),
    induction_id INTEGER NOT NULL REFERENCES inductions(id),
    user_id INTEGER NOT NULL REFERENCES users(id),
    due_at TEXT,
    created_at TEXT NOT NULL,
    created_by INTEGER NOT NULL REFERENCES users(id),
    UNIQUE (induction_id, user_id)
);
CREATE INDEX user_inductions_user ON user_inductions(user_id);
