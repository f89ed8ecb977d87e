-- Fleets and the asset catalogue: statuses, zones, fields (with enum values)
-- and types (with their attached fields and zones). docs/assets.md.

-- A fleet is a grant layer (docs/handlers.md): the scope_type check gains
-- 'fleet', and the layers docs/handlers.md names next ('workgroup',
-- 'document') so that adding them does not rebuild this table again; the
-- engine refuses a layer it does not know (grantOf) whatever is stored.
CREATE TABLE permission_grants_v2 (
    organisation_id INTEGER NOT NULL REFERENCES organisations(id),
    scope_type TEXT NOT NULL CHECK (scope_type IN ('organisation', 'project', 'package', 'fleet', 'workgroup', 'document')),
    scope_id INTEGER NOT NULL,
    target_type TEXT NOT NULL CHECK (target_type IN ('role', 'user', 'organisation')),
    target_id INTEGER NOT NULL,
    allow_mask INTEGER NOT NULL DEFAULT 0,
    deny_mask INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (scope_id, target_id)
) WITHOUT ROWID;
INSERT INTO permission_grants_v2 SELECT organisation_id, scope_type, scope_id, target_type, target_id, allow_mask, deny_mask FROM permission_grants;
DROP TABLE permission_grants;
ALTER TABLE permission_grants_v2 RENAME TO permission_grants;
CREATE INDEX permission_grants_organisation ON permission_grants(organisation_id);
CREATE INDEX permission_grants_target ON permission_grants(organisation_id, scope_type, target_id);
CREATE INDEX permission_grants_denying ON permission_grants(organisation_id, scope_type, target_id) WHERE deny_mask <> 0;

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
