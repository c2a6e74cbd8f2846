package postgres

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/platform-payments/payments/internal/store"
	"github.com/platform-payments/payments/internal/store/groupcommit"
	"github.com/platform-payments/payments/internal/store/postgres/pgqueries"
	"github.com/platform-payments/payments/queries"
)

// Group commit: each instance runs the write operations waiting together as one
// transaction (groupcommit), so that one WAL flush covers them all and a row many of them
// lock (a platform's user count) is taken once per batch rather than once per operation,
// each operation waiting for the flush of the one before.
//
// PostgreSQL aborts a whole transaction on an error, so an operation that fails must not
// cost the others: a batch runs first without savepoints (a savepoint and its release are
// two round trips per operation), and when one of its operations fails it is rolled back
// whole and run again with a savepoint around each operation, where the one that fails
// is undone alone. A batch the database aborts to resolve a deadlock or a serialization
// failure is run again whole, after a pause.

// maxBatch bounds the operations of a transaction: PostgreSQL keeps the subtransactions
// of a transaction in a cache of 64 per backend, and past it every snapshot taken
// anywhere in the cluster must consult pg_subtrans; a batch run with savepoints makes one
// subtransaction per operation.
const maxBatch = 64

// Attempts of a batch the database aborted to resolve a conflict, and the pause before
// the first retry (doubled each time, with jitter).
const (
	pgWriteAttempts = 8
	pgRetryPause    = 2 * time.Millisecond
)

// Write runs fn as one write operation of its batch's transaction: kept whole (fn returned
// nil) or undone whole (fn returned an error or panicked), and committed when Write
// returns nil. fn may run more than once: when the batch is run again.
func (st *Store) Write(ctx context.Context, opts store.WriteOptions, fn func(ctx context.Context, q store.Querier) error) error {
	return st.commit.Write(ctx, opts, fn)
}

// runBatch runs batch in one transaction and returns each operation's result.
func (st *Store) runBatch(batch []*groupcommit.Op) []groupcommit.Result {
	b := &pgBatch{Batch: groupcommit.NewBatch(batch)}
	results := b.Results
	// Savepoints are for a batch of several operations that failed once without them.
	careful := false
	pause := pgRetryPause
	for attempt := 1; ; attempt++ {
		err := st.tryBatch(b, careful)
		switch {
		case errors.Is(err, errOpFailed):
			careful = true
			attempt-- // not the database's refusal: no pause, no attempt spent
			continue
		case err != nil && retryable(err) && attempt < pgWriteAttempts:
			time.Sleep(pause/2 + rand.N(pause)) // #nosec G404 -- jitter, not a secret
			pause *= 2
			continue
		case err != nil:
			// Nothing of the batch is kept: every operation that ran gets err, but for
			// those that failed alone, which keep their own error; and so does every one
			// that never had its turn (the transaction could not even begin), which must
			// not pass for committed.
			for i := range results {
				if !b.Turned(i) || b.Runs(i) && results[i].OK() {
					results[i] = groupcommit.Result{Err: err}
				}
			}
		}
		return results
	}
}

// errOpFailed is tryBatch's report that an operation failed in a batch run without
// savepoints: the transaction was rolled back, to be run again with them.
var errOpFailed = errors.New("an operation failed without a savepoint")

// pgBatch is a batch of operations, their results, which of them had their turn and are
// run, and the events of those kept so far, written at the batch's end.
type pgBatch struct {
	*groupcommit.Batch
	events []pgqueries.EmittedEvent
	// The idempotency records of a batch run in rounds, and the expired records of their
	// keys to delete first, written together at its end (runTurns).
	expired []queries.DeleteExpiredIdempotencyKeyParams
	records []queries.CreateIdempotencyRecordParams
	// purge, when not empty, is the time up to which expired records are purged at the
	// batch's end (DeleteExpiredIdempotencyRecords, once a minute).
	purge string
}

// batchQuerier is the statements of a batch's transaction: RecordEvent keeps the event
// for the batch's end, where one statement writes them all (EmitEvents): a round trip
// less for every operation that tells of its change.
type batchQuerier struct {
	pgqueries.Adapter
	b *pgBatch
}

func (q batchQuerier) RecordEvent(_ context.Context, e queries.CreateEventParams) (int64, error) {
	q.b.events = append(q.b.events, pgqueries.EmittedEvent(e))
	return 0, nil
}

// emitEvents writes the batch's events and their deliveries, and reports whether it
// made any.
func (b *pgBatch) emitEvents(ctx context.Context, q pgqueries.Adapter) (bool, error) {
	if len(b.events) == 0 {
		return false, nil
	}
	n, err := q.EmitEvents(ctx, b.events)
	return n > 0, err
}

