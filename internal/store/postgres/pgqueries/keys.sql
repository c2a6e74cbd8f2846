-- Data keys, the blind-index key, and the sealed values a rotation or the one-time
-- sealing of an older database walks through, a batch at a time in id order, up to the
-- last id there was when the walk started. The ids are uuids, compared as such (so that the
-- primary key's index serves); an empty after starts at the first, an empty upto (no row
-- when the walk started) finds none.

-- name: ListDataKeys :many
SELECT * FROM data_keys ORDER BY added_at, key_id;

-- name: AddDataKey :exec
INSERT INTO data_keys (key_id, key_check, added_at) VALUES ($1, $2, $3);

-- name: RetireDataKey :exec
UPDATE data_keys SET retired_at = sqlc.arg(retired_at)
WHERE key_id = sqlc.arg(key_id) AND retired_at IS NULL;

-- name: GetBlindIndexKey :one
SELECT key_sealed FROM blind_index_key WHERE id = 1;

-- name: CreateBlindIndexKey :exec
INSERT INTO blind_index_key (id, key_sealed, created_at) VALUES (1, $1, $2);

-- name: SetBlindIndexKey :exec
UPDATE blind_index_key SET key_sealed = $1 WHERE id = 1;

-- name: LastPlatformID :one
SELECT coalesce((SELECT id FROM platforms ORDER BY id DESC LIMIT 1)::text, '')::text;

-- name: LastBankAccountID :one
SELECT coalesce((SELECT id FROM bank_accounts ORDER BY id DESC LIMIT 1)::text, '')::text;

-- name: LastPayeeBankID :one
SELECT coalesce((SELECT id FROM payee_banks ORDER BY id DESC LIMIT 1)::text, '')::text;

-- name: LastIdempotencyRecordID :one
SELECT coalesce((SELECT id FROM idempotency_keys ORDER BY id DESC LIMIT 1)::text, '')::text;

-- name: PlatformSecretsAfter :many
SELECT id, secret_sealed FROM platforms
WHERE (sqlc.arg(after)::text = '' OR id > nullif(sqlc.arg(after)::text, '')::uuid)
  AND id <= nullif(sqlc.arg(upto)::text, '')::uuid ORDER BY id LIMIT sqlc.arg(batch)::bigint;

-- name: SetPlatformSecret :exec
UPDATE platforms SET secret_sealed = $1 WHERE id = $2;

-- name: BankAccountNumbersAfter :many
SELECT id, user_id, routing_number, account_number_sealed FROM bank_accounts
WHERE (sqlc.arg(after)::text = '' OR id > nullif(sqlc.arg(after)::text, '')::uuid)
  AND id <= nullif(sqlc.arg(upto)::text, '')::uuid ORDER BY id LIMIT sqlc.arg(batch)::bigint;

-- name: SetBankAccountNumber :exec
UPDATE bank_accounts SET account_number_sealed = $1, account_number_index = $2 WHERE id = $3;

-- name: PayeeBankNumbersAfter :many
SELECT id, account_number_sealed FROM payee_banks
WHERE (sqlc.arg(after)::text = '' OR id > nullif(sqlc.arg(after)::text, '')::uuid)
  AND id <= nullif(sqlc.arg(upto)::text, '')::uuid ORDER BY id LIMIT sqlc.arg(batch)::bigint;

-- name: SetPayeeBankNumber :exec
UPDATE payee_banks SET account_number_sealed = $1 WHERE id = $2;

-- name: IdempotencyOutcomesAfter :many
SELECT id, outcome_sealed FROM idempotency_keys
WHERE (sqlc.arg(after)::text = '' OR id > nullif(sqlc.arg(after)::text, '')::uuid)
  AND id <= nullif(sqlc.arg(upto)::text, '')::uuid ORDER BY id LIMIT sqlc.arg(batch)::bigint;

-- name: SetIdempotencyOutcome :exec
UPDATE idempotency_keys SET outcome_sealed = $1 WHERE id = $2;

-- name: CountSealedByKey :many
SELECT substr(v, 4, 16)::text AS key_id, count(*) AS n FROM (
    SELECT secret_sealed AS v FROM platforms
    UNION ALL SELECT account_number_sealed FROM bank_accounts
    UNION ALL SELECT account_number_sealed FROM payee_banks
    UNION ALL SELECT key_sealed FROM blind_index_key
    UNION ALL SELECT outcome_sealed FROM idempotency_keys
    UNION ALL SELECT secret_sealed FROM webhook_endpoints
    UNION ALL SELECT previous_secret_sealed FROM webhook_endpoints WHERE previous_secret_sealed IS NOT NULL
) AS sealed GROUP BY 1 ORDER BY 1;
