-- Tags and release labels of documents (issue 13, docs/documents.md). A
-- release tag keeps the count of releases before it and the version parts,
-- so the next label follows from the latest release; the document's
-- current release tag is its latest release.
CREATE TABLE document_tags (
    id INTEGER PRIMARY KEY,
    organisation_id INTEGER NOT NULL REFERENCES organisations(id),
    document_id INTEGER NOT NULL REFERENCES documents(id),
    revision_id INTEGER NOT NULL REFERENCES document_revisions(id),
    label TEXT NOT NULL,
    release BOOLEAN NOT NULL DEFAULT 0,
    release_index INTEGER NOT NULL DEFAULT 0,
    major INTEGER NOT NULL DEFAULT 0,
    minor INTEGER NOT NULL DEFAULT 0,
    patch INTEGER NOT NULL DEFAULT 0,
    message TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    created_by INTEGER NOT NULL REFERENCES users(id)
);
CREATE UNIQUE INDEX document_tags_label ON document_tags(document_id, release, label);
CREATE INDEX document_tags_release ON document_tags(document_id, release, id);
