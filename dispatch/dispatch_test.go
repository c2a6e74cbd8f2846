package dispatch_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/platform-payments/payments"
	"github.com/platform-payments/payments/dispatch"
	"github.com/platform-payments/payments/internal/pgtest"
)

var loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}

// delivery is a request the receiver got.
type delivery struct {
	header http.Header
	body   []byte
	at     time.Time
}

// receiver is a webhook endpoint on 127.0.0.1 answering what answer says for the n-th
// delivery (from 1).
type receiver struct {
	*httptest.Server
	mu   sync.Mutex
	got  []delivery
	seen chan struct{}
}

func newReceiver(t testing.TB, answer func(n int, w http.ResponseWriter)) *receiver {
	r := &receiver{seen: make(chan struct{}, 10000)}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got = append(r.got, delivery{req.Header.Clone(), body, time.Now()})
		n := len(r.got)
		r.mu.Unlock()
		answer(n, w)
		select {
		case r.seen <- struct{}{}:
		default: // a waiter looks at got anyway
		}
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) wait(t testing.TB, n int, within time.Duration) []delivery {
	t.Helper()
	deadline := time.After(within)
	for {
		r.mu.Lock()
		if len(r.got) >= n {
			out := append([]delivery(nil), r.got...)
			r.mu.Unlock()
			return out
		}
		r.mu.Unlock()
		select {
		case <-r.seen:
		case <-time.After(10 * time.Millisecond): // a delivery not yet answered counts too
		case <-deadline:
			t.Fatalf("%d deliveries within %v, want %d", len(r.got), within, n)
		}
	}
}

func status(code int) func(int, http.ResponseWriter) {
	return func(_ int, w http.ResponseWriter) { w.WriteHeader(code) }
}

// world is a service with a platform, its dispatcher running.
type world struct {
	svc        *payments.Service
	platform   uuid.UUID
	dispatcher *dispatch.Dispatcher
}

func newWorld(t testing.TB, opts dispatch.Options) world {
	t.Helper()
	return newWorldOf(t, opts, !pgtest.Enabled())
}

