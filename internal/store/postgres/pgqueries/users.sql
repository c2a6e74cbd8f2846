-- name: CreateUser :one
-- pw_id is the platform's user count, which CountNewUser has just raised. No row when the
-- platform does not exist: the user is written from the platform's row, as every statement
-- that writes a user, a wallet or settings writes from its parent's (these tables keep no
-- foreign key to it: migrations/0004).
WITH given AS (
    SELECT sqlc.arg(id)::uuid AS id, sqlc.arg(platform_id)::uuid AS platform_id, sqlc.arg(name)::text AS name,
        sqlc.narg(email)::text AS email, sqlc.narg(email_key)::text AS email_key,
        sqlc.narg(phone_country_code)::text AS phone_country_code, sqlc.narg(phone)::text AS phone,
        sqlc.arg(created_at)::timestamptz AS created_at
)
INSERT INTO users (id, platform_id, pw_id, name, email, email_key, phone_country_code, phone, created_at)
SELECT g.id, p.id, p.user_count, g.name, g.email, g.email_key, g.phone_country_code, g.phone, g.created_at
FROM given g JOIN platforms p ON p.id = g.platform_id
RETURNING *;

-- name: CreateWallet :exec
-- Nothing is written when the user does not exist.
WITH given AS (
    SELECT sqlc.arg(id)::uuid AS id, sqlc.arg(user_id)::uuid AS user_id, sqlc.arg(currency)::text AS currency,
        sqlc.arg(created_at)::timestamptz AS created_at
)
INSERT INTO wallets (id, user_id, currency, balance, created_at)
SELECT g.id, u.id, g.currency, 0, g.created_at FROM given g JOIN users u ON u.id = g.user_id;

