package payments_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/platform-payments/payments"
)

func TestIdempotency(t *testing.T) {
	ctx := context.Background()
	keyed := func(key string) (context.Context, *payments.Idempotency) {
		idem := &payments.Idempotency{Key: key}
		return payments.WithIdempotency(ctx, idem), idem
	}

	t.Run("OKReplay", func(t *testing.T) {
		svc := mustOpen(t)
		p := mustPlatform(t, svc)
		in := payments.NewUser{Name: "Ada", Email: ptr("ada@example.com")}
		kctx, first := keyed("k1")
		u1, err := svc.CreateUser(kctx, p.PlatformID, in)
		if err != nil || first.Replayed {
			t.Fatalf("first call: %v, replayed %v", err, first.Replayed)
		}
		kctx, again := keyed("k1")
		u2, err := svc.CreateUser(kctx, p.PlatformID, in)
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
		kctx, _ := keyed("k1")
		mustCreate(t, kctx, svc, p.PlatformID, "ada@example.com")
		kctx, _ = keyed("k1")
		_, err := svc.CreateUser(kctx, p.PlatformID, payments.NewUser{Name: "Bob", Email: ptr("bob@example.com")})
		if e := errorOf(t, err, payments.CodeInvalid); e.Message != "This Idempotency-Key was already used with a different request." {
			t.Errorf("message %q", e.Message)
		}
	})

	t.Run("OKScopes", func(t *testing.T) {
		// One key, two platforms, two operations: four keys.
		svc := mustOpen(t)
		p1, p2 := mustPlatform(t, svc), mustPlatform(t, svc)
		for _, p := range []uuid.UUID{p1.PlatformID, p2.PlatformID} {
			kctx, idem := keyed("shared")
			u := mustCreate(t, kctx, svc, p, "ada@example.com")
			if idem.Replayed {
				t.Error("a key of another platform replayed")
			}
			kctx, idem = keyed("shared")
			if _, err := svc.AddBankAccount(kctx, p, payments.NewBankAccount{UserID: u.UserID.String(), BankName: "Chase",
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
			kctx, idem := keyed("dup")
			_, err := svc.CreateUser(kctx, p.PlatformID, payments.NewUser{Name: "Ada", Email: ptr("ADA@example.com")})
			errorOf(t, err, payments.CodeConflict)
			if idem.Replayed != (i == 1) {
				t.Errorf("call %d: replayed %v", i, idem.Replayed)
			}
		}
	})

	t.Run("OKValidationNotStored", func(t *testing.T) {
		svc := mustOpen(t)
		p := mustPlatform(t, svc)
		kctx, _ := keyed("k1")
		_, err := svc.CreateUser(kctx, p.PlatformID, payments.NewUser{Name: "", Email: ptr("ada@example.com")})
		errorOf(t, err, payments.CodeInvalid)
		kctx, idem := keyed("k1")
		mustCreate(t, kctx, svc, p.PlatformID, "ada@example.com")
		if idem.Replayed {
			t.Error("a validation failure was stored under its key")
		}
	})

	t.Run("ErrInvalidKey", func(t *testing.T) {
		svc := mustOpen(t)
		p := mustPlatform(t, svc)
		for _, key := range []string{"", string(make([]byte, 256)), "clé", "tab\there"} {
			kctx, _ := keyed(key)
			_, err := svc.CreateUser(kctx, p.PlatformID, payments.NewUser{Name: "Ada", Email: ptr("ada@example.com")})
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
		kctx, _ := keyed("k1")
		if _, err := svc.CreateUser(kctx, p.PlatformID, in); err != nil {
			t.Fatal(err)
		}
		set(now().Add(59 * time.Minute))
		kctx, idem := keyed("k1")
		if _, err := svc.CreateUser(kctx, p.PlatformID, in); err != nil || !idem.Replayed {
			t.Errorf("within the TTL: %v, replayed %v", err, idem.Replayed)
		}
		set(now().Add(2 * time.Minute))
		kctx, idem = keyed("k1")
		if _, err := svc.CreateUser(kctx, p.PlatformID, in); err != nil || idem.Replayed {
			t.Errorf("after the TTL: %v, replayed %v", err, idem.Replayed)
		}
		if n := userCount(t, svc, p.PlatformID); n != 2 {
			t.Errorf("%d users, want 2: the key expired", n)
		}
		// An expired key is free again even between the once-a-minute purges.
		kctx, _ = keyed("k2") // stored at 61m, just after a purge
		if _, err := svc.CreateUser(kctx, p.PlatformID, in); err != nil {
			t.Fatal(err)
		}
		set(now().Add(59*time.Minute + 30*time.Second))
		kctx, _ = keyed("k3") // a purge at 120m30s, k2 not expired yet
		if _, err := svc.CreateUser(kctx, p.PlatformID, in); err != nil {
			t.Fatal(err)
		}
		set(now().Add(42 * time.Second)) // k2 expired at 121m; the next purge is not due
		kctx, idem = keyed("k2")
		if _, err := svc.CreateUser(kctx, p.PlatformID, in); err != nil || idem.Replayed {
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
				kctx, _ := keyed("k1")
				_, results[i] = svc.CreateUser(kctx, p.PlatformID, in)
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
				kctx, _ := keyed("k1")
				payees[i], results[i] = svcs[i%2].CreatePayee(kctx, caller, in)
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
			svc.CreateUser(payments.WithIdempotency(ctx, idem), p.PlatformID, payments.NewUser{Name: "Ada", Email: ptr("ada@example.com")})
		}()
		if n := userCount(t, svc, p.PlatformID); n != 0 {
			t.Errorf("%d users: the change was kept without its outcome", n)
		}
		kctx, again := keyed("k1")
		mustCreate(t, kctx, svc, p.PlatformID, "ada@example.com")
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
	u, err := first.CreateUser(payments.WithIdempotency(ctx, &payments.Idempotency{Key: "k1"}), p.PlatformID, in)
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	rotating := mustOpenFile(t, path, payments.Options{DataKeys: []payments.DataKey{newKey, oldKey}})
	if _, err := rotating.RotateKeys(ctx, payments.RotateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := rotating.Close(); err != nil {
		t.Fatal(err)
	}
	svc := mustOpenFile(t, path, payments.Options{DataKeys: []payments.DataKey{newKey}})
	idem := &payments.Idempotency{Key: "k1"}
	again, err := svc.CreateUser(payments.WithIdempotency(ctx, idem), p.PlatformID, in)
	if err != nil || !idem.Replayed || again.UserID != u.UserID {
		t.Errorf("after the rotation: %+v, %v, replayed %v; want %s replayed", again, err, idem.Replayed, u.UserID)
	}
}
