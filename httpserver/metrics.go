package httpserver

import (
	"context"
	"maps"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/platform-payments/payments"
	"github.com/platform-payments/payments/internal/scrape"
)

// Metrics are the handler's Prometheus metrics, in a registry of their own (never the
// global default, so that a program embedding the handler keeps its own registry clean),
// with the Go runtime's and the process's. No label or value names a platform, a user, a
// key or anything stored: requests are labelled by route pattern (never the path, which
// carries ids), method and status.
type Metrics struct {
	reg          *prometheus.Registry
	requests     *prometheus.CounterVec   // route, method, code
	duration     *prometheus.HistogramVec // route
	inFlight     prometheus.Gauge
	rateLimited  *prometheus.CounterVec // limit: "rate" or "auth_failures"
	authFailures *prometheus.CounterVec // reason: a payments.AuthFailure
	serverErrors *prometheus.CounterVec // code: "internal" (500) or "unavailable" (503)

	// series are the request series observed so far, each looked up in its vector once:
	// a request then neither hashes nor checks its labels again. It is a map replaced
	// whole when a series is added (rarely: a route, method and status seen first), so
	// that reading it takes no lock.
	series   atomic.Pointer[map[requestSeries]requestMetrics]
	seriesMu sync.Mutex // held while adding
}

// requestSeries are the labels of a request's series.
type requestSeries struct{ route, method, code string }

// requestMetrics are the series of one requestSeries.
type requestMetrics struct {
	count    prometheus.Counter
	duration prometheus.Observer
}

// unmatchedRoute labels the requests no route matched (404, 405): one value for all,
// whatever their path.
const unmatchedRoute = "unmatched"

// NewMetrics returns the metrics of a handler over svc, with svc's connection pools and
// commit batches. Give it to Options.Metrics to serve it elsewhere (Handler).
func NewMetrics(svc *payments.Service) *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "payments_http_requests_total",
			Help: "HTTP requests answered, by route pattern (\"unmatched\" for none), method and status code.",
		}, []string{"route", "method", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "payments_http_request_duration_seconds",
			Help:    "Time from a request's arrival to its answer, by route pattern.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
		}, []string{"route"}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "payments_http_requests_in_flight",
			Help: "HTTP requests being answered.",
		}),
		rateLimited: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "payments_rate_limited_total",
			Help: "Requests answered 429, by the limit that refused them: rate (a caller's bucket) or auth_failures (the failure throttle).",
		}, []string{"limit"}),
		authFailures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "payments_auth_failures_total",
			Help: "Requests authentication refused, by reason (docs/signing.md lists them). The failure throttle counts those of every reason but missing_platform_id, missing_signature, missing_api_key and missing_api_secret.",
		}, []string{"reason"}),
		serverErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "payments_server_errors_total",
			Help: "Requests the service failed, by error code: internal (500, a fault of ours, panics included) or unavailable (503, the database out of reach).",
		}, []string{"code"}),
	}
	for _, code := range []payments.Code{payments.CodeInternal, payments.CodeUnavailable} {
		m.serverErrors.WithLabelValues(string(code)) // shown from the start, at 0
	}
	m.series.Store(&map[requestSeries]requestMetrics{})
	m.reg.MustRegister(m.requests, m.duration, m.inFlight, m.rateLimited, m.authFailures, m.serverErrors,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		newStoreCollector(svc))
	return m
}

// Handler serves the metrics in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// Registry is where the metrics are registered, for a program that adds its own.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// observe counts a request answered with status after took, on route (the mux's
// pattern, "" when none matched).
func (m *Metrics) observe(route, method string, status int, took time.Duration) {
	if route == "" {
		route = unmatchedRoute
	}
	key := requestSeries{route: route, method: methodLabel(method), code: statusLabel(status)}
	series, ok := (*m.series.Load())[key]
	if !ok {
		series = m.addSeries(key)
	}
	series.count.Inc()
	series.duration.Observe(took.Seconds())
}

// addSeries looks key's series up in the vectors and keeps them in m.series.
func (m *Metrics) addSeries(key requestSeries) requestMetrics {
	m.seriesMu.Lock()
	defer m.seriesMu.Unlock()
	old := *m.series.Load()
	if series, ok := old[key]; ok { // added while this request waited
		return series
	}
	series := requestMetrics{
		count:    m.requests.WithLabelValues(key.route, key.method, key.code),
		duration: m.duration.WithLabelValues(key.route),
	}
	added := make(map[requestSeries]requestMetrics, len(old)+1)
	maps.Copy(added, old)
	added[key] = series
	m.series.Store(&added)
	return series
}

