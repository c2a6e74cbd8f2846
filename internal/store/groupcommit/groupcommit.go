// Package groupcommit is the group commit of the store's engines: every write operation
// goes to a committer, whose runners take the operations waiting together as a batch,
// have the engine run them in one transaction and commit once (one flush of the log for
// all of them), and only then answer each caller. What is common to the engines is here:
// the queue, the batches, an operation's result (its error, or the value its fn panicked
// with, raised again in the caller's goroutine), savepoints that let an operation fail
// alone, and the counts of commits. How a batch's transaction runs is the engine's.
package groupcommit

import (
	"context"
	"database/sql"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/platform-payments/payments/internal/store"
	"github.com/platform-payments/payments/queries"
)

// Op is one write operation waiting for, or in, its batch.
type Op struct {
	ctx  context.Context
	fn   func(ctx context.Context, q store.Querier) error
	opts store.WriteOptions
	// user and then are a CreateUser operation's (fn is nil): what makes the rows of the
	// user it writes first, and what it does with the user as stored.
	user  func() store.NewUserRows
	then  func(ctx context.Context, q store.Querier, user queries.User) error
	done  chan Result // buffered: the committer never waits for the caller
	taken bool        // in a batch (guarded by the committer's mu)
}

// Creates reports whether the operation is a CreateUser operation.
func (op *Op) Creates() bool { return op.user != nil }

// NewUser makes the rows of the user a CreateUser operation writes first: when its turn
// comes, so that the time they carry is read then.
func (op *Op) NewUser() store.NewUserRows { return op.user() }

// Key is the operation's lock key (store.WriteOptions.LockKey).
func (op *Op) Key() string { return op.opts.LockKey }

// GivenUp returns the error of the operation's context when its caller gave up before
// the operation ran: an operation given up before its turn is never run.
func (op *Op) GivenUp() error { return op.ctx.Err() }

// Run runs the operation with q (a CreateUser operation writes its user with
// q.CreateUserRows first), with a context carrying the caller's values but not its
// cancellation: a caller that gives up while its operation runs must not interrupt the
// statements of its batch. A panic becomes the result.
func (op *Op) Run(q store.Querier) Result {
	if op.user == nil {
		return op.run(func(ctx context.Context) error { return op.fn(ctx, q) })
	}
	return op.run(func(ctx context.Context) error {
		user, err := q.CreateUserRows(ctx, op.user())
		if err != nil {
			return err
		}
		return op.then(ctx, q, user)
	})
}

// RunCreated runs a CreateUser operation whose user the engine has written already, as
// Run would have: created is the user as stored, or err what writing it returned.
func (op *Op) RunCreated(q store.Querier, created queries.User, err error) Result {
	return op.run(func(ctx context.Context) error {
		if err != nil {
			return err
		}
		return op.then(ctx, q, created)
	})
}

