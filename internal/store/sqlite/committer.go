package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/platform-payments/payments/internal/store"
	"github.com/platform-payments/payments/internal/store/groupcommit"
	"github.com/platform-payments/payments/queries"
)

// Group commit (groupcommit, with one runner: SQLite has one writer): the operations
// waiting together run in one immediate transaction, which commits once (one fsync,
// synchronous=FULL) before any caller is answered. An operation that fails is undone
// alone: its batch runs again with each operation inside a savepoint of its own (runBatch
// says when); a failed commit fails every operation of the batch.

// The operations of one transaction are bounded by store.MaxBatch, so that no caller
// waits behind an unbounded queue: about 10 ms of work on the machines we run on.

// committer is the state of the group commit: the queue, and the connection its batches
// run on.
type committer struct {
	queue *groupcommit.Committer

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
	// otherwise parse them for every batch and every operation; and the committer's own
	// statements of q (writes.go).
	begin, commit, rollback, savepoint, rollbackTo, release   *sql.Stmt
	raiseUserCount, raiseKnownCount, insertUser, hasEndpoints *sql.Stmt
	// known is what the batch running has learnt (writes.go).
	known batchKnowledge

	// careful counts the batches still to run with savepoints from the start (runBatch);
	// only the committer's one runner reads and writes it.
	careful int

	// For tests: a hook run in the transaction just before COMMIT.
	beforeCommit atomic.Pointer[func(ctx context.Context, x groupcommit.Execer) error]
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
	for _, p := range []struct {
		stmt **sql.Stmt
		sql  string
	}{
		{&c.begin, "BEGIN IMMEDIATE"}, {&c.commit, "COMMIT"}, {&c.rollback, "ROLLBACK"},
		{&c.savepoint, "SAVEPOINT op"}, {&c.rollbackTo, "ROLLBACK TO op"}, {&c.release, "RELEASE op"},
		{&c.raiseUserCount, raiseUserCount}, {&c.raiseKnownCount, raiseKnownCount}, {&c.insertUser, insertUser},
		{&c.hasEndpoints, hasEndpoints},
	} {
		stmt, err := c.conn.PrepareContext(ctx, p.sql)
		if err != nil {
			return err
		}
		*p.stmt = stmt
	}
	c.known = batchKnowledge{counts: knownCounts{}, endpointless: map[string]bool{}}
	c.q = writeQuerier{querier: querier{c.prepared}, raiseUserCount: c.raiseUserCount, raiseKnownCount: c.raiseKnownCount,
		insertUser: c.insertUser, hasEndpoints: c.hasEndpoints, batchKnowledge: c.known}
	return nil
}

