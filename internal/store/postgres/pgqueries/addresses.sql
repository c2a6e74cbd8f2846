-- name: CreatePayeeAddress :one
INSERT INTO payee_addresses (
    id, user_id, payee_id, contact_id, name, last_name, address_line_1, address_line_2,
    company_name, city, state, zipcode, country, address_type, is_default, created_at
) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)
RETURNING *;

-- name: ListPayeeAddresses :many
-- SQLite breaks a tie on created_at by rowid (insertion order); PostgreSQL has no rowid,
-- so by id, a time-ordered (version 7) UUID unless the service is given another NewID.
SELECT * FROM payee_addresses
WHERE user_id = sqlc.arg(user_id)
  AND (sqlc.narg(payee_id)::uuid IS NULL OR payee_id = sqlc.narg(payee_id)::uuid)
  AND deleted_at IS NULL
ORDER BY created_at, id;

-- name: GetPayeeAddress :one
SELECT * FROM payee_addresses
WHERE id = sqlc.arg(id) AND user_id = sqlc.arg(user_id) AND deleted_at IS NULL;
