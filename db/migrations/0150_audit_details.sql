-- The audit log in sentences (issue 29): what a change set, in words a
-- person reads ("the status to In repair", "5 assets imported"), as a JSON
-- object the handler notes: {"count": N, "values": {"status": "In repair"}}.
-- '' for entries without any (all entries before this migration): the hash
-- covers details only when it is not empty, so their chains still verify.
ALTER TABLE audit_log ADD COLUMN details TEXT NOT NULL DEFAULT '';
