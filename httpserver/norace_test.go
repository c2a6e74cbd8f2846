//go:build !race

package httpserver

// raceDetector: the race detector is off (see race_test.go).
const raceDetector = false
