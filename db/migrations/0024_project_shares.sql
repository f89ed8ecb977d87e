-- Project shares (operations-data.md "Fleets and fleet shares", last point):
-- an accepted share lets its recipient (one user, or the members of one
-- organisation) view the project and its documents; statuses as fleet
-- shares (0 pending, 1 accepted, 2 rejected, 3 revoked).
CREATE TABLE project_shares (
    id INTEGER PRIMARY KEY,
    organisation_id INTEGER NOT NULL REFERENCES organisations(id),
    project_id INTEGER NOT NULL REFERENCES projects(id),
    recipient_organisation_id INTEGER REFERENCES organisations(id),
    recipient_user_id INTEGER REFERENCES users(id),
    status INTEGER NOT NULL DEFAULT 0 CHECK (status BETWEEN 0 AND 3),
    shared_by INTEGER NOT NULL REFERENCES users(id),
    created_at TEXT NOT NULL,
    responded_at TEXT,
    responded_by INTEGER REFERENCES users(id),
    CHECK ((recipient_organisation_id IS NULL) <> (recipient_user_id IS NULL))
);
CREATE INDEX project_shares_project ON project_shares(project_id, status);
CREATE INDEX project_shares_recipient_org ON project_shares(recipient_organisation_id, status) WHERE recipient_organisation_id IS NOT NULL;
CREATE INDEX project_shares_recipient_user ON project_shares(recipient_user_id, status) WHERE recipient_user_id IS NOT NULL;
