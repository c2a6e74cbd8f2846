package postgres

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/platform-payments/payments/internal/store"
	"github.com/platform-payments/payments/internal/store/groupcommit"
	"github.com/platform-payments/payments/internal/store/postgres/pgqueries"
	"github.com/platform-payments/payments/queries"
)

// A batch run without savepoints runs its operations in turns, in rounds: each operation
// in a goroutine of its own, one at a time, and each statement an operation runs is
// queued rather than sent. When every operation that may go on has queued its next
// statement (or ended, or waits at CreateUserRows), the round's statements go to the
// server together, in one pgx.Batch (one round trip, and one write and read of the
// connection, where each statement cost its own), and each operation in turn reads its
// result and goes on to its next statement. The transaction's BEGIN rides in the first
// round, and its COMMIT in the last, with the batch's events and idempotency records.
//
// Which statements may share a round (store.WriteOptions.Interleave): an operation
// marked as interleavable runs beside the other marked operations of other keys; one
// unmarked runs alone, as it would one by one: no statement of another operation runs
// between its first and its end. Operations keep the batch's order wherever they could
// conflict: one held back by another sends its first statement in the round after the
// other's last.
//
// An operation that reaches CreateUserRows waits there while the others go on. Once
// nothing else is left to send, the users they create are written together, one
// CountNewUsers and one CreateUsersRows per platform, and each waiting operation goes on
// from there. The batch is then as if its creates had each run in a transaction of its
// own in READ COMMITTED, as they did before group commit: what a create reads before its
// CreateUserRows may since have been changed by another operation of the batch. A write
// that calls CreateUserRows therefore takes no lock before it (store.Querier says so):
// an operation's locks do not hold back the others of its own transaction.
//
// Any failure rolls the batch back, to be run again one by one with savepoints
// (errOpFailed), or whole when the database aborted it (a retryable error): so a record
// whose key another instance stored first fails its own operation alone, as
// CreateIdempotencyRecord would have.

// turnState is where an operation of a batch run in turns is.
type turnState uint8

const (
	notStarted turnState = iota
	queued               // its statement waits for its round
	parked               // at CreateUserRows, for the batch's users to be written
	answered             // its CreateUserRows answered, to go on
	ended
)

// turns is the state of a batch run in turns. Only one of its goroutines runs at a time:
// the runner, or the one operation it handed the turn to, which hands it back through
// yield when it has queued a statement, waits at CreateUserRows, or has ended.
type turns struct {
	yield chan int
	ops   []turn
	// br is the results of the round being read, in the order of its statements.
	br pgx.BatchResults
	// failed, once set, is what every statement queued or run afterwards returns: the
	// batch is being abandoned.
	failed error
}

// turn is an operation's part of turns.
type turn struct {
	resume chan struct{}
	state  turnState
	// run is the operation, run in its goroutine with its statements.
	run func(q pgqueries.Adapter) groupcommit.Result
	// interleaves and key are its store.Interleaving.
	interleaves bool
	key         string
	// its queued statement, and the statements it queued to go just before it without
	// reading their answers (CreateBankAccountTakingDefault's lock: pre)
	sql  string
	args []any
	pre  []statement
	// what it creates (parked) and the answer it gets
	rows store.NewUserRows
	row  queries.User
	err  error

	result    groupcommit.Result
	abandoned bool // it ended because its batch failed
}

// statement is a statement queued for a round; row: a pre statement that must find a row
// (capture).
type statement struct {
	sql  string
	args []any
	row  bool
}

// errAbandoned is what an operation's statement or CreateUserRows returns when its batch
// failed meanwhile: the batch is rolled back, and run again.
var errAbandoned = errors.New("payments: the batch failed while this write waited")

// roundSent, for tests, is called with each round before it is sent.
var roundSent atomic.Pointer[func(*pgx.Batch)]

// turnDB is an operation's connection when its batch runs in turns: each statement is
// queued for the next round, and its result read from that round's.
type turnDB struct {
	t *turns
	i int
}

