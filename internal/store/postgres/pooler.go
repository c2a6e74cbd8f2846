package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// ErrPoolerExecMode is Open's refusal of an exec mode that the pooler in front of the
// server breaks; its text is the fix.
var ErrPoolerExecMode = errors.New("add default_query_exec_mode=cache_describe to the URL")

// checkPooler refuses an exec mode whose statements a pooler in front of the server hands
// to other clients.
//
// Those modes are pgx's default, cache_statement (a statement named per query, prepared
// once and run later), and describe_exec (the unnamed statement, described in one round
// trip and run in the next); the pooler, PgBouncer in transaction mode, gives a client's
// next round trip whichever server connection is free. A service so configured passes
// tests run one request at a time on a fresh pooler, and fails, as 500s, once two clients
// meet on one server connection: under concurrency, or after a restart on the server
// connections the last process prepared on.
//
// It refuses on evidence, never on a guess. PgBouncer gives each client a process id of
// its own making (random: a client has no one server process), so a connection whose
// pg_backend_pid() is the id it was given reaches the server itself: one round trip, and
// no more is done. Behind a pooler, a second connection looks for what the first left in
// its session: the first prepares a statement under a random name (cache_statement) or
// sets a setting of its session (describe_exec), and the second runs that statement or
// reads that setting. It can find them only on the server connection the first used,
// which a pooler in session mode never shares between clients, and on which PgBouncer from
// 1.21 on with max_prepared_statements (on by default from 1.24) keeps each client's named
// statements to itself: neither valid configuration is refused. PgBouncer gives a client
// the server connection released last (server_round_robin = 0, its default), so the
// second finds the first's at the first try; five tries that find nothing (a saturated
// pool gave that server connection to a waiting client each time) leave the configuration
// unrefused, as it was before this check.
func checkPooler(ctx context.Context, pool *pgxpool.Pool, cfg *pgx.ConnConfig) error {
	mode := cfg.DefaultQueryExecMode
	if mode != pgx.QueryExecModeCacheStatement && mode != pgx.QueryExecModeDescribeExec {
		return nil // cache_describe, exec, simple_protocol: nothing outlives a round trip
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	first := conn.Conn().PgConn()
	if pooled, err := behindPooler(ctx, first); err != nil || !pooled {
		return err
	}
	// Past here, whatever fails leaves the question open: the pool works (the query above
	// ran), and Open goes on.
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	second, err := pgconn.ConnectConfig(ctx, cfg.Config.Copy())
	if err != nil {
		return nil
	}
	defer second.Close(ctx)
	for range 5 {
		token := "payments_pooler_probe_" + randomHex(8)
		var found string
		if mode == pgx.QueryExecModeCacheStatement {
			if _, err := first.Prepare(ctx, token, "SELECT '"+token+"'::text", nil); err != nil {
				return nil
			}
			if r := second.ExecPrepared(ctx, token, nil, nil, nil).Read(); r.Err == nil && len(r.Rows) == 1 {
				found = string(r.Rows[0][0])
			}
			_ = first.Deallocate(ctx, token) // on the server connection released last: the one it is on
		} else {
			if _, err := simpleQuery(ctx, first, "SELECT set_config('payments.pooler_probe', '"+token+"', false)"); err != nil {
				return nil
			}
			found, _ = simpleQuery(ctx, second, "SELECT current_setting('payments.pooler_probe', true)")
			_ = first.Exec(ctx, "RESET payments.pooler_probe").Close()
		}
		if found == token {
			name := map[pgx.QueryExecMode]string{pgx.QueryExecModeCacheStatement: "cache_statement, pgx's default,",
				pgx.QueryExecModeDescribeExec: "describe_exec"}[mode]
			return fmt.Errorf("the connections go through a pooler in transaction mode (PgBouncer's pool_mode = transaction), "+
				"where default_query_exec_mode=%s fails under concurrency (a statement one connection leaves on the server "+
				"reaches another): %w", name, ErrPoolerExecMode)
		}
	}
	return nil
}

// behindPooler reports whether conn reaches the server through a pooler: whether the
// process id the server side gave it at start is not the one its queries run in.
func behindPooler(ctx context.Context, conn *pgconn.PgConn) (bool, error) {
	pid, err := simpleQuery(ctx, conn, "SELECT pg_backend_pid()")
	if err != nil {
		return false, err
	}
	return pid != strconv.FormatUint(uint64(conn.PID()), 10), nil
}

// simpleQuery runs sql, a query of one value, in the simple protocol (nothing prepared),
// and returns that value as text.
func simpleQuery(ctx context.Context, conn *pgconn.PgConn, sql string) (string, error) {
	res, err := conn.Exec(ctx, sql).ReadAll()
	if err != nil {
		return "", err
	}
	if len(res) != 1 || len(res[0].Rows) != 1 || len(res[0].Rows[0]) != 1 {
		return "", fmt.Errorf("%s: not one value", sql)
	}
	return string(res[0].Rows[0][0]), nil
}

// randomHex returns n random bytes in hexadecimal.
func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b) // never returns an error (crypto/rand, Go 1.24+)
	return hex.EncodeToString(b)
}
