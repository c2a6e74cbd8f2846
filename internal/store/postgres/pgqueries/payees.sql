-- name: CreatePayee :one
INSERT INTO payees (id, user_id, name, email, phone_country_code, phone, created_at)
VALUES ($1, $2, $3, $4, $5, $6, $7)
RETURNING *;

-- name: GetUserPayee :one
SELECT * FROM payees
WHERE id = sqlc.arg(id) AND user_id = sqlc.arg(user_id);

-- name: RenamePayee :one
UPDATE payees
SET name = sqlc.arg(name), updated_at = sqlc.arg(updated_at)
WHERE id = sqlc.arg(id) AND user_id = sqlc.arg(user_id)
RETURNING *;