// queue queues the statement and hands the turn back until the statement's round is
// being read; an error is the abandoned batch's.
func (d turnDB) queue(_ context.Context, sql string, args []any) error {
	if d.t.failed != nil {
		return d.t.failed
	}
	op := &d.t.ops[d.i]
	op.state, op.sql, op.args = queued, sql, args
	d.t.yield <- d.i
	<-op.resume
	return d.t.failed
}

func (d turnDB) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	if err := d.queue(ctx, sql, args); err != nil {
		return pgconn.CommandTag{}, err
	}
	return d.t.br.Exec()
}

func (d turnDB) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	if err := d.queue(ctx, sql, args); err != nil {
		return nil, err
	}
	return d.t.br.Query()
}

func (d turnDB) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	if err := d.queue(ctx, sql, args); err != nil {
		return errRow{err}
	}
	return d.t.br.QueryRow()
}

// errRow is a row whose Scan fails with err.
type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

// turnQuerier is an operation's statements when its batch runs in turns.
type turnQuerier struct {
	batchQuerier
	t *turns
	i int
}

// CreateUserRows hands the turn back and waits for the batch's users to be written.
func (q turnQuerier) CreateUserRows(_ context.Context, u store.NewUserRows) (queries.User, error) {
	if q.t.failed != nil {
		return queries.User{}, q.t.failed
	}
	op := &q.t.ops[q.i]
	op.state, op.rows = parked, u
	q.t.yield <- q.i
	<-op.resume
	return op.row, op.err
}

// CreateBankAccountTakingDefault sends the lock of the user's row, the clearing of its
// default when asked, and the insert, which reads whether the user has a default account
// itself, in one round, in that order: each statement runs once the one before has ended,
// in a snapshot of its own, as if it were sent after its answer. A lock of no row (no such
// user) or refused (a deadlock) fails the round, and the insert never answers without it.
// Add Bank Account in one round trip, where it took two.
func (q turnQuerier) CreateBankAccountTakingDefault(ctx context.Context, p queries.CreateBankAccountParams, asked bool) (queries.BankAccount, error) {
	if q.t.failed != nil {
		return queries.BankAccount{}, q.t.failed
	}
	pre := pgqueries.New(capture{&q.t.ops[q.i]})
	if _, err := pre.LockUserForUpdate(ctx, p.UserID); err != nil {
		return queries.BankAccount{}, err
	}
	if asked {
		if err := pre.ClearDefaultAccount(ctx, p.UserID); err != nil {
			return queries.BankAccount{}, err
		}
	}
	return q.InsertBankAccountTakingDefault(ctx, p, asked)
}

// capture queues each statement run on it as the operation's pre statement, to go with
// its next (queued) statement, and answers nothing: for a statement whose answer the
// operation does not read. One run as a row's read (QueryRow: a lock) must find its row,
// or the round fails; one run as Exec may change none.
type capture struct{ op *turn }

func (c capture) Exec(_ context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	c.op.pre = append(c.op.pre, statement{sql: sql, args: args})
	return pgconn.CommandTag{}, nil
}

func (c capture) Query(context.Context, string, ...any) (pgx.Rows, error) {
	return nil, errors.New("payments: a query's rows cannot go unread")
}

func (c capture) QueryRow(_ context.Context, sql string, args ...any) pgx.Row {
	c.op.pre = append(c.op.pre, statement{sql: sql, args: args, row: true})
	return errRow{nil}
}

// DeleteExpiredIdempotencyKey keeps the key for the batch's end.
func (q turnQuerier) DeleteExpiredIdempotencyKey(_ context.Context, p queries.DeleteExpiredIdempotencyKeyParams) error {
	q.b.expired = append(q.b.expired, p)
	return nil
}

// DeleteExpiredIdempotencyRecords keeps the purge for the batch's end, where it runs once
// (the latest time any operation asked for), beside the records.
func (q turnQuerier) DeleteExpiredIdempotencyRecords(_ context.Context, notAfter string) (int64, error) {
	q.b.purge = max(q.b.purge, notAfter)
	return 0, nil
}

// CreateIdempotencyRecord keeps the record for the batch's end.
func (q turnQuerier) CreateIdempotencyRecord(_ context.Context, p queries.CreateIdempotencyRecordParams) error {
	q.b.records = append(q.b.records, p)
	return nil
}

