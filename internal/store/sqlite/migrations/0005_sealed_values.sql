-- 0005: encryption at rest. Full account numbers (linked bank accounts and payee banks) and
-- platform signing secrets are stored only sealed: AES-256-GCM under a data key, as the
-- text 'v1:' || key_id || ':' || base64(nonce || ciphertext), bound to its column and row.
--
-- This migration only reshapes the tables: the plain values stay in the renamed columns
-- until Open, in this same transaction, seals each of them (keys.go, sealPlainValues).
-- No plain value is ever committed in a sealed column: the triggers below refuse one.

-- The data keys this database has known. key_check is a known text sealed under the key:
-- Open proves it holds the right key before reading or writing anything. A key is retired
-- when a rotation has moved every value off it; a retired key seals nothing new.
CREATE TABLE data_keys (
    key_id     TEXT PRIMARY KEY CHECK (length(key_id) = 16),
    key_check  TEXT NOT NULL,
    added_at   TEXT NOT NULL,
    retired_at TEXT
) STRICT;

-- The blind-index key: random, generated once, stored sealed under the data key (and
-- resealed by a rotation like any other value), so account numbers keep the same index
-- across key rotations and duplicate detection never depends on which key sealed a row.
CREATE TABLE blind_index_key (
    id         INTEGER PRIMARY KEY CHECK (id = 1),
    key_sealed TEXT NOT NULL,
    created_at TEXT NOT NULL
) STRICT;

ALTER TABLE platforms RENAME COLUMN secret TO secret_sealed;
ALTER TABLE payee_banks RENAME COLUMN account_number TO account_number_sealed;

-- Linked bank accounts are rebuilt: a duplicate is now the same routing number and blind
-- index (HMAC-SHA256 of the number under the blind-index key) for one user. Until Open
-- seals them, both new columns hold the plain number, as unique as it was.
CREATE TABLE bank_accounts_sealed (
    id                     TEXT PRIMARY KEY,
    user_id                TEXT NOT NULL REFERENCES users (id),
    nick_name              TEXT,
    account_holder_name    TEXT NOT NULL,
    bank_name              TEXT NOT NULL,
    -- The full number, for ACH, sealed; the API only ever shows its last four digits.
    account_number_sealed  TEXT NOT NULL,
    account_number_index   BLOB NOT NULL,
    routing_number         TEXT NOT NULL,
    bank_address           TEXT,
    city                   TEXT,
    state                  TEXT,
    zip                    TEXT,
    country                TEXT,
    account_type           TEXT NOT NULL CHECK (account_type IN ('PERSONAL_SAVINGS', 'BUSINESS_SAVINGS',
                               'BUSINESS_CHECKING', 'PERSONAL_CHECKING', 'SERVICE_SAVINGS', 'SERVICE_BUSINESS')),
    account_holder_address TEXT,
    account_holder_city    TEXT,
    account_holder_state   TEXT,
    account_holder_zip     TEXT,
    account_holder_country TEXT,
    balance                TEXT NOT NULL DEFAULT '0',
    verification_status    TEXT NOT NULL DEFAULT 'not_applied',
    verification_type      TEXT NOT NULL DEFAULT 'MD',
    is_verified            INTEGER NOT NULL DEFAULT 0 CHECK (is_verified IN (0, 1)),
    is_default             INTEGER NOT NULL CHECK (is_default IN (0, 1)),
    created_at             TEXT NOT NULL,
    UNIQUE (user_id, routing_number, account_number_index)
) STRICT;
INSERT INTO bank_accounts_sealed (
    id, user_id, nick_name, account_holder_name, bank_name, account_number_sealed,
    account_number_index, routing_number, bank_address, city, state, zip, country,
    account_type, account_holder_address, account_holder_city, account_holder_state,
    account_holder_zip, account_holder_country, balance, verification_status,
    verification_type, is_verified, is_default, created_at
)
SELECT
    id, user_id, nick_name, account_holder_name, bank_name, account_number,
    CAST(account_number AS BLOB), routing_number, bank_address, city, state, zip, country,
    account_type, account_holder_address, account_holder_city, account_holder_state,
    account_holder_zip, account_holder_country, balance, verification_status,
    verification_type, is_verified, is_default, created_at
FROM bank_accounts;
DROP TABLE bank_accounts;
ALTER TABLE bank_accounts_sealed RENAME TO bank_accounts;
CREATE UNIQUE INDEX bank_accounts_one_default ON bank_accounts (user_id) WHERE is_default = 1;

