package main

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"
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
