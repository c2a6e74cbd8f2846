package pgqueries

import (
	"context"

	"github.com/platform-payments/payments/queries"
)

// CreateBankAccountTakingDefault is store.Querier's: LockUserForUpdate, which holds the
// user's row until the transaction ends, ClearDefaultAccount when asked, then
// InsertBankAccountTakingDefault.
func (a Adapter) CreateBankAccountTakingDefault(ctx context.Context, p queries.CreateBankAccountParams, asked bool) (queries.BankAccount, error) {
	if _, err := a.Q.LockUserForUpdate(ctx, p.UserID); err != nil {
		return queries.BankAccount{}, err
	}
	if asked {
		if err := a.Q.ClearDefaultAccount(ctx, p.UserID); err != nil {
			return queries.BankAccount{}, err
		}
	}
	return a.InsertBankAccountTakingDefault(ctx, p, asked)
}

// InsertBankAccountTakingDefault is CreateBankAccountTakingDefault's insert alone, for an
// operation that sent the user's lock (and the clearing) before it.
func (a Adapter) InsertBankAccountTakingDefault(ctx context.Context, p queries.CreateBankAccountParams, asked bool) (queries.BankAccount, error) {
	r, err := a.Q.InsertBankAccountTakingDefault(ctx, InsertBankAccountTakingDefaultParams{
		ID: p.ID, UserID: p.UserID, NickName: p.NickName, AccountHolderName: p.AccountHolderName,
		BankName: p.BankName, AccountNumberSealed: p.AccountNumberSealed, AccountNumberIndex: p.AccountNumberIndex,
		RoutingNumber: p.RoutingNumber, BankAddress: p.BankAddress, City: p.City, State: p.State, Zip: p.Zip,
		Country: p.Country, AccountType: p.AccountType, AccountHolderAddress: p.AccountHolderAddress,
		AccountHolderCity: p.AccountHolderCity, AccountHolderState: p.AccountHolderState,
		AccountHolderZip: p.AccountHolderZip, AccountHolderCountry: p.AccountHolderCountry, Asked: asked,
		CreatedAt: p.CreatedAt,
	})
	return queries.BankAccount(r), err
}

// LockUntilCommit takes the advisory lock key until the transaction ends
// (AdvisoryXactLock).
func (a Adapter) LockUntilCommit(ctx context.Context, key int64) error {
	return a.Q.AdvisoryXactLock(ctx, key)
}
