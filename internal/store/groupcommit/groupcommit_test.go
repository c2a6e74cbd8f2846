package groupcommit_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/platform-payments/payments/internal/store"
	"github.com/platform-payments/payments/internal/store/groupcommit"
)

// engine is a committer over no database: a batch runs its operations in order, and the
// test sees each batch's keys.
type engine struct {
	mu      sync.Mutex
	batches [][]string // the keys of each batch run, in the order run
	c       *groupcommit.Committer
}

func newEngine(t *testing.T, runners int) *engine {
	t.Helper()
	return newEngineWith(t, runners, func(*groupcommit.Committer) {})
}

// newEngineWith is newEngine with setup run on the committer before it starts.
func newEngineWith(t *testing.T, runners int, setup func(*groupcommit.Committer)) *engine {
	t.Helper()
	e := &engine{}
	e.c = groupcommit.New(store.MaxBatch, runners, func(batch []*groupcommit.Op) []groupcommit.Result {
		keys := make([]string, len(batch))
		results := make([]groupcommit.Result, len(batch))
		for i, op := range batch {
			keys[i] = op.Key()
			if err := op.GivenUp(); err != nil {
				results[i].Err = err
				continue
			}
			results[i] = op.Run(nil)
		}
		e.mu.Lock()
		e.batches = append(e.batches, keys)
		e.mu.Unlock()
		return results
	})
	setup(e.c)
	e.c.Start()
	t.Cleanup(e.c.Stop)
	return e
}

// write starts a write of key in a goroutine and waits until it waits in the queue
// (want waiting in all), so that writes are queued in the order started.
func (e *engine) write(t *testing.T, key string, want int64, fn func() error) <-chan error {
	t.Helper()
	done, err := e.queue(key, want, fn)
	if err != nil {
		t.Fatal(err)
	}
	return done
}

// queue is write for a goroutine other than the test's, which must not call t.Fatal: it
// returns the error instead.
func (e *engine) queue(key string, want int64, fn func() error) (<-chan error, error) {
	done := make(chan error, 1)
	go func() {
		done <- e.c.Write(context.Background(), store.WriteOptions{LockKey: key}, func(context.Context, store.Querier) error { return fn() })
	}()
	for deadline := time.Now().Add(5 * time.Second); e.c.Waiting() != want; {
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%d writes waiting, want %d", e.c.Waiting(), want)
		}
		time.Sleep(time.Millisecond)
	}
	return done, nil
}

// holding starts a write of key that runs until release is called, and waits until it
// runs.
func (e *engine) holding(t *testing.T, key string) (release func(), done <-chan error) {
	t.Helper()
	started, stop := make(chan struct{}), make(chan struct{})
	d := make(chan error, 1)
	go func() {
		d <- e.c.Write(context.Background(), store.WriteOptions{LockKey: key}, func(context.Context, store.Querier) error { close(started); <-stop; return nil })
	}()
	<-started
	release = sync.OnceFunc(func() { close(stop) })
	t.Cleanup(release)
	return release, d
}

func wait(t *testing.T, done ...<-chan error) {
	t.Helper()
	for _, d := range done {
		if err := <-d; err != nil {
			t.Fatal(err)
		}
	}
}

func ok() error { return nil }

