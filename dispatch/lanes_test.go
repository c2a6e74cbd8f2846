package dispatch

import (
	"slices"
	"testing"

	"github.com/platform-payments/payments/internal/outbox"
)

// The lanes hand out the endpoints in turn, never more than the limit of one endpoint's
// at once, and count what waits behind the limit.
func TestLanes(t *testing.T) {
	l := newLanes(2)
	var ds []outbox.Delivery
	for i, ep := range []string{"a", "a", "a", "a", "a", "b", "b"} {
		ds = append(ds, outbox.Delivery{ID: int64(i + 1), EndpointID: ep})
	}
	l.add(ds)
	if n := l.blocked(); n != 3 {
		t.Errorf("blocked before any is taken: %d, want 3 (a's five less its limit of 2)", n)
	}
	var order []string
	var ids []int64
	for range 4 {
		d, ok := l.next()
		if !ok {
			t.Fatal("next reported closed")
		}
		order, ids = append(order, d.EndpointID), append(ids, d.ID)
	}
	if !slices.Equal(order, []string{"a", "b", "a", "b"}) || !slices.Equal(ids, []int64{1, 6, 2, 7}) {
		t.Errorf("handed out %v %v, want a b a b, 1 6 2 7", order, ids)
	}
	// a has 2 under way, its limit: its three others wait behind it.
	if n := l.blocked(); n != 3 {
		t.Errorf("blocked with a at its limit: %d, want 3", n)
	}
	l.done("a")
	if d, ok := l.next(); !ok || d.ID != 3 {
		t.Errorf("after one of a's ended: %+v, %v; want delivery 3", d, ok)
	}
	if back := l.drop("a"); len(back) != 2 || back[0].ID != 4 || back[1].ID != 5 {
		t.Errorf("drop a: %+v, want deliveries 4 and 5", back)
	}
	l.add([]outbox.Delivery{{ID: 8, EndpointID: "c"}})
	if left := l.close(); len(left) != 1 || left[0].ID != 8 {
		t.Errorf("close left %+v, want delivery 8", left)
	}
	if _, ok := l.next(); ok {
		t.Error("next after close reported a delivery")
	}
}
