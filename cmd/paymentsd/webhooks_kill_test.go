package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/platform-payments/payments"
	"github.com/platform-payments/payments/internal/pgtest"
)

// hookReceiver is a webhook endpoint on 127.0.0.1 that records each delivery's
// webhook-id and whether it verifies; while hold is set it keeps the request open.
type hookReceiver struct {
	*httptest.Server
	secret  string
	mu      sync.Mutex
	ids     []string
	bad     int
	held    chan struct{} // a request is being held
	release chan struct{} // closed: held requests return
	holding bool
}

func newHookReceiver(t *testing.T) *hookReceiver {
	r := &hookReceiver{held: make(chan struct{}, 100), release: make(chan struct{})}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		holding, secret := r.holding, r.secret
		r.mu.Unlock()
		if holding {
			r.held <- struct{}{}
			<-r.release
			return // the server that sent it is dead: its answer goes nowhere
		}
		r.mu.Lock()
		if payments.VerifyWebhook(secret, req.Header, body, 0) == nil {
			r.ids = append(r.ids, req.Header.Get("webhook-id"))
		} else {
			r.bad++
		}
		r.mu.Unlock()
	}))
	t.Cleanup(func() {
		r.mu.Lock()
		if r.holding {
			close(r.release)
			r.holding = false
		}
		r.mu.Unlock()
		r.Close()
	})
	return r
}

// received returns how many verified deliveries each webhook-id had.
func (r *hookReceiver) received() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]int{}
	for _, id := range r.ids {
		out[id]++
	}
	return out
}

// TestWebhookSurvivesKill: a delivery under way when its server is killed (SIGKILL) is
// delivered once the server is back: on SQLite at once (the one dispatcher of a file
// frees what it had claimed), on PostgreSQL when the claim's lease ends.
func TestWebhookSurvivesKill(t *testing.T) {
	ctx := context.Background()
	dsn, keyFile := pgtest.NewStore(t)
	if keyFile == "" {
		keyFile = payments.DefaultKeyFile(dsn)
	}
	loopback := []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	admin, err := payments.Open(ctx, dsn, payments.Options{KeyFile: keyFile, WebhookAllow: loopback})
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	p, err := admin.CreatePlatform(ctx, "Acme", payments.Sandbox)
	if err != nil {
		t.Fatal(err)
	}
	r := newHookReceiver(t)
	e, err := admin.CreateWebhookEndpoint(ctx, p.PlatformID, payments.NewWebhookEndpoint{URL: r.URL + "/hook"})
	if err != nil {
		t.Fatal(err)
	}
	r.secret, r.holding = e.Secret, true

	bin := filepath.Join(t.TempDir(), "paymentsd")
	if err := os.Symlink(os.Args[0], bin); err != nil {
		t.Fatal(err)
	}
	flags := []string{"-webhook-allow-cidr", "127.0.0.0/8", "-webhook-timeout", "3s", "-webhook-retry-schedule", "1s"}
	srv := startInstance(t, bin, dsn, keyFile, 0, flags...)

	// The change commits; the server claims its delivery and is killed while sending it.
	u, err := admin.CreateUser(ctx, p.PlatformID, payments.NewUser{Name: "Ada", Email: new("ada@example.com")})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-r.held:
	case <-time.After(20 * time.Second):
		t.Fatalf("no delivery within 20s\n%s", srv.log)
	}
	srv.kill()
	r.mu.Lock()
	r.holding = false
	close(r.release)
	r.mu.Unlock()

	start := time.Now()
	srv = startInstance(t, bin, dsn, keyFile, 1, flags...)
	defer srv.stop(t)
	page, err := admin.ListEvents(ctx, p.PlatformID, payments.EventQuery{Type: payments.EventUserCreated})
	if err != nil || len(page.Events) != 1 || page.Events[0].Data.Object.ID != u.UserID.String() {
		t.Fatalf("events %+v, %v", page, err)
	}
	id := page.Events[0].ID.String()
	for r.received()[id] == 0 {
		if time.Since(start) > 30*time.Second {
			t.Fatalf("the event was not delivered within 30s of the restart\n%s", srv.log)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("delivered %v after the restart", time.Since(start).Round(time.Millisecond))
	if _, err := uuid.Parse(id); err != nil || r.bad != 0 {
		t.Fatalf("webhook-id %q, %d deliveries that do not verify", id, r.bad)
	}
}
