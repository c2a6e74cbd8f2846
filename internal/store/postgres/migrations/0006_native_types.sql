-- 0006 (PostgreSQL): the columns in PostgreSQL's own types, where 0001 kept SQLite's shapes,
-- so that a query or a BI tool on the database sees times, flags, ids and decimals as such:
--   - a time is timestamptz (it was TEXT 'YYYY-MM-DDTHH:MM:SS.ffffffZ', UTC), except
--     exchange_rates.apply_time, the API's 'YYYY-MM-DDTHH:MM:SS' in UTC without an offset,
--     which is a timestamp (without time zone);
--   - a flag is boolean (it was BIGINT 0 or 1, with a CHECK);
--   - an id the service makes is uuid (it was TEXT, the canonical lower-case form);
--     contact_id and payout_bank_id name other systems' records and stay TEXT;
--   - a decimal (exchange_rate, balance) is numeric, which keeps its digits as written
--     (1.50 stays 1.50).
-- The service still reads and writes the strings and 0/1 it did (pgqueries/types.go): the
-- answers are the same bytes. Each value is converted in place, by the ALTER TABLE of its
-- table (one rewrite a table), and must read back as exactly the text it was: one that would
-- not (say an id in upper case) fails the migration, naming it, and nothing is changed. The
-- foreign keys between converted columns, the flags' CHECKs and defaults and the partial
-- index on is_default are dropped first and made again over the new types.

-- payments_0006_time(v, col) is v as a timestamptz; it fails when v is not a time in the
-- service's layout.
CREATE FUNCTION payments_0006_time(v text, col text) RETURNS timestamptz LANGUAGE plpgsql STABLE STRICT AS $$
DECLARE
    t timestamptz := v::timestamptz;
