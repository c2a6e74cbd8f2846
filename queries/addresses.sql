-- name: CreatePayeeAddress :one
INSERT INTO payee_addresses (
    id, user_id, payee_id, contact_id, name, last_name, address_line_1, address_line_2,
    company_name, city, state, zipcode, country, address_type, is_default, created_at
) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
RETURNING *;

-- name: ListPayeeAddresses :many
SELECT * FROM payee_addresses
WHERE user_id = sqlc.arg(user_id)
  AND (CAST(sqlc.narg(payee_id) AS TEXT) IS NULL OR payee_id = CAST(sqlc.narg(payee_id) AS TEXT))
  AND deleted_at IS NULL
ORDER BY created_at, rowid;

-- name: GetPayeeAddress :one
SELECT * FROM payee_addresses
WHERE id = sqlc.arg(id) AND user_id = sqlc.arg(user_id) AND deleted_at IS NULL;
