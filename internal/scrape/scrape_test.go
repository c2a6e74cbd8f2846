package scrape

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestReading: a scrape gets the read it started when it ends in time; the last good
// result, and Up false, when the read fails; the last good result, at once, while a read
// stalls, and Up false once it has outlasted its timeout; nothing before any good read.
func TestReading(t *testing.T) {
	const timeout = 300 * time.Millisecond
	stall := errors.New("stall")
	boom := errors.New("database gone")
	// step: the next read answers answer (stall: it waits for its context); Get's
	// result must be value (0: none known) and up.
	type step struct {
		answer error
		value  int
		up     bool
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"fresh each time", []step{{nil, 1, true}, {nil, 2, true}}},
		{"a failure keeps the last good", []step{{nil, 1, true}, {boom, 1, false}, {nil, 3, true}}},
		{"never good", []step{{boom, 0, false}, {stall, 0, false}}},
		// The second stall's Get comes after the first stalled read has outlasted its
		// timeout and ended: down.
		{"stalled reads: the last good at once, down after the timeout", []step{
			{nil, 1, true}, {stall, 1, true}, {stall, 1, false}, {nil, 4, true}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			answers := make(chan error, 1)
			calls := 0
			r := New(func(ctx context.Context) (int, error) {
				calls++
				if err := <-answers; err != nil {
					if err == stall {
						<-ctx.Done()
						return 0, ctx.Err()
					}
					return 0, err
				}
				return calls, nil
			}, timeout)
			// idle waits for the read under way, if any, to end.
			idle := func() {
				r.mu.Lock()
				running := r.running
				r.mu.Unlock()
				if running != nil {
					<-running
				}
			}
			for i, s := range tc.steps {
				idle() // the read of the previous step ends first
				answers <- s.answer
				var got Result[int]
				if s.answer == stall {
					began := time.Now()
					got = r.Get()
					// The wait is 50 ms; a loaded box may take longer, never the read's
					// timeout.
					if took := time.Since(began); took >= timeout {
						t.Errorf("step %d: Get took %v over a stalled read", i, took)
					}
				} else {
					r.SetWait(10 * time.Second) // the read's own answer, however loaded the box
					got = r.Get()
					r.SetWait(Wait)
				}
				if got.Value != s.value || got.At.IsZero() != (s.value == 0) || got.Up != s.up {
					t.Errorf("step %d: got %+v, want value %d, up %v", i, got, s.value, s.up)
				}
			}
			idle()
		})
	}
}
