package payments

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"path"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver

	"github.com/platform-payments/payments/pgqueries"
	"github.com/platform-payments/payments/queries"
)

// The PostgreSQL engine, for many instances of the service on one database: every write
// operation is a transaction of its own (READ COMMITTED), retried when the database
// aborts it to resolve a deadlock or a serialization failure; reads that must agree are
// one REPEATABLE READ transaction. What makes concurrent instances correct is in the SQL
// (pgqueries): the platform's user count raised by an UPDATE that locks its row, the
// user's row locked before its default account changes, unique constraints named so that
// a duplicate maps to its conflict.

// pgStore is a store on a PostgreSQL database (in the schema the DSN's search_path names).
type pgStore struct {
	db *sql.DB
	// pq is the pool's prepared statements, readQ the same behind queries.Querier.
	pq    *pgqueries.Queries
	readQ queries.Querier
	// commits counts the write transactions committed: each one operation's.
	commits atomic.Int64
	// txs counts the transactions under way (write, read), which close waits for before
	// it closes the prepared statements they use: database/sql re-prepares a closed
	// statement in a transaction, and its Commit can then hang. mu guards closed.
	txs    sync.WaitGroup
	mu     sync.RWMutex
	closed bool
}

// enter registers a transaction about to begin, to be ended with st.txs.Done; false once
// the store is closing.
func (st *pgStore) enter() bool {
	st.mu.RLock()
	defer st.mu.RUnlock()
	if st.closed {
		return false
	}
	st.txs.Add(1)
	return true
}

//go:embed pgmigrations/*.sql
var pgMigrationFiles embed.FS

// IsPostgres reports whether Open takes dsn for a PostgreSQL database (a postgres:// or
// postgresql:// URL) rather than a SQLite file.
func IsPostgres(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// DefaultMaxConns is the most connections a service on PostgreSQL opens when its Options
// leave MaxConns zero: four per core, at least eight.
func DefaultMaxConns() int { return max(8, 4*runtime.GOMAXPROCS(0)) }

// Attempts of a write the database aborted to resolve a conflict, and the pause before
// the first retry (doubled each time, with jitter).
const (
	pgWriteAttempts = 8
	pgRetryPause    = 2 * time.Millisecond
)

// openPostgres opens the PostgreSQL database dsn names as the service's store. The
// migrations, the data keys' set-up and the first load of the payee rules run holding an
// advisory lock of the schema, so that instances starting together do each once.
func (s *Service) openPostgres(ctx context.Context, dsn string, opts Options) error {
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return fmt.Errorf("payments: open %s: %w", RedactDSN(dsn), err)
	}
	st := &pgStore{db: db}
	s.store = st // from here on, Close closes what is open
	conns := opts.MaxConns
	if conns <= 0 {
		conns = DefaultMaxConns()
	}
	db.SetMaxOpenConns(conns)
	db.SetMaxIdleConns(conns)
	db.SetConnMaxIdleTime(5 * time.Minute)

	// One connection holds the set-up lock; it is released (and the connection returned)
	// when the set-up is over, or when the connection closes.
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("payments: open %s: %w", RedactDSN(dsn), err)
	}
	defer conn.Close()
	const setupLock = "SELECT pg_advisory_lock(hashtext(current_schema() || '.payments setup'))"
	if _, err := conn.ExecContext(ctx, setupLock); err != nil {
		return fmt.Errorf("payments: open %s: %w", RedactDSN(dsn), err)
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock(hashtext(current_schema() || '.payments setup'))")

	err = s.migratePostgres(ctx, conn, dsn, opts)
	var ke keyError
	switch {
	case errors.As(err, &ke):
		return fmt.Errorf("payments: open %s: %w", RedactDSN(dsn), ke.error)
	case err != nil:
		return fmt.Errorf("payments: migrate %s: %w", RedactDSN(dsn), err)
	}
	s.decoySealed = s.keys.seal([]byte(randomSecret()), s.decoyAAD)
	if st.pq, err = pgqueries.Prepare(ctx, db); err != nil {
		return fmt.Errorf("payments: prepare: %w", err)
	}
	st.readQ = pgqueries.NewAdapter(st.pq)
	if err := s.loadDefaultRules(ctx); err != nil {
		return fmt.Errorf("payments: load payee rules: %w", err)
	}
	return nil
}