// tryBatch runs the operations of b, in one transaction, into b.Results, and commits. An
// error is the transaction's (nothing of the batch kept): a retryable one when the
// database aborted it, errOpFailed when an operation failed without a savepoint. With
// nil, each result is its operation's own. A batch runs in rounds (turns.go), or, run
// again carefully, one by one (with savepoints when it has several operations).
func (st *Store) tryBatch(b *pgBatch, careful bool) error {
	// The transaction belongs to the batch, not to any caller: no caller's context may
	// end it.
	ctx := context.Background()
	b.events, b.expired, b.records, b.purge = b.events[:0], b.expired[:0], b.records[:0], ""
	for i := range b.Ops {
		if b.Runs(i) {
			b.Results[i] = groupcommit.Result{} // of an earlier attempt
		}
	}
	if careful {
		return st.tryOneByOne(ctx, b)
	}
	conn, err := st.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("payments: begin: %w", err)
	}
	defer conn.Release() // which closes a connection left in a transaction
	kept, due, err := st.runTurns(ctx, conn.Conn(), b)
	if err != nil || kept == 0 {
		if conn.Conn().PgConn().TxStatus() != 'I' {
			_, _ = conn.Exec(ctx, "ROLLBACK") // the batch's error is the one to report
		}
		return err
	}
	st.commit.Committed(kept)
	if due && st.deliveriesDue != nil {
		st.deliveriesDue()
	}
	return nil
}

// tryOneByOne is tryBatch run carefully: the operations one after another, each inside a
// savepoint when there are several, so that one that fails is undone alone.
func (st *Store) tryOneByOne(ctx context.Context, b *pgBatch) error {
	tx, err := st.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("payments: begin: %w", err)
	}
	defer rollback(tx) // after a COMMIT, a no-op; otherwise undoes the batch
	a := pgqueries.Over(tx)
	var sp groupcommit.Savepoints
	if len(b.Ops) > 1 {
		sp = savepoints{tx}
	}
	kept, err := runOneByOne(ctx, sp, batchQuerier{Adapter: a, b: b}, b)
	if err != nil {
		return err
	}
	if kept == 0 {
		return nil // nothing to keep: the deferred rollback undoes what failed
	}
	due, err := b.emitEvents(ctx, a)
	if err != nil {
		return err
	}
	if hook := st.beforeCommit.Load(); hook != nil {
		if err := (*hook)(ctx, execer{tx}); err != nil {
			return fmt.Errorf("payments: commit: %w", err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("payments: commit: %w", err)
	}
	st.commit.Committed(kept)
	if due && st.deliveriesDue != nil {
		st.deliveriesDue()
	}
	return nil
}

// runOneByOne runs the operations of b one after another, each inside a savepoint of sp
// when sp is not nil, and returns how many succeeded; an error is tryBatch's.
func runOneByOne(ctx context.Context, sp groupcommit.Savepoints, q batchQuerier, b *pgBatch) (kept int, err error) {
	for i, op := range b.Ops {
		if !b.Take(i) {
			continue
		}
		events := len(b.events)
		r, txErr := groupcommit.RunOp(ctx, sp, q, op)
		if !r.OK() {
			b.events = b.events[:events] // undone with the operation
		}
		switch {
		case txErr != nil:
			return 0, fmt.Errorf("payments: batch transaction: %w", txErr)
		case r.Err != nil && retryable(r.Err):
			// The database aborted the transaction to break a deadlock or a
			// serialization failure: the whole batch is run again.
			return 0, r.Err
		case !r.OK() && sp == nil && len(b.Ops) > 1:
			return 0, errOpFailed
		}
		b.Results[i] = r
		if r.OK() {
			kept++
		}
	}
	return kept, nil
}

// savepoints are the savepoint statements of one batch's transaction.
type savepoints struct{ tx pgx.Tx }

func (s savepoints) Savepoint(ctx context.Context) error  { return s.exec(ctx, "SAVEPOINT op") }
func (s savepoints) RollbackTo(ctx context.Context) error { return s.exec(ctx, "ROLLBACK TO op") }
func (s savepoints) Release(ctx context.Context) error    { return s.exec(ctx, "RELEASE op") }

func (s savepoints) exec(ctx context.Context, stmt string) error {
	_, err := s.tx.Exec(ctx, stmt)
	return err
}

// execer is a transaction (or the connection a batch's runs on) as groupcommit.Execer,
// for a BeforeCommit hook.
type execer struct {
	tx interface {
		Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	}
}

func (x execer) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	tag, err := x.tx.Exec(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return driver.RowsAffected(tag.RowsAffected()), nil
}

// WritesWaiting is the number of write operations waiting to be taken into a batch: for
// tests that must know a write is queued.
func (st *Store) WritesWaiting() int64 { return st.commit.Waiting() }

// BeforeCommit makes hook run in the transaction of each batch just before its COMMIT
// (nil: no hook); an error from it fails the batch as a failed COMMIT would. For tests.
func (st *Store) BeforeCommit(hook func(ctx context.Context, x groupcommit.Execer) error) {
	if hook == nil {
		st.beforeCommit.Store(nil)
		return
	}
	st.beforeCommit.Store(&hook)
}

// beforeCommitHook is a BeforeCommit hook.
type beforeCommitHook = atomic.Pointer[func(ctx context.Context, x groupcommit.Execer) error]
