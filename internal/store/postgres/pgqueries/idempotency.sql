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

-- name: DeleteExpiredIdempotencyKeys :exec
-- PostgreSQL only: DeleteExpiredIdempotencyKey for many keys in one statement (a batch's,
-- written together at its end). The keys are a JSON array of objects {scope, key,
-- not_after}.
DELETE FROM idempotency_keys k
USING jsonb_to_recordset(sqlc.arg(keys)::jsonb) AS d (scope text, key text, not_after timestamptz)
WHERE k.scope = d.scope AND k.key = d.key AND k.created_at <= d.not_after;

-- name: CreateIdempotencyRecords :exec
-- PostgreSQL only: CreateIdempotencyRecord for many records in one statement (a batch's,
-- written together at its end). The records are a JSON array of objects with the
-- columns' names, the fingerprint in base64.
INSERT INTO idempotency_keys (id, scope, key, fingerprint, error_code, error_message, status, outcome_sealed, created_at)
SELECT r.id, r.scope, r.key, decode(r.fingerprint, 'base64'), r.error_code, r.error_message, r.status,
    r.outcome_sealed, r.created_at
FROM jsonb_to_recordset(sqlc.arg(records)::jsonb) AS r (
    id uuid, scope text, key text, fingerprint text, error_code text, error_message text, status bigint,
    outcome_sealed text, created_at timestamptz
);
