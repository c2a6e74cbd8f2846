package payments_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	_ "modernc.org/sqlite" // the "sqlite" driver, to look inside the store's file

	"github.com/platform-payments/payments"
	"github.com/platform-payments/payments/internal/pgtest"
)

// Helpers shared by the tests of the root package.

// mustOpen opens a service on a new database and closes it when the test ends: a file in
// a temporary directory (never :memory:, which gives each pooled connection its own
// database), or a schema of its own when $PAYMENTS_TEST_POSTGRES names a PostgreSQL
// database. At most one Options may be given.
func mustOpen(tb testing.TB, opts ...payments.Options) *payments.Service {
	tb.Helper()
	return mustOpenFile(tb, newDSN(tb), opts...)
}

// newDSN returns where a new database of the test goes: a file path, or a PostgreSQL
// schema's DSN.
func newDSN(tb testing.TB) string {
	tb.Helper()
	if pgtest.Enabled() {
		return pgtest.DSN(tb)
	}
	return filepath.Join(tb.TempDir(), "payments.db")
}

// sqliteOnly skips a test of what only the SQLite engine has (its file, its committer)
// on a PostgreSQL run.
func sqliteOnly(tb testing.TB) {
	tb.Helper()
	if pgtest.Enabled() {
		tb.Skip("SQLite engine only")
	}
}

// mustOpenFile is mustOpen on a database of the caller's choice (newDSN's), for tests that
// look inside it or open it again.
func mustOpenFile(tb testing.TB, path string, opts ...payments.Options) *payments.Service {
	tb.Helper()
	if len(opts) > 1 {
		tb.Fatalf("mustOpen: %d Options, want at most one", len(opts))
	}
	var o payments.Options
	if len(opts) == 1 {
		o = opts[0]
	}
	if o.KeyFile == "" && len(o.DataKeys) == 0 {
		o.KeyFile = pgtest.KeyFile(path) // "" (the default) but for a PostgreSQL schema
	}
	svc, err := payments.Open(context.Background(), path, o)
	if err != nil {
		tb.Fatalf("open %s: %v", path, err)
	}
	tb.Cleanup(func() {
		if err := svc.Close(); err != nil { // Close is idempotent: a test may close first
			tb.Errorf("close %s: %v", path, err)
		}
	})
	return svc
}

// mustPlatform creates a platform of the service's environment.
func mustPlatform(tb testing.TB, svc *payments.Service) payments.PlatformCredentials {
	tb.Helper()
	p, err := svc.CreatePlatform(context.Background(), "Test platform", "")
	if err != nil {
		tb.Fatalf("create platform: %v", err)
	}
	return p
}

// mustUser creates a user of the platform with the given email.
func mustUser(tb testing.TB, svc *payments.Service, platformID uuid.UUID, name, email string) payments.User {
	tb.Helper()
	u, err := svc.CreateUser(context.Background(), platformID, payments.NewUser{Name: name, Email: &email})
	if err != nil {
		tb.Fatalf("create user %s: %v", email, err)
	}
	return u
}

func ptr[T any](v T) *T { return &v }

// decoded decodes a JSON body of the named request into a T: the value a client's body
// makes, which an operation validates as any other (the HTTP layer calls the operation
// through the service Decoded scopes instead).
func decoded[T any](tb testing.TB, svc *payments.Service, schema string, req payments.Request) T {
	tb.Helper()
	var in T
	if err := svc.Decode(schema, req, &in); err != nil {
		tb.Fatalf("Decode %s %s: %v", schema, req.Body, err)
	}
	return in
}

// rawDB opens the database directly, to check what the service stored. Its queries are
// written for both engines, with $1, $2... for arguments.
func rawDB(tb testing.TB, path string) *sql.DB {
	tb.Helper()
	driver, dsn := "sqlite", "file:"+path+"?_pragma=busy_timeout(10000)"
	if pgtest.Enabled() {
		driver, dsn = "pgx", path
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

// queryInt runs a query returning one integer.
func queryInt(tb testing.TB, db *sql.DB, query string, args ...any) int64 {
	tb.Helper()
	var n int64
	if err := db.QueryRow(query, args...).Scan(&n); err != nil {
		tb.Fatalf("%s: %v", query, err)
	}
	return n
}

// fixedClock returns a clock standing at t until it is moved with the returned setter.
func fixedClock(t time.Time) (now func() time.Time, set func(time.Time)) {
	var cur atomic.Pointer[time.Time]
	cur.Store(&t)
	return func() time.Time { return *cur.Load() }, func(t time.Time) { cur.Store(&t) }
}

// counterIDs returns an id generator producing ffffffff-0000-0000-0000-000000000001, ...2,
// and so on: easy to recognise, safe for concurrent use.
func counterIDs() func() uuid.UUID {
	var n atomic.Uint64
	return func() uuid.UUID {
		id := uuid.UUID{0: 0xff, 1: 0xff, 2: 0xff, 3: 0xff}
		v := n.Add(1)
		for i := 15; i >= 8; i-- {
			id[i] = byte(v)
			v >>= 8
		}
		return id
	}
}

// canonicalJSON encodes v, decodes it into plain values and encodes it again, so that two
// values compare equal when their JSON means the same (10, 10.0 and 1e1 alike; map keys
// in any order).
func canonicalJSON(tb testing.TB, v any) string {
	tb.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		tb.Fatalf("encode %#v: %v", v, err)
	}
	var plain any
	if err := json.Unmarshal(raw, &plain); err != nil {
		tb.Fatalf("decode %s: %v", raw, err)
	}
	out, err := json.Marshal(plain)
	if err != nil {
		tb.Fatal(err)
	}
	return string(out)
}

// errorOf asserts err is an *payments.Error of the given code and returns it.
func errorOf(tb testing.TB, err error, code payments.Code) *payments.Error {
	tb.Helper()
	var e *payments.Error
	if !errors.As(err, &e) {
		tb.Fatalf("error = %v (%T), want a *payments.Error with code %q", err, err, code)
	}
	if e.Code != code {
		tb.Fatalf("code = %q (%v), want %q", e.Code, e, code)
	}
	if got := payments.ErrorCode(err); got != code {
		tb.Fatalf("ErrorCode = %q, want %q", got, code)
	}
	return e
}
