package postgres

import (
	"github.com/jackc/pgx/v5"
)

// Behind a pooler that hands each transaction whichever server connection is free
// (PgBouncer in transaction mode), a named prepared statement made on one server
// connection is missing on the next (PostgreSQL answers 26000), or is there already under
// the same name (42P05). pgx's default exec mode, cache_statement, names a statement for
// every query, and so does database/sql's Prepare; the other modes pgx takes from the DSN
// (default_query_exec_mode=cache_describe, exec, simple_protocol) use only the unnamed
// statement, which a round trip or a transaction carries whole. So the DSN's mode decides
// whether the store prepares its statements (pgqueries.Prepare) or sends them unprepared
// (pgqueries.New). describe_exec also names none, but describes in one round trip what it
// runs in the next, which a pooler may send to another connection: it is not one to choose
// behind a pooler.

// namedStatements reports whether dsn leaves pgx in its default exec mode
// (cache_statement), in which every connection keeps named prepared statements: then,
// and only then, the store prepares its queries too.
func namedStatements(dsn string) (bool, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return false, err
	}
	return cfg.DefaultQueryExecMode == pgx.QueryExecModeCacheStatement, nil
}
