// Package storetest is the contract suite of the payments store: every engine under
// internal/store runs Exercise from its own tests, so that what the service relies on
// (atomic, durable writes; a write the database aborted to break a deadlock run again;
// one snapshot per read; duplicates reported as typed conflicts; the default-account rule
// under a held user; Close under load; the hooks of Open; stores opening one new database
// at once) holds the same on each.
package storetest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/platform-payments/payments/internal/store"
	"github.com/platform-payments/payments/queries"
)

// Exercise runs the contract suite against engine. newDSN returns the DSN of a new, empty
// database for the test (a file in its temporary directory, a schema of its own); the
// engine must accept it.
func Exercise(t *testing.T, engine store.Engine, newDSN func(t testing.TB) string) {
	h := &harness{engine: engine, newDSN: newDSN}
	t.Run("Open", h.testOpen)
	t.Run("OpenTogether", h.testOpenTogether)
	t.Run("Write", h.testWrite)
	t.Run("WriteRetried", h.testWriteRetried)
	t.Run("Read", h.testRead)
	t.Run("Conflict", h.testConflict)
	t.Run("CreateBankAccountTakingDefault", h.testCreateBankAccountTakingDefault)
	t.Run("RenameUserPayee", h.testRenameUserPayee)
	t.Run("WritesTogether", h.testWritesTogether)
	t.Run("CreateUser", h.testCreateUser)
	t.Run("CloseUnderLoad", h.testCloseUnderLoad)
}

type harness struct {
	engine store.Engine
	newDSN func(t testing.TB) string
}

// The databases hold only sealed values, under a data key they know: the suite registers
// one (as the service's Setup does) and writes values that carry its id. What the
// sealing hides is no business of the store.
const (
	keyID  = "5eedfeed5eedfeed"
	sealed = "v1:" + keyID + ":c2VhbGVk"
)

// config is the Config of the suite's stores: a Setup that registers its data key.
func config() store.Config {
	return store.Config{Setup: func(ctx context.Context, q store.Querier) error {
		keys, err := q.ListDataKeys(ctx)
		if err != nil || len(keys) > 0 {
			return err
		}
		return q.AddDataKey(ctx, queries.AddDataKeyParams{KeyID: keyID, KeyCheck: sealed, AddedAt: now()})
	}}
}

// open opens a new database, closed when t ends.
func (h *harness) open(t *testing.T) (store.Store, string) {
	t.Helper()
	dsn := h.newDSN(t)
	if !h.engine.Accepts(dsn) {
		t.Fatalf("the engine does not accept its own test DSN %s", h.engine.Redact(dsn))
	}
	st, err := h.engine.Open(context.Background(), dsn, config())
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := st.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return st, dsn
}

// now is the stored form of the time: fixed width, so that it sorts as text.
func now() string { return time.Now().UTC().Format("2006-01-02T15:04:05.000000Z") }

// newPlatform adds a platform and returns its id.
func newPlatform(ctx context.Context, q store.Querier) (string, error) {
	id := uuid.NewString()
	return id, q.CreatePlatform(ctx, queries.CreatePlatformParams{
		ID: id, Name: "storetest", Environment: "sandbox", SecretSealed: sealed, CreatedAt: now(),
	})
}

// newUser adds a user of the platform, as Create User does (CreateUserRows): the
// platform's count raised, the user numbered by it, with its wallet and settings.
func newUser(ctx context.Context, q store.Querier, platformID, email string) (string, error) {
	u, err := q.CreateUserRows(ctx, newUserRows(platformID, email))
	return u.ID, err
}

// newUserRows are the rows of a new user of the platform.
func newUserRows(platformID, email string) store.NewUserRows {
	at := now()
	return store.NewUserRows{
		User: queries.CreateUserParams{
			ID: uuid.NewString(), PlatformID: platformID, Name: "Storetest User",
			Email: &email, EmailKey: &email, CreatedAt: at,
		},
		Wallet:   queries.CreateWalletParams{ID: uuid.NewString(), Currency: "USD"},
		Settings: queries.CreateUserSettingsParams{Currency: "USD", Timezone: "UTC", Language: "en", NotificationsEnabled: 1},
	}
}

