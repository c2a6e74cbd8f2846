package payments_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/platform-payments/payments"
	"github.com/platform-payments/payments/internal/store"
	"github.com/platform-payments/payments/queries"
)

// TestWrite: what a write operation promises on either engine, whoever commits it (the
// group committer on SQLite, a transaction of its own on PostgreSQL; TestGroupCommit
// tests the committer itself).
func TestWrite(t *testing.T) {
	ctx := context.Background()

	t.Run("ErrConflictLeavesNoGap", func(t *testing.T) {
		// A refused create undoes its pw_id: the next user takes the number.
		svc := mustOpen(t)
		p := mustPlatform(t, svc)
		mustUser(t, svc, p.PlatformID, "Taken", "taken@example.com")
		errorOf(t, createUser(svc, ctx, p.PlatformID, "Taken")(), payments.CodeConflict)
		if u := mustUser(t, svc, p.PlatformID, "Ada", "ada@example.com"); u.PwID != 2 {
			t.Errorf("pw_id %d after a refused create, want 2", u.PwID)
		}
	})

	t.Run("ErrCancelledBefore", func(t *testing.T) {
		svc := mustOpen(t)
		p := mustPlatform(t, svc)
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if err := createUser(svc, cctx, p.PlatformID, "Ada")(); !errors.Is(err, context.Canceled) {
			t.Errorf("got %v, want context.Canceled", err)
		}
		if n := userCount(t, svc, p.PlatformID); n != 0 {
			t.Errorf("%d users: the cancelled operation ran", n)
		}
	})

	t.Run("OKCancelledDuring", func(t *testing.T) {
		// Begun, an operation runs to its end: its caller's cancellation does not
		// interrupt its statements.
		path := newDSN(t)
		svc := mustOpenFile(t, path)
		p := mustPlatform(t, svc)
		u := mustUser(t, svc, p.PlatformID, "Ada", "ada@example.com")
		cctx, cancel := context.WithCancel(ctx)
		if err := svc.Write(cctx, func(ctx context.Context, q store.Querier) error {
			cancel()
			_, err := q.VerifyUser(ctx, queries.VerifyUserParams{ID: u.UserID.String(), VerifiedAt: verifiedAt})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if n := queryInt(t, rawDB(t, path), "SELECT count(*) FROM users WHERE verified_at IS NOT NULL"); n != 1 {
			t.Errorf("%d verified users, want 1", n)
		}
	})

	t.Run("PanicRollsBack", func(t *testing.T) {
		// A panicking operation panics again in its caller with its own value, nothing
		// of it is kept, and the service carries on.
		path := newDSN(t)
		svc := mustOpenFile(t, path)
		p := mustPlatform(t, svc)
		u := mustUser(t, svc, p.PlatformID, "Ada", "ada@example.com")
		err := func() (err error) {
			defer func() {
				if v := recover(); v != "boom" {
					err = fmt.Errorf("recovered %v, want boom", v)
				}
			}()
			svc.Write(ctx, func(ctx context.Context, q store.Querier) error {
				if _, err := q.VerifyUser(ctx, queries.VerifyUserParams{ID: u.UserID.String(), VerifiedAt: verifiedAt}); err != nil {
					return err
				}
				panic("boom")
			})
			return errors.New("no panic")
		}()
		if err != nil {
			t.Fatal(err)
		}
		if n := queryInt(t, rawDB(t, path), "SELECT count(*) FROM users WHERE verified_at IS NOT NULL"); n != 0 {
			t.Errorf("%d verified users: the panicking operation's change was kept", n)
		}
		if u := mustUser(t, svc, p.PlatformID, "Bo", "bo@example.com"); u.PwID != 2 {
			t.Errorf("pw_id %d after the panic, want 2", u.PwID)
		}
	})

	t.Run("CloseUnderLoad", func(t *testing.T) {
		// Close while writers are busy: it returns, every writer gets its answer, and
		// every create answered as done is stored. (On PostgreSQL, Close closed the
		// prepared statements under the transactions still using them: a commit could
		// hang in database/sql, holding the platform's row lock.)
		path := newDSN(t)
		svc := mustOpenFile(t, path)
		p := mustPlatform(t, svc)
		var wg sync.WaitGroup
		var done atomic.Int64
		for w := range 16 {
			wg.Go(func() {
				for i := range 1000 {
					if createUser(svc, ctx, p.PlatformID, fmt.Sprintf("W%dU%d", w, i))() != nil {
						return
					}
					done.Add(1)
				}
			})
		}
		for done.Load() < 50 {
			time.Sleep(time.Millisecond)
		}
		finished := make(chan error, 1)
		go func() {
			err := svc.Close()
			wg.Wait()
			finished <- err
		}()
		select {
		case err := <-finished:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("Close with writes under way: the writers never got their answers")
		}
		if n := userCount(t, mustOpenFile(t, path), p.PlatformID); n != done.Load() {
			t.Errorf("%d users stored, %d answered as created", n, done.Load())
		}
	})

	t.Run("ErrAfterClose", func(t *testing.T) {
		// Close ends the service: a write after it fails; what was written before stays.
		path := newDSN(t)
		svc := mustOpenFile(t, path)
		p := mustPlatform(t, svc)
		mustUser(t, svc, p.PlatformID, "Ada", "ada@example.com")
		if err := svc.Close(); err != nil {
			t.Fatal(err)
		}
		if err := createUser(svc, ctx, p.PlatformID, "Bo")(); err == nil {
			t.Error("a write after Close succeeded")
		}
		if n := userCount(t, mustOpenFile(t, path), p.PlatformID); n != 1 {
			t.Errorf("%d users after reopening, want 1", n)
		}
	})
}