// hand gives the turn to operation i (its first, when it has not started) and takes it
// back.
func (t *turns) hand(i int) {
	op := &t.ops[i]
	if op.state == notStarted {
		op.resume = make(chan struct{}, 1)
		op.state = queued // until it says otherwise
		go func() {
			r := op.run(pgqueries.Over(turnDB{t: t, i: i}))
			op.result, op.state = r, ended
			t.yield <- i
		}()
	} else {
		op.resume <- struct{}{}
	}
	<-t.yield
}

// blocks reports whether operation j, earlier in the batch than i, keeps i from going on:
// it has started or may start, has not ended, does not wait at CreateUserRows, and the
// two may conflict.
func (t *turns) blocks(j, i int) bool {
	a, b := &t.ops[j], &t.ops[i]
	if a.state == ended || a.state == parked {
		return false
	}
	return !a.interleaves || !b.interleaves || a.key != "" && a.key == b.key
}

// free reports whether operation i may go on now.
func (t *turns) free(i int) bool {
	for j := range i {
		if t.blocks(j, i) {
			return false
		}
	}
	return true
}

// abandon ends every operation that has started and not ended: its statements and
// CreateUserRows fail with errAbandoned from now on.
func (t *turns) abandon() {
	t.failed = errAbandoned
	for i := range t.ops {
		for op := &t.ops[i]; op.state != notStarted && op.state != ended; {
			op.row, op.err, op.abandoned = queries.User{}, errAbandoned, true
			t.hand(i)
		}
	}
}

// runTurns runs the operations of b in turns on conn, in one transaction it begins and
// commits, and returns how many it kept (all that ran, or none and an error: errOpFailed,
// or the database's) and whether the batch's events made deliveries due. With a
// BeforeCommit hook the COMMIT waits for it, in a round of its own.
func (st *Store) runTurns(ctx context.Context, conn *pgx.Conn, b *pgBatch) (kept int, due bool, err error) {
	t := &turns{yield: make(chan int), ops: make([]turn, len(b.Ops))}
	for i, op := range b.Ops {
		if key, ok := op.Interleaving(); ok {
			t.ops[i].interleaves, t.ops[i].key = true, key
		}
		t.ops[i].run = func(a pgqueries.Adapter) groupcommit.Result {
			return op.Run(turnQuerier{batchQuerier: batchQuerier{Adapter: a, b: b}, t: t, i: i})
		}
	}
	// The first round begins the transaction.
	if err := t.rounds(conn, b, []string{"BEGIN"}, nil); err != nil {
		if errors.Is(err, errOpFailed) && len(b.Ops) == 1 && !t.ops[0].abandoned {
			// A batch of one that failed by itself: its failure is its result, and
			// nothing is kept.
			b.Results[0] = t.ops[0].result
			return 0, false, nil
		}
		return 0, false, err
	}
	for i := range b.Ops {
		if b.Runs(i) {
			b.Results[i] = t.ops[i].result
			kept++
		}
	}
	if kept == 0 {
		return 0, false, nil // nothing to keep: the caller rolls back
	}
	// The last round: the batch's events and idempotency records, each a statement of
	// its own run as an operation of these turns, and the COMMIT.
	t.ops = t.ops[:0]
	var emitted int64
	if len(b.events) > 0 {
		t.add(func(a pgqueries.Adapter) (err error) {
			emitted, err = a.EmitEvents(ctx, b.events)
			return err
		})
	}
	if len(b.expired) > 0 {
		t.add(func(a pgqueries.Adapter) error { return a.DeleteExpiredIdempotencyKeys(ctx, b.expired) })
	}
	if b.purge != "" {
		t.add(func(a pgqueries.Adapter) error {
			_, err := a.DeleteExpiredIdempotencyRecords(ctx, b.purge)
			return err
		})
	}
	if len(b.records) > 0 {
		t.add(func(a pgqueries.Adapter) error { return a.CreateIdempotencyRecords(ctx, b.records) })
	}
	commit := []string{"COMMIT"}
	hook := st.beforeCommit.Load()
	if hook != nil {
		commit = nil
	}
	if err := t.rounds(conn, nil, nil, commit); err != nil {
		return 0, false, err
	}
	if hook != nil {
		if err := (*hook)(ctx, execer{conn}); err != nil {
			return 0, false, fmt.Errorf("payments: commit: %w", err)
		}
		if _, err := conn.Exec(ctx, "COMMIT"); err != nil {
			return 0, false, fmt.Errorf("payments: commit: %w", err)
		}
	}
	return kept, emitted > 0, nil
}

