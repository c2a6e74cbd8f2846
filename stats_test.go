package payments_test

import (
	"context"
	"testing"

	"github.com/platform-payments/payments"
	"github.com/platform-payments/payments/internal/pgtest"
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
	if pgtest.Enabled() {
		// PostgreSQL commits each write on its own, a batch of one, through one pool:
		// the payee rules loaded at open and the platform at least.
		if _, ok := st.Pools["postgres"]; !ok || len(st.Pools) != 1 || st.Commits < 2 || st.CommittedOps != st.Commits ||
			len(st.CommitBatches) != len(payments.CommitBatchBounds()) || st.CommitBatches[0] != st.Commits {
			t.Errorf("Stats on PostgreSQL: %+v, want the one pool \"postgres\" and every commit a batch of one", st)
		}
	} else {
		checkSQLiteStats(t, st)
	}
	if err := svc.Close(); err != nil {
		t.Fatal(err)
	}
	if err := svc.Ping(ctx); err == nil {
		t.Error("Ping on a closed store: nil")
	}
}

// checkSQLiteStats checks the statistics of a SQLite service that created a platform:
// the group committer's batches and the writer and reader pools.
func checkSQLiteStats(t *testing.T, st payments.Stats) {
	t.Helper()
	if len(st.CommitBatches) != len(payments.CommitBatchBounds()) || payments.CommitBatchBounds()[len(payments.CommitBatchBounds())-1] != 128 {
		t.Fatalf("%d batch buckets for bounds %v, want one each up to 128", len(st.CommitBatches), payments.CommitBatchBounds())
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
}
