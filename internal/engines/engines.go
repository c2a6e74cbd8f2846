// Package engines lists the database engines a payments service opens, each a package
// under internal/store: the root reaches them through this list and the contract of
// package store alone, and imports no engine.
package engines

import (
	"github.com/platform-payments/payments/internal/store"
	"github.com/platform-payments/payments/internal/store/postgres"
	"github.com/platform-payments/payments/internal/store/sqlite"
)

// all are the engines, in the order they are asked: the first that accepts a DSN opens it.
var all = []store.Engine{postgres.Engine{}, sqlite.Engine{}}

// For returns the engine of the database dsn names, or nil when none takes it.
func For(dsn string) store.Engine {
	for _, e := range all {
		if e.Accepts(dsn) {
			return e
		}
	}
	return nil
}

// IsPostgres reports whether dsn names a PostgreSQL database (a postgres:// or
// postgresql:// URL).
func IsPostgres(dsn string) bool { return postgres.Accepts(dsn) }

// DefaultMaxConns is the most connections a PostgreSQL engine opens by default.
func DefaultMaxConns() int { return postgres.DefaultMaxConns() }
