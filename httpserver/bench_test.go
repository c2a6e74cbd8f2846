package httpserver_test

import (
	"bytes"
	"context"
	"database/sql"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/platform-payments/payments"
	"github.com/platform-payments/payments/httpserver"
	"github.com/platform-payments/payments/internal/cpuclock"
	"github.com/platform-payments/payments/internal/pgtest"
)

// Benchmarks of the users operations, each through the library and through the HTTP
// handler (the real request pipeline, driven in-process with signed requests), on a store
// holding benchUsers users of one platform.
//
//	go test -run '^$' -bench . -benchtime 2000x ./httpserver

// benchUsers is how many users the benchmark store holds: 100,000 unless -bench-users says
// otherwise, e.g. a million for List Users' deepest page:
//
//	go test -run '^$' -bench ListUsers -bench-users 1000000 ./httpserver
var benchUsers = 100_000

func init() {
	flag.IntVar(&benchUsers, "bench-users", benchUsers, "users in the benchmark store")
}

// unlimited turns the rate limit and the failure throttle off: the benchmarks send far
// more than a platform may, and measure what the rest of the pipeline costs.
// BenchmarkLimits measures the limits.
var unlimited = httpserver.Options{RateLimit: -1, AuthFailures: -1}

// benchStore is the seeded database, built once per process: creating 100,000 users through
// CreateUser costs one fsynced transaction each, so the template is written with direct SQL
// in one transaction, row for row what CreateUser writes, and kept in memory as the file's
// bytes; each benchmark starts from its own copy.
type benchStore struct {
	image    []byte           // the database file
	key      payments.DataKey // its data key
	platform payments.PlatformCredentials
	userIDs  []string // by seq
}

var (
	benchSeedOnce sync.Once
	benchSeed     *benchStore
	benchSeedErr  error
)

// benchEngines runs fn as a sub-benchmark for each engine, side by side in one run:
// "sqlite", and "postgres" when $PAYMENTS_TEST_POSTGRES names a database. Each gets a
// service on a fresh store holding the same benchUsers users.
func benchEngines(b *testing.B, fn func(b *testing.B, svc *payments.Service, st *benchStore)) {
	b.Run("sqlite", func(b *testing.B) {
		svc, st := openBenchStore(b)
		fn(b, svc, st)
	})
	if pgtest.Enabled() {
		b.Run("postgres", func(b *testing.B) {
			svc, st := openPostgresBenchStore(b)
			fn(b, svc, st)
		})
	}
}

