package payments_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/platform-payments/payments"
)

// Add Bank Account: the default account, and duplicates.

// A user has exactly one default account: the first linked, until one added with
// is_default true takes its place. Observed in the store and through Get Bank Account.
func TestAddBankAccount_Default(t *testing.T) {
	ctx := context.Background()
	path := newDSN(t)
	svc := mustOpenFile(t, path)
	db := rawDB(t, path)
	p := mustPlatform(t, svc)
	u := mustUser(t, svc, p.PlatformID, "Ada", "ada@example.com")
	if err := svc.VerifyUser(ctx, u.UserID.String()); err != nil {
		t.Fatal(err)
	}
	defaults := func(userID uuid.UUID) (n int64, id string) {
		n = queryInt(t, db, `SELECT count(*) FROM bank_accounts WHERE user_id = $1 AND is_default`, userID.String())
		db.QueryRow(`SELECT id FROM bank_accounts WHERE user_id = $1 AND is_default`, userID.String()).Scan(&id)
		return n, id
	}
	isDefault := func(id uuid.UUID) bool {
		a, err := svc.GetBankAccount(ctx, p.PlatformID, id.String())
		if err != nil {
			t.Fatal(err)
		}
		return a.IsDefault
	}
	wantDefault := func(t *testing.T, userID uuid.UUID, want uuid.UUID) {
		t.Helper()
		if n, id := defaults(userID); n != 1 || id != want.String() {
			t.Errorf("%d default accounts (%s), want exactly %s", n, id, want)
		}
	}

	first := mustAccount(t, svc, p.PlatformID, newAccount(u.UserID, "10000001"))
	second := mustAccount(t, svc, p.PlatformID, newAccount(u.UserID, "10000002"))
	notDefault := newAccount(u.UserID, "10000003")
	notDefault.IsDefault = ptr(false)
	third := mustAccount(t, svc, p.PlatformID, notDefault)
	t.Run("OKFirstIsDefault", func(t *testing.T) {
		if !first.IsDefault || second.IsDefault || third.IsDefault {
			t.Errorf("is_default %v, %v, %v; want true, false, false", first.IsDefault, second.IsDefault, third.IsDefault)
		}
		wantDefault(t, u.UserID, first.AccountID)
		if !isDefault(first.AccountID) || isDefault(second.AccountID) {
			t.Error("Get Bank Account disagrees")
		}
	})

	moving := newAccount(u.UserID, "10000004")
	moving.IsDefault = ptr(true)
	fourth := mustAccount(t, svc, p.PlatformID, moving)
	t.Run("OKIsDefaultMovesIt", func(t *testing.T) {
		if !fourth.IsDefault {
			t.Error("the account added with is_default true is not the default")
		}
		wantDefault(t, u.UserID, fourth.AccountID)
		if isDefault(first.AccountID) || !isDefault(fourth.AccountID) {
			t.Error("Get Bank Account disagrees: the previous default is still default")
		}
	})

	t.Run("OKConflictKeepsDefault", func(t *testing.T) {
		// A refused account (409) takes nothing with it: the default stays where it was.
		dup := newAccount(u.UserID, "10000001")
		dup.IsDefault = ptr(true)
		_, err := svc.AddBankAccount(ctx, p.PlatformID, dup)
		errorOf(t, err, payments.CodeConflict)
		wantDefault(t, u.UserID, fourth.AccountID)
	})

	t.Run("OKFirstIsDefaultEvenIfFalse", func(t *testing.T) {
		bob := mustUser(t, svc, p.PlatformID, "Bob", "bob@example.com")
		in := newAccount(bob.UserID, "10000001")
		in.IsDefault = ptr(false)
		a := mustAccount(t, svc, p.PlatformID, in)
		if !a.IsDefault {
			t.Error("a user's first account is not the default")
		}
		wantDefault(t, bob.UserID, a.AccountID)
		wantDefault(t, u.UserID, fourth.AccountID) // another user's default is untouched
	})

	t.Run("OKIsDefaultNullIsNotGiven", func(t *testing.T) {
		// null is is_default left out: the first account is the default, a later one not.
		dan := mustUser(t, svc, p.PlatformID, "Dan", "dan@example.com")
		withNull := func(number string) payments.NewBankAccount {
			return decoded[payments.NewBankAccount](t, svc, "accounts_add", body(`{"user_id":"`+dan.UserID.String()+
				`","bank_name":"Chase","account_number":"`+number+`","routing_number":"021000021",
				"account_type":"PERSONAL_CHECKING","is_default":null}`))
		}
		first := mustAccount(t, svc, p.PlatformID, withNull("30000001"))
		second := mustAccount(t, svc, p.PlatformID, withNull("30000002"))
		if !first.IsDefault || second.IsDefault {
			t.Errorf("is_default %v, %v; want true, false", first.IsDefault, second.IsDefault)
		}
		wantDefault(t, dan.UserID, first.AccountID)
	})

	t.Run("OKConcurrent", func(t *testing.T) {
		carol := mustUser(t, svc, p.PlatformID, "Carol", "carol@example.com")
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for i := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				in := newAccount(carol.UserID, fmt.Sprintf("2000000%d", i))
				in.IsDefault = ptr(i%2 == 0)
				_, err := svc.AddBankAccount(ctx, p.PlatformID, in)
				errs <- err
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Error(err)
			}
		}
		if n, _ := defaults(carol.UserID); n != 1 {
			t.Errorf("%d default accounts, want 1", n)
		}
	})
}

func TestAddBankAccount_Conflict(t *testing.T) {
	ctx := context.Background()
	path := newDSN(t)
	svc := mustOpenFile(t, path)
	db := rawDB(t, path)
	p := mustPlatform(t, svc)
	ada := mustUser(t, svc, p.PlatformID, "Ada", "ada@example.com")
	bob := mustUser(t, svc, p.PlatformID, "Bob", "bob@example.com")
	mustAccount(t, svc, p.PlatformID, newAccount(ada.UserID, "123456789"))

	t.Run("ErrSameNumbersTwice", func(t *testing.T) {
		dup := newAccount(ada.UserID, "123456789")
		dup.BankName, dup.AccountType = "Another name", "BUSINESS_CHECKING" // the numbers make the account
		_, err := svc.AddBankAccount(ctx, p.PlatformID, dup)
		e := errorOf(t, err, payments.CodeConflict)
		if strings.Contains(e.Message, "123456789") {
			t.Errorf("message %q shows the account number", e.Message)
		}
		if n := queryInt(t, db, `SELECT count(*) FROM bank_accounts WHERE user_id = $1`, ada.UserID.String()); n != 1 {
			t.Errorf("%d accounts, want 1", n)
		}
	})
	t.Run("OKSameNumbersOtherUser", func(t *testing.T) {
		mustAccount(t, svc, p.PlatformID, newAccount(bob.UserID, "123456789"))
	})
	t.Run("OKSameNumbersOtherPlatformsUser", func(t *testing.T) {
		other := mustPlatform(t, svc)
		eve := mustUser(t, svc, other.PlatformID, "Eve", "eve@example.com")
		mustAccount(t, svc, other.PlatformID, newAccount(eve.UserID, "123456789"))
	})
	t.Run("OKSameAccountOtherRouting", func(t *testing.T) {
		in := newAccount(ada.UserID, "123456789")
		in.RoutingNumber = "011000015"
		mustAccount(t, svc, p.PlatformID, in)
	})
	t.Run("OKSameRoutingOtherAccount", func(t *testing.T) {
		mustAccount(t, svc, p.PlatformID, newAccount(ada.UserID, "1234567890"))
	})
}
