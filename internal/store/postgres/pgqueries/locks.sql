-- PostgreSQL only: row locks where many instances may change the same thing at once.
-- SQLite needs none (one writer at a time; its engine rejects FOR UPDATE).

-- name: LockUserForUpdate :one
-- Taken before a default-account change (ClearDefaultAccount, then CreateBankAccount with
-- is_default): concurrent changes for one user run one after the other instead of
-- failing on bank_accounts_one_default. NO KEY UPDATE: the inserts of other writes that
-- refer to the user (their foreign keys take KEY SHARE) need not wait for it.
SELECT id FROM users WHERE id = $1 FOR NO KEY UPDATE;

-- name: AdvisoryXactLock :exec
-- Serialises work across instances (migrations, the first load of payee rules) until the
-- transaction ends.
SELECT pg_advisory_xact_lock(sqlc.arg(key)::bigint);
