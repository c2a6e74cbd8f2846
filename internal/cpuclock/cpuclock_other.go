//go:build !unix

package cpuclock

import "time"

// Process is not measured here: it returns zero, and benchmarks report no cpu-ns/op.
func Process() time.Duration { return 0 }
