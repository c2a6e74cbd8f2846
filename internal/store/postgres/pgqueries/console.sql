-- The console's reads (package console, through internal/overview): what the API has no
-- operation for, read-only.

-- name: ListPlatformsPage :many
SELECT id, name, environment, user_count, created_at FROM platforms
ORDER BY created_at, id
LIMIT sqlc.arg(page_size)::bigint OFFSET sqlc.arg(page_offset)::bigint;

-- name: GetUserByEmailKey :many
-- A platform's user whose email is email_key (lowercased): none or one.
SELECT * FROM users
WHERE platform_id = sqlc.arg(platform_id) AND email_key = sqlc.arg(email_key);

-- name: SearchUsersByName :many
-- A platform's users whose lowercased name contains name_part, by pw_id, among those
-- after after_pw_id up to until_pw_id: a bounded range of the index, however rare the name.
SELECT * FROM users
WHERE platform_id = sqlc.arg(platform_id) AND pw_id > sqlc.arg(after_pw_id) AND pw_id <= sqlc.arg(until_pw_id)
  AND strpos(lower(name), sqlc.arg(name_part)) > 0
ORDER BY pw_id
LIMIT sqlc.arg(page_size)::bigint;

-- name: GetUserWallet :one
SELECT * FROM wallets WHERE user_id = $1;

-- name: GetUserSettings :one
SELECT * FROM user_settings WHERE user_id = $1;

-- name: ListUserBankAccounts :many
SELECT * FROM bank_accounts WHERE user_id = $1 ORDER BY created_at, id;

-- name: ListUserCards :many
SELECT * FROM cards WHERE user_id = $1 ORDER BY created_at, id;

-- name: ListUserPayees :many
SELECT * FROM payees WHERE user_id = $1 ORDER BY created_at, id;

-- name: ListUserPayeeBanks :many
SELECT id, payee_id, country, bank_acc_type, bank_nick_name, identifier_type, created_at, deleted_at
FROM payee_banks WHERE user_id = $1 ORDER BY created_at, id;

-- name: ListUserEvents :many
-- The platform's latest events whose payload contains part (a user's id), newest first,
-- among its latest window events from from_id on: a bounded range of the index.
SELECT latest.row_id, latest.id, latest.platform_id, latest.type, latest.created_at, latest.payload FROM (
    SELECT row_id, id, platform_id, type, created_at, payload FROM events
    WHERE platform_id = sqlc.arg(platform_id) AND id >= sqlc.arg(from_id)
    ORDER BY id DESC
    LIMIT sqlc.arg(window_size)::bigint
) latest
WHERE strpos(latest.payload, sqlc.arg(part)) > 0
ORDER BY latest.id DESC
LIMIT sqlc.arg(page_size)::bigint;

-- name: GetEndpointFailingSince :one
SELECT failing_since FROM webhook_endpoints WHERE id = $1 AND platform_id = $2;

-- name: CountEndpointPending :one
SELECT count(*) FROM webhook_deliveries WHERE endpoint_id = $1 AND state = 'pending';

-- name: LastEndpointSuccess :many
SELECT succeeded_at FROM webhook_deliveries
WHERE endpoint_id = $1 AND succeeded_at IS NOT NULL
ORDER BY succeeded_at DESC
LIMIT 1;

-- name: ListEndpointAttemptsSince :many
-- The endpoint's attempts (webhook_attempts and the deliveries' successes) at or after
-- since, oldest first, at most max_rows.
SELECT a.attempted_at, a.status_code, a.error FROM webhook_attempts a
WHERE a.endpoint_id = sqlc.arg(endpoint_id) AND a.attempted_at >= sqlc.arg(since)
UNION ALL
SELECT d.succeeded_at, d.success_status, NULL::text FROM webhook_deliveries d
WHERE d.endpoint_id = sqlc.arg(endpoint_id) AND d.succeeded_at >= sqlc.arg(since)
ORDER BY 1
LIMIT sqlc.arg(max_rows)::bigint;

-- name: ListExchangeRateHistory :many
-- The rates history of a payout currency, latest apply time first (of two with the same,
-- the later recorded), at most page_size.
SELECT * FROM exchange_rates
WHERE payout_currency = sqlc.arg(payout_currency)
ORDER BY apply_time DESC, id DESC
LIMIT sqlc.arg(page_size)::bigint;

-- name: ListRuleCurrencies :many
-- The countries and payout currencies of the current payee rule set, by country.
SELECT c.country_code, c.country_name, r.payout_currency
FROM payee_rule_countries c
JOIN payee_rule_currencies r ON r.set_id = c.set_id AND r.country_code = c.country_code
WHERE c.set_id = (SELECT max(id) FROM payee_rule_sets)
ORDER BY c.country_code, r.payout_currency;
