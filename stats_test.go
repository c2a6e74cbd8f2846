package payments_test

import (
	"context"
	"testing"

	"github.com/platform-payments/payments"
)

func TestPingAndStats(t *testing.T) {
	ctx := context.Background()
	svc := mustOpen(t)
	if err := svc.Ping(ctx); err != nil {
		t.Fatalf("Ping: %v", err)
	}
	if _, err := svc.CreatePlatform(ctx, "Acme", payments.Sandbox); err != nil {
		t.Fatal(err)
	}
	st := svc.Stats()
	if len(st.CommitBatches) != len(payments.CommitBatchBounds) || payments.CommitBatchBounds[len(payments.CommitBatchBounds)-1] != 128 {
		t.Fatalf("%d batch buckets for bounds %v, want one each up to 128", len(st.CommitBatches), payments.CommitBatchBounds)
	}
	var batches int64
	for _, n := range st.CommitBatches {
		batches += n
	}
	if st.Commits == 0 || batches != st.Commits || st.CommitBatches[0] == 0 {
		t.Errorf("Stats: %d commits, %d in the buckets %v, want the same, a batch of one among them", st.Commits, batches, st.CommitBatches)
	}
	if st.Pools["writer"].MaxOpenConnections != 1 || st.Pools["reader"].MaxOpenConnections < 4 {
		t.Errorf("pools: writer at most %d, reader at most %d", st.Pools["writer"].MaxOpenConnections, st.Pools["reader"].MaxOpenConnections)
	}
	if err := svc.Close(); err != nil {
		t.Fatal(err)
	}
	if err := svc.Ping(ctx); err == nil {
		t.Error("Ping on a closed store: nil")
	}
}
