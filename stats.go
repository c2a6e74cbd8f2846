package payments

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/platform-payments/payments/internal/store"
)

// Ping reports whether the store answers a trivial query before ctx
// is done: what a readiness check asks. Returns an internal error otherwise (a closed
// store, a deadline passed waiting for a connection).
func (s *Service) Ping(ctx context.Context) error {
	if err := s.store.Ping(ctx); err != nil {
		return fmt.Errorf("payments: ping: %w", err)
	}
	return nil
}

// Stats is what a service has done and holds, for metrics: nothing in it names a
// platform, a user or any stored value.
type Stats = store.Stats

// CommitBatchBounds returns the upper bounds of the batch-size buckets of Stats: 1, 2,
// 4, … up to the largest batch the group committer makes.
func CommitBatchBounds() []int { return store.CommitBatchBounds() }

// Stats returns the service's statistics now. It takes no lock the requests take but
// the pools' own, briefly.
func (s *Service) Stats() Stats { return s.store.Stats() }

// Backup writes a consistent copy of the database to a new file at path, readable by its
// owner only, while the service goes on serving: on SQLite, a snapshot of the file taken
// with VACUUM INTO on a connection of its own, compacted and synced to disk before Backup
// returns.
//
// Account numbers and platform secrets stay sealed in the copy, under the same data keys:
// the copy opens only with them, so the key file (or the secret store holding the key)
// must be backed up too, and kept apart from the copies.
//
// Returns CodeInvalid without a path and CodeConflict when a file already exists at path.
// A PostgreSQL database is not the service's to back up: CodeInvalid, and no file made.
func (s *Service) Backup(ctx context.Context, path string) error {
	if path == "" {
		return Errorf(CodeInvalid, "no backup path")
	}
	err := s.store.Backup(ctx, path)
	switch {
	case errors.Is(err, store.ErrUnsupported):
		return Errorf(CodeInvalid, "backup: only a SQLite database is backed up by the service; back up PostgreSQL with its own tools")
	case errors.Is(err, fs.ErrExist):
		return Errorf(CodeConflict, "backup %s: the file exists; a backup never replaces a file", path)
	}
	return err
}
