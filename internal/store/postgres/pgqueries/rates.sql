-- name: AddExchangeRate :one
INSERT INTO exchange_rates (payout_currency, base_currency, exchange_rate, apply_time, fixed, created_at)
VALUES ($1, $2, $3, $4, $5, $6)
RETURNING *;

-- name: CurrentExchangeRates :many
-- For each base currency of the payout currency, the latest rate in force at as_of (of
-- two with the same apply_time, the later recorded).
WITH bases AS (
    SELECT DISTINCT base_currency FROM exchange_rates WHERE payout_currency = sqlc.arg(payout_currency)
)
SELECT r.*
FROM bases
JOIN exchange_rates r ON r.id = (
    SELECT x.id FROM exchange_rates x
    WHERE x.payout_currency = sqlc.arg(payout_currency)
      AND x.base_currency = bases.base_currency
      AND x.apply_time <= sqlc.arg(as_of)
    ORDER BY x.apply_time DESC, x.id DESC
    LIMIT 1
)
ORDER BY r.base_currency;
