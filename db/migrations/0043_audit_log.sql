-- The audit trail: every write through the API, one hash chain per
-- organisation (chain 0: writes outside any organisation). Each entry's hash
-- covers its content and the previous entry's hash, so an altered or removed
-- entry breaks the chain (workspace audit verify).
CREATE TABLE audit_log (
    id INTEGER PRIMARY KEY,
    chain INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    organisation_id INTEGER,
    actor_id INTEGER,
    action TEXT NOT NULL,
    target_ids TEXT NOT NULL,
    changed_fields TEXT NOT NULL,
    request_id TEXT NOT NULL,
    created_at TEXT NOT NULL,
    prev_hash TEXT NOT NULL,
    hash TEXT NOT NULL
);
CREATE UNIQUE INDEX audit_log_chain ON audit_log(chain, seq);
CREATE INDEX audit_log_actor ON audit_log(chain, actor_id, seq);
