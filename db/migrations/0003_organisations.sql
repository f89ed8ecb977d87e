-- Organisations area: bans and invites. Organisations, members, roles,
-- grants and domains live in the core schema.

-- A banned user is no member and cannot use an invite of the organisation.
CREATE TABLE organisation_bans (
    organisation_id INTEGER NOT NULL REFERENCES organisations(id),
    user_id INTEGER NOT NULL REFERENCES users(id),
    reason TEXT NOT NULL DEFAULT '',
    banned_at TEXT NOT NULL,
    banned_by INTEGER NOT NULL REFERENCES users(id),
    PRIMARY KEY (organisation_id, user_id)
) WITHOUT ROWID;

-- Invites are addressed by a random code. An e-mail invite is for one
-- person and single use; a code or domain invite may be used by many.
CREATE TABLE invites (
    id INTEGER PRIMARY KEY,
    organisation_id INTEGER NOT NULL REFERENCES organisations(id),
    code TEXT NOT NULL UNIQUE,
    email TEXT NOT NULL DEFAULT '' COLLATE NOCASE,
    expires_at TEXT,
    revoked BOOLEAN NOT NULL DEFAULT 0,
    domain TEXT NOT NULL DEFAULT '' COLLATE NOCASE,
    auto_add BOOLEAN NOT NULL DEFAULT 0,
    approval BOOLEAN NOT NULL DEFAULT 0,
    status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'accepted', 'rejected', 'revoked')),
    created_by INTEGER NOT NULL REFERENCES users(id),
    created_at TEXT NOT NULL
);
CREATE INDEX invites_organisation ON invites(organisation_id);
