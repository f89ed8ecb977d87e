-- name: IntegrationCreate :one
INSERT INTO integrations(id, organisation_id, item_type, provider, enabled, url, secret, created_at)
VALUES (@id, @organisation_id, @item_type, @provider, @enabled, @url, @secret, @created_at)
RETURNING *;

-- name: IntegrationGet :one
SELECT * FROM integrations WHERE id = @id;

-- name: IntegrationList :many
SELECT * FROM integrations WHERE organisation_id = @organisation_id ORDER BY id;

-- name: IntegrationUpdate :one
UPDATE integrations SET enabled = @enabled, url = @url, secret = @secret
WHERE id = @id AND organisation_id = @organisation_id
RETURNING *;

-- The enabled integrations an event of this item type goes to.
-- name: IntegrationsForEvent :many
SELECT * FROM integrations
WHERE organisation_id = @organisation_id AND item_type = @item_type AND enabled AND url <> '';

-- name: DeliveryCreate :one
INSERT INTO integration_deliveries(id, organisation_id, integration_id, event, body, status, next_attempt_at, created_at)
VALUES (@id, @organisation_id, @integration_id, @event, @body, 'pending', @created_at, @created_at)
RETURNING *;

-- name: DeliveriesDue :many
SELECT * FROM integration_deliveries
WHERE status = 'pending' AND next_attempt_at <= @now
ORDER BY next_attempt_at, id
LIMIT @max;

-- name: DeliveryRecord :exec
UPDATE integration_deliveries
SET status = @status, attempts = attempts + 1, next_attempt_at = @next_attempt_at,
    response_code = @response_code, last_error = @last_error, delivered_at = @delivered_at
WHERE id = @id;

-- name: DeliveryList :many
SELECT * FROM integration_deliveries WHERE integration_id = @integration_id ORDER BY id DESC LIMIT 200;

-- name: IntegrationDeliveriesPending :one
SELECT count(*) FROM integration_deliveries WHERE status = 'pending';
