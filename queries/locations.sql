-- name: LocationCreate :one
INSERT INTO locations(id, organisation_id, code, name, colour, latitude, longitude, radius, address, delivery, timezone_code, created_at)
VALUES (@id, @organisation_id, @code, @name, @colour, @latitude, @longitude, @radius, @address, @delivery, @timezone_code, @created_at)
RETURNING *;

-- name: LocationGet :one
SELECT * FROM locations WHERE id = @id;

-- delivery_filter: -1 every location, 0 or 1 only those with that flag.
-- name: LocationList :many
SELECT * FROM locations
WHERE organisation_id = @organisation_id AND (CAST(@delivery_filter AS INTEGER) < 0 OR delivery = @delivery_filter)
ORDER BY id;

-- name: LocationUpdate :one
UPDATE locations SET code = @code, name = @name, colour = @colour, latitude = @latitude, longitude = @longitude,
    radius = @radius, address = @address, delivery = @delivery, timezone_code = @timezone_code
WHERE id = @id AND organisation_id = @organisation_id
RETURNING *;

-- name: SubLocationCreate :one
INSERT INTO sub_locations(id, organisation_id, location_id, code, name, asset_capacity, created_at)
VALUES (@id, @organisation_id, @location_id, @code, @name, @asset_capacity, @created_at)
RETURNING *;

-- name: SubLocationList :many
SELECT * FROM sub_locations WHERE location_id = @location_id ORDER BY id;

-- Every sub location of an organisation's locations, for a whole list.
-- name: SubLocationListForOrganisation :many
SELECT * FROM sub_locations WHERE organisation_id = @organisation_id ORDER BY id;

-- name: DisciplineCreate :one
INSERT INTO disciplines(id, organisation_id, code, name, description, created_at)
VALUES (@id, @organisation_id, @code, @name, @description, @created_at)
RETURNING *;

-- name: DisciplineGet :one
SELECT * FROM disciplines WHERE id = @id;

-- name: DisciplineList :many
SELECT * FROM disciplines WHERE organisation_id = @organisation_id ORDER BY id;

-- name: DisciplineUpdate :one
UPDATE disciplines SET code = @code, name = @name, description = @description, enabled = @enabled
WHERE id = @id AND organisation_id = @organisation_id
RETURNING *;

-- name: LocationInductionPut :exec
INSERT INTO location_inductions(location_id, induction_id, organisation_id, created_at)
VALUES (@location_id, @induction_id, @organisation_id, @created_at)
ON CONFLICT(location_id, induction_id) DO NOTHING;

-- name: LocationInductionDelete :execrows
DELETE FROM location_inductions WHERE location_id = @location_id AND induction_id = @induction_id;

-- name: LocationInductionIDs :many
SELECT induction_id FROM location_inductions WHERE location_id = @location_id ORDER BY created_at, induction_id;

-- name: SubLocationUpdate :one
UPDATE sub_locations SET code = @code, name = @name, asset_capacity = @asset_capacity
WHERE id = @id
RETURNING *;
