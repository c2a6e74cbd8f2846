package postgres

import (
	"context"
	"time"

	"github.com/platform-payments/payments/internal/store/postgres/pgqueries"
	"github.com/platform-payments/payments/queries"
)

// listWait is the longest ListEvents waits for the events that have committed but are not
// listed yet: an open transaction that began before them holds them back (migrations/0009).
const listWait = 2 * time.Second

// feed is the statements of Reads, with a ListEvents that waits, a little, for the events
// committed before it is asked.
type feed struct{ pgqueries.Adapter }

// ListEvents lists the events after arg's cursor (pgqueries' ListEvents). When the page
// is not full and events of the platform (of arg.Type) have committed after the last it
// lists (held back, or passed by the horizon since the list's statement), it waits until
// every transaction up to the last of them has ended, and lists again: a caller reads the events of writes answered before it asks, unless a
// transaction stays open longer than listWait (or ctx ends), when it answers what is
// listed. It waits for those events only, not for those committed meanwhile, so that a
// steady stream of writes does not keep it waiting.
func (f feed) ListEvents(ctx context.Context, arg queries.ListEventsParams) ([]queries.Event, error) {
	rows, err := f.Adapter.ListEvents(ctx, arg)
	if err != nil || int64(len(rows)) >= arg.PageSize {
		return rows, err
	}
	after := arg.AfterID // the last event the caller will have seen
	if len(rows) > 0 {
		after = rows[len(rows)-1].ID
	}
	last, err := f.Q.LastUnlistedEvent(ctx, pgqueries.LastUnlistedEventParams{PlatformID: arg.PlatformID, Type: arg.Type, AfterID: after})
	if err != nil || last == "" {
		return rows, err
	}
	deadline := time.NewTimer(listWait)
	defer deadline.Stop()
	for pause := 500 * time.Microsecond; ; pause = min(2*pause, 20*time.Millisecond) {
		select {
		case <-ctx.Done():
			return rows, nil
		case <-deadline.C:
			return rows, nil
		case <-time.After(pause):
		}
		passed, err := f.Q.HorizonPassed(ctx, last)
		if err != nil {
			return nil, err
		}
		if passed {
			return f.Adapter.ListEvents(ctx, arg)
		}
	}
}
