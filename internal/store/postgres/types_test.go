package postgres_test

import (
	"context"
	"net/url"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/platform-payments/payments/internal/pgtest"
	"github.com/platform-payments/payments/internal/store"
	"github.com/platform-payments/payments/internal/store/postgres"
	"github.com/platform-payments/payments/internal/store/postgres/pgqueries"
	"github.com/platform-payments/payments/queries"
)

// oldRows are rows of every table migration 0006 converts, in the shapes of 0001-0005:
// times as text, flags as 0 and 1, ids as text; NULL and set where a column may be NULL.
const oldRows = `
INSERT INTO data_keys (key_id, key_check, added_at, retired_at) VALUES
    ('0123456789abcdef', 'v1:0123456789abcdef:Y2hlY2s', '2026-01-01T00:00:00.000000Z', NULL),
    ('fedcba9876543210', 'v1:fedcba9876543210:Y2hlY2s', '2025-12-01T10:20:30.123456Z', '2026-01-01T00:00:00.000001Z');
INSERT INTO blind_index_key (id, key_sealed, created_at) VALUES (1, 'v1:0123456789abcdef:a2V5', '2026-01-01T00:00:00.000000Z');
INSERT INTO platforms (id, name, environment, secret_sealed, user_count, created_at, require_timestamp) VALUES
    ('0194a6f0-0000-7000-8000-000000000001', 'P1', 'sandbox', 'v1:0123456789abcdef:c2Vj', 2, '2026-01-02T03:04:05.123456Z', 1),
    ('0194a6f0-0000-7000-8000-000000000002', 'P2', 'production', 'v1:0123456789abcdef:c2Vj', 0, '2026-03-08T07:00:00.000000Z', 0);
INSERT INTO users (id, platform_id, pw_id, name, email, email_key, phone_country_code, phone, verified_at, created_at) VALUES
    ('0194a6f0-0000-7000-8000-000000000011', '0194a6f0-0000-7000-8000-000000000001', 1, 'Ada', 'Ada@example.com',
        'ada@example.com', '+44', '2079460000', '2026-01-03T00:00:00.000001Z', '2026-01-02T03:04:06.000000Z'),
    ('0194a6f0-0000-7000-8000-000000000012', '0194a6f0-0000-7000-8000-000000000001', 2, 'Bo', NULL, NULL, NULL, NULL, NULL,
        '2026-01-02T03:04:06.999999Z');
INSERT INTO wallets (id, user_id, currency, balance, created_at) VALUES
    ('0194a6f0-0000-7000-8000-000000000021', '0194a6f0-0000-7000-8000-000000000011', 'USD', '0', '2026-01-02T03:04:06.000000Z'),
    ('0194a6f0-0000-7000-8000-000000000022', '0194a6f0-0000-7000-8000-000000000012', 'USD', '12.50', '2026-01-02T03:04:06.999999Z');
INSERT INTO user_settings (user_id, currency, timezone, language, notifications_enabled, two_factor_enabled, created_at) VALUES
    ('0194a6f0-0000-7000-8000-000000000011', 'USD', 'UTC', 'en', 1, 0, '2026-01-02T03:04:06.000000Z'),
    ('0194a6f0-0000-7000-8000-000000000012', 'EUR', 'Europe/Paris', 'fr', 0, 1, '2026-01-02T03:04:06.999999Z');
INSERT INTO user_clocks (platform_id, last_user_at) VALUES ('0194a6f0-0000-7000-8000-000000000001', '2026-01-02T03:04:06.999999Z');
INSERT INTO api_credentials (api_key, user_id, secret_hash, created_at) VALUES
    ('0194a6f0-0000-7000-8000-000000000031', '0194a6f0-0000-7000-8000-000000000011', '\x0102', '2026-01-04T00:00:00.000000Z');
INSERT INTO payees (id, user_id, name, email, phone_country_code, phone, created_at, updated_at) VALUES
    ('0194a6f0-0000-7000-8000-000000000041', '0194a6f0-0000-7000-8000-000000000011', 'Priya', NULL, NULL, NULL, '2026-01-05T00:00:00.000000Z', NULL),
    ('0194a6f0-0000-7000-8000-000000000042', '0194a6f0-0000-7000-8000-000000000011', 'Ravi', 'r@example.com', '+91', '9800000000',
        '2026-01-05T00:00:01.000000Z', '2026-02-05T12:00:00.500000Z');
INSERT INTO bank_accounts (id, user_id, nick_name, account_holder_name, bank_name, account_number_sealed, account_number_index,
    routing_number, account_type, balance, is_verified, is_default, created_at) VALUES
    ('0194a6f0-0000-7000-8000-000000000051', '0194a6f0-0000-7000-8000-000000000011', 'Main', 'Ada', 'Bank', 'v1:0123456789abcdef:bnVt',
        '\x01', '011000015', 'PERSONAL_SAVINGS', '0', 1, 1, '2026-01-06T00:00:00.000000Z'),
    ('0194a6f0-0000-7000-8000-000000000052', '0194a6f0-0000-7000-8000-000000000011', NULL, 'Ada', 'Bank', 'v1:0123456789abcdef:bnVt',
        '\x02', '011000015', 'BUSINESS_CHECKING', '100.000', 0, 0, '2026-01-06T00:00:01.000000Z');
INSERT INTO cards (id, user_id, brand, last4, exp_month, exp_year, created_at, deleted_at) VALUES
    ('0194a6f0-0000-7000-8000-000000000061', '0194a6f0-0000-7000-8000-000000000011', 'visa', '4242', 12, 2030, '2026-01-07T00:00:00.000000Z', NULL),
    ('0194a6f0-0000-7000-8000-000000000062', '0194a6f0-0000-7000-8000-000000000011', 'visa', '4243', 1, 2031, '2026-01-07T00:00:00.000000Z',
        '2026-02-07T00:00:00.000000Z');
INSERT INTO payee_banks (id, user_id, payee_id, account_number_sealed, country, bank_acc_type, bank_nick_name, identifier_type,
    identifier_value, payout_bank_id, created_at, updated_at, deleted_at) VALUES
    ('0194a6f0-0000-7000-8000-000000000071', '0194a6f0-0000-7000-8000-000000000011', '0194a6f0-0000-7000-8000-000000000041',
        'v1:0123456789abcdef:bnVt', 'IN', 'savings', NULL, 'IFSC', 'SBIN0000001', 'bank-7', '2026-01-08T00:00:00.000000Z',
        '2026-01-08T00:00:00.000000Z', NULL),
    ('0194a6f0-0000-7000-8000-000000000072', '0194a6f0-0000-7000-8000-000000000011', '0194a6f0-0000-7000-8000-000000000041',
        'v1:0123456789abcdef:bnVt', 'IN', 'current', 'Old', NULL, NULL, NULL, '2026-01-08T00:00:00.000000Z',
        '2026-02-08T00:00:00.000000Z', '2026-02-08T00:00:00.000000Z');
INSERT INTO payee_addresses (id, user_id, payee_id, contact_id, name, address_line_1, city, state, zipcode, country, is_default,
    created_at, updated_at, deleted_at) VALUES
    ('0194a6f0-0000-7000-8000-000000000081', '0194a6f0-0000-7000-8000-000000000011', '0194a6f0-0000-7000-8000-000000000041',
        '0194a6f0-0000-7000-8000-000000000091', 'Priya', '1 Main St', 'Pune', 'MH', '411001', 'IN', 1,
        '2026-01-09T00:00:00.000000Z', NULL, NULL),
    ('0194a6f0-0000-7000-8000-000000000082', '0194a6f0-0000-7000-8000-000000000011', '0194a6f0-0000-7000-8000-000000000041',
        'contact-of-another-kind', 'Priya', '2 Main St', 'Pune', 'MH', '411001', 'IN', 0,
        '2026-01-09T00:00:00.000000Z', '2026-01-10T00:00:00.000000Z', '2026-01-11T00:00:00.000000Z');
INSERT INTO payee_rule_sets (id, source, loaded_at) VALUES (1, 'rules.json', '2026-01-01T00:00:00.000000Z');
INSERT INTO exchange_rates (id, payout_currency, base_currency, exchange_rate, apply_time, fixed, created_at) VALUES
    (1, 'INR', 'USD', '83.1200', '2026-01-01T00:00:00', 1, '2026-01-01T00:00:00.000000Z'),
    (2, 'INR', 'EUR', '0.000000000001', '2026-03-08T02:30:00', 0, '2026-01-01T00:00:01.000000Z'),
    (3, 'INR', 'GBP', '999999999999.999999999999', '2026-01-01T00:00:00', 0, '2026-01-01T00:00:02.000000Z');
INSERT INTO idempotency_keys (id, scope, key, fingerprint, error_code, error_message, status, outcome_sealed, created_at) VALUES
    ('0194a6f0-0000-7000-8000-0000000000a1', 'platform:x CreateUser', 'k1', '\x03', NULL, NULL, 200,
        'v1:0123456789abcdef:b3V0', '2026-01-12T00:00:00.000000Z');
INSERT INTO events (id, platform_id, type, created_at, payload) VALUES
    ('0194a6f0-0000-7000-8000-0000000000b1', '0194a6f0-0000-7000-8000-000000000001', 'user.created', '2026-01-13T00:00:00.000007Z', '{"a":1}'),
    ('0194a6f0-0000-7000-8000-0000000000b2', '0194a6f0-0000-7000-8000-000000000001', 'user.updated', '2026-01-13T00:00:01.000000Z', '{}');
INSERT INTO webhook_endpoints (id, platform_id, url, description, all_events, status, disabled_reason, secret_sealed,
    previous_secret_sealed, previous_until, failing_since, created_at, deleted_at) VALUES
    ('0194a6f0-0000-7000-8000-0000000000c1', '0194a6f0-0000-7000-8000-000000000001', 'https://a.example/hook', NULL, 1, 'enabled', NULL,
        'v1:0123456789abcdef:c2Vj', NULL, NULL, NULL, '2026-01-14T00:00:00.000000Z', NULL),
    ('0194a6f0-0000-7000-8000-0000000000c2', '0194a6f0-0000-7000-8000-000000000001', 'https://b.example/hook', 'B', 0, 'disabled', 'failing',
        'v1:0123456789abcdef:c2Vj', 'v1:0123456789abcdef:b2xk', '2026-01-15T00:00:00.000000Z', '2026-01-14T12:00:00.000000Z',
        '2026-01-14T00:00:01.000000Z', '2026-01-16T00:00:00.000000Z');
INSERT INTO webhook_subscriptions (endpoint_id, type) VALUES ('0194a6f0-0000-7000-8000-0000000000c2', 'user.created');
INSERT INTO webhook_deliveries (id, event_id, endpoint_id, state, attempts, failures, next_attempt_at, lease_until, resent,
    success_attempt, succeeded_at, success_status, success_latency, success_answer) VALUES
    (1, '0194a6f0-0000-7000-8000-0000000000b1', '0194a6f0-0000-7000-8000-0000000000c1', 'pending', 1, 1, '2026-01-13T00:01:00.000000Z',
        '2026-01-13T00:00:30.000000Z', 1, NULL, NULL, NULL, NULL, NULL),
    (2, '0194a6f0-0000-7000-8000-0000000000b2', '0194a6f0-0000-7000-8000-0000000000c1', 'succeeded', 1, 0, '2026-01-13T00:00:01.000000Z',
        NULL, 0, 1, '2026-01-13T00:00:02.250000Z', 200, 12, 'ok');
INSERT INTO webhook_attempts (id, event_id, endpoint_id, attempt, attempted_at, status_code, error, latency_ms, response) VALUES
    (1, '0194a6f0-0000-7000-8000-0000000000b1', '0194a6f0-0000-7000-8000-0000000000c1', 1, '2026-01-13T00:00:00.500000Z', 500, NULL, 40, 'no');
`

