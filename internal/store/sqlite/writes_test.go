package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/platform-payments/payments/internal/store"
	"github.com/platform-payments/payments/internal/store/sqlite"
	"github.com/platform-payments/payments/queries"
)

// A data key, and a value sealed under it: as storetest's.
const testKeyID, testSealed = "5eedfeed5eedfeed", "v1:5eedfeed5eedfeed:c2VhbGVk"

// openStore opens a store on a new file of the test's, which knows the test's data key,
// and returns it with the file's path; it is closed when the test ends.
func openStore(t *testing.T) (*sqlite.Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "store.db")
	st, err := sqlite.Open(context.Background(), path, store.Config{Setup: func(ctx context.Context, q store.Querier) error {
		return q.AddDataKey(ctx, queries.AddDataKeyParams{KeyID: testKeyID, KeyCheck: testSealed, AddedAt: "2024-01-02T03:04:05.000000Z"})
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st, path
}

// The committer's CreateUserRows (writes.go) returns the user exactly as stored, numbers
// each platform's users 1, 2, 3... in the order they are written, and writes nothing for
// a platform that does not exist; alone in its batch or many together, with some failing.
func TestCreateUserRows(t *testing.T) {
	ctx := context.Background()
	st, path := openStore(t)
	platforms := []string{uuid.NewString(), uuid.NewString()}
	if err := st.Write(ctx, store.WriteOptions{}, func(ctx context.Context, q store.Querier) error {
		for _, id := range platforms {
			if err := q.CreatePlatform(ctx, queries.CreatePlatformParams{
				ID: id, Name: "p", Environment: "sandbox", SecretSealed: testSealed, CreatedAt: "2024-01-02T03:04:05.000000Z",
			}); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	str := func(s string) *string { return &s }
	rows := func(platformID string, i int, email *string) store.NewUserRows {
		u := store.NewUserRows{
			User: queries.CreateUserParams{
				ID: uuid.NewString(), PlatformID: platformID, Name: fmt.Sprintf("User %d", i),
				Email: email, CreatedAt: fmt.Sprintf("2024-01-02T03:04:%02d.000000Z", i%60),
			},
			Wallet:   queries.CreateWalletParams{ID: uuid.NewString(), Currency: "USD"},
			Settings: queries.CreateUserSettingsParams{Currency: "USD", Timezone: "UTC", Language: "en", NotificationsEnabled: 1},
		}
		if email != nil {
			u.User.EmailKey = email
		}
		if i%3 == 0 {
			u.User.PhoneCountryCode, u.User.Phone = str("+44"), str("2079460000")
		}
		return u
	}

	// Many at once, so that batches carry several: every fifth repeats an email (a
	// conflict, failing alone), and some name no platform.
	const n = 60
	var wg sync.WaitGroup
	got := make([]queries.User, n)
	errs := make([]error, n)
	given := make([]store.NewUserRows, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			platformID := platforms[i%2]
			var email *string
			switch {
			case i%5 == 4:
				email = str(fmt.Sprintf("user%d@example.com", i-2)) // the same platform's, created or not yet
			case i%7 == 0:
				platformID = uuid.NewString()
			case i%2 == 0:
				email = str(fmt.Sprintf("user%d@example.com", i))
			}
			errs[i] = st.Write(ctx, store.WriteOptions{}, func(ctx context.Context, q store.Querier) error {
				var err error
				given[i] = rows(platformID, i, email)
				got[i], err = q.CreateUserRows(ctx, given[i])
				return err
			})
		}()
	}
	wg.Wait()

	created := map[string]int{}
	for i := range n {
		switch {
		case i%7 == 0 && i%5 != 4:
			if !errors.Is(errs[i], sql.ErrNoRows) {
				t.Errorf("user %d of no platform: %v, want sql.ErrNoRows", i, errs[i])
			}
			continue
		case errs[i] != nil:
			// Of two users with one email, whichever comes second fails.
			if c, ok := st.Conflict(errs[i]); !ok || c != store.UserEmail || i%5 != 4 && (i+2)%5 != 4 {
				t.Errorf("user %d: %v", i, errs[i])
			}
			continue
		}
		stored, err := st.Reads().GetUser(ctx, got[i].ID)
		if err != nil {
			t.Fatalf("user %d: %v", i, err)
		}
		if !reflect.DeepEqual(got[i], stored) {
			t.Errorf("user %d: CreateUserRows returned %+v, stored %+v", i, got[i], stored)
		}
		if u, in := got[i], given[i].User; u.Email != nil && (u.Email == in.Email || u.EmailKey == in.EmailKey) ||
			u.Phone != nil && (u.Phone == in.Phone || u.PhoneCountryCode == in.PhoneCountryCode) {
			t.Errorf("user %d: the row returned shares its values with the rows given", i)
		}
		created[got[i].PlatformID]++
	}
	for _, id := range platforms {
		p, err := st.Reads().GetPlatform(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if p.UserCount != int64(created[id]) {
			t.Errorf("platform %s counts %d users, %d created", id, p.UserCount, created[id])
		}
		page, err := st.Reads().ListUsersPage(ctx, queries.ListUsersPageParams{PlatformID: id, AfterPwID: 0, PageSize: n})
		if err != nil {
			t.Fatal(err)
		}
		for i, u := range page {
			if u.PwID != int64(i+1) {
				t.Errorf("platform %s: user %d of the list has pw_id %d", id, i+1, u.PwID)
			}
		}
		if len(page) != created[id] {
			t.Errorf("platform %s lists %d users, %d created", id, len(page), created[id])
		}
	}
	var wallets, settings int
	for _, table := range []struct {
		name string
		n    *int
	}{{"wallets", &wallets}, {"user_settings", &settings}} {
		db, err := sql.Open("sqlite", path)
		if err != nil {
			t.Fatal(err)
		}
		if err := db.QueryRowContext(ctx, "SELECT count(*) FROM "+table.name).Scan(table.n); err != nil {
			t.Fatal(err)
		}
		db.Close()
	}
	if total := created[platforms[0]] + created[platforms[1]]; wallets != total || settings != total {
		t.Errorf("%d wallets and %d settings for %d users", wallets, settings, total)
	}
}

// A batch runs without savepoints until one of its operations fails; it is then run again
// with a savepoint around each operation, so that the one that fails, or panics, is undone
// alone, and so are the batches that follow it for a while (runBatch).
func TestBatchRunAgainWithSavepoints(t *testing.T) {
	ctx := context.Background()
	st, _ := openStore(t)

	// batch runs the operations together, in one batch behind a write that holds the
	// committer until they are all queued, and returns each one's error and how many
	// times each ran. An operation named "fail" adds its platform and fails; "panic" adds
	// its platform and panics; any other adds its platform.
	batch := func(names ...string) (errs []error, runs []int) {
		started, release := make(chan struct{}), make(chan struct{})
		held := make(chan error, 1)
		go func() {
			held <- st.Write(ctx, store.WriteOptions{}, func(context.Context, store.Querier) error { close(started); <-release; return nil })
		}()
		<-started // the holder's batch runs: what is queued now waits for the next
		errs, runs = make([]error, len(names)), make([]int, len(names))
		var wg sync.WaitGroup
		for i, name := range names {
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() {
					if p := recover(); p != nil {
						errs[i] = fmt.Errorf("panicked: %v", p)
					}
				}()
				errs[i] = st.Write(ctx, store.WriteOptions{}, func(ctx context.Context, q store.Querier) error {
					runs[i]++
					if err := q.CreatePlatform(ctx, queries.CreatePlatformParams{
						ID: name + "-" + uuid.NewString(), Name: name, Environment: "sandbox", SecretSealed: testSealed, CreatedAt: "2024-01-02T03:04:05.000000Z",
					}); err != nil {
						return err
					}
					switch name {
					case "fail":
						return errors.New("failed")
					case "panic":
						panic("boom")
					}
					return nil
				})
			}()
			for st.WritesWaiting() != int64(i+1) {
				time.Sleep(time.Millisecond) // queued in order
			}
		}
		close(release)
		wg.Wait()
		if err := <-held; err != nil {
			t.Fatal(err)
		}
		return errs, runs
	}
	platforms := func() int {
		n, err := st.Reads().CountPlatforms(ctx, "sandbox")
		if err != nil {
			t.Fatal(err)
		}
		return int(n)
	}

	before := platforms()
	errs, runs := batch("a", "b", "fail", "c", "panic", "d")
	for i, want := range []string{"", "", "failed", "", "panicked: boom", ""} {
		if got := fmt.Sprint(errs[i]); (errs[i] == nil) != (want == "") || want != "" && got != want {
			t.Errorf("operation %d: %v, want %q", i, errs[i], want)
		}
	}
	// Run once without savepoints up to the failure, then all again with them.
	if want := []int{2, 2, 2, 1, 1, 1}; !slices.Equal(runs, want) {
		t.Errorf("runs %v, want %v", runs, want)
	}
	if got := platforms() - before; got != 4 {
		t.Errorf("%d platforms added, want 4 (a, b, c, d)", got)
	}

	// The next batch runs with savepoints from the start: each operation once.
	before = platforms()
	errs, runs = batch("e", "fail", "f")
	if errs[0] != nil || errs[1] == nil || errs[2] != nil {
		t.Errorf("errors %v", errs)
	}
	if want := []int{1, 1, 1}; !slices.Equal(runs, want) {
		t.Errorf("runs %v, want %v", runs, want)
	}
	if got := platforms() - before; got != 2 {
		t.Errorf("%d platforms added, want 2 (e, f)", got)
	}

	// Batches without failures bring back batches without savepoints.
	for range 10 {
		batch("g", "h")
	}
	before = platforms()
	_, runs = batch("i", "fail")
	if want := []int{2, 2}; !slices.Equal(runs, want) {
		t.Errorf("runs %v, want %v", runs, want)
	}
	if got := platforms() - before; got != 1 {
		t.Errorf("%d platforms added, want 1 (i)", got)
	}
}

// inOneBatch runs fns as write operations of one batch, queued in order behind a write
// that holds the committer until they all wait, and returns each one's error (a panic
// reported as an error).
func inOneBatch(t *testing.T, st *sqlite.Store, fns ...func(ctx context.Context, q store.Querier) error) []error {
	t.Helper()
	ctx := context.Background()
	started, release := make(chan struct{}), make(chan struct{})
	held := make(chan error, 1)
	go func() {
		held <- st.Write(ctx, store.WriteOptions{}, func(context.Context, store.Querier) error { close(started); <-release; return nil })
	}()
	<-started // the holder's batch runs: what is queued now waits for the next
	errs := make([]error, len(fns))
	var wg sync.WaitGroup
	for i, fn := range fns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				if p := recover(); p != nil {
					errs[i] = fmt.Errorf("panicked: %v", p)
				}
			}()
			errs[i] = st.Write(ctx, store.WriteOptions{}, fn)
		}()
		for st.WritesWaiting() != int64(i+1) {
			time.Sleep(time.Millisecond) // queued in order
		}
	}
	close(release)
	wg.Wait()
	if err := <-held; err != nil {
		t.Fatal(err)
	}
	return errs
}

// The counts a batch knows (writes.go) number every user one past the one before, also
// when an operation that raised a count fails after it (its raise undone), and when the
// count is raised by the shared query in between.
func TestCreateUserRowsKnownCounts(t *testing.T) {
	ctx := context.Background()
	st, _ := openStore(t)
	platformID := uuid.NewString()
	if err := st.Write(ctx, store.WriteOptions{}, func(ctx context.Context, q store.Querier) error {
		return q.CreatePlatform(ctx, queries.CreatePlatformParams{
			ID: platformID, Name: "p", Environment: "sandbox", SecretSealed: testSealed, CreatedAt: "2024-01-02T03:04:05.000000Z",
		})
	}); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	returned := map[string]int64{} // pw_id by user id, as CreateUserRows returned it
	create := func(fail string) func(ctx context.Context, q store.Querier) error {
		return func(ctx context.Context, q store.Querier) error {
			u, err := q.CreateUserRows(ctx, store.NewUserRows{
				User:     queries.CreateUserParams{ID: uuid.NewString(), PlatformID: platformID, Name: "u", CreatedAt: "2024-01-02T03:04:05.000000Z"},
				Wallet:   queries.CreateWalletParams{ID: uuid.NewString(), Currency: "USD"},
				Settings: queries.CreateUserSettingsParams{Currency: "USD", Timezone: "UTC", Language: "en", NotificationsEnabled: 1},
			})
			if err != nil {
				return err
			}
			switch fail {
			case "fail":
				return errors.New("failed after its create")
			case "panic":
				panic("after its create")
			case "count":
				if _, err := q.CountNewUser(ctx, platformID); err != nil { // a user numbered by the shared query
					return err
				}
				if _, err := q.CreateUser(ctx, queries.CreateUserParams{ID: uuid.NewString(), PlatformID: platformID, Name: "v", CreatedAt: "2024-01-02T03:04:05.000000Z"}); err != nil {
					return err
				}
			}
			mu.Lock()
			returned[u.ID] = u.PwID
			mu.Unlock()
			return nil
		}
	}
	// The first batch fails once without savepoints, the second runs with them from the
	// start, the third again without, with a count raised in between.
	for _, kinds := range [][]string{
		{"", "", "fail", "", "panic", ""},
		{"", "fail", "", "", "panic", "", ""},
		{"", "", "count", "", ""},
	} {
		var fns []func(ctx context.Context, q store.Querier) error
		for _, k := range kinds {
			fns = append(fns, create(k))
		}
		for i, err := range inOneBatch(t, st, fns...) {
			if (err != nil) != (kinds[i] == "fail" || kinds[i] == "panic") {
				t.Errorf("%v: operation %d: %v", kinds, i, err)
			}
		}
	}
	page, err := st.Reads().ListUsersPage(ctx, queries.ListUsersPageParams{PlatformID: platformID, PageSize: 100})
	if err != nil {
		t.Fatal(err)
	}
	for i, u := range page {
		if u.PwID != int64(i+1) {
			t.Errorf("user %d of the list has pw_id %d", i+1, u.PwID)
		}
		if want, ok := returned[u.ID]; ok && want != u.PwID {
			t.Errorf("user %s: CreateUserRows returned pw_id %d, stored %d", u.ID, want, u.PwID)
		}
	}
	p, err := st.Reads().GetPlatform(ctx, platformID)
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(4 + 5 + 5 + 1); p.UserCount != want || int64(len(page)) != want {
		t.Errorf("user count %d, %d users listed, want %d", p.UserCount, len(page), want)
	}
}

// Every query that writes webhook endpoints or their subscriptions is one of the
// committer's, which forgets which platforms have no enabled endpoint (writes.go): one
// left out would let a batch skip the fan-out of an endpoint it has just made.
func TestEndpointWritesForget(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "..", "queries", "*.sql"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no queries: %v", err)
	}
	src, err := os.ReadFile("writes.go")
	if err != nil {
		t.Fatal(err)
	}
	writes := regexp.MustCompile(`(?is)\b(INSERT\s+(OR\s+\w+\s+)?INTO|REPLACE\s+INTO|UPDATE(\s+OR\s+\w+)?|DELETE\s+FROM)\s+webhook_(endpoints|subscriptions)\b`)
	found := 0
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range strings.Split(string(raw), "-- name: ")[1:] {
			name := strings.Fields(q)[0]
			var body []string
			for _, line := range strings.Split(q, "\n")[1:] {
				if !strings.HasPrefix(strings.TrimSpace(line), "--") {
					body = append(body, line)
				}
			}
			if !writes.MatchString(strings.Join(body, "\n")) {
				continue
			}
			found++
			if !strings.Contains(string(src), "func (q writeQuerier) "+name+"(") {
				t.Errorf("%s (%s) writes webhook endpoints: writeQuerier must forget the platforms without one", name, filepath.Base(f))
			}
		}
	}
	if found < 10 {
		t.Errorf("found %d queries writing webhook endpoints, want at least 10", found)
	}
}

