-- The other tables whose CHECKs held an IN list of three or more values,
-- rebuilt as 0070 rebuilt permission_grants: SQLite checks `x IN (a, b, c)`
-- by building a temporary b-tree of the values for every row it writes, and
-- the same CHECK spelled as equalities joined by OR is a comparison or two
-- (issue 7). Each table keeps its columns, key, other constraints, indexes
-- and triggers; no table references any of them.
--
-- user_work_items_unassign (on work_item_assignees) and
-- user_work_items_schedule_delete (on schedules) read schedule_invitees: the
-- RENAME refuses to run while a trigger names a table that is gone, so they
-- are dropped before the DROP TABLE and recreated, same text, after it.

CREATE TABLE invites_v2 (
    id INTEGER PRIMARY KEY,
    organisation_id INTEGER NOT NULL REFERENCES organisations(id),
    code TEXT NOT NULL UNIQUE,
    email TEXT NOT NULL DEFAULT '' COLLATE NOCASE,
    expires_at TEXT,
    revoked BOOLEAN NOT NULL DEFAULT 0,
    domain TEXT NOT NULL DEFAULT '' COLLATE NOCASE,
    auto_add BOOLEAN NOT NULL DEFAULT 0,
    approval BOOLEAN NOT NULL DEFAULT 0,
    status TEXT NOT NULL DEFAULT 'pending' CHECK (status = 'pending' OR status = 'accepted' OR status = 'rejected' OR status = 'revoked'),
    created_by INTEGER NOT NULL REFERENCES users(id),
    created_at TEXT NOT NULL
);
INSERT INTO invites_v2 (id, organisation_id, code, email, expires_at, revoked, domain, auto_add, approval, status, created_by, created_at)
SELECT id, organisation_id, code, email, expires_at, revoked, domain, auto_add, approval, status, created_by, created_at FROM invites;
DROP TABLE invites;
ALTER TABLE invites_v2 RENAME TO invites;
CREATE INDEX invites_organisation ON invites(organisation_id);

CREATE TABLE integration_deliveries_v2 (
    id INTEGER PRIMARY KEY,
    organisation_id INTEGER NOT NULL REFERENCES organisations(id),
    integration_id INTEGER NOT NULL REFERENCES integrations(id),
    event TEXT NOT NULL,
    body TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status = 'pending' OR status = 'delivered' OR status = 'failed'),
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at TEXT NOT NULL,
    response_code INTEGER,
    last_error TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    delivered_at TEXT
);
INSERT INTO integration_deliveries_v2 (id, organisation_id, integration_id, event, body, status, attempts, next_attempt_at, response_code, last_error, created_at, delivered_at)
SELECT id, organisation_id, integration_id, event, body, status, attempts, next_attempt_at, response_code, last_error, created_at, delivered_at FROM integration_deliveries;
DROP TABLE integration_deliveries;
ALTER TABLE integration_deliveries_v2 RENAME TO integration_deliveries;
CREATE INDEX integration_deliveries_due ON integration_deliveries(status, next_attempt_at);
CREATE INDEX integration_deliveries_integration ON integration_deliveries(integration_id, id);

CREATE TABLE schedule_invitees_v2 (
    schedule_id INTEGER NOT NULL REFERENCES schedules(id) ON DELETE CASCADE,
    user_id INTEGER NOT NULL REFERENCES users(id),
    status TEXT NOT NULL CHECK (status = 'invited' OR status = 'checked_in' OR status = 'attending' OR status = 'declined'),
    latitude REAL,
    longitude REAL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (schedule_id, user_id)
) WITHOUT ROWID;
INSERT INTO schedule_invitees_v2 (schedule_id, user_id, status, latitude, longitude, updated_at)
SELECT schedule_id, user_id, status, latitude, longitude, updated_at FROM schedule_invitees;
DROP TRIGGER user_work_items_unassign;
DROP TRIGGER user_work_items_schedule_delete;
DROP TABLE schedule_invitees;
ALTER TABLE schedule_invitees_v2 RENAME TO schedule_invitees;
CREATE INDEX schedule_invitees_user ON schedule_invitees(user_id);

CREATE TRIGGER user_work_items_unassign AFTER DELETE ON work_item_assignees BEGIN
    DELETE FROM user_work_items WHERE user_id = OLD.user_id AND work_item_id = OLD.work_item_id
        AND NOT EXISTS (SELECT 1 FROM schedule_invitees si JOIN schedules sc ON sc.id = si.schedule_id
            WHERE sc.work_item_id = OLD.work_item_id AND si.user_id = OLD.user_id AND si.status <> 'declined');
END;

CREATE TRIGGER user_work_items_invite AFTER INSERT ON schedule_invitees WHEN NEW.status <> 'declined' BEGIN
    INSERT OR IGNORE INTO user_work_items SELECT NEW.user_id, w.id, w.organisation_id, w.status, w.type_id, w.project_id,
        w.document_id, w.fleet_id, w.location_id, w.asset_group_id, w.start_at, w.finish_at, w.created_at, w.closed_at
    FROM schedules sc JOIN work_items w ON w.id = sc.work_item_id WHERE sc.id = NEW.schedule_id;
END;

