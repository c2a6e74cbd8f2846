package httpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/platform-payments/payments"
	"github.com/platform-payments/payments/httpserver"
	"github.com/platform-payments/payments/internal/pgtest"
)

// The limits, driven through the handler on a clock the tests move.

// clock is a limiter clock that moves only when told.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock { return &clock{now: time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// limited is a handler with two platforms (acme with a user, Ada, and her API key; and
// globex) on a store of its own.
type limited struct {
	h      http.Handler
	clock  *clock
	acme   payments.PlatformCredentials
	globex payments.PlatformCredentials
	userID string
	key    payments.APIKey
}

func newLimited(t testing.TB, opts httpserver.Options) *limited {
	t.Helper()
	ctx := context.Background()
	dsn, keyFile := pgtest.NewStore(t)
	svc, err := payments.Open(ctx, dsn, payments.Options{KeyFile: keyFile})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	l := &limited{clock: newClock()}
	if l.acme, err = svc.CreatePlatform(ctx, "Acme", payments.Sandbox); err != nil {
		t.Fatal(err)
	}
	if l.globex, err = svc.CreatePlatform(ctx, "Globex", payments.Sandbox); err != nil {
		t.Fatal(err)
	}
	email := "ada@example.com"
	user, err := svc.CreateUser(ctx, l.acme.PlatformID, payments.NewUser{Name: "Ada", Email: &email})
	if err != nil {
		t.Fatal(err)
	}
	l.userID = user.UserID.String()
	if l.key, err = svc.CreateAPIKey(ctx, l.userID); err != nil {
		t.Fatal(err)
	}
	opts.Now = l.clock.Now
	l.h = httpserver.NewWithOptions(svc, nil, opts)
	return l
}

// get sends Get User for Ada as platform id, signed with secret, from addr.
func (l *limited) get(addr, id, secret string) *httptest.ResponseRecorder {
	target := "/api/platform/users/get/" + l.userID
	req := httptest.NewRequest(http.MethodGet, target, nil)
	req.RemoteAddr = addr
	req.Header.Set(payments.HeaderPlatformID, id)
	req.Header.Set(payments.HeaderSignature, payments.Sign(secret, http.MethodGet, target, nil))
	rec := httptest.NewRecorder()
	l.h.ServeHTTP(rec, req)
	return rec
}

// payee sends Create Payee with the API key and secret, from addr.
func (l *limited) payee(addr, key, secret string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, "/api/user-api/payee/create", strings.NewReader(`{"name":"Bob","email":"bob@example.com"}`))
	req.RemoteAddr = addr
	req.Header.Set(payments.HeaderAPIKey, key)
	req.Header.Set(payments.HeaderAPISecret, secret)
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	l.h.ServeHTTP(rec, req)
	return rec
}

const (
	home     = "198.51.100.1:40000" // where the platforms call from
	attacker = "203.0.113.66:50000"
)

// answer is what a test checks of a response: the status and the limit headers.
type answer struct {
	status                           int
	retryAfter, limit, remain, reset string
}

func answerOf(rec *httptest.ResponseRecorder) answer {
	h := rec.Header()
	return answer{rec.Code, h.Get("Retry-After"), h.Get("RateLimit-Limit"), h.Get("RateLimit-Remaining"), h.Get("RateLimit-Reset")}
}

// want429 checks the error envelope of a 429.
func want429(t *testing.T, rec *httptest.ResponseRecorder, message string) {
	t.Helper()
	if rec.Code != http.StatusTooManyRequests {
		t.Fatalf("status %d, want 429: %s", rec.Code, rec.Body)
	}
	var env map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &env); err != nil {
		t.Fatal(err)
	}
	if env["success"] != false || env["message"] != message || env["data"] != nil || env["queryGeneratedTime"] == nil || len(env) != 4 {
		t.Errorf("body %s, want the error envelope with %q", rec.Body, message)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
}

