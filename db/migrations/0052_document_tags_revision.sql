-- A revision's label (its newest release) is read with every revision
-- answer: found by the revision, not by scanning the tags.
CREATE INDEX document_tags_revision ON document_tags(revision_id, release, id);
