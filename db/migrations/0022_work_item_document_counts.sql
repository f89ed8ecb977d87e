-- Documents' work item counts (issue 14): work_item_type_counts gains the
-- document scope (scope_id = the document's id), kept by these triggers
-- beside those of 0021; a document's open and closed counts are the sums of
-- its entries. They name only work items tables, so the documents table
-- (migration 0030) needs no change.
CREATE TRIGGER work_items_document_insert AFTER INSERT ON work_items
WHEN NEW.document_id IS NOT NULL BEGIN
    INSERT INTO work_item_type_counts(scope_id, type_id, open_count, closed_count)
    VALUES (NEW.document_id, NEW.type_id, NEW.status = 'open', NEW.status = 'closed')
    ON CONFLICT(scope_id, type_id) DO UPDATE SET open_count = open_count + excluded.open_count,
        closed_count = closed_count + excluded.closed_count;
END;

CREATE TRIGGER work_items_document_update AFTER UPDATE OF status, type_id, document_id ON work_items
WHEN OLD.status <> NEW.status OR OLD.type_id <> NEW.type_id OR OLD.document_id IS NOT NEW.document_id BEGIN
    UPDATE work_item_type_counts SET open_count = open_count - (OLD.status = 'open'),
        closed_count = closed_count - (OLD.status = 'closed')
    WHERE scope_id = OLD.document_id AND type_id = OLD.type_id;
    INSERT INTO work_item_type_counts(scope_id, type_id, open_count, closed_count)
    SELECT NEW.document_id, NEW.type_id, NEW.status = 'open', NEW.status = 'closed' WHERE NEW.document_id IS NOT NULL
    ON CONFLICT(scope_id, type_id) DO UPDATE SET open_count = open_count + excluded.open_count,
        closed_count = closed_count + excluded.closed_count;
END;

CREATE TRIGGER work_items_document_delete AFTER DELETE ON work_items
WHEN OLD.document_id IS NOT NULL BEGIN
    UPDATE work_item_type_counts SET open_count = open_count - (OLD.status = 'open'),
        closed_count = closed_count - (OLD.status = 'closed')
    WHERE scope_id = OLD.document_id AND type_id = OLD.type_id;
END;
