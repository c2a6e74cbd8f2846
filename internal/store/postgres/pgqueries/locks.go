package pgqueries

import "context"

// LockUser locks the user's row until the transaction ends (LockUserForUpdate): the
// operations take it before a default-account change.
func (a Adapter) LockUser(ctx context.Context, userID string) error {
	_, err := a.Q.LockUserForUpdate(ctx, userID)
	return err
}

// LockUserHasDefault is store.Querier's: LockUser, then UserHasDefaultAccount.
func (a Adapter) LockUserHasDefault(ctx context.Context, userID string) (bool, error) {
	if err := a.LockUser(ctx, userID); err != nil {
		return false, err
	}
	return a.Q.UserHasDefaultAccount(ctx, userID)
}

// LockUntilCommit takes the advisory lock key until the transaction ends
// (AdvisoryXactLock).
func (a Adapter) LockUntilCommit(ctx context.Context, key int64) error {
	return a.Q.AdvisoryXactLock(ctx, key)
}
