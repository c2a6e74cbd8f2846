package httpserver_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/platform-payments/payments/httpserver"
)

// The operations endpoints: unauthenticated, in JSON, apart from the API's routes.

func TestHealthz(t *testing.T) {
	svc, _ := freshService(t)
	h := httpserver.New(svc, nil)
	rec := serve(h, httptest.NewRequest(http.MethodGet, "/healthz", nil))
	if rec.Code != http.StatusOK || strings.TrimSpace(rec.Body.String()) != `{"status":"ok"}` {
		t.Errorf("GET /healthz: %d %s, want 200 {\"status\":\"ok\"}", rec.Code, rec.Body)
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
