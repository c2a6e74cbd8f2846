package payments_test

import (
	"context"
	"fmt"
	"reflect"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"

	"github.com/platform-payments/payments"
	"github.com/platform-payments/payments/internal/cpuclock"
	"github.com/platform-payments/payments/internal/pgtest"
)

// The plain versions BenchmarkDevices measures the devices against are correct versions:
// with each device off, the operations it serves answer as with every device on.
func TestPlainDevices(t *testing.T) {
	for _, device := range []string{"groupcommit", "gather", "pipeline", "batchedcreates", "usercache"} {
		t.Run(device, func(t *testing.T) {
			svc := mustOpen(t, payments.Plain(payments.Options{}, device))
			p := mustPlatform(t, svc)
			var wg sync.WaitGroup
			users := make([]payments.User, 8)
			for i := range users {
				wg.Go(func() { users[i] = mustUser(t, svc, p.PlatformID, "Plain", fmt.Sprintf("plain%d@example.com", i)) })
			}
			wg.Wait()
			seen := map[int64]bool{}
			for i, u := range users {
				seen[u.PwID] = true
				got, err := svc.GetUser(context.Background(), p.PlatformID, u.UserID.String())
				if err != nil || !reflect.DeepEqual(got, u) {
					t.Fatalf("user %d: %+v, %v; want %+v", i, got, err, u)
				}
				a := mustAccount(t, svc, p.PlatformID, newAccount(u.UserID, fmt.Sprintf("%09d", 200000000+i)))
				if !a.IsDefault {
					t.Errorf("user %d's first account is not its default", i)
				}
			}
			if len(seen) != len(users) {
				t.Errorf("pw_id: %d distinct of %d users", len(seen), len(users))
			}
		})
	}
}

// BenchmarkDevices measures what each speed device of the write and read paths pays: each
// workload runs on a new database with every device on ("all"), then with one device
// turned off for its plain version ("plain=DEVICE"), side by side in one run, so that a
// noisy machine weighs on both alike. docs/architecture.md gives the figures. Besides
// ns/op, cpu-ns/op is this process's CPU per operation (on PostgreSQL the server's own is
// not in it). Run it with a fixed count of operations and a few rounds, which interleave:
//
//	go test -run '^$' -bench Devices -benchtime 4000x -count 3 .
//	PAYMENTS_TEST_POSTGRES=... go test -run '^$' -bench Devices -benchtime 4000x -count 3 .
func BenchmarkDevices(b *testing.B) {
	pg := pgtest.Enabled()
	engine := func(sqlite, postgres string) string {
		if pg {
			return postgres
		}
		return sqlite
	}
	workloads := []struct {
		name    string
		clients int
		plain   []string // the devices turned off in turn
		setUp   func(b *testing.B, svc *payments.Service) func(i int) error
	}{
		// Create User from 50 clients on one platform: the committer's batches, a
		// platform's users written together.
		{"create/one-platform", 50, []string{"groupcommit", engine("gather", "pipeline"), engine("", "batchedcreates")}, createUsers(1)},
		// From 48 clients over 8 platforms: batches hold several platforms' creates.
		{"create/8-platforms", 48, []string{"groupcommit", engine("", "batchedcreates")}, createUsers(8)},
		// Add Bank Account from 16 clients, each to users of its own: the user cache
		// (a statement less), the round trips in front of the insert.
		{"add-account", 16, []string{"groupcommit", engine("", "pipeline"), "usercache"}, addAccounts},
		// Get User from 16 clients, read through the library: the user cache.
		{"get-user", 16, []string{"usercache"}, getUsers},
	}
	for _, w := range workloads {
		devices := []string{""}
		for _, d := range w.plain {
			if d != "" { // a device of the other engine
				devices = append(devices, d)
			}
		}
		for _, device := range devices {
			name := w.name + "/all"
			if device != "" {
				name = w.name + "/plain=" + device
			}
			b.Run(name, func(b *testing.B) {
				svc := mustOpen(b, payments.Plain(payments.Options{}, device))
				op := w.setUp(b, svc)
				var next atomic.Int64
				b.SetParallelism((w.clients + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
				b.ReportAllocs()
				cpu := cpuclock.Process()
				b.ResetTimer()
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if err := op(int(next.Add(1) - 1)); err != nil {
							b.Error(err)
							return
						}
					}
				})
				b.StopTimer()
				if spent := cpuclock.Process() - cpu; spent > 0 {
					b.ReportMetric(float64(spent.Nanoseconds())/float64(b.N), "cpu-ns/op")
				}
			})
		}
	}
}

// createUsers returns a workload creating users, over so many platforms in turn.
func createUsers(platforms int) func(b *testing.B, svc *payments.Service) func(i int) error {
	return func(b *testing.B, svc *payments.Service) func(i int) error {
		ids := make([]uuid.UUID, platforms)
		for k := range ids {
			ids[k] = mustPlatform(b, svc).PlatformID
		}
		in := make([]payments.NewUser, b.N)
		for i := range in {
			email := fmt.Sprintf("device%d@example.com", i)
			in[i] = payments.NewUser{Name: "Bench User", Email: &email}
		}
		return func(i int) error {
			_, err := svc.CreateUser(context.Background(), ids[i%platforms], in[i])
			return err
		}
	}
}

// benchUsersOf returns the users the reading and account workloads use, created before the
// clock starts: one for every 8 operations, at least 64.
func benchUsersOf(b *testing.B, svc *payments.Service, platformID uuid.UUID) []payments.User {
	users := make([]payments.User, max(64, b.N/8))
	var wg sync.WaitGroup
	var failed atomic.Value
	for w := range 16 {
		wg.Go(func() {
			for i := w; i < len(users); i += 16 {
				u, err := svc.CreateUser(context.Background(), platformID, payments.NewUser{Name: "Bench User", Email: ptr(fmt.Sprintf("u%d@example.com", i))})
				if err != nil {
					failed.Store(err)
					return
				}
				users[i] = u
			}
		})
	}
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		b.Fatal(err)
	}
	return users
}

// addAccounts is a workload linking bank accounts, each operation to a user of its own
// among benchUsersOf's, in turn.
func addAccounts(b *testing.B, svc *payments.Service) func(i int) error {
	p := mustPlatform(b, svc)
	users := benchUsersOf(b, svc, p.PlatformID)
	return func(i int) error {
		u := users[i%len(users)]
		_, err := svc.AddBankAccount(context.Background(), p.PlatformID, newAccount(u.UserID, fmt.Sprintf("%09d", 100000000+i)))
		return err
	}
}

// getUsers is a workload reading users through the library, each read a user in turn.
func getUsers(b *testing.B, svc *payments.Service) func(i int) error {
	p := mustPlatform(b, svc)
	users := benchUsersOf(b, svc, p.PlatformID)
	for _, u := range users { // read once: a cache holds them from here on
		if _, err := svc.GetUser(context.Background(), p.PlatformID, u.UserID.String()); err != nil {
			b.Fatal(err)
		}
	}
	return func(i int) error {
		_, err := svc.GetUser(context.Background(), p.PlatformID, users[i%len(users)].UserID.String())
		return err
	}
}
