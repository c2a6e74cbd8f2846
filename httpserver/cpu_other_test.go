//go:build !unix

package httpserver_test

import "time"

// processCPU is not measured here: the benchmarks report no cpu-ns/op.
func processCPU() time.Duration { return 0 }
