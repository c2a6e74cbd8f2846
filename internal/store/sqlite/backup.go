package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Backup writes a consistent copy of the database to a new file at path, readable by its
// owner only, while the store goes on serving.
//
// The copy is SQLite's VACUUM INTO, run on a connection of its own: it reads one
// snapshot of the database (every write committed before Backup began is in it, none
// that commits later is), so it neither waits for the group committer nor holds it up.
// The copy is compacted, and synced to disk before Backup returns. A file already at path
// is refused (an error wrapping fs.ErrExist) and left as it was.
func (st *Store) Backup(ctx context.Context, path string) (err error) {
	// VACUUM INTO takes an empty file: creating it first makes the refusal of an existing
	// file race-free and sets its mode, which SQLite would leave to the umask.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600) // #nosec G304 -- the caller names where its backup goes
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
