package payments_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/platform-payments/payments"
)

// Key rotation: interrupted and resumed, while another service keeps writing, and what a
// service still running on the retired key can no longer do.

// sealedWorld is what a test stored, to check that every value is still there.
type sealedWorld struct {
	mu         sync.Mutex
	platforms  map[uuid.UUID]string // id -> secret
	accounts   map[string]string    // account id -> number
	owners     map[string]uuid.UUID // account id -> platform
	users      map[string]uuid.UUID // account id -> user
	payeeBanks map[string]string    // bank id -> number
}

func newSealedWorld() *sealedWorld {
	return &sealedWorld{platforms: map[uuid.UUID]string{}, accounts: map[string]string{}, owners: map[string]uuid.UUID{},
		users: map[string]uuid.UUID{}, payeeBanks: map[string]string{}}
}

// add creates a platform with a verified user, two linked accounts and a payee bank.
func (w *sealedWorld) add(ctx context.Context, svc *payments.Service, n int) error {
	p, err := svc.CreatePlatform(ctx, "Rotating", "")
	if err != nil {
		return err
	}
	email := fmt.Sprintf("user%d@example.com", n)
	u, err := svc.CreateUser(ctx, p.PlatformID, payments.NewUser{Name: "User", Email: &email})
	if err != nil {
		return err
	}
	if err := svc.VerifyUser(ctx, u.UserID.String()); err != nil {
		return err
	}
	accounts := map[string]string{}
	for j := range 2 {
		number := fmt.Sprintf("61%06d%d%04d", n, j, 1000+n)
		a, err := svc.AddBankAccount(ctx, p.PlatformID, newAccount(u.UserID, number))
		if err != nil {
			return err
		}
		accounts[a.AccountID.String()] = number
	}
	payee, err := svc.CreatePayee(ctx, payments.Caller{UserID: u.UserID, PlatformID: p.PlatformID}, payments.NewPayee{Name: "Payee"})
	if err != nil {
		return err
	}
	number := fmt.Sprintf("72%06d%04d", n, 2000+n)
	b, err := svc.AddPayeeBank(ctx, p.PlatformID, u.UserID.String(), payments.NewPayeeBank{
		PayeeID: payee.PayeeID.String(), AccountNumber: number, Country: "PH", BankAccType: "savings"})
	if err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.platforms[p.PlatformID] = p.Secret
	for id, number := range accounts {
		w.accounts[id], w.owners[id], w.users[id] = number, p.PlatformID, u.UserID
	}
	w.payeeBanks[b.BankID.String()] = number
	return nil
}

// check proves that svc reads back every value of the world, and that every linked
// account is still a duplicate of itself.
func (w *sealedWorld) check(t *testing.T, svc *payments.Service, path string) {
	t.Helper()
	ctx := context.Background()
	for id, secret := range w.platforms {
		authenticates(t, svc, id, secret)
	}
	db := rawDB(t, path)
	for id, number := range w.accounts {
		got, err := svc.GetBankAccount(ctx, w.owners[id], id)
		if err != nil || got.AccountNumber != number[len(number)-4:] {
			t.Errorf("account %s: %+v, %v", id, got, err)
		}
		var sealed string
		if err := db.QueryRow(`SELECT account_number_sealed FROM bank_accounts WHERE id = $1`, id).Scan(&sealed); err != nil {
			t.Fatal(err)
		}
		if plain, err := svc.Unseal(sealed, payments.BankAccountNumberAAD(id)); err != nil || plain != number {
			t.Errorf("account %s opens to %q, %v; want %q", id, plain, err, number)
		}
		if _, err := svc.AddBankAccount(ctx, w.owners[id], newAccount(w.users[id], number)); payments.ErrorCode(err) != payments.CodeConflict {
			t.Errorf("account %s linked again: %v, want a conflict", id, err)
		}
	}
	for id, number := range w.payeeBanks {
		var sealed string
		if err := db.QueryRow(`SELECT account_number_sealed FROM payee_banks WHERE id = $1`, id).Scan(&sealed); err != nil {
			t.Fatal(err)
		}
		if plain, err := svc.Unseal(sealed, payments.PayeeBankNumberAAD(id)); err != nil || plain != number {
			t.Errorf("payee bank %s opens to %q, %v; want %q", id, plain, err, number)
		}
	}
}

// keyValues returns each data key's id with its count of values and whether it is retired.
func keyValues(t *testing.T, svc *payments.Service) map[string]string {
	t.Helper()
	keys, err := svc.DataKeys().List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, k := range keys {
		out[k.KeyID] = fmt.Sprintf("%d values, retired %v", k.Values, k.RetiredAt != nil)
	}
	return out
}

