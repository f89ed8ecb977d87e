-- == 0175_sync_clone_retry (issue 30) ==
-- A pairing code is consumed when the clone it paired for was sent whole
-- (docs/sync.md, "Pairing, clone and transport"): until then, and until the
-- code expires, presenting it again pairs the laptop anew under the same
-- node id (a clone download cut short can be retried with the same code).
ALTER TABLE sync_pairing_codes ADD COLUMN node INTEGER;
ALTER TABLE sync_nodes ADD COLUMN cloned_at TEXT;
