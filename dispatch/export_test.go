package dispatch

import "time"

// UserAgent is userAgent, for the tests.
var UserAgent = userAgent

// FreshScrapes makes every scrape of d's metrics wait for the database's answer (up to
// 10 s), so that a test sees the figures its changes made.
func FreshScrapes(d *Dispatcher) { d.pending.SetWait(10 * time.Second) }
