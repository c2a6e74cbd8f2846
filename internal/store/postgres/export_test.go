package postgres

import "github.com/jackc/pgx/v5"

// OnRound makes f see each round a batch run in turns sends, until the test ends.
func OnRound(t interface{ Cleanup(func()) }, f func(*pgx.Batch)) {
	roundSent.Store(&f)
	t.Cleanup(func() { roundSent.Store(nil) })
}
