package postgres

import (
	"context"
	"errors"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/platform-payments/payments/internal/pgtest"
	"github.com/platform-payments/payments/internal/store"
)

// connect opens one connection to dsn, which may name an exec mode (pgx's, not the
// server's).
func connect(t *testing.T, dsn string) *pgconn.PgConn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	return conn.PgConn()
}

// withMode returns dsn with default_query_exec_mode set to mode, or taken out when mode
// is "" (pgx's default then: cache_statement).
func withMode(t *testing.T, dsn, mode string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Del("default_query_exec_mode")
	if mode != "" {
		q.Set("default_query_exec_mode", mode)
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// Through PgBouncer in transaction mode, Open refuses the exec modes whose statements
// outlive a round trip (pgx's default, and describe_exec), naming the setting to add,
// before it creates anything; it opens with the modes that prepare nothing.
func TestOpen_PoolerExecMode(t *testing.T) {
	pooler := os.Getenv(pgtest.PoolerEnv)
	if pooler == "" || !pgtest.Enabled() {
		t.Skipf("$%s and $%s are not both set: needs PostgreSQL behind a pooler in transaction mode", pgtest.PoolerEnv, pgtest.Env)
	}
	ctx := context.Background()
	dsn, drop, err := pgtest.NewDatabase(ctx, os.Getenv(pgtest.Env), pooler)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := drop(); err != nil {
			t.Error(err)
		}
	})

	for _, mode := range []string{"", "cache_statement", "describe_exec"} {
		t.Run("refused/"+mode, func(t *testing.T) {
			st, err := Open(ctx, withMode(t, dsn, mode), store.Config{})
			if err == nil {
				st.Close()
				t.Fatal("Open through the pooler succeeded; want ErrPoolerExecMode")
			}
			if !errors.Is(err, ErrPoolerExecMode) || !strings.Contains(err.Error(), "add default_query_exec_mode=cache_describe to the URL") {
				t.Fatalf("Open = %v; want ErrPoolerExecMode, naming the setting", err)
			}
			t.Log(err)
		})
	}
	t.Run("nothing created", func(t *testing.T) {
		conn := connect(t, dsn)
		defer conn.Close(ctx)
		if v, err := simpleQuery(ctx, conn, "SELECT to_regclass('schema_version') IS NULL"); err != nil || v != "t" {
			t.Errorf("schema_version missing = %q, %v; want t: a refused Open migrates nothing", v, err)
		}
	})
	for _, mode := range []string{"cache_describe", "exec", "simple_protocol"} {
		t.Run("opened/"+mode, func(t *testing.T) {
			st, err := Open(ctx, withMode(t, dsn, mode), store.Config{})
			if err != nil {
				t.Fatal(err)
			}
			if err := st.Close(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// A connection straight to the server is never taken for a pooler, in any exec mode, and
// checkPooler takes one round trip there; through the pooler, every connection is.
func TestBehindPooler(t *testing.T) {
	if !pgtest.Enabled() {
		t.Skipf("$%s is not set: needs PostgreSQL", pgtest.Env)
	}
	ctx := context.Background()
	direct, drop, err := pgtest.NewSchema(ctx, os.Getenv(pgtest.Env))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := drop(); err != nil {
			t.Error(err)
		}
	})
	for _, mode := range []string{"", "cache_statement", "describe_exec", "cache_describe"} {
		t.Run("direct/"+mode, func(t *testing.T) {
			dsn := withMode(t, direct, mode)
			for range 5 { // a new server process each time
				conn := connect(t, dsn)
				pooled, err := behindPooler(ctx, conn)
				conn.Close(ctx)
				if err != nil || pooled {
					t.Fatalf("behindPooler = %v, %v on a direct connection; want false", pooled, err)
				}
			}
			start := time.Now()
			st, err := Open(ctx, dsn, store.Config{MaxConns: 2})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("Open took %v", time.Since(start))
			st.Close()
		})
	}

	pooler := os.Getenv(pgtest.PoolerEnv)
	if pooler == "" {
		return
	}
	t.Run("pooler", func(t *testing.T) {
		for range 5 {
			conn := connect(t, pooler)
			pooled, err := behindPooler(ctx, conn)
			conn.Close(ctx)
			if err != nil || !pooled {
				t.Fatalf("behindPooler = %v, %v through $%s; want true", pooled, err, pgtest.PoolerEnv)
			}
		}
	})
}
