-- Forks (issue 13): a fork copies its origin's revision rows, never their
-- content (document_chunks is content-addressed and shared). A copied row
-- names the row it copies in origin_revision_id: the revision as first
-- made, in the document it was made in, so a revision keeps one identity
-- (coalesce(origin_revision_id, id)) across a document and its forks, and
-- a later import (a merge request from a fork) finds what is already there.
ALTER TABLE document_revisions ADD COLUMN origin_revision_id INTEGER;
CREATE INDEX document_revisions_origin ON document_revisions(document_id, origin_revision_id) WHERE origin_revision_id IS NOT NULL;
CREATE INDEX documents_origin ON documents(origin_id) WHERE origin_id IS NOT NULL;
