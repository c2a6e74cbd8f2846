// Package pgtest gives each test a PostgreSQL schema of its own when the environment
// variable PAYMENTS_TEST_POSTGRES holds the URL of a database to make them in; without
// it, the tests run on SQLite alone.
package pgtest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
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

// DSN creates a new, empty schema in the database Env names and returns that database's
// URL with the schema as its search_path, so that everything a service opened on it
// makes goes into the schema. The schema is dropped when tb ends. DSN fails tb when the
// database cannot be reached: a run asked for PostgreSQL must not pass without it.
func DSN(tb testing.TB) string {
	tb.Helper()
	base := os.Getenv(Env)
	if base == "" {
		tb.Fatalf("pgtest.DSN: $%s is not set", Env)
	}
	u, err := url.Parse(base)
	if err != nil {
		tb.Fatalf("$%s: %v", Env, err)
	}
	schema := "test_" + randomHex(8)
	db, err := sql.Open("pgx", base)
	if err != nil {
		tb.Fatalf("$%s: %v", Env, err)
	}
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
		db.Close()
		tb.Fatalf("create schema in $%s: %v", Env, err)
	}
	tb.Cleanup(func() {
		defer db.Close()
		// Services are closed by cleanups registered later, which run first.
		if _, err := db.ExecContext(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			tb.Errorf("drop schema %s: %v", schema, err)
		}
	})
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	dsn := u.String()
	keyFiles.Store(dsn, filepath.Join(tb.TempDir(), schema+".key"))
	return dsn
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
