package postgres

// OnRoundTrip makes f see the statements of each round trip a batch's transaction makes,
// until the test ends.
func OnRoundTrip(t interface{ Cleanup(func()) }, f func(statements []string)) {
	sent.Store(&f)
	t.Cleanup(func() { sent.Store(nil) })
}
