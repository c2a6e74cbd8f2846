package dispatch_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/platform-payments/payments"
	"github.com/platform-payments/payments/dispatch"
	"github.com/platform-payments/payments/internal/pgtest"
)

// BenchmarkRecovery: b.N events of a platform made while its one endpoint was disabled by
// hand; enabled again, Recover Webhook Endpoint queues them all, and the dispatcher
// delivers them to a receiver on 127.0.0.1. Reports the time to queue and the time to
// deliver (issue 32's figure: go test -run '^$' -bench Recovery -benchtime 10000x ./dispatch).
func BenchmarkRecovery(b *testing.B) {
	ctx := context.Background()
	var got atomic.Int64
	done := make(chan struct{})
	n := int64(b.N)
	r := newReceiver(b, func(int, http.ResponseWriter) {
		if got.Add(1) == n {
			close(done)
		}
	})
	dsn, keyFile := pgtest.NewStore(b)
	svc, err := payments.Open(ctx, dsn, payments.Options{WebhookAllow: loopback, KeyFile: keyFile})
	if err != nil {
		b.Fatal(err)
	}
	defer svc.Close()
	p, _ := svc.CreatePlatform(ctx, "Acme", payments.Sandbox)
	w := world{svc: svc, platform: p.PlatformID}
	e := w.endpoint(b, r.URL)
	if _, err := svc.DisableWebhookEndpoint(ctx, p.PlatformID, e.ID.String()); err != nil {
		b.Fatal(err)
	}
	since := svc.Now().Add(-time.Second)
	for range b.N {
		w.user(b)
	}
	if _, err := svc.EnableWebhookEndpoint(ctx, p.PlatformID, e.ID.String()); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	start := time.Now()
	rec, err := svc.RecoverWebhookEndpoint(ctx, p.PlatformID, e.ID.String(), payments.WebhookRecovery{Since: since})
	queued := time.Since(start)
	if err != nil || rec.Queued != n {
		b.Fatalf("recovery queued %d, %v; want %d", rec.Queued, err, n)
	}
	runCtx, cancel := context.WithCancel(ctx)
	stopped := make(chan error, 1)
	go func() {
		stopped <- dispatch.New(svc, dispatch.Options{Allow: loopback, Exclusive: !pgtest.Enabled(), Confined: true}).Run(runCtx)
	}()
	<-done
	delivered := time.Since(start)
	b.StopTimer()
	cancel()
	<-stopped
	b.ReportMetric(float64(queued.Microseconds())/1000, "queue_ms")
	b.ReportMetric(float64(delivered.Microseconds())/1000, "deliver_ms")
}
