package pgqueries

// Statements an engine sends in front of another, in one round trip, reading their
// answers itself.
const (
	// CountNewUsersSQL is CountNewUsers's statement: its arguments are the count and the
	// platform's id.
	CountNewUsersSQL = countNewUsers
	// LockUserForUpdateSQL is LockUserForUpdate's statement: its argument is the user's id.
	LockUserForUpdateSQL = lockUserForUpdate
)
