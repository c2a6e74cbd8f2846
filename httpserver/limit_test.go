package httpserver_test

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/platform-payments/payments/httpserver"
)

// TestTableBound: however many keys spend tokens, a table holds at most its max buckets;
// full buckets are forgotten first, so the keys still spending keep their state.
func TestTableBound(t *testing.T) {
	now := time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)
	tests := []struct {
		name    string
		max     int
		keys    int           // distinct keys, each taking one token
		between time.Duration // clock step between two keys
	}{
		{"flood at one instant", 64, 10_000, 0},
		{"flood over time", 64, 10_000, time.Millisecond},
		{"fewer keys than max", 64, 40, 0},
		{"max 1", 1, 100, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tab := httpserver.NewTable(1, 2, tt.max)
			clock := now
			for i := range tt.keys {
				if ok, _ := tab.Take(fmt.Sprint("key", i), clock); !ok {
					t.Fatalf("key %d: a new key has a full bucket", i)
				}
				if n := tab.Size(); n > tt.max {
					t.Fatalf("after %d keys: %d buckets, max %d", i+1, n, tt.max)
				}
				clock = clock.Add(tt.between)
			}
		})
	}
}

// TestTableForgetsFullFirst: at the bound, buckets that filled up again make room before
// a bucket still spending loses its state.
func TestTableForgetsFullFirst(t *testing.T) {
	now := time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)
	tab := httpserver.NewTable(1, 2, 8)
	// "hot" spends its whole burst; 7 others take a token each.
	tab.Take("hot", now)
	tab.Take("hot", now)
	for i := range 7 {
		tab.Take(fmt.Sprint("cold", i), now)
	}
	// A second later the cold buckets are full again (1 of 2 plus 1 a second); "hot" holds 1.
	later := now.Add(time.Second)
	tab.Take("new", later)
	if n := tab.Size(); n != 2 {
		t.Errorf("%d buckets after the sweep, want 2 (hot and new)", n)
	}
	if got := tab.Tokens("hot", later); got != 1 {
		t.Errorf("hot holds %v tokens, want 1: its state was kept", got)
	}
}

// BenchmarkLimits: what the limits cost. Through the handler, a signed Get User with the
// limits on (a rate too high to refuse anything: the bucket is taken and the headers
// written) beside the same with them off; a wrong signature with the failure throttle on
// (counted, under a budget too large to refuse) and off; and a request refused before
// authentication. Then the table alone: one key, new keys all the time (sweeping at the
// bound), and one key per goroutine in parallel.
//
//	go test -run '^$' -bench Limits -benchmem ./httpserver
func BenchmarkLimits(b *testing.B) {
	generous := httpserver.Options{RateLimit: 1e9, AuthFailures: 1 << 30}
	for _, bc := range []struct {
		name   string
		opts   httpserver.Options
		secret func(l *limited) string
		status int
	}{
		{"handler/ok/limits-on", generous, func(l *limited) string { return l.acme.Secret }, 200},
		{"handler/ok/limits-off", unlimited, func(l *limited) string { return l.acme.Secret }, 200},
		{"handler/wrong-signature/throttle-on", generous, func(*limited) string { return "guess" }, 401},
		{"handler/wrong-signature/throttle-off", unlimited, func(*limited) string { return "guess" }, 401},
		{"handler/refused", httpserver.Options{AuthFailures: 1}, func(*limited) string { return "guess" }, 429},
	} {
		b.Run(bc.name, func(b *testing.B) {
			l := newLimited(b, bc.opts)
			id, secret := l.acme.PlatformID.String(), bc.secret(l)
			l.get(attacker, id, secret) // spends the one failure of "refused"
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if rec := l.get(attacker, id, secret); rec.Code != bc.status {
					b.Fatalf("%d %s", rec.Code, rec.Body)
				}
			}
		})
	}

	now := time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)
	b.Run("table/one-key", func(b *testing.B) {
		tab := httpserver.NewTable(1e9, 1<<30, httpserver.DefaultTrackedKeys)
		b.ReportAllocs()
		for range b.N {
			tab.Take("platform 0190a4e2-0000-7000-8000-000000000000", now)
		}
	})
	b.Run("table/new-keys", func(b *testing.B) {
		tab := httpserver.NewTable(1, 2, httpserver.DefaultTrackedKeys)
		keys := make([]string, 1<<20)
		for i := range keys {
			keys[i] = fmt.Sprintf("203.0.%d.%d", i>>8, i&255)
		}
		b.ReportAllocs()
		b.ResetTimer()
		for i := range b.N {
			tab.Take(keys[i%len(keys)], now)
		}
		if n := tab.Size(); n > httpserver.DefaultTrackedKeys {
			b.Fatalf("%d buckets", n)
		}
	})
	b.Run("table/parallel", func(b *testing.B) {
		tab := httpserver.NewTable(1e9, 1<<30, httpserver.DefaultTrackedKeys)
		var next atomic.Int64
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			key := fmt.Sprint("platform ", next.Add(1))
			for pb.Next() {
				tab.Take(key, now)
			}
		})
	})
}