-- name: CreateUserSettings :exec
-- Nothing is written when the user does not exist.
WITH given AS (
    SELECT sqlc.arg(user_id)::uuid AS user_id, sqlc.arg(currency)::text AS currency, sqlc.arg(timezone)::text AS timezone,
        sqlc.arg(language)::text AS language, sqlc.arg(notifications_enabled)::bigint <> 0 AS notifications_enabled,
        sqlc.arg(two_factor_enabled)::bigint <> 0 AS two_factor_enabled, sqlc.arg(created_at)::timestamptz AS created_at
)
INSERT INTO user_settings (user_id, currency, timezone, language, notifications_enabled, two_factor_enabled, created_at)
SELECT u.id, g.currency, g.timezone, g.language, g.notifications_enabled, g.two_factor_enabled, g.created_at
FROM given g JOIN users u ON u.id = g.user_id;

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
-- PostgreSQL only: CountNewUser, CreateUser, CreateWallet and CreateUserSettings in one
-- statement, one round trip (store.Querier's CreateUserRows). The platform's row, raised
-- and locked first, numbers the user; its clock (user_clocks) times it: created_at is the
-- later of the time given and the previous user's, so that creation times follow pw_id
-- whichever instance created the user before. No row when the platform does not exist.
WITH counted AS (
    UPDATE platforms SET user_count = user_count + 1
    WHERE platforms.id = sqlc.arg(platform_id)
    RETURNING platforms.id, user_count
), clock AS (
    INSERT INTO user_clocks AS old (platform_id, last_user_at)
    SELECT c.id, sqlc.arg(created_at)::timestamptz FROM counted c
    ON CONFLICT (platform_id) DO UPDATE SET last_user_at = GREATEST(old.last_user_at, excluded.last_user_at)
    RETURNING last_user_at
), u AS (
    INSERT INTO users (id, platform_id, pw_id, name, email, email_key, phone_country_code, phone, created_at)
    SELECT sqlc.arg(id)::uuid, c.id, c.user_count, sqlc.arg(name)::text, sqlc.narg(email)::text,
        sqlc.narg(email_key)::text, sqlc.narg(phone_country_code)::text, sqlc.narg(phone)::text, t.last_user_at
    FROM counted c, clock t
    RETURNING *
), w AS (
    INSERT INTO wallets (id, user_id, currency, balance, created_at)
    SELECT sqlc.arg(wallet_id)::uuid, u.id, sqlc.arg(wallet_currency)::text, 0, u.created_at FROM u
), s AS (
    INSERT INTO user_settings (user_id, currency, timezone, language, notifications_enabled, two_factor_enabled, created_at)
    SELECT u.id, sqlc.arg(settings_currency)::text, sqlc.arg(timezone)::text, sqlc.arg(language)::text,
        sqlc.arg(notifications_enabled)::bigint <> 0, sqlc.arg(two_factor_enabled)::bigint <> 0, u.created_at
    FROM u
)
SELECT * FROM u;

-- name: CountNewUsers :one
-- PostgreSQL only: raises the platform's user count by count, locking the platform's row
-- until the transaction ends, and returns the new count: the users CreateUsersRows writes
-- next are numbered up to it. No row when the platform does not exist.
UPDATE platforms SET user_count = user_count + sqlc.arg(count)::bigint
WHERE id = sqlc.arg(platform_id)
RETURNING user_count;

-- name: CreateUsersRows :many
-- PostgreSQL only: CreateUserRows for many users of one platform, in one statement, after
-- CountNewUsers has raised the count by as many in this transaction and locked the
-- platform's row (so that this statement's snapshot, taken after that lock, sees the
-- last writer's clock). It may be sent in one round trip with it: the users are numbered
-- up to the platform's count as raised, read here, not given. The users are a JSON
-- array of objects, numbered in the order of their ord (1, 2, 3...); each is timed no
-- earlier than the user before it: the later of its time, the times of the array's users
-- before it and the platform's clock. No user is written when the platform does not exist.
WITH given AS (
    SELECT (v->>'id')::uuid AS id, v->>'name' AS name, v->>'email' AS email, v->>'email_key' AS email_key,
        v->>'phone_country_code' AS phone_country_code, v->>'phone' AS phone, (v->>'wallet_id')::uuid AS wallet_id,
        v->>'wallet_currency' AS wallet_currency, v->>'settings_currency' AS settings_currency,
        v->>'timezone' AS timezone, v->>'language' AS language,
        (v->>'notifications_enabled')::bigint <> 0 AS notifications_enabled,
        (v->>'two_factor_enabled')::bigint <> 0 AS two_factor_enabled, (v->>'ord')::bigint AS ord,
        p.user_count - jsonb_array_length(sqlc.arg(users)::jsonb) + (v->>'ord')::bigint AS pw_id,
        GREATEST(
            max((v->>'created_at')::timestamptz) OVER (ORDER BY (v->>'ord')::bigint),
            (SELECT c.last_user_at FROM user_clocks c WHERE c.platform_id = p.id)
        ) AS at
    FROM platforms p, jsonb_array_elements(sqlc.arg(users)::jsonb) AS v
    WHERE p.id = sqlc.arg(platform_id)
), clock AS (
    INSERT INTO user_clocks AS old (platform_id, last_user_at)
    SELECT sqlc.arg(platform_id), max(at) FROM given HAVING count(*) > 0
    ON CONFLICT (platform_id) DO UPDATE SET last_user_at = GREATEST(old.last_user_at, excluded.last_user_at)
), u AS (
    INSERT INTO users (id, platform_id, pw_id, name, email, email_key, phone_country_code, phone, created_at)
    SELECT id, sqlc.arg(platform_id), pw_id, name, email, email_key, phone_country_code, phone, at
    FROM given ORDER BY ord
    RETURNING *
), w AS (
    INSERT INTO wallets (id, user_id, currency, balance, created_at)
    SELECT g.wallet_id, u.id, g.wallet_currency, 0, u.created_at FROM u JOIN given g ON g.id = u.id
), s AS (
    INSERT INTO user_settings (user_id, currency, timezone, language, notifications_enabled, two_factor_enabled, created_at)
    SELECT u.id, g.settings_currency, g.timezone, g.language, g.notifications_enabled, g.two_factor_enabled, u.created_at
    FROM u JOIN given g ON g.id = u.id
)
SELECT * FROM u;
