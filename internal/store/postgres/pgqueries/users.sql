-- name: CreateUser :one
-- pw_id is the platform's user count, which CountNewUser has just raised.
INSERT INTO users (id, platform_id, pw_id, name, email, email_key, phone_country_code, phone, created_at)
VALUES (
    sqlc.arg(id), sqlc.arg(platform_id),
    (SELECT user_count FROM platforms WHERE platforms.id = sqlc.arg(platform_id)),
    sqlc.arg(name), sqlc.arg(email), sqlc.arg(email_key), sqlc.arg(phone_country_code), sqlc.arg(phone),
    sqlc.arg(created_at)
)
RETURNING *;

-- name: CreateWallet :exec
INSERT INTO wallets (id, user_id, currency, balance, created_at)
VALUES ($1, $2, $3, '0', $4);

-- name: CreateUserSettings :exec
INSERT INTO user_settings (user_id, currency, timezone, language, notifications_enabled, two_factor_enabled, created_at)
VALUES ($1, $2, $3, $4, $5, $6, $7);

-- name: GetPlatformUser :one
SELECT * FROM users
WHERE id = $1 AND platform_id = $2;

-- name: GetUser :one
SELECT * FROM users
WHERE id = $1;

-- name: ListUsersPage :many
SELECT * FROM users
WHERE platform_id = sqlc.arg(platform_id) AND pw_id > sqlc.arg(after_pw_id)
ORDER BY pw_id
LIMIT sqlc.arg(page_size)::bigint;

-- name: VerifyUser :execrows
-- Verifies an unverified user: none affected for a user verified already (or unknown).
UPDATE users
SET verified_at = sqlc.arg(verified_at)
WHERE id = sqlc.arg(id) AND verified_at IS NULL;

-- name: CreateUserRows :one
-- PostgreSQL only: CountNewUser, CreateUser, CreateWallet, CreateUserSettings and
-- EmitEvent in one statement, one round trip (store.Querier's CreateUserRows). The
-- platform's row, raised and locked first, numbers the user; its clock (user_clocks) times
-- it: created_at is the later of the time given and the previous user's, so that creation
-- times follow pw_id whichever instance created the user before. No row when the platform
-- does not exist; deliveries is the count of pending deliveries of the event.
WITH counted AS (
    UPDATE platforms SET user_count = user_count + 1
    WHERE platforms.id = sqlc.arg(platform_id)
    RETURNING platforms.id, user_count
), clock AS (
    INSERT INTO user_clocks AS old (platform_id, last_user_at)
    SELECT c.id, sqlc.arg(created_at)::text FROM counted c
    ON CONFLICT (platform_id) DO UPDATE SET last_user_at = GREATEST(old.last_user_at, excluded.last_user_at)
    RETURNING last_user_at
), u AS (
    INSERT INTO users (id, platform_id, pw_id, name, email, email_key, phone_country_code, phone, created_at)
    SELECT sqlc.arg(id)::text, c.id, c.user_count, sqlc.arg(name)::text, sqlc.narg(email)::text,
        sqlc.narg(email_key)::text, sqlc.narg(phone_country_code)::text, sqlc.narg(phone)::text, t.last_user_at
    FROM counted c, clock t
    RETURNING *
), w AS (
    INSERT INTO wallets (id, user_id, currency, balance, created_at)
    SELECT sqlc.arg(wallet_id)::text, u.id, sqlc.arg(wallet_currency)::text, '0', u.created_at FROM u
), s AS (
    INSERT INTO user_settings (user_id, currency, timezone, language, notifications_enabled, two_factor_enabled, created_at)
    SELECT u.id, sqlc.arg(settings_currency)::text, sqlc.arg(timezone)::text, sqlc.arg(language)::text,
        sqlc.arg(notifications_enabled)::bigint, sqlc.arg(two_factor_enabled)::bigint, u.created_at
    FROM u
), ev AS (
    INSERT INTO events (id, platform_id, type, created_at, payload)
    SELECT sqlc.arg(event_id)::text, u.platform_id, sqlc.arg(event_type)::text, sqlc.arg(event_at)::text, sqlc.arg(payload)::text
    FROM u
    RETURNING id, platform_id, type, created_at
), d AS (
    INSERT INTO webhook_deliveries (event_id, endpoint_id, state, attempts, failures, next_attempt_at)
    SELECT ev.id, e.id, 'pending', 0, 0, ev.created_at
    FROM ev JOIN webhook_endpoints e ON e.platform_id = ev.platform_id
    WHERE e.status = 'enabled' AND e.deleted_at IS NULL
      AND (e.all_events = 1 OR EXISTS (
          SELECT 1 FROM webhook_subscriptions sub WHERE sub.endpoint_id = e.id AND sub.type = ev.type))
    RETURNING 1
)
SELECT u.row_id, u.id, u.platform_id, u.pw_id, u.name, u.email, u.email_key, u.phone_country_code, u.phone,
    u.verified_at, u.created_at, (SELECT count(*) FROM d) AS deliveries
FROM u;
