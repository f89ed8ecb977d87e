-- Refresh tokens form chains (families): each rotation keeps the used token,
-- marked used, so a second use is recognised as reuse and revokes the whole
-- chain (OAuth 2.0 Security BCP). Existing tokens each start their own chain.
ALTER TABLE refresh_tokens ADD COLUMN family_id INTEGER NOT NULL DEFAULT 0;
ALTER TABLE refresh_tokens ADD COLUMN used_at TEXT;
UPDATE refresh_tokens SET family_id = rowid;
CREATE INDEX refresh_tokens_family ON refresh_tokens(family_id);
