package postgres

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"slices"

	"github.com/platform-payments/payments/internal/store"
	"github.com/platform-payments/payments/internal/store/groupcommit"
	"github.com/platform-payments/payments/internal/store/postgres/pgqueries"
	"github.com/platform-payments/payments/queries"
)

// A batch of several operations run without savepoints runs them in turns: each in a
// goroutine of its own, one at a time, so that an operation can wait at its
// CreateUserRows while the operations after it run. Once every operation has ended or
// waits there, the users they create are written together, one CountNewUsers and one
// CreateUsersRows per platform (two statements where each create made one), and each
// waiting operation goes on, in its turn, from there.
//
// The batch is then as if its creates had each run in a transaction of its own in READ
// COMMITTED, as they did before group commit: what a create reads before its
// CreateUserRows may since have been changed by another operation of the batch. A write
// that calls CreateUserRows therefore takes no lock before it (store.Querier says so):
// an operation's locks do not hold back the others of its own transaction.
//
// The idempotency records the operations store (and the expired records of their keys,
// which make way) are written together at the batch's end, two statements for all of
// them, rather than two round trips an operation, each in series with the others (and,
// after a create, while the platform's counter is locked).
//
// Any failure rolls the batch back, to be run again one by one with savepoints
// (errOpFailed), or whole when the database aborted it (a retryable error): so a record
// whose key another instance stored first fails its own operation alone, as
// CreateIdempotencyRecord would have.

// turns is the state of a batch run in turns. Only one of its goroutines runs at a time:
// the runner, or the one operation it handed the turn to, which hands it back through
// yield when it waits at CreateUserRows or has ended.
type turns struct {
	yield chan int
	ops   []turn
}

// turn is an operation's part of turns.
type turn struct {
	resume  chan struct{}
	waiting bool              // at CreateUserRows, for rows
	rows    store.NewUserRows // what it creates
	row     queries.User      // and the answer it gets
	err     error
	ended   bool
	result  groupcommit.Result
}

// errAbandoned is what an operation waiting at CreateUserRows gets when its batch fails
// meanwhile: the batch is rolled back, and run again.
var errAbandoned = errors.New("payments: the batch failed while this write waited")

// turnQuerier is an operation's statements when its batch runs in turns.
type turnQuerier struct {
	batchQuerier
	t *turns
	i int
}

// CreateUserRows hands the turn back and waits for the batch's users to be written.
func (q turnQuerier) CreateUserRows(_ context.Context, u store.NewUserRows) (queries.User, error) {
	op := &q.t.ops[q.i]
	op.waiting, op.rows = true, u
	q.t.yield <- q.i
	<-op.resume
	return op.row, op.err
}

// DeleteExpiredIdempotencyKey keeps the key for the batch's end (writeIdempotency).
func (q turnQuerier) DeleteExpiredIdempotencyKey(_ context.Context, p queries.DeleteExpiredIdempotencyKeyParams) error {
	q.b.expired = append(q.b.expired, p)
	return nil
}

// CreateIdempotencyRecord keeps the record for the batch's end (writeIdempotency).
func (q turnQuerier) CreateIdempotencyRecord(_ context.Context, p queries.CreateIdempotencyRecordParams) error {
	q.b.records = append(q.b.records, p)
	return nil
}

// writeIdempotency writes the idempotency records the operations of b stored, the
// expired records of their keys deleted first.
func (b *pgBatch) writeIdempotency(ctx context.Context, a pgqueries.Adapter) error {
	if len(b.expired) > 0 {
		if err := a.DeleteExpiredIdempotencyKeys(ctx, b.expired); err != nil {
			return err
		}
	}
	if len(b.records) > 0 {
		return a.CreateIdempotencyRecords(ctx, b.records)
	}
	return nil
}

// runInTurns runs the operations of b in turns (see above) and returns how many
// succeeded: all of them, or an error (errOpFailed, or the database's retryable one).
func (st *Store) runInTurns(ctx context.Context, a pgqueries.Adapter, q batchQuerier, b *pgBatch) (kept int, err error) {
	t := &turns{yield: make(chan int), ops: make([]turn, len(b.ops))}
	// hand gives the turn to operation i (start: its first) and takes it back.
	hand := func(i int, start bool) {
		op := &t.ops[i]
		if start {
			op.resume = make(chan struct{}, 1)
			go func() {
				r := b.ops[i].Run(turnQuerier{batchQuerier: q, t: t, i: i})
				op.result, op.ended = r, true
				t.yield <- i
			}()
		} else {
			op.waiting = false
			op.resume <- struct{}{}
		}
		<-t.yield
		if op.ended && !op.result.OK() && err == nil {
			if r := op.result; r.Err != nil && retryable(r.Err) {
				err = r.Err
			} else {
				err = errOpFailed
			}
		}
	}
	// However the batch ends, every operation it started has ended when it returns.
	defer func() {
		for i := range t.ops {
			for t.ops[i].waiting {
				t.ops[i].row, t.ops[i].err = queries.User{}, errAbandoned
				hand(i, false)
			}
		}
	}()
	for i := range b.ops {
		if err != nil {
			return 0, err
		}
		if b.take(i) {
			hand(i, true)
		}
	}
	for err == nil {
		var waiting []int
		for i := range t.ops {
			if t.ops[i].waiting {
				waiting = append(waiting, i)
			}
		}
		if len(waiting) == 0 {
			break
		}
		if ferr := createUsers(ctx, a, t, waiting); ferr != nil {
			if retryable(ferr) {
				return 0, ferr
			}
			return 0, errOpFailed
		}
		for _, i := range waiting {
			hand(i, false)
		}
	}
	if err != nil {
		return 0, err
	}
	if werr := b.writeIdempotency(ctx, a); werr != nil {
		if retryable(werr) {
			return 0, werr
		}
		return 0, errOpFailed
	}
	for i := range t.ops {
		if b.run[i] {
			b.results[i] = t.ops[i].result
			kept++
		}
	}
	return kept, nil
}

// createUsers writes the users the operations waiting wait for, one platform after
// another in the order of their ids (so that instances lock platforms in one order),
// each platform's users in the order of their operations, and gives each operation its
// answer: its user as stored, or sql.ErrNoRows when the platform does not exist. An error
// is the statement's, which aborted the transaction.
func createUsers(ctx context.Context, a pgqueries.Adapter, t *turns, waiting []int) error {
	byPlatform := slices.Clone(waiting)
	slices.SortStableFunc(byPlatform, func(i, j int) int {
		return cmp.Compare(t.ops[i].rows.User.PlatformID, t.ops[j].rows.User.PlatformID)
	})
	for len(byPlatform) > 0 {
		platform := t.ops[byPlatform[0]].rows.User.PlatformID
		n := 1
		for n < len(byPlatform) && t.ops[byPlatform[n]].rows.User.PlatformID == platform {
			n++
		}
		group := byPlatform[:n]
		byPlatform = byPlatform[n:]
		if len(group) == 1 {
			op := &t.ops[group[0]]
			op.row, op.err = a.CreateUserRows(ctx, op.rows)
			if op.err != nil && !errors.Is(op.err, sql.ErrNoRows) {
				return op.err
			}
			continue
		}
		users := make([]store.NewUserRows, len(group))
		for k, i := range group {
			users[k] = t.ops[i].rows
		}
		rows, err := a.CreateUsersRows(ctx, platform, users)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		for k, i := range group {
			if err != nil {
				t.ops[i].err = err
			} else {
				t.ops[i].row = rows[k]
			}
		}
	}
	return nil
}
