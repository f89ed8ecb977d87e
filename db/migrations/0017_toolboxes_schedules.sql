-- Toolbox meetings and the schedules (time slots with invitees) they and work
-- items are held in. Order columns are dense 1..n within their parent.

CREATE TABLE toolboxes (
    id INTEGER PRIMARY KEY,
    organisation_id INTEGER NOT NULL REFERENCES organisations(id),
    workgroup_id INTEGER REFERENCES workgroups(id),
    location_id INTEGER REFERENCES locations(id),
    title TEXT NOT NULL,
    is_template BOOLEAN NOT NULL DEFAULT 0,
    totp_secret TEXT NOT NULL,
    latitude REAL,
    longitude REAL,
    within_geofence BOOLEAN,
    conducted_at TEXT,
    conducted_by INTEGER REFERENCES users(id),
    archived_at TEXT,
    archived_by INTEGER REFERENCES users(id),
    created_at TEXT NOT NULL,
    created_by INTEGER NOT NULL REFERENCES users(id),
    updated_at TEXT NOT NULL,
    updated_by INTEGER NOT NULL REFERENCES users(id)
);
CREATE INDEX toolboxes_organisation ON toolboxes(organisation_id, id);

CREATE TABLE toolbox_sections (
    id INTEGER PRIMARY KEY,
    organisation_id INTEGER NOT NULL REFERENCES organisations(id),
    toolbox_id INTEGER NOT NULL REFERENCES toolboxes(id) ON DELETE CASCADE,
    title TEXT NOT NULL,
    position INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    created_by INTEGER NOT NULL REFERENCES users(id),
    updated_at TEXT NOT NULL,
    updated_by INTEGER NOT NULL REFERENCES users(id)
);
CREATE INDEX toolbox_sections_toolbox ON toolbox_sections(toolbox_id, position);

CREATE TABLE toolbox_topics (
    id INTEGER PRIMARY KEY,
    organisation_id INTEGER NOT NULL REFERENCES organisations(id),
    toolbox_id INTEGER NOT NULL REFERENCES toolboxes(id) ON DELETE CASCADE,
    section_id INTEGER REFERENCES toolbox_sections(id),
    body TEXT NOT NULL DEFAULT '',
    comments TEXT NOT NULL DEFAULT '',
    review_response BOOLEAN,
    position INTEGER NOT NULL,
    reviewed_at TEXT,
    reviewed_by INTEGER REFERENCES users(id),
    created_at TEXT NOT NULL,
    created_by INTEGER NOT NULL REFERENCES users(id),
    updated_at TEXT NOT NULL,
    updated_by INTEGER NOT NULL REFERENCES users(id)
);
CREATE INDEX toolbox_topics_toolbox ON toolbox_topics(toolbox_id, section_id, position);

-- A schedule holds at most one toolbox (toolbox_id) and may belong to a work
-- item (work_item_id: that area's table comes later, so no foreign key).
CREATE TABLE schedules (
    id INTEGER PRIMARY KEY,
    organisation_id INTEGER NOT NULL REFERENCES organisations(id),
    work_item_id INTEGER,
    toolbox_id INTEGER REFERENCES toolboxes(id),
    scheduled_start_at TEXT NOT NULL,
    scheduled_finish_at TEXT NOT NULL,
    actual_start_at TEXT,
    actual_finish_at TEXT,
    created_at TEXT NOT NULL,
    created_by INTEGER NOT NULL REFERENCES users(id),
    updated_at TEXT NOT NULL,
    updated_by INTEGER NOT NULL REFERENCES users(id)
);
CREATE INDEX schedules_organisation ON schedules(organisation_id, scheduled_start_at);
CREATE INDEX schedules_toolbox ON schedules(toolbox_id) WHERE toolbox_id IS NOT NULL;
CREATE INDEX schedules_work_item ON schedules(work_item_id) WHERE work_item_id IS NOT NULL;

CREATE TABLE schedule_invitees (
    schedule_id INTEGER NOT NULL REFERENCES schedules(id) ON DELETE CASCADE,
    user_id INTEGER NOT NULL REFERENCES users(id),
    status TEXT NOT NULL CHECK (status IN ('invited', 'checked_in', 'attending', 'declined')),
    latitude REAL,
    longitude REAL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (schedule_id, user_id)
) WITHOUT ROWID;
CREATE INDEX schedule_invitees_user ON schedule_invitees(user_id);

-- One signature on a toolbox. The signer may be a user (user_id) or a visitor
-- known only by the details captured here.
CREATE TABLE toolbox_users (
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
    signed_method TEXT NOT NULL CHECK (signed_method IN ('declaration', 'signature', 'toolbox_qr', 'user_qr', 'app')),
    signed_by INTEGER REFERENCES users(id)
);
CREATE INDEX toolbox_users_toolbox ON toolbox_users(toolbox_id, id);
CREATE UNIQUE INDEX toolbox_users_once ON toolbox_users(toolbox_id, user_id) WHERE user_id IS NOT NULL;

-- TOTP codes already accepted (each code is good once), keyed by the secret's
-- owner and time step; rows older than the skew window are swept.
CREATE TABLE signing_code_uses (
    key TEXT PRIMARY KEY,
    used_at TEXT NOT NULL
) WITHOUT ROWID;
