-- Core: settings, accounts, sign-in, files, outbox, organisations and the
-- permission model every area resolves access through.

CREATE TABLE meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

CREATE TABLE signing_keys (
    kid TEXT PRIMARY KEY,
    private_key_pem TEXT NOT NULL,
    created_at TEXT NOT NULL
);

CREATE TABLE users (
    id INTEGER PRIMARY KEY,
    email TEXT NOT NULL COLLATE NOCASE,
    password_hash TEXT NOT NULL DEFAULT '',
    first_name TEXT NOT NULL DEFAULT '',
    last_name TEXT NOT NULL DEFAULT '',
    phone_number TEXT NOT NULL DEFAULT '',
    phone_number_confirmed BOOLEAN NOT NULL DEFAULT 0,
    position TEXT NOT NULL DEFAULT '',
    company TEXT NOT NULL DEFAULT '',
    avatar_hash TEXT,
    badges INTEGER NOT NULL DEFAULT 0,
    initials TEXT NOT NULL DEFAULT '',
    language TEXT NOT NULL DEFAULT 'en',
    timezone_code TEXT NOT NULL DEFAULT 'UTC',
    allow_connections_from INTEGER NOT NULL DEFAULT 1,
    allow_shares_from INTEGER NOT NULL DEFAULT 1,
    email_notifications BOOLEAN NOT NULL DEFAULT 1,
    sms_notifications BOOLEAN NOT NULL DEFAULT 0,
    email_newsletter BOOLEAN NOT NULL DEFAULT 0,
    signature TEXT NOT NULL DEFAULT '',
    is_bot BOOLEAN NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    deleted_at TEXT
);
-- One live account per sign-in e-mail; deleted accounts free their address.
CREATE UNIQUE INDEX users_email_live ON users(email) WHERE deleted_at IS NULL;

-- Accounts first seen through an external OpenID issuer.
CREATE TABLE user_identities (
    issuer TEXT NOT NULL,
    subject TEXT NOT NULL,
    user_id INTEGER NOT NULL REFERENCES users(id),
    created_at TEXT NOT NULL,
    PRIMARY KEY (issuer, subject)
);

CREATE TABLE user_emails (
    id INTEGER PRIMARY KEY,
    user_id INTEGER NOT NULL REFERENCES users(id),
    email TEXT NOT NULL COLLATE NOCASE,
    is_primary BOOLEAN NOT NULL DEFAULT 0,
    is_verified BOOLEAN NOT NULL DEFAULT 0,
    token_hash TEXT,
    token_expires_at TEXT,
    created_at TEXT NOT NULL
);
CREATE UNIQUE INDEX user_emails_user_email ON user_emails(user_id, email);
CREATE INDEX user_emails_email ON user_emails(email);

CREATE TABLE refresh_tokens (
    token_hash TEXT PRIMARY KEY,
    user_id INTEGER NOT NULL REFERENCES users(id),
    expires_at TEXT NOT NULL,
    created_at TEXT NOT NULL
, family_id INTEGER NOT NULL DEFAULT 0, used_at TEXT);
CREATE INDEX refresh_tokens_user ON refresh_tokens(user_id);
CREATE INDEX refresh_tokens_family ON refresh_tokens(family_id);

-- Uploaded files, content-addressed by SHA-256, so the one database file
-- holds every byte and backup copies everything.
CREATE TABLE blobs (
    hash TEXT PRIMARY KEY,
    content_type TEXT NOT NULL,
    size INTEGER NOT NULL,
    data BLOB NOT NULL,
    created_at TEXT NOT NULL
);

-- Mail and SMS written here (and to the log) when no SMTP server is set.
CREATE TABLE outbox (
    id INTEGER PRIMARY KEY,
    kind TEXT NOT NULL CHECK (kind IN ('email', 'sms')),
    recipient TEXT NOT NULL,
    subject TEXT NOT NULL,
    body TEXT NOT NULL,
    created_at TEXT NOT NULL
);
-- Each mail's HTML part and its one link into the app (issue 36).
ALTER TABLE outbox ADD COLUMN html TEXT NOT NULL DEFAULT '';
ALTER TABLE outbox ADD COLUMN link TEXT NOT NULL DEFAULT '';

CREATE TABLE organisations (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    location TEXT NOT NULL DEFAULT '',
    code TEXT NOT NULL DEFAULT '',
    default_branch_name TEXT NOT NULL DEFAULT 'main',
    icon_hash TEXT,
    banner_hash TEXT,
    logo_hash TEXT,
    storage_usage INTEGER NOT NULL DEFAULT 0,
    owned_by INTEGER NOT NULL REFERENCES users(id),
    is_protected BOOLEAN NOT NULL DEFAULT 0,
    is_verified BOOLEAN NOT NULL DEFAULT 0,
    member_approval BOOLEAN NOT NULL DEFAULT 0,
    restrict_email_domain BOOLEAN NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    deleted_at TEXT,
    deleted_by INTEGER REFERENCES users(id)
);
CREATE INDEX organisations_owner ON organisations(owned_by);

CREATE TABLE organisation_members (
    organisation_id INTEGER NOT NULL REFERENCES organisations(id),
    user_id INTEGER NOT NULL REFERENCES users(id),
    pending BOOLEAN NOT NULL DEFAULT 0,
    joined_at TEXT NOT NULL,
    notification_email_id INTEGER REFERENCES user_emails(id),
    PRIMARY KEY (organisation_id, user_id)
) WITHOUT ROWID;
CREATE INDEX organisation_members_user ON organisation_members(user_id);

