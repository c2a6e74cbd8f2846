package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/platform-payments/payments/internal/store"
	"github.com/platform-payments/payments/internal/store/groupcommit"
	"github.com/platform-payments/payments/queries"
)

// Group commit: every write operation goes to one committer goroutine, which runs the
// operations waiting together in one immediate transaction, each inside a savepoint of
// its own, commits once (one fsync, synchronous=FULL) and only then answers each caller.
// An operation that fails rolls back to its savepoint alone; a failed commit fails every
// operation of the batch.

// The operations of one transaction are bounded by store.MaxBatch, so that no caller
// waits behind an unbounded queue: about 10 ms of work on the machines we run on.

// writeOp is one write operation waiting for its batch.
type writeOp struct {
	ctx  context.Context
	fn   func(ctx context.Context, q store.Querier) error
	done chan opResult // buffered: the committer never waits for the caller
}

// opResult is what became of a write operation: its error, or the value its fn panicked
// with, raised again in the caller's goroutine (as the same value, so that a recover
// there sees what it would have seen without the committer).
type opResult struct {
	err      error
	panicked bool
	panic    any
}

// committer is the state of the group-commit goroutine.
type committer struct {
	ops       chan *writeOp // unbuffered: a caller waiting to send is an operation waiting
	closing   chan struct{}
	closeOnce sync.Once
	stopped   chan struct{} // closed when the goroutine has returned; nil until it starts

	// conn is the writer pool's one connection, which the committer takes at Open and
	// holds until Close, and q the queries prepared on it. A batch's transaction is
	// statements on conn (BEGIN IMMEDIATE … COMMIT), not a *sql.Tx: database/sql runs a
	// prepared statement in a *sql.Tx only through a copy of it made for the transaction
	// (Tx.StmtContext, at every call), and sqlc's WithTx copies all the statements of the
	// queries for every transaction; a statement prepared on a *sql.Conn runs on that
	// connection as it is. (Held, the connection is never checked and replaced as the
	// pool would replace a broken one: a connection to a file does not break as a
	// network's does, and SQLite's driver reports none broken but one interrupted, which
	// the committer's statements never are.) prepared is q's statements, to close.
	conn     *sql.Conn
	prepared *queries.Queries
	q        store.Querier

	// The transaction and savepoint statements, prepared once on conn: SQLite would
	// otherwise parse them for every batch and every operation.
	begin, commit, rollback, savepoint, rollbackTo, release *sql.Stmt

	// For tests: the operations waiting to be taken, the transactions committed and the
	// operations they carried, and a hook run in the transaction just before COMMIT.
	waiting      atomic.Int64
	commits      atomic.Int64
	committedOps atomic.Int64
	beforeCommit atomic.Pointer[func(ctx context.Context, x groupcommit.Execer) error]
	// batches counts committed transactions by size, in the buckets of
	// store.CommitBatchBounds: 1, 2, 3-4, 5-8, … 65-128 operations.
	batches [store.BatchBuckets]atomic.Int64
}

func newCommitter() committer {
	return committer{ops: make(chan *writeOp), closing: make(chan struct{})}
}

// prepare takes the writer's connection for the committer and prepares on it the
// queries and the transaction and savepoint statements.
func (c *committer) prepare(ctx context.Context, writer *sql.DB) (err error) {
	if c.conn, err = writer.Conn(ctx); err != nil {
		return err
	}
	if c.prepared, err = queries.Prepare(ctx, c.conn); err != nil {
		return err
	}
	c.q = querier{c.prepared}
	for _, p := range []struct {
		stmt **sql.Stmt
		sql  string
	}{
		{&c.begin, "BEGIN IMMEDIATE"}, {&c.commit, "COMMIT"}, {&c.rollback, "ROLLBACK"},
		{&c.savepoint, "SAVEPOINT op"}, {&c.rollbackTo, "ROLLBACK TO op"}, {&c.release, "RELEASE op"},
	} {
		stmt, err := c.conn.PrepareContext(ctx, p.sql)
		if err != nil {
			return err
		}
		*p.stmt = stmt
	}
	return nil
}