// platformWithUser adds a platform with one user, and returns their ids.
func platformWithUser(t *testing.T, st store.Store, email string) (platformID, userID string) {
	t.Helper()
	write(t, st, func(ctx context.Context, q store.Querier) (err error) {
		if platformID, err = newPlatform(ctx, q); err != nil {
			return err
		}
		userID, err = newUser(ctx, q, platformID, email)
		return err
	})
	return platformID, userID
}

// holding starts a write of st that runs fn and then holds what fn took until release is
// called; it returns once fn has run (the first time: a write may run again), and first
// gives the write's error (fn's, at once, when it fails).
func holding(st store.Store, fn func(ctx context.Context, q store.Querier) error) (release func(), first <-chan error) {
	held, released := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		var once sync.Once
		done <- st.Write(context.Background(), store.WriteOptions{}, func(ctx context.Context, q store.Querier) error {
			err := fn(ctx, q)
			once.Do(func() { close(held) })
			if err != nil {
				return err
			}
			<-released
			return nil
		})
	}()
	<-held
	return sync.OnceFunc(func() { close(released) }), done
}

// write runs fn as a write of st and fails t when it fails.
func write(t *testing.T, st store.Store, fn func(ctx context.Context, q store.Querier) error) {
	t.Helper()
	if err := st.Write(context.Background(), store.WriteOptions{}, fn); err != nil {
		t.Fatalf("Write: %v", err)
	}
}

// userCount returns the platform's count of users as the latest committed state has it.
func userCount(t *testing.T, st store.Store, platformID string) int64 {
	t.Helper()
	p, err := st.Reads().GetPlatform(context.Background(), platformID)
	if err != nil {
		t.Fatalf("GetPlatform: %v", err)
	}
	return p.UserCount
}

