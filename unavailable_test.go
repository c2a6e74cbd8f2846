package payments_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/platform-payments/payments"
	"github.com/platform-payments/payments/httpserver"
	"github.com/platform-payments/payments/internal/pgtest"
	"github.com/platform-payments/payments/internal/store"
)

// The database out of reach is a 503 with Retry-After in the error envelope (error code
// unavailable), never a 500; no outcome of it is stored under an Idempotency-Key, so the
// same request sent again once the database is back runs; and the metrics count it
// apart from internal faults.

// TestUnavailableSQLite: another process holds the file's write lock past the writer's
// wait (busy_timeout, shortened here to 50 ms): a write answers 503; once the lock is
// released, the same keyed write runs.
func TestUnavailableSQLite(t *testing.T) {
	sqliteOnly(t)
	ctx := context.Background()
	path := newDSN(t)
	svc := mustOpenFile(t, path)
	platform := mustPlatform(t, svc)
	svc.ShortenWriteWait(50)
	mustUser(t, svc, platform.PlatformID, "Ada Lovelace", "ada@example.com") // the batch that shortens it
	h := httpserver.New(svc, nil)

	lock, err := rawDB(t, path).Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if _, err := lock.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	create := newUserRequest(platform, "create-alan")
	wantUnavailable(t, serveRequest(h, create()))
	// A read does not wait for the writer's lock (WAL): it goes on being answered.
	if rec := serveRequest(h, signedRequest(platform, http.MethodPost, "/api/platform/users/list", `{"rows_per_page":10,"page_no":1}`)); rec.Code != http.StatusOK {
		t.Errorf("a read while the file is locked: %d %s", rec.Code, rec.Body)
	}
	if _, err := lock.ExecContext(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	wantRecovered(t, serveRequest(h, create()))
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
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	if u.Host == "" {
		t.Skip("the PostgreSQL DSN names no host:port to put a proxy before")
	}
	p := startProxy(t, u.Host)
	u.Host = p.addr
	svc := mustOpenFile(t, u.String(), payments.Options{KeyFile: pgtest.KeyFile(dsn)})
	platform := mustPlatform(t, svc)
	user := mustUser(t, svc, platform.PlatformID, "Ada Lovelace", "ada@example.com")
	h := httpserver.New(svc, nil)
	get := func() *http.Request {
		return signedRequest(platform, http.MethodGet, "/api/platform/users/get/"+user.UserID.String(), "")
	}

	p.down(t)
	create := newUserRequest(platform, "create-alan")
	wantUnavailable(t, serveRequest(h, create()))
	wantUnavailable(t, serveRequest(h, get()))
	// A write that reads nothing before its transaction: the transaction cannot begin,
	// and the write must not pass for committed.
	addAccount := signedRequest(platform, http.MethodPost, "/api/platform/accounts/add-account",
		`{"user_id":"`+user.UserID.String()+`","bank_name":"Bank of America","account_number":"9876543210","routing_number":"026009593","account_type":"BUSINESS_SAVINGS"}`)
	wantUnavailable(t, serveRequest(h, addAccount))
	if err := svc.Write(context.Background(), func(context.Context, store.Querier) error { return nil }); payments.ErrorCode(err) != payments.CodeUnavailable {
		t.Errorf("a write while the server is away: %v, want CodeUnavailable", err)
	}
	p.up(t)
	wantRecovered(t, serveRequest(h, create()))
	if rec := serveRequest(h, get()); rec.Code != http.StatusOK {
		t.Errorf("a read once the server is back: %d %s", rec.Code, rec.Body)
	}
	wantErrorCounts(t, h, 0, 3)
}

// newUserRequest returns a Create User request under an Idempotency-Key, made anew for
// each sending.
func newUserRequest(platform payments.PlatformCredentials, key string) func() *http.Request {
	return func() *http.Request {
		req := signedRequest(platform, http.MethodPost, "/api/platform/users/create", `{"name":"Alan Turing","email":"alan@example.com"}`)
		req.Header.Set("Idempotency-Key", key)
		return req
	}
}

func signedRequest(platform payments.PlatformCredentials, method, target, body string) *http.Request {
	req := httptest.NewRequest(method, target, strings.NewReader(body))
	req.Header.Set(payments.HeaderPlatformID, platform.PlatformID.String())
	req.Header.Set(payments.HeaderSignature, payments.Sign(platform.Secret, method, target, []byte(body)))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	return req
}

func serveRequest(h http.Handler, req *http.Request) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
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
	const msg = "Service temporarily unavailable: the database cannot be reached. Retry later."
	if env["success"] != false || env["message"] != msg || env["data"] != nil || env["queryGeneratedTime"] == nil || len(env) != 4 {
		t.Errorf("body %s, want the error envelope with %q", rec.Body, msg)
	}
}

