package postgres_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/platform-payments/payments/internal/pgtest"
	"github.com/platform-payments/payments/internal/store"
	"github.com/platform-payments/payments/internal/store/postgres"
)

// A batch's operations run in rounds: writes marked Interleave (store.WriteOptions) share
// rounds with those of other keys (their statements go to the server together), writes
// of one key, or unmarked, run one after another, the next sent in the round after the
// last of the one before; a write that fails is undone alone. Each write here runs two
// statements and notes when each has answered; rounds counts the rounds that carry them.
func TestTurns(t *testing.T) {
	if !pgtest.Enabled() {
		t.Skipf("$%s is not set: needs PostgreSQL", pgtest.Env)
	}
	type write struct {
		name string
		mark bool   // Interleave
		key  string // its InterleaveKey
		fail bool   // fails after its first statement
	}
	for _, tt := range []struct {
		name   string
		writes []write
		want   string // the notes, in the order taken
		skip   int    // the notes of a first run that failed, which do not count
		rounds int    // the rounds of the batch's first run that carry its writes' statements
	}{
		{"OKOtherKeysShareRounds", []write{{"a", true, "x", false}, {"b", true, "y", false}, {"c", true, "", false}},
			"a1 b1 c1 a2 b2 c2", 0, 2},
		{"OKOneKeyOneAfterAnother", []write{{"a", true, "x", false}, {"b", true, "x", false}, {"c", true, "y", false}},
			"a1 c1 a2 c2 b1 b2", 0, 4},
		{"OKUnmarkedAlone", []write{{"a", true, "x", false}, {"u", false, "", false}, {"b", true, "y", false}},
			"a1 a2 u1 u2 b1 b2", 0, 6},
		{"OKAlone", []write{{"u", false, "", false}, {"v", false, "", false}},
			"u1 u2 v1 v2", 0, 4},
		// The batch is run again one by one, with a savepoint each: the failing write
		// is undone alone, and its notes are those of the second run.
		{"ErrFailsAlone", []write{{"a", true, "x", false}, {"f", true, "y", true}, {"b", true, "z", false}},
			"a1 a2 f1 b1 b2", 2, 1}, // a1 f1 of the first run, which ended when f failed
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			// Two connections: one runner, so that the writes queued while a write holds
			// the runner are its next batch.
			st, err := postgres.Open(ctx, pgtest.DSN(t), store.Config{MaxConns: 2})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			var rounds atomic.Int64
			postgres.OnRound(t, func(b *pgx.Batch) {
				for _, q := range b.QueuedQueries {
					if strings.Contains(q.SQL, "CountPlatforms") {
						rounds.Add(1)
						return
					}
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

			var mu sync.Mutex
			var notes []string
			note := func(s string) {
				mu.Lock()
				notes = append(notes, s)
				mu.Unlock()
			}
			done := make([]chan error, len(tt.writes))
			for i, w := range tt.writes {
				opts := store.WriteOptions{Interleave: w.mark, InterleaveKey: w.key}
				done[i] = make(chan error, 1)
				go func() {
					done[i] <- st.Write(ctx, opts, func(ctx context.Context, q store.Querier) error {
						if _, err := q.CountPlatforms(ctx, "sandbox"); err != nil {
							return err
						}
						note(w.name + "1")
						if w.fail {
							return errFails
						}
						if _, err := q.CountPlatforms(ctx, "sandbox"); err != nil {
							return err
						}
						note(w.name + "2")
						return nil
					})
				}()
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
			for i, w := range tt.writes {
				err := <-done[i]
				if w.fail != errors.Is(err, errFails) || !w.fail && err != nil {
					t.Errorf("write %s: %v", w.name, err)
				}
			}
			if n := st.Stats().Commits - commits; n != 2 {
				t.Errorf("%d commits, want the held write's and one batch's", n)
			}
			if g := strings.Join(notes[tt.skip:], " "); g != tt.want {
				t.Errorf("notes %q, want %q", g, tt.want)
			}
			if n := rounds.Load(); n != int64(tt.rounds) {
				t.Errorf("%d rounds, want %d", n, tt.rounds)
			}
		})
	}
}

var errFails = errors.New("this write fails")
