//go:build race

package httpserver

// raceDetector: the race detector is on, under which sync.Pool drops some of what it is
// given, so that allocations are not counted.
const raceDetector = true
