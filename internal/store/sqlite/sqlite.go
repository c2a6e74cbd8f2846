// Package sqlite is the SQLite engine of the payments store, the embedded default: one
// file, a writer pool of one connection that the group committer (committer.go) owns,
// beside a pool of query-only readers.
package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"net/url"
	"os"
	"runtime"
	"sort"
	"strings"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/platform-payments/payments/internal/store"
	"github.com/platform-payments/payments/queries"
)

// Engine opens SQLite files.
type Engine struct{}

// Accepts reports whether dsn is a file path rather than the URL of a database server.
func (Engine) Accepts(dsn string) bool { return dsn != "" && !strings.Contains(dsn, "://") }

// Open opens the SQLite file at path (see Open).
func (Engine) Open(ctx context.Context, path string, cfg store.Config) (store.Store, error) {
	st, err := Open(ctx, path, cfg)
	if err != nil {
		return nil, err // not a nil *Store in a non-nil interface
	}
	return st, nil
}

// Redact returns path as it is: a path holds no secret.
func (Engine) Redact(path string) string { return path }

// DefaultKeyFile is the file's path with ".key" appended.
func (Engine) DefaultKeyFile(path string) string { return path + ".key" }

// Store is a store on one SQLite file.
type Store struct {
	// writer is capped at one connection with immediate transactions, so writers queue
	// in the pool instead of failing with SQLITE_BUSY; reader is a query-only pool.
	writer *sql.DB
	reader *sql.DB
	// Statements prepared once per pool (and per connection as it is first used), so a
	// request does not parse its SQL again: parsing costs as much as running a lookup.
	// The writes' statements are the committer's, prepared on the writer's connection.
	readQ *queries.Queries
	// commit runs every write operation, in batches (committer.go).
	commit committer
}

var _ store.Store = (*Store)(nil)

// querier is SQLite's statements as a store.Querier: writes run one at a time, so there
// is no row to lock.
type querier struct{ *queries.Queries }

// CreateBankAccountTakingDefault is store.Querier's, its statements one after another:
// there is no row to lock.
func (q querier) CreateBankAccountTakingDefault(ctx context.Context, p queries.CreateBankAccountParams, asked bool) (queries.BankAccount, error) {
	has, err := q.UserHasDefaultAccount(ctx, p.UserID)
	if err != nil {
		return queries.BankAccount{}, err
	}
	if asked && has {
		if err := q.ClearDefaultAccount(ctx, p.UserID); err != nil {
			return queries.BankAccount{}, err
		}
	}
	p.IsDefault = 0
	if asked || !has {
		p.IsDefault = 1
	}
	return q.CreateBankAccount(ctx, p)
}

// RecordEvent runs CreateEvent and FanOutEvent: in process, two statements cost little.
func (q querier) RecordEvent(ctx context.Context, e queries.CreateEventParams) (int64, error) {
	if err := q.CreateEvent(ctx, e); err != nil {
		return 0, err
	}
	return q.FanOutEvent(ctx, queries.FanOutEventParams{EventID: e.ID, DueAt: e.CreatedAt, PlatformID: e.PlatformID, Type: e.Type})
}

// RenameUserPayee reads the payee, then renames it: SQLite's writes are one at a time,
// so nothing changes it between the two.
func (q querier) RenameUserPayee(ctx context.Context, p queries.RenamePayeeParams) (string, queries.Payee, error) {
	before, err := q.GetUserPayee(ctx, queries.GetUserPayeeParams{ID: p.ID, UserID: p.UserID})
	if err != nil {
		return "", queries.Payee{}, err
	}
	after, err := q.RenamePayee(ctx, p)
	return before.Name, after, err
}

// CreateUserRows writes the user, its wallet and settings one statement after another:
// SQLite's writes are one at a time, so the time given follows the previous user's
// already.
func (q querier) CreateUserRows(ctx context.Context, u store.NewUserRows) (queries.User, error) {
	switch n, err := q.CountNewUser(ctx, u.User.PlatformID); {
	case err != nil:
		return queries.User{}, err
	case n == 0:
		return queries.User{}, sql.ErrNoRows
	}
	row, err := q.CreateUser(ctx, u.User)
	if err != nil {
		return queries.User{}, err
	}
	return row, createUserOwnRows(ctx, q.Queries, row, u)
}

