package postgres

import (
	"cmp"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
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

// pgBatch is a batch of operations, their results, which of them had their turn and are
// run, and what those kept so far leave for the batch's end: their events, and (run
// without savepoints) their idempotency records, the expired records of those keys to
// delete first, and the purge of expired records.
type pgBatch struct {
	*groupcommit.Batch
	events  []pgqueries.EmittedEvent
	expired []queries.DeleteExpiredIdempotencyKeyParams
	records []queries.CreateIdempotencyRecordParams
	// purge, when not empty, is the time up to which expired records are purged at the
	// batch's end (DeleteExpiredIdempotencyRecords, once a minute).
	purge string
}

// ends is how much of what a batch leaves for its end its operations have left so far.
type ends struct{ events, expired, records int }

func (b *pgBatch) ends() ends { return ends{len(b.events), len(b.expired), len(b.records)} }

// undo drops what an operation that failed left for the batch's end since e.
func (b *pgBatch) undo(e ends) {
	b.events, b.expired, b.records = b.events[:e.events], b.expired[:e.expired], b.records[:e.records]
}

// Write runs fn as one write operation of its batch's transaction: kept whole (fn returned
// nil) or undone whole (fn returned an error or panicked), and committed when Write
// returns nil. fn may run more than once: when the batch is run again.
func (st *Store) Write(ctx context.Context, opts store.WriteOptions, fn func(ctx context.Context, q store.Querier) error) error {
	return st.commit.Write(ctx, opts, fn)
}

// CreateUser is Write for an operation that creates a user first (store.Store.CreateUser):
// the users of a batch's CreateUser operations are written together (writeUsers).
func (st *Store) CreateUser(ctx context.Context, opts store.WriteOptions, u func() store.NewUserRows, fn func(ctx context.Context, q store.Querier, user queries.User) error) error {
	return st.commit.CreateUser(ctx, opts, u, fn)
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

// tryBatch runs the operations of b, in one transaction, into b.Results, and commits. An
// error is the transaction's (nothing of the batch kept): a retryable one when the
// database aborted it, errOpFailed when an operation failed without a savepoint. With
// nil, each result is its operation's own.
//
// Run first (not careful), the batch costs few round trips: its BEGIN goes with its first
// statement; the users of its CreateUser operations are written together first, one
// counter update and one insert for each platform's (writeUsers); then each operation
// runs, one after another, its statements one round trip each; and the batch's events,
// idempotency records and COMMIT go together at its end (end). An operation that fails
// fails the batch (but for a batch of one: its failure is its result), which is then run
// again carefully: each operation inside a savepoint of its own when there are several,
// its user written by itself, and its idempotency record written by itself, so that one
// whose key another instance stored meanwhile fails alone.
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
	conn, err := st.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("payments: begin: %w", err)
	}
	defer conn.Release() // which closes a connection left in a transaction
	c := &batchConn{conn: conn.Conn(), plain: st.plain.Pipeline}
	kept, err := st.run(ctx, c, b, careful)
	due := false
	if err == nil && kept > 0 {
		due, err = st.end(ctx, c, b, careful)
	}
	if err != nil || kept == 0 {
		if c.conn.PgConn().TxStatus() != 'I' {
			_, _ = c.conn.Exec(ctx, "ROLLBACK") // the batch's error is the one to report
		}
		return err
	}
	st.commit.Committed(kept)
	if due && st.deliveriesDue != nil {
		st.deliveriesDue()
	}
	return nil
}

