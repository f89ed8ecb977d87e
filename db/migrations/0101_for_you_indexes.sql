-- "For you" (issue 36) finds invites addressed to the caller's addresses
-- and the documents the caller created (to list their open merge requests):
-- each by an index of its own rather than reading every organisation's rows.
CREATE INDEX invites_email ON invites(email) WHERE email <> '';
CREATE INDEX documents_creator ON documents(created_by) WHERE deleted_at IS NULL;
