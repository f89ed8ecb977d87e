-- Deleting an asset group asks whether a document names it (docs/assets.md,
-- "Deleting"): an index instead of a scan of every document.
CREATE INDEX documents_asset_group ON documents(asset_group_id) WHERE asset_group_id IS NOT NULL;
