package payments_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/platform-payments/payments"
	"github.com/platform-payments/payments/internal/pgtest"
)

// Backup: taken under write load, the copy passes integrity_check and holds every write
// acknowledged before it began; it never replaces a file.

func TestBackup_UnderWriteLoad(t *testing.T) {
	sqliteOnly(t) // Backup copies a SQLite database (VACUUM INTO)
	dir := t.TempDir()
	path := filepath.Join(dir, "payments.db")
	svc := mustOpenFile(t, path)
	p := mustPlatform(t, svc)

	// Writers create users until told to stop; each records the ids acknowledged so far.
	const writers = 8
	var (
		mu    sync.Mutex
		acked []uuid.UUID
		stop  atomic.Bool
		wg    sync.WaitGroup
		n     atomic.Int64
	)
	errs := make(chan error, writers)
	for w := range writers {
		wg.Go(func() {
			for i := 0; !stop.Load(); i++ {
				email := fmt.Sprintf("w%d-u%d@example.com", w, i)
				u, err := svc.CreateUser(context.Background(), p.PlatformID, payments.NewUser{Name: "User", Email: &email})
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				acked = append(acked, u.UserID)
				mu.Unlock()
				n.Add(1)
			}
		})
	}
	t.Cleanup(func() { stop.Store(true); wg.Wait() })
	// Let the load build up before the backup.
	for deadline := time.Now().Add(10 * time.Second); n.Load() < 200 && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}

	mu.Lock()
	before := append([]uuid.UUID(nil), acked...)
	mu.Unlock()
	backup := filepath.Join(dir, "backup.db")
	if err := svc.Backup(context.Background(), backup); err != nil {
		t.Fatalf("Backup: %v", err)
	}
	atBackup := n.Load()
	// Writes go on after the backup: it held nothing up.
	for deadline := time.Now().Add(10 * time.Second); n.Load() < atBackup+50 && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	stop.Store(true)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("writer: %v", err)
	}
	if len(before) == 0 {
		t.Fatal("no write acknowledged before the backup")
	}

	info, err := os.Stat(backup)
	if err != nil {
		t.Fatal(err)
	}
	if mode := info.Mode().Perm(); mode != 0o600 {
		t.Errorf("backup mode %v, want 0600", mode)
	}

	if got := queryString(t, rawDB(t, backup), "PRAGMA integrity_check"); got != "ok" {
		t.Errorf("integrity_check of the backup: %s", got)
	}
	// The copy opens with the database's key file, and only with a key.
	key, err := payments.ReadKeyFile(payments.DefaultKeyFile(path))
	if err != nil {
		t.Fatal(err)
	}
	restored := mustOpenFile(t, backup, payments.Options{DataKeys: []payments.DataKey{key}})
	for _, id := range before {
		if _, err := restored.GetUser(context.Background(), p.PlatformID, id.String()); err != nil {
			t.Errorf("user %s, acknowledged before the backup: %v", id, err)
		}
	}
	t.Logf("%d users acknowledged before the backup, %d in all", len(before), n.Load())
}

func TestBackup_Refused(t *testing.T) {
	dir := t.TempDir() // where the backups go, not the database's (newDSN's) directory
	svc := mustOpen(t)

	t.Run("ErrExists", func(t *testing.T) {
		sqliteOnly(t) // PostgreSQL's refusal comes first: ErrPostgreSQL
		existing := filepath.Join(dir, "existing.db")
		if err := os.WriteFile(existing, []byte("keep me"), 0o600); err != nil {
			t.Fatal(err)
		}
		errorOf(t, svc.Backup(context.Background(), existing), payments.CodeConflict)
		if b, err := os.ReadFile(existing); err != nil || string(b) != "keep me" {
			t.Errorf("existing file now %q, %v", b, err)
		}
	})
	t.Run("ErrNoPath", func(t *testing.T) {
		errorOf(t, svc.Backup(context.Background(), ""), payments.CodeInvalid)
	})
	t.Run("ErrPostgreSQL", func(t *testing.T) {
		if !pgtest.Enabled() {
			t.Skip("PostgreSQL engine only")
		}
		// PostgreSQL is backed up with its own tools: refused before any file is
		// touched, whether one exists at the path or not.
		to := filepath.Join(dir, "pg.db")
		errorOf(t, svc.Backup(context.Background(), to), payments.CodeInvalid)
		if _, err := os.Stat(to); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("a refused backup left %s: %v", to, err)
		}
		existing := filepath.Join(dir, "existing-pg.db")
		if err := os.WriteFile(existing, []byte("keep me"), 0o600); err != nil {
			t.Fatal(err)
		}
		errorOf(t, svc.Backup(context.Background(), existing), payments.CodeInvalid)
		if b, err := os.ReadFile(existing); err != nil || string(b) != "keep me" {
			t.Errorf("existing file now %q, %v", b, err)
		}
	})
	t.Run("ErrNoDirectory", func(t *testing.T) {
		sqliteOnly(t)
		err := svc.Backup(context.Background(), filepath.Join(dir, "missing", "b.db"))
		if err == nil || !errors.Is(err, os.ErrNotExist) {
			t.Errorf("Backup into a missing directory: %v, want not exist", err)
		}
	})
}

// queryString runs a query returning one string.
func queryString(tb testing.TB, db *sql.DB, query string) string {
	tb.Helper()
	var s string
	if err := db.QueryRow(query).Scan(&s); err != nil {
		tb.Fatalf("%s: %v", query, err)
	}
	return s
}
