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