// rounds runs the operations of t to their ends, in rounds; first goes before the first
// round's statements, and last after the last round's (each checked: an error is the
// transaction's). b is the batch whose operations t runs, or nil when t's operations are
// its own statements (add: taken whatever their contexts, one statement each, which only
// the database judges), and then last goes in their round. An operation that fails ends the
// rounds with errOpFailed, or with its error when the database aborted the
// transaction; every operation it started has then ended too.
func (t *turns) rounds(conn *pgx.Conn, b *pgBatch, first, last []string) (err error) {
	ctx := context.Background()
	defer func() {
		if err != nil {
			t.abandon()
		}
	}()
	for {
		var batch pgx.Batch
		for _, s := range first {
			batch.Queue(s)
		}
		var sent []int   // the operations whose statements the round carries
		waiting := false // an operation is parked at CreateUserRows
		for i := range t.ops {
			op := &t.ops[i]
			if op.state == ended || !t.free(i) {
				waiting = waiting || op.state == parked
				continue
			}
			switch op.state {
			case notStarted:
				if b != nil && !b.Take(i) {
					op.state = ended
					continue
				}
				t.hand(i)
			case answered:
				t.hand(i)
			}
			if err := t.check(i); err != nil {
				return err
			}
			switch op.state {
			case queued:
				for _, p := range op.pre {
					batch.Queue(p.sql, p.args...)
				}
				batch.Queue(op.sql, op.args...)
				sent = append(sent, i)
			case parked:
				waiting = true
			}
		}
		done := len(sent) == 0 && !waiting
		if b == nil && len(sent) > 0 && len(sent) == t.unended() {
			// t's operations are statements of its own, one each (add): last rides in
			// their round, a round trip less. A statement that fails there aborts the
			// transaction, and the server skips what follows it in the round (one Sync
			// ends a pgx.Batch): a COMMIT behind it commits nothing (a key stored
			// meanwhile: TestGroupCommit/ErrKeyStoredMeanwhileFailsAlone).
			done = true
		}
		if done {
			for _, s := range last {
				batch.Queue(s)
			}
		}
		if len(sent) == 0 && waiting {
			if err := t.createUsers(conn, first); err != nil {
				if retryable(err) {
					return err
				}
				return errOpFailed
			}
			first = nil
			continue
		}
		if batch.Len() > 0 {
			if err := t.send(ctx, conn, &batch, first, sent, done, last); err != nil {
				return err
			}
		}
		first = nil
		if done {
			return nil
		}
	}
}

// unended is how many of t's operations have not ended.
func (t *turns) unended() int {
	n := 0
	for i := range t.ops {
		if t.ops[i].state != ended {
			n++
		}
	}
	return n
}

// send sends a round and reads its results: first's, then each operation's in turn (its
// pre statements', then its own, with which it goes on to its next statement), then
// last's.
func (t *turns) send(ctx context.Context, conn *pgx.Conn, batch *pgx.Batch, first []string, sent []int, done bool, last []string) (err error) {
	if hook := roundSent.Load(); hook != nil {
		(*hook)(batch)
	}
	t.br = conn.SendBatch(ctx, batch)
	defer func() {
		if cerr := t.br.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("payments: batch transaction: %w", cerr)
		}
		t.br = nil
	}()
	for _, s := range first {
		if _, err := t.br.Exec(); err != nil {
			return fmt.Errorf("payments: %s: %w", s, err)
		}
	}
	for _, i := range sent {
		op := &t.ops[i]
		for _, p := range op.pre {
			// A lock of no row is the lock refused: the batch run again one by one
			// gives the operation its own answer.
			tag, err := t.br.Exec()
			if err != nil && retryable(err) {
				return err
			}
			if err != nil || p.row && tag.RowsAffected() == 0 {
				return errOpFailed
			}
		}
		op.pre = op.pre[:0]
		t.hand(i)
		if err := t.check(i); err != nil {
			return err
		}
	}
	if done {
		for _, i := range sent {
			if t.ops[i].state != ended {
				// An operation of a round that carries last went on to a second statement,
				// which add's operations never do.
				return fmt.Errorf("payments: a statement of a batch's end queued another after it")
			}
		}
		for _, s := range last {
			tag, err := t.br.Exec()
			if err == nil && tag.String() != s {
				err = fmt.Errorf("the server answered %s", tag) // a COMMIT that rolled back
			}
			if err != nil {
				return fmt.Errorf("payments: %s: %w", s, err)
			}
		}
	}
	return nil
}

