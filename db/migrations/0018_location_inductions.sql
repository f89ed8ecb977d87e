-- Inductions a location requires of everyone who signs a toolbox held there.
CREATE TABLE location_inductions (
    location_id INTEGER NOT NULL REFERENCES locations(id),
    induction_id INTEGER NOT NULL REFERENCES inductions(id),
    organisation_id INTEGER NOT NULL REFERENCES organisations(id),
    created_at TEXT NOT NULL,
    PRIMARY KEY (location_id, induction_id)
) WITHOUT ROWID;
CREATE INDEX location_inductions_induction ON location_inductions(induction_id);
