package main

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/platform-payments/payments"
)

// The baselines bench -baseline measures first: the machine's limit, to compare with.

// rawInserts are the three rows of a raw writer's transaction, as a user, a wallet and
// settings are.
var rawInserts = []string{"INSERT INTO a (v) VALUES (?)", "INSERT INTO b (v) VALUES (?)", "INSERT INTO c (v) VALUES (?)"}

// rawWriter measures one SQLite writer committing durable transactions of three rows one
// after another for d, in a temporary file in dir, removed afterwards.
func rawWriter(ctx context.Context, dir string, d time.Duration) (res benchResult, err error) {
	tmp, err := os.MkdirTemp(dir, "paymentsd-bench-")
	if err != nil {
		return res, err
	}
	defer func() {
		if rerr := os.RemoveAll(tmp); err == nil { // #nosec G703 -- the temporary directory bench made itself
			err = rerr
		}
	}()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(tmp, "raw.db")+
		"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_txlock=immediate")
	if err != nil {
		return res, err
	}
	defer func() {
		if cerr := db.Close(); err == nil {
			err = cerr
		}
	}()
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, `CREATE TABLE a (id INTEGER PRIMARY KEY, v TEXT NOT NULL);
		CREATE TABLE b (id INTEGER PRIMARY KEY, v TEXT NOT NULL);
		CREATE TABLE c (id INTEGER PRIMARY KEY, v TEXT NOT NULL)`); err != nil {
		return res, err
	}
	res.unit = "transactions"
	var latencies []time.Duration
	start := time.Now()
	for n := 0; time.Since(start) < d; n++ {
		t := time.Now()
		if err := commitRows(ctx, db, rawInserts, fmt.Sprint("row ", n)); err != nil {
			return res, err
		}
		latencies = append(latencies, time.Since(t))
	}
	res.summarize(latencies, time.Since(start))
	return res, nil
}

// pgSchemaPrefix begins the name of the schema the raw PostgreSQL writers make their
// tables in: a schema a killed run left behind is found by it.
const pgSchemaPrefix = "paymentsd_bench_"

// pgBaseline measures pgWriters on the database dsn names until d is over or an interrupt
// (SIGINT or SIGTERM) comes; either way their schema is dropped before pgBaseline returns,
// and an interrupt is its error. A second interrupt ends the program at once. What makes
// the writers' commits not durable is noted on stderr.
func pgBaseline(ctx context.Context, stderr io.Writer, dsn string, clients int, d time.Duration) (benchResult, error) {
	sctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-sctx.Done()
		stop() // from now on a second signal has its default effect
	}()
	res, lax, err := pgWriters(sctx, dsn, clients, d)
	if lax != "" {
		fmt.Fprintf(stderr, "%s bench: the raw PostgreSQL writers' commits are not durable: the database runs with %s\n",
			program, lax)
	}
	if err != nil {
		return res, fmt.Errorf("raw PostgreSQL writers on %s: %w", payments.RedactDSN(dsn), err)
	}
	return res, context.Cause(sctx) // an interrupt while the schema was dropped
}