// snapshot reads every table migration 0006 converts, row by row in key order, into the
// models the store reads them into.
func snapshot(t *testing.T, db *pgxpool.Pool) map[string]any {
	t.Helper()
	return map[string]any{
		"platforms":        rowsOf[pgqueries.Platform](t, db, "platforms ORDER BY id::text"),
		"users":            rowsOf[pgqueries.User](t, db, "users ORDER BY row_id"),
		"wallets":          rowsOf[pgqueries.Wallet](t, db, "wallets ORDER BY id::text"),
		"user_settings":    rowsOf[pgqueries.UserSetting](t, db, "user_settings ORDER BY user_id::text"),
		"user_clocks":      rowsOf[pgqueries.UserClock](t, db, "user_clocks ORDER BY platform_id::text"),
		"api_credentials":  rowsOf[pgqueries.ApiCredential](t, db, "api_credentials ORDER BY api_key::text"),
		"payees":           rowsOf[pgqueries.Payee](t, db, "payees ORDER BY id::text"),
		"bank_accounts":    rowsOf[pgqueries.BankAccount](t, db, "bank_accounts ORDER BY id::text"),
		"cards":            rowsOf[pgqueries.Card](t, db, "cards ORDER BY id::text"),
		"payee_banks":      rowsOf[pgqueries.PayeeBank](t, db, "payee_banks ORDER BY id::text"),
		"payee_addresses":  rowsOf[pgqueries.PayeeAddress](t, db, "payee_addresses ORDER BY id::text"),
		"payee_rule_sets":  rowsOf[pgqueries.PayeeRuleSet](t, db, "payee_rule_sets ORDER BY id"),
		"exchange_rates":   rowsOf[pgqueries.ExchangeRate](t, db, "exchange_rates ORDER BY id"),
		"idempotency_keys": rowsOf[pgqueries.IdempotencyKey](t, db, "idempotency_keys ORDER BY id::text"),
		"data_keys":        rowsOf[pgqueries.DataKey](t, db, "data_keys ORDER BY key_id"),
		"blind_index_key":  rowsOf[pgqueries.BlindIndexKey](t, db, "blind_index_key ORDER BY id"),
		"events": rowsOf[pgqueries.GetPlatformEventRow](t, db, // without 0009's xact_id
			"(SELECT row_id, id, platform_id, type, created_at, payload FROM events) e ORDER BY row_id"),
		"webhook_endpoints":     rowsOf[pgqueries.WebhookEndpoint](t, db, "webhook_endpoints ORDER BY id::text"),
		"webhook_subscriptions": rowsOf[pgqueries.WebhookSubscription](t, db, "webhook_subscriptions ORDER BY endpoint_id::text, type"),
		"webhook_deliveries":    rowsOf[pgqueries.WebhookDelivery](t, db, "webhook_deliveries ORDER BY id"),
		"webhook_attempts":      rowsOf[pgqueries.WebhookAttempt](t, db, "webhook_attempts ORDER BY id"),
	}
}

