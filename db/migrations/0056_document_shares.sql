-- Document shares (issue 13, docs/documents.md "Shares"): a document shared
-- with one user (recipient_user_id) or with an organisation
-- (recipient_organisation_id), granting exactly its scopes once accepted.
-- status: 0 pending, 1 accepted, 2 rejected, 3 revoked. organisation_id is
-- the document's organisation.
CREATE TABLE document_shares (
    id INTEGER PRIMARY KEY,
    organisation_id INTEGER NOT NULL REFERENCES organisations(id),
    document_id INTEGER NOT NULL REFERENCES documents(id),
    recipient_organisation_id INTEGER REFERENCES organisations(id),
    recipient_user_id INTEGER REFERENCES users(id),
    scope_view BOOLEAN NOT NULL DEFAULT 0,
    scope_edit BOOLEAN NOT NULL DEFAULT 0,
    scope_branch BOOLEAN NOT NULL DEFAULT 0,
    scope_fork BOOLEAN NOT NULL DEFAULT 0,
    scope_revisions BOOLEAN NOT NULL DEFAULT 0,
    scope_export BOOLEAN NOT NULL DEFAULT 0,
    share_to_users_organisation BOOLEAN NOT NULL DEFAULT 0,
    status INTEGER NOT NULL DEFAULT 0 CHECK (status BETWEEN 0 AND 3),
    shared_by INTEGER NOT NULL REFERENCES users(id),
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    responded_at TEXT,
    responded_by INTEGER REFERENCES users(id),
    CHECK ((recipient_organisation_id IS NULL) <> (recipient_user_id IS NULL))
);
CREATE INDEX document_shares_document ON document_shares(document_id, status);
CREATE INDEX document_shares_recipient_user ON document_shares(recipient_user_id, status) WHERE recipient_user_id IS NOT NULL;
CREATE INDEX document_shares_recipient_org ON document_shares(recipient_organisation_id, status) WHERE recipient_organisation_id IS NOT NULL;