// Open runs Setup once, in the migration's transaction, and Opened with the store; a
// failing hook fails Open with its error, and leaves nothing of what it wrote.
func (h *harness) testOpen(t *testing.T) {
	ctx := context.Background()
	dsn := h.newDSN(t)
	var setups, opens int
	cfg := store.Config{
		Setup: func(ctx context.Context, q store.Querier) error {
			setups++
			return q.AddDataKey(ctx, queries.AddDataKeyParams{KeyID: fmt.Sprintf("%016d", setups), KeyCheck: sealed, AddedAt: now()})
		},
		Opened: func(ctx context.Context, st store.Store) error {
			opens++
			return st.Ping(ctx)
		},
	}
	st, err := h.engine.Open(ctx, dsn, cfg)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	if setups != 1 || opens != 1 {
		t.Errorf("Setup ran %d times and Opened %d, want once each", setups, opens)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	broken := errors.New("set-up refused")
	cfg.Setup = func(ctx context.Context, q store.Querier) error {
		if err := q.AddDataKey(ctx, queries.AddDataKeyParams{KeyID: "ffffffffffffffff", KeyCheck: sealed, AddedAt: now()}); err != nil {
			return err
		}
		return broken
	}
	if st, err := h.engine.Open(ctx, dsn, cfg); !errors.Is(err, broken) {
		if err == nil {
			_ = st.Close() // the test fails anyway
		}
		t.Fatalf("Open with a failing Setup: %v, want its error", err)
	}
	cfg.Setup = nil
	cfg.Opened = func(ctx context.Context, st store.Store) error { return broken }
	if st, err := h.engine.Open(ctx, dsn, cfg); !errors.Is(err, broken) {
		if err == nil {
			_ = st.Close() // the test fails anyway
		}
		t.Fatalf("Open with a failing Opened: %v, want its error", err)
	}

	st, err = h.engine.Open(ctx, dsn, config())
	if err != nil {
		t.Fatalf("Open again: %v", err)
	}
	defer st.Close()
	keys, err := st.Reads().ListDataKeys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 1 || keys[0].KeyID != fmt.Sprintf("%016d", 1) {
		t.Errorf("data keys after the failed opens: %+v, want the first Setup's alone", keys)
	}
}

// A write is kept whole or undone whole: an error or a panic undoes all it did (and the
// panic goes on in the caller); nil means it is there for every later read; a context
// done before the write begins drops it; the writes of others are not disturbed.
func (h *harness) testWrite(t *testing.T) {
	st, _ := h.open(t)
	ctx := context.Background()
	var platformID string
	write(t, st, func(ctx context.Context, q store.Querier) (err error) {
		platformID, err = newPlatform(ctx, q)
		return err
	})

	// CreateUserRows for a platform that does not exist writes nothing.
	err := st.Write(ctx, store.WriteOptions{}, func(ctx context.Context, q store.Querier) error {
		_, err := q.CreateUserRows(ctx, newUserRows(uuid.NewString(), "nobody@example.com"))
		return err
	})
	if !errors.Is(err, sql.ErrNoRows) {
		t.Fatalf("CreateUserRows without a platform: %v, want sql.ErrNoRows", err)
	}

	refused := errors.New("refused")
	err = st.Write(ctx, store.WriteOptions{}, func(ctx context.Context, q store.Querier) error {
		if _, err := newUser(ctx, q, platformID, "undone@example.com"); err != nil {
			return err
		}
		return refused
	})
	if !errors.Is(err, refused) {
		t.Fatalf("Write: %v, want the operation's error", err)
	}
	func() {
		defer func() {
			if p := recover(); p != "boom" {
				t.Errorf("recovered %v, want the operation's panic", p)
			}
		}()
		_ = st.Write(ctx, store.WriteOptions{}, func(ctx context.Context, q store.Querier) error { // never returns: panics
			if _, err := newUser(ctx, q, platformID, "panicked@example.com"); err != nil {
				return err
			}
			panic("boom")
		})
		t.Error("Write returned after its operation panicked")
	}()
	if n := userCount(t, st, platformID); n != 0 {
		t.Fatalf("user count %d after a refused and a panicked write, want 0", n)
	}

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	ran := false
	if err := st.Write(cancelled, store.WriteOptions{}, func(ctx context.Context, q store.Querier) error { ran = true; return nil }); !errors.Is(err, context.Canceled) || ran {
		t.Errorf("Write with a done context: %v (ran %v), want context.Canceled and not run", err, ran)
	}

	// Writers side by side: each kept, none lost, the count gap-free.
	const writers, each = 8, 10
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				errs <- st.Write(ctx, store.WriteOptions{}, func(ctx context.Context, q store.Querier) error {
					_, err := newUser(ctx, q, platformID, fmt.Sprintf("w%d-%d@example.com", w, i))
					return err
				})
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("concurrent Write: %v", err)
		}
	}
	if n := userCount(t, st, platformID); n != writers*each {
		t.Errorf("user count %d, want %d", n, writers*each)
	}
	page, err := st.Reads().ListUsersPage(ctx, queries.ListUsersPageParams{PlatformID: platformID, AfterPwID: 0, PageSize: 1000})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int64]bool{}
	for _, u := range page {
		seen[u.PwID] = true
	}
	for n := int64(1); n <= writers*each; n++ {
		if !seen[n] {
			t.Fatalf("no user numbered %d of %d: the numbering has a gap", n, writers*each)
		}
	}
}

