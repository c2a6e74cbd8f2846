package httpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/platform-payments/payments"
	"github.com/platform-payments/payments/httpserver"
)

// The promises the handler makes around every operation, through the real handler over a
// real store: internal faults and panics answered 500 without their details and logged
// with the request id, the last of a repeated query parameter winning, request ids.

// logLines is a logger's output, as the JSON lines a test reads back.
type logLines struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// newLog returns a logger that writes every level to a new logLines.
func newLog() (*slog.Logger, *logLines) {
	l := &logLines{}
	return slog.New(slog.NewJSONHandler(l, &slog.HandlerOptions{Level: slog.LevelDebug})), l
}

// records returns the lines logged so far with message msg.
func (l *logLines) records(t *testing.T, msg string) []map[string]any {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]any
	for _, line := range bytes.Split(bytes.TrimSpace(l.buf.Bytes()), []byte("\n")) {
		var rec map[string]any
		if err := json.Unmarshal(line, &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if rec["msg"] == msg {
			out = append(out, rec)
		}
	}
	return out
}

// one returns the only line logged with message msg.
func (l *logLines) one(t *testing.T, msg string) map[string]any {
	t.Helper()
	recs := l.records(t, msg)
	if len(recs) != 1 {
		t.Fatalf("%d log lines %q, want one:\n%s", len(recs), msg, l.text())
	}
	return recs[0]
}

func (l *logLines) text() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// signed is a platform request signed with the platform's secret, with a JSON body unless
// body is nil.
func signed(platform payments.PlatformCredentials, method, target string, body []byte) *http.Request {
	req := httptest.NewRequest(method, target, bytes.NewReader(body))
	req.Header.Set(payments.HeaderPlatformID, platform.PlatformID.String())
	req.Header.Set(payments.HeaderSignature, payments.Sign(platform.Secret, method, target, body))
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req
}

func serve(h http.Handler, req *http.Request) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// wantInternalError checks a 500 in the error envelope with the generic message, and that
// none of the words in leaks (the fault's details) reach the client.
func wantInternalError(t *testing.T, rec *httptest.ResponseRecorder, leaks ...string) {
	t.Helper()
	if rec.Code != http.StatusInternalServerError {
		t.Fatalf("status %d, want 500: %s", rec.Code, rec.Body)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
	var env map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &env); err != nil {
		t.Fatalf("body %q: %v", rec.Body, err)
	}
	if env["success"] != false || env["message"] != "Internal error." || env["data"] != nil || env["queryGeneratedTime"] == nil || len(env) != 4 {
		t.Errorf("body %s, want the error envelope with \"Internal error.\"", rec.Body)
	}
	for _, leak := range leaks {
		if strings.Contains(strings.ToLower(rec.Body.String()), strings.ToLower(leak)) {
			t.Errorf("body %s shows %q", rec.Body, leak)
		}
	}
}

// wantLogged checks that the log line rec has attrs with these values.
func wantLogged(t *testing.T, rec map[string]any, attrs map[string]any) {
	t.Helper()
	for k, want := range attrs {
		if got := rec[k]; got != want {
			t.Errorf("log line %v: %s = %v, want %v", rec, k, got, want)
		}
	}
}

