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
)

// idempotencyForms are the two ways a Go caller gives a call a key: the scoped service, and
// the context of the deprecated WithIdempotency, which must keep behaving alike.
var idempotencyForms = []struct {
	name  string
	keyed func(ctx context.Context, svc *payments.Service, idem *payments.Idempotency) (context.Context, *payments.Service)
}{
	{"Scoped", func(ctx context.Context, svc *payments.Service, idem *payments.Idempotency) (context.Context, *payments.Service) {
		return ctx, svc.Idempotent(idem)
	}},
	{"Context", func(ctx context.Context, svc *payments.Service, idem *payments.Idempotency) (context.Context, *payments.Service) {
		return payments.WithIdempotency(ctx, idem), svc
	}},
}

func TestIdempotency(t *testing.T) {
	for _, form := range idempotencyForms {
		t.Run(form.name, func(t *testing.T) {
			testIdempotency(t, func(svc *payments.Service, idem *payments.Idempotency) (context.Context, *payments.Service) {
				return form.keyed(context.Background(), svc, idem)
			})
		})
	}
}

// testIdempotency runs the idempotency tests with calls given their key by keyed.
func testIdempotency(t *testing.T, keyedBy func(*payments.Service, *payments.Idempotency) (context.Context, *payments.Service)) {
	keyed := func(svc *payments.Service, key string) (context.Context, *payments.Service, *payments.Idempotency) {
		idem := &payments.Idempotency{Key: key}
		kctx, ksvc := keyedBy(svc, idem)
		return kctx, ksvc, idem
	}

	t.Run("OKReplay", func(t *testing.T) {
		svc := mustOpen(t)
		p := mustPlatform(t, svc)
		in := payments.NewUser{Name: "Ada", Email: ptr("ada@example.com")}
		kctx, ksvc, first := keyed(svc, "k1")
		u1, err := ksvc.CreateUser(kctx, p.PlatformID, in)
		if err != nil || first.Replayed {
			t.Fatalf("first call: %v, replayed %v", err, first.Replayed)
		}
		kctx, ksvc, again := keyed(svc, "k1")
		u2, err := ksvc.CreateUser(kctx, p.PlatformID, in)
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
		kctx, ksvc, _ := keyed(svc, "k1")
		mustCreate(t, kctx, ksvc, p.PlatformID, "ada@example.com")
		kctx, ksvc, _ = keyed(svc, "k1")
		_, err := ksvc.CreateUser(kctx, p.PlatformID, payments.NewUser{Name: "Bob", Email: ptr("bob@example.com")})
		if e := errorOf(t, err, payments.CodeInvalid); e.Message != "This Idempotency-Key was already used with a different request." {
			t.Errorf("message %q", e.Message)
		}
	})

	t.Run("OKScopes", func(t *testing.T) {
		// One key, two platforms, two operations: four keys.
		svc := mustOpen(t)
		p1, p2 := mustPlatform(t, svc), mustPlatform(t, svc)
		for _, p := range []uuid.UUID{p1.PlatformID, p2.PlatformID} {
			kctx, ksvc, idem := keyed(svc, "shared")
			u := mustCreate(t, kctx, ksvc, p, "ada@example.com")
			if idem.Replayed {
				t.Error("a key of another platform replayed")
			}
			kctx, ksvc, idem = keyed(svc, "shared")
			if _, err := ksvc.AddBankAccount(kctx, p, payments.NewBankAccount{UserID: u.UserID.String(), BankName: "Chase",
				AccountNumber: "123456789", RoutingNumber: "021000021", AccountType: "PERSONAL_CHECKING"}); err != nil || idem.Replayed {
				t.Errorf("another operation under the same key: %v, replayed %v", err, idem.Replayed)
			}
		}
	})

	t.Run("OKRefusalReplayed", func(t *testing.T) {
		svc := mustOpen(t)
		p := mustPlatform(t, svc)
		mustUser(t, svc, p.PlatformID, "Ada", "ada@example.com")
		for i := range 2 {
			kctx, ksvc, idem := keyed(svc, "dup")
			_, err := ksvc.CreateUser(kctx, p.PlatformID, payments.NewUser{Name: "Ada", Email: ptr("ADA@example.com")})
			errorOf(t, err, payments.CodeConflict)
			if idem.Replayed != (i == 1) {
				t.Errorf("call %d: replayed %v", i, idem.Replayed)
			}
		}
	})

	t.Run("OKValidationNotStored", func(t *testing.T) {
		svc := mustOpen(t)
		p := mustPlatform(t, svc)
		kctx, ksvc, _ := keyed(svc, "k1")
		_, err := ksvc.CreateUser(kctx, p.PlatformID, payments.NewUser{Name: "", Email: ptr("ada@example.com")})
		errorOf(t, err, payments.CodeInvalid)
		kctx, ksvc, idem := keyed(svc, "k1")
		mustCreate(t, kctx, ksvc, p.PlatformID, "ada@example.com")
		if idem.Replayed {
			t.Error("a validation failure was stored under its key")
		}
	})

	t.Run("ErrInvalidKey", func(t *testing.T) {
		svc := mustOpen(t)
		p := mustPlatform(t, svc)
		for _, key := range []string{"", string(make([]byte, 256)), "clé", "tab\there"} {
			kctx, ksvc, _ := keyed(svc, key)
			_, err := ksvc.CreateUser(kctx, p.PlatformID, payments.NewUser{Name: "Ada", Email: ptr("ada@example.com")})
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
		kctx, ksvc, _ := keyed(svc, "k1")
		if _, err := ksvc.CreateUser(kctx, p.PlatformID, in); err != nil {
			t.Fatal(err)
		}
		set(now().Add(59 * time.Minute))
		kctx, ksvc, idem := keyed(svc, "k1")
		if _, err := ksvc.CreateUser(kctx, p.PlatformID, in); err != nil || !idem.Replayed {
			t.Errorf("within the TTL: %v, replayed %v", err, idem.Replayed)
		}
		set(now().Add(2 * time.Minute))
		kctx, ksvc, idem = keyed(svc, "k1")
		if _, err := ksvc.CreateUser(kctx, p.PlatformID, in); err != nil || idem.Replayed {
			t.Errorf("after the TTL: %v, replayed %v", err, idem.Replayed)
		}
		if n := userCount(t, svc, p.PlatformID); n != 2 {
			t.Errorf("%d users, want 2: the key expired", n)
		}
		// An expired key is free again even between the once-a-minute purges.
		kctx, ksvc, _ = keyed(svc, "k2") // stored at 61m, just after a purge
		if _, err := ksvc.CreateUser(kctx, p.PlatformID, in); err != nil {
			t.Fatal(err)
		}
		set(now().Add(59*time.Minute + 30*time.Second))
		kctx, ksvc, _ = keyed(svc, "k3") // a purge at 120m30s, k2 not expired yet
		if _, err := ksvc.CreateUser(kctx, p.PlatformID, in); err != nil {
			t.Fatal(err)
		}
		set(now().Add(42 * time.Second)) // k2 expired at 121m; the next purge is not due
		kctx, ksvc, idem = keyed(svc, "k2")
		if _, err := ksvc.CreateUser(kctx, p.PlatformID, in); err != nil || idem.Replayed {
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
				kctx, ksvc, _ := keyed(svc, "k1")
				_, results[i] = ksvc.CreateUser(kctx, p.PlatformID, in)
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
				kctx, ksvc, _ := keyed(svcs[i%2], "k1")
				payees[i], results[i] = ksvc.CreatePayee(kctx, caller, in)
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
		// (here the renderer panics), the user is not created either.
		svc := mustOpen(t)
		p := mustPlatform(t, svc)
		idem := &payments.Idempotency{Key: "k1", Render: func(any, error, time.Time) (int, []byte) { panic("render failed") }}
		func() {
			defer func() { recover() }()
			kctx, ksvc := keyedBy(svc, idem)
			ksvc.CreateUser(kctx, p.PlatformID, payments.NewUser{Name: "Ada", Email: ptr("ada@example.com")})
		}()
		if n := userCount(t, svc, p.PlatformID); n != 0 {
			t.Errorf("%d users: the change was kept without its outcome", n)
		}
		kctx, ksvc, again := keyed(svc, "k1")
		mustCreate(t, kctx, ksvc, p.PlatformID, "ada@example.com")
		if again.Replayed {
			t.Error("an outcome was kept without its change")
		}
	})
}

func mustCreate(tb testing.TB, ctx context.Context, svc *payments.Service, platformID uuid.UUID, email string) payments.User {
	tb.Helper()
	u, err := svc.CreateUser(ctx, platformID, payments.NewUser{Name: "Ada", Email: &email})
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
	u, err := first.Idempotent(&payments.Idempotency{Key: "k1"}).CreateUser(ctx, p.PlatformID, in)
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
	again, err := svc.Idempotent(idem).CreateUser(ctx, p.PlatformID, in)
	if err != nil || !idem.Replayed || again.UserID != u.UserID {
		t.Errorf("after the rotation: %+v, %v, replayed %v; want %s replayed", again, err, idem.Replayed, u.UserID)
	}
}

// A call through svc.Idempotent(idem) runs under idem.Key and reports its outcome in idem;
// svc itself, and the service a scope is taken off again, stay without a key.
func TestIdempotent(t *testing.T) {
	ctx := context.Background()
	// No unique column: a create that runs again makes another user.
	ada := payments.NewUser{Name: "Ada", PhoneCountryCode: ptr("+44"), Phone: ptr("2079460000")}
	bob := payments.NewUser{Name: "Bob", PhoneCountryCode: ptr("+44"), Phone: ptr("2079460001")}
	keyed := func(svc *payments.Service, key string, platformID uuid.UUID, in payments.NewUser) (*payments.Idempotency, error) {
		idem := &payments.Idempotency{Key: key}
		_, err := svc.Idempotent(idem).CreateUser(ctx, platformID, in)
		return idem, err
	}
	for _, tt := range []struct {
		name string
		// second is the call made after scoped.CreateUser(ctx, platformID, ada), where
		// scoped is svc.Idempotent(first) and first's key is "k1". It returns the
		// Idempotency its outcome is reported in: nil for a call without a key.
		second       func(svc, scoped *payments.Service, first *payments.Idempotency, platformID uuid.UUID) (*payments.Idempotency, error)
		wantCode     payments.Code // "": success
		wantReplayed bool
		wantUsers    int64
	}{
		{"OKSameKey", func(svc, _ *payments.Service, _ *payments.Idempotency, platformID uuid.UUID) (*payments.Idempotency, error) {
			return keyed(svc, "k1", platformID, ada)
		}, "", true, 1},
		{"OKSameScope", func(_, scoped *payments.Service, first *payments.Idempotency, platformID uuid.UUID) (*payments.Idempotency, error) {
			_, err := scoped.CreateUser(ctx, platformID, ada)
			return first, err
		}, "", true, 1},
		{"ErrSameKeyOtherInput", func(svc, _ *payments.Service, _ *payments.Idempotency, platformID uuid.UUID) (*payments.Idempotency, error) {
			return keyed(svc, "k1", platformID, bob)
		}, payments.CodeInvalid, false, 1},
		{"ErrSameScopeOtherInput", func(_, scoped *payments.Service, first *payments.Idempotency, platformID uuid.UUID) (*payments.Idempotency, error) {
			// A replay first: the refusal that follows reports itself, not the replay.
			if _, err := scoped.CreateUser(ctx, platformID, ada); err != nil || !first.Replayed {
				return first, fmt.Errorf("replay: %v, replayed %v", err, first.Replayed)
			}
			_, err := scoped.CreateUser(ctx, platformID, bob)
			return first, err
		}, payments.CodeInvalid, false, 1},
		{"OKOtherKey", func(svc, _ *payments.Service, _ *payments.Idempotency, platformID uuid.UUID) (*payments.Idempotency, error) {
			return keyed(svc, "k2", platformID, ada)
		}, "", false, 2},
		{"OKServiceNotScoped", func(svc, _ *payments.Service, _ *payments.Idempotency, platformID uuid.UUID) (*payments.Idempotency, error) {
			_, err := svc.CreateUser(ctx, platformID, ada)
			return nil, err
		}, "", false, 2},
		{"OKScopeTakenOff", func(_, scoped *payments.Service, _ *payments.Idempotency, platformID uuid.UUID) (*payments.Idempotency, error) {
			_, err := scoped.Idempotent(nil).CreateUser(ctx, platformID, ada)
			return nil, err
		}, "", false, 2},
		{"OKScopeBeforeContext", func(_, scoped *payments.Service, first *payments.Idempotency, platformID uuid.UUID) (*payments.Idempotency, error) {
			other := &payments.Idempotency{Key: "k2"}
			_, err := scoped.CreateUser(payments.WithIdempotency(ctx, other), platformID, ada)
			if other.Replayed {
				return other, fmt.Errorf("the context's key was used")
			}
			return first, err
		}, "", true, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			svc := mustOpen(t)
			p := mustPlatform(t, svc)
			first := &payments.Idempotency{Key: "k1"}
			scoped := svc.Idempotent(first)
			if _, err := scoped.CreateUser(ctx, p.PlatformID, ada); err != nil || first.Replayed {
				t.Fatalf("first call: %v, replayed %v", err, first.Replayed)
			}
			idem, err := tt.second(svc, scoped, first, p.PlatformID)
			if payments.ErrorCode(err) != tt.wantCode {
				t.Errorf("second call: %v, want code %q", err, tt.wantCode)
			}
			if idem != nil && idem.Replayed != tt.wantReplayed {
				t.Errorf("second call replayed %v, want %v", idem.Replayed, tt.wantReplayed)
			}
			if n := userCount(t, svc, p.PlatformID); n != tt.wantUsers {
				t.Errorf("%d users, want %d", n, tt.wantUsers)
			}
		})
	}
}
