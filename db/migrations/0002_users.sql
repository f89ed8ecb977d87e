-- Users area: one-time secrets other than e-mail verification tokens, TOTP
-- secrets for the signing flows, and the avatar lookup.

-- One pending secret per user and purpose, stored hashed: 'phone' is the SMS
-- code for the number in subject, 'delete' confirms account deletion.
CREATE TABLE user_tokens (
    user_id INTEGER NOT NULL REFERENCES users(id),
    purpose TEXT NOT NULL CHECK (purpose IN ('phone', 'delete')),
    token_hash TEXT NOT NULL,
    subject TEXT NOT NULL DEFAULT '',
    attempts INTEGER NOT NULL DEFAULT 0,
    expires_at TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (user_id, purpose)
) WITHOUT ROWID;

-- The TOTP secret the user's phone app holds (PUT /users/@me/qr/token). It
-- must stay readable to check codes; it lives 24 hours.
CREATE TABLE user_totp_secrets (
    user_id INTEGER PRIMARY KEY REFERENCES users(id),
    secret TEXT NOT NULL,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL
);
CREATE INDEX user_totp_secrets_expiry ON user_totp_secrets(expires_at);

-- GET /users/avatar/{hash} serves a blob only while it is someone's avatar.
CREATE INDEX users_avatar_hash ON users(avatar_hash) WHERE avatar_hash IS NOT NULL;
