package seal

// The associated data of each sealed column of the payments database: the column and the
// row's key. Sealed values are bound to it, so none opens in another row or column; a
// stored value is sealed with these very strings, so they never change.

// PlatformSecretAAD binds a platform's secret (platforms.secret) to its row.
func PlatformSecretAAD(id string) string { return "platforms.secret:" + id }

// BankAccountNumberAAD binds a linked account's number to its row.
func BankAccountNumberAAD(id string) string { return "bank_accounts.account_number:" + id }

// PayeeBankNumberAAD binds a payee bank's account number to its row.
func PayeeBankNumberAAD(id string) string { return "payee_banks.account_number:" + id }

// IdempotencyOutcomeAAD binds the stored outcome of an idempotent request to its row.
func IdempotencyOutcomeAAD(id string) string { return "idempotency_keys.outcome:" + id }

// WebhookSecretAAD binds a webhook endpoint's secrets, current and previous, to its row.
func WebhookSecretAAD(id string) string { return "webhook_endpoints.secret:" + id }

// KeyCheckAAD binds a data key's check (data_keys.key_check) to the key's id.
func KeyCheckAAD(id string) string { return "data_keys.key_check:" + id }

// BlindIndexKeyAAD binds the sealed blind-index key to its one row.
const BlindIndexKeyAAD = "blind_index_key.key:1"