-- A sealed column takes only a value sealed under a data key in use: never a plain value,
-- and never one under a retired key (a server still running on the key a rotation has
-- just retired fails its write instead of storing what no current key can read).
CREATE TRIGGER platforms_secret_sealed BEFORE INSERT ON platforms
WHEN NOT EXISTS (SELECT 1 FROM data_keys
                 WHERE retired_at IS NULL AND 'v1:' || key_id || ':' = substr(NEW.secret_sealed, 1, 20))
BEGIN SELECT RAISE(ABORT, 'payments: platforms.secret_sealed: not sealed under a data key in use'); END;
CREATE TRIGGER platforms_secret_resealed BEFORE UPDATE OF secret_sealed ON platforms
WHEN NOT EXISTS (SELECT 1 FROM data_keys
                 WHERE retired_at IS NULL AND 'v1:' || key_id || ':' = substr(NEW.secret_sealed, 1, 20))
BEGIN SELECT RAISE(ABORT, 'payments: platforms.secret_sealed: not sealed under a data key in use'); END;

CREATE TRIGGER bank_accounts_number_sealed BEFORE INSERT ON bank_accounts
WHEN NOT EXISTS (SELECT 1 FROM data_keys
                 WHERE retired_at IS NULL AND 'v1:' || key_id || ':' = substr(NEW.account_number_sealed, 1, 20))
BEGIN SELECT RAISE(ABORT, 'payments: bank_accounts.account_number_sealed: not sealed under a data key in use'); END;
CREATE TRIGGER bank_accounts_number_resealed BEFORE UPDATE OF account_number_sealed ON bank_accounts
WHEN NOT EXISTS (SELECT 1 FROM data_keys
                 WHERE retired_at IS NULL AND 'v1:' || key_id || ':' = substr(NEW.account_number_sealed, 1, 20))
BEGIN SELECT RAISE(ABORT, 'payments: bank_accounts.account_number_sealed: not sealed under a data key in use'); END;

CREATE TRIGGER payee_banks_number_sealed BEFORE INSERT ON payee_banks
WHEN NOT EXISTS (SELECT 1 FROM data_keys
                 WHERE retired_at IS NULL AND 'v1:' || key_id || ':' = substr(NEW.account_number_sealed, 1, 20))
BEGIN SELECT RAISE(ABORT, 'payments: payee_banks.account_number_sealed: not sealed under a data key in use'); END;
CREATE TRIGGER payee_banks_number_resealed BEFORE UPDATE OF account_number_sealed ON payee_banks
WHEN NOT EXISTS (SELECT 1 FROM data_keys
                 WHERE retired_at IS NULL AND 'v1:' || key_id || ':' = substr(NEW.account_number_sealed, 1, 20))
BEGIN SELECT RAISE(ABORT, 'payments: payee_banks.account_number_sealed: not sealed under a data key in use'); END;

CREATE TRIGGER idempotency_outcome_sealed BEFORE INSERT ON idempotency_keys
WHEN NOT EXISTS (SELECT 1 FROM data_keys
                 WHERE retired_at IS NULL AND 'v1:' || key_id || ':' = substr(NEW.outcome_sealed, 1, 20))
BEGIN SELECT RAISE(ABORT, 'payments: idempotency_keys.outcome_sealed: not sealed under a data key in use'); END;
CREATE TRIGGER idempotency_outcome_resealed BEFORE UPDATE OF outcome_sealed ON idempotency_keys
WHEN NOT EXISTS (SELECT 1 FROM data_keys
                 WHERE retired_at IS NULL AND 'v1:' || key_id || ':' = substr(NEW.outcome_sealed, 1, 20))
BEGIN SELECT RAISE(ABORT, 'payments: idempotency_keys.outcome_sealed: not sealed under a data key in use'); END;

CREATE TRIGGER blind_index_key_sealed BEFORE INSERT ON blind_index_key
WHEN NOT EXISTS (SELECT 1 FROM data_keys
                 WHERE retired_at IS NULL AND 'v1:' || key_id || ':' = substr(NEW.key_sealed, 1, 20))
BEGIN SELECT RAISE(ABORT, 'payments: blind_index_key.key_sealed: not sealed under a data key in use'); END;
CREATE TRIGGER blind_index_key_resealed BEFORE UPDATE OF key_sealed ON blind_index_key
WHEN NOT EXISTS (SELECT 1 FROM data_keys
                 WHERE retired_at IS NULL AND 'v1:' || key_id || ':' = substr(NEW.key_sealed, 1, 20))
BEGIN SELECT RAISE(ABORT, 'payments: blind_index_key.key_sealed: not sealed under a data key in use'); END;
