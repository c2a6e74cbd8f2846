package groupcommit

import "time"

// SetSleep makes committers wait for gathering (Gather) with f instead of time.Sleep,
// until the returned restore is called. Call it before starting the committer, and restore
// once it is stopped.
func SetSleep(f func(time.Duration)) (restore func()) {
	old := sleep
	sleep = f
	return func() { sleep = old }
}
