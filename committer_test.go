package payments_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/platform-payments/payments"
	"github.com/platform-payments/payments/internal/pgtest"
	"github.com/platform-payments/payments/internal/store"
	"github.com/platform-payments/payments/queries"
)

// held is a write operation that holds the committer inside its batch until released, so
// that a test can line up the operations of the next batch.
type held struct {
	release func()
	err     chan error
}

func hold(t *testing.T, svc *payments.Service) held {
	t.Helper()
	started, release := make(chan struct{}), make(chan struct{})
	h := held{release: sync.OnceFunc(func() { close(release) }), err: make(chan error, 1)}
	go func() {
		h.err <- svc.Write(context.Background(), func(context.Context, store.Querier) error {
			close(started)
			<-release
			return nil
		})
	}()
	<-started
	t.Cleanup(h.release)
	return h
}

// queued starts op in a goroutine and waits until it waits for a batch (there are then
// want operations waiting), so that operations are taken in the order they are queued.
func queued(t *testing.T, svc *payments.Service, want int64, op func() error) <-chan error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- op() }()
	for deadline := time.Now().Add(5 * time.Second); svc.WritesWaiting() != want; {
		if time.Now().After(deadline) {
			t.Fatalf("%d writes waiting, want %d", svc.WritesWaiting(), want)
		}
		time.Sleep(time.Millisecond)
	}
	return done
}

func createUser(svc *payments.Service, ctx context.Context, platformID uuid.UUID, name string) func() error {
	return func() error {
		email := strings.ToLower(name) + "@example.com"
		_, err := svc.CreateUser(ctx, platformID, payments.NewUser{Name: name, Email: &email})
		return err
	}
}

