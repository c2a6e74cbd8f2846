package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/platform-payments/payments"
	"github.com/platform-payments/payments/internal/pgtest"
)

var multiFor = flag.Duration("multi-instance-for", 30*time.Second, "how long TestMultiInstance's clients run (-short: 5s)")

// TestMultiInstance runs three paymentsd serve processes on one PostgreSQL database (or
// through the pooler of $PAYMENTS_TEST_PGBOUNCER) under 32 clients (faultRun); two thirds
// of the way through, one instance is killed (SIGKILL) under that load; at five sixths, a
// new one starts, and takes its share at once, on cold caches.
func TestMultiInstance(t *testing.T) {
	if !pgtest.Enabled() {
		t.Skipf("needs PostgreSQL: set $%s", pgtest.Env)
	}
	faultRun(t, *multiFor, 3, 2, 5.0/6)
}

// TestInstanceRestart runs one paymentsd serve process on the engine of the tests (a
// SQLite file, or PostgreSQL when $PAYMENTS_TEST_POSTGRES is set) under 32 clients
// (faultRun); two thirds of the way through, it is killed (SIGKILL) under that load and
// started again at once on the same database, as a supervisor would.
func TestInstanceRestart(t *testing.T) {
	faultRun(t, min(*multiFor, 10*time.Second), 1, 0, 2.0/3)
}

