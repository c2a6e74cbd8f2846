package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/platform-payments/payments/internal/pgtest"
	"github.com/platform-payments/payments/internal/store"
	"github.com/platform-payments/payments/internal/store/postgres"
	"github.com/platform-payments/payments/queries"
)

// A batch's round trips: its BEGIN goes with its first statement, the users of its
// CreateUser operations are written together (one CountNewUsers and one CreateUsersRows
// for a platform's), each other statement is a round trip of its own, and the events and
// COMMIT go together at the end. A write that fails makes the batch run again with a
// savepoint around each write, where it fails alone.
func TestBatchRoundTrips(t *testing.T) {
	if !pgtest.Enabled() {
		t.Skipf("$%s is not set: needs PostgreSQL", pgtest.Env)
	}
	ctx := context.Background()
	// Two connections: one runner, so that the writes queued while a write holds the
	// runner are its next batch.
	const sealed = "v1:5eedfeed5eedfeed:c2VhbGVk" // a value sealed under the data key registered
	st, err := postgres.Open(ctx, pgtest.DSN(t), store.Config{MaxConns: 2, Setup: func(ctx context.Context, q store.Querier) error {
		return q.AddDataKey(ctx, queries.AddDataKeyParams{KeyID: "5eedfeed5eedfeed", KeyCheck: sealed, AddedAt: "2026-11-28T12:00:00.000000Z"})
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var platformID string
	if err := st.Write(ctx, store.WriteOptions{}, func(ctx context.Context, q store.Querier) error {
		platformID = uuid.NewString()
		return q.CreatePlatform(ctx, queries.CreatePlatformParams{ID: platformID, Name: "P", Environment: "sandbox",
			SecretSealed: sealed, CreatedAt: "2026-11-28T12:00:00.000000Z"})
	}); err != nil {
		t.Fatal(err)
	}
	event := func(ctx context.Context, q store.Querier) error {
		_, err := q.RecordEvent(ctx, queries.CreateEventParams{ID: uuid.NewString(), PlatformID: platformID,
			Type: "user.created", CreatedAt: "2026-11-28T12:00:00.000000Z", Payload: "{}"})
		return err
	}
	errFails := errors.New("this write fails")

	// batch runs the writes as one batch, behind a write holding the runner, and returns
	// their errors and the batch's round trips, each the statements it carried.
	batch := func(t *testing.T, writes []func() error) (errs []error, trips [][]string) {
		t.Helper()
		var mu sync.Mutex
		postgres.OnRoundTrip(t, func(statements []string) {
			mu.Lock()
			defer mu.Unlock()
			names := make([]string, len(statements))
			for i, s := range statements {
				names[i] = statementName(s)
			}
			if strings.Join(names, " ") != "BEGIN COMMIT" { // the holding write's
				trips = append(trips, names)
			}
		})
		started, release := make(chan struct{}), make(chan struct{})
		held := make(chan error, 1)
		go func() {
			held <- st.Write(ctx, store.WriteOptions{}, func(context.Context, store.Querier) error {
				close(started)
				<-release
				return nil
			})
		}()
		<-started
		errs = make([]error, len(writes))
		var wg sync.WaitGroup
		for i, w := range writes {
			wg.Go(func() { errs[i] = w() })
			for deadline := time.Now().Add(5 * time.Second); st.WritesWaiting() != int64(i+1); {
				if time.Now().After(deadline) {
					t.Fatalf("%d writes waiting, want %d", st.WritesWaiting(), i+1)
				}
				time.Sleep(time.Millisecond)
			}
		}
		commits := st.Stats().Commits
		close(release)
		if err := <-held; err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		if n := st.Stats().Commits - commits; n != 2 {
			t.Errorf("%d commits, want the held write's and one batch's", n)
		}
		return errs, trips
	}
	create := func(i int, fail bool) func() error {
		return func() error {
			email := fmt.Sprintf("user-%d-%s@example.com", i, uuid.NewString())
			rows := func() store.NewUserRows {
				return store.NewUserRows{
					User:     queries.CreateUserParams{ID: uuid.NewString(), PlatformID: platformID, Name: "U", Email: &email, EmailKey: &email, CreatedAt: "2026-11-28T12:00:00.000000Z"},
					Wallet:   queries.CreateWalletParams{ID: uuid.NewString(), Currency: "USD"},
					Settings: queries.CreateUserSettingsParams{Currency: "USD", Timezone: "UTC", Language: "en"},
				}
			}
			return st.CreateUser(ctx, store.WriteOptions{}, rows, func(ctx context.Context, q store.Querier, _ queries.User) error {
				if fail {
					return errFails
				}
				return event(ctx, q)
			})
		}
	}
	count := func(i int, fail bool) func() error {
		return func() error {
			return st.Write(ctx, store.WriteOptions{}, func(ctx context.Context, q store.Querier) error {
				for range 2 {
					if _, err := q.CountPlatforms(ctx, "sandbox"); err != nil {
						return err
					}
				}
				if fail {
					return errFails
				}
				return event(ctx, q)
			})
		}
	}
	show := func(trips [][]string) string {
		var b strings.Builder
		for _, trip := range trips {
			fmt.Fprintf(&b, "[%s]", strings.Join(trip, " "))
		}
		return b.String()
	}

	t.Run("OKCreatesTogether", func(t *testing.T) {
		var writes []func() error
		for i := range 8 {
			writes = append(writes, create(i, false))
		}
		errs, trips := batch(t, writes)
		for i, err := range errs {
			if err != nil {
				t.Errorf("create %d: %v", i, err)
			}
		}
		if got, want := show(trips), "[BEGIN CountNewUsers CreateUsersRows][EmitEvents COMMIT]"; got != want {
			t.Errorf("round trips %s, want %s", got, want)
		}
	})

	t.Run("OKStatementsOneByOne", func(t *testing.T) {
		errs, trips := batch(t, []func() error{count(0, false), count(1, false), create(2, false)})
		for i, err := range errs {
			if err != nil {
				t.Errorf("write %d: %v", i, err)
			}
		}
		want := "[BEGIN CreateUserRows][CountPlatforms][CountPlatforms][CountPlatforms][CountPlatforms][EmitEvents COMMIT]"
		if got := show(trips); got != want {
			t.Errorf("round trips %s, want %s", got, want)
		}
	})

	t.Run("ErrFailsAlone", func(t *testing.T) {
		errs, trips := batch(t, []func() error{count(0, false), count(1, true), create(2, true), create(3, false)})
		for i, err := range errs {
			if fails := i == 1 || i == 2; fails != errors.Is(err, errFails) || !fails && err != nil {
				t.Errorf("write %d: %v", i, err)
			}
		}
		// The first run ends at the first failure (count 1's) and is rolled back; the
		// second runs each write inside a savepoint, each user written by its own write,
		// and a write that fails rolled back to its savepoint.
		want := "[BEGIN CountNewUsers CreateUsersRows][CountPlatforms][CountPlatforms][CountPlatforms][CountPlatforms]" +
			"[BEGIN SAVEPOINT][CountPlatforms][CountPlatforms][RELEASE]" +
			"[SAVEPOINT][CountPlatforms][CountPlatforms][ROLLBACK][RELEASE]" +
			"[SAVEPOINT][CreateUserRows][ROLLBACK][RELEASE]" +
			"[SAVEPOINT][CreateUserRows][RELEASE][EmitEvents COMMIT]"
		if got := show(trips); got != want {
			t.Errorf("round trips %s, want %s", got, want)
		}
	})
}

// statementName is a statement's sqlc name (-- name: X), or its first word.
func statementName(sql string) string {
	if rest, ok := strings.CutPrefix(sql, "-- name: "); ok {
		return strings.Fields(rest)[0]
	}
	return strings.Fields(sql)[0]
}