// Two writes that take two rows in opposite orders at the same moment deadlock where
// writes run side by side; the database aborts one, and the engine runs it again: both
// succeed, each change counted once. Where writes run one at a time, they never meet.
func (h *harness) testWriteRetried(t *testing.T) {
	st, _ := h.open(t)
	ctx := context.Background()
	var a, b string
	write(t, st, func(ctx context.Context, q store.Querier) (err error) {
		if a, err = newPlatform(ctx, q); err != nil {
			return err
		}
		b, err = newPlatform(ctx, q)
		return err
	})
	var attempts atomic.Int64
	var met atomic.Bool
	var holding [2]atomic.Bool // write i holds its first row
	run := func(i int, first, second string) error {
		return st.Write(ctx, store.WriteOptions{}, func(ctx context.Context, q store.Querier) error {
			attempts.Add(1)
			if _, err := q.CountNewUser(ctx, first); err != nil {
				return err
			}
			holding[i].Store(true)
			defer holding[i].Store(false)
			// Wait for the other write to hold its first row too; where writes run one
			// at a time, it waits for this one, and the wait ends unmet.
			for deadline := time.Now().Add(300 * time.Millisecond); !holding[1-i].Load() && time.Now().Before(deadline); {
				time.Sleep(time.Millisecond)
			}
			if holding[1-i].Load() {
				met.Store(true)
			}
			_, err := q.CountNewUser(ctx, second)
			return err
		})
	}
	errs := make(chan error, 2)
	go func() { errs <- run(0, a, b) }()
	go func() { errs <- run(1, b, a) }()
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatalf("Write: %v, want both writes done (the aborted one run again)", err)
		}
	}
	if userCount(t, st, a) != 2 || userCount(t, st, b) != 2 {
		t.Errorf("counts %d and %d, want 2 and 2: each write counted once", userCount(t, st, a), userCount(t, st, b))
	}
	if met.Load() && attempts.Load() < 3 {
		t.Errorf("the writes deadlocked, yet ran %d times: want the aborted one run again", attempts.Load())
	}
	t.Logf("writes side by side: %v; attempts: %d", met.Load(), attempts.Load())
}