// migratePostgres applies, in one transaction, the embedded PostgreSQL migrations newer
// than the schema's version, then sets up the data keys in that same transaction.
func (s *Service) migratePostgres(ctx context.Context, conn *sql.Conn, dsn string, opts Options) error {
	names, err := pgMigrationFiles.ReadDir("pgmigrations")
	if err != nil {
		return err
	}
	sort.Slice(names, func(i, j int) bool { return names[i].Name() < names[j].Name() })
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS schema_version (version BIGINT NOT NULL)"); err != nil {
		return err
	}
	var version int
	switch err := tx.QueryRowContext(ctx, "SELECT version FROM schema_version").Scan(&version); {
	case errors.Is(err, sql.ErrNoRows):
		if _, err := tx.ExecContext(ctx, "INSERT INTO schema_version (version) VALUES (0)"); err != nil {
			return err
		}
	case err != nil:
		return err
	}
	if version > len(names) {
		return fmt.Errorf("database schema version %d is newer than this program (%d)", version, len(names))
	}
	for i, f := range names[version:] {
		if want := fmt.Sprintf("%04d_", version+i+1); !strings.HasPrefix(f.Name(), want) {
			return fmt.Errorf("migration %s is out of sequence (want number %s)", f.Name(), want[:4])
		}
		body, err := pgMigrationFiles.ReadFile("pgmigrations/" + f.Name())
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, string(body)); err != nil {
			return fmt.Errorf("%s: %w", f.Name(), err)
		}
	}
	if _, err := tx.ExecContext(ctx, "UPDATE schema_version SET version = $1", len(names)); err != nil {
		return err
	}
	if err := s.setUpKeys(ctx, pgqueries.NewAdapter(pgqueries.New(tx)), dsn, opts); err != nil {
		return err
	}
	return tx.Commit()
}

// RedactDSN returns dsn as messages and logs may show it: a PostgreSQL URL without its
// password; a file path as it is.
func RedactDSN(dsn string) string {
	if !IsPostgres(dsn) {
		return dsn
	}
	u, err := url.Parse(dsn)
	if err != nil {
		return "the PostgreSQL database"
	}
	return u.Redacted()
}

// pgKeyFile is the default key file of a PostgreSQL database (see DefaultKeyFile).
func pgKeyFile(dsn string) string {
	name := "payments"
	if u, err := url.Parse(dsn); err == nil && strings.Trim(u.Path, "/") != "" {
		name = path.Base(u.Path)
	}
	return "postgres-" + name + ".key"
}

// close lets the transactions under way end, then closes the prepared statements and the
// pool; later operations fail. Safe to call again.
func (st *pgStore) close() error {
	st.mu.Lock()
	st.closed = true
	st.mu.Unlock()
	st.txs.Wait()
	var errs []error
	if st.pq != nil {
		errs = append(errs, st.pq.Close()) // closing twice is a no-op
	}
	return errors.Join(append(errs, st.db.Close())...)
}

// write runs fn in a transaction of its own, committed before write returns, and runs it
// again (in a new transaction) when the database aborted it to break a deadlock or a
// serialization failure. A ctx done before the transaction begins drops the operation.
func (st *pgStore) write(ctx context.Context, fn func(ctx context.Context, q queries.Querier) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if !st.enter() {
		return errClosed
	}
	defer st.txs.Done()
	// Begun, the operation is not the caller's to interrupt (as in the SQLite engine).
	ctx = context.WithoutCancel(ctx)
	pause := pgRetryPause
	for attempt := 1; ; attempt++ {
		err := st.tryWrite(ctx, fn)
		if attempt == pgWriteAttempts || !retryable(err) {
			return err
		}
		time.Sleep(pause/2 + rand.N(pause)) // #nosec G404 -- jitter, not a secret
		pause *= 2
	}
}

func (st *pgStore) tryWrite(ctx context.Context, fn func(ctx context.Context, q queries.Querier) error) error {
	tx, err := st.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("payments: begin: %w", err)
	}
	defer tx.Rollback() // after a COMMIT, a no-op; on a panic, undoes the operation
	if err := fn(ctx, pgqueries.NewAdapter(st.pq.WithTx(tx))); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("payments: commit: %w", err)
	}
	st.commits.Add(1)
	return nil
}

// retryable reports whether err is PostgreSQL aborting a transaction that would succeed
// when run again: a serialization failure or a deadlock.
func retryable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "40001" || pe.Code == "40P01")
}

// read runs fn in one read-only REPEATABLE READ transaction: one snapshot.
func (st *pgStore) read(ctx context.Context, fn func(q queries.Querier) error) error {
	if !st.enter() {
		return errClosed
	}
	defer st.txs.Done()
	tx, err := st.db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true})
	if err != nil {
		return fmt.Errorf("payments: begin: %w", err)
	}
	defer tx.Rollback()
	if err := fn(pgqueries.NewAdapter(st.pq.WithTx(tx))); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("payments: commit: %w", err)
	}
	return nil
}

// reads is the pool's prepared statements, each its own snapshot.
func (st *pgStore) reads() queries.Querier { return st.readQ }

// uniqueViolation reports whether err is a unique_violation, and the constraint's name.
func (st *pgStore) uniqueViolation(err error) (string, bool) {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "23505" {
		return pe.ConstraintName, true
	}
	return "", false
}

// ping runs a trivial query on the pool.
func (st *pgStore) ping(ctx context.Context) error {
	var one int
	return st.db.QueryRowContext(ctx, "SELECT 1").Scan(&one)
}

// stats reports the pool, and the commits: each write is a transaction of its own, a
// batch of one.
func (st *pgStore) stats() Stats {
	n := st.commits.Load()
	batches := make([]int64, len(CommitBatchBounds))
	batches[0] = n
	return Stats{Pools: map[string]sql.DBStats{"postgres": st.db.Stats()}, Commits: n, CommittedOps: n, CommitBatches: batches}
}