// faultRun starts n paymentsd serve processes on one database (the tests' engine) and 32
// clients, each sending its requests to the live instances in turn, through every write
// that takes an Idempotency-Key: creating users and payees, linking bank accounts (asking
// for the default at random), renaming payees, adding and deleting payee banks, deleting
// cards, creating and deleting webhook endpoints. Each write carries a key of its own,
// and a request whose answer was lost is sent again under its key (to another instance,
// or once one is up again), as a client should. Two thirds of the way through, instance
// kill is killed (SIGKILL) under that load, and another one starts at the fraction restart
// of the load's length, run (-short: 5 s).
//
// Afterwards: no answer was a 5xx (the database stays up throughout, so not even a 503),
// every acknowledged object is in the database (and every acknowledged deletion
// deleted), each platform's pw_id runs 1..N without a gap, each user with accounts has
// exactly one default (the one its last acknowledged request made so, when no other
// client's request could have come later), and List Users' totalRecords is the number of
// users in the database. Every event of those changes reaches the platform's webhook
// endpoint at least once, the instances sharing the deliveries; the duplicates
// (deliveries the killed instance made and did not record) are counted.
func faultRun(t *testing.T, run time.Duration, n, kill int, restart float64) {
	if testing.Short() {
		run = 5 * time.Second
	}
	restartAt := time.Duration(float64(run) * restart)
	ctx := context.Background()
	dsn := newDSN(t)
	keyFile := pgtest.KeyFile(dsn)

	// The fixtures only administration commands make, through the library on the same
	// database: a fourth instance of a kind.
	admin, err := payments.Open(ctx, dsn, payments.Options{KeyFile: keyFile,
		WebhookAllow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	platform, err := admin.CreatePlatform(ctx, "Acme", payments.Sandbox)
	if err != nil {
		t.Fatal(err)
	}
	hooks := newHookReceiver(t)
	endpoint, err := admin.CreateWebhookEndpoint(ctx, platform.PlatformID, payments.NewWebhookEndpoint{URL: hooks.URL + "/hook"})
	if err != nil {
		t.Fatal(err)
	}
	hooks.secret = endpoint.Secret

	// paymentsd is this test binary under that name (TestMain's testscript.Main).
	bin := filepath.Join(t.TempDir(), "paymentsd")
	if err := os.Symlink(os.Args[0], bin); err != nil {
		t.Fatal(err)
	}
	servers := &fleet{}
	start := func(i int) *instance {
		srv := startInstance(t, bin, dsn, keyFile, i, "-webhook-allow-cidr", "127.0.0.0/8", "-webhook-timeout", "2s")
		servers.add(srv)
		return srv
	}
	for i := range n {
		start(i)
	}

	const clients = 32
	shared := &recentUsers{}
	var (
		mu       sync.Mutex
		acked    world
		lost     int // requests answered by no status (the killed instance) or by a 4xx
		failures []string
	)
	acked.init()
	fail := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		if len(failures) < 20 {
			failures = append(failures, fmt.Sprintf(format, args...))
		}
	}
	began := time.Now()
	deadline := began.Add(run)
	restarted := make(chan struct{})
	go func() {
		defer close(restarted)
		time.Sleep(time.Until(began.Add(run * 2 / 3)))
		servers.at(kill).kill()
		time.Sleep(time.Until(began.Add(restartAt)))
		start(n)
	}()

	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			cl := &client{http: &http.Client{Timeout: 30 * time.Second}, servers: servers, at: c,
				platform: platform, id: c, admin: admin, shared: shared, spare: hooks.URL + "/spare"}
			mine, err := cl.setUp(ctx)
			if err != nil {
				fail("client %d: set-up: %v", c, err)
				return
			}
			shared.add(cl.users[0])
			mu.Lock()
			acked.add(mine)
			mu.Unlock()
			for n := 0; time.Now().Before(deadline); n++ {
				// On an error, got holds only the users the request may have changed
				// unseen: one whose every try was lost may have committed.
				got, err := cl.step(ctx, n)
				var fault *serverFault
				if errors.As(err, &fault) {
					fail("client %d: %v", c, err)
				}
				mu.Lock()
				if err != nil && fault == nil {
					lost++
				}
				acked.add(got)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	<-restarted
	for _, f := range failures {
		t.Error(f)
	}
	var retried, restartedServed int64
	for _, srv := range servers.all() {
		retried += srv.retried.Load()
	}
	restartedServed = servers.at(n).served.Load()
	t.Logf("%s on %d instance(s) (one killed at %s, one started at %s, which answered %d requests): "+
		"%d users, %d bank accounts, %d payee banks (%d deleted), %d payee renames, %d cards deleted, "+
		"%d webhook endpoints created and deleted acknowledged; %d requests sent again under their key, "+
		"%d failed (4xx or lost), %d users changed unseen or by several clients at once",
		run, n, run*2/3, restartAt, restartedServed, len(acked.users), len(acked.accounts), len(acked.payeeBanks),
		len(acked.deletedBanks), acked.renames, len(acked.deletedCards), len(acked.deletedEndpoints),
		retried, lost, len(acked.uncertain))
	if len(acked.accounts) == 0 || len(acked.payeeBanks) == 0 || len(acked.deletedBanks) == 0 || acked.renames == 0 ||
		len(acked.deletedCards) == 0 || len(acked.deletedEndpoints) == 0 {
		t.Fatal("the clients were acknowledged none of some kind of write")
	}
	if restartedServed == 0 {
		t.Error("the instance started under load answered no request")
	}
	_, live := servers.next(0)
	check(t, dsn, platform, live, acked, lost)
	checkDelivered(t, admin, platform.PlatformID, hooks)
	for _, srv := range servers.all() {
		srv.stop(t)
	}
}

// newDSN returns a new database for a test: a SQLite file in its temporary directory, or
// a PostgreSQL schema (or database behind the pooler) when $PAYMENTS_TEST_POSTGRES is set.
func newDSN(t *testing.T) string {
	if pgtest.Enabled() {
		return pgtest.DSN(t)
	}
	return filepath.Join(t.TempDir(), "payments.db")
}

// world is what the clients were acknowledged: users by id (their pw_id), bank accounts
// by id (their user), payee banks, the last account each user asked to be its default,
// the payee banks, cards and webhook endpoints deleted, the number of payee renames, and
// the users a lost request may have changed unseen.
type world struct {
	users            map[string]int64
	accounts         map[string]string
	payeeBanks       map[string]bool
	lastDefault      map[string]string
	uncertain        map[string]bool
	deletedBanks     map[string]bool
	deletedCards     map[string]bool
	deletedEndpoints map[string]bool
	renames          int
}

func (w *world) init() {
	w.users, w.accounts, w.payeeBanks = map[string]int64{}, map[string]string{}, map[string]bool{}
	w.lastDefault, w.uncertain = map[string]string{}, map[string]bool{}
	w.deletedBanks, w.deletedCards, w.deletedEndpoints = map[string]bool{}, map[string]bool{}, map[string]bool{}
}

func (w *world) add(o world) {
	for k, v := range o.users {
		w.users[k] = v
	}
	for k, v := range o.accounts {
		w.accounts[k] = v
	}
	for k := range o.payeeBanks {
		w.payeeBanks[k] = true
	}
	for k, v := range o.lastDefault {
		w.lastDefault[k] = v
	}
	for k := range o.uncertain {
		w.uncertain[k] = true
	}
	for _, m := range [][2]map[string]bool{{w.deletedBanks, o.deletedBanks}, {w.deletedCards, o.deletedCards},
		{w.deletedEndpoints, o.deletedEndpoints}} {
		for k := range m[1] {
			m[0][k] = true
		}
	}
	w.renames += o.renames
}

// fleet is the instances of a test, in the order they started.
type fleet struct {
	mu        sync.Mutex
	instances []*instance
}

func (f *fleet) add(srv *instance) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.instances = append(f.instances, srv)
}

func (f *fleet) at(i int) *instance {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.instances[i]
}

func (f *fleet) all() []*instance {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.instances)
}