// userNames lists the names of the platform's users, sorted.
func userNames(t *testing.T, svc *payments.Service, platformID uuid.UUID) string {
	t.Helper()
	var out []string
	for _, u := range listAll(t, svc, platformID) {
		out = append(out, u.Name)
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

// batchesSince returns the batches committed and the operations they carried since the
// counts before.
func batchesSince(svc *payments.Service, before [2]int64) (batches, ops int64) {
	b, o := svc.Committed()
	return b - before[0], o - before[1]
}

var verifiedAt = new("2025-01-02T03:04:05.000000Z")

func committed(svc *payments.Service) [2]int64 {
	b, o := svc.Committed()
	return [2]int64{b, o}
}

// TestGroupCommit tests the engine's group committer with one runner, so that the
// operations a test queues wait behind the batch it holds (how runners share the waiting
// operations is internal/store/groupcommit's test). What a write promises is TestWrite's,
// and concurrent writers TestConcurrentWrites' and TestCreateUser_Concurrent's.
func TestGroupCommit(t *testing.T) {
	// On PostgreSQL, half the pool runs batches: two connections, one runner. SQLite
	// always has one.
	mustOpen := func(t *testing.T) *payments.Service { return mustOpen(t, payments.Options{MaxConns: 2}) }
	mustOpenFile := func(t *testing.T, dsn string) *payments.Service {
		return mustOpenFile(t, dsn, payments.Options{MaxConns: 2})
	}
	ctx := context.Background()

	t.Run("OKConcurrentCreates", func(t *testing.T) {
		// Many writers at once: every create succeeds, pw_ids are dense, and commits
		// carry several operations each.
		const workers, each = 32, 20
		svc := mustOpen(t)
		p := mustPlatform(t, svc)
		before := committed(svc)
		var wg sync.WaitGroup
		errs := make(chan error, workers*each)
		for w := range workers {
			wg.Go(func() {
				for i := range each {
					errs <- createUser(svc, ctx, p.PlatformID, fmt.Sprintf("W%dU%d", w, i))()
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Error(err)
			}
		}
		all := listAll(t, svc, p.PlatformID)
		if len(all) != workers*each {
			t.Fatalf("%d users, want %d", len(all), workers*each)
		}
		for i, u := range all {
			if i > 0 && u.PwID != all[i-1].PwID+1 {
				t.Errorf("record %d: pw_id %d after %d", i, u.PwID, all[i-1].PwID)
			}
		}
		batches, ops := batchesSince(svc, before)
		if ops != workers*each {
			t.Errorf("%d operations committed, want %d", ops, workers*each)
		}
		if batches >= ops {
			t.Errorf("%d commits for %d operations: no batching", batches, ops)
		}
		t.Logf("%d operations in %d commits", ops, batches)
	})

	t.Run("OKOneCommitForTheWaiting", func(t *testing.T) {
		svc := mustOpen(t)
		p := mustPlatform(t, svc)
		before := committed(svc)
		h := hold(t, svc)
		var done []<-chan error
		for i := range 10 {
			done = append(done, queued(t, svc, int64(i+1), createUser(svc, ctx, p.PlatformID, fmt.Sprintf("U%02d", i))))
		}
		h.release()
		for _, d := range append(done, h.err) {
			if err := <-d; err != nil {
				t.Error(err)
			}
		}
		if batches, ops := batchesSince(svc, before); batches != 2 || ops != 11 {
			t.Errorf("%d operations in %d commits, want 11 in 2 (the holder's, then the 10 waiting)", ops, batches)
		}
		if got := userCount(t, svc, p.PlatformID); got != 10 {
			t.Errorf("%d users, want 10", got)
		}
	})

	t.Run("OKCreatesOfPlatformsTogether", func(t *testing.T) {
		// One batch of creates of two platforms, and of one that does not exist, with
		// another write among them: each platform numbers its users in the order they
		// were queued, and only the create without a platform fails.
		svc := mustOpen(t)
		p1, p2 := mustPlatform(t, svc), mustPlatform(t, svc)
		before := committed(svc)
		h := hold(t, svc)
		a := queued(t, svc, 1, createUser(svc, ctx, p1.PlatformID, "Ada"))
		b := queued(t, svc, 2, createUser(svc, ctx, p2.PlatformID, "Bo"))
		other := queued(t, svc, 3, func() error {
			return svc.Write(ctx, func(context.Context, store.Querier) error { return nil })
		})
		c := queued(t, svc, 4, createUser(svc, ctx, p1.PlatformID, "Cy"))
		none := queued(t, svc, 5, createUser(svc, ctx, uuid.New(), "Dee"))
		e := queued(t, svc, 6, createUser(svc, ctx, p2.PlatformID, "Eve"))
		h.release()
		for _, d := range []<-chan error{a, b, other, c, e, h.err} {
			if err := <-d; err != nil {
				t.Error(err)
			}
		}
		errorOf(t, <-none, payments.CodeNotFound)
		if batches, ops := batchesSince(svc, before); batches != 2 || ops != 6 {
			t.Errorf("%d operations in %d commits, want 6 in 2", ops, batches)
		}
		for _, c := range []struct {
			platform uuid.UUID
			want     string
		}{{p1.PlatformID, "1 Ada, 2 Cy"}, {p2.PlatformID, "1 Bo, 2 Eve"}} {
			var got []string
			all := listAll(t, svc, c.platform)
			for i, u := range all {
				got = append(got, fmt.Sprintf("%d %s", u.PwID, u.Name))
				if i > 0 && u.CreatedAt.Before(all[i-1].CreatedAt) {
					t.Errorf("%s created at %v, before %s at %v", u.Name, u.CreatedAt, all[i-1].Name, all[i-1].CreatedAt)
				}
			}
			if strings.Join(got, ", ") != c.want {
				t.Errorf("users %q, want %q", strings.Join(got, ", "), c.want)
			}
		}
	})

	t.Run("ErrFailsAloneBesideCreates", func(t *testing.T) {
		// A write that fails while the creates before it wait for theirs (PostgreSQL
		// writes a batch's creates together) fails alone: the creates are kept.
		svc := mustOpen(t)
		p := mustPlatform(t, svc)
		before := committed(svc)
		h := hold(t, svc)
		a := queued(t, svc, 1, createUser(svc, ctx, p.PlatformID, "Ada"))
		failing := queued(t, svc, 2, func() error {
			return svc.Write(ctx, func(context.Context, store.Querier) error { return errors.New("refused") })
		})
		c := queued(t, svc, 3, createUser(svc, ctx, p.PlatformID, "Cy"))
		h.release()
		for _, d := range []<-chan error{a, c, h.err} {
			if err := <-d; err != nil {
				t.Error(err)
			}
		}
		if err := <-failing; err == nil || err.Error() != "refused" {
			t.Errorf("got %v, want the operation's error", err)
		}
		if batches, ops := batchesSince(svc, before); batches != 2 || ops != 3 {
			t.Errorf("%d operations in %d commits, want 3 in 2", ops, batches)
		}
		var got []string
		for _, u := range listAll(t, svc, p.PlatformID) {
			got = append(got, fmt.Sprintf("%d %s", u.PwID, u.Name))
		}
		if strings.Join(got, ", ") != "1 Ada, 2 Cy" {
			t.Errorf("users %q, want %q", strings.Join(got, ", "), "1 Ada, 2 Cy")
		}
	})

	t.Run("OKKeyedCreatesTogether", func(t *testing.T) {
		// Creates under idempotency keys in one batch each store their outcome (PostgreSQL
		// writes a batch's records together at its end): the same key replays it.
		svc := mustOpen(t)
		p := mustPlatform(t, svc)
		keyed := func(key, name string) func() error {
			return func() error {
				email := strings.ToLower(name) + "@example.com"
				_, err := svc.CreateUser(ctx, p.PlatformID, payments.NewUser{Name: name, Email: &email}, payments.WithKey(&payments.Idempotency{Key: key}))
				return err
			}
		}
		h := hold(t, svc)
		a := queued(t, svc, 1, keyed("key-ada", "Ada"))
		b := queued(t, svc, 2, keyed("key-bo", "Bo"))
		c := queued(t, svc, 3, keyed("key-cy", "Cy"))
		h.release()
		for _, d := range []<-chan error{a, b, c, h.err} {
			if err := <-d; err != nil {
				t.Error(err)
			}
		}
		for _, c := range []struct{ key, name string }{{"key-ada", "Ada"}, {"key-bo", "Bo"}, {"key-cy", "Cy"}} {
			idem := &payments.Idempotency{Key: c.key}
			email := strings.ToLower(c.name) + "@example.com"
			u, err := svc.CreateUser(ctx, p.PlatformID, payments.NewUser{Name: c.name, Email: &email}, payments.WithKey(idem))
			if err != nil || !idem.Replayed || u.Name != c.name {
				t.Errorf("%s again: %+v, replayed %v, %v", c.key, u, idem.Replayed, err)
			}
		}
		if got := userCount(t, svc, p.PlatformID); got != 3 {
			t.Errorf("%d users, want 3", got)
		}
	})

	t.Run("ErrKeyStoredMeanwhileFailsAlone", func(t *testing.T) {
		// A keyed create whose key another process stores while it waits for its batch
		// fails alone (409, its request in flight elsewhere); the creates beside it are
		// kept. PostgreSQL: on SQLite the held batch holds the file's write lock, which the
		// other process would wait for.
		if !pgtest.Enabled() {
			t.Skip("PostgreSQL only")
		}
		dsn := newDSN(t)
		svc := mustOpenFile(t, dsn)
		other := mustOpenFile(t, dsn)
		p := mustPlatform(t, svc)
		keyed := func(s *payments.Service, key, name string) func() error {
			return func() error {
				email := strings.ToLower(name) + "@example.com"
				_, err := s.CreateUser(ctx, p.PlatformID, payments.NewUser{Name: name, Email: &email}, payments.WithKey(&payments.Idempotency{Key: key}))
				return err
			}
		}
		h := hold(t, svc)
		a := queued(t, svc, 1, keyed(svc, "key-ada", "Ada"))
		dup := queued(t, svc, 2, keyed(svc, "key-dup", "Dee"))
		c := queued(t, svc, 3, keyed(svc, "key-cy", "Cy"))
		// The other process, first, under the same key (with another email: the conflict
		// is the key's, not the email's).
		if err := keyed(other, "key-dup", "Eve")(); err != nil {
			t.Fatal(err)
		}
		h.release()
		for _, d := range []<-chan error{a, c, h.err} {
			if err := <-d; err != nil {
				t.Error(err)
			}
		}
		errorOf(t, <-dup, payments.CodeConflict)
		if got, want := userNames(t, svc, p.PlatformID), "Ada Cy Eve"; got != want {
			t.Errorf("users %q, want %q", got, want)
		}
	})

	t.Run("ErrConflictFailsAlone", func(t *testing.T) {
		// A duplicate email in the middle of a batch rolls back to its own savepoint: the
		// operations before and after it in the same transaction are kept.
		svc := mustOpen(t)
		p := mustPlatform(t, svc)
		mustUser(t, svc, p.PlatformID, "Taken", "taken@example.com")
		before := committed(svc)
		h := hold(t, svc)
		a := queued(t, svc, 1, createUser(svc, ctx, p.PlatformID, "Ada"))
		dup := queued(t, svc, 2, createUser(svc, ctx, p.PlatformID, "Taken"))
		c := queued(t, svc, 3, createUser(svc, ctx, p.PlatformID, "Cy"))
		h.release()
		for _, d := range []<-chan error{a, c, h.err} {
			if err := <-d; err != nil {
				t.Error(err)
			}
		}
		errorOf(t, <-dup, payments.CodeConflict)
		if batches, ops := batchesSince(svc, before); batches != 2 || ops != 3 {
			t.Errorf("%d operations in %d commits, want 3 in 2", ops, batches)
		}
		if got, want := userNames(t, svc, p.PlatformID), "Ada Cy Taken"; got != want {
			t.Errorf("users %q, want %q", got, want)
		}
		all := listAll(t, svc, p.PlatformID)
		for i, u := range all {
			if i > 0 && u.PwID != all[i-1].PwID+1 {
				t.Errorf("pw_id %d after %d: the refused operation left a gap", u.PwID, all[i-1].PwID)
			}
		}
	})

	t.Run("EventsFailAlone", func(t *testing.T) {
		// The events an operation records go with it: kept when it is, undone when it
		// fails, whichever engine writes them when.
		svc := mustOpen(t)
		p := mustPlatform(t, svc)
		event := func(fail bool) (uuid.UUID, func() error) {
			id := uuid.Must(uuid.NewV7())
			payload, err := json.Marshal(payments.Event{ID: id, Type: payments.EventUserCreated, Timestamp: time.Now().UTC(),
				PlatformID: p.PlatformID, Environment: payments.Sandbox})
			if err != nil {
				t.Fatal(err)
			}
			return id, func() error {
				return svc.Write(ctx, func(ctx context.Context, q store.Querier) error {
					if _, err := q.RecordEvent(ctx, queries.CreateEventParams{ID: id.String(), PlatformID: p.PlatformID.String(),
						Type: payments.EventUserCreated, CreatedAt: time.Now().UTC().Format("2006-01-02T15:04:05.000000Z"),
						Payload: string(payload)}); err != nil {
						return err
					}
					if fail {
						return errors.New("refused")
					}
					return nil
				})
			}
		}
		h := hold(t, svc)
		first, write1 := event(false)
		_, write2 := event(true)
		third, write3 := event(false)
		a := queued(t, svc, 1, write1)
		b := queued(t, svc, 2, write2)
		c := queued(t, svc, 3, write3)
		h.release()
		for _, d := range []<-chan error{a, c, h.err} {
			if err := <-d; err != nil {
				t.Error(err)
			}
		}
		if err := <-b; err == nil || err.Error() != "refused" {
			t.Errorf("got %v, want the operation's error", err)
		}
		page, err := svc.ListEvents(ctx, p.PlatformID, payments.EventQuery{})
		if err != nil {
			t.Fatal(err)
		}
		var got []uuid.UUID
		for _, e := range page.Events {
			got = append(got, e.ID)
		}
		if want := []uuid.UUID{first, third}; !slices.Equal(got, want) {
			t.Errorf("events %v, want %v", got, want)
		}
	})

	t.Run("ErrCancelledWhileWaiting", func(t *testing.T) {
		svc := mustOpen(t)
		p := mustPlatform(t, svc)
		h := hold(t, svc)
		cctx, cancel := context.WithCancel(ctx)
		d := queued(t, svc, 1, createUser(svc, cctx, p.PlatformID, "Ada"))
		cancel()
		if err := <-d; !errors.Is(err, context.Canceled) {
			t.Errorf("got %v, want context.Canceled", err)
		}
		h.release()
		if err := <-h.err; err != nil {
			t.Fatal(err)
		}
		if n := userCount(t, svc, p.PlatformID); n != 0 {
			t.Errorf("%d users: the cancelled operation ran", n)
		}
	})

	t.Run("ErrCancelledBeforeItsTurn", func(t *testing.T) {
		// Taken into a batch, then cancelled by the operation before it: never run. (A
		// Create User's turn, on PostgreSQL, is its batch's start, where the batch's users
		// are written together: the write here is another.)
		svc := mustOpen(t)
		p := mustPlatform(t, svc)
		h := hold(t, svc)
		cctx, cancel := context.WithCancel(ctx)
		first := queued(t, svc, 1, func() error {
			return svc.Write(ctx, func(context.Context, store.Querier) error { cancel(); return nil })
		})
		var ran atomic.Bool
		second := queued(t, svc, 2, func() error {
			return svc.Write(cctx, func(context.Context, store.Querier) error { ran.Store(true); return nil })
		})
		third := queued(t, svc, 3, createUser(svc, ctx, p.PlatformID, "Bo"))
		h.release()
		for _, d := range []<-chan error{h.err, first, third} {
			if err := <-d; err != nil {
				t.Error(err)
			}
		}
		if err := <-second; !errors.Is(err, context.Canceled) || ran.Load() {
			t.Errorf("got %v (ran %t), want context.Canceled, not run", err, ran.Load())
		}
		if got, want := userNames(t, svc, p.PlatformID), "Bo"; got != want {
			t.Errorf("users %q, want %q", got, want)
		}
	})

	t.Run("OKCancelledDuringItsTurn", func(t *testing.T) {
		// Once its turn has come an operation runs to its end: its caller's cancellation
		// must not interrupt its statements (SQLite would roll the whole batch back).
		path := newDSN(t)
		svc := mustOpenFile(t, path)
		p := mustPlatform(t, svc)
		u := mustUser(t, svc, p.PlatformID, "Ada", "ada@example.com")
		h := hold(t, svc)
		cctx, cancel := context.WithCancel(ctx)
		verify := queued(t, svc, 1, func() error {
			return svc.Write(cctx, func(ctx context.Context, q store.Querier) error {
				cancel()
				_, err := q.VerifyUser(ctx, queries.VerifyUserParams{ID: u.UserID.String(),
					VerifiedAt: verifiedAt})
				return err
			})
		})
		other := queued(t, svc, 2, createUser(svc, ctx, p.PlatformID, "Bo"))
		h.release()
		for _, d := range []<-chan error{h.err, verify, other} {
			if err := <-d; err != nil {
				t.Error(err)
			}
		}
		if n := queryInt(t, rawDB(t, path), "SELECT count(*) FROM users WHERE verified_at IS NOT NULL"); n != 1 {
			t.Errorf("%d verified users, want 1", n)
		}
		if got, want := userNames(t, svc, p.PlatformID), "Ada Bo"; got != want {
			t.Errorf("users %q, want %q", got, want)
		}
	})

	t.Run("ErrCommitFailsTheBatch", func(t *testing.T) {
		// SQLite refuses the COMMIT: no operation of the batch is reported done, nothing
		// of it is kept, and the next batch commits as usual.
		svc := mustOpen(t)
		p := mustPlatform(t, svc)
		before := committed(svc)
		h := hold(t, svc)
		breaker := queued(t, svc, 1, func() error {
			return svc.Write(ctx, func(context.Context, store.Querier) error { svc.BreakNextCommit(); return nil })
		})
		a := queued(t, svc, 2, createUser(svc, ctx, p.PlatformID, "Ada"))
		b := queued(t, svc, 3, createUser(svc, ctx, p.PlatformID, "Bo"))
		h.release()
		if err := <-h.err; err != nil {
			t.Fatal(err)
		}
		for _, d := range []<-chan error{breaker, a, b} {
			err := <-d
			if err == nil || payments.ErrorCode(err) != payments.CodeInternal || !strings.Contains(err.Error(), "commit") {
				t.Errorf("got %v, want an internal commit error", err)
			}
		}
		if n := userCount(t, svc, p.PlatformID); n != 0 {
			t.Errorf("%d users kept from a batch whose commit failed", n)
		}
		if batches, ops := batchesSince(svc, before); batches != 1 || ops != 1 {
			t.Errorf("%d operations in %d commits, want only the holder's", ops, batches)
		}
		mustUser(t, svc, p.PlatformID, "Ada", "ada@example.com")
	})

	t.Run("PanicFailsAlone", func(t *testing.T) {
		// A panicking operation is rolled back to its savepoint and panics again in its
		// caller, with its own value; the committer and the rest of the batch carry on.
		path := newDSN(t)
		svc := mustOpenFile(t, path)
		p := mustPlatform(t, svc)
		u := mustUser(t, svc, p.PlatformID, "Ada", "ada@example.com")
		h := hold(t, svc)
		a := queued(t, svc, 1, createUser(svc, ctx, p.PlatformID, "Bo"))
		panicked := queued(t, svc, 2, func() (err error) {
			defer func() {
				if v := recover(); v != "boom" {
					err = fmt.Errorf("recovered %v, want boom", v)
				}
			}()
			svc.Write(ctx, func(ctx context.Context, q store.Querier) error {
				if _, err := q.VerifyUser(ctx, queries.VerifyUserParams{ID: u.UserID.String(),
					VerifiedAt: verifiedAt}); err != nil {
					return err
				}
				panic("boom")
			})
			return errors.New("no panic")
		})
		c := queued(t, svc, 3, createUser(svc, ctx, p.PlatformID, "Cy"))
		h.release()
		for _, d := range []<-chan error{h.err, a, panicked, c} {
			if err := <-d; err != nil {
				t.Error(err)
			}
		}
		if n := queryInt(t, rawDB(t, path), "SELECT count(*) FROM users WHERE verified_at IS NOT NULL"); n != 0 {
			t.Errorf("%d verified users: the panicking operation's change was kept", n)
		}
		if got, want := userNames(t, svc, p.PlatformID), "Ada Bo Cy"; got != want {
			t.Errorf("users %q, want %q", got, want)
		}
	})

	t.Run("CloseWithWritesWaiting", func(t *testing.T) {
		// Close lets the batch in progress finish; a write still waiting either fails or
		// (taken before Close) is committed, and reports which; later writes fail.
		path := newDSN(t)
		svc := mustOpenFile(t, path)
		p := mustPlatform(t, svc)
		h := hold(t, svc)
		waiting := queued(t, svc, 1, createUser(svc, ctx, p.PlatformID, "Ada"))
		closed := make(chan error, 1)
		go func() { closed <- svc.Close() }()
		time.Sleep(20 * time.Millisecond) // let Close start waiting for the committer
		h.release()
		if err := <-h.err; err != nil {
			t.Errorf("the batch in progress: %v", err)
		}
		werr := <-waiting
		if err := <-closed; err != nil {
			t.Fatal(err)
		}
		if err := createUser(svc, ctx, p.PlatformID, "Bo")(); err == nil {
			t.Error("a write after Close succeeded")
		}
		again := mustOpenFile(t, path)
		if n := userCount(t, again, p.PlatformID); (werr == nil) != (n == 1) {
			t.Errorf("the waiting write returned %v and %d users are stored", werr, n)
		}
	})
}
