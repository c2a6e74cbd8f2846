// Package groupcommit is the group commit of the store's engines: every write operation
// goes to one committer goroutine, which takes the operations waiting together as a batch,
// has its engine run them in one transaction and commit once (one flush of the log for
// all of them), and only then answers each caller. What is common to the engines is here:
// the queue, the batches, an operation's result (its error, or the value its fn panicked
// with, raised again in the caller's goroutine), savepoints that let an operation fail
// alone, and the counts of commits. How a batch's transaction runs is the engine's.
package groupcommit

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/platform-payments/payments/internal/store"
)

// Op is one write operation waiting for, or in, its batch.
type Op struct {
	ctx  context.Context
	fn   func(ctx context.Context, q store.Querier) error
	done chan Result // buffered: the committer never waits for the caller
}

// GivenUp returns the error of the operation's context when its caller gave up before
// the operation ran: an operation given up before its turn is never run.
func (op *Op) GivenUp() error { return op.ctx.Err() }

// Run runs the operation's fn with q, with a context carrying the caller's values but not
// its cancellation: a caller that gives up while its operation runs must not interrupt
// the statements of its batch. A panic becomes the result.
func (op *Op) Run(q store.Querier) (r Result) {
	defer func() {
		if p := recover(); p != nil { // panic(nil) too, since Go 1.21
			r = Result{Panicked: true, Panic: p}
		}
	}()
	return Result{Err: op.fn(context.WithoutCancel(op.ctx), q)}
}

// Result is what became of a write operation: its error, or the value its fn panicked
// with (raised again in the caller's goroutine as the same value, so that a recover there
// sees what it would have seen without the committer).
type Result struct {
	Err      error
	Panicked bool
	Panic    any
}

// OK reports whether the operation succeeded: its change is to be kept.
func (r Result) OK() bool { return r.Err == nil && !r.Panicked }

// Committer gathers write operations into batches and runs each with its engine's
// function, one batch at a time.
type Committer struct {
	max     int
	run     func(batch []*Op) []Result
	ops     chan *Op // unbuffered: a caller waiting to send is an operation waiting
	closing chan struct{}
	once    sync.Once
	stopped chan struct{} // closed when the goroutine has returned; nil until it starts

	waiting      atomic.Int64
	commits      atomic.Int64
	committedOps atomic.Int64
	// batches counts committed transactions by size, in the buckets of
	// store.CommitBatchBounds: 1, 2, 3-4, 5-8, … operations.
	batches [store.BatchBuckets]atomic.Int64
}

// New returns a committer whose batches carry at most max operations (at most
// store.MaxBatch) and are run by run: it runs the batch's operations in one transaction
// and returns their results, one per operation, in order; an operation whose result is
// OK was committed. Start starts it.
func New(max int, run func(batch []*Op) []Result) *Committer {
	return &Committer{max: min(max, store.MaxBatch), run: run, ops: make(chan *Op), closing: make(chan struct{})}
}

// Start starts the committer goroutine; Stop stops it.
func (c *Committer) Start() {
	c.stopped = make(chan struct{})
	go c.loop()
}

// Stop makes new writes fail with store.ErrClosed, lets the batch in progress finish and
// waits for the committer to return. It may be called again, and before Start.
func (c *Committer) Stop() {
	c.once.Do(func() { close(c.closing) })
	if c.stopped != nil {
		<-c.stopped
	}
}

// Write runs fn as one write operation of a batch and returns once the batch is over:
// nil means its change is committed. A ctx done before the operation's turn drops it
// (Write returns ctx.Err()); once its turn comes it runs to the end, whatever ctx does.
// After Stop, Write returns store.ErrClosed.
func (c *Committer) Write(ctx context.Context, fn func(ctx context.Context, q store.Querier) error) error {
	op := &Op{ctx: ctx, fn: fn, done: make(chan Result, 1)}
	c.waiting.Add(1)
	select {
	case c.ops <- op:
		c.waiting.Add(-1)
	case <-ctx.Done():
		c.waiting.Add(-1)
		return ctx.Err()
	case <-c.closing:
		c.waiting.Add(-1)
		return store.ErrClosed
	}
	// Taken: the committer answers every operation it takes, once its batch is over.
	r := <-op.done
	if r.Panicked {
		panic(r.Panic)
	}
	return r.Err
}

// loop takes the first operation waiting and every other one waiting at that moment (up
// to the committer's max), runs them as one batch, answers them and starts again: the
// commit of one batch is the time in which the next one gathers.
func (c *Committer) loop() {
	defer close(c.stopped)
	batch := make([]*Op, 0, c.max)
	for {
		select { // closing wins over operations still waiting: they get store.ErrClosed
		case <-c.closing:
			return
		default:
		}
		select {
		case op := <-c.ops:
			batch = append(batch[:0], op)
		case <-c.closing:
			return
		}
	gather:
		for len(batch) < c.max {
			select {
			case op := <-c.ops:
				batch = append(batch, op)
			default:
				break gather
			}
		}
		c.answer(batch)
		clear(batch)
	}
}

// answer runs the batch and gives each operation its result, even when run panics (then
// the panic goes on, after every caller has been answered with it).
func (c *Committer) answer(batch []*Op) {
	var results []Result
	defer func() {
		p := recover()
		for i, op := range batch {
			switch {
			case p != nil:
				op.done <- Result{Panicked: true, Panic: p}
			default:
				op.done <- results[i]
			}
		}
		if p != nil {
			panic(p)
		}
	}()
	results = c.run(batch)
}

// Committed counts a committed transaction that carried n operations (n ≥ 1).
func (c *Committer) Committed(n int) {
	c.commits.Add(1)
	c.committedOps.Add(int64(n))
	c.batches[store.BatchBucket(n)].Add(1)
}

// Waiting is the number of write operations waiting to be taken into a batch: for tests
// that must know a write is queued.
func (c *Committer) Waiting() int64 { return c.waiting.Load() }

// Stats fills in the commit counts of s.
func (c *Committer) Stats(s *store.Stats) {
	s.Commits = c.commits.Load()
	s.CommittedOps = c.committedOps.Load()
	s.CommitBatches = make([]int64, store.BatchBuckets)
	for i := range s.CommitBatches {
		s.CommitBatches[i] = c.batches[i].Load()
	}
}

// Savepoints is what a batch's transaction does to let one operation fail alone: mark
// where the operation begins, undo what it did, and forget the mark.
type Savepoints interface {
	Savepoint(ctx context.Context) error
	RollbackTo(ctx context.Context) error
	Release(ctx context.Context) error
}

// RunOp runs op on q inside a savepoint of sp (none when sp is nil: the operation is
// alone in its transaction, or the engine undoes the whole transaction when an operation
// fails). The result is the operation's own; txErr reports that a savepoint statement
// failed, so the transaction is no longer one to trust.
func RunOp(ctx context.Context, sp Savepoints, q store.Querier, op *Op) (r Result, txErr error) {
	if sp == nil {
		return op.Run(q), nil
	}
	if err := sp.Savepoint(ctx); err != nil {
		return Result{}, err
	}
	r = op.Run(q)
	if !r.OK() {
		if err := sp.RollbackTo(ctx); err != nil {
			return r, err
		}
	}
	return r, sp.Release(ctx)
}

// Fail gives err to every operation whose change was kept in a transaction that is not
// committed after all (applied), and to the operations from next on, which did not run
// or cannot be trusted. Operations that failed alone keep their own error: nothing of
// theirs was kept either.
func Fail(results []Result, applied []bool, next int, err error) {
	for i := range results {
		if applied[i] || i >= next {
			results[i] = Result{Err: err}
		}
	}
}
