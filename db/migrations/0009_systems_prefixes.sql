-- The system breakdown structure and numbering prefixes (issue 9). System
-- numbers come from a per-organisation counter, prefixes keep their own
-- last_number; both are incremented inside the drawing transaction, which
-- the single writer serialises, so numbers are distinct and gap-free.
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
