package httpserver_test

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/platform-payments/payments"
	"github.com/platform-payments/payments/dispatch"
	"github.com/platform-payments/payments/httpserver"
	"github.com/platform-payments/payments/internal/pgtest"
)

// TestMetricsDatabaseGone: while PostgreSQL is stopped (every connection reset, new ones
// refused) and while its host is gone without a word (every connection open and silent,
// new ones unanswered), /metrics answers 200 at once with every figure: those read from
// the database at their last good value, their age growing, payments_db_up 0; /healthz
// answers 200 and /readyz 503. Once the database is back, payments_db_up is 1 again and
// the figures fresh, without a restart.
func TestMetricsDatabaseGone(t *testing.T) {
	if !pgtest.Enabled() {
		t.Skipf("needs PostgreSQL: set $%s", pgtest.Env)
	}
	dsn := pgtest.DSN(t)
	p, viaProxy := pgtest.BehindProxy(t, dsn)
	svc, err := payments.Open(context.Background(), viaProxy, payments.Options{KeyFile: pgtest.KeyFile(dsn)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	// Before the service closes: the connections the stall left broken are closed, not
	// waited for.
	t.Cleanup(p.Down)
	metrics := httpserver.NewMetrics(svc)
	metrics.Registry().MustRegister(dispatch.New(svc, dispatch.Options{}).Collectors()...)
	h := httpserver.NewWithOptions(svc, nil, httpserver.Options{Metrics: metrics})

	const (
		up      = "payments_db_up"
		pending = "payments_webhook_deliveries_pending"
		age     = "payments_webhook_pending_read_age_seconds"
	)
	// scrape answers /metrics, which must be 200 with every figure, well within the
	// 5 s a read of a silent database took before (the design's bound is 50 ms of
	// waiting; a loaded box may add to it, never seconds).
	// Before the first read of the database ends, its figures are absent: then, with
	// first set, a scrape may lack them.
	first := true
	scrape := func(when string) map[string]float64 {
		t.Helper()
		began := time.Now()
		rec := serve(h, httptest.NewRequest(http.MethodGet, "/metrics", nil))
		took := time.Since(began)
		if rec.Code != http.StatusOK {
			t.Fatalf("%s: /metrics %d: %s", when, rec.Code, rec.Body)
		}
		if took > time.Second {
			t.Errorf("%s: /metrics took %v", when, took)
		}
		got := map[string]float64{}
		sc := bufio.NewScanner(rec.Body)
		for sc.Scan() {
			name, value, ok := strings.Cut(sc.Text(), " ")
			if ok && !strings.HasPrefix(name, "#") {
				got[name], _ = strconv.ParseFloat(value, 64)
			}
		}
		for _, name := range []string{up, pending, age, "payments_webhook_oldest_pending_seconds",
			`payments_db_open_connections{pool="postgres"}`, `payments_server_errors_total{code="unavailable"}`} {
			if _, ok := got[name]; !ok && !first {
				t.Fatalf("%s: /metrics has no %s:\n%s", when, name, rec.Body)
			}
		}
		return got
	}
	// scrapeUntil scrapes until cond holds, 10 s at most: a check of the database runs
	// in the background, and a scrape reports the last that ended.
	scrapeUntil := func(when string, cond func(map[string]float64) bool) map[string]float64 {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			m := scrape(when)
			if cond(m) {
				return m
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: 10 s of scrapes, never the figures wanted: %v", when, m)
			}
		}
	}
	status := func(path string) int {
		return serve(h, httptest.NewRequest(http.MethodGet, path, nil)).Code
	}

	m := scrapeUntil("the database up", func(m map[string]float64) bool {
		_, read := m[pending]
		return read && m[up] == 1 && m[age] < 5
	})
	first = false
	if m[pending] != 0 {
		t.Errorf("the database up: %s %v, want 0", pending, m[pending])
	}
	for _, outage := range []struct {
		name       string
		fail, mend func()
	}{
		{"PostgreSQL stopped", p.Down, func() { p.Up(t) }},
		{"its host gone", p.Stall, p.Resume},
	} {
		outage.fail()
		began := time.Now()
		m := scrapeUntil(outage.name, func(m map[string]float64) bool { return m[up] == 0 })
		if m[pending] != 0 {
			t.Errorf("%s: %s %v, want the last good figure, 0", outage.name, pending, m[pending])
		}
		// The figures' age grows while they cannot be read.
		time.Sleep(100 * time.Millisecond)
		before, out := m[age], time.Since(began)
		for range 3 {
			if m = scrape(outage.name); m[age] < before || m[up] != 0 {
				t.Errorf("%s: %s %v after %v, %s %v", outage.name, age, m[age], before, up, m[up])
			}
		}
		if m[age] < out.Seconds() {
			t.Errorf("%s: %s %v, read before the outage began %v ago", outage.name, age, m[age], out)
		}
		if code := status("/healthz"); code != http.StatusOK {
			t.Errorf("%s: /healthz %d, want 200", outage.name, code)
		}
		if code := status("/readyz"); code != http.StatusServiceUnavailable {
			t.Errorf("%s: /readyz %d, want 503", outage.name, code)
		}
		t.Logf("%s: payments_db_up 0 %v after, figures %.2fs old", outage.name, out.Round(time.Millisecond), m[age])
		outage.mend()
		began = time.Now()
		scrapeUntil(outage.name+", then back", func(m map[string]float64) bool { return m[up] == 1 && m[age] < 1 })
		t.Logf("%s, then back: payments_db_up 1 %v after", outage.name, time.Since(began).Round(time.Millisecond))
		if code := status("/readyz"); code != http.StatusOK {
			t.Errorf("%s, then back: /readyz %d, want 200", outage.name, code)
		}
	}
}