// close closes the statements prepared and gives the connection back to the writer
// pool, once: the committer must have stopped.
func (c *committer) close() error {
	var errs []error
	for _, stmt := range []*sql.Stmt{c.begin, c.commit, c.rollback, c.savepoint, c.rollbackTo, c.release} {
		if stmt != nil {
			errs = append(errs, stmt.Close())
		}
	}
	if c.prepared != nil {
		errs = append(errs, c.prepared.Close())
	}
	if c.conn != nil {
		errs = append(errs, c.conn.Close())
		c.conn = nil // closing again closes nothing
	}
	return errors.Join(errs...)
}

// startCommitter starts the committer goroutine; Close stops it.
func (st *Store) startCommitter() {
	st.commit.stopped = make(chan struct{})
	go st.commitLoop()
}

// stopCommitter makes new writes fail with store.ErrClosed, lets the batch in progress finish
// and waits for the committer to return.
func (st *Store) stopCommitter() {
	st.commit.closeOnce.Do(func() { close(st.commit.closing) })
	if st.commit.stopped != nil {
		<-st.commit.stopped
	}
}

// Write runs fn as one write operation: in its batch's transaction, inside a savepoint of
// its own, so that its change is kept (fn returned nil) or undone (fn returned an error or
// panicked) as a whole. write returns once the batch is committed, so nil means the change
// is on disk. fn runs with a context carrying ctx's values but not its cancellation: a
// caller that gives up while its operation runs must not interrupt the statements of the
// batch's other operations. A ctx done before the operation's turn drops the operation
// (write returns ctx.Err()). fn must not call write.
func (st *Store) Write(ctx context.Context, fn func(ctx context.Context, q store.Querier) error) error {
	op := &writeOp{ctx: ctx, fn: fn, done: make(chan opResult, 1)}
	st.commit.waiting.Add(1)
	select {
	case st.commit.ops <- op:
		st.commit.waiting.Add(-1)
	case <-ctx.Done():
		st.commit.waiting.Add(-1)
		return ctx.Err()
	case <-st.commit.closing:
		st.commit.waiting.Add(-1)
		return store.ErrClosed
	}
	// Taken: the committer answers every operation it takes, once its batch is over.
	r := <-op.done
	if r.panicked {
		panic(r.panic)
	}
	return r.err
}

// commitLoop takes the first operation waiting and every other one waiting at that moment
// (up to store.MaxBatch), runs them as one batch, and starts again. The fsync of one batch is
// the time in which the next one gathers.
func (st *Store) commitLoop() {
	defer close(st.commit.stopped)
	batch := make([]*writeOp, 0, store.MaxBatch)
	for {
		select { // closing wins over operations still waiting: they get store.ErrClosed
		case <-st.commit.closing:
			return
		default:
		}
		select {
		case op := <-st.commit.ops:
			batch = append(batch[:0], op)
		case <-st.commit.closing:
			return
		}
	gather:
		for len(batch) < store.MaxBatch {
			select {
			case op := <-st.commit.ops:
				batch = append(batch, op)
			default:
				break gather
			}
		}
		st.runBatch(batch)
		clear(batch)
	}
}

