-- Deleting a document type asks whether a document (also a soft-deleted
-- one) has it (docs/documents.md, "Documents, types, fields"): an index
-- instead of a scan of every document.
CREATE INDEX documents_type ON documents(type_id) WHERE type_id IS NOT NULL;
