package payments_test

import (
	"context"
	"testing"

	"github.com/platform-payments/payments"
	"github.com/platform-payments/payments/internal/pgtest"
	"github.com/platform-payments/payments/internal/store"
)

// The database out of reach is CodeUnavailable ("unavailable", a 503 over HTTP: the
// httpserver tests), never CodeInternal; no outcome of it is stored under an
// Idempotency-Key, so the same call made again once the database is back runs.

// msgUnavailable is the message of every CodeUnavailable error.
const msgUnavailable = "Service temporarily unavailable: the database cannot be reached. Retry later."

// TestUnavailableSQLite: another process holds the file's write lock past the writer's
// wait (busy_timeout, shortened here to 50 ms): a write is unavailable, a read is not;
// once the lock is released, the same keyed write runs.
func TestUnavailableSQLite(t *testing.T) {
	sqliteOnly(t)
	ctx := context.Background()
	path := newDSN(t)
	svc := mustOpenFile(t, path)
	platform := mustPlatform(t, svc)
	svc.ShortenWriteWait(50)
	mustUser(t, svc, platform.PlatformID, "Ada Lovelace", "ada@example.com") // the batch that shortens it

	lock, err := rawDB(t, path).Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if _, err := lock.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	createAlan := keyedCreate(svc, platform, "create-alan")
	_, err = createAlan()
	wantUnavailable(t, "a write while the file is locked", err)
	// A read does not wait for the writer's lock (WAL): it goes on being answered.
	if _, err := svc.ListUsers(ctx, platform.PlatformID, payments.ListUsersParams{RowsPerPage: 10, PageNo: 1}); err != nil {
		t.Errorf("a read while the file is locked: %v", err)
	}
	if _, err := lock.ExecContext(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	wantRecovered(t, createAlan)
}

// TestUnavailablePostgres: the server goes away (every connection to it reset, new ones
// refused, as when PostgreSQL stops): reads and writes are unavailable; once it is back,
// the same keyed write runs and the service serves again, without a restart.
func TestUnavailablePostgres(t *testing.T) {
	if !pgtest.Enabled() {
		t.Skipf("needs PostgreSQL: set $%s", pgtest.Env)
	}
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	p, viaProxy := pgtest.BehindProxy(t, dsn)
	svc := mustOpenFile(t, viaProxy, payments.Options{KeyFile: pgtest.KeyFile(dsn)})
	platform := mustPlatform(t, svc)
	user := mustUser(t, svc, platform.PlatformID, "Ada Lovelace", "ada@example.com")
	get := func() error {
		_, err := svc.GetUser(ctx, platform.PlatformID, user.UserID.String())
		return err
	}

	p.Down()
	createAlan := keyedCreate(svc, platform, "create-alan")
	_, err := createAlan()
	wantUnavailable(t, "a keyed create", err)
	wantUnavailable(t, "a read", get())
	// A write that reads nothing before its transaction: the transaction cannot begin,
	// and the write must not pass for committed.
	_, err = svc.AddBankAccount(ctx, platform.PlatformID, payments.NewBankAccount{UserID: user.UserID.String(),
		BankName: "Bank of America", AccountNumber: "9876543210", RoutingNumber: "026009593", AccountType: "BUSINESS_SAVINGS"})
	wantUnavailable(t, "Add Bank Account", err)
	wantUnavailable(t, "a bare write", svc.Write(ctx, func(context.Context, store.Querier) error { return nil }))
	p.Up(t)
	wantRecovered(t, createAlan)
	if err := get(); err != nil {
		t.Errorf("a read once the server is back: %v", err)
	}
}

// keyedCreate returns a Create User under the Idempotency-Key key, reporting whether it
// was replayed.
func keyedCreate(svc *payments.Service, platform payments.PlatformCredentials, key string) func() (replayed bool, err error) {
	return func() (bool, error) {
		idem := &payments.Idempotency{Key: key}
		email := "alan@example.com"
		_, err := svc.CreateUser(context.Background(), platform.PlatformID,
			payments.NewUser{Name: "Alan Turing", Email: &email}, payments.WithKey(idem))
		return idem.Replayed, err
	}
}

// wantUnavailable checks that err is CodeUnavailable with its message (the cause kept
// for the log, not shown).
func wantUnavailable(t *testing.T, what string, err error) {
	t.Helper()
	if payments.ErrorCode(err) != payments.CodeUnavailable || payments.ErrorMessage(err) != msgUnavailable {
		t.Fatalf("%s: %v (code %q), want CodeUnavailable", what, err, payments.ErrorCode(err))
	}
}

// wantRecovered checks that a keyed create which met the database out of reach runs
// when made again: no error, not replayed.
func wantRecovered(t *testing.T, create func() (bool, error)) {
	t.Helper()
	replayed, err := create()
	if err != nil {
		t.Fatalf("once the database is back: %v", err)
	}
	if replayed {
		t.Error("replayed: the unavailable outcome was stored under the key")
	}
}
