-- name: CreatePlatform :exec
INSERT INTO platforms (id, name, environment, secret_sealed, require_timestamp, created_at)
VALUES (?, ?, ?, ?, ?, ?);

-- name: GetPlatform :one
SELECT id, name, environment, secret_sealed, user_count, created_at, require_timestamp
FROM platforms
WHERE id = ?;

-- name: CountPlatforms :one
SELECT count(*) FROM platforms WHERE environment = ?;

-- name: CountNewUser :execrows
UPDATE platforms
SET user_count = user_count + 1
WHERE id = ?;
