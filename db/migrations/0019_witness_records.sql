-- A witness's signature on an object that can be witnessed (a work item, a
-- document revision), with the details captured when signing.
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
