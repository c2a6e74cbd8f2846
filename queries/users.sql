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
VALUES (?, ?, ?, '0', ?);

-- name: CreateUserSettings :exec
INSERT INTO user_settings (user_id, currency, timezone, language, notifications_enabled, two_factor_enabled, created_at)
VALUES (?, ?, ?, ?, ?, ?, ?);

-- name: GetPlatformUser :one
SELECT * FROM users
WHERE id = ? AND platform_id = ?;

-- name: GetUser :one
SELECT * FROM users
WHERE id = ?;

-- name: ListUsersPage :many
SELECT * FROM users
WHERE platform_id = sqlc.arg(platform_id) AND pw_id > sqlc.arg(after_pw_id)
ORDER BY pw_id
LIMIT sqlc.arg(page_size);

-- name: VerifyUser :execrows
-- Verifies an unverified user: none affected for a user verified already (or unknown).
UPDATE users
SET verified_at = sqlc.arg(verified_at)
WHERE id = sqlc.arg(id) AND verified_at IS NULL;
