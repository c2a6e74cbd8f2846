package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/platform-payments/payments/internal/pgtest"
)

func TestBench(t *testing.T) {
	t.Setenv(envDB, "") // -baseline's write is the SQLite writer's, whatever the environment
	db := tempDB(t)
	r := runT(t, "", "platform", "create", "-db", db, "-name", "Acme")
	var creds struct {
		PlatformID string `json:"platform_id"`
		Secret     string `json:"secret"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &creds); err != nil || r.code != 0 {
		t.Fatalf("platform create: %+v %v", r, err)
	}
	addr, _, stop := serve(t, "-db", db, "-addr", "127.0.0.1:0", "-rate-limit", "0")
	defer stop()

	for _, op := range []string{"create", "get", "list"} {
		t.Run(op, func(t *testing.T) {
			r := runT(t, "", "bench", "-url", "http://"+addr, "-platform", creds.PlatformID, "-secret", creds.Secret,
				"-op", op, "-c", "4", "-d", "300ms", "-baseline", "-baseline-dir", t.TempDir())
			if r.code != 0 {
				t.Fatalf("exit status %d: %s %s", r.code, r.stdout, r.stderr)
			}
			lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
			base := regexp.MustCompile(`^bare net/http: \d+ requests/s, p50 \S+, p99 \S+, slowest \S+, \d+ requests \(200: \d+\)$`)
			ratio := regexp.MustCompile(`^` + op + `: \d+\.\d\d of the bare server's requests a second$`)
			if op == "create" {
				base = regexp.MustCompile(`^raw SQLite writer: \d+ transactions/s, p50 \S+, p99 \S+, slowest \S+, \d+ transactions$`)
				ratio = regexp.MustCompile(`^create: \d+\.\d\d of the raw writer's transactions a second$`)
			}
			want := []*regexp.Regexp{
				base,
				regexp.MustCompile(`^` + op + `: \d+ requests/s, p50 \S+, p99 \S+, slowest \S+, \d+ requests \(200: \d+\)$`),
				ratio,
			}
			if len(lines) != len(want) {
				t.Fatalf("output:\n%s", r.stdout)
			}
			for i, re := range want {
				if !re.MatchString(lines[i]) {
					t.Errorf("line %d: %q, want %s", i+1, lines[i], re)
				}
			}
		})
	}

	t.Run("ErrUsage", func(t *testing.T) {
		for _, args := range [][]string{
			{"bench"},
			{"bench", "-url", "http://" + addr, "-platform", creds.PlatformID},
			{"bench", "-url", "http://" + addr, "-platform", creds.PlatformID, "-secret", "s", "-op", "delete"},
			{"bench", "-url", "http://" + addr, "-platform", creds.PlatformID, "-secret", "s", "-c", "0"},
			{"bench", "-url", "ftp://x", "-platform", creds.PlatformID, "-secret", "s"},
			{"bench", "-url", "http://" + addr, "-platform", creds.PlatformID, "-secret", "s", "-op", "create",
				"-baseline-db", "postgres://u@127.0.0.1:1/db"}, // without -baseline
			{"bench", "-url", "http://" + addr, "-platform", creds.PlatformID, "-secret", "s", "-op", "create",
				"-baseline", "-baseline-db", db},
			{"bench", "-url", "http://" + addr, "-platform", creds.PlatformID, "-secret", "s", "-op", "create",
				"-baseline", "-baseline-db", "mysql://u:pw@127.0.0.1:1/db"},
			{"bench", "-url", "http://" + addr, "-platform", creds.PlatformID, "-secret", "s", "-op", "create",
				"-baseline", "-baseline-db", "postgres://u:pw@127.0.0.1:1/%zz"},
		} {
			r := runT(t, "", args...)
			if r.code != 2 {
				t.Errorf("%q: exit status %d, want 2 (%s)", args, r.code, r.stderr)
			}
			if strings.Contains(r.stderr, "pw") {
				t.Errorf("%q: stderr %q shows the password", args, r.stderr)
			}
		}
		t.Setenv(envDB, "postgres://u:pw@127.0.0.1:1/%zz")
		r := runT(t, "", "bench", "-url", "http://"+addr, "-platform", creds.PlatformID, "-secret", "s", "-op", "create", "-baseline")
		if r.code != 2 || !strings.Contains(r.stderr, "$"+envDB) || strings.Contains(r.stderr, "pw") {
			t.Errorf("$%s not a URL: %+v, want exit status 2 naming the variable, not its password", envDB, r)
		}
	})
}

