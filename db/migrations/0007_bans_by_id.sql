-- A ban may name any id, also one no account holds, so banning answers alike
-- for a stranger and for an id of no account and ids cannot be probed through
-- it (issue 20). was_member remembers whether the user was a member when
-- banned: only then may the organisation's managers see more of them than the
-- id. Bans made before this all named members or users already shown.
CREATE TABLE organisation_bans_by_id (
    organisation_id INTEGER NOT NULL REFERENCES organisations(id),
    user_id INTEGER NOT NULL,
    reason TEXT NOT NULL DEFAULT '',
    banned_at TEXT NOT NULL,
    banned_by INTEGER NOT NULL REFERENCES users(id),
    was_member BOOLEAN NOT NULL DEFAULT 0,
    PRIMARY KEY (organisation_id, user_id)
) WITHOUT ROWID;
INSERT INTO organisation_bans_by_id(organisation_id, user_id, reason, banned_at, banned_by, was_member)
SELECT organisation_id, user_id, reason, banned_at, banned_by, 1 FROM organisation_bans;
DROP TABLE organisation_bans;
ALTER TABLE organisation_bans_by_id RENAME TO organisation_bans;
