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
