package postgres

import (
	"context"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/platform-payments/payments/internal/pgtest"
	"github.com/platform-payments/payments/internal/store"
	"github.com/platform-payments/payments/queries"
)

// Open refuses a DSN pgx cannot parse before it connects, without the password.
func TestOpen_BadMode(t *testing.T) {
	_, err := Open(context.Background(), "postgres://u:hunter2@127.0.0.1:1/payments?default_query_exec_mode=fast", store.Config{})
	if err == nil || !strings.Contains(err.Error(), "default_query_exec_mode") || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("Open with an unknown exec mode: %v; want the mode named, the password not", err)
	}
}

// A store opened with another exec mode than pgx's default leaves no prepared statement
// on its connections after writes, reads and lone statements: nothing a pooler could
// carry to another client, or miss on another server connection. pg_prepared_statements
// shows the statements of its own session alone, so the store has one connection
// (MaxConns 1) and the test asks on it; the server is reached directly, not through a
// pooler, which could answer from another connection. The default mode, for contrast,
// leaves the prepared queries.
func TestNoNamedStatements(t *testing.T) {
	if !pgtest.Enabled() {
		t.Skipf("$%s is not set: needs PostgreSQL", pgtest.Env)
	}
	ctx := context.Background()
	for _, mode := range []string{"cache_statement", "cache_describe", "exec", "simple_protocol"} {
		t.Run(mode, func(t *testing.T) {
			dsn, drop, err := pgtest.NewSchema(ctx, os.Getenv(pgtest.Env))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				if err := drop(); err != nil {
					t.Error(err)
				}
			})
			u, err := url.Parse(dsn)
			if err != nil {
				t.Fatal(err)
			}
			q := u.Query()
			q.Set("default_query_exec_mode", mode)
			u.RawQuery = q.Encode()
			st, err := Open(ctx, u.String(), store.Config{MaxConns: 1})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()

			const keyID = "5eedfeed5eedfeed"
			if err := st.Write(ctx, store.WriteOptions{}, func(ctx context.Context, q store.Querier) error {
				if err := q.AddDataKey(ctx, queries.AddDataKeyParams{KeyID: keyID, KeyCheck: "v1:" + keyID + ":c2VhbGVk",
					AddedAt: "2026-01-01T00:00:00.000000Z"}); err != nil {
					return err
				}
				_, err := q.CreateRuleSet(ctx, queries.CreateRuleSetParams{Source: "test", LoadedAt: "2026-01-01T00:00:00.000000Z"})
				return err
			}); err != nil {
				t.Fatal(err)
			}
			if err := st.Read(ctx, func(q store.Querier) error {
				_, err := q.ListDataKeys(ctx)
				return err
			}); err != nil {
				t.Fatal(err)
			}
			if set, err := st.Reads().CurrentRuleSet(ctx); err != nil || set != 1 {
				t.Fatalf("CurrentRuleSet = %d, %v; want 1", set, err)
			}

			var n int
			if err := st.pool.QueryRow(ctx, "SELECT count(*) FROM pg_prepared_statements").Scan(&n); err != nil {
				t.Fatal(err)
			}
			if named := mode == "cache_statement"; named && n == 0 {
				t.Errorf("no prepared statement on the connection in pgx's default mode: the test cannot see them")
			} else if !named && n != 0 {
				t.Errorf("%d prepared statements on the connection, want none", n)
			}
		})
	}
}
