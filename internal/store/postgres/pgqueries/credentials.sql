-- name: CreateAPICredential :exec
INSERT INTO api_credentials (api_key, user_id, secret_hash, created_at)
VALUES ($1, $2, $3, $4);

-- name: GetAPICredential :one
SELECT c.api_key, c.user_id, c.secret_hash, u.platform_id, p.environment
FROM api_credentials c
JOIN users u ON u.id = c.user_id
JOIN platforms p ON p.id = u.platform_id
WHERE c.api_key = $1;
