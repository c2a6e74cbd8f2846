package payments_test

import (
	"context"
	"fmt"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/platform-payments/payments"
)

// TestKeyedWrites runs every write that takes an Idempotency-Key under a key, on a clock
// that moves two minutes at each call, so that each call's record also purges the expired
// ones (at most once a minute): alone, each the only write of its batch, and then all at
// once from 16 callers. A valid write never fails: each answers, and its key replays the
// answer. (Add Bank Account and Update Payee once answered "a write ran a statement after
// its last" on PostgreSQL when the purge fell to them alone in a batch.)
func TestKeyedWrites(t *testing.T) {
	ctx := context.Background()
	var clock atomic.Int64
	clock.Store(time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC).UnixMicro())
	now := func() time.Time { return time.UnixMicro(clock.Add(int64(2 * time.Minute / time.Microsecond))).UTC() }
	svc := mustOpen(t, payments.Options{Now: now, WebhookAllow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})
	p := mustPlatform(t, svc)

	// writes are the keyed writes of one caller n, in an order in which each finds what
	// it needs (the user, its payee, its card, its bank, its endpoint).
	writes := func(n int) []struct {
		name string
		run  func(key payments.Call) error
	} {
		var (
			user     payments.User
			payee    payments.Payee
			card     payments.Card
			bank     payments.PayeeBank
			endpoint payments.WebhookEndpoint
		)
		email := fmt.Sprintf("user-%d@example.com", n)
		return []struct {
			name string
			run  func(key payments.Call) error
		}{
			{"CreateUser", func(key payments.Call) (err error) {
				user, err = svc.CreateUser(ctx, p.PlatformID, payments.NewUser{Name: "User", Email: &email}, key)
				return err
			}},
			{"CreatePayee", func(key payments.Call) (err error) {
				caller := mustCaller(t, svc, user.UserID)
				payee, err = svc.CreatePayee(ctx, caller, payments.NewPayee{Name: "Payee"}, key)
				return err
			}},
			{"UpdatePayee", func(key payments.Call) error {
				_, err := svc.UpdatePayee(ctx, p.PlatformID, user.UserID.String(),
					payments.PayeeRename{PayeeID: payee.PayeeID.String(), Name: "Payee renamed"}, key)
				return err
			}},
			{"AddBankAccount", func(key payments.Call) error {
				in := newAccount(user.UserID, fmt.Sprintf("%08d", n))
				in.IsDefault = ptr(true)
				_, err := svc.AddBankAccount(ctx, p.PlatformID, in, key)
				return err
			}},
			{"AddPayeeBank", func(key payments.Call) (err error) {
				bank, err = svc.AddPayeeBank(ctx, p.PlatformID, user.UserID.String(), payments.NewPayeeBank{
					PayeeID: payee.PayeeID.String(), AccountNumber: fmt.Sprintf("%010d", n), Country: "IN",
					BankAccType: "savings", IdentifierValue: ptr("SBIN0001234")}, key)
				return err
			}},
			{"DeletePayeeBank", func(key payments.Call) error {
				return svc.DeletePayeeBank(ctx, p.PlatformID, user.UserID.String(), bank.BankID.String(), key)
			}},
			{"DeleteCard", func(key payments.Call) error {
				if card.CardID == uuid.Nil {
					card = mustCard(t, svc, user.UserID)
				}
				_, err := svc.DeleteCard(ctx, p.PlatformID, user.UserID.String(), payments.CardDeletion{CardID: card.CardID.String()}, key)
				return err
			}},
			{"CreateWebhookEndpoint", func(key payments.Call) (err error) {
				endpoint, err = svc.CreateWebhookEndpoint(ctx, p.PlatformID,
					payments.NewWebhookEndpoint{URL: fmt.Sprintf("http://127.0.0.1:9/hook-%d", n)}, key)
				return err
			}},
			{"DeleteWebhookEndpoint", func(key payments.Call) error {
				_, err := svc.DeleteWebhookEndpoint(ctx, p.PlatformID, endpoint.ID.String(), key)
				return err
			}},
		}
	}
	// keyed runs w under a key of its own, then again under the same key: the second call
	// replays the first's outcome.
	keyed := func(n int, name string, run func(key payments.Call) error) error {
		key := fmt.Sprintf("%s-%d-%s", name, n, uuid.NewString())
		idem := &payments.Idempotency{Key: key}
		if err := run(payments.WithKey(idem)); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if err := run(payments.WithKey(idem)); err != nil || !idem.Replayed {
			return fmt.Errorf("%s again under its key: replayed %t, %v", name, idem.Replayed, err)
		}
		return nil
	}

	t.Run("Alone", func(t *testing.T) {
		for _, w := range writes(0) {
			if err := keyed(0, w.name, w.run); err != nil {
				t.Fatal(err)
			}
		}
	})

	t.Run("Together", func(t *testing.T) {
		var wg sync.WaitGroup
		errs := make(chan error, 16)
		for n := 1; n <= 16; n++ {
			wg.Go(func() {
				for _, w := range writes(n) {
					if err := keyed(n, w.name, w.run); err != nil {
						errs <- fmt.Errorf("caller %d: %w", n, err)
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
	})
}
