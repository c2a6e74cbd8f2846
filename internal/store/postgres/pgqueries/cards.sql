-- name: CreateCard :exec
INSERT INTO cards (id, user_id, brand, last4, exp_month, exp_year, created_at)
VALUES ($1, $2, $3, $4, $5, $6, $7);

-- name: SoftDeleteCard :execrows
UPDATE cards
SET deleted_at = sqlc.arg(deleted_at)
WHERE id = sqlc.arg(id) AND user_id = sqlc.arg(user_id) AND deleted_at IS NULL;