func TestRotateKeys(t *testing.T) {
	ctx := context.Background()
	path := newDSN(t)
	oldKey, newKey := payments.NewDataKey(), payments.NewDataKey()
	both := payments.Options{DataKeys: []payments.DataKey{newKey, oldKey}}

	// A service on the old key alone stores a few of everything, and keeps running.
	stale := mustOpenFile(t, path, payments.Options{DataKeys: []payments.DataKey{oldKey}})
	w := newSealedWorld()
	for i := range 5 {
		if err := w.add(ctx, stale, i); err != nil {
			t.Fatal(err)
		}
	}
	// 5 platform secrets, 10 linked and 5 payee account numbers, the blind-index key.
	const before = 5 + 10 + 5 + 1

	// Step 1: a server starts with the new key first and the old one: it registers the new
	// key, seals under it and opens values of either.
	server := mustOpenFile(t, path, both)
	if err := w.add(ctx, server, 100); err != nil {
		t.Fatal(err)
	}
	if got, want := keyValues(t, server), map[string]string{
		oldKey.ID(): fmt.Sprintf("%d values, retired false", before),
		newKey.ID(): "4 values, retired false",
	}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("keys %v, want %v", got, want)
	}
	w.check(t, server, path)

	t.Run("ErrOnlyOneKeyMidway", func(t *testing.T) {
		for _, k := range []payments.DataKey{oldKey, newKey} {
			_, err := payments.Open(ctx, path, payments.Options{DataKeys: []payments.DataKey{k}})
			if !errors.Is(err, payments.ErrMissingDataKey) {
				t.Errorf("open with %v alone: %v, want ErrMissingDataKey", k, err)
			}
		}
	})

	// Step 2: the rotation, interrupted after its first batches...
	rotator := mustOpenFile(t, path, both)
	stop, cancel := context.WithCancel(ctx)
	_, err := rotator.DataKeys().Rotate(stop, payments.RotateOptions{BatchSize: 2, Progress: func(_ string, resealed int) {
		if resealed >= 3 {
			cancel()
		}
	}})
	cancel()
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted rotation: %v", err)
	}
	if got := keyValues(t, server); got[oldKey.ID()] == fmt.Sprintf("%d values, retired false", before) || got[oldKey.ID()] == "0 values, retired false" {
		t.Errorf("after the interruption: %v, want some values moved and some not", got)
	}
	w.check(t, server, path)

	// ...then run again to the end, while the server keeps writing: each batch waits for
	// one more of the server's writes, and each write for a batch to take it, so that they
	// interleave. (A server writing flat out with no pause, as this loop did when its writes
	// did not wait, holds the SQLite file so often that the rotation's batches wait out
	// busy timeouts: 15 s for these few rows, to the same end.)
	var writes sync.WaitGroup
	done := make(chan struct{})
	wrote := make(chan struct{}) // a write waits for a batch to take it: one each
	writeErrs := make(chan error, 1)
	writes.Add(1)
	go func() {
		defer writes.Done()
		for i := 200; ; i++ {
			select {
			case <-done:
				return
			default:
			}
			if err := w.add(ctx, server, i); err != nil {
				writeErrs <- err
				return
			}
			select {
			case wrote <- struct{}{}:
			case <-done: // the rotation ended with more writes unread than wrote holds
				return
			}
		}
	}()
	batches := 0
	rot, err := rotator.DataKeys().Rotate(ctx, payments.RotateOptions{BatchSize: 2, Progress: func(string, int) {
		batches++
		select {
		case <-wrote:
		case <-time.After(10 * time.Second):
		}
	}})
	close(done)
	writes.Wait()
	close(writeErrs)
	if err := <-writeErrs; err != nil {
		t.Fatalf("a write during the rotation: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if rot.KeyID != newKey.ID() || !slices.Equal(rot.Retired, []string{oldKey.ID()}) || rot.Resealed == 0 || rot.Resealed > before {
		t.Errorf("rotation %+v, want key %s, %s retired, at most %d values resealed", rot, newKey.ID(), oldKey.ID(), before)
	}
	if during := len(w.platforms) - 6; during < batches {
		t.Errorf("%d batches but %d writes of the server during the rotation", batches, during)
	}

	// Step 3: the old key is dropped. Nothing was lost.
	t.Run("NothingLost", func(t *testing.T) {
		fresh := mustOpenFile(t, path, payments.Options{DataKeys: []payments.DataKey{newKey}})
		w.check(t, fresh, path)
		got := keyValues(t, fresh)
		if got[oldKey.ID()] != "0 values, retired true" || len(got) != 2 {
			t.Errorf("keys %v, want the old key retired with no values", got)
		}
	})
	t.Run("ErrRetiredKey", func(t *testing.T) {
		_, err := payments.Open(ctx, path, payments.Options{DataKeys: []payments.DataKey{oldKey}})
		if !errors.Is(err, payments.ErrRetiredDataKey) {
			t.Errorf("open with the retired key: %v, want ErrRetiredDataKey", err)
		}
		// Still given as an older key, it does no harm.
		mustOpenFile(t, path, both)
	})
	t.Run("StaleServiceWritesNothing", func(t *testing.T) {
		n := queryInt(t, rawDB(t, path), `SELECT count(*) FROM platforms`)
		if _, err := stale.CreatePlatform(ctx, "Too late", ""); err == nil {
			t.Error("a service on the retired key stored a platform secret no current key can open")
		}
		if after := queryInt(t, rawDB(t, path), `SELECT count(*) FROM platforms`); after != n {
			t.Errorf("%d platforms, then %d", n, after)
		}
	})
	t.Run("AgainDoesNothing", func(t *testing.T) {
		again, err := rotator.DataKeys().Rotate(ctx, payments.RotateOptions{})
		if err != nil || again.Resealed != 0 || len(again.Retired) != 0 {
			t.Errorf("rotation again: %+v, %v", again, err)
		}
	})
}
