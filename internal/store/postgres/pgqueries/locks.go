package pgqueries

import "context"

// LockUser locks the user's row until the transaction ends (LockUserForUpdate): the
// operations take it before a default-account change.
func (a Adapter) LockUser(ctx context.Context, userID string) error {
	_, err := a.Q.LockUserForUpdate(ctx, userID)
	return err
}

// LockUntilCommit takes the advisory lock key until the transaction ends
// (AdvisoryXactLock).
func (a Adapter) LockUntilCommit(ctx context.Context, key int64) error {
	return a.Q.AdvisoryXactLock(ctx, key)
}