// TestRateLimit follows one platform's bucket (1 a second, 3 at once) request by request.
func TestRateLimit(t *testing.T) {
	l := newLimited(t, httpserver.Options{RateLimit: 1, RateBurst: 3})
	id, secret := l.acme.PlatformID.String(), l.acme.Secret
	steps := []struct {
		advance time.Duration // before the request
		want    answer
	}{
		{0, answer{200, "", "3", "2", "1"}},
		{0, answer{200, "", "3", "1", "2"}},
		{0, answer{200, "", "3", "0", "3"}},
		{0, answer{429, "1", "3", "0", "3"}},
		{0, answer{429, "1", "3", "0", "3"}},
		{500 * time.Millisecond, answer{429, "1", "3", "0", "3"}}, // half a token: 0.5 s to wait, said as 1
		{500 * time.Millisecond, answer{200, "", "3", "0", "3"}},  // one token, taken
		{10 * time.Second, answer{200, "", "3", "2", "1"}},        // full again, and no more
	}
	for i, step := range steps {
		l.clock.Advance(step.advance)
		rec := l.get(home, id, secret)
		if got := answerOf(rec); got != step.want {
			t.Fatalf("request %d: %+v, want %+v (%s)", i+1, got, step.want, rec.Body)
		}
		if rec.Code == http.StatusTooManyRequests {
			want429(t, rec, "Too many requests.")
		}
	}
}

// TestRateLimitIsolation: one platform over its limit, another platform and the user-API
// key of the first are not; the key has a bucket of its own.
func TestRateLimitIsolation(t *testing.T) {
	l := newLimited(t, httpserver.Options{RateLimit: 0.001, RateBurst: 2})
	acme, globex := l.acme.PlatformID.String(), l.globex.PlatformID.String()
	for range 2 {
		if rec := l.get(home, acme, l.acme.Secret); rec.Code != http.StatusOK {
			t.Fatalf("acme: %d %s", rec.Code, rec.Body)
		}
	}
	want429(t, l.get(home, acme, l.acme.Secret), "Too many requests.")
	// Globex asks for Acme's user: 404, with its own full bucket.
	if got, want := answerOf(l.get(home, globex, l.globex.Secret)), (answer{404, "", "2", "1", "1000"}); got != want {
		t.Errorf("globex: %+v, want %+v", got, want)
	}
	// Acme's user's API key has its bucket: two payees, then 429.
	key := l.key.APIKey.String()
	for i := range 2 {
		if rec := l.payee(home, key, l.key.APISecret); rec.Code != http.StatusOK || rec.Header().Get("RateLimit-Remaining") != fmt.Sprint(1-i) {
			t.Fatalf("payee %d: %+v %s", i+1, answerOf(rec), rec.Body)
		}
	}
	rec := l.payee(home, key, l.key.APISecret)
	want429(t, rec, "Too many requests.")
	if got, want := answerOf(rec), (answer{429, "1000", "2", "0", "2000"}); got != want {
		t.Errorf("payee 3: %+v, want %+v", got, want)
	}
}

// TestRateLimitOrder: a 429 of the rate limit takes the 401's place, before 415 and 422;
// an answer after the limit (here a 415) carries the headers too.
func TestRateLimitOrder(t *testing.T) {
	l := newLimited(t, httpserver.Options{RateLimit: 0.001, RateBurst: 1})
	send := func() *httptest.ResponseRecorder {
		body := []byte(`{"name":""}`)
		target := "/api/platform/users/create"
		req := httptest.NewRequest(http.MethodPost, target, bytes.NewReader(body))
		req.RemoteAddr = home
		req.Header.Set(payments.HeaderPlatformID, l.acme.PlatformID.String())
		req.Header.Set(payments.HeaderSignature, payments.Sign(l.acme.Secret, http.MethodPost, target, body))
		req.Header.Set("Content-Type", "text/plain")
		rec := httptest.NewRecorder()
		l.h.ServeHTTP(rec, req)
		return rec
	}
	if got, want := answerOf(send()), (answer{415, "", "1", "0", "1000"}); got != want {
		t.Errorf("first: %+v, want %+v", got, want)
	}
	want429(t, send(), "Too many requests.")
	// An unauthenticated request is still a 401, without the headers.
	if got, want := answerOf(l.get(home, l.acme.PlatformID.String(), "wrong")), (answer{status: 401}); got != want {
		t.Errorf("wrong signature: %+v, want %+v", got, want)
	}
}

