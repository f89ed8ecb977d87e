-- name: WitnessRecordCreate :one
INSERT INTO witness_records(id, organisation_id, object_type, object_id, user_id, first_name, last_name, email,
    phone_number, company, position, signature, signed_at)
VALUES (@id, @organisation_id, @object_type, @object_id, @user_id, @first_name, @last_name, @email,
    @phone_number, @company, @position, @signature, @signed_at)
RETURNING *;

-- name: WitnessRecordByUser :one
SELECT * FROM witness_records WHERE object_type = @object_type AND object_id = @object_id AND user_id = @user_id AND duplicate_of IS NULL;

-- name: WitnessRecordList :many
SELECT * FROM witness_records WHERE object_type = @object_type AND object_id = @object_id ORDER BY id;
