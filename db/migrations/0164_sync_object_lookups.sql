-- == 0164_sync_object_lookups (issue 31) ==
-- The hub sends a node an object only when a row of the node's
-- organisations names it (docs/sync.md, "Documents and files"): a
-- revision by its content root, a blob by the columns naming it.
CREATE INDEX document_revisions_content ON document_revisions(hash);
CREATE INDEX asset_logs_attachment ON asset_logs(attachment_hash) WHERE attachment_hash IS NOT NULL;
CREATE INDEX induction_revisions_file ON induction_revisions(file_hash) WHERE file_hash IS NOT NULL;
