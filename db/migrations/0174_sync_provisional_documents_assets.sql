-- == 0174_sync_provisional_documents_assets (issue 30) ==
-- Provisional numbers of documents, merge requests and assets, found when
-- blocks arrive (docs/sync.md, "Number blocks"). A document numbered from a
-- prefix keeps the organisation's number in number and the prefix's in
-- formatted_number: either may be provisional.
CREATE INDEX documents_provisional ON documents(id) WHERE number < 0 OR instr(formatted_number, 'PROV-') > 0;
CREATE INDEX document_merge_requests_provisional ON document_merge_requests(id) WHERE number < 0;
CREATE INDEX asset_groups_provisional ON asset_groups(id) WHERE number < 0;
