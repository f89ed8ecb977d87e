-- Deleting an asset status asks whether an asset or group has it
-- (docs/assets.md, "Deleting"): an index instead of a scan of every group.
-- Types already have asset_groups_type.
CREATE INDEX asset_groups_status ON asset_groups(status_id) WHERE status_id IS NOT NULL;