// TestBenchPostgresBaseline: with -baseline-db (or $PAYMENTS_DB), a write is compared
// with raw writers on the server's PostgreSQL database, as many as the clients, in a schema
// of their own that is gone afterwards, also when bench is interrupted.
func TestBenchPostgresBaseline(t *testing.T) {
	if !pgtest.Enabled() {
		t.Skipf("needs PostgreSQL: set $%s", pgtest.Env)
	}
	t.Setenv(envDB, "")
	dsn := pgtest.DSN(t)
	keyFile := pgtest.KeyFile(dsn)
	if r := runT(t, "", "keys", "generate", "-out", keyFile); r.code != 0 {
		t.Fatalf("keys generate: %+v", r)
	}
	r := runT(t, "", "platform", "create", "-db", dsn, "-data-key-file", keyFile, "-name", "Acme")
	var creds struct {
		PlatformID string `json:"platform_id"`
		Secret     string `json:"secret"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &creds); err != nil || r.code != 0 {
		t.Fatalf("platform create: %+v %v", r, err)
	}
	addr, _, stop := serve(t, "-db", dsn, "-data-key-file", keyFile, "-addr", "127.0.0.1:0", "-rate-limit", "0")
	defer stop()
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	bench := []string{"bench", "-url", "http://" + addr, "-platform", creds.PlatformID, "-secret", creds.Secret,
		"-op", "create", "-c", "4", "-baseline"}
	lax := regexp.MustCompile(`^(paymentsd bench: the raw PostgreSQL writers' commits are not durable: the database runs with \S+(, \S+)?\n)?$`)

	t.Run("OK", func(t *testing.T) {
		w := watchBenchSchemas(t, db)
		r := runT(t, "", append(bench, "-d", "1s", "-baseline-db", dsn)...)
		seen := w.stop()
		if r.code != 0 {
			t.Fatalf("exit status %d: %s %s", r.code, r.stdout, r.stderr)
		}
		want := []*regexp.Regexp{
			regexp.MustCompile(`^raw PostgreSQL writers \(4\): \d+ transactions/s, p50 \S+, p99 \S+, slowest \S+, [1-9]\d* transactions$`),
			regexp.MustCompile(`^create: \d+ requests/s, p50 \S+, p99 \S+, slowest \S+, \d+ requests \(200: \d+\)$`),
			regexp.MustCompile(`^create: \d+\.\d\d of the raw writers' transactions a second$`),
		}
		lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
		if len(lines) != len(want) {
			t.Fatalf("output:\n%s", r.stdout)
		}
		for i, re := range want {
			if !re.MatchString(lines[i]) {
				t.Errorf("line %d: %q, want %s", i+1, lines[i], re)
			}
		}
		if !lax.MatchString(r.stderr) {
			t.Errorf("stderr %q", r.stderr)
		}
		if len(seen) != 1 {
			t.Fatalf("schemas seen while bench ran: %v, want one", seen)
		}
		for schema, rows := range seen {
			if rows[0] == 0 || rows[0] != rows[1] || rows[1] != rows[2] {
				t.Errorf("%s: rows of a, b and c %v, want as many in each, some", schema, rows)
			}
		}
		wantNoBenchSchema(t, db)
	})

	t.Run("Interrupted", func(t *testing.T) {
		t.Setenv(envDB, dsn) // the variable instead of the flag
		w := watchBenchSchemas(t, db)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var stdout, stderr bytes.Buffer
		done := make(chan int, 1)
		go func() { done <- run(ctx, append(bench, "-d", "1m"), strings.NewReader(""), &stdout, &stderr) }()
		for !w.committed() {
			select {
			case code := <-done:
				t.Fatalf("bench ended (%d) before its writers committed: %s %s", code, &stdout, &stderr)
			case <-time.After(20 * time.Millisecond):
			}
		}
		cancel() // as SIGINT would
		select {
		case code := <-done:
			if code != 1 || stdout.Len() != 0 {
				t.Errorf("exit status %d, stdout %q, want 1 and nothing", code, &stdout)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("bench did not stop")
		}
		w.stop()
		wantNoBenchSchema(t, db)
	})
}

// benchSchemas watches the schemas raw PostgreSQL writers make, and the rows of their
// tables.
type benchSchemas struct {
	done chan struct{}
	once sync.Once
	wg   sync.WaitGroup
	mu   sync.Mutex
	seen map[string][3]int // the most rows seen in tables a, b and c
}

// watchBenchSchemas looks at db's bench schemas every few milliseconds until stop, or
// the end of t.
func watchBenchSchemas(t *testing.T, db *sql.DB) *benchSchemas {
	t.Helper()
	wantNoBenchSchema(t, db)
	w := &benchSchemas{done: make(chan struct{}), seen: map[string][3]int{}}
	w.wg.Go(func() {
		for {
			select {
			case <-w.done:
				return
			case <-time.After(10 * time.Millisecond):
			}
			for _, schema := range benchSchemaNames(t, db) {
				var rows [3]int
				// One statement, one snapshot: the three counts of the same commits. An error
				// is the schema dropped meanwhile.
				err := db.QueryRow(fmt.Sprintf("SELECT (SELECT count(*) FROM %[1]s.a), (SELECT count(*) FROM %[1]s.b), (SELECT count(*) FROM %[1]s.c)",
					schema)).Scan(&rows[0], &rows[1], &rows[2])
				w.mu.Lock()
				if err == nil && rows[0] >= w.seen[schema][0] {
					w.seen[schema] = rows
				}
				w.mu.Unlock()
			}
		}
	})
	t.Cleanup(func() { w.stop() })
	return w
}

// committed reports whether a schema was seen with rows.
func (w *benchSchemas) committed() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, rows := range w.seen {
		if rows[0] > 0 {
			return true
		}
	}
	return false
}

// stop ends the watch and returns the schemas seen.
func (w *benchSchemas) stop() map[string][3]int {
	w.once.Do(func() { close(w.done) })
	w.wg.Wait()
	return w.seen
}

// benchSchemaNames returns the schemas of raw PostgreSQL writers in db.
func benchSchemaNames(t *testing.T, db *sql.DB) []string {
	rows, err := db.Query(`SELECT nspname FROM pg_namespace WHERE starts_with(nspname, $1)`, pgSchemaPrefix)
	if err != nil {
		t.Error(err)
		return nil
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Error(err)
		}
		names = append(names, name)
	}
	return names
}

func wantNoBenchSchema(t *testing.T, db *sql.DB) {
	t.Helper()
	if names := benchSchemaNames(t, db); len(names) > 0 {
		t.Errorf("schemas of raw writers in the database: %v, want none", names)
	}
}
