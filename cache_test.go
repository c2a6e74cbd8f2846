package payments

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/google/uuid"

	"github.com/platform-payments/payments/internal/cache"
	"github.com/platform-payments/payments/internal/pgtest"
	"github.com/platform-payments/payments/internal/store"
)

// newDSN is main_test.go's for the internal tests: a new database file, or a PostgreSQL
// schema of its own when $PAYMENTS_TEST_POSTGRES is set.
func newDSN(tb testing.TB) string {
	tb.Helper()
	if pgtest.Enabled() {
		return pgtest.DSN(tb)
	}
	return filepath.Join(tb.TempDir(), "payments.db")
}

// openPair opens two services on one new database, as two processes would.
func openPair(t *testing.T, second Options) (*Service, *Service) {
	t.Helper()
	path := newDSN(t)
	key := NewDataKey()
	first, err := Open(context.Background(), path, Options{DataKeys: []DataKey{key}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { first.Close() })
	second.DataKeys = []DataKey{key}
	other, err := Open(context.Background(), path, second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	return first, other
}

// TestUserCache: Get User's cache never answers what the store would not, whatever
// another service on the same file does meanwhile, and stays within its bound.
func TestUserCache(t *testing.T) {
	ctx := context.Background()
	nextID := uuid.Must(uuid.NewV7())
	svc, other := openPair(t, Options{NewID: func() uuid.UUID { return nextID }})
	svc.users = cache.New[userKey, User](2)
	platform, err := svc.CreatePlatform(ctx, "Acme", "")
	if err != nil {
		t.Fatal(err)
	}
	otherPlatform, err := svc.CreatePlatform(ctx, "Globex", "")
	if err != nil {
		t.Fatal(err)
	}
	newUser := func(s *Service, email string) User {
		t.Helper()
		u, err := s.CreateUser(ctx, platform.PlatformID, NewUser{Name: "Ada", Email: &email,
			PhoneCountryCode: ptrTo("+44"), Phone: ptrTo("2079460000")})
		if err != nil {
			t.Fatal(err)
		}
		return u
	}
	// fresh reads the user as a service without a cache would.
	fresh := func(id uuid.UUID) (User, error) {
		var u User
		err := other.query(ctx, func(q store.Querier) error {
			r, err := other.platformUser(ctx, q, platform.PlatformID, id.String())
			if err != nil {
				return err
			}
			u, err = userFromRow(r)
			return err
		})
		return u, err
	}

	tests := []struct {
		name string
		run  func(t *testing.T)
	}{
		{"CachedIsWhatTheStoreHolds", func(t *testing.T) {
			u := newUser(svc, "ada@example.com")
			for range 2 { // a miss, then a hit
				got, err := svc.GetUser(ctx, platform.PlatformID, u.UserID.String())
				if err != nil || !reflect.DeepEqual(got, u) {
					t.Fatalf("GetUser = %+v, %v; want %+v", got, err, u)
				}
			}
			// Another process verifies the user and gives it a key: nothing shown changes.
			if err := other.VerifyUser(ctx, u.UserID.String()); err != nil {
				t.Fatal(err)
			}
			if _, err := other.CreateAPIKey(ctx, u.UserID.String()); err != nil {
				t.Fatal(err)
			}
			want, err := fresh(u.UserID)
			if err != nil {
				t.Fatal(err)
			}
			got, err := svc.GetUser(ctx, platform.PlatformID, u.UserID.String())
			if err != nil || !reflect.DeepEqual(got, want) {
				t.Fatalf("cached GetUser = %+v, %v; the store holds %+v", got, err, want)
			}
		}},
		{"MissIsNotCached", func(t *testing.T) {
			// The id the other process is about to give its user, asked for first.
			nextID = uuid.Must(uuid.NewV7())
			if _, err := svc.GetUser(ctx, platform.PlatformID, nextID.String()); ErrorCode(err) != CodeNotFound {
				t.Fatalf("GetUser before it exists: %v, want not found", err)
			}
			u := newUser(other, "grace@example.com")
			if u.UserID != nextID {
				t.Fatalf("created %s, want %s", u.UserID, nextID)
			}
			got, err := svc.GetUser(ctx, platform.PlatformID, u.UserID.String())
			if err != nil || !reflect.DeepEqual(got, u) {
				t.Fatalf("GetUser after another process created it = %+v, %v; want %+v", got, err, u)
			}
		}},
		{"OnlyThroughItsPlatform", func(t *testing.T) {
			u := newUser(svc, "alan@example.com")
			if _, err := svc.GetUser(ctx, platform.PlatformID, u.UserID.String()); err != nil {
				t.Fatal(err)
			}
			if _, err := svc.GetUser(ctx, otherPlatform.PlatformID, u.UserID.String()); ErrorCode(err) != CodeNotFound {
				t.Fatalf("GetUser through another platform: %v, want not found", err)
			}
		}},
		{"CallerCannotChangeIt", func(t *testing.T) {
			u := newUser(svc, "edsger@example.com")
			got, err := svc.GetUser(ctx, platform.PlatformID, u.UserID.String())
			if err != nil {
				t.Fatal(err)
			}
			*got.Email, *got.Phone, *got.PhoneCountryCode = "x", "y", "z"
			again, err := svc.GetUser(ctx, platform.PlatformID, u.UserID.String())
			if err != nil || !reflect.DeepEqual(again, u) {
				t.Fatalf("GetUser after the caller changed its copy = %+v, %v; want %+v", again, err, u)
			}
		}},
		{"Bounded", func(t *testing.T) {
			var users []User
			for i := range 5 {
				users = append(users, newUser(svc, fmt.Sprintf("bound%d@example.com", i)))
			}
			for range 2 {
				for _, u := range users {
					got, err := svc.GetUser(ctx, platform.PlatformID, u.UserID.String())
					if err != nil || !reflect.DeepEqual(got, u) {
						t.Fatalf("GetUser = %+v, %v; want %+v", got, err, u)
					}
					if n := svc.users.Len(); n > 2 {
						t.Fatalf("%d users cached, bound 2", n)
					}
				}
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, tc.run)
	}
}

func ptrTo[T any](v T) *T { return &v }

// TestWriteRemembersUser: a write that changes a user's objects reads the user once and
// caches it only when it has committed; later writes of the user take it from the cache,
// only through the user's own platform, and a cached user is what the store holds.
func TestWriteRemembersUser(t *testing.T) {
	ctx := context.Background()
	svc, _ := openPair(t, Options{})
	svc.users = cache.New[userKey, User](8)
	p, err := svc.CreatePlatform(ctx, "Acme", "")
	if err != nil {
		t.Fatal(err)
	}
	other, err := svc.CreatePlatform(ctx, "Globex", "")
	if err != nil {
		t.Fatal(err)
	}
	u, err := svc.CreateUser(ctx, p.PlatformID, NewUser{Name: "Ada", Email: ptrTo("ada@example.com")})
	if err != nil {
		t.Fatal(err)
	}
	key := userKey{platform: p.PlatformID, user: u.UserID}
	cached := func() bool { _, ok := svc.users.Get(key); return ok }
	account := func(platform uuid.UUID, number string) error {
		a, err := svc.AddBankAccount(ctx, platform, NewBankAccount{UserID: u.UserID.String(), BankName: "Chase",
			AccountNumber: number, RoutingNumber: "021000021", AccountType: "PERSONAL_CHECKING"})
		if err == nil && a.AccountHolderName != "Ada" {
			err = fmt.Errorf("account held by %q, want Ada", a.AccountHolderName)
		}
		return err
	}
	if cached() {
		t.Fatal("the user is cached before any write read it")
	}
	// A write that fails after reading the user does not cache it.
	if _, err := svc.DeleteCard(ctx, p.PlatformID, u.UserID.String(), CardDeletion{CardID: uuid.NewString()}); ErrorCode(err) != CodeNotFound {
		t.Fatalf("DeleteCard of no card: %v, want not found", err)
	}
	if cached() {
		t.Error("a write that failed cached the user it read")
	}
	if err := account(p.PlatformID, "111111111"); err != nil {
		t.Fatal(err)
	}
	got, ok := svc.users.Get(key)
	if !ok {
		t.Fatal("a write that committed did not cache the user it read")
	}
	if !reflect.DeepEqual(got, u) {
		t.Errorf("cached %+v, want what Create User answered, %+v", got, u)
	}
	// From the cache: the holder's name is the user's, as read (account checks it).
	if err := account(p.PlatformID, "222222222"); err != nil {
		t.Fatal(err)
	}
	// Another platform does not find the user, cached or not.
	if err := account(other.PlatformID, "333333333"); ErrorCode(err) != CodeNotFound {
		t.Errorf("Add Bank Account through another platform: %v, want not found", err)
	}
}
