-- In-app notifications (issue 36): one row per recipient and event, written
-- in the event's transaction. organisation_id is the organisation whose
-- membership the recipient needs to see what the row names (NULL: nothing
-- beyond the row itself, as for invitations and shares addressed to them).
-- Rows older than 90 days are purged by a background job.
CREATE TABLE notifications (
    id INTEGER PRIMARY KEY,
    user_id INTEGER NOT NULL REFERENCES users(id),
    organisation_id INTEGER REFERENCES organisations(id),
    kind TEXT NOT NULL,
    title TEXT NOT NULL,
    body TEXT NOT NULL DEFAULT '',
    link TEXT NOT NULL,
    read_at TEXT,
    created_at TEXT NOT NULL
);
CREATE INDEX notifications_user ON notifications(user_id, id);
CREATE INDEX notifications_unread ON notifications(user_id) WHERE read_at IS NULL;
CREATE INDEX notifications_created ON notifications(created_at);
