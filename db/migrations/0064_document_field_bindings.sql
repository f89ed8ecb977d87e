-- Documents in which a column was bound to an item field (docs/documents.md,
-- "Item fields: type and default"): the change flow records a pair when it
-- saves a column with a field, forks and merges from forks copy a
-- document's pairs with its revisions. Insert-only: a type change reads the
-- branch heads of these documents only, and refuses while one binds the
-- field. Documents that existed before this table are all candidates of
-- every field of their organisation (and forks of any field), as their
-- content cannot be read from SQL.
CREATE TABLE document_field_bindings (
    field_id INTEGER NOT NULL REFERENCES document_fields(id),
    document_id INTEGER NOT NULL REFERENCES documents(id),
    PRIMARY KEY (field_id, document_id)
) WITHOUT ROWID;
INSERT OR IGNORE INTO document_field_bindings(field_id, document_id)
SELECT f.id, d.id FROM document_fields f JOIN documents d
    ON d.organisation_id = f.organisation_id OR d.origin_id IS NOT NULL;