// close closes the statements prepared and gives the connection back to the writer
// pool, once: the committer must have stopped.
func (c *committer) close() error {
	var errs []error
	for _, stmt := range []*sql.Stmt{c.begin, c.commit, c.rollback, c.savepoint, c.rollbackTo, c.release, c.raiseUserCount, c.raiseKnownCount, c.insertUser, c.hasEndpoints} {
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

// startCommitter starts the group commit; Close stops it.
func (st *Store) startCommitter(plain store.Plain) {
	batch := store.MaxBatch
	if plain.GroupCommit {
		batch = 1 // a transaction per write
	}
	st.commit.queue = groupcommit.New(batch, 1, st.runBatch)
	if !plain.Gather && !plain.GroupCommit {
		st.commit.queue.Gather(gatherBelow, gatherWait)
	}
	st.commit.queue.Start()
}

// Under load the committer is what bounds SQLite's writes: with 50 clients creating users
// it is busy 96% of the time, and a COMMIT (the pages written to the log, the fsync) costs
// a batch about what ten creates do. So under load (groupcommit's Gather: the last batch
// carried gatherBelow or more) a smaller batch waits gatherWait for the writes on their
// way, and commits once for all; with few writers, or a write that finds the committer
// idle, nothing waits. Creates a second, same runs, alternating with the build without:
// 50 clients 10,737 and 10,390 against 10,188 and 9,738; 25 clients 8,230 and 8,128
// against 8,046 and 7,452; 4 and 1 clients even.
const (
	gatherBelow = 16
	gatherWait  = 200 * time.Microsecond
)

// stopCommitter makes new writes fail with store.ErrClosed, lets the batch in progress
// finish and waits for the committer to return.
func (st *Store) stopCommitter() {
	if st.commit.queue != nil {
		st.commit.queue.Stop()
	}
}

// Write runs fn as one write operation: in its batch's transaction, inside a savepoint of
// its own, so that its change is kept (fn returned nil) or undone (fn returned an error or
// panicked) as a whole. Write returns once the batch is committed, so nil means the change
// is on disk. fn runs with a context carrying ctx's values but not its cancellation: a
// caller that gives up while its operation runs must not interrupt the statements of the
// batch's other operations. A ctx done before the operation's turn drops the operation
// (Write returns ctx.Err()). fn must not call Write.
func (st *Store) Write(ctx context.Context, opts store.WriteOptions, fn func(ctx context.Context, q store.Querier) error) error {
	if st.commit.queue == nil {
		return store.ErrClosed
	}
	return st.commit.queue.Write(ctx, opts, fn)
}

// CreateUser is Write for an operation that creates a user first (store.Store.CreateUser):
// its CreateUserRows and fn run one after the other in its savepoint.
func (st *Store) CreateUser(ctx context.Context, opts store.WriteOptions, u func() store.NewUserRows, fn func(ctx context.Context, q store.Querier, user queries.User) error) error {
	if st.commit.queue == nil {
		return store.ErrClosed
	}
	return st.commit.queue.CreateUser(ctx, opts, u, fn)
}

// A savepoint costs more than its two statements: SQLite copies every page an operation
// changes first into the savepoint's journal, the same pages (the tables' and indexes'
// last leaves) for each operation of a batch, about a tenth of a Create User's time in
// the committer. So a batch of several runs first without savepoints, and when one of
// its operations fails it is rolled back whole and run again with a savepoint around
// each operation, where the one that fails is undone alone (Store.Write's fn may run more
// than once). Failures come in runs (a client repeating a conflict), so once a batch has
// failed the next carefulBatches batches run with savepoints from the start: failing
// operations then cost at most one batch run again in carefulBatches + 1.
const carefulBatches = 8

// runBatch runs the operations of batch in one transaction and returns their results.
func (st *Store) runBatch(batch []*groupcommit.Op) []groupcommit.Result {
	c := &st.commit
	b := groupcommit.NewBatch(batch)
	// An operation alone in its batch needs no savepoint: the transaction is its own, and
	// is rolled back whole when it fails.
	careful := len(batch) > 1 && c.careful > 0
	if c.careful > 0 {
		c.careful--
	}
	if !st.tryBatch(b, careful) {
		c.careful = carefulBatches
		st.tryBatch(b, true)
	}
	return b.Results
}

// tryBatch runs the operations of b in one transaction, each in a savepoint of its own
// when careful, and commits what succeeded, leaving each operation's result in b. It
// reports false, having rolled back everything, when an operation of several failed
// without a savepoint: the batch is to be run again, carefully.
func (st *Store) tryBatch(b *groupcommit.Batch, careful bool) bool {
	c := &st.commit
	results := b.Results
	c.known.forget() // what an earlier transaction learnt, kept or not
	// The transaction belongs to the batch, not to any caller: no caller's context may
	// end it.
	ctx := context.Background()
	if _, err := c.begin.ExecContext(ctx); err != nil {
		for i := range results {
			if !b.Turned(i) || b.Runs(i) {
				results[i].Err = fmt.Errorf("payments: begin: %w", err)
			}
		}
		return true
	}
	committed := false
	defer func() {
		if !committed {
			// Nothing of the batch is kept. Its error, if any, is not the callers':
			// each already has its own (and a COMMIT that failed may have rolled back).
			_, _ = c.rollback.ExecContext(ctx)
		}
	}()
	applied := make([]bool, len(b.Ops))
	var sp groupcommit.Savepoints
	if careful {
		sp = savepoints{c}
	}
	for i, op := range b.Ops {
		if !b.Take(i) {
			continue // given up before its turn: never run
		}
		r, txErr := groupcommit.RunOp(ctx, sp, c.q, op)
		results[i] = r
		if !r.OK() {
			c.known.forget() // what the operation wrote is undone
		}
		if txErr != nil {
			// The savepoint could not be made, released or rolled back to: the
			// transaction is no longer one to trust. Nothing of the batch is kept.
			groupcommit.Fail(results, applied, i, fmt.Errorf("payments: batch transaction: %w", txErr))
			return true
		}
		if !r.OK() && sp == nil && len(b.Ops) > 1 {
			return false // rolled back by the deferred ROLLBACK, to run again carefully
		}
		applied[i] = r.OK()
	}
	if !slices.Contains(applied, true) {
		return true // nothing to keep: the deferred rollback undoes what failed
	}
	if hook := c.beforeCommit.Load(); hook != nil {
		if err := (*hook)(ctx, c.conn); err != nil {
			groupcommit.Fail(results, applied, len(b.Ops), fmt.Errorf("payments: commit: %w", err))
			return true
		}
	}
	if _, err := c.commit.ExecContext(ctx); err != nil {
		// A COMMIT that SQLite refused may leave the transaction open: the deferred
		// ROLLBACK ends it.
		groupcommit.Fail(results, applied, len(b.Ops), fmt.Errorf("payments: commit: %w", err))
		return true
	}
	committed = true
	n := 0
	for _, ok := range applied {
		if ok {
			n++
		}
	}
	c.queue.Committed(n)
	return true
}

// savepoints are the savepoint statements prepared on the committer's connection.
type savepoints struct{ c *committer }

func (s savepoints) Savepoint(ctx context.Context) error  { return exec(ctx, s.c.savepoint) }
func (s savepoints) RollbackTo(ctx context.Context) error { return exec(ctx, s.c.rollbackTo) }
func (s savepoints) Release(ctx context.Context) error    { return exec(ctx, s.c.release) }

func exec(ctx context.Context, stmt *sql.Stmt) error {
	_, err := stmt.ExecContext(ctx)
	return err
}

// WritesWaiting is the number of write operations waiting to be taken into a batch: for
// tests that must know a write is queued.
func (st *Store) WritesWaiting() int64 { return st.commit.queue.Waiting() }

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
