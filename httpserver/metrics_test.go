package httpserver

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// TestMetricsObserve: requests observed from many goroutines at once, on series seen
// before and series seen first, are all counted, each in its own series (go test -race).
func TestMetricsObserve(t *testing.T) {
	m := NewMetrics(nil)
	type request struct {
		route, method string
		status        int
	}
	var requests []request
	for i := range 6 {
		for _, method := range []string{"GET", "POST", "BREW"} {
			requests = append(requests, request{fmt.Sprintf("GET /route/%d", i), method, 200 + 100*(i%3)},
				request{"", method, 404})
		}
	}
	const goroutines, each = 8, 300
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range each {
				r := requests[(g+i)%len(requests)]
				m.observe(r.route, r.method, r.status, time.Millisecond)
			}
		})
	}
	wg.Wait()
	want := map[requestSeries]int{}
	durations := map[string]int{}
	for g := range goroutines {
		for i := range each {
			r := requests[(g+i)%len(requests)]
			route := r.route
			if route == "" {
				route = unmatchedRoute
			}
			want[requestSeries{route, methodLabel(r.method), statusLabel(r.status)}]++
			durations[route]++
		}
	}
	exposed := exposition(t, m)
	for key, n := range want {
		line := fmt.Sprintf("payments_http_requests_total{code=%q,method=%q,route=%q} %d\n", key.code, key.method, key.route, n)
		if !strings.Contains(exposed, line) {
			t.Errorf("no %q", line)
		}
	}
	if got := strings.Count(exposed, "\npayments_http_requests_total{"); got != len(want) {
		t.Errorf("%d request series, want %d", got, len(want))
	}
	if got := len(*m.series.Load()); got != len(want) {
		t.Errorf("%d series kept, want %d", got, len(want))
	}
	for route, n := range durations {
		line := fmt.Sprintf("payments_http_request_duration_seconds_count{route=%q} %d\n", route, n)
		if !strings.Contains(exposed, line) {
			t.Errorf("no %q", line)
		}
	}
}

// exposition returns m's request series in the Prometheus text format.
func exposition(t *testing.T, m *Metrics) string {
	t.Helper()
	reg := prometheus.NewRegistry()
	reg.MustRegister(m.requests, m.duration)
	rec := httptest.NewRecorder()
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	return rec.Body.String()
}
