package httpserver_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/platform-payments/payments"
	"github.com/platform-payments/payments/httpserver"
	"github.com/platform-payments/payments/internal/pgtest"
)

// The database out of reach (payments.CodeUnavailable: the root package's tests show
// each engine's case) is a 503 with Retry-After in the error envelope, never a 500,
// logged as a warning and counted apart from internal faults.

// msgUnavailable is the message of every CodeUnavailable error of the service.
const msgUnavailable = "Service temporarily unavailable: the database cannot be reached. Retry later."

// TestUnavailable: an operation that fails CodeUnavailable, whichever engine is under it.
func TestUnavailable(t *testing.T) {
	svc, platform := freshService(t)
	logger, log := newLog()
	h := httpserver.NewWithRoute(svc, logger, unlimited, "GET /test/handler", func() (any, error) {
		return nil, payments.Errorf(payments.CodeUnavailable, "%s", msgUnavailable)
	})
	rec := serve(h, signed(platform, http.MethodGet, "/test/handler", nil))
	wantUnavailable(t, rec)
	wantLogged(t, log.one(t, "database unavailable"), map[string]any{
		"level": "WARN", "request_id": rec.Header().Get("X-Request-ID"), "path": "/test/handler"})
	wantErrorCounts(t, h, 0, 1)
}

// TestUnavailablePostgres: the server goes away (every connection to it reset, new ones
// refused, as when PostgreSQL stops): reads and writes answer 503; once it is back, the
// same keyed write runs and the service serves again, without a restart.
func TestUnavailablePostgres(t *testing.T) {
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
	platform, err := svc.CreatePlatform(context.Background(), "Probe", payments.Sandbox)
	if err != nil {
		t.Fatal(err)
	}
	h := httpserver.New(svc, nil)
	create := func() *http.Request {
		req := signedCreateUser(platform, []byte(`{"name":"Alan Turing","email":"alan@example.com"}`))
		req.Header.Set("Idempotency-Key", "create-alan")
		return req
	}
	list := func() *http.Request {
		return signed(platform, http.MethodPost, "/api/platform/users/list", []byte(`{"rows_per_page":10,"page_no":1}`))
	}

	p.Down()
	wantUnavailable(t, serve(h, create()))
	wantUnavailable(t, serve(h, list()))
	p.Up(t)
	rec := serve(h, create())
	if rec.Code != http.StatusOK {
		t.Fatalf("once the database is back: status %d, want 200: %s", rec.Code, rec.Body)
	}
	if got := rec.Header().Get("Idempotent-Replayed"); got != "" {
		t.Errorf("Idempotent-Replayed %q: the 503 was stored under the key", got)
	}
	if rec := serve(h, list()); rec.Code != http.StatusOK {
		t.Errorf("a read once the server is back: %d %s", rec.Code, rec.Body)
	}
	wantErrorCounts(t, h, 0, 2)
}

// TestClientGoneAway: a request whose client went away before its answer is answered 499
// (nobody reads it), and neither counted nor logged as an internal error.
func TestClientGoneAway(t *testing.T) {
	svc, platform := freshService(t)
	logger, log := newLog()
	h := httpserver.NewWithOptions(svc, logger, unlimited)
	list := []byte(`{"rows_per_page":10,"page_no":1}`)
	for _, req := range []*http.Request{
		signedCreateUser(platform, []byte(`{"name":"Ada Lovelace","email":"ada@example.com"}`)),
		signed(platform, http.MethodPost, "/api/platform/users/list", list),
	} {
		ctx, cancel := context.WithCancel(req.Context())
		cancel()
		rec := serve(h, req.WithContext(ctx))
		if rec.Code != 499 {
			t.Errorf("%s with its client gone: status %d, want 499: %s", req.URL.Path, rec.Code, rec.Body)
		}
	}
	if n := len(log.records(t, "client went away")); n != 2 {
		t.Errorf("%d lines \"client went away\", want 2:\n%s", n, log.text())
	}
	if n := len(log.records(t, "internal error")); n != 0 {
		t.Errorf("%d internal errors logged:\n%s", n, log.text())
	}
	wantErrorCounts(t, h, 0, 0)
	// And a request whose client stays is answered as ever.
	if rec := serve(h, signed(platform, http.MethodPost, "/api/platform/users/list", list)); rec.Code != http.StatusOK {
		t.Errorf("list: %d %s", rec.Code, rec.Body)
	}
}

// wantUnavailable checks a 503 with Retry-After: 1 in the error envelope, without the
// cause.
func wantUnavailable(t *testing.T, rec *httptest.ResponseRecorder) {
	t.Helper()
	if rec.Code != http.StatusServiceUnavailable {
		t.Fatalf("status %d, want 503: %s", rec.Code, rec.Body)
	}
	if got := rec.Header().Get("Retry-After"); got != "1" {
		t.Errorf("Retry-After %q, want 1", got)
	}
	var env map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &env); err != nil {
		t.Fatalf("body %q: %v", rec.Body, err)
	}
	if env["success"] != false || env["message"] != msgUnavailable || env["data"] != nil || env["queryGeneratedTime"] == nil || len(env) != 4 {
		t.Errorf("body %s, want the error envelope with %q", rec.Body, msgUnavailable)
	}
}

// wantErrorCounts checks payments_server_errors_total by code.
func wantErrorCounts(t *testing.T, h http.Handler, internal, unavailable int) {
	t.Helper()
	body := serve(h, httptest.NewRequest(http.MethodGet, "/metrics", nil)).Body.String()
	for code, n := range map[string]int{"internal": internal, "unavailable": unavailable} {
		line := `payments_server_errors_total{code="` + code + `"} ` + strconv.Itoa(n)
		if !strings.Contains(body, line+"\n") {
			t.Errorf("metrics lack %q", line)
		}
	}
}
