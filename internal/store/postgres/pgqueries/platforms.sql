-- name: CreatePlatform :exec
INSERT INTO platforms (id, name, environment, secret_sealed, require_timestamp, created_at)
VALUES ($1, $2, $3, $4, $5, $6);

-- name: GetPlatform :one
SELECT id, name, environment, secret_sealed, user_count, created_at, require_timestamp
FROM platforms
WHERE id = $1;

-- name: CountPlatforms :one
SELECT count(*) FROM platforms WHERE environment = $1;

-- name: CountNewUser :execrows
-- The row stays locked until the transaction ends: concurrent creates on one platform
-- take their numbers one after the other, and a rolled-back create gives its number back.
UPDATE platforms
SET user_count = user_count + 1
WHERE id = $1;