BEGIN
    IF to_char(t AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') <> v THEN
        RAISE EXCEPTION 'payments: %: % is not a time as the service writes one', col, v;
    END IF;
    RETURN t;
END
$$;

-- payments_0006_local_time(v, col) is v, 'YYYY-MM-DDTHH:MM:SS', as a timestamp.
CREATE FUNCTION payments_0006_local_time(v text, col text) RETURNS timestamp LANGUAGE plpgsql IMMUTABLE STRICT AS $$
DECLARE
    t timestamp := v::timestamp;
BEGIN
    IF to_char(t, 'YYYY-MM-DD"T"HH24:MI:SS') <> v THEN
        RAISE EXCEPTION 'payments: %: % is not a time as the service writes one', col, v;
    END IF;
    RETURN t;
END
$$;

-- payments_0006_uuid(v, col) is v as a uuid; it fails when v is not one in canonical form.
CREATE FUNCTION payments_0006_uuid(v text, col text) RETURNS uuid LANGUAGE plpgsql IMMUTABLE STRICT AS $$
DECLARE
    u uuid := v::uuid;
BEGIN
    IF u::text <> v THEN
        RAISE EXCEPTION 'payments: %: % is not a uuid in canonical form', col, v;
    END IF;
    RETURN u;
END
$$;

-- payments_0006_decimal(v, col) is v as a numeric; it fails when numeric would show v
-- otherwise.
CREATE FUNCTION payments_0006_decimal(v text, col text) RETURNS numeric LANGUAGE plpgsql IMMUTABLE STRICT AS $$
DECLARE
    n numeric := v::numeric;
BEGIN
    IF n::text <> v THEN
        RAISE EXCEPTION 'payments: %: % would read back as %', col, v, n;
    END IF;
    RETURN n;
END
$$;

-- The foreign keys between converted columns (made again at the end).
ALTER TABLE api_credentials DROP CONSTRAINT api_credentials_user_id_fkey;
ALTER TABLE payees DROP CONSTRAINT payees_user_id_fkey;
ALTER TABLE bank_accounts DROP CONSTRAINT bank_accounts_user_id_fkey;
ALTER TABLE cards DROP CONSTRAINT cards_user_id_fkey;
ALTER TABLE payee_banks DROP CONSTRAINT payee_banks_user_id_fkey, DROP CONSTRAINT payee_banks_payee_id_fkey;
ALTER TABLE payee_addresses DROP CONSTRAINT payee_addresses_user_id_fkey, DROP CONSTRAINT payee_addresses_payee_id_fkey;
ALTER TABLE webhook_endpoints DROP CONSTRAINT webhook_endpoints_platform_id_fkey;
ALTER TABLE webhook_subscriptions DROP CONSTRAINT webhook_subscriptions_endpoint_id_fkey;
ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_event_id_fkey,
    DROP CONSTRAINT webhook_deliveries_endpoint_id_fkey;
ALTER TABLE webhook_attempts DROP CONSTRAINT webhook_attempts_event_id_fkey, DROP CONSTRAINT webhook_attempts_endpoint_id_fkey;
-- Its predicate compares is_default with 1 (made again as WHERE is_default).
DROP INDEX bank_accounts_one_default;

ALTER TABLE platforms
    ALTER COLUMN id TYPE uuid USING payments_0006_uuid(id, 'platforms.id'),
    ALTER COLUMN created_at TYPE timestamptz USING payments_0006_time(created_at, 'platforms.created_at'),
    DROP CONSTRAINT platforms_require_timestamp_check,
    ALTER COLUMN require_timestamp DROP DEFAULT,
    ALTER COLUMN require_timestamp TYPE boolean USING require_timestamp <> 0,
    ALTER COLUMN require_timestamp SET DEFAULT false;

ALTER TABLE users
    ALTER COLUMN id TYPE uuid USING payments_0006_uuid(id, 'users.id'),
    ALTER COLUMN platform_id TYPE uuid USING payments_0006_uuid(platform_id, 'users.platform_id'),
    ALTER COLUMN verified_at TYPE timestamptz USING payments_0006_time(verified_at, 'users.verified_at'),
    ALTER COLUMN created_at TYPE timestamptz USING payments_0006_time(created_at, 'users.created_at');

ALTER TABLE wallets
    ALTER COLUMN id TYPE uuid USING payments_0006_uuid(id, 'wallets.id'),
    ALTER COLUMN user_id TYPE uuid USING payments_0006_uuid(user_id, 'wallets.user_id'),
    ALTER COLUMN balance DROP DEFAULT,
    ALTER COLUMN balance TYPE numeric USING payments_0006_decimal(balance, 'wallets.balance'),
    ALTER COLUMN balance SET DEFAULT 0,
    ALTER COLUMN created_at TYPE timestamptz USING payments_0006_time(created_at, 'wallets.created_at');

ALTER TABLE user_settings
    ALTER COLUMN user_id TYPE uuid USING payments_0006_uuid(user_id, 'user_settings.user_id'),
    DROP CONSTRAINT user_settings_notifications_enabled_check,
    ALTER COLUMN notifications_enabled TYPE boolean USING notifications_enabled <> 0,
    DROP CONSTRAINT user_settings_two_factor_enabled_check,
    ALTER COLUMN two_factor_enabled TYPE boolean USING two_factor_enabled <> 0,
    ALTER COLUMN created_at TYPE timestamptz USING payments_0006_time(created_at, 'user_settings.created_at');

ALTER TABLE api_credentials
    ALTER COLUMN api_key TYPE uuid USING payments_0006_uuid(api_key, 'api_credentials.api_key'),
    ALTER COLUMN user_id TYPE uuid USING payments_0006_uuid(user_id, 'api_credentials.user_id'),
    ALTER COLUMN created_at TYPE timestamptz USING payments_0006_time(created_at, 'api_credentials.created_at');

ALTER TABLE payees
    ALTER COLUMN id TYPE uuid USING payments_0006_uuid(id, 'payees.id'),
    ALTER COLUMN user_id TYPE uuid USING payments_0006_uuid(user_id, 'payees.user_id'),
    ALTER COLUMN created_at TYPE timestamptz USING payments_0006_time(created_at, 'payees.created_at'),
    ALTER COLUMN updated_at TYPE timestamptz USING payments_0006_time(updated_at, 'payees.updated_at');

ALTER TABLE bank_accounts
    ALTER COLUMN id TYPE uuid USING payments_0006_uuid(id, 'bank_accounts.id'),
    ALTER COLUMN user_id TYPE uuid USING payments_0006_uuid(user_id, 'bank_accounts.user_id'),
    ALTER COLUMN balance DROP DEFAULT,
    ALTER COLUMN balance TYPE numeric USING payments_0006_decimal(balance, 'bank_accounts.balance'),
    ALTER COLUMN balance SET DEFAULT 0,
    DROP CONSTRAINT bank_accounts_is_verified_check,
    ALTER COLUMN is_verified DROP DEFAULT,
    ALTER COLUMN is_verified TYPE boolean USING is_verified <> 0,
    ALTER COLUMN is_verified SET DEFAULT false,
    DROP CONSTRAINT bank_accounts_is_default_check,
    ALTER COLUMN is_default TYPE boolean USING is_default <> 0,
    ALTER COLUMN created_at TYPE timestamptz USING payments_0006_time(created_at, 'bank_accounts.created_at');

ALTER TABLE cards
    ALTER COLUMN id TYPE uuid USING payments_0006_uuid(id, 'cards.id'),
    ALTER COLUMN user_id TYPE uuid USING payments_0006_uuid(user_id, 'cards.user_id'),
    ALTER COLUMN created_at TYPE timestamptz USING payments_0006_time(created_at, 'cards.created_at'),
    ALTER COLUMN deleted_at TYPE timestamptz USING payments_0006_time(deleted_at, 'cards.deleted_at');

ALTER TABLE payee_banks
    ALTER COLUMN id TYPE uuid USING payments_0006_uuid(id, 'payee_banks.id'),
    ALTER COLUMN user_id TYPE uuid USING payments_0006_uuid(user_id, 'payee_banks.user_id'),
    ALTER COLUMN payee_id TYPE uuid USING payments_0006_uuid(payee_id, 'payee_banks.payee_id'),
    ALTER COLUMN created_at TYPE timestamptz USING payments_0006_time(created_at, 'payee_banks.created_at'),
    ALTER COLUMN updated_at TYPE timestamptz USING payments_0006_time(updated_at, 'payee_banks.updated_at'),
    ALTER COLUMN deleted_at TYPE timestamptz USING payments_0006_time(deleted_at, 'payee_banks.deleted_at');

ALTER TABLE payee_addresses
    ALTER COLUMN id TYPE uuid USING payments_0006_uuid(id, 'payee_addresses.id'),
    ALTER COLUMN user_id TYPE uuid USING payments_0006_uuid(user_id, 'payee_addresses.user_id'),
    ALTER COLUMN payee_id TYPE uuid USING payments_0006_uuid(payee_id, 'payee_addresses.payee_id'),
    DROP CONSTRAINT payee_addresses_is_default_check,
    ALTER COLUMN is_default DROP DEFAULT,
    ALTER COLUMN is_default TYPE boolean USING is_default <> 0,
    ALTER COLUMN is_default SET DEFAULT false,
    ALTER COLUMN created_at TYPE timestamptz USING payments_0006_time(created_at, 'payee_addresses.created_at'),
    ALTER COLUMN updated_at TYPE timestamptz USING payments_0006_time(updated_at, 'payee_addresses.updated_at'),
    ALTER COLUMN deleted_at TYPE timestamptz USING payments_0006_time(deleted_at, 'payee_addresses.deleted_at');

ALTER TABLE payee_rule_sets
    ALTER COLUMN loaded_at TYPE timestamptz USING payments_0006_time(loaded_at, 'payee_rule_sets.loaded_at');

ALTER TABLE exchange_rates
    ALTER COLUMN exchange_rate TYPE numeric USING payments_0006_decimal(exchange_rate, 'exchange_rates.exchange_rate'),
    ALTER COLUMN apply_time TYPE timestamp USING payments_0006_local_time(apply_time, 'exchange_rates.apply_time'),
    DROP CONSTRAINT exchange_rates_fixed_check,
    ALTER COLUMN fixed TYPE boolean USING fixed <> 0,
    ALTER COLUMN created_at TYPE timestamptz USING payments_0006_time(created_at, 'exchange_rates.created_at');

ALTER TABLE idempotency_keys
    ALTER COLUMN id TYPE uuid USING payments_0006_uuid(id, 'idempotency_keys.id'),
    ALTER COLUMN created_at TYPE timestamptz USING payments_0006_time(created_at, 'idempotency_keys.created_at');

ALTER TABLE data_keys
    ALTER COLUMN added_at TYPE timestamptz USING payments_0006_time(added_at, 'data_keys.added_at'),
    ALTER COLUMN retired_at TYPE timestamptz USING payments_0006_time(retired_at, 'data_keys.retired_at');

ALTER TABLE blind_index_key
    ALTER COLUMN created_at TYPE timestamptz USING payments_0006_time(created_at, 'blind_index_key.created_at');

ALTER TABLE events
    ALTER COLUMN id TYPE uuid USING payments_0006_uuid(id, 'events.id'),
    ALTER COLUMN platform_id TYPE uuid USING payments_0006_uuid(platform_id, 'events.platform_id'),
    ALTER COLUMN created_at TYPE timestamptz USING payments_0006_time(created_at, 'events.created_at');

ALTER TABLE webhook_endpoints
    ALTER COLUMN id TYPE uuid USING payments_0006_uuid(id, 'webhook_endpoints.id'),
    ALTER COLUMN platform_id TYPE uuid USING payments_0006_uuid(platform_id, 'webhook_endpoints.platform_id'),
    DROP CONSTRAINT webhook_endpoints_all_events_check,
    ALTER COLUMN all_events TYPE boolean USING all_events <> 0,
    ALTER COLUMN previous_until TYPE timestamptz USING payments_0006_time(previous_until, 'webhook_endpoints.previous_until'),
    ALTER COLUMN failing_since TYPE timestamptz USING payments_0006_time(failing_since, 'webhook_endpoints.failing_since'),
    ALTER COLUMN created_at TYPE timestamptz USING payments_0006_time(created_at, 'webhook_endpoints.created_at'),
    ALTER COLUMN deleted_at TYPE timestamptz USING payments_0006_time(deleted_at, 'webhook_endpoints.deleted_at');

ALTER TABLE webhook_subscriptions
    ALTER COLUMN endpoint_id TYPE uuid USING payments_0006_uuid(endpoint_id, 'webhook_subscriptions.endpoint_id');

ALTER TABLE webhook_deliveries
    ALTER COLUMN event_id TYPE uuid USING payments_0006_uuid(event_id, 'webhook_deliveries.event_id'),
    ALTER COLUMN endpoint_id TYPE uuid USING payments_0006_uuid(endpoint_id, 'webhook_deliveries.endpoint_id'),
    ALTER COLUMN next_attempt_at TYPE timestamptz USING payments_0006_time(next_attempt_at, 'webhook_deliveries.next_attempt_at'),
    ALTER COLUMN lease_until TYPE timestamptz USING payments_0006_time(lease_until, 'webhook_deliveries.lease_until'),
    DROP CONSTRAINT webhook_deliveries_resent_check,
    ALTER COLUMN resent DROP DEFAULT,
    ALTER COLUMN resent TYPE boolean USING resent <> 0,
    ALTER COLUMN resent SET DEFAULT false,
    ALTER COLUMN succeeded_at TYPE timestamptz USING payments_0006_time(succeeded_at, 'webhook_deliveries.succeeded_at');

ALTER TABLE webhook_attempts
    ALTER COLUMN event_id TYPE uuid USING payments_0006_uuid(event_id, 'webhook_attempts.event_id'),
    ALTER COLUMN endpoint_id TYPE uuid USING payments_0006_uuid(endpoint_id, 'webhook_attempts.endpoint_id'),
    ALTER COLUMN attempted_at TYPE timestamptz USING payments_0006_time(attempted_at, 'webhook_attempts.attempted_at');

ALTER TABLE user_clocks
    ALTER COLUMN platform_id TYPE uuid USING payments_0006_uuid(platform_id, 'user_clocks.platform_id'),
    ALTER COLUMN last_user_at TYPE timestamptz USING payments_0006_time(last_user_at, 'user_clocks.last_user_at');

CREATE UNIQUE INDEX bank_accounts_one_default ON bank_accounts (user_id) WHERE is_default;

ALTER TABLE api_credentials ADD CONSTRAINT api_credentials_user_id_fkey FOREIGN KEY (user_id) REFERENCES users (id);
ALTER TABLE payees ADD CONSTRAINT payees_user_id_fkey FOREIGN KEY (user_id) REFERENCES users (id);
ALTER TABLE bank_accounts ADD CONSTRAINT bank_accounts_user_id_fkey FOREIGN KEY (user_id) REFERENCES users (id);
ALTER TABLE cards ADD CONSTRAINT cards_user_id_fkey FOREIGN KEY (user_id) REFERENCES users (id);
ALTER TABLE payee_banks ADD CONSTRAINT payee_banks_user_id_fkey FOREIGN KEY (user_id) REFERENCES users (id),
    ADD CONSTRAINT payee_banks_payee_id_fkey FOREIGN KEY (payee_id) REFERENCES payees (id);
ALTER TABLE payee_addresses ADD CONSTRAINT payee_addresses_user_id_fkey FOREIGN KEY (user_id) REFERENCES users (id),
    ADD CONSTRAINT payee_addresses_payee_id_fkey FOREIGN KEY (payee_id) REFERENCES payees (id);
ALTER TABLE webhook_endpoints ADD CONSTRAINT webhook_endpoints_platform_id_fkey FOREIGN KEY (platform_id) REFERENCES platforms (id);
ALTER TABLE webhook_subscriptions
    ADD CONSTRAINT webhook_subscriptions_endpoint_id_fkey FOREIGN KEY (endpoint_id) REFERENCES webhook_endpoints (id);
ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_event_id_fkey FOREIGN KEY (event_id) REFERENCES events (id),
    ADD CONSTRAINT webhook_deliveries_endpoint_id_fkey FOREIGN KEY (endpoint_id) REFERENCES webhook_endpoints (id);
ALTER TABLE webhook_attempts ADD CONSTRAINT webhook_attempts_event_id_fkey FOREIGN KEY (event_id) REFERENCES events (id),
    ADD CONSTRAINT webhook_attempts_endpoint_id_fkey FOREIGN KEY (endpoint_id) REFERENCES webhook_endpoints (id);

DROP FUNCTION payments_0006_time(text, text);
DROP FUNCTION payments_0006_local_time(text, text);
DROP FUNCTION payments_0006_uuid(text, text);
DROP FUNCTION payments_0006_decimal(text, text);