// createUserOwnRows writes the wallet and settings of the user row, created at its time.
func createUserOwnRows(ctx context.Context, q *queries.Queries, row queries.User, u store.NewUserRows) error {
	u.Wallet.UserID, u.Wallet.CreatedAt = row.ID, row.CreatedAt
	if err := q.CreateWallet(ctx, u.Wallet); err != nil {
		return err
	}
	u.Settings.UserID, u.Settings.CreatedAt = row.ID, row.CreatedAt
	return q.CreateUserSettings(ctx, u.Settings)
}

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Open opens the SQLite file at path, creating it if needed: migrated (with cfg's Setup
// and Steps in the migration's transaction), its statements prepared and its committer
// started.
func Open(ctx context.Context, path string, cfg store.Config) (_ *Store, err error) {
	st := &Store{}
	defer func() {
		if err != nil {
			err = errors.Join(err, st.Close())
		}
	}()
	// The writer keeps its statement journal in memory (temp_store): a batch's savepoints
	// save each page's old content there, which on disk was a write system call for every
	// page an operation touched first.
	writerDSN, readerDSN := sqliteDSN(path, "_pragma=temp_store(MEMORY)&_txlock=immediate"), sqliteDSN(path, "_pragma=query_only(1)")
	if cfg.ReadOnly {
		// No new file, and no change to this one: both pools open what exists as it is
		// (a backup's copy stays in its journal mode), and SQLite refuses every write.
		if _, err := os.Stat(path); err != nil {
			return nil, fmt.Errorf("payments: open %s: opened to read only, no database is created: %w", path, err)
		}
		writerDSN, readerDSN = readOnlyDSN(path), readOnlyDSN(path)
	}
	if st.writer, err = sql.Open("sqlite", writerDSN); err != nil {
		return nil, fmt.Errorf("payments: open %s: %w", path, err)
	}
	st.writer.SetMaxOpenConns(1)
	st.writer.SetMaxIdleConns(1)
	st.writer.SetConnMaxLifetime(0)
	st.writer.SetConnMaxIdleTime(0)
	if err := ping(ctx, st.writer); err != nil {
		return nil, fmt.Errorf("payments: open %s: %w", path, err)
	}
	sealed, err := migrate(ctx, st.writer, cfg)
	if err != nil {
		return nil, fmt.Errorf("payments: migrate %s: %w", path, err)
	}
	if sealed {
		// The values a step just sealed were plain in the write-ahead log's older frames:
		// fold the log into the database and truncate it. (secure_delete has zeroed what
		// the sealing replaced.) Another process reading at this moment keeps the log
		// from being truncated; it is folded in and cleared at the latest when the last
		// connection to the database closes.
		if _, err := st.writer.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
			return nil, fmt.Errorf("payments: checkpoint %s: %w", path, err)
		}
	}
	if st.reader, err = sql.Open("sqlite", readerDSN); err != nil {
		return nil, fmt.Errorf("payments: open %s: %w", path, err)
	}
	// Enough readers to keep every core busy; more would only queue inside SQLite.
	readers := max(4, 2*runtime.GOMAXPROCS(0))
	st.reader.SetMaxOpenConns(readers)
	st.reader.SetMaxIdleConns(readers)
	if st.readQ, err = queries.Prepare(ctx, st.reader); err != nil {
		return nil, fmt.Errorf("payments: prepare: %w", err)
	}
	if err := st.commit.prepare(ctx, st.writer); err != nil {
		return nil, fmt.Errorf("payments: prepare: %w", err)
	}
	st.startCommitter(cfg.Plain)
	if cfg.Opened != nil {
		if err := cfg.Opened(ctx, st); err != nil {
			return nil, err
		}
	}
	return st, nil
}

// readOnlySetup is migrate for a read-only store: a database of this program's schema has
// nothing to migrate; cfg.Setup runs in tx, which the caller rolls back.
func readOnlySetup(ctx context.Context, tx *sql.Tx, q querier, migrations int, cfg store.Config) error {
	var version int
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return err
	}
	if version != migrations {
		return fmt.Errorf("database schema version %d is not this program's (%d): opened to read only, it is not migrated "+
			"(a new or older database is migrated by the first command that writes)", version, migrations)
	}
	if cfg.Setup == nil {
		return nil
	}
	return cfg.Setup(ctx, q)
}

// ping opens the pool's first connection. A new file's first connections switch it to
// WAL, and one that meets another doing so may be told SQLITE_BUSY at once, before its
// busy_timeout applies: processes opening one new file together try again, for as long as
// that timeout.
func ping(ctx context.Context, db *sql.DB) error {
	var err error
	for deadline := time.Now().Add(10 * time.Second); ; {
		err = db.PingContext(ctx)
		var se *sqlite.Error
		if err == nil || !errors.As(err, &se) || se.Code()&0xff != sqlite3.SQLITE_BUSY || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// sqliteDSN builds the modernc.org/sqlite DSN: pragmas are applied by the driver on every
// new connection of the pool, busy_timeout first so that the others wait for a lock too.
// secure_delete overwrites with zeros what a change removes (a value sealed anew, the
// plain values an older database held), so that no old bytes stay in the file.
func sqliteDSN(path, extra string) string {
	u := url.URL{Scheme: "file", Opaque: url.PathEscape(path)}
	return u.String() + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)" +
		"&_pragma=foreign_keys(1)&_pragma=synchronous(FULL)&_pragma=secure_delete(1)&" + extra
}

// readOnlyDSN is the DSN of a read-only store's pools: no journal mode is set (that would
// write the file's header), and every write is refused (query_only).
func readOnlyDSN(path string) string {
	u := url.URL{Scheme: "file", Opaque: url.PathEscape(path)}
	return u.String() + "?_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)&_pragma=query_only(1)"
}

// Close stops the committer (writes already taken into a batch finish and are answered;
// those still waiting, and any later ones, fail with store.ErrClosed) and closes the
// pools. Safe to call again.
func (st *Store) Close() error {
	st.stopCommitter()
	errs := []error{st.commit.close()}
	if st.readQ != nil {
		errs = append(errs, st.readQ.Close())
	}
	for _, db := range []*sql.DB{st.reader, st.writer} {
		if db != nil {
			errs = append(errs, db.Close())
		}
	}
	return errors.Join(errs...)
}

// Reads is the reader pool's prepared statements, outside any transaction: a lone
// statement is its own snapshot in SQLite.
func (st *Store) Reads() store.Querier { return querier{st.readQ} }

// Read runs fn in one read transaction on the reader pool: one snapshot.
func (st *Store) Read(ctx context.Context, fn func(q store.Querier) error) error {
	tx, err := st.reader.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("payments: begin: %w", err)
	}
	defer tx.Rollback()
	if err := fn(querier{st.readQ.WithTx(tx)}); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("payments: commit: %w", err)
	}
	return nil
}