// Read is one snapshot: a write committed while it runs is not seen by its later
// statements, and is seen by reads that begin after it.
func (h *harness) testRead(t *testing.T) {
	st, _ := h.open(t)
	ctx := context.Background()
	var platformID string
	write(t, st, func(ctx context.Context, q store.Querier) (err error) {
		platformID, err = newPlatform(ctx, q)
		return err
	})
	err := st.Read(ctx, func(q store.Querier) error {
		before, err := q.GetPlatform(ctx, platformID)
		if err != nil {
			return err
		}
		write(t, st, func(ctx context.Context, q store.Querier) error {
			_, err := newUser(ctx, q, platformID, "during@example.com")
			return err
		})
		after, err := q.GetPlatform(ctx, platformID)
		if err != nil {
			return err
		}
		if after.UserCount != before.UserCount {
			t.Errorf("one read saw the count %d, then %d: not one snapshot", before.UserCount, after.UserCount)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	if n := userCount(t, st, platformID); n != 1 {
		t.Errorf("a read after the write saw the count %d, want 1", n)
	}
	refused := errors.New("refused")
	if err := st.Read(ctx, func(q store.Querier) error { return refused }); !errors.Is(err, refused) {
		t.Errorf("Read: %v, want the function's error", err)
	}
}

// Each duplicate a client can cause is reported as its conflict; another unique key as
// Duplicate; an error that is no duplicate, as none.
func (h *harness) testConflict(t *testing.T) {
	st, _ := h.open(t)
	ctx := context.Background()
	platformID, userID := platformWithUser(t, st, "taken@example.com")
	account := func(id string) queries.CreateBankAccountParams {
		return queries.CreateBankAccountParams{
			ID: id, UserID: userID, AccountHolderName: "Holder", BankName: "Bank",
			AccountNumberSealed: sealed, AccountNumberIndex: []byte("index"), RoutingNumber: "011000015",
			AccountType: "PERSONAL_CHECKING", CreatedAt: now(),
		}
	}
	record := func(id string) queries.CreateIdempotencyRecordParams {
		return queries.CreateIdempotencyRecordParams{
			ID: id, Scope: "platform:x create_user", Key: "key-1", Fingerprint: []byte("f"), OutcomeSealed: sealed, CreatedAt: now(),
		}
	}
	write(t, st, func(ctx context.Context, q store.Querier) error {
		if _, err := q.CreateBankAccount(ctx, account(uuid.NewString())); err != nil {
			return err
		}
		return q.CreateIdempotencyRecord(ctx, record(uuid.NewString()))
	})

	tests := []struct {
		name string
		op   func(ctx context.Context, q store.Querier) error
		want store.Conflict // "": no conflict
	}{
		{"UserEmail", func(ctx context.Context, q store.Querier) error {
			_, err := newUser(ctx, q, platformID, "taken@example.com")
			return err
		}, store.UserEmail},
		{"BankAccount", func(ctx context.Context, q store.Querier) error {
			_, err := q.CreateBankAccount(ctx, account(uuid.NewString()))
			return err
		}, store.BankAccount},
		{"IdempotencyKey", func(ctx context.Context, q store.Querier) error {
			return q.CreateIdempotencyRecord(ctx, record(uuid.NewString()))
		}, store.IdempotencyKey},
		{"Duplicate", func(ctx context.Context, q store.Querier) error {
			return q.CreatePlatform(ctx, queries.CreatePlatformParams{
				ID: platformID, Name: "again", Environment: "sandbox", SecretSealed: sealed, CreatedAt: now(),
			})
		}, store.Duplicate},
		{"NotADuplicate", func(ctx context.Context, q store.Querier) error {
			_, err := q.GetPlatform(ctx, uuid.NewString()) // no rows
			return err
		}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := st.Write(ctx, store.WriteOptions{}, tt.op)
			if err == nil {
				t.Fatal("Write succeeded, want it refused")
			}
			got, ok := st.Conflict(err)
			if ok != (tt.want != "") || got != tt.want {
				t.Errorf("Conflict(%v) = %q, %v; want %q", err, got, ok, tt.want)
			}
		})
	}
	if got, ok := st.Conflict(nil); ok {
		t.Errorf("Conflict(nil) = %q, true", got)
	}
}

// CreateBankAccountTakingDefault applies the default-account rule as the write that held
// the user last left it: a user's first account is the default, a later one only when
// asked (and the default before it then no longer is), and a write that waited for the
// user sees the default account that write added.
func (h *harness) testCreateBankAccountTakingDefault(t *testing.T) {
	st, _ := h.open(t)
	ctx := context.Background()
	platformID, userID := platformWithUser(t, st, "defaults@example.com")
	add := func(ctx context.Context, q store.Querier, asked bool) (string, error) {
		row, err := q.CreateBankAccountTakingDefault(ctx, queries.CreateBankAccountParams{
			ID: uuid.NewString(), UserID: userID, AccountHolderName: "Holder", BankName: "Bank",
			AccountNumberSealed: sealed, AccountNumberIndex: []byte(uuid.NewString()), RoutingNumber: "011000015",
			AccountType: "PERSONAL_CHECKING", IsDefault: 1, CreatedAt: now(), // IsDefault is not read: the rule decides
		}, asked)
		return row.ID, err
	}
	// defaults returns which of the accounts are the default.
	defaults := func(ids ...string) []string {
		t.Helper()
		var got []string
		if err := st.Read(ctx, func(q store.Querier) error {
			for _, id := range ids {
				r, err := q.GetPlatformBankAccount(ctx, queries.GetPlatformBankAccountParams{ID: id, PlatformID: platformID})
				if err != nil {
					return err
				}
				if r.BankAccount.IsDefault == 1 {
					got = append(got, id)
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return got
	}

	// The holder adds the user's first account, the default, and holds the user while
	// the second waits; the second, not asked, is not the default.
	var first, second string
	release, held := holding(st, func(ctx context.Context, q store.Querier) (err error) {
		first, err = add(ctx, q, false)
		return err
	})
	waited := make(chan error, 1)
	go func() {
		waited <- st.Write(ctx, store.WriteOptions{}, func(ctx context.Context, q store.Querier) (err error) {
			second, err = add(ctx, q, false)
			return err
		})
	}()
	time.Sleep(50 * time.Millisecond) // the second waits for the user (or for the writer)
	release()
	if err := <-held; err != nil {
		t.Fatal(err)
	}
	if err := <-waited; err != nil {
		t.Fatal(err)
	}
	if got := defaults(first, second); !slices.Equal(got, []string{first}) {
		t.Fatalf("default accounts after two added, the first by the write that held the user: %v, want [%s]", got, first)
	}
	// Asked, an account takes the default over.
	var third string
	write(t, st, func(ctx context.Context, q store.Querier) (err error) {
		third, err = add(ctx, q, true)
		return err
	})
	if got := defaults(first, second, third); !slices.Equal(got, []string{third}) {
		t.Errorf("default accounts after one added asking to be: %v, want [%s]", got, third)
	}
}

// RenameUserPayee renames a payee of a user and tells the name before: the last rename
// committed, even one that held the payee while this one waited; a payee that is not
// the user's is not found, and nothing changes.
func (h *harness) testRenameUserPayee(t *testing.T) {
	st, _ := h.open(t)
	ctx := context.Background()
	platformID, userID := platformWithUser(t, st, "payer@example.com")
	var otherID string
	write(t, st, func(ctx context.Context, q store.Querier) (err error) {
		otherID, err = newUser(ctx, q, platformID, "other@example.com")
		return err
	})
	payeeID := uuid.NewString()
	write(t, st, func(ctx context.Context, q store.Querier) error {
		_, err := q.CreatePayee(ctx, queries.CreatePayeeParams{ID: payeeID, UserID: userID, Name: "Ada", CreatedAt: now()})
		return err
	})
	rename := func(user, name string) (before string, after queries.Payee, err error) {
		err = st.Write(ctx, store.WriteOptions{}, func(ctx context.Context, q store.Querier) (err error) {
			before, after, err = q.RenameUserPayee(ctx, queries.RenamePayeeParams{Name: name, UpdatedAt: new(now()), ID: payeeID, UserID: user})
			return err
		})
		return before, after, err
	}
	before, after, err := rename(userID, "Bo")
	if err != nil || before != "Ada" || after.Name != "Bo" || after.ID != payeeID || after.UserID != userID || after.UpdatedAt == nil {
		t.Fatalf("RenameUserPayee = %q, %+v, %v; want Ada, then Bo", before, after, err)
	}
	if _, _, err := rename(otherID, "Cy"); !errors.Is(err, sql.ErrNoRows) {
		t.Fatalf("RenameUserPayee of another user's payee: %v, want sql.ErrNoRows", err)
	}
	// A rename holds the payee until its write ends; one waiting meanwhile reads its
	// name once it has committed.
	release, first := holding(st, func(ctx context.Context, q store.Querier) error {
		_, _, err := q.RenameUserPayee(ctx, queries.RenamePayeeParams{Name: "Di", UpdatedAt: new(now()), ID: payeeID, UserID: userID})
		return err
	})
	second := make(chan string, 1)
	go func() {
		before, _, err := rename(userID, "Ed")
		if err != nil {
			before = err.Error()
		}
		second <- before
	}()
	time.Sleep(50 * time.Millisecond) // the second waits for the payee (or for the writer)
	release()
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if got := <-second; got != "Di" {
		t.Errorf("the rename that waited read %q before it, want Di", got)
	}
	p, err := st.Reads().GetUserPayee(ctx, queries.GetUserPayeeParams{ID: payeeID, UserID: userID})
	if err != nil || p.Name != "Ed" {
		t.Errorf("GetUserPayee = %+v, %v; want Ed", p, err)
	}
}

// Writes that run several statements, reading and writing, are each kept whole, alone in
// a batch or beside others.
func (h *harness) testWritesTogether(t *testing.T) {
	st, _ := h.open(t)
	ctx := context.Background()
	platformID, userID := platformWithUser(t, st, "payer@example.com")
	payeeID := uuid.NewString()
	write(t, st, func(ctx context.Context, q store.Querier) error {
		_, err := q.CreatePayee(ctx, queries.CreatePayeeParams{ID: payeeID, UserID: userID, Name: "Ada", CreatedAt: now()})
		return err
	})
	// rename renames the payee, then reads the platform and creates a payee of its own.
	rename := func(n int) (created string, err error) {
		created = uuid.NewString()
		return created, st.Write(ctx, store.WriteOptions{}, func(ctx context.Context, q store.Querier) error {
			if _, _, err := q.RenameUserPayee(ctx, queries.RenamePayeeParams{
				Name: fmt.Sprint("Name ", n), UpdatedAt: new(now()), ID: payeeID, UserID: userID}); err != nil {
				return err
			}
			if _, err := q.GetPlatform(ctx, platformID); err != nil {
				return err
			}
			_, err := q.CreatePayee(ctx, queries.CreatePayeeParams{ID: created, UserID: userID, Name: fmt.Sprint("Payee ", n), CreatedAt: now()})
			return err
		})
	}
	kept := func(id string) {
		t.Helper()
		if _, err := st.Reads().GetUserPayee(ctx, queries.GetUserPayeeParams{ID: id, UserID: userID}); err != nil {
			t.Errorf("payee %s of an acknowledged write: %v", id, err)
		}
	}
	created, err := rename(0)
	if err != nil {
		t.Fatalf("alone: %v", err)
	}
	kept(created)
	const writers = 8
	type outcome struct {
		created string
		err     error
	}
	outcomes := make(chan outcome, writers)
	for n := 1; n <= writers; n++ {
		go func() {
			created, err := rename(n)
			outcomes <- outcome{created, err}
		}()
	}
	for range writers {
		o := <-outcomes
		if o.err != nil {
			t.Errorf("beside others: %v", o.err)
			continue
		}
		kept(o.created)
	}
}

// CreateUser writes the user, then runs fn with it, as one write: many at once of one
// platform are numbered 1..N without a gap, their times following their numbers; a
// duplicate email fails its own write alone (the database's conflict), a platform that
// does not exist is sql.ErrNoRows without fn running, and a fn that fails undoes its user,
// whose number the next user takes.
func (h *harness) testCreateUser(t *testing.T) {
	st, _ := h.open(t)
	ctx := context.Background()
	platformID, _ := platformWithUser(t, st, "first@example.com") // pw_id 1
	opts := store.WriteOptions{LockKey: "platform:" + platformID}
	create := func(platformID, email string, fail error) (queries.User, error) {
		var got queries.User
		rows := func() store.NewUserRows { return newUserRows(platformID, email) } // timed at its turn
		err := st.CreateUser(ctx, opts, rows, func(ctx context.Context, q store.Querier, user queries.User) error {
			got = user
			if _, err := q.GetPlatform(ctx, platformID); err != nil { // fn's statements run in the write
				return err
			}
			return fail
		})
		return got, err
	}
	if u, err := create(platformID, "ada@example.com", nil); err != nil || u.PwID != 2 || u.PlatformID != platformID {
		t.Fatalf("CreateUser = %+v, %v; want pw_id 2 of the platform", u, err)
	}
	errFn := errors.New("fn failed")
	if _, err := create(platformID, "undone@example.com", errFn); !errors.Is(err, errFn) {
		t.Fatalf("CreateUser whose fn fails: %v, want its error", err)
	}
	ran := false
	nowhere := func() store.NewUserRows { return newUserRows(uuid.NewString(), "nowhere@example.com") }
	err := st.CreateUser(ctx, opts, nowhere, func(context.Context, store.Querier, queries.User) error { ran = true; return nil })
	if !errors.Is(err, sql.ErrNoRows) || ran {
		t.Fatalf("CreateUser of no platform: %v (fn ran %t), want sql.ErrNoRows and fn not run", err, ran)
	}

	// Together: 24 users, two of them taking an email another has, one of no platform.
	const n = 24
	type outcome struct {
		email string
		user  queries.User
		err   error
	}
	outcomes := make(chan outcome, n)
	for i := range n {
		go func() {
			email, platform := fmt.Sprintf("user-%d@example.com", i), platformID
			switch i {
			case 7, 15:
				email = "ada@example.com"
			case 11:
				platform = uuid.NewString()
			}
			u, err := create(platform, email, nil)
			outcomes <- outcome{email, u, err}
		}()
	}
	times := map[int64]string{}
	for range n {
		o := <-outcomes
		switch c, _ := st.Conflict(o.err); {
		case o.email == "ada@example.com":
			if c != store.UserEmail {
				t.Errorf("a second ada@example.com: %v, want the UserEmail conflict", o.err)
			}
		case errors.Is(o.err, sql.ErrNoRows):
			if o.user.ID != "" {
				t.Errorf("CreateUser of no platform ran fn with %+v", o.user)
			}
		case o.err != nil:
			t.Errorf("CreateUser %s: %v", o.email, o.err)
		default:
			times[o.user.PwID] = o.user.CreatedAt
		}
	}
	if len(times) != n-3 {
		t.Fatalf("%d users created together, want %d", len(times), n-3)
	}
	last := ""
	for pw := int64(3); pw < 3+n-3; pw++ { // 1 and 2 before; the undone user's 3 taken again
		at, ok := times[pw]
		if !ok {
			t.Fatalf("no user numbered %d: pw_ids %v", pw, times)
		}
		if at < last {
			t.Errorf("user %d created at %s, before the user before it (%s)", pw, at, last)
		}
		last = at
	}
	if got := userCount(t, st, platformID); got != 2+n-3 {
		t.Errorf("user count %d, want %d", got, 2+n-3)
	}
}

// Close under load: writes under way finish and are answered, later ones fail with
// ErrClosed, nothing hangs, and every write answered nil is in the database when it is
// opened again.
func (h *harness) testCloseUnderLoad(t *testing.T) {
	ctx := context.Background()
	dsn := h.newDSN(t)
	st, err := h.engine.Open(ctx, dsn, config())
	if err != nil {
		t.Fatal(err)
	}
	var platformID string
	write(t, st, func(ctx context.Context, q store.Querier) (err error) {
		platformID, err = newPlatform(ctx, q)
		return err
	})
	const writers = 16
	var done atomic.Int64
	var wg sync.WaitGroup
	failures := make(chan error, writers)
	for w := range writers {
		wg.Go(func() {
			for i := 0; ; i++ {
				err := st.Write(ctx, store.WriteOptions{}, func(ctx context.Context, q store.Querier) error {
					_, err := newUser(ctx, q, platformID, fmt.Sprintf("c%d-%d@example.com", w, i))
					return err
				})
				switch {
				case err == nil:
					done.Add(1)
				case errors.Is(err, store.ErrClosed):
					return
				default:
					failures <- err
					return
				}
			}
		})
	}
	time.Sleep(200 * time.Millisecond)
	closed := make(chan error, 1)
	go func() { closed <- st.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Errorf("Close: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Close under load did not return in 30s")
	}
	wg.Wait()
	close(failures)
	for err := range failures {
		t.Errorf("a write during Close failed with %v, want nil or ErrClosed", err)
	}
	if err := st.Write(ctx, store.WriteOptions{}, func(ctx context.Context, q store.Querier) error { return nil }); !errors.Is(err, store.ErrClosed) {
		t.Errorf("Write after Close: %v, want ErrClosed", err)
	}
	if err := st.Close(); err != nil {
		t.Errorf("Close again: %v", err)
	}

	again, err := h.engine.Open(ctx, dsn, config())
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	p, err := again.Reads().GetPlatform(ctx, platformID)
	if err != nil {
		t.Fatal(err)
	}
	if p.UserCount != done.Load() {
		t.Errorf("reopened: %d users, want the %d writes answered nil", p.UserCount, done.Load())
	}
	if done.Load() == 0 {
		t.Error("no write succeeded before Close: the load never ran")
	}
}
