-- Revisions of a document in id order: the presence stream asks for the
-- revisions made since the last one it sent (server/presence.go).
CREATE INDEX document_revisions_document ON document_revisions(document_id, id);
