-- == 0161_sync_seen (issue 30) ==
-- What the node that made a change of security state (a membership, ban,
-- role, grant, invite, share) held of every other node's changes when it
-- made it: a version vector as a JSON object (origin -> clock), NULL for
-- other changes. A removal the change had not seen was concurrent with it,
-- and wins (docs/sync.md, "Security state").
ALTER TABLE sync_changes ADD COLUMN seen TEXT;