// wantRecovered checks that a keyed request which met the database out of reach ran
// when sent again: answered 200, not replayed.
func wantRecovered(t *testing.T, rec *httptest.ResponseRecorder) {
	t.Helper()
	if rec.Code != http.StatusOK {
		t.Fatalf("once the database is back: status %d, want 200: %s", rec.Code, rec.Body)
	}
	if got := rec.Header().Get("Idempotent-Replayed"); got != "" {
		t.Errorf("Idempotent-Replayed %q: the 503 was stored under the key", got)
	}
}

// wantErrorCounts checks payments_server_errors_total by code.
func wantErrorCounts(t *testing.T, h http.Handler, internal, unavailable int) {
	t.Helper()
	body := serveRequest(h, httptest.NewRequest(http.MethodGet, "/metrics", nil)).Body.String()
	for code, n := range map[string]int{"internal": internal, "unavailable": unavailable} {
		line := `payments_server_errors_total{code="` + code + `"} ` + strconv.Itoa(n)
		if !strings.Contains(body, line+"\n") {
			t.Errorf("metrics lack %q", line)
		}
	}
}

// proxy forwards TCP connections to a server: down closes them all and refuses new
// ones, as a server that stops does; up listens again on the same address.
type proxy struct {
	addr, target string
	mu           sync.Mutex
	l            net.Listener
	conns        map[net.Conn]bool
	wg           sync.WaitGroup
}

func startProxy(t *testing.T, target string) *proxy {
	p := &proxy{target: target, conns: map[net.Conn]bool{}}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p.addr = l.Addr().String()
	p.serve(l)
	t.Cleanup(func() { p.down(t) })
	return p
}

func (p *proxy) serve(l net.Listener) {
	p.l = l
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", p.target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns[c], p.conns[s] = true, true
			p.mu.Unlock()
			go func() { _, _ = io.Copy(s, c); s.Close() }()
			go func() { _, _ = io.Copy(c, s); c.Close() }()
		}
	}()
}

func (p *proxy) down(t *testing.T) {
	p.mu.Lock()
	if p.l != nil {
		p.l.Close()
		p.l = nil
	}
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
	p.mu.Unlock()
	p.wg.Wait()
}

func (p *proxy) up(t *testing.T) {
	l, err := net.Listen("tcp", p.addr)
	if err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	p.serve(l)
	p.mu.Unlock()
}

// TestClientGoneAway: a request whose client went away before its answer is answered 499
// (nobody reads it), and neither counted nor logged as an internal error.
func TestClientGoneAway(t *testing.T) {
	svc := mustOpen(t)
	platform := mustPlatform(t, svc)
	h := httpserver.New(svc, nil)
	for _, req := range []*http.Request{
		signedRequest(platform, http.MethodPost, "/api/platform/users/create", `{"name":"Ada Lovelace","email":"ada@example.com"}`),
		signedRequest(platform, http.MethodPost, "/api/platform/users/list", `{"rows_per_page":10,"page_no":1}`),
	} {
		ctx, cancel := context.WithCancel(req.Context())
		cancel()
		rec := serveRequest(h, req.WithContext(ctx))
		if rec.Code != 499 {
			t.Errorf("%s with its client gone: status %d, want 499: %s", req.URL.Path, rec.Code, rec.Body)
		}
	}
	wantErrorCounts(t, h, 0, 0)
	// And a request whose client stays is answered as ever.
	if rec := serveRequest(h, signedRequest(platform, http.MethodPost, "/api/platform/users/list", `{"rows_per_page":10,"page_no":1}`)); rec.Code != http.StatusOK {
		t.Errorf("list: %d %s", rec.Code, rec.Body)
	}
}
