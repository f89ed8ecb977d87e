-- Mails are written for people (issue 36): each has an HTML part beside the
-- plain text and one link into the app; the outbox keeps both.
ALTER TABLE outbox ADD COLUMN html TEXT NOT NULL DEFAULT '';
ALTER TABLE outbox ADD COLUMN link TEXT NOT NULL DEFAULT '';
