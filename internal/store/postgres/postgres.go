// Package postgres is the PostgreSQL engine of the payments store, for many instances of
// the service on one database: each instance runs the write operations waiting together
// as one transaction (READ COMMITTED) of its group committer (committer.go), run again
// when the database aborts it to resolve a deadlock or a serialization failure; reads
// that must agree are one REPEATABLE READ transaction. What makes concurrent instances
// correct is in the SQL (pgqueries): the platform's user count raised by an UPDATE that
// locks its row, the user's row locked before its default account changes
// (CreateBankAccountTakingDefault), unique constraints named so that a duplicate maps to
// its conflict.
package postgres

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"math"
	"net/url"
	"path"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/platform-payments/payments/internal/store"
	"github.com/platform-payments/payments/internal/store/groupcommit"
	"github.com/platform-payments/payments/internal/store/postgres/pgqueries"
)

// Store is a store on a PostgreSQL database, in the first schema of its connections' search_path
// that exists (named in the DSN, or set on the server for the role behind a pooler).
type Store struct {
	// pool is pgx's own pool, not database/sql's: a batch sends its operations'
	// statements together (pgx.Batch), which database/sql cannot. readQ is the
	// pool's statements behind store.Querier.
	pool  *pgxpool.Pool
	readQ pgqueries.Adapter
	// commit runs every write operation, in batches (committer.go); beforeCommit is
	// its tests' hook.
	commit       *groupcommit.Committer
	beforeCommit beforeCommitHook
	// deliveriesDue is Config.DeliveriesDue; plain, the devices Config turns off.
	deliveriesDue func()
	plain         store.Plain
	// txs counts the read transactions under way, which close waits for before it
	// closes the pool. mu guards closed.
	txs    sync.WaitGroup
	mu     sync.RWMutex
	closed bool
}

// enter registers a transaction about to begin, to be ended with st.txs.Done; false once
// the store is closing.
func (st *Store) enter() bool {
	st.mu.RLock()
	defer st.mu.RUnlock()
	if st.closed {
		return false
	}
	st.txs.Add(1)
	return true
}

var _ store.Store = (*Store)(nil)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Engine opens PostgreSQL databases.
type Engine struct{}

// Accepts reports whether dsn is a PostgreSQL URL (see Accepts).
func (Engine) Accepts(dsn string) bool { return Accepts(dsn) }

// Open opens the PostgreSQL database dsn names (see Open).
func (Engine) Open(ctx context.Context, dsn string, cfg store.Config) (store.Store, error) {
	st, err := Open(ctx, dsn, cfg)
	if err != nil {
		return nil, err // not a nil *Store in a non-nil interface
	}
	return st, nil
}

// Redact returns dsn without its password (see Redact).
func (Engine) Redact(dsn string) string { return Redact(dsn) }

// DefaultKeyFile is "postgres-NAME.key" in the working directory, NAME the database's,
// so that the instances started in one directory share it.
func (Engine) DefaultKeyFile(dsn string) string { return KeyFile(dsn) }

// Accepts reports whether dsn names a PostgreSQL database: a postgres:// or
// postgresql:// URL.
func Accepts(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// DefaultMaxConns is the most connections a store opens when its Config leaves MaxConns
// zero: four per core, at least eight.
func DefaultMaxConns() int { return max(8, 4*runtime.GOMAXPROCS(0)) }

// Open opens the PostgreSQL database dsn names. The migrations (with cfg's Setup and
// Steps in their transaction) run holding the set-up lock of the schema, and so does
// each write cfg.Opened makes, so that instances starting together do them once. The
// statements run as pgx's exec mode in the DSN says: by default each connection
// prepares a statement the first time it runs it, and keeps it; behind PgBouncer in
// transaction mode the DSN names a mode that prepares none
// (default_query_exec_mode=cache_describe), and Open refuses one that leaves a statement
// there for another connection to find (ErrPoolerExecMode); exec and simple_protocol run
// as cache_describe (readsBinary).
func Open(ctx context.Context, dsn string, cfg store.Config) (_ *Store, err error) {
	pcfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("payments: open %s: %w", Redact(dsn), err)
	}
	conns := cfg.MaxConns
	if conns <= 0 {
		conns = DefaultMaxConns()
	}
	pcfg.MaxConns = int32(min(conns, math.MaxInt32)) // #nosec G115 -- bounded
	pcfg.MaxConnIdleTime = 5 * time.Minute
	readsBinary(pcfg.ConnConfig)
	pcfg.AfterConnect = func(_ context.Context, conn *pgx.Conn) error {
		pgqueries.RegisterTypes(conn.TypeMap())
		return nil
	}
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return nil, fmt.Errorf("payments: open %s: %w", Redact(dsn), err)
	}
	st := &Store{pool: pool, readQ: pgqueries.Over(pool), deliveriesDue: cfg.DeliveriesDue, plain: cfg.Plain}
	// Half the pool runs batches side by side; the rest serves reads.
	batch, runners := maxBatch, conns/2
	if cfg.Plain.GroupCommit {
		batch, runners = 1, conns // a transaction per write, as many at once as connections
	}
	st.commit = groupcommit.New(batch, runners, st.runBatch)
	defer func() {
		if err != nil {
			err = errors.Join(err, st.Close())
		}
	}()

	if err := checkPooler(ctx, pool, pcfg.ConnConfig); err != nil {
		return nil, fmt.Errorf("payments: open %s: %w", Redact(dsn), err)
	}
	key, err := setupKey(ctx, pool)
	if err != nil {
		return nil, fmt.Errorf("payments: open %s: %w", Redact(dsn), err)
	}
	if err := migrate(ctx, pool, key, cfg, 0); err != nil {
		return nil, fmt.Errorf("payments: migrate %s: %w", Redact(dsn), err)
	}
	st.commit.Start()
	if cfg.Opened != nil {
		if err := cfg.Opened(ctx, setupStore{Store: st, key: key}); err != nil {
			return nil, err
		}
	}
	return st, nil
}

