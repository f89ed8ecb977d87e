-- Offline site sync (issue 30, docs/sync.md): each node appends to its own
-- chain of an organisation's audit trail, so two nodes writing apart never
-- claim the same place in one chain, and sync ships entries verbatim. node
-- is 0 on the database the organisation's chain began in (the hub: its
-- chains go on unchanged) and the node id on a clone. The trail is listed
-- by time across an organisation's chains.
ALTER TABLE audit_log ADD COLUMN node INTEGER NOT NULL DEFAULT 0;
DROP INDEX audit_log_chain;
CREATE UNIQUE INDEX audit_log_chain ON audit_log(chain, node, seq);
CREATE INDEX audit_log_chain_time ON audit_log(chain, id);