// openBenchStore opens a service on a fresh copy of the seeded store.
func openBenchStore(b *testing.B) (*payments.Service, *benchStore) {
	b.Helper()
	benchSeedOnce.Do(func() {
		start := time.Now()
		benchSeed, benchSeedErr = buildBenchStore(context.Background())
		if benchSeedErr == nil {
			b.Logf("seeded %d users (%d MiB) in %v", benchUsers, len(benchSeed.image)>>20, time.Since(start).Round(time.Millisecond))
		}
	})
	if benchSeedErr != nil {
		b.Fatal(benchSeedErr)
	}
	path := filepath.Join(b.TempDir(), "payments.db")
	if err := os.WriteFile(path, benchSeed.image, 0o600); err != nil {
		b.Fatal(err)
	}
	svc, err := payments.Open(context.Background(), path, payments.Options{DataKeys: []payments.DataKey{benchSeed.key}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { svc.Close() })
	return svc, benchSeed
}

func buildBenchStore(ctx context.Context) (*benchStore, error) {
	dir, err := os.MkdirTemp("", "payments-bench")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "template.db")

	// The schema and the platform come from the library itself.
	key := payments.NewDataKey()
	svc, err := payments.Open(ctx, path, payments.Options{DataKeys: []payments.DataKey{key}})
	if err != nil {
		return nil, err
	}
	platform, err := svc.CreatePlatform(ctx, "Bench platform", payments.Sandbox)
	if err != nil {
		svc.Close()
		return nil, err
	}
	if err := svc.Close(); err != nil {
		return nil, err
	}

	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)&_pragma=synchronous(OFF)")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)

	st := &benchStore{key: key, platform: platform, userIDs: make([]string, benchUsers)}
	rng := rand.NewChaCha8([32]byte{}) // random-looking v4 UUIDs, the same every run
	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	const layout = "2006-01-02T15:04:05.000000Z" // the library's stored form

	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	insertUser, err := tx.PrepareContext(ctx, `INSERT INTO users
		(id, platform_id, pw_id, name, email, email_key, phone_country_code, phone, created_at)
		VALUES (?, ?, ?, ?, ?, ?, NULL, NULL, ?)`)
	if err != nil {
		return nil, err
	}
	insertWallet, err := tx.PrepareContext(ctx, `INSERT INTO wallets (id, user_id, currency, balance, created_at)
		VALUES (?, ?, 'USD', '0', ?)`)
	if err != nil {
		return nil, err
	}
	insertSettings, err := tx.PrepareContext(ctx, `INSERT INTO user_settings
		(user_id, currency, timezone, language, notifications_enabled, two_factor_enabled, created_at)
		VALUES (?, 'USD', 'UTC', 'en', 1, 0, ?)`)
	if err != nil {
		return nil, err
	}
	for seq := 1; seq <= benchUsers; seq++ {
		id, err := uuid.NewRandomFromReader(rng)
		if err != nil {
			return nil, err
		}
		wallet, err := uuid.NewRandomFromReader(rng)
		if err != nil {
			return nil, err
		}
		created := start.Add(time.Duration(seq) * time.Millisecond).Format(layout)
		email := fmt.Sprintf("User%06d@Example.com", seq)
		emailKey := fmt.Sprintf("user%06d@example.com", seq)
		if _, err := insertUser.ExecContext(ctx, id.String(), platform.PlatformID.String(), seq,
			fmt.Sprintf("User %06d", seq), email, emailKey, created); err != nil {
			return nil, err
		}
		if _, err := insertWallet.ExecContext(ctx, wallet.String(), id.String(), created); err != nil {
			return nil, err
		}
		if _, err := insertSettings.ExecContext(ctx, id.String(), created); err != nil {
			return nil, err
		}
		st.userIDs[seq-1] = id.String()
	}
	if _, err := tx.ExecContext(ctx, `UPDATE platforms SET user_count = ? WHERE id = ?`,
		benchUsers, platform.PlatformID.String()); err != nil {
		return nil, err
	}
	if err := tx.Commit(); err != nil {
		return nil, err
	}
	// Everything into the main file, so that its bytes alone are the whole store.
	if _, err := db.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		return nil, err
	}
	if err := db.Close(); err != nil {
		return nil, err
	}
	if st.image, err = os.ReadFile(path); err != nil {
		return nil, err
	}
	return st, nil
}