// pgWriters measures clients PostgreSQL writers, each committing transactions of three
// rows one after another for d, on the database dsn names, through a pool of as many
// connections opened before the clock starts. The tables are in a schema of their own
// (pgSchemaPrefix and random hex digits), dropped afterwards, also when ctx ends first. lax
// lists the settings that make the database's commits not durable ("fsync=off,
// synchronous_commit=off"), or is empty: the writers use the database's own, as the
// server does.
func pgWriters(ctx context.Context, dsn string, clients int, d time.Duration) (res benchResult, lax string, err error) {
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return res, "", err
	}
	defer func() {
		if cerr := db.Close(); err == nil {
			err = cerr
		}
	}()
	db.SetMaxOpenConns(clients)
	db.SetMaxIdleConns(clients)
	if err := openConns(ctx, db, clients); err != nil {
		return res, "", err
	}
	var laxSettings sql.NullString
	if err := db.QueryRowContext(ctx, `SELECT string_agg(name || '=' || setting, ', ' ORDER BY name) FROM pg_settings
		WHERE name IN ('fsync', 'synchronous_commit') AND setting = 'off'`).Scan(&laxSettings); err != nil {
		return res, "", err
	}
	lax = laxSettings.String

	random := make([]byte, 8)
	rand.Read(random) // never returns an error (crypto/rand, Go 1.24+)
	schema := pgSchemaPrefix + hex.EncodeToString(random)
	var inserts []string
	create := "CREATE SCHEMA " + schema + ";" // #nosec G202 -- the name is bench's own: a prefix and hex digits
	for _, table := range []string{"a", "b", "c"} {
		create += fmt.Sprintf("\nCREATE TABLE %s.%s (id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, v TEXT NOT NULL);", schema, table)
		inserts = append(inserts, fmt.Sprintf("INSERT INTO %s.%s (v) VALUES ($1)", schema, table))
	}
	if _, err := db.ExecContext(ctx, create); err != nil { // one implicit transaction: all or nothing
		return res, lax, err
	}
	res, err = runWriters(ctx, db, inserts, clients, d)
	// Dropped also after an interrupt, on a context of its own.
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	if _, derr := db.ExecContext(dctx, "DROP SCHEMA "+schema+" CASCADE"); derr != nil {
		err = errors.Join(err, fmt.Errorf("drop schema %s (drop it yourself): %w", schema, derr))
	}
	return res, lax, err
}

// openConns opens n connections of db's pool at once, and leaves them idle in the pool.
func openConns(ctx context.Context, db *sql.DB, n int) error {
	conns := make([]*sql.Conn, 0, n)
	defer func() {
		for _, c := range conns {
			c.Close() // #nosec G104 -- back to the pool
		}
	}()
	for range n {
		c, err := db.Conn(ctx)
		if err != nil {
			return err
		}
		conns = append(conns, c)
	}
	return nil
}

// runWriters runs clients writers, each committing transactions of the inserts one after
// another for d. The first error stops them all and is returned; so is ctx's end (its
// cause).
func runWriters(ctx context.Context, db *sql.DB, inserts []string, clients int, d time.Duration) (benchResult, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var (
		mu        sync.Mutex
		latencies []time.Duration
		wg        sync.WaitGroup
	)
	start := time.Now()
	for w := range clients {
		wg.Go(func() {
			var mine []time.Duration
			for n := 0; ctx.Err() == nil && time.Since(start) < d; n++ {
				t := time.Now()
				if err := commitRows(ctx, db, inserts, fmt.Sprintf("row %d/%d", w, n)); err != nil {
					cancel(err) // the first cause stays
					break
				}
				mine = append(mine, time.Since(t))
			}
			mu.Lock()
			defer mu.Unlock()
			latencies = append(latencies, mine...)
		})
	}
	wg.Wait()
	res := benchResult{unit: "transactions"}
	res.summarize(latencies, time.Since(start))
	return res, context.Cause(ctx)
}

// commitRows commits one transaction of the inserts, each given the value v.
func commitRows(ctx context.Context, db *sql.DB, inserts []string, v string) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	for _, insert := range inserts {
		if _, err := tx.ExecContext(ctx, insert, v); err != nil {
			tx.Rollback() // #nosec G104 -- the insert's error is the one to report
			return err
		}
	}
	return tx.Commit()
}

// bareServer starts a net/http server answering every request with a small JSON body, on
// a free port of the loopback interface.
func bareServer() (addr string, stop func() error, err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	body := []byte(`{"success":true,"message":"Success","data":null,"queryGeneratedTime":0}` + "\n")
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Write(body) // #nosec G104 -- a benchmark's answer: a failed write is the client gone
		}),
		ReadHeaderTimeout: 10 * time.Second,
	}
	go srv.Serve(ln) // #nosec G104 -- ends with ErrServerClosed when stopped
	return ln.Addr().String(), srv.Close, nil
}
