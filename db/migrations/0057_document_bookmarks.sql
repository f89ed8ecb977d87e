-- Bookmarks and last access of documents, per user (issue 13,
-- docs/documents.md "Bookmarks and accessed_at"). A document's
-- bookmark_count counts its bookmarks; bookmark and accessed_at are the
-- requesting user's.
CREATE TABLE document_bookmarks (
    document_id INTEGER NOT NULL REFERENCES documents(id),
    user_id INTEGER NOT NULL REFERENCES users(id),
    created_at TEXT NOT NULL,
    PRIMARY KEY (document_id, user_id)
) WITHOUT ROWID;
CREATE INDEX document_bookmarks_user ON document_bookmarks(user_id);

CREATE TABLE document_accesses (
    user_id INTEGER NOT NULL REFERENCES users(id),
    document_id INTEGER NOT NULL REFERENCES documents(id),
    accessed_at TEXT NOT NULL,
    PRIMARY KEY (user_id, document_id)
) WITHOUT ROWID;