// newWorldOf is newWorld whose dispatcher is the only one of its database (Exclusive: it
// frees the claims left when it starts) or not: a test that runs another dispatcher on
// the database says not, or the one that starts last could free the other's claim.
func newWorldOf(t testing.TB, opts dispatch.Options, exclusive bool) world {
	t.Helper()
	ctx := context.Background()
	dsn, keyFile := pgtest.NewStore(t)
	svc, err := payments.Open(ctx, dsn, payments.Options{WebhookAllow: loopback, KeyFile: keyFile})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	p, err := svc.CreatePlatform(ctx, "Acme", payments.Sandbox)
	if err != nil {
		t.Fatal(err)
	}
	if opts.Allow == nil {
		opts.Allow = loopback
	}
	if opts.Poll == 0 {
		opts.Poll = 50 * time.Millisecond
	}
	// Confined to loopback; with nothing allowed, the guard refuses loopback itself.
	opts.Exclusive, opts.Confined = exclusive, len(opts.Allow) > 0
	if opts.Logger == nil { // what goes wrong with the store shows in a failing test's output
		opts.Logger = slog.New(slog.NewTextHandler(testWriter{t}, nil))
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	d := dispatch.New(svc, opts)
	go func() { done <- d.Run(runCtx) }()
	t.Cleanup(func() { cancel(); <-done })
	return world{svc: svc, platform: p.PlatformID, dispatcher: d}
}

// testWriter writes a log's lines to the test's log; the world's dispatcher stops
// before its test ends.
type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

func (w world) endpoint(t testing.TB, url string, events ...string) payments.WebhookEndpoint {
	t.Helper()
	e, err := w.svc.CreateWebhookEndpoint(context.Background(), w.platform, payments.NewWebhookEndpoint{URL: url, Events: events})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func (w world) user(t testing.TB) payments.User {
	t.Helper()
	u, err := w.svc.CreateUser(context.Background(), w.platform, payments.NewUser{
		Name: "Ada", Email: new("ada" + uuid.NewString()[:8] + "@example.com"),
	})
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func (w world) attempts(t testing.TB, eventID string) []payments.DeliveryAttempt {
	t.Helper()
	d, err := w.svc.GetEvent(context.Background(), w.platform, eventID)
	if err != nil {
		t.Fatal(err)
	}
	return d.Attempts
}

// recorded waits (5 s at most) until the event has n attempts recorded, and returns
// them: an attempt is recorded a little after its receiver has answered.
func (w world) recorded(t testing.TB, eventID string, n int) []payments.DeliveryAttempt {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); len(w.attempts(t, eventID)) < n && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	return w.attempts(t, eventID)
}

func TestDeliversSignedEvents(t *testing.T) {
	w := newWorld(t, dispatch.Options{})
	r := newReceiver(t, status(204))
	e := w.endpoint(t, r.URL+"/hook")
	u := w.user(t)
	got := r.wait(t, 1, 10*time.Second)[0]
	if err := payments.VerifyWebhook(e.Secret, got.header, got.body, 0); err != nil {
		t.Fatalf("delivery does not verify: %v", err)
	}
	for name, want := range map[string]string{"Content-Type": "application/json", "User-Agent": "paymentsd/"} {
		if v := got.header.Get(name); !strings.HasPrefix(v, want) {
			t.Errorf("%s: %q, want %q...", name, v, want)
		}
	}
	if !strings.Contains(string(got.body), `"type":"user.created"`) || !strings.Contains(string(got.body), u.UserID.String()) {
		t.Errorf("body %s", got.body)
	}
	id := got.header.Get("webhook-id")
	if _, err := uuid.Parse(id); err != nil || !strings.Contains(string(got.body), `"id":"`+id+`"`) {
		t.Errorf("webhook-id %q is not the event's id (%s)", id, got.body)
	}
	a := w.recorded(t, id, 1)
	if len(a) != 1 || a[0].StatusCode == nil || *a[0].StatusCode != 204 || a[0].Attempt != 1 || a[0].EndpointID != e.ID {
		t.Fatalf("attempts %+v", a)
	}
}

func TestRetriesKeepTheID(t *testing.T) {
	w := newWorld(t, dispatch.Options{Schedule: []time.Duration{50 * time.Millisecond, 50 * time.Millisecond, 50 * time.Millisecond}})
	r := newReceiver(t, func(n int, w http.ResponseWriter) {
		if n <= 2 {
			w.WriteHeader(500)
			io.WriteString(w, "not now")
		}
	})
	w.endpoint(t, r.URL)
	w.user(t)
	got := r.wait(t, 3, 10*time.Second)
	id := got[0].header.Get("webhook-id")
	for _, d := range got {
		if d.header.Get("webhook-id") != id {
			t.Fatalf("retry with another webhook-id: %q, want %q", d.header.Get("webhook-id"), id)
		}
	}
	time.Sleep(300 * time.Millisecond)
	if n := len(r.got); n != 3 {
		t.Errorf("%d deliveries after a success, want 3", n)
	}
	a := w.recorded(t, id, 3)
	if len(a) != 3 || *a[0].StatusCode != 500 || a[0].Response != "not now" || a[2].Attempt != 3 {
		t.Fatalf("attempts %+v", a)
	}
}

func TestGivesUpAfterTheSchedule(t *testing.T) {
	w := newWorld(t, dispatch.Options{Schedule: []time.Duration{20 * time.Millisecond, 20 * time.Millisecond}})
	r := newReceiver(t, status(503))
	w.endpoint(t, r.URL)
	w.user(t)
	r.wait(t, 3, 10*time.Second)
	// The last attempt's record leaves nothing pending; no fourth attempt follows.
	n, _, err := w.svc.Outbox().PendingDeliveries(context.Background())
	for deadline := time.Now().Add(5 * time.Second); err == nil && n != 0 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
		n, _, err = w.svc.Outbox().PendingDeliveries(context.Background())
	}
	time.Sleep(300 * time.Millisecond)
	r.mu.Lock()
	got := len(r.got)
	r.mu.Unlock()
	if err != nil || n != 0 || got != 3 {
		t.Fatalf("after the schedule: %d pending, %d deliveries, %v", n, got, err)
	}
}

func TestGoneDisablesAndRedirectFails(t *testing.T) {
	w := newWorld(t, dispatch.Options{Schedule: []time.Duration{time.Hour}})
	gone := newReceiver(t, status(410))
	moved := newReceiver(t, func(_ int, w http.ResponseWriter) {
		w.Header().Set("Location", "http://127.0.0.1:1/elsewhere")
		w.WriteHeader(302)
	})
	g := w.endpoint(t, gone.URL)
	w.endpoint(t, moved.URL)
	w.user(t)
	gone.wait(t, 1, 10*time.Second)
	got := moved.wait(t, 1, 10*time.Second)
	id := got[0].header.Get("webhook-id")
	for _, a := range w.recorded(t, id, 2) {
		if a.EndpointID != g.ID && (a.Error == nil || !strings.Contains(*a.Error, "redirect")) {
			t.Errorf("redirect attempt %+v", a)
		}
	}
	list, _ := w.svc.ListWebhookEndpoints(context.Background(), w.platform)
	if list[0].Status != payments.EndpointDisabled || list[1].Status != payments.EndpointEnabled {
		t.Fatalf("after 410 and 302: %s, %s", list[0].Status, list[1].Status)
	}
	w.user(t) // not to the disabled endpoint
	moved.wait(t, 2, 10*time.Second)
	if len(gone.got) != 1 {
		t.Errorf("a disabled endpoint got %d deliveries", len(gone.got))
	}
}

func TestRefusesLoopbackUnlessAllowed(t *testing.T) {
	w := newWorld(t, dispatch.Options{Schedule: []time.Duration{time.Hour}, Allow: []netip.Prefix{}}) // the dialer allows nothing
	r := newReceiver(t, status(200))
	w.endpoint(t, r.URL) // the service allows it, the dispatcher does not
	u := w.user(t)
	page, _ := w.svc.ListEvents(context.Background(), w.platform, payments.EventQuery{})
	id := page.Events[0].ID.String()
	a := w.recorded(t, id, 1)
	if len(a) != 1 || a[0].StatusCode != nil || a[0].Error == nil || !strings.Contains(*a[0].Error, "127.0.0.1") {
		t.Fatalf("attempts %+v (user %s)", a, u.UserID)
	}
	if len(r.got) != 0 {
		t.Fatal("a refused address was reached")
	}
}

// A 503 with Retry-After is tried again after it, within [step, 2×step]: here a step of
// 150ms and Retry-After: 3 (seconds) make 300ms. (3 s, far above the bound, leaves a slow
// run room to tell the clamp from a delay.)
func TestRetryAfterIsHonouredWithinBounds(t *testing.T) {
	w := newWorld(t, dispatch.Options{Schedule: []time.Duration{150 * time.Millisecond}})
	r := newReceiver(t, func(n int, w http.ResponseWriter) {
		if n == 1 {
			w.Header().Set("Retry-After", "3")
			w.WriteHeader(503)
		}
	})
	w.endpoint(t, r.URL)
	w.user(t)
	got := r.wait(t, 2, 10*time.Second)
	if gap := got[1].at.Sub(got[0].at); gap < 280*time.Millisecond || gap > 2500*time.Millisecond {
		t.Fatalf("retried %v after a 503 with Retry-After: 3 and a step of 150ms, want about 300ms", gap)
	}
}

func TestUserAgent(t *testing.T) {
	for v, want := range map[string]string{"v1.2.3": "paymentsd/v1.2.3", "(devel)": "paymentsd/devel", "": "paymentsd/unknown", "a b": "paymentsd/unknown"} {
		if got := dispatch.UserAgent(v); got != want {
			t.Errorf("%q: %q, want %q", v, got, want)
		}
	}
}

// A slow attempt keeps its claim past the lease (its dispatcher renews it): a second
// dispatcher on the same database does not send the delivery again meanwhile.
func TestSlowAttemptKeepsItsClaim(t *testing.T) {
	if testing.Short() {
		t.Skip("waits past a lease")
	}
	// Two dispatchers share the database: neither is its only one. (With the world's
	// dispatcher Exclusive, a start of its Run delayed past the other's claim freed that
	// claim, and the event went twice.)
	w := newWorldOf(t, dispatch.Options{Timeout: 20 * time.Second}, false)
	other, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- dispatch.New(w.svc, dispatch.Options{Allow: loopback, Confined: true, Poll: 50 * time.Millisecond}).Run(other)
	}()
	defer func() { cancel(); <-done }()
	r := newReceiver(t, func(n int, w http.ResponseWriter) {
		if n == 1 {
			time.Sleep(8 * time.Second) // longer than a lease
		}
	})
	w.endpoint(t, r.URL)
	w.user(t)
	time.Sleep(9 * time.Second)
	r.mu.Lock()
	n := len(r.got)
	r.mu.Unlock()
	if n != 1 {
		t.Fatalf("%d deliveries of one event while its first attempt was under way", n)
	}
}