// check returns the error that ends the rounds when operation i has ended without
// success: the database's when it aborted the
// transaction to break a deadlock or a serialization failure (the batch is run again
// whole), else errOpFailed.
func (t *turns) check(i int) error {
	op := &t.ops[i]
	if op.state != ended || op.result.OK() {
		return nil
	}
	if r := op.result; r.Err != nil && retryable(r.Err) {
		return r.Err
	}
	return errOpFailed
}

// add adds to t an operation of the batch's own: fn, whose statements run in turns with
// those of t's other operations.
func (t *turns) add(fn func(a pgqueries.Adapter) error) {
	t.ops = append(t.ops, turn{interleaves: true, run: func(a pgqueries.Adapter) groupcommit.Result {
		return groupcommit.Result{Err: fn(a)}
	}})
}

// createUsers writes the users the operations parked at CreateUserRows wait for, all in
// one round trip (after first, the transaction's BEGIN when it is still to be sent): for
// each platform, in the order of their ids (so that instances lock platforms in one
// order), CountNewUsers and WriteCountedUsers, or CreateUserRows for one user; each
// platform's users in the order of their operations. Each operation gets its answer: its
// user as stored, or sql.ErrNoRows when the platform does not exist. An error is a
// statement's, which aborted the transaction.
func (t *turns) createUsers(conn *pgx.Conn, first []string) error {
	ctx := context.Background()
	var byPlatform []int
	for i := range t.ops {
		if t.ops[i].state == parked {
			byPlatform = append(byPlatform, i)
			t.ops[i].state = answered
		}
	}
	slices.SortStableFunc(byPlatform, func(i, j int) int {
		return cmp.Compare(t.ops[i].rows.User.PlatformID, t.ops[j].rows.User.PlatformID)
	})
	// w runs the statements, as operations of its own each, in one round.
	w := &turns{yield: make(chan int)}
	var check []func() error // after the round: the statements' errors, given out
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
			w.add(func(a pgqueries.Adapter) error {
				op.row, op.err = a.CreateUserRows(ctx, op.rows)
				return nil
			})
			check = append(check, func() error {
				if op.err != nil && !errors.Is(op.err, sql.ErrNoRows) {
					return op.err
				}
				return nil
			})
			continue
		}
		users := make([]store.NewUserRows, len(group))
		for k, i := range group {
			users[k] = t.ops[i].rows
		}
		var counted error
		var rows []queries.User
		var written error
		w.add(func(a pgqueries.Adapter) error {
			_, counted = a.Q.CountNewUsers(ctx, pgqueries.CountNewUsersParams{PlatformID: platform, Count: int64(len(users))})
			return nil
		})
		w.add(func(a pgqueries.Adapter) error {
			rows, written = a.WriteCountedUsers(ctx, platform, users)
			return nil
		})
		check = append(check, func() error {
			switch {
			case errors.Is(counted, sql.ErrNoRows): // no platform: nothing written
				for _, i := range group {
					t.ops[i].err = sql.ErrNoRows
				}
			case counted != nil:
				return counted
			case written != nil:
				return written
			default:
				for k, i := range group {
					t.ops[i].row = rows[k]
				}
			}
			return nil
		})
	}
	if err := w.rounds(conn, nil, first, nil); err != nil {
		return err
	}
	for _, c := range check {
		if err := c(); err != nil {
			return err
		}
	}
	return nil
}