// run runs f as the operation, its panic as the result.
func (op *Op) run(f func(ctx context.Context) error) (r Result) {
	defer func() {
		if p := recover(); p != nil { // panic(nil) too, since Go 1.21
			r = Result{Panicked: true, Panic: p}
		}
	}()
	return Result{Err: f(context.WithoutCancel(op.ctx))}
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
// function, on one or more runners at once. Runners never run at once two operations of
// one lock key (store.WriteOptions.LockKey): the operations of a key that wait while a
// batch of it runs gather into the next batch, which one commit covers, rather than each
// waiting in a batch of its own for the lock the running batch holds. When batches run
// side by side, a batch carries the operations of one key at most (and any without one),
// so that it holds one such lock: batches of other keys, here or in another process,
// never wait for it, and batches never wait for each other in a cycle. At most maxKeyless
// batches that carry operations without a key run at once, so that such operations
// gather into few batches, each sharing its commit among more, one gathering while
// another commits.
type Committer struct {
	max, runners int
	run          func(batch []*Op) []Result

	// gatherBelow and gatherWait: a batch of fewer operations than gatherBelow, taken
	// while more were waiting, waits gatherWait for more before it runs (Gather).
	gatherBelow int
	gatherWait  time.Duration

	mu      sync.Mutex
	ready   sync.Cond           // signalled when an operation may have become takeable
	queue   []*Op               // waiting, oldest first
	busy    map[string]struct{} // the keys of the batches running
	keyless int                 // the batches running that carry operations without a key
	closed  bool
	running sync.WaitGroup

	commits      atomic.Int64
	committedOps atomic.Int64
	// batches counts committed transactions by size, in the buckets of
	// store.CommitBatchBounds: 1, 2, 3-4, 5-8, … operations.
	batches [store.BatchBuckets]atomic.Int64
}

// New returns a committer whose batches carry at most maxOps operations (at most
// store.MaxBatch), run by runners goroutines at once (at least one) with run: it runs the
// batch's operations in one transaction and returns their results, one per operation, in
// order; an operation whose result is OK was committed. Start starts it.
func New(maxOps, runners int, run func(batch []*Op) []Result) *Committer {
	c := &Committer{max: min(maxOps, store.MaxBatch), runners: max(runners, 1), run: run, busy: map[string]struct{}{}}
	c.ready.L = &c.mu
	return c
}

// Gather makes a committer with one runner, under load, wait for more operations before
// it runs a small batch. Under load is when its last batch carried at least below
// operations and it comes back to operations already waiting (they arrived while it ran:
// writes are coming faster than it commits); a batch of fewer than below taken then waits
// wait (time.Sleep: at least wait, longer by the timers' granularity), then takes into
// itself those that came meanwhile. A commit costs a batch the same whatever it carries
// (a flush, the pages written), so a busy committer spends less a write on bigger
// batches. A committer that waited for its batch's first operation, or whose last batch
// was small (few writers: waiting would only delay them), runs at once. Call it before
// Start.
func (c *Committer) Gather(below int, wait time.Duration) {
	if c.runners == 1 {
		c.gatherBelow, c.gatherWait = below, wait
	}
}

// Start starts the runners; Stop stops them.
func (c *Committer) Start() {
	for range c.runners {
		c.running.Add(1)
		go c.loop()
	}
}

// Stop makes new writes, and those still waiting, fail with store.ErrClosed, lets the
// batches in progress finish and waits for the runners to return. It may be called
// again, and before Start.
func (c *Committer) Stop() {
	c.mu.Lock()
	c.closed = true
	for _, op := range c.queue {
		op.done <- Result{Err: store.ErrClosed}
	}
	c.queue = nil
	c.ready.Broadcast()
	c.mu.Unlock()
	c.running.Wait()
}

// Write runs fn as one write operation of a batch and returns once the batch is over:
// nil means its change is committed. A ctx done before the operation is taken into a
// batch drops it (Write returns ctx.Err()); once taken it runs to the end, whatever ctx
// does. After Stop, Write returns store.ErrClosed. opts is the operation's scheduling.
func (c *Committer) Write(ctx context.Context, opts store.WriteOptions, fn func(ctx context.Context, q store.Querier) error) error {
	return c.submit(&Op{ctx: ctx, fn: fn, opts: opts, done: make(chan Result, 1)})
}

// CreateUser is Write for an operation that writes the user whose rows u makes first,
// then runs fn with the user as stored (store.Store.CreateUser).
func (c *Committer) CreateUser(ctx context.Context, opts store.WriteOptions, u func() store.NewUserRows, fn func(ctx context.Context, q store.Querier, user queries.User) error) error {
	return c.submit(&Op{ctx: ctx, user: u, then: fn, opts: opts, done: make(chan Result, 1)})
}

// submit queues op and waits for its result (Write).
func (c *Committer) submit(op *Op) error {
	ctx := op.ctx
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return store.ErrClosed
	}
	c.queue = append(c.queue, op)
	c.ready.Signal()
	c.mu.Unlock()
	var r Result
	select {
	case r = <-op.done:
	case <-ctx.Done():
		c.mu.Lock()
		if !op.taken && !c.closed {
			c.queue = slices.DeleteFunc(c.queue, func(o *Op) bool { return o == op })
			c.mu.Unlock()
			return ctx.Err()
		}
		c.mu.Unlock()
		// Taken: the committer answers every operation it takes, once its batch is over
		// (or closing answered it).
		r = <-op.done
	}
	if r.Panicked {
		panic(r.Panic)
	}
	return r.Err
}

// loop takes a batch, runs it, answers its operations, and starts again, until Stop.
func (c *Committer) loop() {
	defer c.running.Done()
	batch := make([]*Op, 0, c.max)
	last := 0 // the operations the last batch carried
	for {
		var waited bool
		batch, waited = c.take(batch[:0])
		if batch == nil {
			return
		}
		if !waited && last >= c.gatherBelow && len(batch) < c.gatherBelow {
			batch = c.gather(batch)
		}
		last = len(batch)
		c.answer(batch)
		c.mu.Lock()
		if hasKeyless(batch) {
			c.keyless--
		}
		for _, op := range batch {
			delete(c.busy, op.opts.LockKey)
		}
		c.ready.Broadcast()
		c.mu.Unlock()
		clear(batch)
	}
}

