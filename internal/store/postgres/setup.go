package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/platform-payments/payments/internal/store"
)

// The set-up lock serialises what instances opening one database at once must do once: the
// migrations (with Config.Setup and Steps) and what Config.Opened writes. It is a
// transaction-level advisory lock (pg_advisory_xact_lock), taken first in each of those
// transactions and released by their commit or rollback. A session-level lock would not
// hold behind a pooler in transaction mode, where a client's statements outside a
// transaction may each run on another server connection: the lock would be taken on one,
// the work done on others, and the unlock sent to yet another (leaving the lock held until
// the first closes). Its key is of the schema, so that stores in different schemas of one
// database do not wait for each other; it is the key the session-level lock of earlier
// versions took, so that an older instance and a newer one exclude each other too.
const setupKeySQL = "SELECT hashtext(current_schema() || '.payments setup')"

// setupKey returns the set-up lock's key for the schema db's connections use: the first
// of their search_path that exists, where the tables go.
func setupKey(ctx context.Context, pool *pgxpool.Pool) (int64, error) {
	var key *int64
	if err := pool.QueryRow(ctx, setupKeySQL).Scan(&key); err != nil {
		return 0, err
	}
	if key == nil {
		return 0, errors.New("no schema to put the tables in: no schema of the search_path exists (CREATE SCHEMA first)")
	}
	return *key, nil
}

// lockSetup takes the set-up lock in the transaction of q, the statements of one write
// of this engine, until that transaction ends.
func lockSetup(ctx context.Context, q store.Querier, key int64) error {
	l, ok := q.(interface {
		LockUntilCommit(ctx context.Context, key int64) error
	})
	if !ok {
		return fmt.Errorf("payments: set-up lock: the write's statements are a %T, not the engine's", q)
	}
	return l.LockUntilCommit(ctx, key)
}

// setupStore is the store as Config.Opened sees it: each of its writes takes the set-up
// lock first, in the write's own transaction. What one write checks and then changes
// (the service's first load of the payee rules: none yet, so load them) therefore runs
// one instance after another, each seeing what the one before committed, since a READ
// COMMITTED statement after the lock reads the state as of when it starts. The writes
// of the store Open returns take no such lock.
type setupStore struct {
	*Store
	key int64
}

// Write runs fn as Store.Write does, after taking the set-up lock in its transaction.
func (s setupStore) Write(ctx context.Context, opts store.WriteOptions, fn func(ctx context.Context, q store.Querier) error) error {
	return s.Store.Write(ctx, opts, func(ctx context.Context, q store.Querier) error {
		if err := lockSetup(ctx, q, s.key); err != nil {
			return err
		}
		return fn(ctx, q)
	})
}
