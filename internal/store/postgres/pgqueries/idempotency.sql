-- name: GetIdempotencyRecord :one
SELECT id, scope, key, fingerprint, error_code, error_message, status, outcome_sealed, created_at
FROM idempotency_keys
WHERE scope = sqlc.arg(scope) AND key = sqlc.arg(key) AND created_at > sqlc.arg(not_before);

-- name: CreateIdempotencyRecord :exec
INSERT INTO idempotency_keys (id, scope, key, fingerprint, error_code, error_message, status, outcome_sealed, created_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9);

-- name: DeleteExpiredIdempotencyRecords :execrows
DELETE FROM idempotency_keys
WHERE created_at <= sqlc.arg(not_after);

-- name: DeleteExpiredIdempotencyKey :exec
DELETE FROM idempotency_keys
WHERE scope = sqlc.arg(scope) AND key = sqlc.arg(key) AND created_at <= sqlc.arg(not_after);
