-- name: CreatePayee :one
INSERT INTO payees (id, user_id, name, email, phone_country_code, phone, created_at)
VALUES ($1, $2, $3, $4, $5, $6, $7)
RETURNING *;

-- name: GetUserPayee :one
SELECT * FROM payees
WHERE id = sqlc.arg(id) AND user_id = sqlc.arg(user_id);

-- name: RenamePayee :one
UPDATE payees
SET name = sqlc.arg(name), updated_at = sqlc.arg(updated_at)
WHERE id = sqlc.arg(id) AND user_id = sqlc.arg(user_id)
RETURNING *;

-- name: RenameUserPayee :one
-- PostgreSQL only: GetUserPayee and RenamePayee in one statement (store.Querier's
-- RenameUserPayee): the payee's row locked and read (as the last writer left it, once
-- the lock is had), then renamed; its name before beside the payee as stored. No row
-- when the user has no such payee.
WITH before AS (
    SELECT payees.id, payees.name FROM payees
    WHERE payees.id = sqlc.arg(id) AND payees.user_id = sqlc.arg(user_id)
    FOR UPDATE
), after AS (
    UPDATE payees p SET name = sqlc.arg(name), updated_at = sqlc.narg(updated_at)
    FROM before b
    WHERE p.id = b.id
    RETURNING p.*
)
SELECT a.id, a.user_id, a.name, a.email, a.phone_country_code, a.phone, a.created_at, a.updated_at,
    b.name AS before_name
FROM after a JOIN before b ON b.id = a.id;
