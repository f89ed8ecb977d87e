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
);
CREATE UNIQUE INDEX document_branches_name ON document_branches(document_id, name) WHERE deleted_at IS NULL;
