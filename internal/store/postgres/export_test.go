package postgres

import (
	"context"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/platform-payments/payments/internal/store"
)

// OnRoundTrip makes f see the statements of each round trip a batch's transaction makes,
// until the test ends.
func OnRoundTrip(t interface{ Cleanup(func()) }, f func(statements []string)) {
	sent.Store(&f)
	t.Cleanup(func() { sent.Store(nil) })
}

// MigrateTo creates the schema dsn names as the migrations up to the one numbered upto
// leave it, as Open would have (the test of a later migration starts there).
func MigrateTo(ctx context.Context, dsn string, upto int) error {
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		return err
	}
	defer pool.Close()
	key, err := setupKey(ctx, pool)
	if err != nil {
		return err
	}
	return migrate(ctx, pool, key, store.Config{}, upto)
}
