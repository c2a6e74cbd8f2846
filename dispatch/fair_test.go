package dispatch_test

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/platform-payments/payments"
	"github.com/platform-payments/payments/dispatch"
)

// slowReceiver is an endpoint whose answers wait until the test releases them, counting
// how many requests it holds at once.
type slowReceiver struct {
	*receiver
	release     chan struct{}
	now, most   atomic.Int64
	releaseOnce sync.Once
}

func newSlowReceiver(t *testing.T) *slowReceiver {
	s := &slowReceiver{release: make(chan struct{})}
	s.receiver = newReceiver(t, func(int, http.ResponseWriter) {
		n := s.now.Add(1)
		for m := s.most.Load(); n > m && !s.most.CompareAndSwap(m, n); m = s.most.Load() {
		}
		<-s.release
		s.now.Add(-1)
	})
	t.Cleanup(s.open) // before the server closes (cleanups run last first)
	return s
}

func (s *slowReceiver) open() { s.releaseOnce.Do(func() { close(s.release) }) }

// The noisy neighbour: platform A's endpoint does not answer; A makes a burst of 200
// events, then platform B, whose endpoint answers at once, makes 20. B receives all 20
// while A's endpoint still holds its first attempts, which are never more than the cap
// per endpoint; once A's endpoint answers, its backlog drains.
func TestSlowEndpointDoesNotDelayOthers(t *testing.T) {
	w := newWorld(t, dispatch.Options{Timeout: 5 * time.Minute}) // A's attempts do not time out here
	a := newSlowReceiver(t)
	b := newReceiver(t, status(204))
	w.endpoint(t, a.URL+"/a")
	p, err := w.svc.CreatePlatform(context.Background(), "Beta", payments.Sandbox)
	if err != nil {
		t.Fatal(err)
	}
	wb := world{svc: w.svc, platform: p.PlatformID, dispatcher: w.dispatcher}
	wb.endpoint(t, b.URL+"/b")

	for range 200 {
		w.user(t)
	}
	a.wait(t, dispatch.DefaultPerEndpoint, 30*time.Second) // A's first attempts are under way, held
	for range 20 {
		wb.user(t)
	}
	// Today's dispatcher gave every worker to A's backlog: B got nothing until A answered.
	b.wait(t, 20, 30*time.Second)
	if held := a.now.Load(); held == 0 {
		t.Fatal("A's endpoint answered before B's deliveries arrived: the test proves nothing")
	}
	if most := a.most.Load(); most > dispatch.DefaultPerEndpoint {
		t.Errorf("A's endpoint held %d attempts at once, want at most %d", most, dispatch.DefaultPerEndpoint)
	}
	a.open()
	a.wait(t, 200, 60*time.Second)
	if most := a.most.Load(); most > dispatch.DefaultPerEndpoint {
		t.Errorf("A's endpoint held %d attempts at once, want at most %d", most, dispatch.DefaultPerEndpoint)
	}
}

// The circuit breaker: an endpoint failing gets one delivery at a time; once two of its
// deliveries wait to be retried (BreakAfter), its circuit is open: the others wait, unsent,
// and nothing goes before the first retry's time. That retry goes alone (the probe), and
// only once it has succeeded do the others follow.
func TestCircuitBreaker(t *testing.T) {
	var probed atomic.Bool // the probe has been answered
	var early atomic.Int64 // requests that came while the probe was under way
	r := newReceiver(t, func(n int, w http.ResponseWriter) {
		switch {
		case n <= 2: // down, then back
			w.WriteHeader(http.StatusServiceUnavailable)
		case n == 3: // the probe
			w.WriteHeader(http.StatusNoContent)
			probed.Store(true)
		default:
			if !probed.Load() {
				early.Add(1)
			}
		}
	})
	w := newWorld(t, dispatch.Options{Schedule: []time.Duration{time.Second, time.Second}, BreakAfter: 2})
	w.endpoint(t, r.URL+"/hook")
	w.user(t)
	first := r.wait(t, 1, 10*time.Second)[0] // fails: the endpoint is failing
	w.recorded(t, first.header.Get("webhook-id"), 1)
	for range 10 {
		w.user(t)
	}
	// One of the ten, alone, fails too: the circuit opens. Then the probe, alone, and the
	// others.
	got := r.wait(t, 13, 30*time.Second)
	if n := early.Load(); n != 0 {
		t.Errorf("%d deliveries sent while the probe was under way", n)
	}
	// The probe is the retry of a failed delivery, at its time (1 s, less 20% jitter):
	// nothing went between the failures and it.
	var failedAt time.Time
	for _, d := range got[:2] {
		if d.header.Get("webhook-id") == got[2].header.Get("webhook-id") {
			failedAt = d.at
		}
	}
	if failedAt.IsZero() {
		t.Errorf("the request after the failures is not a retry of either")
	} else if gap := got[2].at.Sub(failedAt); gap < 800*time.Millisecond {
		t.Errorf("the probe went %v after its failure, before its retry time", gap)
	}
	// Every event is delivered, the eleven once each.
	ids := map[string]bool{}
	for _, d := range got[2:] {
		ids[d.header.Get("webhook-id")] = true
	}
	if len(got) != 13 || len(ids) != 11 {
		t.Errorf("%d requests carrying %d distinct events after the failures, want 13 and 11", len(got), len(ids))
	}
}
