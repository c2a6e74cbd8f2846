-- name: CreatePayeeBank :execrows
-- A bank of the user's payee, written only when the payee is the user's: no row written is
-- the payee not found (one statement, where a read of the payee and the insert were two).
INSERT INTO payee_banks (
    id, user_id, payee_id, account_number_sealed, country, bank_acc_type, bank_nick_name,
    identifier_type, identifier_value, payout_bank_id, created_at, updated_at
)
SELECT sqlc.arg(id), p.user_id, p.id, sqlc.arg(account_number_sealed), sqlc.arg(country), sqlc.arg(bank_acc_type),
    sqlc.narg(bank_nick_name), sqlc.narg(identifier_type), sqlc.narg(identifier_value), sqlc.narg(payout_bank_id),
    sqlc.arg(created_at), sqlc.arg(updated_at)
FROM payees p
WHERE p.id = sqlc.arg(payee_id) AND p.user_id = sqlc.arg(user_id);

-- name: SoftDeletePayeeBank :execrows
UPDATE payee_banks
SET deleted_at = sqlc.arg(deleted_at), updated_at = sqlc.arg(deleted_at)
WHERE id = sqlc.arg(id) AND user_id = sqlc.arg(user_id) AND deleted_at IS NULL;