// next returns the first live instance after the i-th (in turn, from the start after
// the last), and its index.
func (f *fleet) next(i int) (int, *instance) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for k := 1; k <= len(f.instances); k++ {
		j := (i + k) % len(f.instances)
		if srv := f.instances[j]; srv.live() {
			return j, srv
		}
	}
	return 0, f.instances[0] // none live: the request fails, as it should
}

// instance is one paymentsd serve process, and what the clients sent it.
type instance struct {
	url  string
	cmd  *exec.Cmd
	log  *syncBuffer
	mu   sync.Mutex
	dead bool
	// served counts the requests it answered; retried those sent to it again under
	// their key after the first try's answer was lost.
	served, retried atomic.Int64
	// wrote holds when it acknowledged each write (200 to a keyed request).
	wroteMu sync.Mutex
	wrote   []time.Time
}

// firstWriteAfter returns when the instance first acknowledged a write after t, and
// whether it did.
func (srv *instance) firstWriteAfter(t time.Time) (time.Time, bool) {
	srv.wroteMu.Lock()
	defer srv.wroteMu.Unlock()
	for _, w := range srv.wrote {
		if w.After(t) {
			return w, true
		}
	}
	return time.Time{}, false
}

func (srv *instance) live() bool {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	return !srv.dead
}

func startInstance(t *testing.T, bin, dsn, keyFile string, i int, flags ...string) *instance {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	srv := &instance{url: "http://" + addr, log: &syncBuffer{}}
	args := append([]string{"serve", "-db", dsn, "-data-key-file", keyFile, "-addr", addr, "-log-level", "warn"}, flags...)
	srv.cmd = exec.Command(bin, args...) // #nosec G204 -- the test's own binary
	srv.cmd.Stderr = srv.log
	if err := srv.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.kill() })
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		resp, err := http.Get(srv.url + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return srv
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("instance %d did not become ready: %v\n%s", i, err, srv.log)
		}
	}
}

func (srv *instance) kill() {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if !srv.dead {
		srv.dead = true
		_ = srv.cmd.Process.Kill() // SIGKILL: nothing of it runs on
		_ = srv.cmd.Wait()
	}
}

// stop ends the instance as an operator would (SIGTERM) and checks it exits 0.
func (srv *instance) stop(t *testing.T) {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if srv.dead {
		return
	}
	srv.dead = true
	if err := srv.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Error(err)
	}
	if err := srv.cmd.Wait(); err != nil {
		t.Errorf("%s: %v\n%s", srv.url, err, srv.log)
	}
}

