package payments

import (
	"github.com/platform-payments/payments/internal/engines"
	"github.com/platform-payments/payments/internal/store"
)

// engineFor returns the engine of the database dsn names (package engines lists them; the
// service talks to them only through the contract of package store).
func engineFor(dsn string) (store.Engine, error) {
	if e := engines.For(dsn); e != nil {
		return e, nil
	}
	return nil, Errorf(CodeInvalid, "%q names no database: want a file path or a postgres:// URL", dsn)
}

// IsPostgres reports whether Open takes dsn for a PostgreSQL database (a postgres:// or
// postgresql:// URL) rather than a SQLite file.
func IsPostgres(dsn string) bool { return engines.IsPostgres(dsn) }

// RedactDSN returns dsn as messages and logs may show it: a PostgreSQL URL without its
// password; a file path as it is.
func RedactDSN(dsn string) string {
	e, err := engineFor(dsn)
	if err != nil {
		return "the database"
	}
	return e.Redact(dsn)
}

// DefaultMaxConns is the most connections a service on PostgreSQL opens when its Options
// leave MaxConns zero: four per core, at least eight.
func DefaultMaxConns() int { return engines.DefaultMaxConns() }
