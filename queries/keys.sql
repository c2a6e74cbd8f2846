-- Data keys, the blind-index key, and the sealed values a rotation or the one-time
-- sealing of an older database walks through, a batch at a time in id order, up to the
-- last id there was when the walk started.

-- name: ListDataKeys :many
SELECT * FROM data_keys ORDER BY added_at, key_id;

-- name: AddDataKey :exec
INSERT INTO data_keys (key_id, key_check, added_at) VALUES (?, ?, ?);

-- name: RetireDataKey :exec
UPDATE data_keys SET retired_at = sqlc.arg(retired_at)
WHERE key_id = sqlc.arg(key_id) AND retired_at IS NULL;

-- name: GetBlindIndexKey :one
SELECT key_sealed FROM blind_index_key WHERE id = 1;

-- name: CreateBlindIndexKey :exec
INSERT INTO blind_index_key (id, key_sealed, created_at) VALUES (1, ?, ?);

-- name: SetBlindIndexKey :exec
UPDATE blind_index_key SET key_sealed = ? WHERE id = 1;

-- name: LastPlatformID :one
SELECT CAST(coalesce(max(id), '') AS TEXT) FROM platforms;

-- name: LastBankAccountID :one
SELECT CAST(coalesce(max(id), '') AS TEXT) FROM bank_accounts;

-- name: LastPayeeBankID :one
SELECT CAST(coalesce(max(id), '') AS TEXT) FROM payee_banks;

-- name: LastIdempotencyRecordID :one
SELECT CAST(coalesce(max(id), '') AS TEXT) FROM idempotency_keys;

-- name: PlatformSecretsAfter :many
SELECT id, secret_sealed FROM platforms
WHERE id > sqlc.arg(after) AND id <= sqlc.arg(upto) ORDER BY id LIMIT sqlc.arg(batch);

-- name: SetPlatformSecret :exec
UPDATE platforms SET secret_sealed = ? WHERE id = ?;

-- name: BankAccountNumbersAfter :many
SELECT id, user_id, routing_number, account_number_sealed FROM bank_accounts
WHERE id > sqlc.arg(after) AND id <= sqlc.arg(upto) ORDER BY id LIMIT sqlc.arg(batch);

-- name: SetBankAccountNumber :exec
UPDATE bank_accounts SET account_number_sealed = ?, account_number_index = ? WHERE id = ?;

-- name: PayeeBankNumbersAfter :many
SELECT id, account_number_sealed FROM payee_banks
WHERE id > sqlc.arg(after) AND id <= sqlc.arg(upto) ORDER BY id LIMIT sqlc.arg(batch);

-- name: SetPayeeBankNumber :exec
UPDATE payee_banks SET account_number_sealed = ? WHERE id = ?;

-- name: IdempotencyOutcomesAfter :many
SELECT id, outcome_sealed FROM idempotency_keys
WHERE id > sqlc.arg(after) AND id <= sqlc.arg(upto) ORDER BY id LIMIT sqlc.arg(batch);

-- name: SetIdempotencyOutcome :exec
UPDATE idempotency_keys SET outcome_sealed = ? WHERE id = ?;

-- name: CountSealedByKey :many
SELECT CAST(substr(v, 4, 16) AS TEXT) AS key_id, count(*) AS n FROM (
    SELECT secret_sealed AS v FROM platforms
    UNION ALL SELECT account_number_sealed FROM bank_accounts
    UNION ALL SELECT account_number_sealed FROM payee_banks
    UNION ALL SELECT key_sealed FROM blind_index_key
    UNION ALL SELECT outcome_sealed FROM idempotency_keys
    UNION ALL SELECT secret_sealed FROM webhook_endpoints
    UNION ALL SELECT previous_secret_sealed FROM webhook_endpoints WHERE previous_secret_sealed IS NOT NULL
) GROUP BY 1 ORDER BY 1;