// readsBinary makes cfg's queries read their results in the binary format, where the
// types pgqueries.RegisterTypes reads (a time into the service's text) are read whatever
// the session's settings: the exec and simple_protocol modes read every result as
// PostgreSQL's text (a time as DateStyle and TimeZone write it), so they run as
// cache_describe, which is as safe behind a pooler (it leaves nothing on the server
// connection) and measured about as fast.
func readsBinary(cfg *pgx.ConnConfig) {
	if m := cfg.DefaultQueryExecMode; m == pgx.QueryExecModeExec || m == pgx.QueryExecModeSimpleProtocol {
		cfg.DefaultQueryExecMode = pgx.QueryExecModeCacheDescribe
	}
}

// migrate applies, in one transaction holding the set-up lock (key), the embedded
// migrations newer than the schema's version and their Go steps, then runs cfg.Setup in
// that same transaction. A test stops at the migration numbered upto; 0 applies them all.
func migrate(ctx context.Context, pool *pgxpool.Pool, key int64, cfg store.Config, upto int) error {
	names, err := migrationFiles.ReadDir("migrations")
	if err != nil {
		return err
	}
	sort.Slice(names, func(i, j int) bool { return names[i].Name() < names[j].Name() })
	if upto > 0 {
		names = names[:upto]
	}
	opts := pgx.TxOptions{}
	if cfg.ReadOnly {
		opts.AccessMode = pgx.ReadOnly
	}
	tx, err := pool.BeginTx(ctx, opts)
	if err != nil {
		return err
	}
	defer rollback(tx)
	q := pgqueries.Over(tx)
	if cfg.ReadOnly {
		return readOnlySetup(ctx, tx, q, len(names), cfg)
	}
	if err := lockSetup(ctx, q, key); err != nil {
		return err
	}
	setUp := false
	setup := func() error {
		if setUp || cfg.Setup == nil {
			return nil
		}
		setUp = true
		return cfg.Setup(ctx, q)
	}
	if _, err := tx.Exec(ctx, "CREATE TABLE IF NOT EXISTS schema_version (version BIGINT NOT NULL)"); err != nil {
		return err
	}
	var version int
	switch err := tx.QueryRow(ctx, "SELECT version FROM schema_version").Scan(&version); {
	case errors.Is(err, sql.ErrNoRows):
		if _, err := tx.Exec(ctx, "INSERT INTO schema_version (version) VALUES (0)"); err != nil {
			return err
		}
	case err != nil:
		return err
	}
	if version > len(names) {
		return fmt.Errorf("database schema version %d is newer than this program (%d)", version, len(names))
	}
	for i, f := range names[version:] {
		prefix := fmt.Sprintf("%04d_", version+i+1)
		if !strings.HasPrefix(f.Name(), prefix) {
			return fmt.Errorf("migration %s is out of sequence (want number %s)", f.Name(), prefix[:4])
		}
		body, err := migrationFiles.ReadFile("migrations/" + f.Name())
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, string(body)); err != nil {
			return fmt.Errorf("%s: %w", f.Name(), err)
		}
		if step := cfg.Steps[strings.TrimPrefix(f.Name(), prefix)]; step != nil {
			if err := setup(); err != nil {
				return err
			}
			if err := step(ctx, q); err != nil {
				return fmt.Errorf("%s: %w", f.Name(), err)
			}
		}
	}
	if _, err := tx.Exec(ctx, "UPDATE schema_version SET version = $1", len(names)); err != nil {
		return err
	}
	if err := setup(); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// rollback ends tx, after its COMMIT a no-op (for a defer).
