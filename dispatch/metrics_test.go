package dispatch_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/platform-payments/payments/dispatch"
)

// gather returns the values of the registry's metrics, by name and labels as
// name{label="value",...}.
func gather(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			key := f.GetName()
			if len(labels) > 0 {
				key += "{" + strings.Join(labels, ",") + "}"
			}
			switch {
			case m.GetCounter() != nil:
				out[key] = m.GetCounter().GetValue()
			case m.GetGauge() != nil:
				out[key] = m.GetGauge().GetValue()
			}
		}
	}
	return out
}

// gatherAfter gathers until done holds (10 s at most), then once more: the registry
// runs its collectors side by side, so the gather that saw an attempt counted may have
// read the deliveries waiting before that attempt's record was committed; the counter
// moves only after the commit, so a gather begun after it sees the record.
func gatherAfter(t *testing.T, reg *prometheus.Registry, done func(map[string]float64) bool) map[string]float64 {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !done(gather(t, reg)) && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	return gather(t, reg)
}

// TestCollectors: the dispatcher's metrics, registered in a registry of their own, count
// attempts by outcome and show the deliveries waiting, the age of the oldest and the
// endpoints whose circuits are open.
func TestCollectors(t *testing.T) {
	w := newWorld(t, dispatch.Options{Schedule: []time.Duration{time.Hour}}) // a retry long after the test
	reg := prometheus.NewRegistry()
	reg.MustRegister(w.dispatcher.Collectors()...)
	dispatch.FreshScrapes(w.dispatcher)

	const (
		succeeded = `payments_webhook_attempts_total{outcome="succeeded"}`
		retrying  = `payments_webhook_attempts_total{outcome="retrying"}`
		pending   = "payments_webhook_deliveries_pending"
		oldest    = "payments_webhook_oldest_pending_seconds"
		circuits  = "payments_webhook_open_circuits"
	)
	// Before any event: every series there, at 0.
	m := gather(t, reg)
	for _, name := range []string{succeeded, retrying, `payments_webhook_attempts_total{outcome="failed"}`,
		`payments_webhook_attempts_total{outcome="gone"}`, pending, oldest, circuits} {
		if v, ok := m[name]; !ok || v != 0 {
			t.Errorf("before any event: %s %v (present %v), want 0", name, v, ok)
		}
	}

	ok, failing := newReceiver(t, status(200)), newReceiver(t, status(500))
	w.endpoint(t, ok.URL+"/hook")
	w.endpoint(t, failing.URL+"/hook")
	w.user(t) // one event, a delivery to each endpoint
	ok.wait(t, 1, 10*time.Second)
	failing.wait(t, 1, 10*time.Second)

	// The attempts are counted once recorded, after the receivers have answered.
	m = gatherAfter(t, reg, func(m map[string]float64) bool { return m[succeeded]+m[retrying] >= 2 })
	attempts := 0.0
	for k, v := range m {
		if strings.HasPrefix(k, "payments_webhook_attempts_total") {
			attempts += v
		}
	}
	if m[succeeded] != 1 || m[retrying] != 1 || attempts != 2 {
		t.Errorf("attempts: succeeded %v, retrying %v, %v in all; want 1, 1 and 2 (%v)", m[succeeded], m[retrying], attempts, m)
	}
	// The 500's delivery waits an hour for its retry; the 200's is done. The 500's
	// endpoint is failing, its circuit not yet open (one retry waits, of three).
	if m[pending] != 1 || m[circuits] != 0 {
		t.Errorf("%s %v, %s %v; want 1 and 0", pending, m[pending], circuits, m[circuits])
	}
	if m[oldest] <= 0 || m[oldest] > 60 {
		t.Errorf("%s %v, want the event's age: above 0, within the test's time", oldest, m[oldest])
	}
	// Two more events: two more deliveries each way, two more waiting, the oldest no
	// younger; with three of the failing endpoint's deliveries waiting to be retried,
	// its circuit is open.
	before := m[oldest]
	w.user(t)
	w.user(t)
	m = gatherAfter(t, reg, func(m map[string]float64) bool { return m[succeeded]+m[retrying] >= 6 })
	if m[succeeded] != 3 || m[retrying] != 3 || m[pending] != 3 || m[oldest] < before || m[circuits] != 1 {
		t.Errorf("after two more events: succeeded %v, retrying %v, pending %v, oldest %v (was %v), circuits %v; "+
			"want 3, 3, 3, no younger and 1", m[succeeded], m[retrying], m[pending], m[oldest], before, m[circuits])
	}
}
