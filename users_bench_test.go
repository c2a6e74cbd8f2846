package payments_test

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/platform-payments/payments"
)

// BenchmarkCreateUser is Create User through the library on a new database: one caller
// at a time (serial: each write is a batch of its own, so the batch's own costs are the
// operation's), and 50 at once (parallel: batches of many, as a loaded server has them).
// B/op is what the write path allocates per user; httpserver's benchmark of the same name
// measures it on a store of 100,000 users and through the handler.
//
//	go test -run '^$' -bench CreateUser -benchmem .
func BenchmarkCreateUser(b *testing.B) {
	ctx := context.Background()
	svc := mustOpen(b)
	p := mustPlatform(b, svc)
	var created atomic.Int64 // across the sub-benchmarks and their runs: every email is new
	// users returns n new users, made before the clock starts.
	users := func(n int) []payments.NewUser {
		out := make([]payments.NewUser, n)
		for i := range out {
			email := fmt.Sprintf("bench%d@example.com", created.Add(1))
			out[i] = payments.NewUser{Name: "Bench User", Email: &email}
		}
		return out
	}

	b.Run("serial", func(b *testing.B) {
		in := users(b.N)
		b.ReportAllocs()
		b.ResetTimer()
		for i := range b.N {
			if _, err := svc.CreateUser(ctx, p.PlatformID, in[i]); err != nil {
				b.Fatal(err)
			}
		}
	})

	b.Run("parallel", func(b *testing.B) {
		in := users(b.N)
		var next atomic.Int64
		b.SetParallelism((50 + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
		b.ReportAllocs()
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := svc.CreateUser(ctx, p.PlatformID, in[next.Add(1)-1]); err != nil {
					b.Error(err)
				}
			}
		})
	})
}
