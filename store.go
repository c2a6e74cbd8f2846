package payments

import (
	"context"

	"github.com/platform-payments/payments/queries"
)

// store is what the service needs of a database engine. The operations talk to the
// generated queries through queries.Querier, whichever engine is under them; each engine
// keeps its transactions, its errors and its statistics to itself.
type store interface {
	// write runs fn as one durable, atomic write operation (see Service.write).
	write(ctx context.Context, fn func(ctx context.Context, q queries.Querier) error) error
	// read runs fn in one read-only transaction: one snapshot.
	read(ctx context.Context, fn func(q queries.Querier) error) error
	// reads returns statements that run outside any transaction, each on its own
	// snapshot of the latest committed state.
	reads() queries.Querier
	// uniqueViolation reports whether err is the database refusing a duplicate key, and
	// the name the engine gives the constraint (see conflicts).
	uniqueViolation(err error) (constraint string, ok bool)
	// ping runs a trivial query; stats reports the engine's pools and commits.
	ping(ctx context.Context) error
	stats() Stats
	// close waits for the writes under way and closes the connections; it may be called
	// again.
	close() error
}
