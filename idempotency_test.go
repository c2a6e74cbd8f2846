package payments_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/platform-payments/payments"
	"github.com/platform-payments/payments/internal/pgtest"
)

func TestIdempotency(t *testing.T) {
	ctx := context.Background()
	// keyed returns the option of a call under key, and the Idempotency it reports in.
	keyed := func(key string) (payments.Call, *payments.Idempotency) {
		idem := &payments.Idempotency{Key: key}
		return payments.WithKey(idem), idem
	}

	t.Run("OKReplay", func(t *testing.T) {
		svc := mustOpen(t)
		p := mustPlatform(t, svc)
		in := payments.NewUser{Name: "Ada", Email: ptr("ada@example.com")}
		key, first := keyed("k1")
		u1, err := svc.CreateUser(ctx, p.PlatformID, in, key)
		if err != nil || first.Replayed {
			t.Fatalf("first call: %v, replayed %v", err, first.Replayed)
		}
		key, again := keyed("k1")
		u2, err := svc.CreateUser(ctx, p.PlatformID, in, key)
		if err != nil || !again.Replayed {
			t.Fatalf("retry: %v, replayed %v", err, again.Replayed)
		}
		if canonicalJSON(t, u1) != canonicalJSON(t, u2) {
			t.Errorf("retry answered %+v, first %+v", u2, u1)
		}
		if n := userCount(t, svc, p.PlatformID); n != 1 {
			t.Errorf("%d users after a retried create, want 1", n)
		}
	})

	t.Run("ErrKeyReused", func(t *testing.T) {
		svc := mustOpen(t)
		p := mustPlatform(t, svc)
		key, _ := keyed("k1")
		mustCreate(t, svc, p.PlatformID, "ada@example.com", key)
		key, _ = keyed("k1")
		_, err := svc.CreateUser(ctx, p.PlatformID, payments.NewUser{Name: "Bob", Email: ptr("bob@example.com")}, key)
		if e := errorOf(t, err, payments.CodeInvalid); e.Message != "This Idempotency-Key was already used with a different request." {
			t.Errorf("message %q", e.Message)
		}
	})

	t.Run("OKScopes", func(t *testing.T) {
		// One key, two platforms, two operations: four keys.
		svc := mustOpen(t)
		p1, p2 := mustPlatform(t, svc), mustPlatform(t, svc)
		for _, p := range []uuid.UUID{p1.PlatformID, p2.PlatformID} {
			key, idem := keyed("shared")
			u := mustCreate(t, svc, p, "ada@example.com", key)
			if idem.Replayed {
				t.Error("a key of another platform replayed")
			}
			key, idem = keyed("shared")
			if _, err := svc.AddBankAccount(ctx, p, payments.NewBankAccount{UserID: u.UserID.String(), BankName: "Chase",
				AccountNumber: "123456789", RoutingNumber: "021000021", AccountType: "PERSONAL_CHECKING"}, key); err != nil || idem.Replayed {
				t.Errorf("another operation under the same key: %v, replayed %v", err, idem.Replayed)
			}
		}
	})

	t.Run("OKRefusalReplayed", func(t *testing.T) {
		svc := mustOpen(t)
		p := mustPlatform(t, svc)
		mustUser(t, svc, p.PlatformID, "Ada", "ada@example.com")
		for i := range 2 {
			key, idem := keyed("dup")
			_, err := svc.CreateUser(ctx, p.PlatformID, payments.NewUser{Name: "Ada", Email: ptr("ADA@example.com")}, key)
			errorOf(t, err, payments.CodeConflict)
			if idem.Replayed != (i == 1) {
				t.Errorf("call %d: replayed %v", i, idem.Replayed)
			}
		}
	})

	t.Run("OKValidationNotStored", func(t *testing.T) {
		svc := mustOpen(t)
		p := mustPlatform(t, svc)
		key, _ := keyed("k1")
		_, err := svc.CreateUser(ctx, p.PlatformID, payments.NewUser{Name: "", Email: ptr("ada@example.com")}, key)
		errorOf(t, err, payments.CodeInvalid)
		key, idem := keyed("k1")
		mustCreate(t, svc, p.PlatformID, "ada@example.com", key)
		if idem.Replayed {
			t.Error("a validation failure was stored under its key")
		}
	})

	t.Run("ErrInvalidKey", func(t *testing.T) {
		svc := mustOpen(t)
		p := mustPlatform(t, svc)
		for _, key := range []string{"", string(make([]byte, 256)), "clé", "tab\there"} {
			key, _ := keyed(key)
			_, err := svc.CreateUser(ctx, p.PlatformID, payments.NewUser{Name: "Ada", Email: ptr("ada@example.com")}, key)
			errorOf(t, err, payments.CodeInvalid)
		}
		if !payments.ValidIdempotencyKey(strings.Repeat("k", 255)) {
			t.Error("255 characters refused")
		}
	})

	t.Run("OKExpires", func(t *testing.T) {
		now, set := fixedClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
		svc := mustOpen(t, payments.Options{Now: now, IdempotencyTTL: time.Hour})
		p := mustPlatform(t, svc)
		in := payments.NewUser{Name: "Ada", PhoneCountryCode: ptr("+44"), Phone: ptr("2079460000")}
		key, _ := keyed("k1")
		if _, err := svc.CreateUser(ctx, p.PlatformID, in, key); err != nil {
			t.Fatal(err)
		}
		set(now().Add(59 * time.Minute))
		key, idem := keyed("k1")
		if _, err := svc.CreateUser(ctx, p.PlatformID, in, key); err != nil || !idem.Replayed {
			t.Errorf("within the TTL: %v, replayed %v", err, idem.Replayed)
		}
		set(now().Add(2 * time.Minute))
		key, idem = keyed("k1")
		if _, err := svc.CreateUser(ctx, p.PlatformID, in, key); err != nil || idem.Replayed {
			t.Errorf("after the TTL: %v, replayed %v", err, idem.Replayed)
		}
		if n := userCount(t, svc, p.PlatformID); n != 2 {
			t.Errorf("%d users, want 2: the key expired", n)
		}
		// An expired key is free again even between the once-a-minute purges.
		key, _ = keyed("k2") // stored at 61m, just after a purge
		if _, err := svc.CreateUser(ctx, p.PlatformID, in, key); err != nil {
			t.Fatal(err)
		}
		set(now().Add(59*time.Minute + 30*time.Second))
		key, _ = keyed("k3") // a purge at 120m30s, k2 not expired yet
		if _, err := svc.CreateUser(ctx, p.PlatformID, in, key); err != nil {
			t.Fatal(err)
		}
		set(now().Add(42 * time.Second)) // k2 expired at 121m; the next purge is not due
		key, idem = keyed("k2")
		if _, err := svc.CreateUser(ctx, p.PlatformID, in, key); err != nil || idem.Replayed {
			t.Errorf("an expired key between purges: %v, replayed %v", err, idem.Replayed)
		}
	})

	t.Run("OKConcurrent", func(t *testing.T) {
		// Eight clients send one create with one key at once: one user; every answer is
		// that user (replayed) or "still being processed".
		svc := mustOpen(t)
		p := mustPlatform(t, svc)
		in := payments.NewUser{Name: "Ada", Email: ptr("ada@example.com")}
		var wg sync.WaitGroup
		results := make([]error, 8)
		for i := range results {
			wg.Add(1)
			go func() {
				defer wg.Done()
				key, _ := keyed("k1")
				_, results[i] = svc.CreateUser(ctx, p.PlatformID, in, key)
			}()
		}
		wg.Wait()
		for i, err := range results {
			if err != nil && payments.ErrorCode(err) != payments.CodeConflict {
				t.Errorf("client %d: %v", i, err)
			}
		}
		if n := userCount(t, svc, p.PlatformID); n != 1 {
			t.Errorf("%d users, want 1", n)
		}
	})

	t.Run("OKConcurrentInstances", func(t *testing.T) {
		// Sixteen clients send one Create Payee (no unique column to catch a second run)
		// with one key at once to two services on one database, as to two instances: one
		// payee; every answer is that payee or "still being processed".
		path := newDSN(t)
		svcs := []*payments.Service{mustOpenFile(t, path), mustOpenFile(t, path)}
		p := mustPlatform(t, svcs[0])
		u := mustUser(t, svcs[0], p.PlatformID, "Ada", "ada@example.com")
		caller := mustCaller(t, svcs[0], u.UserID)
		in := payments.NewPayee{Name: "Priya Patel", Email: ptr("priya@example.com")}
		var wg sync.WaitGroup
		payees := make([]payments.Payee, 16)
		results := make([]error, len(payees))
		for i := range results {
			wg.Go(func() {
				key, _ := keyed("k1")
				payees[i], results[i] = svcs[i%2].CreatePayee(ctx, caller, in, key)
			})
		}
		wg.Wait()
		var first uuid.UUID
		for i, err := range results {
			switch {
			case err == nil && first == uuid.Nil:
				first = payees[i].PayeeID
			case err == nil && payees[i].PayeeID != first:
				t.Errorf("client %d: payee %s, another client's %s", i, payees[i].PayeeID, first)
			case err != nil && payments.ErrorCode(err) != payments.CodeConflict:
				t.Errorf("client %d: %v", i, err)
			}
		}
		if n := queryInt(t, rawDB(t, path), `SELECT count(*) FROM payees WHERE user_id = $1`, u.UserID.String()); n != 1 {
			t.Errorf("%d payees, want 1", n)
		}
	})

	t.Run("OKOneTransaction", func(t *testing.T) {
		// The outcome is stored in the transaction of the change: when storing it fails
		// (here a trigger refuses the record), the user is not created either.
		path := newDSN(t)
		svc := mustOpenFile(t, path)
		p := mustPlatform(t, svc)
		db := rawDB(t, path)
		refuse, allow := []string{
			`CREATE TRIGGER refuse_outcome BEFORE INSERT ON idempotency_keys BEGIN SELECT RAISE(ABORT, 'outcome refused'); END`,
		}, []string{`DROP TRIGGER refuse_outcome`}
		if pgtest.Enabled() {
			refuse = []string{
				`CREATE FUNCTION refuse_outcome() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'outcome refused'; END $$`,
				`CREATE TRIGGER refuse_outcome BEFORE INSERT ON idempotency_keys FOR EACH ROW EXECUTE FUNCTION refuse_outcome()`,
			}
			allow = []string{`DROP TRIGGER refuse_outcome ON idempotency_keys`}
		}
		for _, stmt := range refuse {
			if _, err := db.Exec(stmt); err != nil {
				t.Fatalf("%s: %v", stmt, err)
			}
		}
		key, idem := keyed("k1")
		_, err := svc.CreateUser(ctx, p.PlatformID, payments.NewUser{Name: "Ada", Email: ptr("ada@example.com")}, key)
		if err == nil || !idem.At.IsZero() {
			t.Errorf("with the outcome refused: %v, at %v; want an error and no outcome", err, idem.At)
		}
		if n := userCount(t, svc, p.PlatformID); n != 0 {
			t.Errorf("%d users: the change was kept without its outcome", n)
		}
		for _, stmt := range allow {
			if _, err := db.Exec(stmt); err != nil {
				t.Fatalf("%s: %v", stmt, err)
			}
		}
		key, again := keyed("k1")
		mustCreate(t, svc, p.PlatformID, "ada@example.com", key)
		if again.Replayed {
			t.Error("an outcome was kept without its change")
		}
	})
}