// TestInternalError: a store that fails (the service closed under the handler) is a 500
// with the generic message, its cause logged with the request id, method and path, and
// in the access log; whether the fault comes in the operation or in authentication.
func TestInternalError(t *testing.T) {
	svc, acme := freshService(t)
	ctx := context.Background()
	globex, err := svc.CreatePlatform(ctx, "Globex", payments.Sandbox)
	if err != nil {
		t.Fatal(err)
	}
	logger, log := newLog()
	h := httpserver.NewWithOptions(svc, logger, unlimited)
	const target = "/api/platform/users/list" // read from the store each time, never cached
	list := []byte(`{"rows_per_page":10,"page_no":1}`)
	if rec := serve(h, signed(acme, http.MethodPost, target, list)); rec.Code != http.StatusOK {
		t.Fatalf("before the fault: status %d: %s", rec.Code, rec.Body) // acme's credentials are cached now
	}
	if err := svc.Close(); err != nil {
		t.Fatal(err)
	}

	for _, c := range []struct {
		name     string
		platform payments.PlatformCredentials
	}{
		{"Operation", acme},        // authenticated from the cache, then List Users fails
		{"Authentication", globex}, // looking the platform up fails: 500, not 401
	} {
		t.Run(c.name, func(t *testing.T) {
			id := "fault-" + c.name
			req := signed(c.platform, http.MethodPost, target, list)
			req.Header.Set("X-Request-ID", id)
			rec := serve(h, req)
			wantInternalError(t, rec, "sql", "database", "closed")
			if got := rec.Header().Get("X-Request-ID"); got != id {
				t.Errorf("X-Request-ID %q, want %q", got, id)
			}
			var fault map[string]any
			for _, r := range log.records(t, "internal error") {
				if r["request_id"] == id {
					fault = r
				}
			}
			if fault == nil {
				t.Fatalf("no internal error logged with request_id %s:\n%s", id, log.text())
			}
			wantLogged(t, fault, map[string]any{"level": "ERROR", "method": "POST", "path": target})
			if cause, _ := fault["error"].(string); !strings.Contains(cause, "closed") {
				t.Errorf("logged error %q, want the cause (the database is closed)", cause)
			}
			found := false
			for _, r := range log.records(t, "request") {
				if r["request_id"] == id {
					found = true
					wantLogged(t, r, map[string]any{"status": float64(http.StatusInternalServerError), "path": target})
				}
			}
			if !found {
				t.Errorf("no access log line with request_id %s", id)
			}
		})
	}
}

// TestPanicRecovery: a handler that panics, or whose response does not encode, is a 500
// with the generic message (never a truncated 200), the panic logged with the request id,
// and the server goes on serving.
func TestPanicRecovery(t *testing.T) {
	for _, c := range []struct {
		name    string
		handler func() (any, error)
		leak    string
	}{
		{"Panic", func() (any, error) { panic("secret detail of the fault") }, "secret detail"},
		{"Unencodable", func() (any, error) { return map[string]any{"rate": math.Inf(1)}, nil }, "unsupported"},
		{"RuntimeError", func() (any, error) {
			words := strings.Fields("") // a bug of the handler: index out of range
			return words[0], nil
		}, "index out of range"},
	} {
		t.Run(c.name, func(t *testing.T) {
			svc, platform := freshService(t)
			logger, log := newLog()
			h := httpserver.NewWithRoute(svc, logger, unlimited, "GET /test/handler", c.handler)
			req := signed(platform, http.MethodGet, "/test/handler", nil)
			rec := serve(h, req)
			wantInternalError(t, rec, c.leak)
			id := rec.Header().Get("X-Request-ID")
			if id == "" {
				t.Fatal("no X-Request-ID")
			}
			wantLogged(t, log.one(t, "panic"), map[string]any{"level": "ERROR", "request_id": id})
			if p := log.one(t, "panic")["panic"]; p == nil || p == "" {
				t.Errorf("panic logged without its value")
			}
			wantLogged(t, log.one(t, "request"), map[string]any{
				"status": float64(http.StatusInternalServerError), "request_id": id, "path": "/test/handler"})

			// The server goes on: a route of the API answers as before.
			if rec := serve(h, signed(platform, http.MethodGet, "/api/platform/cross-border/rates?payout_currency=INR", nil)); rec.Code != http.StatusOK {
				t.Errorf("after the panic: status %d: %s", rec.Code, rec.Body)
			}
		})
	}
}

