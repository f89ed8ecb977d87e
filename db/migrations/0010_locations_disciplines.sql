-- Locations with their sub locations, and disciplines (issue 9).
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