// methodLabel returns method if it is one of HTTP's, else "OTHER": a client chooses the
// method, and must not choose the metrics' cardinality.
func methodLabel(method string) string {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return method
	}
	return "OTHER"
}

// statusLabels holds the text of every status code, so a request's label costs no
// allocation.
var statusLabels = func() (l [600]string) {
	for i := range l {
		l[i] = strconv.Itoa(i)
	}
	return l
}()

func statusLabel(status int) string {
	if status >= 0 && status < len(statusLabels) {
		return statusLabels[status]
	}
	return strconv.Itoa(status)
}

// storeCollector reads the service's pools and commit batches at each scrape, and
// whether the database answers a trivial query (Service.Ping) in the background
// (scrape.Reading): a scrape never waits long for a database that does not answer.
type storeCollector struct {
	svc  *payments.Service
	ping *scrape.Reading[struct{}]
}

// pingTimeout bounds the metrics' check that the database answers: /readyz's bound.
const pingTimeout = readyTimeout

// newStoreCollector returns the collector of svc's store, its first check of the
// database begun (unless svc is nil: metrics that are never scraped).
func newStoreCollector(svc *payments.Service) storeCollector {
	ping := scrape.New(func(ctx context.Context) (struct{}, error) { return struct{}{}, svc.Ping(ctx) }, pingTimeout)
	if svc != nil {
		ping.Start()
	}
	return storeCollector{svc: svc, ping: ping}
}

var (
	dbOpen = prometheus.NewDesc("payments_db_open_connections",
		"Connections open, in use or idle, by pool (reader, writer).", []string{"pool"}, nil)
	dbInUse = prometheus.NewDesc("payments_db_in_use_connections",
		"Connections in use, by pool.", []string{"pool"}, nil)
	dbIdle = prometheus.NewDesc("payments_db_idle_connections",
		"Idle connections, by pool.", []string{"pool"}, nil)
	dbMaxOpen = prometheus.NewDesc("payments_db_max_open_connections",
		"The pool's bound on open connections.", []string{"pool"}, nil)
	dbWaits = prometheus.NewDesc("payments_db_wait_count_total",
		"Times a caller waited for a connection, by pool.", []string{"pool"}, nil)
	dbWaitSeconds = prometheus.NewDesc("payments_db_wait_seconds_total",
		"Time callers waited for a connection, by pool.", []string{"pool"}, nil)
	commitBatch = prometheus.NewDesc("payments_commit_batch_size",
		"Write operations committed in one transaction: a batch of the engine's group commit.", nil, nil)
	dbUp = prometheus.NewDesc("payments_db_up",
		"1 when the database answered the last check (a trivial query, bounded by 1 s, begun by a scrape that waits 50 ms at most for it), 0 when it did not.", nil, nil)
)

func (storeCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{dbOpen, dbInUse, dbIdle, dbMaxOpen, dbWaits, dbWaitSeconds, commitBatch, dbUp} {
		ch <- d
	}
}

func (c storeCollector) Collect(ch chan<- prometheus.Metric) {
	up := 0.0
	if c.ping.Get().Up {
		up = 1
	}
	ch <- prometheus.MustNewConstMetric(dbUp, prometheus.GaugeValue, up)
	st := c.svc.Stats()
	for pool, s := range st.Pools {
		ch <- prometheus.MustNewConstMetric(dbOpen, prometheus.GaugeValue, float64(s.OpenConnections), pool)
		ch <- prometheus.MustNewConstMetric(dbInUse, prometheus.GaugeValue, float64(s.InUse), pool)
		ch <- prometheus.MustNewConstMetric(dbIdle, prometheus.GaugeValue, float64(s.Idle), pool)
		ch <- prometheus.MustNewConstMetric(dbMaxOpen, prometheus.GaugeValue, float64(s.MaxOpenConnections), pool)
		ch <- prometheus.MustNewConstMetric(dbWaits, prometheus.CounterValue, float64(s.WaitCount), pool)
		ch <- prometheus.MustNewConstMetric(dbWaitSeconds, prometheus.CounterValue, s.WaitDuration.Seconds(), pool)
	}
	bounds := payments.CommitBatchBounds()
	buckets := make(map[float64]uint64, len(bounds))
	var cumulative uint64
	for i, bound := range bounds {
		cumulative += uint64(st.CommitBatches[i]) // #nosec G115 -- a count, never negative
		buckets[float64(bound)] = cumulative
	}
	ch <- prometheus.MustNewConstHistogram(commitBatch, uint64(st.Commits), float64(st.CommittedOps), buckets) // #nosec G115 -- a count
}
