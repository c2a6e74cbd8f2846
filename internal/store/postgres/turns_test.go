package postgres_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/platform-payments/payments/internal/pgtest"
	"github.com/platform-payments/payments/internal/store"
	"github.com/platform-payments/payments/internal/store/postgres"
)

// A batch's operations run in rounds: writes marked with store.WithInterleaving share
// rounds with those of other keys (their statements go to the server together), writes
// of one key, or unmarked, run one after another; a write that fails is undone alone.
// Each write here runs two statements and notes when each has answered.
func TestTurns(t *testing.T) {
	if !pgtest.Enabled() {
		t.Skipf("$%s is not set: needs PostgreSQL", pgtest.Env)
	}
	type write struct {
		name string
		mark bool   // store.WithInterleaving
		key  string // its key
		fail bool   // fails after its first statement
	}
	for _, tt := range []struct {
		name   string
		writes []write
		want   string // the notes, in the order taken
	}{
		{"OKOtherKeysShareRounds", []write{{"a", true, "x", false}, {"b", true, "y", false}, {"c", true, "", false}},
			"a1 b1 c1 a2 b2 c2"},
		{"OKOneKeyOneAfterAnother", []write{{"a", true, "x", false}, {"b", true, "x", false}, {"c", true, "y", false}},
			"a1 c1 a2 c2 b1 b2"},
		{"OKUnmarkedAlone", []write{{"a", true, "x", false}, {"u", false, "", false}, {"b", true, "y", false}},
			"a1 a2 u1 u2 b1 b2"},
		{"OKAlone", []write{{"u", false, "", false}, {"v", false, "", false}},
			"u1 u2 v1 v2"},
		// The batch is run again one by one, with a savepoint each: the failing write
		// is undone alone, and its notes are those of the second run.
		{"ErrFailsAlone", []write{{"a", true, "x", false}, {"f", true, "y", true}, {"b", true, "z", false}},
			"a1 a2 f1 b1 b2"},
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
			started, release := make(chan struct{}), make(chan struct{})
			held := make(chan error, 1)
			go func() {
				held <- st.Write(ctx, func(context.Context, store.Querier) error {
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
				wctx := ctx
				if w.mark {
					wctx = store.WithInterleaving(ctx, w.key)
				}
				done[i] = make(chan error, 1)
				go func() {
					done[i] <- st.Write(wctx, func(ctx context.Context, q store.Querier) error {
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
			// The first run of ErrFailsAlone notes its first round's answers up to the
			// failure: only what the last run notes counts.
			got := notes
			if tt.name == "ErrFailsAlone" {
				got = got[2:] // a1 f1 of the first run, which ended when f failed
			}
			if g := strings.Join(got, " "); g != tt.want {
				t.Errorf("notes %q, want %q", g, tt.want)
			}
		})
	}
}

var errFails = errors.New("this write fails")
