-- Password reset links (issue 36): one outstanding link per account, its
-- token stored hashed; using it deletes the row, so a link works once, and
-- asking again replaces it.
CREATE TABLE password_resets (
    user_id INTEGER PRIMARY KEY REFERENCES users(id),
    token_hash TEXT NOT NULL UNIQUE,
    expires_at TEXT NOT NULL,
    created_at TEXT NOT NULL
);