// take waits for operations it may take and takes, oldest first, every waiting operation
// whose key no running batch has (up to the committer's max), and when batches run side
// by side, of one key at most, and those without a key only while fewer than maxKeyless
// batches that carry some run; nil once the committer is stopped. waited reports whether
// it had to wait for an operation.
func (c *Committer) take(batch []*Op) (_ []*Op, waited bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for {
		if c.closed {
			return nil, waited
		}
		keep := c.queue[:0]
		key := "" // the batch's one key, when batches run side by side
		for _, op := range c.queue {
			_, busy := c.busy[op.opts.LockKey]
			takeable := op.opts.LockKey == "" && (c.runners == 1 || c.keyless < maxKeyless) ||
				op.opts.LockKey != "" && !busy && (c.runners == 1 || key == "" || op.opts.LockKey == key)
			if len(batch) < c.max && takeable {
				op.taken = true
				batch = append(batch, op)
				if c.runners > 1 && op.opts.LockKey != "" {
					key = op.opts.LockKey
				}
				continue
			}
			keep = append(keep, op)
		}
		clear(c.queue[len(keep):])
		c.queue = keep
		if len(batch) > 0 {
			if hasKeyless(batch) {
				c.keyless++
			}
			for _, op := range batch {
				if op.opts.LockKey != "" {
					c.busy[op.opts.LockKey] = struct{}{}
				}
			}
			return batch, waited
		}
		c.ready.Wait()
		waited = true
	}
}

// gather waits the committer's gatherWait, then adds to batch the operations waiting by
// then, up to the committer's max: with one runner, no other batch runs, so each is
// takeable. Once the committer is stopped, batch is run as it is.
func (c *Committer) gather(batch []*Op) []*Op {
	sleep(c.gatherWait)
	c.mu.Lock()
	defer c.mu.Unlock()
	keyless := hasKeyless(batch)
	n := min(c.max-len(batch), len(c.queue))
	for _, op := range c.queue[:n] {
		op.taken = true
		if op.opts.LockKey != "" {
			c.busy[op.opts.LockKey] = struct{}{}
		}
	}
	batch = append(batch, c.queue[:n]...)
	c.queue = slices.Delete(c.queue, 0, n)
	if !keyless && hasKeyless(batch) {
		c.keyless++
	}
	return batch
}

// Batch is a batch's operations as an engine runs them, their results, and which of them
// had their turn (Take) and are run.
type Batch struct {
	Ops         []*Op
	Results     []Result
	run, turned []bool
}

// NewBatch returns the batch of ops, none of which has had its turn.
func NewBatch(ops []*Op) *Batch {
	n := len(ops)
	return &Batch{Ops: ops, Results: make([]Result, n), run: make([]bool, n), turned: make([]bool, n)}
}

// Take reports whether operation i is to run now: an operation given up before its turn
// (its first) is never run, and gets its context's error; the others are run whatever
// their contexts do meanwhile, and again when the batch is.
func (b *Batch) Take(i int) bool {
	if !b.turned[i] {
		b.turned[i] = true
		if err := b.Ops[i].GivenUp(); err != nil {
			b.Results[i] = Result{Err: err}
			return false
		}
		b.run[i] = true
	}
	return b.run[i]
}

// Turned reports whether operation i has had its turn; Runs, whether it is run.
func (b *Batch) Turned(i int) bool { return b.turned[i] }
func (b *Batch) Runs(i int) bool   { return b.run[i] }

// sleep is time.Sleep, but in tests, which see when a committer gathers.
var sleep = time.Sleep

// maxKeyless is the most batches carrying operations without a key that run at once.
const maxKeyless = 2

// hasKeyless reports whether batch carries an operation without a key.
func hasKeyless(batch []*Op) bool {
	return slices.ContainsFunc(batch, func(op *Op) bool { return op.opts.LockKey == "" })
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
func (c *Committer) Waiting() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return int64(len(c.queue))
}

// Stats fills in the commit counts of s.
func (c *Committer) Stats(s *store.Stats) {
	s.Commits = c.commits.Load()
	s.CommittedOps = c.committedOps.Load()
	s.CommitBatches = make([]int64, store.BatchBuckets)
	for i := range s.CommitBatches {
		s.CommitBatches[i] = c.batches[i].Load()
	}
}

// Execer runs a statement in a batch's transaction: what a test's hook before a COMMIT
// is given (a *sql.Tx or the *sql.Conn the transaction is on).
type Execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
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
