package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
)

// TestUnavailable: SQLite's errors of a file out of reach (busy past the timeout, unable
// to open it) are unavailable, wrapped as the store wraps them; its other errors (a
// constraint, SQL that does not parse) are not. Each error is SQLite's own.
func TestUnavailable(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "busy.db")
	open := func(t *testing.T, dsn string) *sql.DB {
		db, err := sql.Open("sqlite", dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	holder := open(t, sqliteDSN(path, ""))
	if _, err := holder.ExecContext(ctx, "CREATE TABLE t (id INTEGER PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	lock, err := holder.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if _, err := lock.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	defer lock.ExecContext(ctx, "ROLLBACK")
	// Another connection that waits for no lock: busy at once.
	_, busy := open(t, "file:"+path+"?_pragma=busy_timeout(0)&_txlock=immediate").BeginTx(ctx, nil)
	_, cantOpen := open(t, "file:"+filepath.Join(dir, "no-such-dir", "x.db")).ExecContext(ctx, "CREATE TABLE t (id INTEGER)")
	reader := open(t, "file:"+path+"?_pragma=busy_timeout(0)")
	_, syntax := reader.ExecContext(ctx, "SELEC 1")
	mem := open(t, "file::memory:")
	_, _ = mem.ExecContext(ctx, "CREATE TABLE u (id INTEGER PRIMARY KEY)")
	_, _ = mem.ExecContext(ctx, "INSERT INTO u VALUES (1)")
	_, unique := mem.ExecContext(ctx, "INSERT INTO u VALUES (1)")

	for _, tt := range []struct {
		name string
		err  error
		want bool
	}{
		{"Nil", nil, false},
		{"Other", errors.New("payments: something else"), false},
		{"NoRows", sql.ErrNoRows, false},
		{"Syntax", syntax, false},
		{"Unique", unique, false},
		{"Busy", busy, true},
		{"CantOpen", cantOpen, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.name != "Nil" && tt.err == nil {
				t.Fatal("the statement did not fail")
			}
			if got := unavailable(tt.err); got != tt.want {
				t.Errorf("unavailable(%v) = %v, want %v", tt.err, got, tt.want)
			}
			if tt.err == nil {
				return
			}
			wrapped := fmt.Errorf("payments: begin: %w", tt.err)
			if got := unavailable(wrapped); got != tt.want {
				t.Errorf("unavailable(%v) = %v, want %v", wrapped, got, tt.want)
			}
		})
	}
}
