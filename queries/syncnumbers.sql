-- Whether this database is a clone (it draws numbers from leased blocks).
-- name: SyncIsClone :one
SELECT EXISTS (SELECT 1 FROM meta WHERE key = 'sync_clone');

-- The node id a clone recorded (provisional numbers are unique by it).
-- name: SyncCloneNode :one
SELECT CAST(coalesce((SELECT value FROM meta WHERE key = 'sync_node'), '0') AS INTEGER);

-- The next number of the first block of a counter with numbers left.
-- name: NumberBlockDraw :one
UPDATE sync_number_blocks SET next = next + 1
WHERE (organisation_id, counter, first) = (
    SELECT b.organisation_id, b.counter, b.first FROM sync_number_blocks b WHERE b.organisation_id = @organisation_id
    AND b.counter = @counter AND b.next <= b.last ORDER BY b.first LIMIT 1)
RETURNING next - 1;

-- A provisional number's sequence (1, 2, ...) for a counter.
-- name: NumberProvisionalNext :one
INSERT INTO sync_number_blocks(organisation_id, counter, first, last, next)
VALUES (@organisation_id, 'provisional:' || CAST(@counter AS TEXT), 0, 0, 1)
ON CONFLICT(organisation_id, counter, first) DO UPDATE SET next = next + 1
RETURNING next;

-- name: NumberBlockAccept :exec
INSERT INTO sync_number_blocks(organisation_id, counter, first, last, next)
VALUES (@organisation_id, @counter, @first, @last, @first)
ON CONFLICT(organisation_id, counter, first) DO NOTHING;

-- The numbers a clone holds of each counter (provisional rows aside).
-- name: NumberBlocksHeld :many
SELECT organisation_id, counter, CAST(sum(last - next + 1) AS INTEGER) AS left_count
FROM sync_number_blocks WHERE counter NOT LIKE 'provisional:%' GROUP BY organisation_id, counter
ORDER BY organisation_id, counter;

-- name: NumberGrantRecord :exec
INSERT INTO sync_number_grants(node, organisation_id, counter, first, last, granted_at)
VALUES (@node, @organisation_id, @counter, @first, @last, @granted_at);

-- The hub leases a block of a prefix: its counter moves past the block.
-- name: PrefixLease :one
UPDATE prefixes SET last_number = last_number + @size
WHERE id = @id AND organisation_id = @organisation_id
RETURNING last_number;

-- name: CounterLease :one
INSERT INTO organisation_counters(organisation_id, name, last_number) VALUES (@organisation_id, @name, @size)
ON CONFLICT(organisation_id, name) DO UPDATE SET last_number = last_number + excluded.last_number
RETURNING last_number;

-- name: PrefixesOfOrganisation :many
SELECT id, number_format, number_digits FROM prefixes WHERE organisation_id = @organisation_id ORDER BY id;

-- Work items and systems numbered provisionally, oldest first.
-- name: WorkItemsProvisional :many
-- Only the node that drew a provisional number replaces it (its node id is
-- the number's high half): a copy on another laptop waits for that one.
SELECT id, organisation_id, prefix_id FROM work_items WHERE number < 0 AND (-number) >> 32 = @node ORDER BY id;

-- name: WorkItemRenumber :exec
UPDATE work_items SET number = @number, formatted_number = @formatted_number WHERE id = @id;

-- name: SystemsProvisional :many
SELECT id, organisation_id FROM systems WHERE number < 0 AND (-number) >> 32 = @node ORDER BY id;

-- name: SystemRenumber :exec
UPDATE systems SET number = @number WHERE id = @id;

-- A document is provisional by its organisation number or by the prefix's
-- number in its text (PROV-<node>-<n>); this node's only.
-- name: DocumentsProvisional :many
SELECT id, organisation_id, number, formatted_number, type_id FROM documents
WHERE (number < 0 OR instr(formatted_number, 'PROV-') > 0)
AND ((-number) >> 32 = @node OR instr(formatted_number, 'PROV-' || CAST(@node AS TEXT) || '-') > 0) ORDER BY id;

-- name: DocumentRenumber :exec
UPDATE documents SET number = @number, formatted_number = @formatted_number WHERE id = @id;

-- name: DocumentTypeFormat :one
SELECT number_format FROM document_types WHERE id = @id;

-- name: MergeRequestsProvisional :many
SELECT id, organisation_id FROM document_merge_requests WHERE number < 0 AND (-number) >> 32 = @node ORDER BY id;

-- name: MergeRequestRenumber :exec
UPDATE document_merge_requests SET number = @number WHERE id = @id;

-- name: AssetGroupsProvisional :many
SELECT id, organisation_id, prefix_id FROM asset_groups WHERE number < 0 AND (-number) >> 32 = CAST(@node AS INTEGER) ORDER BY id;

-- name: AssetGroupRenumber :exec
UPDATE asset_groups SET number = @number, formatted_number = @formatted_number WHERE id = @id;
