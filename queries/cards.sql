-- name: CreateCard :exec
INSERT INTO cards (id, user_id, brand, last4, exp_month, exp_year, created_at)
VALUES (?, ?, ?, ?, ?, ?, ?);

-- name: SoftDeleteCard :execrows
UPDATE cards
SET deleted_at = sqlc.arg(deleted_at)
WHERE id = sqlc.arg(id) AND user_id = sqlc.arg(user_id) AND deleted_at IS NULL;