// A batch that has found a platform without an enabled endpoint fans the platform's next
// events out to none, until an endpoint is written: then its events reach it again, and
// an endpoint undone with its operation is forgotten with it.
func TestRecordEventEndpointless(t *testing.T) {
	ctx := context.Background()
	st, _ := openStore(t)
	platformID := uuid.NewString()
	const at = "2024-01-02T03:04:05.000000Z"
	if err := st.Write(ctx, store.WriteOptions{}, func(ctx context.Context, q store.Querier) error {
		return q.CreatePlatform(ctx, queries.CreatePlatformParams{ID: platformID, Name: "p", Environment: "sandbox", SecretSealed: testSealed, CreatedAt: at})
	}); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	delivered := map[string]int64{}
	event := func(name string) func(ctx context.Context, q store.Querier) error {
		return func(ctx context.Context, q store.Querier) error {
			n, err := q.RecordEvent(ctx, queries.CreateEventParams{ID: uuid.NewString(), PlatformID: platformID, Type: "user.created", CreatedAt: at, Payload: "{}"})
			mu.Lock()
			delivered[name] = n
			mu.Unlock()
			return err
		}
	}
	endpoint := func(fail bool) func(ctx context.Context, q store.Querier) error {
		return func(ctx context.Context, q store.Querier) error {
			if _, err := q.CreateWebhookEndpoint(ctx, queries.CreateWebhookEndpointParams{
				ID: uuid.NewString(), PlatformID: platformID, Url: "https://example.com/hook", AllEvents: 1, SecretSealed: testSealed, CreatedAt: at,
			}); err != nil {
				return err
			}
			if fail {
				return errors.New("failed after its endpoint")
			}
			return nil
		}
	}
	for _, round := range []struct {
		fns  []func(ctx context.Context, q store.Querier) error
		want map[string]int64
	}{
		{ // none, then an endpoint undone with its operation, then none again
			fns:  []func(ctx context.Context, q store.Querier) error{event("a1"), event("a2"), endpoint(true), event("a3")},
			want: map[string]int64{"a1": 0, "a2": 0, "a3": 0},
		},
		{ // none, then an endpoint: the events after it reach it
			fns:  []func(ctx context.Context, q store.Querier) error{event("b1"), event("b2"), endpoint(false), event("b3"), event("b4")},
			want: map[string]int64{"b1": 0, "b2": 0, "b3": 1, "b4": 1},
		},
		{ // the next batch knows nothing of the last
			fns:  []func(ctx context.Context, q store.Querier) error{event("c1"), event("c2")},
			want: map[string]int64{"c1": 1, "c2": 1},
		},
	} {
		errs := inOneBatch(t, st, round.fns...)
		for i, err := range errs {
			if (err != nil) != (i == 2 && len(round.fns) == 4) {
				t.Errorf("operation %d: %v", i, err)
			}
		}
		for name, want := range round.want {
			if got := delivered[name]; got != want {
				t.Errorf("event %s: %d deliveries, want %d", name, got, want)
			}
		}
	}
}