// rowsOf reads SELECT * FROM from into T, column by column in the table's order.
func rowsOf[T any](t *testing.T, db *pgxpool.Pool, from string) []T {
	t.Helper()
	rows, err := db.Query(context.Background(), "SELECT * FROM "+from)
	if err != nil {
		t.Fatal(err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowToStructByNameLax[T]) // by name: a later migration may add columns
	if err != nil {
		t.Fatalf("%s: %v", from, err)
	}
	if len(out) == 0 {
		t.Fatalf("%s: no rows", from)
	}
	return out
}

// openPool opens a pool on dsn; typed, its connections read the types of 0006 as the
// store's do (pgqueries.RegisterTypes).
func openPool(t *testing.T, dsn string, typed bool) *pgxpool.Pool {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	if typed {
		cfg.AfterConnect = func(_ context.Context, conn *pgx.Conn) error {
			pgqueries.RegisterTypes(conn.TypeMap())
			return nil
		}
	}
	db, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	return db
}

// A database as migrations 0001-0005 made it, with rows, is converted by 0006 in place:
// every value reads back as the same string or 0/1 it was, and the columns are of
// PostgreSQL's types.
func TestNativeTypesMigration(t *testing.T) {
	if !pgtest.Enabled() {
		t.Skipf("$%s is not set: needs PostgreSQL", pgtest.Env)
	}
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	if err := postgres.MigrateTo(ctx, dsn, 5); err != nil {
		t.Fatal(err)
	}
	old := openPool(t, dsn, false)
	if _, err := old.Exec(ctx, oldRows); err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, old)
	old.Close()

	st, err := postgres.Open(ctx, dsn, store.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	db := openPool(t, dsn, true)
	after := snapshot(t, db)
	for table, rows := range before {
		if !reflect.DeepEqual(rows, after[table]) {
			t.Errorf("%s before 0006:\n%+v\nafter:\n%+v", table, rows, after[table])
		}
	}

	// 0009: the events written before it keep the order they listed in, before every
	// later one: their transaction id is 0.
	var positioned int
	if err := db.QueryRow(ctx, `SELECT count(*) FROM events WHERE xact_id <> '0'`).Scan(&positioned); err != nil {
		t.Fatal(err)
	} else if positioned != 0 {
		t.Errorf("%d events of before 0009 have a transaction id, want 0", positioned)
	}

	t.Run("Types", func(t *testing.T) {
		rows, err := db.Query(ctx, `SELECT table_name || '.' || column_name, data_type FROM information_schema.columns
			WHERE table_schema = current_schema()`)
		if err != nil {
			t.Fatal(err)
		}
		types := map[string]string{}
		for rows.Next() {
			var column, typ string
			if err := rows.Scan(&column, &typ); err != nil {
				t.Fatal(err)
			}
			types[column] = typ
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		want := map[string][]string{
			"timestamp with time zone": {"platforms.created_at", "users.verified_at", "users.created_at", "wallets.created_at",
				"user_settings.created_at", "api_credentials.created_at", "payees.created_at", "payees.updated_at",
				"bank_accounts.created_at", "cards.created_at", "cards.deleted_at", "payee_banks.created_at",
				"payee_banks.updated_at", "payee_banks.deleted_at", "payee_addresses.created_at", "payee_addresses.updated_at",
				"payee_addresses.deleted_at", "payee_rule_sets.loaded_at", "exchange_rates.created_at",
				"idempotency_keys.created_at", "data_keys.added_at", "data_keys.retired_at", "blind_index_key.created_at",
				"events.created_at", "webhook_endpoints.previous_until", "webhook_endpoints.failing_since",
				"webhook_endpoints.created_at", "webhook_endpoints.deleted_at", "webhook_deliveries.next_attempt_at",
				"webhook_deliveries.lease_until", "webhook_deliveries.succeeded_at", "webhook_attempts.attempted_at",
				"user_clocks.last_user_at"},
			"timestamp without time zone": {"exchange_rates.apply_time"},
			"boolean": {"platforms.require_timestamp", "user_settings.notifications_enabled", "user_settings.two_factor_enabled",
				"bank_accounts.is_verified", "bank_accounts.is_default", "payee_addresses.is_default", "exchange_rates.fixed",
				"webhook_endpoints.all_events", "webhook_deliveries.resent"},
			"uuid": {"platforms.id", "users.id", "users.platform_id", "wallets.id", "wallets.user_id", "user_settings.user_id",
				"api_credentials.api_key", "api_credentials.user_id", "payees.id", "payees.user_id", "bank_accounts.id",
				"bank_accounts.user_id", "cards.id", "cards.user_id", "payee_banks.id", "payee_banks.user_id",
				"payee_banks.payee_id", "payee_addresses.id", "payee_addresses.user_id", "payee_addresses.payee_id",
				"idempotency_keys.id", "events.id", "events.platform_id", "webhook_endpoints.id", "webhook_endpoints.platform_id",
				"webhook_subscriptions.endpoint_id", "webhook_deliveries.event_id", "webhook_deliveries.endpoint_id",
				"webhook_attempts.event_id", "webhook_attempts.endpoint_id", "user_clocks.platform_id"},
			"numeric": {"exchange_rates.exchange_rate", "wallets.balance", "bank_accounts.balance"},
			// Other systems' records: their ids are theirs.
			"text": {"payee_addresses.contact_id", "payee_banks.payout_bank_id"},
		}
		for typ, columns := range want {
			for _, c := range columns {
				if types[c] != typ {
					t.Errorf("%s is %q, want %s", c, types[c], typ)
				}
			}
		}
	})

	// Through the store's statements (the adapter), as the service reads them.
	t.Run("Reads", func(t *testing.T) {
		q := st.Reads()
		p, err := q.GetPlatform(ctx, "0194a6f0-0000-7000-8000-000000000001")
		if err != nil || p.CreatedAt != "2026-01-02T03:04:05.123456Z" || p.RequireTimestamp != 1 || p.UserCount != 2 {
			t.Errorf("GetPlatform = %+v, %v", p, err)
		}
		keys, err := q.ListDataKeys(ctx)
		if err != nil || len(keys) != 2 || keys[0].AddedAt != "2025-12-01T10:20:30.123456Z" ||
			keys[0].RetiredAt == nil || *keys[0].RetiredAt != "2026-01-01T00:00:00.000001Z" || keys[1].RetiredAt != nil {
			t.Errorf("ListDataKeys = %+v, %v", keys, err)
		}
		rates, err := q.CurrentExchangeRates(ctx, queries.CurrentExchangeRatesParams{PayoutCurrency: "INR", AsOf: "2026-03-08T02:30:00"})
		want := []queries.ExchangeRate{
			{ID: 2, PayoutCurrency: "INR", BaseCurrency: "EUR", ExchangeRate: "0.000000000001", ApplyTime: "2026-03-08T02:30:00",
				CreatedAt: "2026-01-01T00:00:01.000000Z"},
			{ID: 3, PayoutCurrency: "INR", BaseCurrency: "GBP", ExchangeRate: "999999999999.999999999999",
				ApplyTime: "2026-01-01T00:00:00", CreatedAt: "2026-01-01T00:00:02.000000Z"},
			{ID: 1, PayoutCurrency: "INR", BaseCurrency: "USD", ExchangeRate: "83.1200", ApplyTime: "2026-01-01T00:00:00", Fixed: 1,
				CreatedAt: "2026-01-01T00:00:00.000000Z"},
		}
		if err != nil || !reflect.DeepEqual(rates, want) {
			t.Errorf("CurrentExchangeRates = %+v, %v", rates, err)
		}
		pending, err := q.PendingDeliveries(ctx)
		if err != nil || pending.Pending != 1 || pending.Oldest != "2026-01-13T00:00:00.000007Z" {
			t.Errorf("PendingDeliveries = %+v, %v", pending, err)
		}
		attempts, err := q.ListEventAttempts(ctx, "0194a6f0-0000-7000-8000-0000000000b2")
		if err != nil || len(attempts) != 1 || attempts[0].AttemptedAt != "2026-01-13T00:00:02.250000Z" {
			t.Errorf("ListEventAttempts = %+v, %v", attempts, err)
		}
		b, err := q.GetPlatformBankAccount(ctx, queries.GetPlatformBankAccountParams{ID: "0194a6f0-0000-7000-8000-000000000052",
			PlatformID: "0194a6f0-0000-7000-8000-000000000001"})
		if err != nil || b.BankAccount.Balance != "100.000" || b.BankAccount.IsDefault != 0 || b.VerifiedAt == nil ||
			*b.VerifiedAt != "2026-01-03T00:00:00.000001Z" {
			t.Errorf("GetPlatformBankAccount = %+v, %v", b, err)
		}
	})
}

// A value that would not read back as written (an id in upper case) fails 0006, naming
// it, and leaves the database as it was.
func TestNativeTypesMigrationRefuses(t *testing.T) {
	if !pgtest.Enabled() {
		t.Skipf("$%s is not set: needs PostgreSQL", pgtest.Env)
	}
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	if err := postgres.MigrateTo(ctx, dsn, 5); err != nil {
		t.Fatal(err)
	}
	old := openPool(t, dsn, false)
	if _, err := old.Exec(ctx, `INSERT INTO data_keys (key_id, key_check, added_at) VALUES ('0123456789abcdef', 'c', '2026-01-01T00:00:00.000000Z');
		INSERT INTO platforms (id, name, environment, secret_sealed, created_at)
		VALUES ('0194A6F0-0000-7000-8000-000000000001', 'P', 'sandbox', 'v1:0123456789abcdef:c2Vj', '2026-01-01T00:00:00.000000Z')`); err != nil {
		t.Fatal(err)
	}
	_, err := postgres.Open(ctx, dsn, store.Config{})
	if err == nil || !containsAll(err.Error(), "0006_native_types.sql", "platforms.id", "0194A6F0-0000-7000-8000-000000000001") {
		t.Fatalf("Open = %v, want 0006 refusing platforms.id", err)
	}
	var version int
	var typ string
	if err := old.QueryRow(ctx, `SELECT (SELECT version FROM schema_version), (SELECT data_type FROM information_schema.columns
		WHERE table_schema = current_schema() AND table_name = 'platforms' AND column_name = 'id')`).Scan(&version, &typ); err != nil {
		t.Fatal(err)
	}
	if version != 5 || typ != "text" {
		t.Errorf("after the refusal: version %d, platforms.id %s; want 5, text", version, typ)
	}
}

func containsAll(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

// Times read the same whatever the session's TimeZone and DateStyle, and in every exec
// mode: the store reads them in the binary format (exec and simple_protocol, which read
// text, run as cache_describe).
func TestTimesWhateverTheSession(t *testing.T) {
	if !pgtest.Enabled() {
		t.Skipf("$%s is not set: needs PostgreSQL", pgtest.Env)
	}
	ctx := context.Background()
	modes := []string{"", "exec", "simple_protocol"}
	if os.Getenv(pgtest.PoolerEnv) != "" {
		modes = []string{""} // the pooler's URL names cache_describe
	}
	for _, mode := range modes {
		t.Run("mode="+mode, func(t *testing.T) {
			u, err := url.Parse(pgtest.DSN(t))
			if err != nil {
				t.Fatal(err)
			}
			params := u.Query()
			params.Set("timezone", "America/New_York")
			params.Set("datestyle", "SQL,DMY")
			if mode != "" {
				params.Set("default_query_exec_mode", mode)
			}
			u.RawQuery = params.Encode()
			dsn := u.String()
			st, err := postgres.Open(ctx, dsn, store.Config{})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()

			const platform, endpoint, event = "0194a6f0-0000-7000-8000-000000000001", "0194a6f0-0000-7000-8000-0000000000c1",
				"0194a6f0-0000-7000-8000-0000000000b1"
			// New York's clocks go forward at 2026-03-08T07:00:00Z; 02:30 that day is no
			// time there, and the apply_time has no zone.
			at := time.Date(2026, 3, 8, 7, 0, 0, 0, time.UTC)
			created, due := at.Format(pgqueries.TimeLayout), at.Add(-time.Microsecond).Format(pgqueries.TimeLayout)
			var rate queries.ExchangeRate
			err = st.Write(ctx, store.WriteOptions{}, func(ctx context.Context, q store.Querier) (err error) {
				if err := q.AddDataKey(ctx, queries.AddDataKeyParams{KeyID: "0123456789abcdef", KeyCheck: "c", AddedAt: created}); err != nil {
					return err
				}
				if err := q.CreatePlatform(ctx, queries.CreatePlatformParams{ID: platform, Name: "P", Environment: "sandbox",
					SecretSealed: "v1:0123456789abcdef:c2Vj", RequireTimestamp: 1, CreatedAt: created}); err != nil {
					return err
				}
				if _, err := q.CreateWebhookEndpoint(ctx, queries.CreateWebhookEndpointParams{ID: endpoint, PlatformID: platform,
					Url: "https://a.example/hook", AllEvents: 1, SecretSealed: "v1:0123456789abcdef:c2Vj", CreatedAt: created}); err != nil {
					return err
				}
				if err := q.CreateEvent(ctx, queries.CreateEventParams{ID: event, PlatformID: platform, Type: "user.created",
					CreatedAt: due, Payload: "{}"}); err != nil {
					return err
				}
				if _, err := q.FanOutEvent(ctx, queries.FanOutEventParams{EventID: event, DueAt: due, PlatformID: platform,
					Type: "user.created"}); err != nil {
					return err
				}
				rate, err = q.AddExchangeRate(ctx, queries.AddExchangeRateParams{PayoutCurrency: "INR", BaseCurrency: "USD",
					ExchangeRate: "83.10", ApplyTime: "2026-03-08T02:30:00", Fixed: 1, CreatedAt: created})
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			if rate.ApplyTime != "2026-03-08T02:30:00" || rate.CreatedAt != created || rate.ExchangeRate != "83.10" || rate.Fixed != 1 {
				t.Errorf("AddExchangeRate = %+v", rate)
			}
			q := st.Reads()
			if p, err := q.GetPlatform(ctx, platform); err != nil || p.CreatedAt != created || p.RequireTimestamp != 1 {
				t.Errorf("GetPlatform = %+v, %v; want created at %s", p, err, created)
			}
			if pending, err := q.PendingDeliveries(ctx); err != nil || pending.Pending != 1 || pending.Oldest != due {
				t.Errorf("PendingDeliveries = %+v, %v; want the oldest at %s", pending, err, due)
			}
			claimed, err := q.ClaimDeliveries(ctx, queries.ClaimDeliveriesParams{LeaseUntil: new(created), Now: created, Max: 10, PerEndpoint: 10, Scan: 10})
			if err != nil || len(claimed) != 1 || claimed[0].EventID != event || claimed[0].EndpointID != endpoint {
				t.Errorf("ClaimDeliveries = %+v, %v", claimed, err)
			}

			// The session would have shown the time otherwise, and holds the instant given.
			conn, err := pgx.Connect(ctx, dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(ctx)
			var zone, shown string
			var unix float64
			if err := conn.QueryRow(ctx, `SELECT current_setting('TimeZone'), created_at::text, extract(epoch FROM created_at)::float8
				FROM platforms`).Scan(&zone, &shown, &unix); err != nil {
				t.Fatal(err)
			}
			if zone != "America/New_York" || shown == created || int64(unix) != at.Unix() {
				t.Errorf("the session's TimeZone %s shows %s, epoch %v; want New York's, another text, %d", zone, shown, unix, at.Unix())
			}
		})
	}
}
