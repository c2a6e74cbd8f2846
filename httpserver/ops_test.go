package httpserver_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/platform-payments/payments"
	"github.com/platform-payments/payments/httpserver"
	"github.com/platform-payments/payments/internal/pgtest"
)

// The operations endpoints: unauthenticated, in JSON, apart from the API's routes.

func TestHealthz(t *testing.T) {
	svc, _ := freshService(t)
	h := httpserver.New(svc, nil)
	rec := serve(h, httptest.NewRequest(http.MethodGet, "/healthz", nil))
	// The body says the process is up and which build it is, as paymentsd version does.
	var body struct {
		Status string `json:"status"`
		Build  struct {
			Version, Go string
		} `json:"build"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || rec.Code != http.StatusOK ||
		body.Status != "ok" || body.Build.Version == "" || body.Build.Go != runtime.Version() {
		t.Errorf("GET /healthz: %d %s, want 200 with status ok and the build", rec.Code, rec.Body)
	}
	if server := rec.Header().Get("Server"); server != "" {
		t.Errorf("Server header %q: no header announces the version", server)
	}
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("Content-Type %q", ct)
	}
}

func TestReadyz(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		svc, _ := freshService(t)
		rec := serve(httpserver.New(svc, nil), httptest.NewRequest(http.MethodGet, "/readyz", nil))
		if rec.Code != http.StatusOK || strings.TrimSpace(rec.Body.String()) != `{"status":"ok"}` {
			t.Errorf("GET /readyz: %d %s, want 200 {\"status\":\"ok\"}", rec.Code, rec.Body)
		}
	})
	t.Run("Closed", func(t *testing.T) {
		svc, _ := freshService(t)
		h := httpserver.New(svc, nil)
		if err := svc.Close(); err != nil {
			t.Fatal(err)
		}
		rec := serve(h, httptest.NewRequest(http.MethodGet, "/readyz", nil))
		if rec.Code != http.StatusServiceUnavailable || strings.TrimSpace(rec.Body.String()) != `{"status":"not ready"}` {
			t.Errorf("GET /readyz on a closed store: %d %s, want 503 {\"status\":\"not ready\"}", rec.Code, rec.Body)
		}
	})
}

func TestOpsWrongMethod(t *testing.T) {
	svc, _ := freshService(t)
	h := httpserver.New(svc, nil)
	for _, path := range []string{"/healthz", "/readyz"} {
		rec := serve(h, httptest.NewRequest(http.MethodPost, path, nil))
		if rec.Code != http.StatusMethodNotAllowed || !strings.Contains(rec.Body.String(), `"Method not allowed."`) {
			t.Errorf("POST %s: %d %s, want 405 in the envelope", path, rec.Code, rec.Body)
		}
	}
}

// TestOpsNotThrottled: the endpoints answer however many authentication failures the
// client address has had, and whatever credentials it sends.
func TestOpsNotThrottled(t *testing.T) {
	svc, _ := freshService(t)
	h := httpserver.NewWithOptions(svc, nil, httpserver.Options{AuthFailures: 1})
	bad := func() *http.Request {
		req := httptest.NewRequest(http.MethodGet, "/api/platform/cross-border/rates", nil)
		req.Header.Set("X-Platform-ID", "00000000-0000-0000-0000-000000000001")
		req.Header.Set("X-Signature", "00")
		return req
	}
	for range 3 {
		serve(h, bad())
	}
	if rec := serve(h, bad()); rec.Code != http.StatusTooManyRequests {
		t.Fatalf("the address is not throttled: %d", rec.Code)
	}
	for _, path := range []string{"/healthz", "/readyz"} {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		req.Header.Set("X-Platform-ID", "00000000-0000-0000-0000-000000000001")
		req.Header.Set("X-Signature", "00")
		if rec := serve(h, req); rec.Code != http.StatusOK {
			t.Errorf("GET %s from a throttled address: %d %s", path, rec.Code, rec.Body)
		}
	}
}

// TestMetrics scrapes /metrics after requests that carry ids in their paths, headers and
// bodies: the requests are counted by route pattern, and no UUID (a platform, a user, a
// key) appears anywhere in the output.
func TestMetrics(t *testing.T) {
	svc, acme := freshService(t)
	h := httpserver.NewWithOptions(svc, nil, httpserver.Options{AuthFailures: 2})
	create := serve(h, signed(acme, http.MethodPost, "/api/platform/users/create", []byte(`{"name":"Ada","email":"ada@example.com"}`)))
	if create.Code != http.StatusOK {
		t.Fatalf("create: %d %s", create.Code, create.Body)
	}
	var user struct {
		ID string `json:"user_id"`
	}
	var env struct{ Data any }
	env.Data = &user
	if err := json.Unmarshal(create.Body.Bytes(), &env); err != nil || user.ID == "" {
		t.Fatalf("create: %s (%v)", create.Body, err)
	}
	get := "/api/platform/users/get/" + user.ID
	for range 3 {
		if rec := serve(h, signed(acme, http.MethodGet, get, nil)); rec.Code != http.StatusOK {
			t.Fatalf("get: %d %s", rec.Code, rec.Body)
		}
	}
	serve(h, httptest.NewRequest(http.MethodGet, "/nowhere/"+user.ID, nil))
	serve(h, httptest.NewRequest("BREW", "/healthz", nil))
	for range 4 { // failures, then the throttle
		req := httptest.NewRequest(http.MethodGet, get, nil)
		req.Header.Set(payments.HeaderPlatformID, acme.PlatformID.String())
		req.Header.Set(payments.HeaderSignature, "00")
		serve(h, req)
	}

	rec := serve(h, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /metrics: %d %s", rec.Code, rec.Body)
	}
	out := rec.Body.String()
	pool := `payments_db_max_open_connections{pool="writer"} 1`
	if pgtest.Enabled() {
		pool = fmt.Sprintf(`payments_db_max_open_connections{pool="postgres"} %d`, payments.DefaultMaxConns())
	}
	for _, want := range []string{
		`payments_http_requests_total{code="200",method="GET",route="GET /api/platform/users/get/{user_id}"} 3`,
		`payments_http_requests_total{code="200",method="POST",route="POST /api/platform/users/create"} 1`,
		`payments_http_requests_total{code="404",method="GET",route="unmatched"} 1`,
		`payments_http_requests_total{code="405",method="OTHER",route="unmatched"} 1`,
		`payments_http_request_duration_seconds_count{route="GET /api/platform/users/get/{user_id}"} 7`,
		`payments_http_requests_in_flight 1`, // this scrape
		`payments_auth_failures_total{reason="malformed_signature"} 2`,
		`payments_rate_limited_total{limit="auth_failures"} 2`,
		`payments_commit_batch_size_bucket{le="1"} `,
		pool,
		`go_goroutines `,
		`process_start_time_seconds `,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in the metrics", want)
		}
	}
	uuidText := regexp.MustCompile(`(?i)[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}`)
	if m := uuidText.FindString(out); m != "" {
		t.Errorf("a UUID in the metrics: %s", m)
	}
	for _, secret := range []string{acme.PlatformID.String(), user.ID, "ada@example.com"} {
		if strings.Contains(out, secret) {
			t.Errorf("the metrics show %q", secret)
		}
	}
}

// TestMetricsApart: with Options.MetricsApart the API's handler answers /metrics 404,
// and the Metrics given serve them.
func TestMetricsApart(t *testing.T) {
	svc, _ := freshService(t)
	m := httpserver.NewMetrics(svc)
	h := httpserver.NewWithOptions(svc, nil, httpserver.Options{Metrics: m, MetricsApart: true})
	if rec := serve(h, httptest.NewRequest(http.MethodGet, "/metrics", nil)); rec.Code != http.StatusNotFound || !strings.Contains(rec.Body.String(), `"Not found."`) {
		t.Errorf("GET /metrics on the API's handler: %d %s, want 404 in the envelope", rec.Code, rec.Body)
	}
	rec := serve(m.Handler(), httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `payments_http_requests_total{code="404",method="GET",route="unmatched"} 1`) {
		t.Errorf("the metrics apart: %d %s", rec.Code, rec.Body)
	}
}
