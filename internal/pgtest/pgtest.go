// Package pgtest gives each test a PostgreSQL schema of its own when the environment
// variable PAYMENTS_TEST_POSTGRES holds the URL of a database to make them in, or a
// database of its own behind a pooler when PAYMENTS_TEST_PGBOUNCER names one too;
// without them, the tests run on SQLite alone.
package pgtest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver
)

// Env is the environment variable naming the PostgreSQL database tests make their
// schemas in, as a postgres:// URL.
const Env = "PAYMENTS_TEST_POSTGRES"

// PoolerEnv is the environment variable naming a pooler in transaction mode (PgBouncer)
// in front of the server of Env's database, as a postgres:// URL whose database part is
// replaced by each test's and whose parameters are kept (its
// default_query_exec_mode=cache_describe, which the store needs behind such a pooler).
// The pooler must map every database name to that server ([databases] * = host=…
// port=…). A pooler passes no search_path from a URL, so behind one each test gets a
// database of its own (NewDatabase), rather than a schema, and its tables go to the
// database's default schema, public.
const PoolerEnv = "PAYMENTS_TEST_PGBOUNCER"

// Enabled reports whether tests run on PostgreSQL.
func Enabled() bool { return os.Getenv(Env) != "" }

// New creates a new, empty place for one test's tables and returns its DSN and a
// function that removes it: a schema in the database Env names (NewSchema), or, when
// PoolerEnv is set too, a database reached through the pooler (NewDatabase).
func New(ctx context.Context) (dsn string, drop func() error, err error) {
	if pooler := os.Getenv(PoolerEnv); pooler != "" {
		return NewDatabase(ctx, os.Getenv(Env), pooler)
	}
	return NewSchema(ctx, os.Getenv(Env))
}

// DSN creates a new, empty schema or database (New) and returns its DSN; it is dropped
// when tb ends. DSN fails tb when the database cannot be reached: a run asked for
// PostgreSQL must not pass without it.
func DSN(tb testing.TB) string {
	tb.Helper()
	dsn, drop, err := New(context.Background())
	if err != nil {
		tb.Fatalf("$%s: %v", Env, err)
	}
	tb.Cleanup(func() {
		// Services are closed by cleanups registered later, which run first.
		if err := drop(); err != nil {
			tb.Errorf("%v", err)
		}
	})
	keyFiles.Store(dsn, filepath.Join(tb.TempDir(), "payments.key"))
	return dsn
}

// NewSchema creates a new, empty schema in the database base names and returns base with
// the schema as its search_path, so that everything a service opened on it makes goes
// into the schema, and a function that drops the schema.
func NewSchema(ctx context.Context, base string) (dsn string, drop func() error, err error) {
	if base == "" {
		return "", nil, fmt.Errorf("no PostgreSQL database: $%s is not set", Env)
	}
	u, err := url.Parse(base)
	if err != nil {
		return "", nil, err
	}
	schema := "test_" + randomHex(8)
	db, err := sql.Open("pgx", base)
	if err != nil {
		return "", nil, err
	}
	if _, err := db.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
		return "", nil, errors.Join(fmt.Errorf("create schema: %w", err), db.Close())
	}
	drop = func() error {
		defer db.Close()
		if _, err := db.ExecContext(context.WithoutCancel(ctx), "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			return fmt.Errorf("drop schema %s: %w", schema, err)
		}
		return nil
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String(), drop, nil
}

// NewDatabase creates a new, empty database through a direct connection to the database
// base names and returns the pooler URL with that database in place of its own, and a
// function that drops the database, closing the connections the pooler still holds to
// it (WITH (FORCE)).
func NewDatabase(ctx context.Context, base, pooler string) (dsn string, drop func() error, err error) {
	if base == "" {
		return "", nil, fmt.Errorf("$%s is set, but not $%s, the direct connection that makes the databases", PoolerEnv, Env)
	}
	u, err := url.Parse(pooler)
	if err != nil {
		return "", nil, fmt.Errorf("$%s: %w", PoolerEnv, err)
	}
	name := "test_" + randomHex(8)
	db, err := sql.Open("pgx", base)
	if err != nil {
		return "", nil, err
	}
	// From PostgreSQL 15 on, CREATE DATABASE writes the template's every block to the WAL
	// by default (STRATEGY WAL_LOG): slower for a test's database than copying its files
	// (about 0.3 s against 0.2 s on the CI machine under the suite's load).
	var version int
	if err := db.QueryRowContext(ctx, "SELECT current_setting('server_version_num')::int").Scan(&version); err != nil {
		return "", nil, errors.Join(err, db.Close())
	}
	strategy := ""
	if version >= 150000 {
		strategy = " STRATEGY = FILE_COPY"
	}
	if _, err := db.ExecContext(ctx, "CREATE DATABASE "+name+strategy); err != nil {
		return "", nil, errors.Join(fmt.Errorf("create database: %w", err), db.Close())
	}
	drop = func() error {
		defer db.Close()
		if _, err := db.ExecContext(context.WithoutCancel(ctx), "DROP DATABASE "+name+" WITH (FORCE)"); err != nil {
			return fmt.Errorf("drop database %s: %w", name, err)
		}
		return nil
	}
	u.Path = "/" + name
	return u.String(), drop, nil
}

// keyFiles holds the data key file of each DSN made.
var keyFiles sync.Map

// KeyFile returns the data key file for the services of a schema or database DSN made:
// in a temporary directory of the test, rather than payments.DefaultKeyFile's working
// directory, and the same each time it is opened.
func KeyFile(dsn string) string {
	f, _ := keyFiles.Load(dsn)
	s, _ := f.(string)
	return s
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b) // never returns an error (crypto/rand, Go 1.24+)
	return hex.EncodeToString(b)
}

// NewStore returns where a test's new database goes and the key file its services open
// it with: a SQLite file in a temporary directory and "" (the default key file beside
// it), or, when Enabled, a new schema's or database's DSN (DSN) and its key file
// (KeyFile).
func NewStore(tb testing.TB) (dsn, keyFile string) {
	tb.Helper()
	if !Enabled() {
		return filepath.Join(tb.TempDir(), "payments.db"), ""
	}
	dsn = DSN(tb)
	return dsn, KeyFile(dsn)
}

// Condition answers the testscript conditions of an engine, for scripts whose database
// New or a file gives: [sqlite] holds when the script's database is a SQLite file,
// [postgres] when it is a PostgreSQL schema or database (Enabled).
func Condition(cond string) (bool, error) {
	switch cond {
	case "sqlite":
		return !Enabled(), nil
	case "postgres":
		return Enabled(), nil
	}
	return false, fmt.Errorf("unknown condition %q", cond)
}