-- Roles, ranked by sort_order (0 highest). The @everyone role is a row whose
-- id is the organisation's id; it always lists last.
CREATE TABLE roles (
    id INTEGER PRIMARY KEY,
    organisation_id INTEGER NOT NULL REFERENCES organisations(id),
    name TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    sort_order INTEGER NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX roles_organisation ON roles(organisation_id, sort_order);

CREATE TABLE member_roles (
    organisation_id INTEGER NOT NULL REFERENCES organisations(id),
    user_id INTEGER NOT NULL REFERENCES users(id),
    role_id INTEGER NOT NULL REFERENCES roles(id) ON DELETE CASCADE,
    PRIMARY KEY (organisation_id, user_id, role_id)
) WITHOUT ROWID;
CREATE INDEX member_roles_role ON member_roles(role_id);

-- Explicit grants as two bitmasks over the permission catalogue. scope_id is
-- the organisation, project or package the grant applies to; target_id is a
-- role, a user, or the organisation id for @everyone.
-- Rebuilt by 0025 (fleets) to admit the fleet layer and the ones named next,
-- and by 0070 to spell its CHECKs as equalities (an IN list of three or more
-- values builds a temporary b-tree on every row written).
CREATE TABLE "permission_grants" (
    organisation_id INTEGER NOT NULL REFERENCES organisations(id),
    scope_type TEXT NOT NULL CHECK (scope_type = 'organisation' OR scope_type = 'project' OR scope_type = 'package'
        OR scope_type = 'fleet' OR scope_type = 'workgroup' OR scope_type = 'document'),
    scope_id INTEGER NOT NULL,
    target_type TEXT NOT NULL CHECK (target_type = 'role' OR target_type = 'user' OR target_type = 'organisation'),
    target_id INTEGER NOT NULL,
    allow_mask INTEGER NOT NULL DEFAULT 0,
    deny_mask INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (scope_id, target_id)
) WITHOUT ROWID;

-- Domains an organisation claims: verified by a DNS TXT challenge, approved
-- for restrict_email_domain and invite auto-add.
CREATE TABLE organisation_domains (
    id INTEGER PRIMARY KEY,
    organisation_id INTEGER NOT NULL REFERENCES organisations(id),
    domain TEXT NOT NULL COLLATE NOCASE,
    challenge_token TEXT NOT NULL,
    is_verified BOOLEAN NOT NULL DEFAULT 0,
    is_approved BOOLEAN NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    UNIQUE (organisation_id, domain)
);

-- == 0002_users (users area adds its tables here) ==
-- Users area: one-time secrets other than e-mail verification tokens, TOTP
-- secrets for the signing flows, and the avatar lookup.

-- One pending secret per user and purpose, stored hashed: 'phone' is the SMS
-- code for the number in subject, 'delete' confirms account deletion.
CREATE TABLE user_tokens (
    user_id INTEGER NOT NULL REFERENCES users(id),
    purpose TEXT NOT NULL CHECK (purpose IN ('phone', 'delete')),
    token_hash TEXT NOT NULL,
    subject TEXT NOT NULL DEFAULT '',
    attempts INTEGER NOT NULL DEFAULT 0,
    expires_at TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (user_id, purpose)
) WITHOUT ROWID;

-- Password reset links: one outstanding per account, the token hashed;
-- using it deletes the row (single use), asking again replaces it.
CREATE TABLE password_resets (
    user_id INTEGER PRIMARY KEY REFERENCES users(id),
    token_hash TEXT NOT NULL UNIQUE,
    expires_at TEXT NOT NULL,
    created_at TEXT NOT NULL
);

-- The TOTP secret the user's phone app holds (PUT /users/@me/qr/token). It
-- must stay readable to check codes; it lives 24 hours.
CREATE TABLE user_totp_secrets (
    user_id INTEGER PRIMARY KEY REFERENCES users(id),
    secret TEXT NOT NULL,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL
);
CREATE INDEX user_totp_secrets_expiry ON user_totp_secrets(expires_at);

-- GET /users/avatar/{hash} serves a blob only while it is someone's avatar.
CREATE INDEX users_avatar_hash ON users(avatar_hash) WHERE avatar_hash IS NOT NULL;


-- == 0003_organisations (organisations area adds its tables here) ==

-- A banned user is no member and cannot use an invite of the organisation.
CREATE TABLE "organisation_bans" (
    organisation_id INTEGER NOT NULL REFERENCES organisations(id),
    user_id INTEGER NOT NULL,
    reason TEXT NOT NULL DEFAULT '',
    banned_at TEXT NOT NULL,
    banned_by INTEGER NOT NULL REFERENCES users(id),
    was_member BOOLEAN NOT NULL DEFAULT 0,
    PRIMARY KEY (organisation_id, user_id)
) WITHOUT ROWID;

-- Invites are addressed by a random code. An e-mail invite is for one
-- person and single use; a code or domain invite may be used by many.
-- Rebuilt by 0071 to spell its status CHECK as equalities (an IN list of
-- three or more values builds a temporary b-tree on every row written).
CREATE TABLE "invites" (
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
CREATE INDEX invites_organisation ON invites(organisation_id);


-- == 0004_projects (projects area adds its tables here) ==
-- Projects with their milestones and packages. Counters are kept on the rows
-- so lists never count per row; later areas (work items, documents) update
-- the work item and document counters.
CREATE TABLE projects (
    id INTEGER PRIMARY KEY,
    organisation_id INTEGER NOT NULL REFERENCES organisations(id),
    code TEXT NOT NULL DEFAULT '',
    name TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    readme TEXT NOT NULL DEFAULT '',
    status TEXT NOT NULL CHECK (status IN ('open', 'closed')),
    open_milestone_count INTEGER NOT NULL DEFAULT 0,
    closed_milestone_count INTEGER NOT NULL DEFAULT 0,
    open_work_item_count INTEGER NOT NULL DEFAULT 0,
    closed_work_item_count INTEGER NOT NULL DEFAULT 0,
    document_count INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    created_by INTEGER NOT NULL REFERENCES users(id),
    closed_at TEXT,
    closed_by INTEGER REFERENCES users(id)
);
CREATE INDEX projects_organisation ON projects(organisation_id);
-- Quota counts and status filters read (organisation, status) in id order.
CREATE INDEX projects_organisation_status ON projects(organisation_id, status);

-- Projects per organisation and status, kept by triggers whatever writes the
-- projects, so list totals and the quota read a row instead of counting.
CREATE TABLE project_status_counts (
    organisation_id INTEGER NOT NULL,
    status TEXT NOT NULL,
    n INTEGER NOT NULL,
    PRIMARY KEY (organisation_id, status)
) WITHOUT ROWID;
CREATE TRIGGER projects_count_insert AFTER INSERT ON projects BEGIN
    INSERT INTO project_status_counts(organisation_id, status, n) VALUES (NEW.organisation_id, NEW.status, 1)
    ON CONFLICT(organisation_id, status) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER projects_count_update AFTER UPDATE OF organisation_id, status ON projects
WHEN OLD.organisation_id <> NEW.organisation_id OR OLD.status <> NEW.status BEGIN
    UPDATE project_status_counts SET n = n - 1 WHERE organisation_id = OLD.organisation_id AND status = OLD.status;
    INSERT INTO project_status_counts(organisation_id, status, n) VALUES (NEW.organisation_id, NEW.status, 1)
    ON CONFLICT(organisation_id, status) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER projects_count_delete AFTER DELETE ON projects BEGIN
    UPDATE project_status_counts SET n = n - 1 WHERE organisation_id = OLD.organisation_id AND status = OLD.status;
END;

CREATE TABLE project_milestones (
    id INTEGER PRIMARY KEY,
    organisation_id INTEGER NOT NULL REFERENCES organisations(id),
    project_id INTEGER NOT NULL REFERENCES projects(id),
    name TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    due_at TEXT,
    status TEXT NOT NULL CHECK (status IN ('open', 'closed')),
    open_work_item_count INTEGER NOT NULL DEFAULT 0,
    closed_work_item_count INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    created_by INTEGER NOT NULL REFERENCES users(id),
    closed_at TEXT,
    closed_by INTEGER REFERENCES users(id)
);
CREATE INDEX project_milestones_project ON project_milestones(project_id, status);

CREATE TABLE project_packages (
    id INTEGER PRIMARY KEY,
    organisation_id INTEGER NOT NULL REFERENCES organisations(id),
    project_id INTEGER NOT NULL REFERENCES projects(id),
    code TEXT NOT NULL DEFAULT '',
    name TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    enabled BOOLEAN NOT NULL DEFAULT 1,
    created_at TEXT NOT NULL,
    created_by INTEGER NOT NULL REFERENCES users(id)
);
CREATE INDEX project_packages_project ON project_packages(project_id);

-- Project and package lists look up the grants that apply to one caller in
-- one scope type (their own, their roles', @everyone's) without reading every
-- grant of the organisation. The partial index finds the few grants that deny
-- something, which are all that can hide a project when the organisation
-- layer already allows viewing.
CREATE INDEX permission_grants_target ON permission_grants(organisation_id, scope_type, target_id);
CREATE INDEX permission_grants_denying ON permission_grants(organisation_id, scope_type, target_id) WHERE deny_mask <> 0;


CREATE TABLE workgroups (
    id INTEGER PRIMARY KEY,
    organisation_id INTEGER NOT NULL REFERENCES organisations(id),
    name TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    created_by INTEGER NOT NULL REFERENCES users(id)
);
CREATE INDEX workgroups_organisation ON workgroups(organisation_id);

CREATE TABLE teams (
    id INTEGER PRIMARY KEY,
    organisation_id INTEGER NOT NULL REFERENCES organisations(id),
    workgroup_id INTEGER NOT NULL REFERENCES workgroups(id),
    name TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    color TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX teams_workgroup ON teams(workgroup_id);

CREATE TABLE team_members (
    team_id INTEGER NOT NULL REFERENCES teams(id),
    user_id INTEGER NOT NULL REFERENCES users(id),
    organisation_id INTEGER NOT NULL REFERENCES organisations(id),
    is_leader BOOLEAN NOT NULL DEFAULT 0,
    joined_at TEXT NOT NULL,
    PRIMARY KEY (team_id, user_id)
) WITHOUT ROWID;
CREATE INDEX team_members_user ON team_members(organisation_id, user_id);

CREATE TABLE systems (
    id INTEGER PRIMARY KEY,
    organisation_id INTEGER NOT NULL REFERENCES organisations(id),
    number INTEGER NOT NULL,
    code TEXT NOT NULL DEFAULT '',
    name TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    root_prefix TEXT NOT NULL DEFAULT '',
    root_id INTEGER REFERENCES systems(id),
    parent_id INTEGER REFERENCES systems(id),
    unused BOOLEAN NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    created_by INTEGER NOT NULL REFERENCES users(id),
    UNIQUE (organisation_id, number)
);
CREATE INDEX systems_root ON systems(organisation_id, root_id);

CREATE TABLE organisation_counters (
    organisation_id INTEGER NOT NULL REFERENCES organisations(id),
    name TEXT NOT NULL,
    last_number INTEGER NOT NULL,
    PRIMARY KEY (organisation_id, name)
) WITHOUT ROWID;

CREATE TABLE prefixes (
    id INTEGER PRIMARY KEY,
    organisation_id INTEGER NOT NULL REFERENCES organisations(id),
    description TEXT NOT NULL DEFAULT '',
    number_format TEXT NOT NULL,
    number_digits INTEGER,
    last_number INTEGER NOT NULL DEFAULT 0,
    unique_number BOOLEAN NOT NULL DEFAULT 0,
    enabled BOOLEAN NOT NULL DEFAULT 1,
    created_at TEXT NOT NULL
);
CREATE INDEX prefixes_organisation ON prefixes(organisation_id);

CREATE TABLE locations (
    id INTEGER PRIMARY KEY,
    organisation_id INTEGER NOT NULL REFERENCES organisations(id),
    code TEXT NOT NULL DEFAULT '',
    name TEXT NOT NULL,
    colour TEXT NOT NULL,
    latitude REAL,
    longitude REAL,
    radius REAL,
    address TEXT NOT NULL DEFAULT '',
    delivery BOOLEAN NOT NULL DEFAULT 0,
    timezone_code TEXT,
    created_at TEXT NOT NULL
);
CREATE INDEX locations_organisation ON locations(organisation_id);

CREATE TABLE sub_locations (
    id INTEGER PRIMARY KEY,
    organisation_id INTEGER NOT NULL REFERENCES organisations(id),
    location_id INTEGER NOT NULL REFERENCES locations(id),
    code TEXT NOT NULL DEFAULT '',
    name TEXT NOT NULL,
    asset_capacity INTEGER,
    enabled BOOLEAN NOT NULL DEFAULT 1,
    created_at TEXT NOT NULL
);
CREATE INDEX sub_locations_location ON sub_locations(location_id);

CREATE TABLE disciplines (
    id INTEGER PRIMARY KEY,
    organisation_id INTEGER NOT NULL REFERENCES organisations(id),
    code TEXT NOT NULL DEFAULT '',
    name TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    enabled BOOLEAN NOT NULL DEFAULT 1,
    created_at TEXT NOT NULL
);
CREATE INDEX disciplines_organisation ON disciplines(organisation_id);

CREATE TABLE integrations (
    id INTEGER PRIMARY KEY,
    organisation_id INTEGER NOT NULL REFERENCES organisations(id),
    item_type TEXT NOT NULL,
    provider TEXT NOT NULL,
    enabled BOOLEAN NOT NULL DEFAULT 1,
    url TEXT NOT NULL DEFAULT '',
    secret TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX integrations_organisation ON integrations(organisation_id, item_type);

-- Rebuilt by 0071 to spell its status CHECK as equalities (an IN list of
-- three or more values builds a temporary b-tree on every row written).
CREATE TABLE "integration_deliveries" (
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
CREATE INDEX integration_deliveries_due ON integration_deliveries(status, next_attempt_at);
CREATE INDEX integration_deliveries_integration ON integration_deliveries(integration_id, id);

CREATE TABLE organisation_blobs (
    organisation_id INTEGER NOT NULL REFERENCES organisations(id),
    hash TEXT NOT NULL REFERENCES blobs(hash),
    refs INTEGER NOT NULL,
    PRIMARY KEY (organisation_id, hash)
) WITHOUT ROWID;

CREATE TABLE inductions (
    id INTEGER PRIMARY KEY,
    organisation_id INTEGER NOT NULL REFERENCES organisations(id),
    revision_id INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    created_by INTEGER NOT NULL REFERENCES users(id),
    updated_at TEXT NOT NULL,
    updated_by INTEGER NOT NULL REFERENCES users(id)
);
CREATE INDEX inductions_organisation ON inductions(organisation_id);

CREATE TABLE induction_revisions (
    id INTEGER PRIMARY KEY,
    organisation_id INTEGER NOT NULL REFERENCES organisations(id),
    induction_id INTEGER NOT NULL REFERENCES inductions(id),
    hash TEXT NOT NULL,
    name TEXT NOT NULL,
    revision TEXT NOT NULL DEFAULT '',
    description TEXT NOT NULL DEFAULT '',
    valid_for INTEGER NOT NULL DEFAULT 0,
    content_type TEXT,
    length INTEGER,
    file_name TEXT,
    file_hash TEXT,
    questions TEXT NOT NULL DEFAULT '[]',
    updated_at TEXT NOT NULL,
    updated_by INTEGER NOT NULL REFERENCES users(id)
);
CREATE INDEX induction_revisions_induction ON induction_revisions(induction_id, id);
CREATE INDEX induction_revisions_hash ON induction_revisions(induction_id, hash);

CREATE TABLE user_inductions (
    id INTEGER PRIMARY KEY,
    organisation_id INTEGER NOT NULL REFERENCES organisations(id),
    induction_id INTEGER NOT NULL REFERENCES inductions(id),
    user_id INTEGER NOT NULL REFERENCES users(id),
    due_at TEXT,
    created_at TEXT NOT NULL,
    created_by INTEGER NOT NULL REFERENCES users(id),
    UNIQUE (induction_id, user_id)
);
CREATE INDEX user_inductions_user ON user_inductions(user_id);

CREATE TABLE induction_records (
    id INTEGER PRIMARY KEY,
    organisation_id INTEGER NOT NULL REFERENCES organisations(id),
    induction_id INTEGER NOT NULL REFERENCES inductions(id),
    revision_id INTEGER NOT NULL REFERENCES induction_revisions(id),
    induction_hash TEXT NOT NULL,
    user_id INTEGER NOT NULL REFERENCES users(id),
    email TEXT NOT NULL,
    first_name TEXT NOT NULL,
    last_name TEXT NOT NULL,
    position TEXT NOT NULL,
    company TEXT NOT NULL,
    inducted_at TEXT NOT NULL,
    expires_at TEXT,
    answers TEXT NOT NULL
);
CREATE INDEX induction_records_revision ON induction_records(induction_id, induction_hash, inducted_at);
CREATE INDEX induction_records_user ON induction_records(user_id, induction_id);

CREATE TABLE induction_reminders (
    user_induction_id INTEGER NOT NULL REFERENCES user_inductions(id) ON DELETE CASCADE,
    kind TEXT NOT NULL,
    day TEXT NOT NULL,
    PRIMARY KEY (user_induction_id, kind, day)
) WITHOUT ROWID;


-- == 0020_work_item_types (work items area) ==
-- Work item types (issue 14): an organisation's kinds of work item. A type
-- with a prefix numbers its work items from that prefix (drawNumber);
-- without one they take the organisation's work item counter.
CREATE TABLE work_item_types (
    id INTEGER PRIMARY KEY,
    organisation_id INTEGER NOT NULL REFERENCES organisations(id),
    name TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    colour TEXT NOT NULL,
    prefix_id INTEGER REFERENCES prefixes(id),
    enabled BOOLEAN NOT NULL DEFAULT 1,
    created_at TEXT NOT NULL
);
CREATE INDEX work_item_types_organisation ON work_item_types(organisation_id);

CREATE TABLE oauth_codes (
    code_hash TEXT PRIMARY KEY,
    client_id TEXT NOT NULL,
    redirect_uri TEXT NOT NULL,
    user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    code_challenge TEXT NOT NULL,
    nonce TEXT NOT NULL,
    family_id INTEGER NOT NULL,
    expires_at TEXT NOT NULL,
    used_at TEXT,
    created_at TEXT NOT NULL
);
CREATE INDEX oauth_codes_expires ON oauth_codes(expires_at);

-- == 0025_fleets_asset_catalogue (issue 15; docs/assets.md) ==

CREATE TABLE fleets (
    id INTEGER PRIMARY KEY,
    organisation_id INTEGER NOT NULL REFERENCES organisations(id),
    name TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    prefix_id INTEGER REFERENCES prefixes(id),
    created_at TEXT NOT NULL,
    created_by INTEGER NOT NULL REFERENCES users(id)
);
CREATE INDEX fleets_organisation ON fleets(organisation_id);

CREATE TABLE asset_statuses (
    id INTEGER PRIMARY KEY,
    organisation_id INTEGER NOT NULL REFERENCES organisations(id),
    name TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    active BOOLEAN NOT NULL DEFAULT 1,
    created_at TEXT NOT NULL
);
CREATE INDEX asset_statuses_organisation ON asset_statuses(organisation_id);

CREATE TABLE asset_zones (
    id INTEGER PRIMARY KEY,
    organisation_id INTEGER NOT NULL REFERENCES organisations(id),
    name TEXT NOT NULL,
    code TEXT NOT NULL DEFAULT '',
    description TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL
);
CREATE INDEX asset_zones_organisation ON asset_zones(organisation_id);

-- type: 0 text, 1 number, 2 boolean, 3 date, 4 enum, 5 user, 6 location.
CREATE TABLE asset_fields (
    id INTEGER PRIMARY KEY,
    organisation_id INTEGER NOT NULL REFERENCES organisations(id),
    name TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    type INTEGER NOT NULL CHECK (type BETWEEN 0 AND 6),
    units TEXT,
    created_at TEXT NOT NULL
);
CREATE INDEX asset_fields_organisation ON asset_fields(organisation_id);

CREATE TABLE asset_field_enum_values (
    id INTEGER PRIMARY KEY,
    organisation_id INTEGER NOT NULL REFERENCES organisations(id),
    asset_field_id INTEGER NOT NULL REFERENCES asset_fields(id),
    value TEXT NOT NULL,
    position INTEGER NOT NULL,
    UNIQUE (asset_field_id, value)
);

-- ephemerality: 0 single (types of assets), 1 temporary, 2 permanent (types
-- of asset groups).
CREATE TABLE asset_types (
    id INTEGER PRIMARY KEY,
    organisation_id INTEGER NOT NULL REFERENCES organisations(id),
    fleet_id INTEGER REFERENCES fleets(id),
    prefix_id INTEGER REFERENCES prefixes(id),
    ephemerality INTEGER NOT NULL CHECK (ephemerality BETWEEN 0 AND 2),
    name TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL
);
CREATE INDEX asset_types_organisation ON asset_types(organisation_id, ephemerality);
CREATE INDEX asset_types_fleet ON asset_types(fleet_id) WHERE fleet_id IS NOT NULL;

CREATE TABLE asset_type_fields (
    type_id INTEGER NOT NULL REFERENCES asset_types(id),
    field_id INTEGER NOT NULL REFERENCES asset_fields(id),
    organisation_id INTEGER NOT NULL REFERENCES organisations(id),
    PRIMARY KEY (type_id, field_id)
) WITHOUT ROWID;
CREATE INDEX asset_type_fields_field ON asset_type_fields(field_id);

CREATE TABLE asset_type_zones (
    type_id INTEGER NOT NULL REFERENCES asset_types(id),
    zone_id INTEGER NOT NULL REFERENCES asset_zones(id),
    organisation_id INTEGER NOT NULL REFERENCES organisations(id),
    PRIMARY KEY (type_id, zone_id)
) WITHOUT ROWID;
CREATE INDEX asset_type_zones_zone ON asset_type_zones(zone_id);

-- Allocation pools: an asset allocated to a full subscription is refused
-- (429). allocated is kept in the transaction that allocates.
CREATE TABLE asset_subscriptions (
    id INTEGER PRIMARY KEY,
    organisation_id INTEGER NOT NULL REFERENCES organisations(id),
    name TEXT NOT NULL,
    capacity INTEGER NOT NULL,
    allocated INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL
);
CREATE INDEX asset_subscriptions_organisation ON asset_subscriptions(organisation_id);

-- Asset groups, assets included: every asset IS its single group (same id,
-- ephemerality 0), so "every asset is referred to by its asset group object
-- id" (spec) and logs, fields and work items hang off one table. Temporary
-- and permanent groups hold assets through asset_group_members.
-- ephemerality is the type's, fixed at creation.
CREATE TABLE asset_groups (
    id INTEGER PRIMARY KEY,
    organisation_id INTEGER NOT NULL REFERENCES organisations(id),
    type_id INTEGER NOT NULL REFERENCES asset_types(id),
    ephemerality INTEGER NOT NULL CHECK (ephemerality BETWEEN 0 AND 2),
    fleet_id INTEGER REFERENCES fleets(id),
    status_id INTEGER REFERENCES asset_statuses(id),
    location_id INTEGER REFERENCES locations(id),
    sub_location_id INTEGER REFERENCES sub_locations(id),
    subscription_id INTEGER REFERENCES asset_subscriptions(id),
    prefix_id INTEGER REFERENCES prefixes(id),
    number INTEGER,
    formatted_number TEXT,
    name TEXT NOT NULL,
    -- lower-cased, accents kept, runs of space as one: the name filter
    -- matches its prefix through the index below.
    normalised_name TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    active BOOLEAN NOT NULL DEFAULT 1,
    -- kept by the work items area (issue 14) on every work item change.
    open_work_item_count INTEGER NOT NULL DEFAULT 0,
    closed_work_item_count INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    created_by INTEGER NOT NULL REFERENCES users(id),
    updated_at TEXT NOT NULL,
    updated_by INTEGER NOT NULL REFERENCES users(id)
);
CREATE INDEX asset_groups_organisation ON asset_groups(organisation_id, ephemerality, normalised_name);
CREATE INDEX asset_groups_fleet ON asset_groups(fleet_id, ephemerality) WHERE fleet_id IS NOT NULL;
CREATE INDEX asset_groups_number ON asset_groups(organisation_id, formatted_number) WHERE formatted_number IS NOT NULL;
CREATE INDEX asset_groups_prefix_number ON asset_groups(prefix_id, number) WHERE prefix_id IS NOT NULL;
CREATE INDEX asset_groups_sub_location ON asset_groups(sub_location_id) WHERE sub_location_id IS NOT NULL;
CREATE INDEX asset_groups_type ON asset_groups(type_id);

-- Assets of temporary and permanent groups, position 0..n-1 kept dense.
CREATE TABLE asset_group_members (
    group_id INTEGER NOT NULL REFERENCES asset_groups(id),
    asset_id INTEGER NOT NULL REFERENCES asset_groups(id),
    organisation_id INTEGER NOT NULL REFERENCES organisations(id),
    position INTEGER NOT NULL,
    PRIMARY KEY (group_id, asset_id)
) WITHOUT ROWID;
CREATE INDEX asset_group_members_asset ON asset_group_members(asset_id);

-- Field values of a group (an asset's are its single group's): value is
-- the JSON value, checked against the field's type when written.
CREATE TABLE asset_field_values (
    group_id INTEGER NOT NULL REFERENCES asset_groups(id),
    field_id INTEGER NOT NULL REFERENCES asset_fields(id),
    organisation_id INTEGER NOT NULL REFERENCES organisations(id),
    value TEXT NOT NULL,
    units TEXT,
    PRIMARY KEY (group_id, field_id)
) WITHOUT ROWID;
CREATE INDEX asset_field_values_field ON asset_field_values(field_id);

CREATE TABLE asset_logs (
    id INTEGER PRIMARY KEY,
    organisation_id INTEGER NOT NULL REFERENCES organisations(id),
    asset_group_id INTEGER NOT NULL REFERENCES asset_groups(id),
    type TEXT NOT NULL CHECK (type IN ('comment')),
    log TEXT NOT NULL,
    log_hash TEXT NOT NULL,
    embed TEXT,
    duration INTEGER,
    latitude REAL,
    longitude REAL,
    logged_at TEXT NOT NULL,
    attachment_id INTEGER,
    attachment_hash TEXT REFERENCES blobs(hash),
    attachment_name TEXT,
    created_at TEXT NOT NULL,
    created_by INTEGER NOT NULL REFERENCES users(id),
    updated_at TEXT NOT NULL,
    updated_by INTEGER NOT NULL REFERENCES users(id),
    CHECK ((latitude IS NULL) = (longitude IS NULL))
);
CREATE INDEX asset_logs_group ON asset_logs(asset_group_id, logged_at);

-- Fleet shares: to an organisation (recipient_organisation_id) or to one
-- user (recipient_user_id). status: 0 pending, 1 accepted, 2 rejected,
-- 3 revoked. work_item_type_id names a type of the work items area.
CREATE TABLE fleet_shares (
    id INTEGER PRIMARY KEY,
    organisation_id INTEGER NOT NULL REFERENCES organisations(id),
    fleet_id INTEGER NOT NULL REFERENCES fleets(id),
    recipient_organisation_id INTEGER REFERENCES organisations(id),
    recipient_user_id INTEGER REFERENCES users(id),
    work_item_type_id INTEGER,
    status INTEGER NOT NULL DEFAULT 0 CHECK (status BETWEEN 0 AND 3),
    shared_by INTEGER NOT NULL REFERENCES users(id),
    created_at TEXT NOT NULL,
    responded_at TEXT,
    responded_by INTEGER REFERENCES users(id),
    CHECK ((recipient_organisation_id IS NULL) <> (recipient_user_id IS NULL))
);
CREATE INDEX fleet_shares_fleet ON fleet_shares(fleet_id);
CREATE INDEX fleet_shares_recipient_org ON fleet_shares(recipient_organisation_id, status) WHERE recipient_organisation_id IS NOT NULL;
CREATE INDEX fleet_shares_recipient_user ON fleet_shares(recipient_user_id, status) WHERE recipient_user_id IS NOT NULL;
CREATE INDEX fleet_shares_owner ON fleet_shares(organisation_id, status);

-- A user's subscriptions to new work items of a fleet (at a location, of a
-- work item type).
CREATE TABLE fleet_subscriptions (
    id INTEGER PRIMARY KEY,
    user_id INTEGER NOT NULL REFERENCES users(id),
    fleet_id INTEGER NOT NULL REFERENCES fleets(id),
    location_id INTEGER REFERENCES locations(id),
    work_item_type_id INTEGER,
    created_at TEXT NOT NULL
);
CREATE INDEX fleet_subscriptions_user ON fleet_subscriptions(user_id, fleet_id);
CREATE INDEX fleet_subscriptions_fleet ON fleet_subscriptions(fleet_id);

-- Toolboxes and schedules (0017)
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

-- Rebuilt by 0071 to spell its status CHECK as equalities (an IN list of
-- three or more values builds a temporary b-tree on every row written); the
-- user_work_items_* triggers on it and reading it were recreated, same text.
CREATE TABLE "schedule_invitees" (
    schedule_id INTEGER NOT NULL REFERENCES schedules(id) ON DELETE CASCADE,
    user_id INTEGER NOT NULL REFERENCES users(id),
    status TEXT NOT NULL CHECK (status = 'invited' OR status = 'checked_in' OR status = 'attending' OR status = 'declined'),
    latitude REAL,
    longitude REAL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (schedule_id, user_id)
) WITHOUT ROWID;
CREATE INDEX schedule_invitees_user ON schedule_invitees(user_id);

-- One signature on a toolbox. The signer may be a user (user_id) or a visitor
-- known only by the details captured here.
-- Rebuilt by 0071 to spell its signed_method CHECK as equalities (an IN list of
-- three or more values builds a temporary b-tree on every row written).
CREATE TABLE "toolbox_users" (
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
CREATE INDEX toolbox_users_toolbox ON toolbox_users(toolbox_id, id);
CREATE UNIQUE INDEX toolbox_users_once ON toolbox_users(toolbox_id, user_id) WHERE user_id IS NOT NULL;

-- TOTP codes already accepted (each code is good once), keyed by the secret's
-- owner and time step; rows older than the skew window are swept.
CREATE TABLE signing_code_uses (
    key TEXT PRIMARY KEY,
    used_at TEXT NOT NULL
) WITHOUT ROWID;
-- == 0021_work_items (work items area) ==
-- Work items (issue 14). Numbers are drawn inside the creating transaction
-- from the type's prefix (prefix_id records which) or from the
-- organisation's "work_item" counter (prefix_id NULL): unique per source.
-- document_id, asset_group_id and fleet_id name rows of areas built
-- elsewhere, so they carry no foreign key here (docs/workitems.md).
CREATE TABLE work_items (
    id INTEGER PRIMARY KEY,
    organisation_id INTEGER NOT NULL REFERENCES organisations(id),
    type_id INTEGER NOT NULL REFERENCES work_item_types(id),
    prefix_id INTEGER REFERENCES prefixes(id),
    number INTEGER NOT NULL,
    formatted_number TEXT NOT NULL,
    title TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    status TEXT NOT NULL CHECK (status IN ('open', 'closed')),
    project_id INTEGER REFERENCES projects(id),
    milestone_id INTEGER REFERENCES project_milestones(id),
    package_id INTEGER REFERENCES project_packages(id),
    document_id INTEGER,
    asset_group_id INTEGER,
    fleet_id INTEGER,
    location_id INTEGER REFERENCES locations(id),
    sub_location_id INTEGER REFERENCES sub_locations(id),
    start_at TEXT,
    finish_at TEXT,
    created_at TEXT NOT NULL,
    created_by INTEGER NOT NULL REFERENCES users(id),
    updated_at TEXT NOT NULL,
    updated_by INTEGER NOT NULL REFERENCES users(id),
    closed_at TEXT,
    closed_by INTEGER REFERENCES users(id)
);
CREATE UNIQUE INDEX work_items_number ON work_items(organisation_id, coalesce(prefix_id, 0), number);
CREATE INDEX work_items_organisation ON work_items(organisation_id, status);
CREATE INDEX work_items_project ON work_items(project_id, status) WHERE project_id IS NOT NULL;

CREATE TABLE work_item_assignees (
    work_item_id INTEGER NOT NULL REFERENCES work_items(id) ON DELETE CASCADE,
    user_id INTEGER NOT NULL REFERENCES users(id),
    PRIMARY KEY (work_item_id, user_id)
) WITHOUT ROWID;
CREATE INDEX work_item_assignees_user ON work_item_assignees(user_id, work_item_id);

-- Followers of a work item, told when its status changes.
CREATE TABLE work_item_subscriptions (
    work_item_id INTEGER NOT NULL REFERENCES work_items(id) ON DELETE CASCADE,
    user_id INTEGER NOT NULL REFERENCES users(id),
    created_at TEXT NOT NULL,
    PRIMARY KEY (work_item_id, user_id)
) WITHOUT ROWID;
CREATE INDEX work_item_subscriptions_user ON work_item_subscriptions(user_id, work_item_id);

-- Open and closed work items per type in a project or milestone (scope_id
-- is either's id): work_item_types_count. These and the projects' and
-- milestones' open/closed columns are kept by the triggers below, whatever
-- writes work_items, so no read ever counts.
CREATE TABLE work_item_type_counts (
    scope_id INTEGER NOT NULL,
    type_id INTEGER NOT NULL,
    open_count INTEGER NOT NULL DEFAULT 0,
    closed_count INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (scope_id, type_id)
) WITHOUT ROWID;

CREATE TRIGGER work_items_count_insert AFTER INSERT ON work_items BEGIN
    UPDATE projects SET open_work_item_count = open_work_item_count + (NEW.status = 'open'),
        closed_work_item_count = closed_work_item_count + (NEW.status = 'closed')
    WHERE id = NEW.project_id;
    UPDATE project_milestones SET open_work_item_count = open_work_item_count + (NEW.status = 'open'),
        closed_work_item_count = closed_work_item_count + (NEW.status = 'closed')
    WHERE id = NEW.milestone_id;
    INSERT INTO work_item_type_counts(scope_id, type_id, open_count, closed_count)
    SELECT s.value, NEW.type_id, NEW.status = 'open', NEW.status = 'closed'
    FROM json_each(json_array(NEW.project_id, NEW.milestone_id)) s WHERE s.value IS NOT NULL
    ON CONFLICT(scope_id, type_id) DO UPDATE SET open_count = open_count + excluded.open_count,
        closed_count = closed_count + excluded.closed_count;
END;

CREATE TRIGGER work_items_count_update AFTER UPDATE OF status, type_id, project_id, milestone_id ON work_items
WHEN OLD.status <> NEW.status OR OLD.type_id <> NEW.type_id
  OR OLD.project_id IS NOT NEW.project_id OR OLD.milestone_id IS NOT NEW.milestone_id BEGIN
    UPDATE projects SET open_work_item_count = open_work_item_count - (OLD.status = 'open'),
        closed_work_item_count = closed_work_item_count - (OLD.status = 'closed')
    WHERE id = OLD.project_id;
    UPDATE project_milestones SET open_work_item_count = open_work_item_count - (OLD.status = 'open'),
        closed_work_item_count = closed_work_item_count - (OLD.status = 'closed')
    WHERE id = OLD.milestone_id;
    UPDATE work_item_type_counts SET open_count = open_count - (OLD.status = 'open'),
        closed_count = closed_count - (OLD.status = 'closed')
    WHERE scope_id IN (OLD.project_id, OLD.milestone_id) AND type_id = OLD.type_id;
    UPDATE projects SET open_work_item_count = open_work_item_count + (NEW.status = 'open'),
        closed_work_item_count = closed_work_item_count + (NEW.status = 'closed')
    WHERE id = NEW.project_id;
    UPDATE project_milestones SET open_work_item_count = open_work_item_count + (NEW.status = 'open'),
        closed_work_item_count = closed_work_item_count + (NEW.status = 'closed')
    WHERE id = NEW.milestone_id;
    INSERT INTO work_item_type_counts(scope_id, type_id, open_count, closed_count)
    SELECT s.value, NEW.type_id, NEW.status = 'open', NEW.status = 'closed'
    FROM json_each(json_array(NEW.project_id, NEW.milestone_id)) s WHERE s.value IS NOT NULL
    ON CONFLICT(scope_id, type_id) DO UPDATE SET open_count = open_count + excluded.open_count,
        closed_count = closed_count + excluded.closed_count;
END;

CREATE TRIGGER work_items_count_delete AFTER DELETE ON work_items BEGIN
    UPDATE projects SET open_work_item_count = open_work_item_count - (OLD.status = 'open'),
        closed_work_item_count = closed_work_item_count - (OLD.status = 'closed')
    WHERE id = OLD.project_id;
    UPDATE project_milestones SET open_work_item_count = open_work_item_count - (OLD.status = 'open'),
        closed_work_item_count = closed_work_item_count - (OLD.status = 'closed')
    WHERE id = OLD.milestone_id;
    UPDATE work_item_type_counts SET open_count = open_count - (OLD.status = 'open'),
        closed_count = closed_count - (OLD.status = 'closed')
    WHERE scope_id IN (OLD.project_id, OLD.milestone_id) AND type_id = OLD.type_id;
END;

-- Location inductions (0018)
CREATE TABLE location_inductions (
    location_id INTEGER NOT NULL REFERENCES locations(id),
    induction_id INTEGER NOT NULL REFERENCES inductions(id),
    organisation_id INTEGER NOT NULL REFERENCES organisations(id),
    created_at TEXT NOT NULL,
    PRIMARY KEY (location_id, induction_id)
) WITHOUT ROWID;
CREATE INDEX location_inductions_induction ON location_inductions(induction_id);

-- Witness records (0019)
CREATE TABLE witness_records (
    id INTEGER PRIMARY KEY,
    organisation_id INTEGER NOT NULL REFERENCES organisations(id),
    object_type TEXT NOT NULL CHECK (object_type IN ('work_item', 'document_revision')),
    object_id INTEGER NOT NULL,
    user_id INTEGER NOT NULL REFERENCES users(id),
    first_name TEXT NOT NULL,
    last_name TEXT NOT NULL,
    email TEXT NOT NULL,
    phone_number TEXT,
    company TEXT NOT NULL DEFAULT '',
    position TEXT NOT NULL DEFAULT '',
    signature TEXT,
    signed_at TEXT NOT NULL
);
CREATE INDEX witness_records_object ON witness_records(object_type, object_id, id);
CREATE UNIQUE INDEX witness_records_once ON witness_records(object_type, object_id, user_id);
-- Documents (issue 12): types, item fields with enum values, documents,
-- the insert-only chunk store of the revision engine (server/docengine),
-- revisions (rows outside the content hash) and branches.
CREATE TABLE document_types (
    id INTEGER PRIMARY KEY,
    organisation_id INTEGER NOT NULL REFERENCES organisations(id),
    name TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    last_number INTEGER NOT NULL DEFAULT 0,
    number_format TEXT NOT NULL DEFAULT '',
    revision_format INTEGER NOT NULL DEFAULT 5,
    created_at TEXT NOT NULL
);
CREATE INDEX document_types_organisation ON document_types(organisation_id);

CREATE TABLE document_fields (
    id INTEGER PRIMARY KEY,
    organisation_id INTEGER NOT NULL REFERENCES organisations(id),
    required BOOLEAN NOT NULL DEFAULT 0,
    name TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    type INTEGER NOT NULL DEFAULT 0,
    units TEXT NOT NULL DEFAULT '',
    multi_line BOOLEAN NOT NULL DEFAULT 0,
    max_length INTEGER,
    default_value TEXT NOT NULL DEFAULT 'null',
    enabled BOOLEAN NOT NULL DEFAULT 1,
    created_at TEXT NOT NULL
);
CREATE INDEX document_fields_organisation ON document_fields(organisation_id);

CREATE TABLE document_field_values (
    id INTEGER PRIMARY KEY,
    field_id INTEGER NOT NULL REFERENCES document_fields(id),
    position INTEGER NOT NULL,
    value TEXT NOT NULL,
    retired BOOLEAN NOT NULL DEFAULT 0,
    updated_at TEXT NOT NULL,
    updated_by INTEGER NOT NULL REFERENCES users(id)
);
CREATE INDEX document_field_values_field ON document_field_values(field_id, retired, position);

CREATE TABLE documents (
    id INTEGER PRIMARY KEY,
    organisation_id INTEGER NOT NULL REFERENCES organisations(id),
    origin_id INTEGER REFERENCES documents(id),
    number INTEGER NOT NULL,
    formatted_number TEXT NOT NULL,
    title TEXT NOT NULL,
    type_id INTEGER REFERENCES document_types(id),
    project_id INTEGER REFERENCES projects(id),
    package_id INTEGER REFERENCES project_packages(id),
    discipline_id INTEGER REFERENCES disciplines(id),
    asset_group_id INTEGER,
    asset_id INTEGER,
    default_branch_id INTEGER,
    fields TEXT NOT NULL DEFAULT '{}',
    created_at TEXT NOT NULL,
    created_by INTEGER NOT NULL REFERENCES users(id),
    updated_at TEXT NOT NULL,
    updated_by INTEGER NOT NULL REFERENCES users(id),
    deleted_at TEXT,
    deleted_by INTEGER REFERENCES users(id),
    UNIQUE (organisation_id, number)
);
CREATE INDEX documents_project ON documents(project_id);

CREATE TABLE document_chunks (
    id INTEGER PRIMARY KEY,
    hash BLOB NOT NULL UNIQUE,
    data BLOB NOT NULL
);

CREATE TABLE document_revisions (
    id INTEGER PRIMARY KEY,
    document_id INTEGER NOT NULL REFERENCES documents(id),
    hash BLOB NOT NULL,
    parent_id INTEGER REFERENCES document_revisions(id),
    parents TEXT NOT NULL DEFAULT '[]',
    generation INTEGER NOT NULL,
    message TEXT,
    created_at TEXT NOT NULL,
    created_by INTEGER NOT NULL REFERENCES users(id)
);
CREATE INDEX document_revisions_hash ON document_revisions(document_id, hash);

CREATE TABLE document_branches (
    id INTEGER PRIMARY KEY,
    organisation_id INTEGER NOT NULL REFERENCES organisations(id),
    document_id INTEGER NOT NULL REFERENCES documents(id),
    name TEXT NOT NULL,
    revision_id INTEGER NOT NULL REFERENCES document_revisions(id),
    protected BOOLEAN NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    created_by INTEGER NOT NULL REFERENCES users(id),
    deleted_at TEXT,
    deleted_by INTEGER REFERENCES users(id)
, strict BOOLEAN NOT NULL DEFAULT 0);
CREATE UNIQUE INDEX document_branches_name ON document_branches(document_id, name) WHERE deleted_at IS NULL;

-- Audit log (0043)
CREATE TABLE audit_log (
    id INTEGER PRIMARY KEY,
    chain INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    organisation_id INTEGER,
    actor_id INTEGER,
    action TEXT NOT NULL,
    target_ids TEXT NOT NULL,
    changed_fields TEXT NOT NULL,
    request_id TEXT NOT NULL,
    created_at TEXT NOT NULL,
    prev_hash TEXT NOT NULL,
    hash TEXT NOT NULL
, node INTEGER NOT NULL DEFAULT 0);
-- (0121 adds node and makes the chain per organisation and node.)
CREATE UNIQUE INDEX audit_log_chain ON audit_log(chain, node, seq);
CREATE INDEX audit_log_chain_time ON audit_log(chain, id);
-- == 0022_work_item_document_counts (work items area) ==
-- Documents' work item counts (issue 14): work_item_type_counts gains the
-- document scope (scope_id = the document's id), kept by these triggers
-- beside those of 0021; a document's open and closed counts are the sums of
-- its entries. They name only work items tables, so the documents table
-- (migration 0030) needs no change.
CREATE TRIGGER work_items_document_insert AFTER INSERT ON work_items
WHEN NEW.document_id IS NOT NULL BEGIN
    INSERT INTO work_item_type_counts(scope_id, type_id, open_count, closed_count)
    VALUES (NEW.document_id, NEW.type_id, NEW.status = 'open', NEW.status = 'closed')
    ON CONFLICT(scope_id, type_id) DO UPDATE SET open_count = open_count + excluded.open_count,
        closed_count = closed_count + excluded.closed_count;
END;

CREATE TRIGGER work_items_document_update AFTER UPDATE OF status, type_id, document_id ON work_items
WHEN OLD.status <> NEW.status OR OLD.type_id <> NEW.type_id OR OLD.document_id IS NOT NEW.document_id BEGIN
    UPDATE work_item_type_counts SET open_count = open_count - (OLD.status = 'open'),
        closed_count = closed_count - (OLD.status = 'closed')
    WHERE scope_id = OLD.document_id AND type_id = OLD.type_id;
    INSERT INTO work_item_type_counts(scope_id, type_id, open_count, closed_count)
    SELECT NEW.document_id, NEW.type_id, NEW.status = 'open', NEW.status = 'closed' WHERE NEW.document_id IS NOT NULL
    ON CONFLICT(scope_id, type_id) DO UPDATE SET open_count = open_count + excluded.open_count,
        closed_count = closed_count + excluded.closed_count;
END;

CREATE TRIGGER work_items_document_delete AFTER DELETE ON work_items
WHEN OLD.document_id IS NOT NULL BEGIN
    UPDATE work_item_type_counts SET open_count = open_count - (OLD.status = 'open'),
        closed_count = closed_count - (OLD.status = 'closed')
    WHERE scope_id = OLD.document_id AND type_id = OLD.type_id;
END;

-- == 0055_document_forks (shares/forks/bookmarks area) ==
-- Forks (issue 13): a fork copies its origin's revision rows, never their
-- content (document_chunks is content-addressed and shared). A copied row
-- names the row it copies in origin_revision_id: the revision as first
-- made, in the document it was made in, so a revision keeps one identity
-- (coalesce(origin_revision_id, id)) across a document and its forks, and
-- a later import (a merge request from a fork) finds what is already there.
ALTER TABLE document_revisions ADD COLUMN origin_revision_id INTEGER;
CREATE INDEX document_revisions_origin ON document_revisions(document_id, origin_revision_id) WHERE origin_revision_id IS NOT NULL;
CREATE INDEX documents_origin ON documents(origin_id) WHERE origin_id IS NOT NULL;
-- The work items each user sees in GET /users/@me/work-items (assigned, or
-- invited through a schedule of the work item and not declined), with the
-- columns its filters read, clustered by user: a request reads one range of
-- this table instead of looking each work item up (issue 14). Kept by
-- triggers on every source of membership and on the copied columns.
CREATE TABLE user_work_items (
    user_id INTEGER NOT NULL,
    work_item_id INTEGER NOT NULL,
    organisation_id INTEGER NOT NULL,
    status TEXT NOT NULL,
    type_id INTEGER NOT NULL,
    project_id INTEGER,
    document_id INTEGER,
    fleet_id INTEGER,
    location_id INTEGER,
    asset_group_id INTEGER,
    start_at TEXT,
    finish_at TEXT,
    created_at TEXT NOT NULL,
    closed_at TEXT,
    PRIMARY KEY (user_id, work_item_id)
) WITHOUT ROWID;
CREATE INDEX user_work_items_item ON user_work_items(work_item_id);

-- Membership of (user U, work item W), spelled out in each trigger below:
-- EXISTS an assignee row (W, U), or EXISTS a non-declined invitation of U to
-- a schedule of W.

CREATE TRIGGER user_work_items_assign AFTER INSERT ON work_item_assignees BEGIN
    INSERT OR IGNORE INTO user_work_items SELECT NEW.user_id, w.id, w.organisation_id, w.status, w.type_id, w.project_id,
        w.document_id, w.fleet_id, w.location_id, w.asset_group_id, w.start_at, w.finish_at, w.created_at, w.closed_at
    FROM work_items w WHERE w.id = NEW.work_item_id;
END;

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

-- A deleted schedule's invitations end with it (its invitees go by cascade,
-- possibly after their trigger could still see the schedule).
CREATE TRIGGER user_work_items_schedule_delete AFTER DELETE ON schedules WHEN OLD.work_item_id IS NOT NULL BEGIN
    DELETE FROM user_work_items WHERE work_item_id = OLD.work_item_id
        AND NOT EXISTS (SELECT 1 FROM work_item_assignees a WHERE a.work_item_id = OLD.work_item_id AND a.user_id = user_work_items.user_id)
        AND NOT EXISTS (SELECT 1 FROM schedule_invitees si JOIN schedules sc ON sc.id = si.schedule_id
            WHERE sc.work_item_id = OLD.work_item_id AND si.user_id = user_work_items.user_id AND si.status <> 'declined');
END;

CREATE TRIGGER user_work_items_copy AFTER UPDATE OF organisation_id, status, type_id, project_id, document_id, fleet_id,
    location_id, asset_group_id, start_at, finish_at, created_at, closed_at ON work_items BEGIN
    UPDATE user_work_items SET organisation_id = NEW.organisation_id, status = NEW.status, type_id = NEW.type_id,
        project_id = NEW.project_id, document_id = NEW.document_id, fleet_id = NEW.fleet_id, location_id = NEW.location_id,
        asset_group_id = NEW.asset_group_id, start_at = NEW.start_at, finish_at = NEW.finish_at, created_at = NEW.created_at,
        closed_at = NEW.closed_at
    WHERE work_item_id = NEW.id;
END;

CREATE TRIGGER user_work_items_item_delete AFTER DELETE ON work_items BEGIN
    DELETE FROM user_work_items WHERE work_item_id = OLD.id;
END;

-- == 0050_merge_requests (issue 13) ==
-- (0050 also adds document_branches.strict, written into that table above)
-- Rebuilt by 0071 to spell its status CHECK as equalities (an IN list of
-- three or more values builds a temporary b-tree on every row written).
CREATE TABLE "document_merge_requests" (
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
CREATE INDEX document_merge_requests_document ON document_merge_requests(document_id, number);

-- == 0056_document_shares (shares/forks/bookmarks area) ==
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
-- 0060: revisions of a document in id order (presence streams).
CREATE INDEX document_revisions_document ON document_revisions(document_id, id);

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

-- == 0057_document_bookmarks (shares/forks/bookmarks area) ==
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
-- 0061: bytes of document chunks each organisation stored first (storage_usage).
CREATE TABLE organisation_document_storage (
    organisation_id INTEGER PRIMARY KEY REFERENCES organisations(id),
    bytes INTEGER NOT NULL
);
-- == 0051_document_tags (issue 13) ==
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

-- == 0052_document_tags_revision (issue 13) ==
CREATE INDEX document_tags_revision ON document_tags(revision_id, release, id);

-- == 0033_asset_group_deletes (issue 17; docs/assets.md) ==
CREATE INDEX documents_asset_group ON documents(asset_group_id) WHERE asset_group_id IS NOT NULL;

-- == 0031_asset_status_deletes (issue 17; docs/assets.md) ==
CREATE INDEX asset_groups_status ON asset_groups(status_id) WHERE status_id IS NOT NULL;
-- == 0059_documents_by_type (issue 17; docs/documents.md; 0028, allotted, would run before 0030 made the table) ==
CREATE INDEX documents_type ON documents(type_id) WHERE type_id IS NOT NULL;
-- == 0041_access_versions (issue 7) ==
-- A tag of the state an organisation's access is resolved from: its row,
-- members, roles, members' roles and organisation-scope grants. Every change
-- to them sets a new random tag, in the same transaction, so a write
-- transaction may reuse a caller's standing resolved at an equal tag instead
-- of reading it again (server/cache.go, writerStanding). Random rather than
-- counted: a rolled-back change takes its tag with it, and a later change
-- must not reuse that tag for another state.
CREATE TABLE access_versions (
    organisation_id INTEGER PRIMARY KEY,
    tag INTEGER NOT NULL
);
CREATE TRIGGER organisations_access_insert AFTER INSERT ON organisations BEGIN
    INSERT INTO access_versions (organisation_id, tag) VALUES (NEW.id, random())
    ON CONFLICT (organisation_id) DO UPDATE SET tag = excluded.tag;
END;
CREATE TRIGGER organisations_access_update AFTER UPDATE ON organisations BEGIN
    INSERT INTO access_versions (organisation_id, tag) VALUES (NEW.id, random())
    ON CONFLICT (organisation_id) DO UPDATE SET tag = excluded.tag;
END;
CREATE TRIGGER organisations_access_delete AFTER DELETE ON organisations BEGIN
    INSERT INTO access_versions (organisation_id, tag) VALUES (OLD.id, random())
    ON CONFLICT (organisation_id) DO UPDATE SET tag = excluded.tag;
END;
CREATE TRIGGER organisation_members_access_insert AFTER INSERT ON organisation_members BEGIN
    INSERT INTO access_versions (organisation_id, tag) VALUES (NEW.organisation_id, random())
    ON CONFLICT (organisation_id) DO UPDATE SET tag = excluded.tag;
END;
CREATE TRIGGER organisation_members_access_update AFTER UPDATE ON organisation_members BEGIN
    INSERT INTO access_versions (organisation_id, tag) VALUES (NEW.organisation_id, random())
    ON CONFLICT (organisation_id) DO UPDATE SET tag = excluded.tag;
END;
CREATE TRIGGER organisation_members_access_delete AFTER DELETE ON organisation_members BEGIN
    INSERT INTO access_versions (organisation_id, tag) VALUES (OLD.organisation_id, random())
    ON CONFLICT (organisation_id) DO UPDATE SET tag = excluded.tag;
END;
CREATE TRIGGER roles_access_insert AFTER INSERT ON roles BEGIN
    INSERT INTO access_versions (organisation_id, tag) VALUES (NEW.organisation_id, random())
    ON CONFLICT (organisation_id) DO UPDATE SET tag = excluded.tag;
END;
CREATE TRIGGER roles_access_update AFTER UPDATE ON roles BEGIN
    INSERT INTO access_versions (organisation_id, tag) VALUES (NEW.organisation_id, random())
    ON CONFLICT (organisation_id) DO UPDATE SET tag = excluded.tag;
END;
CREATE TRIGGER roles_access_delete AFTER DELETE ON roles BEGIN
    INSERT INTO access_versions (organisation_id, tag) VALUES (OLD.organisation_id, random())
    ON CONFLICT (organisation_id) DO UPDATE SET tag = excluded.tag;
END;
CREATE TRIGGER member_roles_access_insert AFTER INSERT ON member_roles BEGIN
    INSERT INTO access_versions (organisation_id, tag) VALUES (NEW.organisation_id, random())
    ON CONFLICT (organisation_id) DO UPDATE SET tag = excluded.tag;
END;
CREATE TRIGGER member_roles_access_update AFTER UPDATE ON member_roles BEGIN
    INSERT INTO access_versions (organisation_id, tag) VALUES (NEW.organisation_id, random())
    ON CONFLICT (organisation_id) DO UPDATE SET tag = excluded.tag;
END;
CREATE TRIGGER member_roles_access_delete AFTER DELETE ON member_roles BEGIN
    INSERT INTO access_versions (organisation_id, tag) VALUES (OLD.organisation_id, random())
    ON CONFLICT (organisation_id) DO UPDATE SET tag = excluded.tag;
END;
CREATE TRIGGER permission_grants_access_insert AFTER INSERT ON permission_grants WHEN NEW.scope_type = 'organisation' BEGIN
    INSERT INTO access_versions (organisation_id, tag) VALUES (NEW.organisation_id, random())
    ON CONFLICT (organisation_id) DO UPDATE SET tag = excluded.tag;
END;
CREATE TRIGGER permission_grants_access_update AFTER UPDATE ON permission_grants WHEN NEW.scope_type = 'organisation' OR OLD.scope_type = 'organisation' BEGIN
    INSERT INTO access_versions (organisation_id, tag) VALUES (NEW.organisation_id, random())
    ON CONFLICT (organisation_id) DO UPDATE SET tag = excluded.tag;
END;
CREATE TRIGGER permission_grants_access_delete AFTER DELETE ON permission_grants WHEN OLD.scope_type = 'organisation' BEGIN
    INSERT INTO access_versions (organisation_id, tag) VALUES (OLD.organisation_id, random())
    ON CONFLICT (organisation_id) DO UPDATE SET tag = excluded.tag;
END;

-- Documents in which a column was bound to an item field (0064): the
-- candidates a field's type change reads the branch heads of.
CREATE TABLE document_field_bindings (
    field_id INTEGER NOT NULL REFERENCES document_fields(id),
    document_id INTEGER NOT NULL REFERENCES documents(id),
    PRIMARY KEY (field_id, document_id)
) WITHOUT ROWID;

-- == 0072_lookup_indexes (issue 7) ==
-- Lookups that read a whole table, every organisation's rows, to find a
-- few (TestQueryPlansSeek): each gets the index its condition needs. The
-- partial ones leave out the rows the lookups never ask for.
CREATE INDEX document_merge_requests_open_between ON document_merge_requests(from_branch_id, to_branch_id) WHERE status = 'open';
CREATE INDEX sub_locations_organisation ON sub_locations(organisation_id, id);
CREATE INDEX document_field_bindings_document ON document_field_bindings(document_id);
CREATE INDEX user_identities_user ON user_identities(user_id);
CREATE INDEX toolbox_users_schedule ON toolbox_users(schedule_id) WHERE schedule_id IS NOT NULL;
CREATE INDEX toolboxes_workgroup ON toolboxes(workgroup_id) WHERE workgroup_id IS NOT NULL;
CREATE INDEX work_items_fleet ON work_items(fleet_id) WHERE fleet_id IS NOT NULL;
CREATE INDEX organisation_members_notification_email ON organisation_members(notification_email_id) WHERE notification_email_id IS NOT NULL;
CREATE INDEX organisations_icon ON organisations(icon_hash) WHERE icon_hash IS NOT NULL;
CREATE INDEX organisations_banner ON organisations(banner_hash) WHERE banner_hash IS NOT NULL;
CREATE INDEX organisations_logo ON organisations(logo_hash) WHERE logo_hash IS NOT NULL;

-- In-app notifications (issue 36): one row per recipient and event, written
-- in the event's transaction. organisation_id is the organisation whose
-- membership the recipient needs to see what the row names (NULL: nothing
-- beyond the row itself, as for invitations and shares addressed to them).
-- Rows older than 90 days are purged by a background job.
CREATE TABLE notifications (
    id INTEGER PRIMARY KEY,
    user_id INTEGER NOT NULL REFERENCES users(id),
    organisation_id INTEGER REFERENCES organisations(id),
    kind TEXT NOT NULL,
    title TEXT NOT NULL,
    body TEXT NOT NULL DEFAULT '',
    link TEXT NOT NULL,
    read_at TEXT,
    created_at TEXT NOT NULL
);
CREATE INDEX notifications_user ON notifications(user_id, id);
CREATE INDEX notifications_unread ON notifications(user_id) WHERE read_at IS NULL;
CREATE INDEX notifications_created ON notifications(created_at);

-- "For you" (issue 36) finds invites addressed to the caller's addresses
-- and the documents the caller created (to list their open merge requests):
-- each by an index of its own rather than reading every organisation's rows.
CREATE INDEX invites_email ON invites(email) WHERE email <> '';
CREATE INDEX documents_creator ON documents(created_by) WHERE deleted_at IS NULL;

-- The audit log in sentences (issue 29): what a change set, as a JSON
-- object ({"count": N, "values": {...}}); '' for none (hashed only when set).
ALTER TABLE audit_log ADD COLUMN details TEXT NOT NULL DEFAULT '';
-- == 0120_sync_changes (issue 30) ==
-- Offline site sync (issue 30, docs/sync.md): the change log. Every change
-- of a replicated row appends one entry in the transaction that made it
-- (captured at the store, db/sync.go), and changes received from another
-- node are kept verbatim, so the hub can pass a laptop's changes on and the
-- later-wins rule can see which columns a later change already set.
-- origin is the node that made the change, hlc its hybrid logical clock
-- (milliseconds << 16 | counter), org the organisation the row belongs to
-- (NULL: not of one organisation, such as a user's own rows), pk the row's
-- primary key as a JSON array, op 'i', 'u' or 'd', cols the inserted or
-- changed columns' values as a JSON object (NULL for a delete).
CREATE TABLE sync_changes (
    seq INTEGER PRIMARY KEY,
    origin INTEGER NOT NULL,
    hlc INTEGER NOT NULL,
    org INTEGER,
    tbl TEXT NOT NULL,
    pk TEXT NOT NULL,
    op TEXT NOT NULL,
    cols TEXT
);
-- Pages are sent in clock order; the clock restarts from the highest entry.
CREATE INDEX sync_changes_hlc ON sync_changes(hlc, origin);
-- A row's history, for the later-wins rule when a change arrives.
CREATE INDEX sync_changes_row ON sync_changes(tbl, pk, hlc);

-- What this node holds of each origin node's changes: the highest clock
-- received from it (a version vector; the node's own origin is read from
-- sync_changes itself).
CREATE TABLE sync_received (
    origin INTEGER PRIMARY KEY,
    hlc INTEGER NOT NULL
);


-- One-time pairing codes an owner made on the hub: only the code's SHA-256
-- is kept (the code is shown once), for the organisations named.
CREATE TABLE sync_pairing_codes (
    id INTEGER PRIMARY KEY,
    code_hash TEXT NOT NULL UNIQUE,
    organisations TEXT NOT NULL, -- JSON array of organisation ids
    created_by INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    used_at TEXT
);

-- The nodes paired with this hub: the node id the hub assigned, the node's
-- Ed25519 public key, and what its last exchange told.
CREATE TABLE sync_nodes (
    node INTEGER PRIMARY KEY,
    public_key BLOB NOT NULL,
    name TEXT NOT NULL,
    paired_by INTEGER NOT NULL,
    paired_at TEXT NOT NULL,
    revoked_at TEXT,
    last_exchange_at TEXT,
    vector TEXT NOT NULL DEFAULT '{}', -- what the node held at its last exchange
    pending_from INTEGER NOT NULL DEFAULT 0 -- changes the node said it still had to send
);

-- The organisations each node was paired for.
CREATE TABLE sync_node_orgs (
    organisation_id INTEGER NOT NULL REFERENCES organisations(id) ON DELETE CASCADE,
    node INTEGER NOT NULL REFERENCES sync_nodes(node) ON DELETE CASCADE,
    PRIMARY KEY (organisation_id, node)
) WITHOUT ROWID;
CREATE INDEX sync_node_orgs_node ON sync_node_orgs(node);

-- Nonces of signed requests seen within the time window (no replay);
-- older ones are pruned, as a request that old is refused by its time.
CREATE TABLE sync_nonces (
    node INTEGER NOT NULL,
    nonce TEXT NOT NULL,
    seen_at INTEGER NOT NULL, -- unix seconds
    PRIMARY KEY (node, nonce)
) WITHOUT ROWID;
CREATE INDEX sync_nonces_seen ON sync_nonces(seen_at);

-- On a node made by `workspace sync clone`: its hub, its private key and
-- the state of its exchanges. One row.
CREATE TABLE sync_hub (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    url TEXT NOT NULL,
    hub_node INTEGER NOT NULL,
    private_key BLOB NOT NULL,
    organisations TEXT NOT NULL, -- JSON array of organisation ids
    hub_vector TEXT NOT NULL DEFAULT '{}', -- what the hub held at the last exchange
    last_exchange_at TEXT,
    last_error TEXT,
    pending_in INTEGER NOT NULL DEFAULT 0 -- changes the hub said it still had for this node
);
-- == 0160_sync_merge (issue 30) ==
-- Evidence two nodes recorded of one person apart (two signatures of one
-- person on one toolbox talk, two witness records of one person on one
-- object): both are kept, never dropped. duplicate_of flags all but the
-- first (by id) with the id of the first; sync keeps it on each node
-- (docs/sync.md), and a second signature made on one node is still refused.
ALTER TABLE toolbox_users ADD COLUMN duplicate_of INTEGER;
DROP INDEX toolbox_users_once;
CREATE UNIQUE INDEX toolbox_users_once ON toolbox_users(toolbox_id, user_id) WHERE user_id IS NOT NULL AND duplicate_of IS NULL;
ALTER TABLE witness_records ADD COLUMN duplicate_of INTEGER;
DROP INDEX witness_records_once;
CREATE UNIQUE INDEX witness_records_once ON witness_records(object_type, object_id, user_id) WHERE duplicate_of IS NULL;

-- What sync found for a person to settle (docs/sync.md): a unique key (a
-- project, location or discipline code) two nodes gave two rows apart.
-- Both rows are kept; row_id, the later, was renamed to renamed_to; other_id
-- kept value. Replicated: made on the hub, listed and settled on any node.
-- Or (0191) an access decision of the hub: kind 'access', col the decision,
-- row_id the person, other_id the role or scope, undo what an owner's Undo
-- applies (the change that lost), undone whether it was applied.
CREATE TABLE "sync_conflicts" (
    id INTEGER PRIMARY KEY,
    organisation_id INTEGER NOT NULL REFERENCES organisations(id),
    kind TEXT NOT NULL CHECK (kind = 'unique' OR kind = 'access'),
    tbl TEXT NOT NULL,
    col TEXT NOT NULL,
    row_id INTEGER NOT NULL,
    other_id INTEGER NOT NULL,
    value TEXT NOT NULL,
    renamed_to TEXT NOT NULL,
    created_at TEXT NOT NULL,
    settled_at TEXT,
    settled_by INTEGER REFERENCES users(id),
    undo TEXT,
    undone BOOLEAN NOT NULL DEFAULT 0
);
CREATE INDEX sync_conflicts_organisation ON sync_conflicts(organisation_id, id);
-- == 0161_sync_seen (issue 30) ==
-- What the node that made a change of security state (a membership, ban,
-- role, grant, invite, share) held of every other node's changes when it
-- made it: a version vector as a JSON object (origin -> clock), NULL for
-- other changes. A removal the change had not seen was concurrent with it,
-- and wins (docs/sync.md, "Security state").
ALTER TABLE sync_changes ADD COLUMN seen TEXT;
-- == 0162_sync_number_blocks (issue 30) ==
-- Numbers on a clone come from blocks leased from the hub (docs/sync.md,
-- "Number blocks"): a clone's own blocks of each organisation's counters
-- ("prefix:<id>" or a counter's name), next the number it draws next; rows
-- "provisional:<counter>" count the provisional numbers it handed out with
-- no block left. Node-local.
CREATE TABLE sync_number_blocks (
    organisation_id INTEGER NOT NULL,
    counter TEXT NOT NULL,
    first INTEGER NOT NULL,
    last INTEGER NOT NULL,
    next INTEGER NOT NULL,
    PRIMARY KEY (organisation_id, counter, first)
) WITHOUT ROWID;

-- The blocks the hub granted each node. Node-local (the hub's book).
CREATE TABLE sync_number_grants (
    node INTEGER NOT NULL,
    organisation_id INTEGER NOT NULL,
    counter TEXT NOT NULL,
    first INTEGER NOT NULL,
    last INTEGER NOT NULL,
    granted_at TEXT NOT NULL,
    PRIMARY KEY (node, organisation_id, counter, first)
) WITHOUT ROWID;
-- Provisional numbers a clone handed out offline, found when blocks arrive.
CREATE INDEX work_items_provisional ON work_items(id) WHERE number < 0;
CREATE INDEX systems_provisional ON systems(id) WHERE number < 0;
-- == 0168_sync_screen (issue 31) ==
-- The Sync screen (docs/sync.md): how much each way the last exchange
-- moved, on the hub per node and on a laptop for its hub, and the numbers a
-- node said it had left. Node-local, as their tables.
-- exchange_id: the laptop's name of the exchange its requests belong to
-- (the hub sums an exchange's pages under it).
ALTER TABLE sync_nodes ADD COLUMN exchange_id TEXT;
ALTER TABLE sync_nodes ADD COLUMN last_received INTEGER NOT NULL DEFAULT 0; -- entries the hub applied from the node
ALTER TABLE sync_nodes ADD COLUMN last_sent INTEGER NOT NULL DEFAULT 0; -- entries the hub sent the node
ALTER TABLE sync_nodes ADD COLUMN numbers_held TEXT NOT NULL DEFAULT '[]'; -- JSON: what the node had left of each counter
ALTER TABLE sync_hub ADD COLUMN last_sent INTEGER NOT NULL DEFAULT 0; -- entries the hub applied in the last whole exchange
ALTER TABLE sync_hub ADD COLUMN last_received INTEGER NOT NULL DEFAULT 0; -- entries received in it
-- == 0163_sync_objects (issue 31) ==
-- Objects (document chunks and blobs) a node fetched from the hub for a
-- page, kept here until everything they refer to has arrived, then stored
-- children first (docs/sync.md, "Documents and files"): a cut exchange
-- resumes without fetching them again, and document_chunks and blobs only
-- ever hold an object together with everything reachable from it.
-- Node-local.
CREATE TABLE sync_object_staging (
    hash TEXT NOT NULL,
    kind TEXT NOT NULL,
    data BLOB NOT NULL,
    content_type TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (hash, kind)
) WITHOUT ROWID;
-- == 0164_sync_object_lookups (issue 31) ==
-- The hub sends a node an object only when a row of the node's
-- organisations names it (docs/sync.md, "Documents and files"): a
-- revision by its content root, a blob by the columns naming it.
CREATE INDEX document_revisions_content ON document_revisions(hash);
CREATE INDEX asset_logs_attachment ON asset_logs(attachment_hash) WHERE attachment_hash IS NOT NULL;
CREATE INDEX induction_revisions_file ON induction_revisions(file_hash) WHERE file_hash IS NOT NULL;
-- == 0174_sync_provisional_documents_assets (issue 30) ==
-- Provisional numbers of documents, merge requests and assets, found when
-- blocks arrive (docs/sync.md, "Number blocks"). A document numbered from a
-- prefix keeps the organisation's number in number and the prefix's in
-- formatted_number: either may be provisional.
CREATE INDEX documents_provisional ON documents(id) WHERE number < 0 OR instr(formatted_number, 'PROV-') > 0;
CREATE INDEX document_merge_requests_provisional ON document_merge_requests(id) WHERE number < 0;
CREATE INDEX asset_groups_provisional ON asset_groups(id) WHERE number < 0;
-- == 0175_sync_clone_retry (issue 30) ==
-- A pairing code is consumed when the clone it paired for was sent whole
-- (docs/sync.md, "Pairing, clone and transport"): until then, and until the
-- code expires, presenting it again pairs the laptop anew under the same
-- node id (a clone download cut short can be retried with the same code).
ALTER TABLE sync_pairing_codes ADD COLUMN node INTEGER;
ALTER TABLE sync_nodes ADD COLUMN cloned_at TEXT;
-- == 0176_sync_exchange_tally (issue 30) ==
-- On the hub, what the current exchange with a node has moved so far, per
-- organisation, until its last round writes one audit entry per
-- organisation (docs/sync.md, "Audit"). Node-local.
CREATE TABLE sync_exchange_tally (
    node INTEGER NOT NULL,
    organisation_id INTEGER NOT NULL,
    received INTEGER NOT NULL DEFAULT 0,
    sent INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (node, organisation_id)
) WITHOUT ROWID;
-- == 0177_sync_pruned (issue 30) ==
-- How far the change log was pruned, per origin (docs/sync.md, "Pruning
-- the log"): entries of it up to hlc were deleted once every node had them
-- and they were older than the retention. Node-local.
CREATE TABLE sync_pruned (
    origin INTEGER PRIMARY KEY,
    hlc INTEGER NOT NULL
);
-- == 0189_sync_lease (issue 31) ==
-- One exchange with head office at a time per database file, across
-- processes (a `sync now` beside `serve`): the exchange holds this row,
-- renews it while it runs and deletes it at its end; a holder killed
-- mid-exchange leaves a row that expires (docs/sync.md). Node-local.
CREATE TABLE sync_lease (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    holder TEXT NOT NULL,
    pid INTEGER NOT NULL,
    host TEXT NOT NULL,
    started_at TEXT NOT NULL,
    expires_at TEXT NOT NULL
);
-- == 0190_sync_object_pieces (issue 31) ==
-- Pieces of a large file on its way between offices, kept as they arrive,
-- so a cut transfer goes on from the last piece that came, not from the
-- file's first byte (docs/sync.md). peer: on the hub, the node sending it;
-- on a laptop, 0 (fetched from the hub). Node-local; joined, checked
-- against the hash and dropped when the last piece comes.
CREATE TABLE sync_object_pieces (
    peer INTEGER NOT NULL,
    hash TEXT NOT NULL,
    pos INTEGER NOT NULL,
    data BLOB NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (peer, hash, pos)
) WITHOUT ROWID;
-- the week's pruning finds abandoned transfers without reading the pieces
CREATE INDEX sync_object_pieces_created ON sync_object_pieces(created_at);