// client is one of the 32: it sends each request to the next live instance.
type client struct {
	http     *http.Client
	servers  *fleet
	at       int
	platform payments.PlatformCredentials
	admin    *payments.Service
	id       int
	seq      int
	// users are the users it made; payee the payee (of users[0], with its API key) whose
	// banks it adds.
	users             []string
	shared            *recentUsers
	apiKey, apiSecret string
	payee             string
	// banks are its payee banks not deleted yet; spare the URL its short-lived webhook
	// endpoints are made with (subscribed to an event none of its writes makes).
	banks []string
	spare string
	// unavailable, when set, takes the 503s (the database out of reach: a failover) as
	// a client should, sending the request again under its key after a pause; each is
	// noted there. Without it, a 503 fails the test as any 5xx.
	unavailable func(at time.Time)
}

// recentUsers are the last users the clients made, shared by them all.
type recentUsers struct {
	mu  sync.Mutex
	ids []string
}

func (r *recentUsers) add(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ids = append(r.ids, id); len(r.ids) > 8 {
		r.ids = r.ids[1:]
	}
}

func (r *recentUsers) pick() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ids[rand.IntN(len(r.ids))] // #nosec G404 -- a test's choice
}

// serverFault is an answer of 500 or more: never acceptable.
type serverFault struct {
	status int
	body   string
}

func (e *serverFault) Error() string { return fmt.Sprintf("HTTP %d: %s", e.status, e.body) }

