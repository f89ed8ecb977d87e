-- Bytes of document content (document_chunks) each organisation's writes
-- stored first, part of its storage_usage (chunks are shared by content, so
-- a fork or an equal object costs nothing; they are never deleted).
CREATE TABLE organisation_document_storage (
    organisation_id INTEGER PRIMARY KEY REFERENCES organisations(id),
    bytes INTEGER NOT NULL
);