// TestWrongSignatures: 2,000 wrong signatures from one address are throttled after the
// budget; the platform itself, calling from elsewhere, is not.
func TestWrongSignatures(t *testing.T) {
	l := newLimited(t, httpserver.Options{})
	id := l.acme.PlatformID.String()
	statuses := map[int]int{}
	for range 2000 {
		rec := l.get(attacker, id, "guess")
		statuses[rec.Code]++
		if rec.Code == http.StatusTooManyRequests && statuses[429] == 1 {
			want429(t, rec, "Too many failed authentication attempts.")
			if got, want := answerOf(rec), (answer{429, "1", fmt.Sprint(httpserver.DefaultAuthFailures), "0", "60"}); got != want {
				t.Errorf("first 429: %+v, want %+v", got, want)
			}
		}
	}
	if want := map[int]int{401: httpserver.DefaultAuthFailures, 429: 2000 - httpserver.DefaultAuthFailures}; fmt.Sprint(statuses) != fmt.Sprint(want) {
		t.Errorf("statuses %v, want %v", statuses, want)
	}
	// The attacker's address is refused whatever it sends, the right secret too.
	want429(t, l.get(attacker, id, l.acme.Secret), "Too many failed authentication attempts.")
	// Acme calls from home: its id's failures do not refuse a right signature.
	if rec := l.get(home, id, l.acme.Secret); rec.Code != http.StatusOK {
		t.Errorf("acme from home: %d %s", rec.Code, rec.Body)
	}
	// A fifth of a second later the address and the id have one failure each to spend
	// (300 a minute): one more 401, then 429 again.
	l.clock.Advance(time.Minute / httpserver.DefaultAuthFailures)
	var got []int
	for range 2 {
		got = append(got, l.get(attacker, id, "guess").Code)
	}
	if fmt.Sprint(got) != "[401 429]" {
		t.Errorf("one failure's time later: %v, want [401 429]", got)
	}
	// A minute later the whole budget is back.
	l.clock.Advance(time.Minute)
	got = got[:0]
	for range httpserver.DefaultAuthFailures + 1 {
		got = append(got, l.get(attacker, id, "guess").Code)
	}
	if got[0] != 401 || got[httpserver.DefaultAuthFailures-1] != 401 || got[httpserver.DefaultAuthFailures] != 429 {
		t.Errorf("a minute later: %v, want %d 401s then 429", got, httpserver.DefaultAuthFailures)
	}
}

// TestDistributedGuessing: failures naming one platform id from many addresses, each
// within its own budget. Past the id's budget they answer 429, an address that failed
// for the id is refused before authentication, and the platform, which does not fail,
// passes from any address.
func TestDistributedGuessing(t *testing.T) {
	l := newLimited(t, httpserver.Options{AuthFailures: 5})
	id := l.acme.PlatformID.String()
	from := func(i int) string { return fmt.Sprintf("203.0.113.%d:1", i) }
	var got []int
	for i := range 8 {
		got = append(got, l.get(from(i), id, "guess").Code)
	}
	if fmt.Sprint(got) != "[401 401 401 401 401 429 429 429]" {
		t.Errorf("one guess from each of 8 addresses: %v", got)
	}
	// Address 0 failed once: within its own budget, but it has failed for this id, and
	// the id is over its budget: refused before authentication, even with the secret.
	want429(t, l.get(from(0), id, l.acme.Secret), "Too many failed authentication attempts.")
	// The same address may still fail for another id (up to its own budget).
	if rec := l.get(from(0), l.globex.PlatformID.String(), "guess"); rec.Code != http.StatusUnauthorized {
		t.Errorf("address 0 for globex: %d, want 401", rec.Code)
	}
	// Acme passes from a new address and from home.
	for _, addr := range []string{from(99), home} {
		if rec := l.get(addr, id, l.acme.Secret); rec.Code != http.StatusOK {
			t.Errorf("acme from %s: %d %s", addr, rec.Code, rec.Body)
		}
	}
	// The id gets a failure back every 12 s (5 a minute): then a new address's failure
	// is a 401 again.
	l.clock.Advance(12 * time.Second)
	if rec := l.get(from(50), id, "guess"); rec.Code != http.StatusUnauthorized {
		t.Errorf("12 s later: %d, want 401", rec.Code)
	}
}

