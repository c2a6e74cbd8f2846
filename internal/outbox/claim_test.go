package outbox_test

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/platform-payments/payments"
	"github.com/platform-payments/payments/internal/outbox"
	"github.com/platform-payments/payments/internal/pgtest"
)

// TestClaimFair: what one claim gives each endpoint, on either engine: no more than the
// bound held at once (counting earlier claims); one at a time for a failing endpoint;
// only retries, at their time, once BreakAfter of a failing endpoint's deliveries wait
// to be retried; everything again after a success.
func TestClaimFair(t *testing.T) {
	ctx := context.Background()
	dsn, keyFile := pgtest.NewStore(t)
	svc, err := payments.Open(ctx, dsn, payments.Options{KeyFile: keyFile, WebhookAllow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	box := svc.Outbox()
	p, err := svc.CreatePlatform(ctx, "Acme", payments.Sandbox)
	if err != nil {
		t.Fatal(err)
	}
	endpoint := func(path string) string {
		e, err := svc.CreateWebhookEndpoint(ctx, p.PlatformID, payments.NewWebhookEndpoint{
			URL: "http://127.0.0.1:9/" + path, Events: []string{"user.created"},
		})
		if err != nil {
			t.Fatal(err)
		}
		return e.ID.String()
	}
	a := endpoint("a")
	users := func(n int) {
		for range n {
			if _, err := svc.CreateUser(ctx, p.PlatformID, payments.NewUser{
				Name: "Ada", Email: new(uuid.NewString()[:8] + "@example.com"),
			}); err != nil {
				t.Fatal(err)
			}
		}
	}
	byEndpoint := func(ds []outbox.Delivery) map[string]int {
		out := map[string]int{}
		for _, d := range ds {
			out[d.EndpointID]++
		}
		return out
	}
	claim := func(max int, f outbox.Fairness) []outbox.Delivery {
		t.Helper()
		ds, err := box.ClaimFair(ctx, max, f, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		return ds
	}
	fail := func(ds []outbox.Delivery) {
		t.Helper()
		var rs []outbox.AttemptResult
		for _, d := range ds {
			rs = append(rs, outbox.AttemptResult{Delivery: d, At: svc.Now(), StatusCode: 500, Error: "status 500"})
		}
		// The retries an hour away: not due within the test.
		if err := box.RecordAttempts(ctx, rs, outbox.DeliveryPolicy{Schedule: []time.Duration{time.Hour, time.Hour}}); err != nil {
			t.Fatal(err)
		}
	}
	fair := outbox.Fairness{PerEndpoint: 3, BreakAfter: 2}

	users(10) // ten deliveries to a
	b := endpoint("b")
	users(2) // two more to a, two to b
	first := claim(100, fair)
	if got := byEndpoint(first); got[a] != 3 || got[b] != 2 {
		t.Fatalf("first claim: %v; want 3 of a's (its bound) and b's 2", got)
	}
	if got := byEndpoint(claim(100, fair)); len(got) != 0 {
		t.Fatalf("a second claim while the first's are held: %v; want none", got)
	}

	// a fails: a failing endpoint gets one at a time, and once two of its deliveries wait
	// to be retried (BreakAfter 2) its circuit is open: none of its fresh ones.
	var ofA []outbox.Delivery
	for _, d := range first {
		if d.EndpointID == a {
			ofA = append(ofA, d)
		}
	}
	fail(ofA[:1])
	// The other two go back unsent, as the dispatcher gives them back (a lease ending now).
	if err := box.ExtendClaims(ctx, []int64{ofA[1].ID, ofA[2].ID}, 0); err != nil {
		t.Fatal(err)
	}
	one := claim(100, fair)
	if got := byEndpoint(one); got[a] != 1 || len(got) != 1 {
		t.Fatalf("after one failure: %v; want one of a's", got)
	}
	if got := byEndpoint(claim(100, fair)); len(got) != 0 {
		t.Fatalf("with a failing endpoint's one held: %v; want none", got)
	}
	fail(one)
	if got := byEndpoint(claim(100, fair)); len(got) != 0 {
		t.Fatalf("circuit open: %v; want none (the retries are an hour away)", got)
	}
	n, err := box.OpenCircuits(ctx, fair.BreakAfter)
	if err != nil || n != 1 {
		t.Fatalf("OpenCircuits = %d, %v; want 1", n, err)
	}
	// A higher BreakAfter: the circuit is half open, one fresh delivery goes.
	if got := byEndpoint(claim(100, outbox.Fairness{PerEndpoint: 3, BreakAfter: 10})); got[a] != 1 {
		t.Fatalf("half open: %v; want one of a's", got)
	}

	// b's two, recorded as successes, leave room for b's next.
	users(1)
	var rs []outbox.AttemptResult
	for _, d := range first {
		if d.EndpointID == b {
			rs = append(rs, outbox.AttemptResult{Delivery: d, At: svc.Now(), StatusCode: 204, Succeeded: true})
		}
	}
	if err := box.RecordAttempts(ctx, rs, outbox.DeliveryPolicy{}); err != nil {
		t.Fatal(err)
	}
	if got := byEndpoint(claim(100, fair)); got[b] != 1 || got[a] != 0 {
		t.Fatalf("after b's successes: %v; want b's new one and none of a's", got)
	}
}
