-- One-time authorization codes of the OpenID Connect code flow (issue 16),
-- stored only as a SHA-256 hash. A used code is kept until it expires so a
-- replay can be recognised: it revokes the refresh chain the code started.
CREATE TABLE oauth_codes (
    code_hash TEXT PRIMARY KEY,
    client_id TEXT NOT NULL,
    redirect_uri TEXT NOT NULL,
    user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    code_challenge TEXT NOT NULL,
    nonce TEXT NOT NULL,
    family_id INTEGER NOT NULL,
    expires_at TEXT NOT NULL,
    used_at TEXT,
    created_at TEXT NOT NULL
);
CREATE INDEX oauth_codes_expires ON oauth_codes(expires_at);
