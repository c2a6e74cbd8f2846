-- name: CreatePayeeBank :exec
INSERT INTO payee_banks (
    id, user_id, payee_id, account_number_sealed, country, bank_acc_type, bank_nick_name,
    identifier_type, identifier_value, payout_bank_id, created_at, updated_at
) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12);

-- name: SoftDeletePayeeBank :execrows
UPDATE payee_banks
SET deleted_at = sqlc.arg(deleted_at), updated_at = sqlc.arg(deleted_at)
WHERE id = sqlc.arg(id) AND user_id = sqlc.arg(user_id) AND deleted_at IS NULL;