func mustCreate(tb testing.TB, svc *payments.Service, platformID uuid.UUID, email string, opts ...payments.Call) payments.User {
	tb.Helper()
	u, err := svc.CreateUser(context.Background(), platformID, payments.NewUser{Name: "Ada", Email: &email}, opts...)
	if err != nil {
		tb.Fatal(err)
	}
	return u
}

func userCount(tb testing.TB, svc *payments.Service, platformID uuid.UUID) int64 {
	tb.Helper()
	page, err := svc.ListUsers(context.Background(), platformID, payments.ListUsersParams{})
	if err != nil {
		tb.Fatal(err)
	}
	return page.TotalRecords
}

// An answer stored under an idempotency key is sealed like the values it may hold, moves
// with a key rotation, and replays under the new key alone.
func TestIdempotencyKeyRotation(t *testing.T) {
	ctx := context.Background()
	path := newDSN(t)
	oldKey, newKey := payments.NewDataKey(), payments.NewDataKey()
	first := mustOpenFile(t, path, payments.Options{DataKeys: []payments.DataKey{oldKey}})
	p := mustPlatform(t, first)
	in := payments.NewUser{Name: "Ada", Email: ptr("ada@example.com")}
	u, err := first.CreateUser(ctx, p.PlatformID, in, payments.WithKey(&payments.Idempotency{Key: "k1"}))
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	rotating := mustOpenFile(t, path, payments.Options{DataKeys: []payments.DataKey{newKey, oldKey}})
	if _, err := rotating.DataKeys().Rotate(ctx, payments.RotateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := rotating.Close(); err != nil {
		t.Fatal(err)
	}
	svc := mustOpenFile(t, path, payments.Options{DataKeys: []payments.DataKey{newKey}})
	idem := &payments.Idempotency{Key: "k1"}
	again, err := svc.CreateUser(ctx, p.PlatformID, in, payments.WithKey(idem))
	if err != nil || !idem.Replayed || again.UserID != u.UserID {
		t.Errorf("after the rotation: %+v, %v, replayed %v; want %s replayed", again, err, idem.Replayed, u.UserID)
	}
}

// A call given WithKey(idem) runs under idem.Key and reports its outcome in idem: whether
// it was replayed, and when the outcome stored was produced; a call without it runs
// without a key.
func TestWithKey(t *testing.T) {
	ctx := context.Background()
	// No unique column: a create that runs again makes another user.
	ada := payments.NewUser{Name: "Ada", PhoneCountryCode: ptr("+44"), Phone: ptr("2079460000")}
	bob := payments.NewUser{Name: "Bob", PhoneCountryCode: ptr("+44"), Phone: ptr("2079460001")}
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	keyed := func(svc *payments.Service, key string, platformID uuid.UUID, in payments.NewUser) (*payments.Idempotency, error) {
		idem := &payments.Idempotency{Key: key}
		_, err := svc.CreateUser(ctx, platformID, in, payments.WithKey(idem))
		return idem, err
	}
	for _, tt := range []struct {
		name string
		// second is the call made a minute after svc.CreateUser(ctx, platformID, ada,
		// payments.WithKey(first)), where first's key is "k1". It returns the Idempotency
		// its outcome is reported in: nil for a call without a key.
		second       func(svc *payments.Service, first *payments.Idempotency, platformID uuid.UUID) (*payments.Idempotency, error)
		wantCode     payments.Code // "": success
		wantReplayed bool
		wantAt       time.Time // zero: the outcome is not stored
		wantUsers    int64
	}{
		{"OKSameKey", func(svc *payments.Service, _ *payments.Idempotency, platformID uuid.UUID) (*payments.Idempotency, error) {
			return keyed(svc, "k1", platformID, ada)
		}, "", true, start, 1},
		{"OKSameIdempotency", func(svc *payments.Service, first *payments.Idempotency, platformID uuid.UUID) (*payments.Idempotency, error) {
			_, err := svc.CreateUser(ctx, platformID, ada, payments.WithKey(first))
			return first, err
		}, "", true, start, 1},
		{"ErrSameKeyOtherInput", func(svc *payments.Service, _ *payments.Idempotency, platformID uuid.UUID) (*payments.Idempotency, error) {
			return keyed(svc, "k1", platformID, bob)
		}, payments.CodeInvalid, false, time.Time{}, 1},
		{"ErrSameIdempotencyOtherInput", func(svc *payments.Service, first *payments.Idempotency, platformID uuid.UUID) (*payments.Idempotency, error) {
			// A replay first: the refusal that follows reports itself, not the replay.
			if _, err := svc.CreateUser(ctx, platformID, ada, payments.WithKey(first)); err != nil || !first.Replayed {
				return first, fmt.Errorf("replay: %v, replayed %v", err, first.Replayed)
			}
			_, err := svc.CreateUser(ctx, platformID, bob, payments.WithKey(first))
			return first, err
		}, payments.CodeInvalid, false, time.Time{}, 1},
		{"OKOtherKey", func(svc *payments.Service, _ *payments.Idempotency, platformID uuid.UUID) (*payments.Idempotency, error) {
			return keyed(svc, "k2", platformID, ada)
		}, "", false, start.Add(time.Minute), 2},
		{"OKWithoutKey", func(svc *payments.Service, _ *payments.Idempotency, platformID uuid.UUID) (*payments.Idempotency, error) {
			_, err := svc.CreateUser(ctx, platformID, ada)
			return nil, err
		}, "", false, time.Time{}, 2},
		{"OKNilKey", func(svc *payments.Service, _ *payments.Idempotency, platformID uuid.UUID) (*payments.Idempotency, error) {
			_, err := svc.CreateUser(ctx, platformID, ada, payments.WithKey(nil))
			return nil, err
		}, "", false, time.Time{}, 2},
		{"OKLastKeyWins", func(svc *payments.Service, first *payments.Idempotency, platformID uuid.UUID) (*payments.Idempotency, error) {
			other := &payments.Idempotency{Key: "k2"}
			_, err := svc.CreateUser(ctx, platformID, ada, payments.WithKey(other), payments.WithKey(first))
			if other.Replayed || !other.At.IsZero() {
				return other, fmt.Errorf("the first key was used")
			}
			return first, err
		}, "", true, start, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			now, set := fixedClock(start)
			svc := mustOpen(t, payments.Options{Now: now})
			p := mustPlatform(t, svc)
			first := &payments.Idempotency{Key: "k1"}
			if _, err := svc.CreateUser(ctx, p.PlatformID, ada, payments.WithKey(first)); err != nil || first.Replayed || !first.At.Equal(start) {
				t.Fatalf("first call: %v, replayed %v, at %v", err, first.Replayed, first.At)
			}
			set(start.Add(time.Minute))
			idem, err := tt.second(svc, first, p.PlatformID)
			if payments.ErrorCode(err) != tt.wantCode {
				t.Errorf("second call: %v, want code %q", err, tt.wantCode)
			}
			if idem != nil && (idem.Replayed != tt.wantReplayed || !idem.At.Equal(tt.wantAt) || idem.Response != nil) {
				t.Errorf("second call replayed %v at %v (response %v), want %v at %v", idem.Replayed, idem.At, idem.Response, tt.wantReplayed, tt.wantAt)
			}
			if n := userCount(t, svc, p.PlatformID); n != tt.wantUsers {
				t.Errorf("%d users, want %d", n, tt.wantUsers)
			}
		})
	}
}