// openPostgresBenchStore opens a service on a new PostgreSQL schema holding the seeded
// store's users (the same ids, names, emails and times), written with one statement a
// table from arrays.
func openPostgresBenchStore(b *testing.B) (*payments.Service, *benchStore) {
	b.Helper()
	_, seed := openBenchStore(b) // the SQLite seed: its ids, key and the sequence they follow
	ctx := context.Background()
	dsn := pgtest.DSN(b)
	svc, err := payments.Open(ctx, dsn, payments.Options{DataKeys: []payments.DataKey{seed.key}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { svc.Close() })
	platform, err := svc.CreatePlatform(ctx, "Bench platform", payments.Sandbox)
	if err != nil {
		b.Fatal(err)
	}
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	n := len(seed.userIDs)
	ids, wallets, names, emails, keys, created := make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		seq := i + 1
		ids[i], wallets[i] = seed.userIDs[i], uuid.NewString()
		names[i] = fmt.Sprintf("User %06d", seq)
		emails[i], keys[i] = fmt.Sprintf("User%06d@Example.com", seq), fmt.Sprintf("user%06d@example.com", seq)
		created[i] = start.Add(time.Duration(seq) * time.Millisecond).Format("2006-01-02T15:04:05.000000Z")
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer tx.Rollback()
	for _, stmt := range []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO users (id, platform_id, pw_id, name, email, email_key, phone_country_code, phone, created_at)
			SELECT u.id::uuid, $1, u.seq, u.name, u.email, u.key, NULL, NULL, u.created::timestamptz
			FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[]) WITH ORDINALITY AS u(id, name, email, key, created, seq)`,
			[]any{platform.PlatformID.String(), ids, names, emails, keys, created}},
		{`INSERT INTO wallets (id, user_id, currency, balance, created_at)
			SELECT w.id::uuid, w.user_id::uuid, 'USD', 0, w.created::timestamptz FROM unnest($1::text[], $2::text[], $3::text[]) AS w(id, user_id, created)`,
			[]any{wallets, ids, created}},
		{`INSERT INTO user_settings (user_id, currency, timezone, language, notifications_enabled, two_factor_enabled, created_at)
			SELECT s.user_id::uuid, 'USD', 'UTC', 'en', true, false, s.created::timestamptz FROM unnest($1::text[], $2::text[]) AS s(user_id, created)`,
			[]any{ids, created}},
		{`UPDATE platforms SET user_count = $1 WHERE id = $2`, []any{n, platform.PlatformID.String()}},
	} {
		if _, err := tx.ExecContext(ctx, stmt.sql, stmt.args...); err != nil {
			b.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "ANALYZE"); err != nil {
		b.Fatal(err)
	}
	return svc, &benchStore{key: seed.key, platform: platform, userIDs: seed.userIDs}
}

// benchClient signs and sends requests to the handler as a platform would.
type benchClient struct {
	h        http.Handler
	platform payments.PlatformCredentials
}

func (c benchClient) do(b *testing.B, method, target string, body []byte, signature string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, target, bytes.NewReader(body))
	req.Header.Set(payments.HeaderPlatformID, c.platform.PlatformID.String())
	req.Header.Set(payments.HeaderSignature, signature)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	rec := httptest.NewRecorder()
	c.h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		b.Fatalf("%s %s: %d %s", method, target, rec.Code, rec.Body)
	}
	return rec
}

func reportThroughput(b *testing.B) {
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
}

// reportCPU reports the CPU time the process has used since since (cpuclock.Process) per op, the
// garbage collector's included: on a shared machine, a steadier figure than ns/op.
func reportCPU(b *testing.B, since time.Duration) {
	if since > 0 {
		b.ReportMetric(float64(cpuclock.Process()-since)/float64(b.N), "cpu-ns/op")
	}
}

func BenchmarkCreateUser(b *testing.B) {
	benchEngines(b, func(b *testing.B, svc *payments.Service, st *benchStore) {
		ctx := context.Background()
		client := benchClient{h: httpserver.NewWithOptions(svc, nil, unlimited), platform: st.platform}
		created := 0 // across runs of both sub-benchmarks: every email is new

		b.Run("library", func(b *testing.B) {
			emails := make([]string, b.N)
			for i := range emails {
				created++
				emails[i] = fmt.Sprintf("bench%d@example.com", created)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				if _, err := svc.CreateUser(ctx, st.platform.PlatformID, payments.NewUser{Name: "Bench User", Email: &emails[i]}); err != nil {
					b.Fatal(err)
				}
			}
			reportThroughput(b)
		})

		b.Run("handler", func(b *testing.B) {
			const target = "/api/platform/users/create"
			bodies := make([][]byte, b.N)
			signatures := make([]string, b.N)
			for i := range bodies {
				created++
				bodies[i] = fmt.Appendf(nil, `{"name":"Bench User","email":"bench%d@example.com","phone_country_code":"+44","phone":"2079460000"}`, created)
				signatures[i] = payments.Sign(st.platform.Secret, http.MethodPost, target, bodies[i])
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				client.do(b, http.MethodPost, target, bodies[i], signatures[i])
			}
			reportThroughput(b)
		})
	})
}

// BenchmarkCreateUserParallel is BenchmarkCreateUser with benchClients callers at once,
// as a loaded server sees them: what group commit is for. It reports the latency each
// caller saw too (p50, p99).
//
//	go test -run '^$' -bench CreateUserParallel -benchtime 20000x ./httpserver
func BenchmarkCreateUserParallel(b *testing.B) {
	benchEngines(b, func(b *testing.B, svc *payments.Service, st *benchStore) {
		client := benchClient{h: httpserver.NewWithOptions(svc, nil, unlimited), platform: st.platform}
		var created atomic.Int64 // across runs of both sub-benchmarks: every email is new
		ctx := context.Background()

		b.Run("library", func(b *testing.B) {
			runClients(b, func() {
				email := fmt.Sprintf("par%d@example.com", created.Add(1))
				if _, err := svc.CreateUser(ctx, st.platform.PlatformID, payments.NewUser{Name: "Bench User", Email: &email}); err != nil {
					b.Error(err)
				}
			})
		})

		b.Run("handler", func(b *testing.B) {
			const target = "/api/platform/users/create"
			runClients(b, func() {
				body := fmt.Appendf(nil, `{"name":"Bench User","email":"par%d@example.com","phone_country_code":"+44","phone":"2079460000"}`, created.Add(1))
				client.do(b, http.MethodPost, target, body, payments.Sign(st.platform.Secret, http.MethodPost, target, body))
			})
		})
	})
}

// benchClients is how many callers the parallel benchmarks run at once.
const benchClients = 50

// runClients runs op b.N times from benchClients goroutines and reports the throughput, the
// CPU per op and the p50 and p99 of op's latency.
func runClients(b *testing.B, op func()) {
	b.SetParallelism((benchClients + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
	var mu sync.Mutex
	var all []time.Duration
	b.ReportAllocs()
	cpu := cpuclock.Process()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		var mine []time.Duration
		for pb.Next() {
			start := time.Now()
			op()
			mine = append(mine, time.Since(start))
		}
		mu.Lock()
		all = append(all, mine...)
		mu.Unlock()
	})
	b.StopTimer()
	reportThroughput(b)
	reportCPU(b, cpu)
	slices.Sort(all)
	if len(all) > 0 {
		b.ReportMetric(float64(all[len(all)/2].Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(all[len(all)*99/100].Microseconds())/1000, "p99-ms")
	}
}

func BenchmarkGetUser(b *testing.B) {
	benchEngines(b, func(b *testing.B, svc *payments.Service, st *benchStore) {
		ctx := context.Background()
		client := benchClient{h: httpserver.NewWithOptions(svc, nil, unlimited), platform: st.platform}
		// Users picked all over the store, not one hot row.
		pick := func(i int) string { return st.userIDs[(i*7919)%len(st.userIDs)] }

		b.Run("library", func(b *testing.B) {
			b.ReportAllocs()
			for i := range b.N {
				if _, err := svc.GetUser(ctx, st.platform.PlatformID, pick(i)); err != nil {
					b.Fatal(err)
				}
			}
			reportThroughput(b)
		})

		// handler: the access log discarded (a nil logger); handler-log: written, as JSON
		// lines as serve writes them (JSONLogHandler), to io.Discard, which is what the
		// access log costs beside the handler.
		logged := benchClient{h: httpserver.NewWithOptions(svc, slog.New(httpserver.JSONLogHandler(io.Discard, slog.LevelInfo)), unlimited), platform: st.platform}
		for _, bc := range []struct {
			name   string
			client benchClient
		}{{"handler", client}, {"handler-log", logged}} {
			b.Run(bc.name, func(b *testing.B) {
				n := min(b.N, len(st.userIDs))
				targets := make([]string, n)
				signatures := make([]string, n)
				for i := range n {
					targets[i] = "/api/platform/users/get/" + pick(i)
					signatures[i] = payments.Sign(st.platform.Secret, http.MethodGet, targets[i], nil)
				}
				b.ReportAllocs()
				b.ResetTimer()
				for i := range b.N {
					bc.client.do(b, http.MethodGet, targets[i%n], nil, signatures[i%n])
				}
				reportThroughput(b)
			})
		}

		// served: the handler as paymentsd serve runs it (the default limits, the JSON
		// access log), with nothing of the test's own per request: each request is made
		// once and sent again, and its answer discarded, so that allocs/op are the
		// handler's alone, what a request costs beyond what net/http costs a bare server.
		b.Run("served", func(b *testing.B) {
			h := httpserver.NewWithOptions(svc, slog.New(httpserver.JSONLogHandler(io.Discard, slog.LevelInfo)), httpserver.Options{})
			const n = 1000
			reqs := make([]*http.Request, n)
			for i := range reqs {
				target := "/api/platform/users/get/" + pick(i)
				reqs[i] = httptest.NewRequest(http.MethodGet, target, nil)
				reqs[i].Header.Set(payments.HeaderPlatformID, st.platform.PlatformID.String())
				reqs[i].Header.Set(payments.HeaderSignature, payments.Sign(st.platform.Secret, http.MethodGet, target, nil))
			}
			w := &discardWriter{header: http.Header{}}
			for _, r := range reqs { // every user read once: the timed reads are warm
				if h.ServeHTTP(w.reset(), r); w.status != http.StatusOK {
					b.Fatalf("%s: %d", r.RequestURI, w.status)
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			cpu := cpuclock.Process()
			for i := range b.N {
				h.ServeHTTP(w.reset(), reqs[i%n])
			}
			b.StopTimer()
			if w.status != http.StatusOK {
				b.Fatalf("status %d", w.status)
			}
			reportThroughput(b)
			reportCPU(b, cpu)
		})
	})
}

// discardWriter is a ResponseWriter that keeps the status and discards the body.
type discardWriter struct {
	header http.Header
	status int
}

// reset readies w for the next request: its headers cleared, no status yet.
func (w *discardWriter) reset() *discardWriter {
	clear(w.header)
	w.status = 0
	return w
}

func (w *discardWriter) Header() http.Header { return w.header }

func (w *discardWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}

func (w *discardWriter) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return len(p), nil
}

// BenchmarkGetUserParallel is BenchmarkGetUser with benchClients callers at once, each
// reading users all over the store.
//
//	go test -run '^$' -bench GetUserParallel -benchtime 50000x ./httpserver
func BenchmarkGetUserParallel(b *testing.B) {
	benchEngines(b, func(b *testing.B, svc *payments.Service, st *benchStore) {
		ctx := context.Background()
		client := benchClient{h: httpserver.NewWithOptions(svc, nil, unlimited), platform: st.platform}
		const n = 1000
		targets, signatures := make([]string, n), make([]string, n)
		for i := range n {
			targets[i] = "/api/platform/users/get/" + st.userIDs[(i*7919)%len(st.userIDs)]
			signatures[i] = payments.Sign(st.platform.Secret, http.MethodGet, targets[i], nil)
		}
		var next atomic.Int64
		b.Run("library", func(b *testing.B) {
			runClients(b, func() {
				i := int(next.Add(1) % n)
				if _, err := svc.GetUser(ctx, st.platform.PlatformID, targets[i][len("/api/platform/users/get/"):]); err != nil {
					b.Error(err)
				}
			})
		})
		b.Run("handler", func(b *testing.B) {
			runClients(b, func() {
				i := int(next.Add(1) % n)
				client.do(b, http.MethodGet, targets[i], nil, signatures[i])
			})
		})
	})
}

func BenchmarkListUsers(b *testing.B) {
	benchEngines(b, func(b *testing.B, svc *payments.Service, st *benchStore) {
		ctx := context.Background()
		client := benchClient{h: httpserver.NewWithOptions(svc, nil, unlimited), platform: st.platform}
		const target = "/api/platform/users/list"

		// The first page and the last (page 50,000 of a million users), 20 rows each.
		const rows = 20
		for _, page := range []int{1, benchUsers / rows} {
			params := payments.ListUsersParams{RowsPerPage: rows, PageNo: page}
			// The page is the right one before it is timed.
			got, err := svc.ListUsers(ctx, st.platform.PlatformID, params)
			if err != nil {
				b.Fatal(err)
			}
			if len(got.Records) != rows || got.TotalRecords != int64(benchUsers) || got.Records[0].UserID.String() != st.userIDs[(page-1)*rows] {
				b.Fatalf("page %d: %d records of %d, first %s", page, len(got.Records), got.TotalRecords, got.Records[0].UserID)
			}

			b.Run(fmt.Sprintf("library/page%d", page), func(b *testing.B) {
				b.ReportAllocs()
				for range b.N {
					if _, err := svc.ListUsers(ctx, st.platform.PlatformID, params); err != nil {
						b.Fatal(err)
					}
				}
				reportThroughput(b)
			})

			b.Run(fmt.Sprintf("handler/page%d", page), func(b *testing.B) {
				body := fmt.Appendf(nil, `{"rows_per_page":%d,"page_no":%d}`, rows, page)
				signature := payments.Sign(st.platform.Secret, http.MethodPost, target, body)
				b.ReportAllocs()
				for range b.N {
					client.do(b, http.MethodPost, target, body, signature)
				}
				reportThroughput(b)
			})
		}
	})
}
