-- The actor filter of the audit log scans the organisation's chain like its
-- other filters (target, action, dates) instead of keeping an index: the
-- index put each write's entry at its actor's own place, so a group commit
-- of N writers' entries dirtied N leaf pages, more than a third of all the
-- WAL frames of a project create under load (docs/operations.md).
DROP INDEX IF EXISTS audit_log_actor;
