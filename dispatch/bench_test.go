package dispatch_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/platform-payments/payments"
	"github.com/platform-payments/payments/dispatch"
	"github.com/platform-payments/payments/internal/pgtest"
)

// The figures, each beside its baseline in the same run:
//
//	go test -run '^$' -bench . -benchtime 2000x ./dispatch
//
// BenchmarkDelivery/bare is the same receiver sent the same bodies by plain HTTP posts
// from as many goroutines, no store; BenchmarkCreateUser/none is Create User on a
// platform without endpoints.

// BenchmarkDelivery: b.N events wait; the dispatcher sends them all to a receiver on
// 127.0.0.1. Reports events a second.
func BenchmarkDelivery(b *testing.B) {
	b.Run("dispatcher", func(b *testing.B) {
		var got atomic.Int64
		done := make(chan struct{})
		n := int64(b.N)
		r := newReceiver(b, func(int, http.ResponseWriter) {
			if got.Add(1) == n {
				close(done)
			}
		})
		ctx := context.Background()
		dsn, keyFile := pgtest.NewStore(b)
		svc, err := payments.Open(ctx, dsn, payments.Options{WebhookAllow: loopback, KeyFile: keyFile})
		if err != nil {
			b.Fatal(err)
		}
		defer svc.Close()
		p, _ := svc.CreatePlatform(ctx, "Acme", payments.Sandbox)
		w := world{svc: svc, platform: p.PlatformID}
		w.endpoint(b, r.URL)
		for range b.N {
			w.user(b)
		}
		b.ResetTimer()
		start := time.Now()
		runCtx, cancel := context.WithCancel(ctx)
		stopped := make(chan error, 1)
		go func() {
			stopped <- dispatch.New(svc, dispatch.Options{Allow: loopback, Exclusive: !pgtest.Enabled(), Confined: true}).Run(runCtx)
		}()
		<-done
		took := time.Since(start)
		b.StopTimer()
		cancel()
		<-stopped
		b.ReportMetric(float64(b.N)/took.Seconds(), "events/s")
	})
	b.Run("bare", func(b *testing.B) {
		r := newReceiver(b, func(int, http.ResponseWriter) {})
		body := bytes.Repeat([]byte("x"), 230)
		client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: dispatch.DefaultWorkers}}
		jobs := make(chan struct{}, b.N)
		for range b.N {
			jobs <- struct{}{}
		}
		close(jobs)
		b.ResetTimer()
		start := time.Now()
		doneAll := make(chan struct{})
		var left atomic.Int64
		left.Store(int64(dispatch.DefaultWorkers))
		for range dispatch.DefaultWorkers {
			go func() {
				for range jobs {
					resp, err := client.Post(r.URL, "application/json", bytes.NewReader(body))
					if err == nil {
						resp.Body.Close()
					}
				}
				if left.Add(-1) == 0 {
					close(doneAll)
				}
			}()
		}
		<-doneAll
		b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "events/s")
	})
}

// BenchmarkCommitToDelivery: with the dispatcher idle (each event 10ms after the last
// delivery), the time from a Create User's return to its event's arrival at the receiver.
// Reports the median and p99.
func BenchmarkCommitToDelivery(b *testing.B) {
	arrived := make(chan time.Time, 1)
	r := newReceiver(b, func(int, http.ResponseWriter) { arrived <- time.Now() })
	w := newWorld(b, dispatch.Options{Poll: time.Second})
	w.endpoint(b, r.URL)
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		time.Sleep(10 * time.Millisecond) // the dispatcher idle again: waiting, not lingering
		w.user(b)
		committed := time.Now()
		select {
		case at := <-arrived:
			lat = append(lat, at.Sub(committed))
		case <-time.After(10 * time.Second):
			b.Fatal("no delivery within 10s")
		}
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50_ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99_ms")
}

// BenchmarkCreateUser: Create User from parallel callers on a platform with one
// subscribed endpoint (the dispatcher sending to a receiver) and with none. Reports the
// deliveries still waiting at the end: a low number means the dispatcher kept pace.
func BenchmarkCreateUser(b *testing.B) {
	for _, endpoints := range []int{0, 1} {
		b.Run(fmt.Sprintf("endpoints=%d", endpoints), func(b *testing.B) {
			r := leanReceiver(b)
			w := newWorld(b, dispatch.Options{})
			if endpoints == 1 {
				w.endpoint(b, r.URL)
			}
			b.SetParallelism(8)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := w.svc.CreateUser(context.Background(), w.platform, payments.NewUser{
						Name: "Ada", Email: new(uuid.NewString() + "@example.com"),
					}); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.StopTimer()
			// A ratio is fair only if the deliveries kept pace: what still waits says so.
			n, _, err := w.svc.Outbox().PendingDeliveries(context.Background())
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(n), "pending")
		})
	}
}

// leanReceiver answers 204 to every delivery and keeps nothing: a receiver that costs
// the machine as little as one can.
func leanReceiver(tb testing.TB) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusNoContent)
	}))
	tb.Cleanup(srv.Close)
	return srv
}

// BenchmarkNoisyNeighbour: the case. Platform B's endpoint answers at once; B
// creates 20 users, alone ("alone"), or just after platform A, whose endpoint answers
// after 8 s, created 200 ("beside_slow"). Reports B's time from each Create User's
// return to its delivery's arrival (the p99 of 20 is their slowest) and how many of the
// 20 arrived within 60 s. Run once: -benchtime 1x.
func BenchmarkNoisyNeighbour(b *testing.B) {
	for _, slow := range []bool{false, true} {
		name := "alone"
		if slow {
			name = "beside_slow"
		}
		b.Run(name, func(b *testing.B) {
			var mu sync.Mutex
			arrived := map[string]time.Time{} // by the body that arrived
			got := make(chan struct{}, 100)
			rb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
				body, _ := io.ReadAll(req.Body)
				mu.Lock()
				arrived[string(body)] = time.Now()
				mu.Unlock()
				got <- struct{}{}
			}))
			b.Cleanup(rb.Close)
			w := newWorld(b, dispatch.Options{})
			if slow {
				ra := newReceiver(b, func(int, http.ResponseWriter) { time.Sleep(8 * time.Second) })
				w.endpoint(b, ra.URL)
			}
			p, err := w.svc.CreatePlatform(context.Background(), "Beta", payments.Sandbox)
			if err != nil {
				b.Fatal(err)
			}
			wb := world{svc: w.svc, platform: p.PlatformID}
			wb.endpoint(b, rb.URL)
			b.ResetTimer()
			if slow {
				for range 200 {
					w.user(b)
				}
			}
			committed := map[string]time.Time{}
			for range 20 {
				u := wb.user(b)
				committed[u.UserID.String()] = time.Now()
			}
			deadline := time.After(60 * time.Second)
			for n := 0; n < 20; n++ {
				select {
				case <-got:
				case <-deadline:
					n = 20
				}
			}
			b.StopTimer()
			mu.Lock()
			defer mu.Unlock()
			var lat []time.Duration
			for body, at := range arrived {
				for id, c := range committed {
					if strings.Contains(body, id) {
						lat = append(lat, at.Sub(c))
					}
				}
			}
			b.ReportMetric(float64(len(lat)), "B_received")
			if len(lat) == 0 {
				return
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "B_p50_ms")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "B_p99_ms")
		})
	}
}