// TestFailureCounting: only guesses count. Requests without credentials are 401 however
// many; unknown platform ids and user-API secrets count as guesses.
func TestFailureCounting(t *testing.T) {
	l := newLimited(t, httpserver.Options{AuthFailures: 3})
	target := "/api/platform/users/get/" + l.userID
	for range 10 {
		req := httptest.NewRequest(http.MethodGet, target, nil)
		req.RemoteAddr = attacker
		rec := httptest.NewRecorder()
		l.h.ServeHTTP(rec, req)
		if rec.Code != http.StatusUnauthorized {
			t.Fatalf("no credentials: %d", rec.Code)
		}
	}
	var got []int
	for range 4 {
		got = append(got, l.get(attacker, uuid.NewString(), "guess").Code)
	}
	if fmt.Sprint(got) != "[401 401 401 429]" {
		t.Errorf("unknown platform ids: %v", got)
	}
	got = got[:0]
	key := l.key.APIKey.String()
	for range 4 {
		got = append(got, l.payee(home, key, "guess").Code)
	}
	got = append(got, l.payee("198.51.100.2:1", key, l.key.APISecret).Code)
	if fmt.Sprint(got) != "[401 401 401 429 200]" {
		t.Errorf("wrong API secrets from home, then the right one from elsewhere: %v", got)
	}
}

// TestClientAddress: the address the failures are counted by.
func TestClientAddress(t *testing.T) {
	tests := []struct {
		name     string
		header   string // Options.ClientIPHeader
		first    string // RemoteAddr of the 2 failures
		firstXFF string
		second   string // RemoteAddr of the request checked
		xff      string
		blocked  bool
	}{
		{"same IPv4", "", "192.0.2.1:1", "", "192.0.2.1:2", "", true},
		{"other IPv4", "", "192.0.2.1:1", "", "192.0.2.2:1", "", false},
		{"same IPv6 /64", "", "[2001:db8::1]:1", "", "[2001:db8::ffff:2]:1", "", true},
		{"other IPv6 /64", "", "[2001:db8::1]:1", "", "[2001:db8:0:1::1]:1", "", false},
		{"IPv4 mapped", "", "192.0.2.1:1", "", "[::ffff:192.0.2.1]:1", "", true},
		{"header ignored by default", "", "192.0.2.1:1", "198.51.100.7", "192.0.2.1:1", "198.51.100.8", true},
		{"header: the last address", "X-Forwarded-For", "192.0.2.1:1", "1.1.1.1, 198.51.100.7", "192.0.2.1:1", "198.51.100.7", true},
		{"header: another client", "X-Forwarded-For", "192.0.2.1:1", "198.51.100.7", "192.0.2.1:1", "1.1.1.1, 198.51.100.8", false},
		{"header absent: the connection", "X-Forwarded-For", "192.0.2.1:1", "", "192.0.2.1:1", "", true},
		{"header not an address", "X-Forwarded-For", "192.0.2.1:1", "unknown", "192.0.2.1:1", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newLimited(t, httpserver.Options{AuthFailures: 2, ClientIPHeader: tt.header})
			send := func(addr, xff, id, secret string) int {
				target := "/api/platform/users/get/" + l.userID
				req := httptest.NewRequest(http.MethodGet, target, nil)
				req.RemoteAddr = addr
				if xff != "" {
					req.Header.Set("X-Forwarded-For", xff)
				}
				req.Header.Set(payments.HeaderPlatformID, id)
				req.Header.Set(payments.HeaderSignature, payments.Sign(secret, http.MethodGet, target, nil))
				rec := httptest.NewRecorder()
				l.h.ServeHTTP(rec, req)
				return rec.Code
			}
			for range 2 {
				send(tt.first, tt.firstXFF, uuid.NewString(), "guess")
			}
			got := send(tt.second, tt.xff, l.acme.PlatformID.String(), l.acme.Secret)
			if want := map[bool]int{true: 429, false: 200}[tt.blocked]; got != want {
				t.Errorf("status %d, want %d", got, want)
			}
		})
	}
}

// TestLimitsOff: negative limits turn them off.
func TestLimitsOff(t *testing.T) {
	l := newLimited(t, httpserver.Options{RateLimit: -1, AuthFailures: -1})
	for i := range 300 {
		if rec := l.get(attacker, l.acme.PlatformID.String(), "guess"); rec.Code != http.StatusUnauthorized {
			t.Fatalf("failure %d: %d", i+1, rec.Code)
		}
	}
	for i := range 3000 {
		rec := l.get(home, l.acme.PlatformID.String(), l.acme.Secret)
		if rec.Code != http.StatusOK || rec.Header().Get("RateLimit-Limit") != "" {
			t.Fatalf("request %d: %+v", i+1, answerOf(rec))
		}
	}
}