// send sends one request, under its own Idempotency-Key when it changes something, to
// the next live instance. A try whose answer is lost (an instance killed under it) is sent
// again under the same key to the next live instance, as is one answered 409 while the
// key's first try is still in flight, for up to 20 s: the key settles what the lost try
// did. An error is the request's fate unknown (every try lost), or an answer but a 200;
// one of 500 or more is a *serverFault.
func (cl *client) send(method, target string, body []byte, userAPI bool, data any) error {
	key := ""
	if method != http.MethodGet {
		key = uuid.NewString()
	}
	var err error
	for try, first := 0, time.Now(); try == 0 || time.Since(first) < 20*time.Second; try++ {
		var resp *http.Response
		var raw []byte
		var srv *instance
		cl.at, srv = cl.servers.next(cl.at)
		if try > 0 {
			srv.retried.Add(1)
		}
		resp, raw, err = cl.try(srv, method, target, body, userAPI, key)
		switch {
		case err != nil:
			time.Sleep(20 * time.Millisecond) // lost: the next instance, or this one restarted
			continue
		case resp.StatusCode == http.StatusConflict && key != "" && bytes.Contains(raw, []byte("still being processed")):
			time.Sleep(50 * time.Millisecond)
			err = fmt.Errorf("%s %s: HTTP %d: %s", method, target, resp.StatusCode, raw)
			continue
		case resp.StatusCode == http.StatusServiceUnavailable && cl.unavailable != nil:
			cl.unavailable(time.Now())
			time.Sleep(100 * time.Millisecond) // Retry-After: 1, shortened for the test
			err = fmt.Errorf("%s %s: HTTP %d: %s", method, target, resp.StatusCode, raw)
			continue
		case resp.StatusCode >= 500:
			return &serverFault{resp.StatusCode, fmt.Sprintf("%s %s: %s", method, target, raw)}
		case resp.StatusCode != http.StatusOK:
			return fmt.Errorf("%s %s: HTTP %d: %s", method, target, resp.StatusCode, raw)
		}
		var env struct {
			Data json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(raw, &env); err != nil {
			return err
		}
		if data == nil {
			return nil
		}
		return json.Unmarshal(env.Data, data)
	}
	return err
}

// try sends the request to srv once, and reads its answer.
func (cl *client) try(srv *instance, method, target string, body []byte, userAPI bool, key string) (*http.Response, []byte, error) {
	req, err := http.NewRequest(method, srv.url+target, bytes.NewReader(body))
	if err != nil {
		return nil, nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	if userAPI {
		req.Header.Set(payments.HeaderAPIKey, cl.apiKey)
		req.Header.Set(payments.HeaderAPISecret, cl.apiSecret)
	} else {
		req.Header.Set(payments.HeaderPlatformID, cl.platform.PlatformID.String())
		req.Header.Set(payments.HeaderSignature, payments.Sign(cl.platform.Secret, method, target, body))
	}
	resp, err := cl.http.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, nil, err
	}
	srv.served.Add(1)
	if key != "" && resp.StatusCode == http.StatusOK {
		srv.wroteMu.Lock()
		srv.wrote = append(srv.wrote, time.Now())
		srv.wroteMu.Unlock()
	}
	return resp, raw, nil
}

// setUp makes the client's first user, its API key and a payee.
func (cl *client) setUp(ctx context.Context) (world, error) {
	var w world
	w.init()
	if _, err := cl.createUser(&w); err != nil {
		return w, err
	}
	key, err := cl.admin.CreateAPIKey(ctx, cl.users[0])
	if err != nil {
		return w, err
	}
	cl.apiKey, cl.apiSecret = key.APIKey.String(), key.APISecret
	var p struct {
		PayeeID string `json:"payee_id"`
	}
	body := fmt.Appendf(nil, `{"name":"Payee %d","email":"payee-%d@example.com"}`, cl.id, cl.id)
	if err := cl.send(http.MethodPost, "/api/user-api/payee/create", body, true, &p); err != nil {
		return w, err
	}
	cl.payee = p.PayeeID
	return w, nil
}

func (cl *client) createUser(w *world) (string, error) {
	cl.seq++
	var u struct {
		UserID string `json:"user_id"`
		PwID   int64  `json:"pw_id"`
	}
	body := fmt.Appendf(nil, `{"name":"User %d-%d","email":"user-%d-%d@example.com"}`, cl.id, cl.seq, cl.id, cl.seq)
	if err := cl.send(http.MethodPost, "/api/platform/users/create", body, false, &u); err != nil {
		return "", err
	}
	w.users[u.UserID] = u.PwID
	cl.users = append(cl.users, u.UserID)
	return u.UserID, nil
}

// step makes the client's n-th change: a user, a bank account of one of its last few
// users (the default when asked, at random), a payee bank, a rename of its payee, the
// deletion of its oldest payee bank, a payee, and the deletion of a card (made by the
// administration first) or of a webhook endpoint it has just made.
func (cl *client) step(ctx context.Context, n int) (world, error) {
	var w world
	w.init()
	switch n % 8 {
	case 0:
		_, err := cl.createUser(&w)
		if err == nil {
			cl.shared.add(cl.users[len(cl.users)-1])
		}
		return w, err
	case 1, 2:
		cl.seq++
		// One of its own last few users, whose accounts only it adds; or one of the last
		// users any client made, whose accounts several clients add at once.
		user := cl.users[max(0, len(cl.users)-1-rand.IntN(4))] // #nosec G404 -- a test's choice
		if n%8 == 2 {
			user = cl.shared.pick()
			w.uncertain[user] = true // which of concurrent requests ends last is unknown
		}
		asked := rand.IntN(2) == 0 // #nosec G404
		var a struct {
			AccountID string `json:"account_id"`
			IsDefault bool   `json:"is_default"`
		}
		body := fmt.Appendf(nil, `{"user_id":%q,"bank_name":"Bank","account_number":"%06d%06d",`+
			`"routing_number":"021000021","account_type":"PERSONAL_CHECKING","is_default":%t}`, user, cl.id, cl.seq, asked)
		err := cl.send(http.MethodPost, "/api/platform/accounts/add-account", body, false, &a)
		if err != nil {
			w.uncertain[user] = true
			return w, err
		}
		w.accounts[a.AccountID] = user
		if a.IsDefault {
			w.lastDefault[user] = a.AccountID
		}
		return w, nil
	case 3:
		return w, cl.addPayeeBank(&w)
	case 4:
		cl.seq++
		body := fmt.Appendf(nil, `{"payee_id":%q,"name":"Payee %d-%d"}`, cl.payee, cl.id, cl.seq)
		if err := cl.send(http.MethodPut, "/api/platform/payee/update/"+cl.users[0], body, false, nil); err != nil {
			return w, err
		}
		w.renames++
		return w, nil
	case 5:
		if len(cl.banks) == 0 {
			return w, cl.addPayeeBank(&w)
		}
		bank := cl.banks[0]
		if err := cl.send(http.MethodDelete, "/api/platform/cross-border/payee/bank/"+cl.users[0]+"/"+bank, nil, false, nil); err != nil {
			return w, err
		}
		cl.banks = cl.banks[1:]
		w.deletedBanks[bank] = true
		return w, nil
	case 6:
		cl.seq++
		body := fmt.Appendf(nil, `{"name":"Payee %d-%d"}`, cl.id, cl.seq)
		return w, cl.send(http.MethodPost, "/api/user-api/payee/create", body, true, nil)
	default:
		if n/8%2 == 0 {
			user := cl.users[len(cl.users)-1]
			card, err := cl.admin.AddCard(ctx, user, payments.NewCard{Brand: "visa", Last4: "4242", ExpMonth: 12, ExpYear: 2030})
			if err != nil {
				return w, err
			}
			body := fmt.Appendf(nil, `{"card_id":%q}`, card.CardID)
			if err := cl.send(http.MethodDelete, "/api/platform/card/delete/"+user, body, false, nil); err != nil {
				return w, err
			}
			w.deletedCards[card.CardID.String()] = true
			return w, nil
		}
		var e struct {
			ID string `json:"id"`
		}
		body := fmt.Appendf(nil, `{"url":%q,"events":["exchange_rate.updated"]}`, cl.spare)
		if err := cl.send(http.MethodPost, "/api/platform/webhooks/create", body, false, &e); err != nil {
			return w, err
		}
		if err := cl.send(http.MethodDelete, "/api/platform/webhooks/delete/"+e.ID, nil, false, nil); err != nil {
			return w, err
		}
		w.deletedEndpoints[e.ID] = true
		return w, nil
	}
}

// addPayeeBank adds a bank to the client's payee.
func (cl *client) addPayeeBank(w *world) error {
	cl.seq++
	var b struct {
		BankID string `json:"bank_id"`
	}
	target := "/api/platform/cross-border/payee/bank/" + cl.users[0]
	body := fmt.Appendf(nil, `{"payee_id":%q,"account_number":"%06d%06d","country":"IN",`+
		`"bank_acc_type":"savings","identifier_value":"SBIN0001234"}`, cl.payee, cl.id, cl.seq)
	if err := cl.send(http.MethodPost, target, body, false, &b); err != nil {
		return err
	}
	w.payeeBanks[b.BankID] = true
	cl.banks = append(cl.banks, b.BankID)
	return nil
}

// check compares the database with what was acknowledged; lost is the number of
// requests whose fate is unknown, which may have made users no client was told of.
func check(t *testing.T, dsn string, platform payments.PlatformCredentials, srv *instance, acked world, lost int) {
	t.Helper()
	driver := "sqlite"
	if payments.IsPostgres(dsn) {
		driver = "pgx"
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ids := func(query string, args ...any) map[string]bool {
		rows, err := db.Query(query, args...)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		got := map[string]bool{}
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				t.Fatal(err)
			}
			got[id] = true
		}
		return got
	}

	users := ids("SELECT id FROM users WHERE platform_id = $1", platform.PlatformID.String())
	for id := range acked.users {
		if !users[id] {
			t.Errorf("acknowledged user %s is not in the database", id)
		}
	}
	var n, low, high int64
	if err := db.QueryRow("SELECT count(*), min(pw_id), max(pw_id) FROM users WHERE platform_id = $1",
		platform.PlatformID.String()).Scan(&n, &low, &high); err != nil {
		t.Fatal(err)
	}
	if low != 1 || high != n {
		t.Errorf("pw_id runs %d..%d over %d users: not 1..N", low, high, n)
	}
	// More users than acknowledged only by requests whose every try was lost: a retry
	// under its key replays the first try's user, never makes a second.
	if extra := n - int64(len(acked.users)); extra < 0 || extra > int64(lost) {
		t.Errorf("%d users in the database, %d acknowledged", n, len(acked.users))
	}

	accounts := ids("SELECT id FROM bank_accounts")
	for id := range acked.accounts {
		if !accounts[id] {
			t.Errorf("acknowledged bank account %s is not in the database", id)
		}
	}
	banks := ids("SELECT id FROM payee_banks")
	for id := range acked.payeeBanks {
		if !banks[id] {
			t.Errorf("acknowledged payee bank %s is not in the database", id)
		}
	}
	for _, deleted := range []struct {
		table string
		ids   map[string]bool
	}{{"payee_banks", acked.deletedBanks}, {"cards", acked.deletedCards}, {"webhook_endpoints", acked.deletedEndpoints}} {
		gone := ids("SELECT id FROM " + deleted.table + " WHERE deleted_at IS NOT NULL") // #nosec G202 -- the test's own table names
		for id := range deleted.ids {
			if !gone[id] {
				t.Errorf("%s: %s, acknowledged deleted, is not deleted in the database", deleted.table, id)
			}
		}
	}
	for user := range ids("SELECT user_id FROM bank_accounts GROUP BY user_id HAVING sum(CAST(is_default AS INTEGER)) <> 1") {
		t.Errorf("user %s has accounts but not exactly one default", user)
	}
	defaults := map[string]string{}
	rows, err := db.Query("SELECT user_id, id FROM bank_accounts WHERE is_default")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var user, id string
		if err := rows.Scan(&user, &id); err != nil {
			t.Fatal(err)
		}
		defaults[user] = id
	}
	rows.Close()
	for user, id := range acked.lastDefault {
		if !acked.uncertain[user] && defaults[user] != id {
			t.Errorf("user %s: default account %s, want %s (the last made the default)", user, defaults[user], id)
		}
	}

	// List Users counts what the database holds.
	body := []byte(`{"rows_per_page":10,"page_no":1}`)
	req, _ := http.NewRequest(http.MethodPost, srv.url+"/api/platform/users/list", bytes.NewReader(body))
	req.Header.Set(payments.HeaderPlatformID, platform.PlatformID.String())
	req.Header.Set(payments.HeaderSignature, payments.Sign(platform.Secret, http.MethodPost, "/api/platform/users/list", body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var list struct {
		TotalRecords int64 `json:"totalRecords"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		t.Fatal(err)
	}
	if list.TotalRecords != n {
		t.Errorf("List Users: totalRecords %d, the database holds %d users", list.TotalRecords, n)
	}
}

// checkDelivered waits until every event of the platform has reached the receiver, and
// reports the events delivered more than once.
func checkDelivered(t *testing.T, admin *payments.Service, platformID uuid.UUID, hooks *hookReceiver) {
	t.Helper()
	var ids []string
	for after := ""; ; {
		page, err := admin.ListEvents(context.Background(), platformID, payments.EventQuery{After: after, Limit: "100"})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range page.Events {
			ids = append(ids, e.ID.String())
		}
		if !page.HasMore {
			break
		}
		after = ids[len(ids)-1]
	}
	start := time.Now()
	for {
		got := hooks.received()
		missing, twice := 0, 0
		for _, id := range ids {
			switch n := got[id]; {
			case n == 0:
				missing++
			case n > 1:
				twice += n - 1
			}
		}
		if missing == 0 {
			t.Logf("webhooks: %d events, each delivered (%v after the load), %d duplicate deliveries, %d that did not verify",
				len(ids), time.Since(start).Round(time.Millisecond), twice, hooks.bad)
			if hooks.bad != 0 {
				t.Errorf("%d deliveries did not verify", hooks.bad)
			}
			return
		}
		if time.Since(start) > time.Minute {
			t.Fatalf("webhooks: %d of %d events not delivered a minute after the load", missing, len(ids))
		}
		time.Sleep(100 * time.Millisecond)
	}
}
