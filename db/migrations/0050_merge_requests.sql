-- Merge requests of documents (issue 13, docs/documents.md): a branch's
-- strict policy, and the requests themselves, numbered per organisation.
ALTER TABLE document_branches ADD COLUMN strict BOOLEAN NOT NULL DEFAULT 0;

CREATE TABLE document_merge_requests (
    id INTEGER PRIMARY KEY,
    organisation_id INTEGER NOT NULL REFERENCES organisations(id),
    number INTEGER NOT NULL,
    document_id INTEGER NOT NULL REFERENCES documents(id),
    from_document_id INTEGER NOT NULL REFERENCES documents(id),
    from_branch_id INTEGER NOT NULL REFERENCES document_branches(id),
    to_branch_id INTEGER NOT NULL REFERENCES document_branches(id),
    title TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    status TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'merged', 'closed')),
    revision_id INTEGER REFERENCES document_revisions(id),
    created_at TEXT NOT NULL,
    created_by INTEGER NOT NULL REFERENCES users(id),
    updated_at TEXT NOT NULL,
    closed_at TEXT,
    closed_by INTEGER REFERENCES users(id),
    UNIQUE (organisation_id, number)
);
CREATE INDEX document_merge_requests_document ON document_merge_requests(document_id, number);
