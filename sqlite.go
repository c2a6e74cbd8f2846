package payments

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"net/url"
	"runtime"
	"sort"
	"strings"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/platform-payments/payments/queries"
)

// The SQLite engine, the embedded default: one file, a writer pool of one connection that
// the group committer (committer.go) owns, beside a pool of query-only readers.

// sqliteStore is a store on one SQLite file.
type sqliteStore struct {
	// writer is capped at one connection with immediate transactions, so writers queue
	// in the pool instead of failing with SQLITE_BUSY; reader is a query-only pool.
	writer *sql.DB
	reader *sql.DB
	// Statements prepared once per pool (and per connection as it is first used), so a
	// request does not parse its SQL again: parsing costs as much as running a lookup.
	writeQ *queries.Queries
	readQ  *queries.Queries
	// commit runs every write operation, in batches (committer.go).
	commit committer
}

//go:embed migrations/*.sql
var migrationFiles embed.FS

// openSQLite opens the SQLite file at path as the service's store: migrated, its data
// keys set up, its statements prepared, its committer started and the payee rules loaded
// the first time.
func (s *Service) openSQLite(ctx context.Context, path string, opts Options) error {
	st := &sqliteStore{commit: newCommitter()}
	s.store = st // from here on, Close closes what is open
	var err error
	// The writer keeps its statement journal in memory (temp_store): a batch's savepoints
	// save each page's old content there, which on disk was a write system call for every
	// page an operation touched first.
	if st.writer, err = sql.Open("sqlite", sqliteDSN(path, "_pragma=temp_store(MEMORY)&_txlock=immediate")); err != nil {
		return fmt.Errorf("payments: open %s: %w", path, err)
	}
	st.writer.SetMaxOpenConns(1)
	st.writer.SetMaxIdleConns(1)
	st.writer.SetConnMaxLifetime(0)
	st.writer.SetConnMaxIdleTime(0)
	if err := st.writer.PingContext(ctx); err != nil {
		return fmt.Errorf("payments: open %s: %w", path, err)
	}
	sealed, err := s.migrate(ctx, st.writer, path, opts)
	var ke keyError
	switch {
	case errors.As(err, &ke):
		return fmt.Errorf("payments: open %s: %w", path, ke.error)
	case err != nil:
		return fmt.Errorf("payments: migrate %s: %w", path, err)
	}
	if sealed {
		// The values just sealed were plain in the write-ahead log's older frames: fold the
		// log into the database and truncate it. (secure_delete has zeroed what the
		// sealing replaced.) Another process reading at this moment keeps the log from
		// being truncated; it is folded in and cleared at the latest when the last
		// connection to the database closes.
		if _, err := st.writer.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
			return fmt.Errorf("payments: checkpoint %s: %w", path, err)
		}
	}
	s.decoySealed = s.keys.seal([]byte(randomSecret()), s.decoyAAD)
	if st.reader, err = sql.Open("sqlite", sqliteDSN(path, "_pragma=query_only(1)")); err != nil {
		return fmt.Errorf("payments: open %s: %w", path, err)
	}
	// Enough readers to keep every core busy; more would only queue inside SQLite.
	readers := max(4, 2*runtime.GOMAXPROCS(0))
	st.reader.SetMaxOpenConns(readers)
	st.reader.SetMaxIdleConns(readers)
	if st.writeQ, err = queries.Prepare(ctx, st.writer); err != nil {
		return fmt.Errorf("payments: prepare: %w", err)
	}
	if st.readQ, err = queries.Prepare(ctx, st.reader); err != nil {
		return fmt.Errorf("payments: prepare: %w", err)
	}
	if err := st.commit.prepare(ctx, st.writer); err != nil {
		return fmt.Errorf("payments: prepare: %w", err)
	}
	st.startCommitter()
	if err := s.loadDefaultRules(ctx); err != nil {
		return fmt.Errorf("payments: load payee rules: %w", err)
	}
	return nil
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

