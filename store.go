package payments

import (
	"github.com/platform-payments/payments/internal/store"
	"github.com/platform-payments/payments/internal/store/postgres"
	"github.com/platform-payments/payments/internal/store/sqlite"
)

// engines are the database engines Open chooses from: the first that accepts the DSN
// opens it. Each is a package under internal/store; the service talks to them only
// through the contract of package store.
var engines = []store.Engine{postgres.Engine{}, sqlite.Engine{}}

// engineFor returns the engine of the database dsn names.
func engineFor(dsn string) (store.Engine, error) {
	for _, e := range engines {
		if e.Accepts(dsn) {
			return e, nil
		}
	}
	return nil, Errorf(CodeInvalid, "%q names no database: want a file path or a postgres:// URL", dsn)
}

// IsPostgres reports whether Open takes dsn for a PostgreSQL database (a postgres:// or
// postgresql:// URL) rather than a SQLite file.
func IsPostgres(dsn string) bool { return postgres.Accepts(dsn) }

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
func DefaultMaxConns() int { return postgres.DefaultMaxConns() }