// Ping runs a trivial query on the reader pool.
func (st *Store) Ping(ctx context.Context) error {
	var one int
	return st.reader.QueryRowContext(ctx, "SELECT 1").Scan(&one)
}

// Stats reports both pools and the committer's batches.
func (st *Store) Stats() store.Stats {
	out := store.Stats{Pools: map[string]sql.DBStats{"reader": st.reader.Stats(), "writer": st.writer.Stats()}}
	st.commit.queue.Stats(&out)
	return out
}

// conflicts names the unique keys a client may duplicate, as SQLite names them: by their
// columns.
var conflicts = map[string]store.Conflict{
	"users.platform_id, users.email_key":                                                      store.UserEmail,
	"bank_accounts.user_id, bank_accounts.routing_number, bank_accounts.account_number_index": store.BankAccount,
	"idempotency_keys.scope, idempotency_keys.key":                                            store.IdempotencyKey,
}

// Conflict reports whether err is SQLite refusing a duplicate key, and which: SQLite
// names the constraint by its columns, "table.column, table.column".
func (st *Store) Conflict(err error) (store.Conflict, bool) {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return "", false
	}
	switch se.Code() {
	case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
		msg := se.Error() // "... UNIQUE constraint failed: t.a, t.b (2067)"
		columns := msg[strings.LastIndex(msg, "constraint failed: ")+len("constraint failed: "):]
		columns, _, _ = strings.Cut(columns, " (")
		if c, ok := conflicts[columns]; ok {
			return c, true
		}
		return store.Duplicate, true
	}
	return "", false
}

// migrate applies, in one transaction, the embedded migrations newer than the database's
// user_version and their Go steps (cfg.Steps), and runs cfg.Setup in that same
// transaction. It reports whether a step ran on a database that was not new, and so may
// have rewritten values its older pages still hold.
func migrate(ctx context.Context, writer *sql.DB, cfg store.Config) (stepped bool, err error) {
	names, err := migrationFiles.ReadDir("migrations")
	if err != nil {
		return false, err
	}
	sort.Slice(names, func(i, j int) bool { return names[i].Name() < names[j].Name() })
	tx, err := writer.BeginTx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer tx.Rollback()
	q := querier{queries.New(tx)}
	if cfg.ReadOnly {
		return false, readOnlySetup(ctx, tx, q, len(names), cfg)
	}
	setUp := false
	setup := func() error {
		if setUp || cfg.Setup == nil {
			return nil
		}
		setUp = true
		return cfg.Setup(ctx, q)
	}
	var version int
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return false, err
	}
	if version > len(names) {
		return false, fmt.Errorf("database schema version %d is newer than this program (%d)", version, len(names))
	}
	for i, f := range names {
		if i < version {
			continue
		}
		prefix := fmt.Sprintf("%04d_", i+1)
		if !strings.HasPrefix(f.Name(), prefix) {
			return false, fmt.Errorf("migration %s is out of sequence (want number %04d)", f.Name(), i+1)
		}
		body, err := migrationFiles.ReadFile("migrations/" + f.Name())
		if err != nil {
			return false, err
		}
		if _, err := tx.ExecContext(ctx, string(body)); err != nil {
			return false, fmt.Errorf("%s: %w", f.Name(), err)
		}
		if step := cfg.Steps[strings.TrimPrefix(f.Name(), prefix)]; step != nil {
			if err := setup(); err != nil {
				return false, err
			}
			if err := step(ctx, q); err != nil {
				return false, fmt.Errorf("%s: %w", f.Name(), err)
			}
			stepped = version > 0 // a new database had nothing to rewrite
		}
	}
	if err := setup(); err != nil {
		return false, err
	}
	if version < len(names) {
		if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", len(names))); err != nil {
			return false, err
		}
	}
	return stepped, tx.Commit()
}