func rollback(tx pgx.Tx) { _ = tx.Rollback(context.Background()) }

// readOnlySetup is migrate for a read-only store, in tx, a READ ONLY transaction the
// caller rolls back: a schema of this program's version has nothing to migrate, and
// cfg.Setup runs in tx.
func readOnlySetup(ctx context.Context, tx pgx.Tx, q store.Querier, migrations int, cfg store.Config) error {
	var exists bool
	if err := tx.QueryRow(ctx, "SELECT to_regclass('schema_version') IS NOT NULL").Scan(&exists); err != nil {
		return err
	}
	if !exists {
		return errors.New("no payments database in this schema (no schema_version table): opened to read only, it is not created " +
			"(the first command that writes creates it)")
	}
	var version int
	switch err := tx.QueryRow(ctx, "SELECT version FROM schema_version").Scan(&version); {
	case errors.Is(err, sql.ErrNoRows): // made, and nothing migrated yet
	case err != nil:
		return err
	}
	if version != migrations {
		return fmt.Errorf("database schema version %d is not this program's (%d): opened to read only, it is not migrated "+
			"(an older database is migrated by the first command that writes)", version, migrations)
	}
	if cfg.Setup == nil {
		return nil
	}
	return cfg.Setup(ctx, q)
}

// Redact returns dsn as messages and logs may show it: without its password, whether
// the URL's user information or its query (?password=, which pgx reads too) holds it.
func Redact(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return "the PostgreSQL database"
	}
	if q := u.Query(); q.Has("password") {
		q.Set("password", "xxxxx")
		u.RawQuery = q.Encode()
	}
	return u.Redacted()
}

// KeyFile is the default data key file of the database dsn names: "postgres-NAME.key",
// NAME the database's.
func KeyFile(dsn string) string {
	name := "payments"
	if u, err := url.Parse(dsn); err == nil && strings.Trim(u.Path, "/") != "" {
		name = path.Base(u.Path)
	}
	return "postgres-" + name + ".key"
}

// Close lets the batch and the reads under way end, then closes the pool; later
// operations fail. Safe to call again.
func (st *Store) Close() error {
	st.commit.Stop()
	st.mu.Lock()
	st.closed = true
	st.mu.Unlock()
	st.txs.Wait()
	st.pool.Close() // closing twice is a no-op
	return nil
}

// retryable reports whether err is PostgreSQL aborting a transaction that would succeed
// when run again: a serialization failure or a deadlock.
func retryable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "40001" || pe.Code == "40P01")
}

// Read runs fn in one read-only REPEATABLE READ transaction: one snapshot.
func (st *Store) Read(ctx context.Context, fn func(q store.Querier) error) error {
	if !st.enter() {
		return store.ErrClosed
	}
	defer st.txs.Done()
	tx, err := st.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return fmt.Errorf("payments: begin: %w", err)
	}
	defer rollback(tx)
	if err := fn(pgqueries.Over(tx)); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("payments: commit: %w", err)
	}
	return nil
}

// Reads is the pool's statements, each its own snapshot (ListEvents as feed's).
func (st *Store) Reads() store.Querier { return feed{st.readQ} }

// conflicts names the unique keys a client may duplicate, by the names migrations/ gives
// their constraints.
var conflicts = map[string]store.Conflict{
	"users_platform_email_key":             store.UserEmail,
	"bank_accounts_user_routing_index_key": store.BankAccount,
	"idempotency_keys_scope_key_key":       store.IdempotencyKey,
}

// Conflict reports whether err is a unique_violation, and which.
func (st *Store) Conflict(err error) (store.Conflict, bool) {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "23505" {
		return "", false
	}
	if c, ok := conflicts[pe.ConstraintName]; ok {
		return c, true
	}
	return store.Duplicate, true
}

// Backup is not this engine's: PostgreSQL is backed up with its own tools (pg_dump,
// base backups). It touches nothing.
func (st *Store) Backup(context.Context, string) error { return store.ErrUnsupported }

// Ping runs a trivial query on the pool.
func (st *Store) Ping(ctx context.Context) error {
	var one int
	return st.pool.QueryRow(ctx, "SELECT 1").Scan(&one)
}

// Stats reports the pool, and the committer's batches.
func (st *Store) Stats() store.Stats {
	p := st.pool.Stat()
	out := store.Stats{Pools: map[string]sql.DBStats{"postgres": {
		MaxOpenConnections: int(p.MaxConns()),
		OpenConnections:    int(p.TotalConns()),
		InUse:              int(p.AcquiredConns()),
		Idle:               int(p.IdleConns()),
		WaitCount:          p.EmptyAcquireCount(),
		WaitDuration:       p.EmptyAcquireWaitTime(),
	}}}
	st.commit.Stats(&out)
	return out
}
