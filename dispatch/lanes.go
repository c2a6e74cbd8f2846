package dispatch

import (
	"slices"
	"sync"

	"github.com/platform-payments/payments/internal/outbox"
)

// lanes hands claimed deliveries to the workers an endpoint at a time, in turn, with no
// more than limit of one endpoint's under way at once: an endpoint that answers slowly
// holds at most limit workers, and the others' deliveries go past its backlog.
type lanes struct {
	mu     sync.Mutex
	cond   *sync.Cond
	limit  int
	queued map[string][]outbox.Delivery // by endpoint, in the order claimed
	busy   map[string]int               // attempts under way, by endpoint
	turn   []string                     // endpoints with deliveries queued, next first
	closed bool
}

func newLanes(limit int) *lanes {
	l := &lanes{limit: limit, queued: map[string][]outbox.Delivery{}, busy: map[string]int{}}
	l.cond = sync.NewCond(&l.mu)
	return l
}

// add queues claimed deliveries.
func (l *lanes) add(ds []outbox.Delivery) {
	if len(ds) == 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, d := range ds {
		if len(l.queued[d.EndpointID]) == 0 {
			l.turn = append(l.turn, d.EndpointID)
		}
		l.queued[d.EndpointID] = append(l.queued[d.EndpointID], d)
	}
	l.cond.Broadcast()
}

// next waits for a delivery a worker may send: the first of the first endpoint in turn
// with fewer than limit under way, whose turn then passes to the back. It reports false
// once the lanes are closed.
func (l *lanes) next() (outbox.Delivery, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for !l.closed {
		for i, ep := range l.turn {
			if l.busy[ep] >= l.limit {
				continue
			}
			q := l.queued[ep]
			d := q[0]
			l.turn = slices.Delete(l.turn, i, i+1)
			if len(q) == 1 {
				delete(l.queued, ep)
			} else {
				l.queued[ep] = q[1:]
				l.turn = append(l.turn, ep)
			}
			l.busy[ep]++
			return d, true
		}
		l.cond.Wait()
	}
	return outbox.Delivery{}, false
}

// done says an attempt to the endpoint has ended.
func (l *lanes) done(endpointID string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.busy[endpointID]--; l.busy[endpointID] <= 0 {
		delete(l.busy, endpointID)
	}
	l.cond.Broadcast()
}

// drop takes the endpoint's queued deliveries out, and returns them.
func (l *lanes) drop(endpointID string) []outbox.Delivery {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.queued[endpointID]
	delete(l.queued, endpointID)
	if i := slices.Index(l.turn, endpointID); i >= 0 {
		l.turn = slices.Delete(l.turn, i, i+1)
	}
	return out
}

// blocked returns how many deliveries are queued behind their endpoint's cap: more than
// the workers could take of that endpoint's were they all free.
func (l *lanes) blocked() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for ep, q := range l.queued {
		n += max(0, len(q)-(l.limit-l.busy[ep]))
	}
	return n
}

// close ends next's waits, and returns the deliveries still queued.
func (l *lanes) close() []outbox.Delivery {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	l.cond.Broadcast()
	var out []outbox.Delivery
	for _, ep := range l.turn {
		out = append(out, l.queued[ep]...)
	}
	l.queued, l.turn = map[string][]outbox.Delivery{}, nil
	return out
}