// close stops the committer (writes already taken into a batch finish and are answered;
// those still waiting, and any later ones, fail) and closes the pools. Safe to call again.
func (st *sqliteStore) close() error {
	st.stopCommitter()
	errs := []error{st.commit.closeStatements()}
	for _, q := range []*queries.Queries{st.readQ, st.writeQ} {
		if q != nil {
			errs = append(errs, q.Close())
		}
	}
	for _, db := range []*sql.DB{st.reader, st.writer} {
		if db != nil {
			errs = append(errs, db.Close())
		}
	}
	return errors.Join(errs...)
}

// reads is the reader pool's prepared statements, outside any transaction: a lone
// statement is its own snapshot in SQLite.
func (st *sqliteStore) reads() queries.Querier { return st.readQ }

// read runs fn in one read transaction on the reader pool: one snapshot.
func (st *sqliteStore) read(ctx context.Context, fn func(q queries.Querier) error) error {
	tx, err := st.reader.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("payments: begin: %w", err)
	}
	defer tx.Rollback()
	if err := fn(st.readQ.WithTx(tx)); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("payments: commit: %w", err)
	}
	return nil
}

// ping runs a trivial query on the reader pool.
func (st *sqliteStore) ping(ctx context.Context) error {
	var one int
	return st.reader.QueryRowContext(ctx, "SELECT 1").Scan(&one)
}

// stats reports both pools and the committer's batches.
func (st *sqliteStore) stats() Stats {
	out := Stats{
		Pools:         map[string]sql.DBStats{"reader": st.reader.Stats(), "writer": st.writer.Stats()},
		Commits:       st.commit.commits.Load(),
		CommittedOps:  st.commit.committedOps.Load(),
		CommitBatches: make([]int64, len(CommitBatchBounds)),
	}
	for i := range out.CommitBatches {
		out.CommitBatches[i] = st.commit.batches[i].Load()
	}
	return out
}

// uniqueViolation reports whether err is SQLite refusing a duplicate key, and the
// constraint: SQLite names it by its columns, "table.column, table.column".
func (st *sqliteStore) uniqueViolation(err error) (constraint string, ok bool) {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return "", false
	}
	switch se.Code() {
	case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
		msg := se.Error() // "... UNIQUE constraint failed: t.a, t.b (2067)"
		columns := msg[strings.LastIndex(msg, "constraint failed: ")+len("constraint failed: "):]
		columns, _, _ = strings.Cut(columns, " (")
		return columns, true
	}
	return "", false
}

// migrationSteps are the Go parts of migrations, run in the migration's transaction right
// after its SQL, by the migration's file name without its number (which may change when
// branches merge). Each may use the keyring: set up before it runs.
var migrationSteps = map[string]func(s *Service, ctx context.Context, q queries.Querier) error{
	"sealed_values.sql": (*Service).sealPlainValues,
}

// migrate applies, in one transaction, the embedded migrations newer than the database's
// user_version (and their Go steps), then sets up the data keys (setUpKeys) in that same
// transaction. It reports whether a step sealed values that were stored plain.
func (s *Service) migrate(ctx context.Context, writer *sql.DB, path string, opts Options) (sealed bool, err error) {
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
	q := queries.New(tx)
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
		if step := migrationSteps[strings.TrimPrefix(f.Name(), prefix)]; step != nil {
			if s.keys == nil {
				if err := s.setUpKeys(ctx, q, path, opts); err != nil {
					return false, err
				}
			}
			if err := step(s, ctx, q); err != nil {
				return false, fmt.Errorf("%s: %w", f.Name(), err)
			}
			sealed = version > 0 // a new database had nothing to seal
		}
	}
	if s.keys == nil {
		if err := s.setUpKeys(ctx, q, path, opts); err != nil {
			return false, err
		}
	}
	if version < len(names) {
		if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", len(names))); err != nil {
			return false, err
		}
	}
	return sealed, tx.Commit()
}
