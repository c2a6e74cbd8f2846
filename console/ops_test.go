package console

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// The sampler turns the counters /metrics exports into figures by minute.
func TestSamplerMinutes(t *testing.T) {
	reg := prometheus.NewRegistry()
	requests := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "payments_http_requests_total"}, []string{"route", "method", "code"})
	batches := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "payments_commit_batch_size", Buckets: []float64{1, 2, 4, 8}})
	reg.MustRegister(requests, batches)
	s := NewSampler(reg)
	at := time.Date(2026, 11, 28, 15, 0, 0, 0, time.UTC)

	s.SampleAt(at)
	requests.WithLabelValues("r", "GET", "200").Add(10)
	requests.WithLabelValues("r", "GET", "404").Add(3)
	requests.WithLabelValues("r", "POST", "500").Add(1)
	batches.Observe(1)
	batches.Observe(3)
	s.SampleAt(at.Add(time.Minute))
	requests.WithLabelValues("r", "GET", "200").Add(5)
	s.SampleAt(at.Add(2 * time.Minute))

	got := s.minutes()
	want := []minute{
		{At: at.Add(2 * time.Minute), Requests: 5, MeanBatch: "—"},
		{At: at.Add(time.Minute), Requests: 14, ClientErrors: 3, ServerErrors: 1, Commits: 2, MeanBatch: "2.00"},
	}
	if len(got) != len(want) {
		t.Fatalf("minutes %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("minute %d: %+v, want %+v", i, got[i], want[i])
		}
	}

	// An hour's minutes are kept, no more.
	for i := range 100 {
		s.SampleAt(at.Add(time.Duration(3+i) * time.Minute))
	}
	if n := len(s.minutes()); n != keptSamples-1 {
		t.Errorf("%d minutes kept, want %d", n, keptSamples-1)
	}
}
