// Package scrape keeps the last good result of a read that metrics make of the database,
// so that a scrape answers at once whatever the database does: stopped, unreachable, or
// its host gone without a word.
package scrape

import (
	"context"
	"sync"
	"time"
)

// Wait is how long a scrape waits for the read it starts before it takes the last good
// result: short enough that /metrics answers within 100 ms whatever the database does.
const Wait = 50 * time.Millisecond

// Reading runs a read in the background when a scrape asks for it, waits a short while
// for it, and keeps its last good result. One read runs at a time, each bounded by the
// timeout; scrapes that come while it runs wait for that one.
type Reading[T any] struct {
	read    func(context.Context) (T, error)
	timeout time.Duration

	mu      sync.Mutex
	wait    time.Duration
	running chan struct{} // closed when the read under way ends; nil when none runs
	started time.Time     // when the read under way started
	value   T             // the last good result
	at      time.Time     // when value was read; zero before the first good read
	ended   bool          // a read has ended
	failed  bool          // the last read that ended failed
}

// New returns a Reading of read, each read bounded by timeout, each scrape waiting Wait
// at most for the read it starts.
func New[T any](read func(context.Context) (T, error), timeout time.Duration) *Reading[T] {
	return &Reading[T]{read: read, timeout: timeout, wait: Wait}
}

// SetWait sets how long a scrape waits for the read it starts (Wait unless set): for
// tests that want every scrape fresh.
func (r *Reading[T]) SetWait(d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.wait = d
}

// Start begins a read unless one is under way, and returns a channel closed when the
// read ends.
func (r *Reading[T]) Start() <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.start()
}

// start is Start with r.mu held.
func (r *Reading[T]) start() chan struct{} {
	if r.running != nil {
		return r.running
	}
	done := make(chan struct{})
	r.running, r.started = done, time.Now()
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), r.timeout)
		v, err := r.read(ctx)
		cancel()
		r.mu.Lock()
		defer r.mu.Unlock()
		r.ended, r.failed, r.running = true, err != nil, nil
		if err == nil {
			r.value, r.at = v, time.Now()
		}
		close(done)
	}()
	return done
}

// Result is what a scrape reports of a Reading.
type Result[T any] struct {
	// Value is the last good result, read At; At is zero when no read has succeeded yet.
	Value T
	At    time.Time
	// Up is whether the database answered: the last read that ended succeeded, and the
	// one under way (if any) has not outlasted the timeout.
	Up bool
}

// Get starts a read unless one is under way, waits for it at most the wait, and returns
// the last good result.
func (r *Reading[T]) Get() Result[T] {
	r.mu.Lock()
	done, wait := r.start(), r.wait
	r.mu.Unlock()
	timer := time.NewTimer(wait)
	select {
	case <-done:
	case <-timer.C:
	}
	timer.Stop()
	r.mu.Lock()
	defer r.mu.Unlock()
	stalled := r.running != nil && time.Since(r.started) >= r.timeout
	return Result[T]{Value: r.value, At: r.at, Up: r.ended && !r.failed && !stalled}
}