// TestLastQueryParameterWins: of a query parameter sent more than once, the last value is
// the one validated and used, as Starlette's request.query_params has it.
func TestLastQueryParameterWins(t *testing.T) {
	svc, platform := freshService(t)
	h := httpserver.NewWithOptions(svc, nil, unlimited)
	const rules = "/api/platform/cross-border/payee-rules"
	for _, c := range []struct {
		query   string
		status  int
		country string // the rules answered (200), or the input of the 422
	}{
		{"?country_code=PK&country_code=IN&payout_currency=INR", http.StatusOK, "IN"},
		{"?country_code=IN&country_code=PK&payout_currency=PKR", http.StatusOK, "PK"},
		{"?country_code=IN&country_code=in&payout_currency=INR", http.StatusUnprocessableEntity, "in"},
		{"?country_code=in&country_code=IN&payout_currency=INR", http.StatusOK, "IN"},
		{"?country_code=x&country_code=&country_code=IN&payout_currency=INR", http.StatusOK, "IN"},
		{"?country_code=IN&payout_currency=INR&country_code=", http.StatusUnprocessableEntity, ""},
	} {
		rec := serve(h, signed(platform, http.MethodGet, rules+c.query, nil))
		if rec.Code != c.status {
			t.Errorf("%s: status %d, want %d: %s", c.query, rec.Code, c.status, rec.Body)
			continue
		}
		var body struct {
			Data struct {
				CountryCode string `json:"country_code"`
			}
			Detail []payments.FieldError
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
			t.Fatal(err)
		}
		switch {
		case c.status == http.StatusOK && body.Data.CountryCode != c.country:
			t.Errorf("%s: rules of %q, want %q", c.query, body.Data.CountryCode, c.country)
		case c.status != http.StatusOK && (len(body.Detail) != 1 || body.Detail[0].Input != c.country ||
			!slices.Equal(body.Detail[0].Loc, []any{"query", "country_code"})):
			t.Errorf("%s: %s, want one entry at query.country_code with input %q", c.query, rec.Body, c.country)
		}
	}
}

// TestRequestIDHeader: every answer (a 200, a 401, a 404, a 405) carries X-Request-ID: the
// client's when it follows CONTRACT section 3 (1 to 128 of A-Z a-z 0-9 . _ -), otherwise
// a new one of 24 hex digits, never the same twice; and the access log names the same id.
func TestRequestIDHeader(t *testing.T) {
	svc, platform := freshService(t)
	logger, log := newLog()
	h := httpserver.NewWithOptions(svc, logger, unlimited)
	const rates = "/api/platform/cross-border/rates?payout_currency=INR"
	requests := map[string]func() *http.Request{
		"200": func() *http.Request { return signed(platform, http.MethodGet, rates, nil) },
		"401": func() *http.Request { return httptest.NewRequest(http.MethodGet, rates, nil) },
		"404": func() *http.Request { return signed(platform, http.MethodGet, "/api/platform/nothing", nil) },
		"405": func() *http.Request { return signed(platform, http.MethodPut, rates, nil) },
	}
	generated := regexp.MustCompile(`^[0-9a-f]{24}$`)
	seen := map[string]bool{}
	for status, newRequest := range requests {
		for _, c := range []struct {
			sent []string // X-Request-ID values sent; nil: none
			kept bool
		}{
			{nil, false},
			{[]string{"req-1.2_A"}, true},
			{[]string{strings.Repeat("x", 128)}, true},
			{[]string{strings.Repeat("x", 129)}, false},
			{[]string{""}, false},
			{[]string{"with space"}, false},
			{[]string{"é"}, false},
			{[]string{"a/b"}, false},
			{[]string{"first", "second"}, true}, // the first value counts, as Header.Get reads it
		} {
			req := newRequest()
			for _, v := range c.sent {
				req.Header.Add("X-Request-ID", v)
			}
			rec := serve(h, req)
			if got := strconv.Itoa(rec.Code); got != status {
				t.Fatalf("%s: status %d: %s", status, rec.Code, rec.Body)
			}
			ids := rec.Header().Values("X-Request-ID")
			if len(ids) != 1 {
				t.Fatalf("%s, sent %q: X-Request-ID %q, want one", status, c.sent, ids)
			}
			id := ids[0]
			switch {
			case c.kept && id != c.sent[0]:
				t.Errorf("%s, sent %q: X-Request-ID %q, want the client's", status, c.sent, id)
			case !c.kept && !generated.MatchString(id):
				t.Errorf("%s, sent %q: X-Request-ID %q, want 24 new hex digits", status, c.sent, id)
			case !c.kept && seen[id]:
				t.Errorf("%s, sent %q: X-Request-ID %q given twice", status, c.sent, id)
			}
			seen[id] = true
			lines := log.records(t, "request")
			if last := lines[len(lines)-1]; last["request_id"] != id {
				t.Errorf("%s, sent %q: access log request_id %v, want %q", status, c.sent, last["request_id"], id)
			}
		}
	}
}