// runBatch runs the operations of batch in one transaction and answers each.
func (st *Store) runBatch(batch []*writeOp) {
	c := &st.commit
	results := make([]opResult, len(batch))
	defer func() {
		for i, op := range batch {
			op.done <- results[i]
		}
	}()
	// The transaction belongs to the batch, not to any caller: no caller's context may
	// end it.
	ctx := context.Background()
	if _, err := c.begin.ExecContext(ctx); err != nil {
		for i := range results {
			results[i].err = fmt.Errorf("payments: begin: %w", err)
		}
		return
	}
	committed := false
	defer func() {
		if !committed {
			// Nothing of the batch is kept. Its error, if any, is not the callers':
			// each already has its own (and a COMMIT that failed may have rolled back).
			_, _ = c.rollback.ExecContext(ctx)
		}
	}()
	applied := make([]bool, len(batch))
	// An operation alone in its batch needs no savepoint: the transaction is its own, and
	// is rolled back whole when it fails.
	savepoints := len(batch) > 1
	for i, op := range batch {
		if err := op.ctx.Err(); err != nil {
			results[i].err = err // given up before its turn: never run
			continue
		}
		var txErr error
		results[i], txErr = c.runOp(ctx, op, savepoints)
		if txErr != nil {
			// The savepoint could not be made, released or rolled back to: the
			// transaction is no longer one to trust. Nothing of the batch is kept.
			txErr = fmt.Errorf("payments: batch transaction: %w", txErr)
			failBatch(results, applied, i, txErr)
			return
		}
		applied[i] = results[i].err == nil && !results[i].panicked
	}
	if !slices.Contains(applied, true) {
		return // nothing to keep: the deferred rollback undoes what failed
	}
	if hook := c.beforeCommit.Load(); hook != nil {
		if err := (*hook)(ctx, c.conn); err != nil {
			failBatch(results, applied, len(batch), fmt.Errorf("payments: commit: %w", err))
			return
		}
	}
	if _, err := c.commit.ExecContext(ctx); err != nil {
		// A COMMIT that SQLite refused may leave the transaction open: the deferred
		// ROLLBACK ends it.
		failBatch(results, applied, len(batch), fmt.Errorf("payments: commit: %w", err))
		return
	}
	committed = true
	n := 0
	for _, ok := range applied {
		if ok {
			n++
		}
	}
	c.commits.Add(1)
	c.committedOps.Add(int64(n))
	c.batches[store.BatchBucket(n)].Add(1)
}

// failBatch gives err to every operation that had succeeded in a batch that is not
// committed, and to the operations from next on, which did not run or cannot be trusted.
// The operations that failed alone keep their own error: nothing of theirs was kept either.
func failBatch(results []opResult, applied []bool, next int, err error) {
	for i := range results {
		if applied[i] || i >= next {
			results[i] = opResult{err: err}
		}
	}
}

// runOp runs one operation inside a savepoint of the batch's transaction (or, alone in
// its batch, in the transaction itself). The result is the operation's own; txErr
// reports that the savepoint itself failed, so the whole transaction is suspect.
func (c *committer) runOp(ctx context.Context, op *writeOp, savepoint bool) (r opResult, txErr error) {
	if savepoint {
		if _, err := c.savepoint.ExecContext(ctx); err != nil {
			return opResult{}, err
		}
	}
	func() {
		defer func() {
			if p := recover(); p != nil { // panic(nil) too, since Go 1.21
				r = opResult{panicked: true, panic: p}
			}
		}()
		r.err = op.fn(context.WithoutCancel(op.ctx), c.q)
	}()
	if !savepoint {
		return r, nil
	}
	if r.err != nil || r.panicked {
		if _, err := c.rollbackTo.ExecContext(ctx); err != nil {
			return r, err
		}
	}
	_, err := c.release.ExecContext(ctx)
	return r, err
}

// WritesWaiting is the number of write operations waiting to be taken into a batch: for
// tests that must know a write is queued.
func (st *Store) WritesWaiting() int64 { return st.commit.waiting.Load() }

// BeforeCommit makes hook run in the transaction of each batch just before its COMMIT, on
// the writer's connection that holds it (nil: no hook); an error from it fails the batch
// as a failed COMMIT would. For tests.
func (st *Store) BeforeCommit(hook func(ctx context.Context, x groupcommit.Execer) error) {
	if hook == nil {
		st.commit.beforeCommit.Store(nil)
		return
	}
	st.commit.beforeCommit.Store(&hook)
}
