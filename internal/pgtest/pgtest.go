// Package pgtest gives each test a PostgreSQL schema of its own when the environment
// variable PAYMENTS_TEST_POSTGRES holds the URL of a database to make them in; without
// it, the tests run on SQLite alone.
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

// Enabled reports whether tests run on PostgreSQL.
func Enabled() bool { return os.Getenv(Env) != "" }

// DSN creates a new, empty schema in the database Env names (NewSchema) and returns its
// DSN; the schema is dropped when tb ends. DSN fails tb when the database cannot be
// reached: a run asked for PostgreSQL must not pass without it.
func DSN(tb testing.TB) string {
	tb.Helper()
	dsn, drop, err := NewSchema(context.Background(), os.Getenv(Env))
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

// keyFiles holds the data key file of each schema DSN made.
var keyFiles sync.Map

// KeyFile returns the data key file for the services of a schema DSN made: in a
// temporary directory of the test, rather than payments.DefaultKeyFile's working
// directory, and the same each time the schema is opened.
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
// it), or, when Enabled, a new schema's DSN (DSN) and its key file (KeyFile).
func NewStore(tb testing.TB) (dsn, keyFile string) {
	tb.Helper()
	if !Enabled() {
		return filepath.Join(tb.TempDir(), "payments.db"), ""
	}
	dsn = DSN(tb)
	return dsn, KeyFile(dsn)
}

// Condition answers the testscript conditions of an engine, for scripts whose database
// NewSchema or a file gives: [sqlite] holds when the script's database is a SQLite file,
// [postgres] when it is a PostgreSQL schema (Enabled).
func Condition(cond string) (bool, error) {
	switch cond {
	case "sqlite":
		return !Enabled(), nil
	case "postgres":
		return Enabled(), nil
	}
	return false, fmt.Errorf("unknown condition %q", cond)
}
