package storetest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/platform-payments/payments/internal/store"
	"github.com/platform-payments/payments/queries"
)

// Stores opened on one new database at once (as processes starting together open it) all
// open, with one data key (their Setup adds one when there is none, in the migration's
// transaction), and what their Opened checks and writes in one write (no rule set yet, so
// add one) is done by one of them alone, however long the write waits between its check
// and its insert: each such write sees what the one before committed.
func (h *harness) testOpenTogether(t *testing.T) {
	const stores = 6
	ctx := context.Background()
	dsn := h.newDSN(t)
	created := make([]int64, stores) // the rule set each store's Opened added, if any
	opened := make([]store.Store, stores)
	errs := make([]error, stores)
	var wg sync.WaitGroup
	for i := range stores {
		cfg := config()
		cfg.Opened = func(ctx context.Context, st store.Store) error {
			return st.Write(ctx, store.WriteOptions{}, func(ctx context.Context, q store.Querier) (err error) {
				created[i] = 0
				if current, err := q.CurrentRuleSet(ctx); err != nil || current > 0 {
					return err
				}
				time.Sleep(20 * time.Millisecond) // the others check meanwhile, if they can
				created[i], err = q.CreateRuleSet(ctx, queries.CreateRuleSetParams{Source: "storetest", LoadedAt: now()})
				return err
			})
		}
		wg.Go(func() { opened[i], errs[i] = h.engine.Open(ctx, dsn, cfg) })
	}
	wg.Wait()
	var loads int
	for i, err := range errs {
		if err != nil {
			t.Errorf("store %d: Open: %v", i, err)
			continue
		}
		t.Cleanup(func() {
			if err := opened[i].Close(); err != nil {
				t.Errorf("store %d: Close: %v", i, err)
			}
		})
		if created[i] != 0 {
			loads++
		}
	}
	if t.Failed() {
		return
	}
	if loads != 1 {
		t.Errorf("%d stores' Opened added a rule set, want one", loads)
	}
	keys, err := opened[0].Reads().ListDataKeys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 1 {
		t.Errorf("%d data keys stored, want the first Setup's alone", len(keys))
	}
}