// run begins the transaction and runs the operations of b in it, and returns how many
// succeeded; an error is tryBatch's.
func (st *Store) run(ctx context.Context, c *batchConn, b *pgBatch, careful bool) (kept int, err error) {
	c.queue("BEGIN", nil, nil)
	q := batchQuerier{Adapter: pgqueries.Over(c), c: c, b: b, careful: careful}
	var sp groupcommit.Savepoints
	if careful && len(b.Ops) > 1 {
		sp = savepoints{c}
	}
	var users map[int]createdUser
	if !careful && !st.plain.BatchedCreates {
		if users, err = writeUsers(ctx, c, b); err != nil {
			return 0, err
		}
	}
	for i, op := range b.Ops {
		if !b.Take(i) {
			continue
		}
		e := b.ends()
		var r groupcommit.Result
		var txErr error
		if u, ok := users[i]; ok {
			r = op.RunCreated(q, u.user, u.err)
		} else {
			r, txErr = groupcommit.RunOp(ctx, sp, q, op)
		}
		if !r.OK() {
			b.undo(e)
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

// createdUser is what writeUsers wrote for a CreateUser operation: its user as stored, or
// sql.ErrNoRows when the platform does not exist.
type createdUser struct {
	user queries.User
	err  error
}

// writeUsers writes the users of b's CreateUser operations that are to run, by platform,
// in the order of the platforms' ids (so that instances lock platforms in one order), each
// platform's in the order of their operations: CountNewUsers and CreateUsersRows in one
// round trip, or CreateUserRows for one user. It returns each operation's user by its
// index. A statement that fails aborts the transaction: errOpFailed (the batch is run
// again, each user written by its own operation), or the database's retryable error.
func writeUsers(ctx context.Context, c *batchConn, b *pgBatch) (map[int]createdUser, error) {
	var creates []int
	made := map[int]store.NewUserRows{}
	for i, op := range b.Ops {
		if op.Creates() && b.Take(i) {
			creates = append(creates, i)
			made[i] = op.NewUser() // in the order of the operations: their times too
		}
	}
	if len(creates) == 0 {
		return nil, nil
	}
	platformOf := func(i int) string { return made[i].User.PlatformID }
	slices.SortStableFunc(creates, func(i, j int) int { return cmp.Compare(platformOf(i), platformOf(j)) })
	out := make(map[int]createdUser, len(creates))
	a := pgqueries.Over(c)
	for len(creates) > 0 {
		platform := platformOf(creates[0])
		n := 1
		for n < len(creates) && platformOf(creates[n]) == platform {
			n++
		}
		group := creates[:n]
		creates = creates[n:]
		users := make([]store.NewUserRows, len(group))
		for k, i := range group {
			users[k] = made[i]
		}
		var rows []queries.User
		var err error
		if len(group) == 1 {
			var row queries.User
			row, err = a.CreateUserRows(ctx, users[0])
			rows = []queries.User{row}
		} else {
			found := false
			c.queue(pgqueries.CountNewUsersSQL, []any{int64(len(users)), platform}, func(br pgx.BatchResults) error {
				var count int64
				err := br.QueryRow().Scan(&count)
				found = err == nil
				if errors.Is(err, sql.ErrNoRows) {
					return nil // no platform: CreateUsersRows writes nothing either
				}
				return err
			})
			rows, err = a.WriteCountedUsers(ctx, platform, users)
			if !found && c.conn.PgConn().TxStatus() == 'T' {
				err = sql.ErrNoRows // no platform, nothing written, and the transaction goes on
			}
		}
		switch {
		case errors.Is(err, sql.ErrNoRows):
			for _, i := range group {
				out[i] = createdUser{err: sql.ErrNoRows}
			}
		case err != nil && retryable(err):
			return nil, err
		case err != nil:
			return nil, errOpFailed
		default:
			for k, i := range group {
				out[i] = createdUser{user: rows[k]}
			}
		}
	}
	return out, nil
}

// end writes what the operations of b left for its end (its events, the expired records
// of its idempotency keys, the purge, its records) and commits, all in one round trip,
// and reports whether the events made deliveries due; with a BeforeCommit hook, the
// COMMIT waits for it, in a round trip of its own. A statement that fails there rolls the
// batch back: errOpFailed when the batch was not run carefully (a record whose key
// another instance stored meanwhile: run again, each record is written by its own
// operation, which fails alone), or the database's error.
func (st *Store) end(ctx context.Context, c *batchConn, b *pgBatch, careful bool) (due bool, err error) {
	if len(b.events) > 0 {
		sql, args, err := pgqueries.EmitEventsStatement(b.events)
		if err != nil {
			return false, err
		}
		c.queue(sql, args, func(br pgx.BatchResults) error {
			var emitted int64
			err := br.QueryRow().Scan(&emitted)
			due = emitted > 0
			return err
		})
	}
	a := pgqueries.Over(c.ahead())
	if len(b.expired) > 0 {
		if err := a.DeleteExpiredIdempotencyKeys(ctx, b.expired); err != nil {
			return false, err
		}
	}
	if b.purge != "" {
		_, _ = a.DeleteExpiredIdempotencyRecords(ctx, b.purge) // queued: its error is the round's
	}
	if len(b.records) > 0 {
		if err := a.CreateIdempotencyRecords(ctx, b.records); err != nil {
			return false, err
		}
	}
	endError := func(err error) error {
		if retryable(err) {
			return err
		}
		var pe *pgconn.PgError
		if !careful && errors.As(err, &pe) {
			return errOpFailed
		}
		return fmt.Errorf("payments: commit: %w", err)
	}
	if hook := st.beforeCommit.Load(); hook != nil {
		if _, err := c.Exec(ctx, "SELECT 1"); err != nil { // what is queued, without the COMMIT
			return false, endError(err)
		}
		if err := (*hook)(ctx, execer{c}); err != nil {
			return false, fmt.Errorf("payments: commit: %w", err)
		}
	}
	// A statement that fails before it aborts the transaction, and the server skips what
	// follows it in the round, COMMIT included: a COMMIT behind it commits nothing.
	tag, err := c.Exec(ctx, "COMMIT")
	if err == nil && tag.String() != "COMMIT" {
		err = fmt.Errorf("the server answered %s", tag) // a COMMIT that rolled back
	}
	if err != nil {
		return false, endError(err)
	}
	return due, nil
}

// batchQuerier is the statements of a batch's transaction. RecordEvent keeps the event
// for the batch's end, where one statement writes them all (EmitEvents); run without
// savepoints (not careful), so does the idempotency record (and the deletion of its key's
// expired record, and the purge): a round trip less for each. CreateBankAccountTakingDefault
// sends the user's lock, and the clearing of its default when asked, in front of its
// insert.
type batchQuerier struct {
	pgqueries.Adapter
	c       *batchConn
	b       *pgBatch
	careful bool
}

func (q batchQuerier) RecordEvent(_ context.Context, e queries.CreateEventParams) (int64, error) {
	q.b.events = append(q.b.events, pgqueries.EmittedEvent(e))
	return 0, nil
}

func (q batchQuerier) DeleteExpiredIdempotencyKey(ctx context.Context, p queries.DeleteExpiredIdempotencyKeyParams) error {
	if q.careful {
		return q.Adapter.DeleteExpiredIdempotencyKey(ctx, p)
	}
	q.b.expired = append(q.b.expired, p)
	return nil
}

func (q batchQuerier) DeleteExpiredIdempotencyRecords(ctx context.Context, notAfter string) (int64, error) {
	if q.careful {
		return q.Adapter.DeleteExpiredIdempotencyRecords(ctx, notAfter)
	}
	q.b.purge = max(q.b.purge, notAfter)
	return 0, nil
}

func (q batchQuerier) CreateIdempotencyRecord(ctx context.Context, p queries.CreateIdempotencyRecordParams) error {
	if q.careful {
		return q.Adapter.CreateIdempotencyRecord(ctx, p)
	}
	q.b.records = append(q.b.records, p)
	return nil
}

// CreateBankAccountTakingDefault sends the lock of the user's row, the clearing of its
// default when asked, and the insert, which reads whether the user has a default account
// itself, in one round trip, in that order: each statement runs once the one before has
// ended, in a snapshot of its own, as if it were sent after its answer. A lock of no row
// (no such user) fails the insert with sql.ErrNoRows.
func (q batchQuerier) CreateBankAccountTakingDefault(ctx context.Context, p queries.CreateBankAccountParams, asked bool) (queries.BankAccount, error) {
	q.c.queue(pgqueries.LockUserForUpdateSQL, []any{p.UserID}, func(br pgx.BatchResults) error {
		tag, err := br.Exec()
		if err == nil && tag.RowsAffected() == 0 {
			err = sql.ErrNoRows
		}
		return err
	})
	if asked {
		if err := pgqueries.Over(q.c.ahead()).ClearDefaultAccount(ctx, p.UserID); err != nil {
			return queries.BankAccount{}, err
		}
	}
	return q.InsertBankAccountTakingDefault(ctx, p, asked)
}

// savepoints are the savepoint statements of one batch's transaction.
type savepoints struct{ tx *batchConn }

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
