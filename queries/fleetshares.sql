-- Fleet shares (docs/assets.md): what an accepted share opens.

-- Whether the user holds an accepted share of the fleet: addressed to it,
-- or to an organisation it is a (not pending) member of.
-- name: FleetShareHeld :one
SELECT EXISTS (SELECT 1 FROM fleet_shares s WHERE s.fleet_id = @fleet_id AND s.status = 1 AND (
    s.recipient_user_id = @user_id OR s.recipient_organisation_id IN (
        SELECT m.organisation_id FROM organisation_members m WHERE m.user_id = @user_id AND NOT m.pending))) AS held;

-- The fleets of an organisation the user holds accepted shares of.
-- name: FleetSharesHeldFrom :many
SELECT DISTINCT s.fleet_id FROM fleet_shares s WHERE s.organisation_id = @organisation_id AND s.status = 1 AND (
    s.recipient_user_id = @user_id OR s.recipient_organisation_id IN (
        SELECT m.organisation_id FROM organisation_members m WHERE m.user_id = @user_id AND NOT m.pending))
ORDER BY s.fleet_id;

-- The fleets shared with an organisation (accepted).
-- name: FleetSharesTo :many
SELECT DISTINCT fleet_id FROM fleet_shares WHERE recipient_organisation_id = @organisation_id AND status = 1 ORDER BY fleet_id;

-- name: FleetShareCreate :one
INSERT INTO fleet_shares(id, organisation_id, fleet_id, recipient_organisation_id, recipient_user_id, work_item_type_id, status, shared_by, created_at)
VALUES (@id, @organisation_id, @fleet_id, @recipient_organisation_id, @recipient_user_id, @work_item_type_id, 0, @shared_by, @created_at)
RETURNING *;

-- name: FleetShareGet :one
SELECT * FROM fleet_shares WHERE id = @id;

-- name: FleetShareListForFleet :many
SELECT * FROM fleet_shares WHERE fleet_id = @fleet_id ORDER BY id;

-- name: FleetShareSetStatus :one
UPDATE fleet_shares SET status = @status, responded_at = @responded_at, responded_by = @responded_by WHERE id = @id
RETURNING *;

-- A pending or accepted share of the fleet to the same recipient.
-- name: FleetShareOpenExists :one
SELECT EXISTS (SELECT 1 FROM fleet_shares WHERE fleet_id = @fleet_id AND status IN (0, 1)
    AND (recipient_organisation_id = @recipient_organisation_id OR recipient_user_id = @recipient_user_id)) AS found;

-- Pending and accepted shares addressed to the user or to an organisation
-- it is a (not pending) member of, of fleets of live organisations.
-- name: FleetSharesForUser :many
SELECT s.* FROM fleet_shares s JOIN organisations o ON o.id = s.organisation_id AND o.deleted_at IS NULL
WHERE s.status IN (0, 1) AND (s.recipient_user_id = @user_id OR s.recipient_organisation_id IN (
    SELECT m.organisation_id FROM organisation_members m WHERE m.user_id = @user_id AND NOT m.pending))
ORDER BY s.id;

-- Fleets shared with the user personally and accepted.
-- name: FleetsSharedWithUser :many
SELECT f.* FROM fleets f
JOIN organisations o ON o.id = f.organisation_id AND o.deleted_at IS NULL
WHERE f.id IN (SELECT s.fleet_id FROM fleet_shares s WHERE s.recipient_user_id = @user_id AND s.status = 1)
ORDER BY f.id;

-- name: FleetSharesDelete :exec
DELETE FROM fleet_shares WHERE fleet_id = @fleet_id;

-- name: FleetSubscriptionsDelete :exec
DELETE FROM fleet_subscriptions WHERE fleet_id = @fleet_id;

-- name: FleetSubscriptionCreate :one
INSERT INTO fleet_subscriptions(id, user_id, fleet_id, location_id, work_item_type_id, created_at)
VALUES (@id, @user_id, @fleet_id, @location_id, @work_item_type_id, @created_at)
RETURNING *;

-- name: FleetSubscriptionList :many
SELECT * FROM fleet_subscriptions WHERE user_id = @user_id AND fleet_id = @fleet_id ORDER BY id;

-- name: FleetSubscriptionGet :one
SELECT * FROM fleet_subscriptions WHERE id = @id AND user_id = @user_id AND fleet_id = @fleet_id;

-- name: FleetSubscriptionSetFilters :one
UPDATE fleet_subscriptions SET location_id = @location_id, work_item_type_id = @work_item_type_id
WHERE id = @id
RETURNING *;

-- name: FleetSubscriptionDelete :execrows
DELETE FROM fleet_subscriptions WHERE id = @id AND user_id = @user_id AND fleet_id = @fleet_id;

-- name: WorkItemTypeOfOrganisation :one
SELECT EXISTS (SELECT 1 FROM work_item_types WHERE id = @id AND organisation_id = @organisation_id) AS found;

-- Subscribers to tell of a new work item on a fleet: a subscription whose
-- location and work item type match (absent = any), held by a live user who
-- may still follow the fleet (a member of its organisation, or the holder of
-- an accepted share), not the one who created it; one row per user, to the
-- member's notification address where it chose one.
-- name: FleetSubscribersToNotify :many
SELECT u.id, CAST(coalesce((SELECT e.email FROM organisation_members m JOIN user_emails e ON e.id = m.notification_email_id AND e.user_id = u.id
        WHERE m.user_id = u.id AND m.organisation_id = @organisation_id), u.email) AS TEXT) AS email,
    EXISTS (SELECT 1 FROM organisation_members m WHERE m.user_id = u.id AND m.organisation_id = @organisation_id AND NOT m.pending) AS is_member
FROM users u
WHERE u.deleted_at IS NULL AND u.id <> @actor_id
  AND u.id IN (SELECT s.user_id FROM fleet_subscriptions s WHERE s.fleet_id = @fleet_id
      AND (s.location_id IS NULL OR s.location_id = sqlc.narg('location_id'))
      AND (s.work_item_type_id IS NULL OR s.work_item_type_id = @type_id))
  AND (EXISTS (SELECT 1 FROM organisation_members m WHERE m.user_id = u.id AND m.organisation_id = @organisation_id AND NOT m.pending)
      OR EXISTS (SELECT 1 FROM fleet_shares sh WHERE sh.fleet_id = @fleet_id AND sh.status = 1 AND (
          sh.recipient_user_id = u.id OR sh.recipient_organisation_id IN (
              SELECT m.organisation_id FROM organisation_members m WHERE m.user_id = u.id AND NOT m.pending))))
ORDER BY u.id;
