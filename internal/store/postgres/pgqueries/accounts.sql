-- name: CreateBankAccount :one
-- The row comes back as stored: balance and verification state are the table's defaults,
-- the account number sealed.
INSERT INTO bank_accounts (
    id, user_id, nick_name, account_holder_name, bank_name, account_number_sealed,
    account_number_index, routing_number, bank_address, city, state, zip, country, account_type,
    account_holder_address, account_holder_city, account_holder_state, account_holder_zip,
    account_holder_country, is_default, created_at
) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21)
RETURNING *;

-- name: InsertBankAccountTakingDefault :one
-- PostgreSQL only: CreateBankAccount whose is_default the default-account rule decides: true
-- when asked (the user's default, if any, cleared before: ClearDefaultAccount) or when the
-- user has no default account. Sent behind the user's lock (LockUserForUpdate), in
-- the same round: the statement's snapshot, taken when it starts, once the lock is had,
-- sees the default account any write that held the user added.
INSERT INTO bank_accounts (
    id, user_id, nick_name, account_holder_name, bank_name, account_number_sealed,
    account_number_index, routing_number, bank_address, city, state, zip, country, account_type,
    account_holder_address, account_holder_city, account_holder_state, account_holder_zip,
    account_holder_country, is_default, created_at
) VALUES (
    sqlc.arg(id), sqlc.arg(user_id), sqlc.narg(nick_name), sqlc.arg(account_holder_name), sqlc.arg(bank_name),
    sqlc.arg(account_number_sealed), sqlc.arg(account_number_index), sqlc.arg(routing_number),
    sqlc.narg(bank_address), sqlc.narg(city), sqlc.narg(state), sqlc.narg(zip), sqlc.narg(country),
    sqlc.arg(account_type), sqlc.narg(account_holder_address), sqlc.narg(account_holder_city),
    sqlc.narg(account_holder_state), sqlc.narg(account_holder_zip), sqlc.narg(account_holder_country),
    sqlc.arg(asked)::boolean OR NOT EXISTS (
        SELECT 1 FROM bank_accounts d WHERE d.user_id = sqlc.arg(user_id) AND d.is_default),
    sqlc.arg(created_at)
)
RETURNING *;

-- name: UserHasDefaultAccount :one
SELECT EXISTS (SELECT 1 FROM bank_accounts WHERE user_id = $1 AND is_default);

-- name: ClearDefaultAccount :exec
UPDATE bank_accounts SET is_default = false WHERE user_id = $1 AND is_default;

-- name: GetPlatformBankAccount :one
SELECT sqlc.embed(bank_accounts), users.verified_at
FROM bank_accounts
JOIN users ON users.id = bank_accounts.user_id
WHERE bank_accounts.id = sqlc.arg(id) AND users.platform_id = sqlc.arg(platform_id);