func TestCommitter(t *testing.T) {
	t.Run("OKWaitingGatherIntoOneBatch", func(t *testing.T) {
		// The writes that wait while a batch runs are the next batch, in the order they
		// came.
		e := newEngine(t, 1)
		release, held := e.holding(t, "")
		a := e.write(t, "b", 1, ok)
		b := e.write(t, "", 2, ok)
		c := e.write(t, "a", 3, ok)
		release()
		wait(t, held, a, b, c)
		if want := [][]string{{""}, {"b", "", "a"}}; !equal(e.batches, want) {
			t.Errorf("batches %q, want %q", e.batches, want)
		}
	})

	t.Run("OKSmallBatchesGatherUnderLoad", func(t *testing.T) {
		// Gather(3, …): a batch of fewer than three, taken from writes that waited while
		// a batch of three ran, waits, and takes in the writes that came meanwhile; one
		// taken after waiting for its first write, or after a smaller batch, runs at once.
		var e *engine
		var gathered []time.Duration
		var meanwhile []<-chan error
		restore := groupcommit.SetSleep(func(d time.Duration) {
			// In the runner, which must not call t.Fatal: two writes come while it waits.
			gathered = append(gathered, d)
			for want := int64(1); want <= 2; want++ {
				done, err := e.queue("", want, ok)
				if err != nil {
					t.Error(err)
					return
				}
				meanwhile = append(meanwhile, done)
			}
		})
		e = newEngineWith(t, 1, func(c *groupcommit.Committer) { c.Gather(3, time.Hour) })
		t.Cleanup(restore) // after Stop, which the engine's cleanup runs first
		blocking := func(want int64) (started, stop chan struct{}, done <-chan error) {
			started, stop = make(chan struct{}), make(chan struct{})
			return started, stop, e.write(t, "", want, func() error { close(started); <-stop; return nil })
		}
		release, held := e.holding(t, "") // taken as it came
		xStarted, xStop, x := blocking(1)
		y := e.write(t, "", 2, ok)
		release() // [x y], after a batch of one
		<-xStarted
		pStarted, pStop, p := blocking(1)
		q := e.write(t, "", 2, ok)
		r := e.write(t, "", 3, ok)
		close(xStop) // [p q r]
		<-pStarted
		z := e.write(t, "", 1, ok)
		close(pStop) // [z], after a batch of three: it gathers
		wait(t, held, x, y, p, q, r, z)
		wait(t, meanwhile...)
		if want := [][]string{{""}, {"", ""}, {"", "", ""}, {"", "", ""}}; !equal(e.batches, want) {
			t.Errorf("batches %q, want %q", e.batches, want)
		}
		if !slices.Equal(gathered, []time.Duration{time.Hour}) {
			t.Errorf("gathered for %v, want once for the hour Gather was given", gathered)
		}
	})

	t.Run("OKSideBySideBatchesOfOneKey", func(t *testing.T) {
		// Batches that run side by side carry one key each, with the writes of none.
		e := newEngine(t, 2)
		releaseX, heldX := e.holding(t, "x")
		releaseY, heldY := e.holding(t, "y")
		a := e.write(t, "b", 1, ok)
		b := e.write(t, "", 2, ok)
		c := e.write(t, "a", 3, ok)
		d := e.write(t, "b", 4, ok)
		releaseX()
		wait(t, heldX, a, b, c, d)
		releaseY()
		wait(t, heldY)
		e.mu.Lock()
		defer e.mu.Unlock()
		if want := [][]string{{"x"}, {"b", "", "b"}, {"a"}, {"y"}}; !equal(e.batches, want) {
			t.Errorf("batches %q, want %q", e.batches, want)
		}
	})

	t.Run("OKRunnersShareTheWaiting", func(t *testing.T) {
		// Two runners: while one holds a batch, the other takes a write of another key
		// at once, and a write of the held key waits for the held batch to end.
		e := newEngine(t, 2)
		release, held := e.holding(t, "p1")
		other := make(chan error, 1)
		go func() {
			other <- e.c.Write(context.Background(), store.WriteOptions{LockKey: "p2"}, func(context.Context, store.Querier) error { return nil })
		}()
		select {
		case err := <-other:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("a write of another key waited for the held batch")
		}
		same := e.write(t, "p1", 1, ok)
		time.Sleep(20 * time.Millisecond)
		if n := e.c.Waiting(); n != 1 {
			t.Fatalf("%d writes waiting, want the one of the held key", n)
		}
		release()
		wait(t, held, same)
	})

	t.Run("OKFewBatchesWithoutAKey", func(t *testing.T) {
		// Four runners: two batches carrying writes without a key run at once, no more;
		// a third such write waits for one of them, and a keyed write does not wait.
		e := newEngine(t, 4)
		release1, held1 := e.holding(t, "")
		release2, held2 := e.holding(t, "")
		third := e.write(t, "", 1, ok)
		time.Sleep(20 * time.Millisecond)
		if n := e.c.Waiting(); n != 1 {
			t.Fatalf("%d writes waiting, want the third without a key", n)
		}
		if err := e.c.Write(context.Background(), store.WriteOptions{LockKey: "k"}, func(context.Context, store.Querier) error { return nil }); err != nil {
			t.Fatal(err)
		}
		if n := e.c.Waiting(); n != 1 {
			t.Fatalf("%d writes waiting, want the third without a key", n)
		}
		release1()
		wait(t, held1, third)
		release2()
		wait(t, held2)
	})

	t.Run("OKOneKeyNeverRunsTwiceAtOnce", func(t *testing.T) {
		e := newEngine(t, 4)
		var running, most atomic.Int64
		var wg sync.WaitGroup
		for range 200 {
			wg.Go(func() {
				err := e.c.Write(context.Background(), store.WriteOptions{LockKey: "hot"}, func(context.Context, store.Querier) error {
					n := running.Add(1)
					for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
					}
					time.Sleep(50 * time.Microsecond)
					running.Add(-1)
					return nil
				})
				if err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if m := most.Load(); m != 1 {
			t.Errorf("%d writes of one key ran at once", m)
		}
	})

	t.Run("ErrCancelledWhileWaiting", func(t *testing.T) {
		e := newEngine(t, 1)
		release, held := e.holding(t, "")
		ctx, cancel := context.WithCancel(context.Background())
		ran := false
		done := make(chan error, 1)
		go func() {
			done <- e.c.Write(ctx, store.WriteOptions{}, func(context.Context, store.Querier) error { ran = true; return nil })
		}()
		for e.c.Waiting() != 1 {
			time.Sleep(time.Millisecond)
		}
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("got %v, want context.Canceled", err)
		}
		if n := e.c.Waiting(); n != 0 {
			t.Errorf("%d writes waiting after the cancelled one left", n)
		}
		release()
		wait(t, held)
		if ran {
			t.Error("the cancelled write ran")
		}
	})

	t.Run("ErrClosed", func(t *testing.T) {
		// Stop answers the writes waiting, lets the batch under way finish, and refuses
		// later writes.
		e := newEngine(t, 1)
		release, held := e.holding(t, "")
		waiting := e.write(t, "", 1, ok)
		stopped := make(chan struct{})
		go func() { e.c.Stop(); close(stopped) }()
		if err := <-waiting; !errors.Is(err, store.ErrClosed) {
			t.Errorf("waiting write: %v, want store.ErrClosed", err)
		}
		release()
		wait(t, held)
		<-stopped
		if err := e.c.Write(context.Background(), store.WriteOptions{}, func(context.Context, store.Querier) error { return nil }); !errors.Is(err, store.ErrClosed) {
			t.Errorf("write after Stop: %v, want store.ErrClosed", err)
		}
	})

	t.Run("PanicGoesOnInTheCaller", func(t *testing.T) {
		e := newEngine(t, 1)
		defer func() {
			if p := recover(); p != "boom" {
				t.Errorf("recovered %v, want the operation's panic", p)
			}
		}()
		_ = e.c.Write(context.Background(), store.WriteOptions{}, func(context.Context, store.Querier) error { panic("boom") })
	})
}

func equal(a, b [][]string) bool {
	return slices.EqualFunc(a, b, func(x, y []string) bool { return slices.Equal(x, y) })
}
