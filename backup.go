package payments

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Backup writes a consistent copy of the database to a new file at path, readable by its
// owner only, while the service goes on serving.
//
// The copy is SQLite's VACUUM INTO, run on a connection of its own: it reads one
// snapshot of the database (every write committed before Backup began is in it, none
// that commits later is), so it neither waits for the group committer nor holds it up.
// The copy is compacted, and synced to disk before Backup returns.
//
// Account numbers and platform secrets stay sealed in the copy, under the same data keys:
// the copy opens only with them, so the key file (or the secret store holding the key)
// must be backed up too, and kept apart from the copies.
//
// Returns CodeInvalid without a path and CodeConflict when a file already exists at path.
// A PostgreSQL database is not the service's to back up: CodeInvalid, and no file made.
func (s *Service) Backup(ctx context.Context, path string) (err error) {
	if path == "" {
		return Errorf(CodeInvalid, "no backup path")
	}
	st, ok := s.store.(*sqliteStore)
	if !ok {
		return Errorf(CodeInvalid, "backup: only a SQLite database is backed up by the service; back up PostgreSQL with its own tools")
	}
	// VACUUM INTO takes an empty file: creating it first makes the refusal of an existing
	// file race-free and sets its mode, which SQLite would leave to the umask.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600) // #nosec G304 -- the caller names where its backup goes
	if errors.Is(err, os.ErrExist) {
		return Errorf(CodeConflict, "backup %s: the file exists; a backup never replaces a file", path)
	}
	if err != nil {
		return fmt.Errorf("payments: backup: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("payments: backup: %w", err)
	}
	defer func() {
		if err != nil {
			_ = os.Remove(path) // half a backup is worse than none
		}
	}()
	// A connection of its own: the read pool's are query-only, which refuses VACUUM INTO,
	// and the writer's one connection belongs to the group committer.
	var file string
	if err := st.reader.QueryRowContext(ctx, "SELECT file FROM pragma_database_list WHERE name = 'main'").Scan(&file); err != nil {
		return fmt.Errorf("payments: backup: %w", err)
	}
	db, err := sql.Open("sqlite", sqliteDSN(file, "_pragma=query_only(0)"))
	if err != nil {
		return fmt.Errorf("payments: backup: %w", err)
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, "VACUUM INTO ?", path); err != nil {
		return fmt.Errorf("payments: backup to %s: %w", path, err)
	}
	// VACUUM INTO does not sync what it writes.
	if err := syncFile(path); err != nil {
		return fmt.Errorf("payments: backup: %w", err)
	}
	if err := syncFile(filepath.Dir(path)); err != nil {
		return fmt.Errorf("payments: backup: %w", err)
	}
	return nil
}

// syncFile flushes the file or directory at path to stable storage.
func syncFile(path string) error {
	f, err := os.Open(path) // #nosec G304 -- a file Backup has just written, or its directory
	if err != nil {
		return err
	}
	serr := f.Sync()
	return errors.Join(serr, f.Close())
}
