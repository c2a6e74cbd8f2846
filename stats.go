package payments

import (
	"context"
	"database/sql"
	"fmt"
	"math/bits"
)

// Ping reports whether the store answers a trivial query before ctx
// is done: what a readiness check asks. Returns an internal error otherwise (a closed
// store, a deadline passed waiting for a connection).
func (s *Service) Ping(ctx context.Context) error {
	if err := s.store.ping(ctx); err != nil {
		return fmt.Errorf("payments: ping: %w", err)
	}
	return nil
}

// CommitBatchBounds are the upper bounds of the batch-size buckets of Stats: 1, 2, 4, …
// up to the largest batch the committer makes.
var CommitBatchBounds = func() []int {
	var b []int
	for n := 1; n <= maxBatch; n *= 2 {
		b = append(b, n)
	}
	return b
}()

// Stats is what a service has done and holds, for metrics: nothing in it names a
// platform, a user or any stored value.
type Stats struct {
	// Pools are the connection pools' statistics by name: "reader" and "writer" on
	// SQLite, "postgres" on PostgreSQL.
	Pools map[string]sql.DBStats
	// Commits is the number of write transactions committed (on SQLite, by the group
	// commit; on PostgreSQL each carries one operation), and
	// CommittedOps the write operations they carried (the sum of their batch sizes).
	Commits, CommittedOps int64
	// CommitBatches counts committed transactions by their number of operations:
	// CommitBatches[i] those with at most CommitBatchBounds[i] and more than the bound
	// before (not cumulative).
	CommitBatches []int64
}

// Stats returns the service's statistics now. It takes no lock the requests take but
// the pools' own, briefly.
func (s *Service) Stats() Stats { return s.store.stats() }

// batchBucket returns the index in CommitBatchBounds of the bucket of a batch of n
// operations (1 ≤ n ≤ maxBatch).
func batchBucket(n int) int {
	return bits.Len(uint(n - 1))
}