CREATE TRIGGER user_work_items_invite_status AFTER UPDATE OF status ON schedule_invitees BEGIN
    INSERT OR IGNORE INTO user_work_items SELECT NEW.user_id, w.id, w.organisation_id, w.status, w.type_id, w.project_id,
        w.document_id, w.fleet_id, w.location_id, w.asset_group_id, w.start_at, w.finish_at, w.created_at, w.closed_at
    FROM schedules sc JOIN work_items w ON w.id = sc.work_item_id WHERE sc.id = NEW.schedule_id AND NEW.status <> 'declined';
    DELETE FROM user_work_items WHERE user_id = NEW.user_id
        AND work_item_id = (SELECT work_item_id FROM schedules WHERE id = NEW.schedule_id)
        AND NOT EXISTS (SELECT 1 FROM work_item_assignees a WHERE a.work_item_id = user_work_items.work_item_id AND a.user_id = NEW.user_id)
        AND NOT EXISTS (SELECT 1 FROM schedule_invitees si JOIN schedules sc ON sc.id = si.schedule_id
            WHERE sc.work_item_id = user_work_items.work_item_id AND si.user_id = NEW.user_id AND si.status <> 'declined');
END;

CREATE TRIGGER user_work_items_uninvite AFTER DELETE ON schedule_invitees BEGIN
    DELETE FROM user_work_items WHERE user_id = OLD.user_id
        AND work_item_id = (SELECT work_item_id FROM schedules WHERE id = OLD.schedule_id)
        AND NOT EXISTS (SELECT 1 FROM work_item_assignees a WHERE a.work_item_id = user_work_items.work_item_id AND a.user_id = OLD.user_id)
        AND NOT EXISTS (SELECT 1 FROM schedule_invitees si JOIN schedules sc ON sc.id = si.schedule_id
            WHERE sc.work_item_id = user_work_items.work_item_id AND si.user_id = OLD.user_id AND si.status <> 'declined');
END;

CREATE TRIGGER user_work_items_schedule_delete AFTER DELETE ON schedules WHEN OLD.work_item_id IS NOT NULL BEGIN
    DELETE FROM user_work_items WHERE work_item_id = OLD.work_item_id
        AND NOT EXISTS (SELECT 1 FROM work_item_assignees a WHERE a.work_item_id = OLD.work_item_id AND a.user_id = user_work_items.user_id)
        AND NOT EXISTS (SELECT 1 FROM schedule_invitees si JOIN schedules sc ON sc.id = si.schedule_id
            WHERE sc.work_item_id = OLD.work_item_id AND si.user_id = user_work_items.user_id AND si.status <> 'declined');
END;

CREATE TABLE toolbox_users_v2 (
    id INTEGER PRIMARY KEY,
    organisation_id INTEGER NOT NULL REFERENCES organisations(id),
    toolbox_id INTEGER NOT NULL REFERENCES toolboxes(id) ON DELETE CASCADE,
    schedule_id INTEGER REFERENCES schedules(id),
    user_id INTEGER REFERENCES users(id),
    first_name TEXT NOT NULL,
    last_name TEXT NOT NULL,
    email TEXT NOT NULL DEFAULT '',
    phone_number TEXT,
    company TEXT NOT NULL DEFAULT '',
    position TEXT NOT NULL DEFAULT '',
    signature TEXT,
    signed_at TEXT NOT NULL,
    signed_method TEXT NOT NULL CHECK (signed_method = 'declaration' OR signed_method = 'signature' OR signed_method = 'toolbox_qr'
        OR signed_method = 'user_qr' OR signed_method = 'app'),
    signed_by INTEGER REFERENCES users(id)
);
INSERT INTO toolbox_users_v2 (id, organisation_id, toolbox_id, schedule_id, user_id, first_name, last_name, email, phone_number, company, position, signature, signed_at, signed_method, signed_by)
SELECT id, organisation_id, toolbox_id, schedule_id, user_id, first_name, last_name, email, phone_number, company, position, signature, signed_at, signed_method, signed_by FROM toolbox_users;
DROP TABLE toolbox_users;
ALTER TABLE toolbox_users_v2 RENAME TO toolbox_users;
CREATE INDEX toolbox_users_toolbox ON toolbox_users(toolbox_id, id);
CREATE UNIQUE INDEX toolbox_users_once ON toolbox_users(toolbox_id, user_id) WHERE user_id IS NOT NULL;

CREATE TABLE document_merge_requests_v2 (
    id INTEGER PRIMARY KEY,
    organisation_id INTEGER NOT NULL REFERENCES organisations(id),
    number INTEGER NOT NULL,
    document_id INTEGER NOT NULL REFERENCES documents(id),
    from_document_id INTEGER NOT NULL REFERENCES documents(id),
    from_branch_id INTEGER NOT NULL REFERENCES document_branches(id),
    to_branch_id INTEGER NOT NULL REFERENCES document_branches(id),
    title TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    status TEXT NOT NULL DEFAULT 'open' CHECK (status = 'open' OR status = 'merged' OR status = 'closed'),
    revision_id INTEGER REFERENCES document_revisions(id),
    created_at TEXT NOT NULL,
    created_by INTEGER NOT NULL REFERENCES users(id),
    updated_at TEXT NOT NULL,
    closed_at TEXT,
    closed_by INTEGER REFERENCES users(id),
    UNIQUE (organisation_id, number)
);
INSERT INTO document_merge_requests_v2 (id, organisation_id, number, document_id, from_document_id, from_branch_id, to_branch_id, title, description, status, revision_id, created_at, created_by, updated_at, closed_at, closed_by)
SELECT id, organisation_id, number, document_id, from_document_id, from_branch_id, to_branch_id, title, description, status, revision_id, created_at, created_by, updated_at, closed_at, closed_by FROM document_merge_requests;
DROP TABLE document_merge_requests;
ALTER TABLE document_merge_requests_v2 RENAME TO document_merge_requests;
CREATE INDEX document_merge_requests_document ON document_merge_requests(document_id, number);
