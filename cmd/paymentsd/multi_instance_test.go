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
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/platform-payments/payments"
	"github.com/platform-payments/payments/internal/pgtest"
)

var multiFor = flag.Duration("multi-instance-for", 30*time.Second, "how long TestMultiInstance's clients run (-short: 5s)")

// TestMultiInstance runs three paymentsd serve processes on one PostgreSQL database and 32
// clients spread across them, creating users, linking bank accounts (asking for the
// default at random) and adding payee banks; two thirds of the way through, one instance
// is killed (SIGKILL) under that load and its clients move to the others. Afterwards: no
// answer was a 5xx, every acknowledged object is in the database, each platform's pw_id
// runs 1..N without a gap, each user with accounts has exactly one default (the one its
// last acknowledged request made so, when nothing was lost in the kill), and List Users'
// totalRecords is the number of users in the database. Every event of those changes
// reaches the platform's webhook endpoint at least once, the instances sharing the
// deliveries; the duplicates (deliveries the killed instance made and did not record) are
// counted.
func TestMultiInstance(t *testing.T) {
	if !pgtest.Enabled() {
		t.Skipf("needs PostgreSQL: set $%s", pgtest.Env)
	}
	run := *multiFor
	if testing.Short() {
		run = 5 * time.Second
	}
	ctx := context.Background()
	dsn := pgtest.DSN(t)
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
	var servers []*instance
	for i := range 3 {
		srv := startInstance(t, bin, dsn, keyFile, i, "-webhook-allow-cidr", "127.0.0.0/8", "-webhook-timeout", "2s")
		servers = append(servers, srv)
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
	deadline := time.Now().Add(run)
	killAt := time.Now().Add(run * 2 / 3)
	go func() {
		time.Sleep(time.Until(killAt))
		servers[2].kill()
	}()

	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			cl := &client{http: &http.Client{Timeout: 30 * time.Second}, servers: servers, at: c % len(servers),
				platform: platform, id: c, admin: admin, shared: shared}
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
				// unseen: one lost with its connection (the killed instance) may have
				// committed.
				got, err := cl.step(n)
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
	for _, f := range failures {
		t.Error(f)
	}
	t.Logf("%s on 3 instances (one killed at %s): %d users, %d bank accounts, %d payee banks acknowledged; "+
		"%d requests failed, %d users changed unseen or by several clients at once",
		run, run*2/3, len(acked.users), len(acked.accounts), len(acked.payeeBanks), lost, len(acked.uncertain))
	if len(acked.accounts) == 0 || len(acked.payeeBanks) == 0 {
		t.Fatal("the clients were acknowledged no bank account or no payee bank")
	}
	check(t, dsn, platform, servers[0], acked)
	checkDelivered(t, admin, platform.PlatformID, hooks)
	for _, srv := range servers[:2] {
		srv.stop(t)
	}
}

// world is what the clients were acknowledged: users by id (their pw_id), bank accounts
// by id (their user), payee banks, the last account each user asked to be its default,
// and the users a lost request may have changed unseen.
type world struct {
	users       map[string]int64
	accounts    map[string]string
	payeeBanks  map[string]bool
	lastDefault map[string]string
	uncertain   map[string]bool
}

func (w *world) init() {
	w.users, w.accounts, w.payeeBanks = map[string]int64{}, map[string]string{}, map[string]bool{}
	w.lastDefault, w.uncertain = map[string]string{}, map[string]bool{}
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
}

// instance is one paymentsd serve process.
type instance struct {
	url  string
	cmd  *exec.Cmd
	log  *syncBuffer
	mu   sync.Mutex
	dead bool
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

// client is one of the 32: it sends to its instance, and to the next one once its
// instance stops answering.
type client struct {
	http     *http.Client
	servers  []*instance
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

// send sends one request to the client's instance. A transport error (the instance is
// gone) moves the client to the next instance and is returned: the request's fate is
// unknown. Any answer but a 200 is an error; one of 500 or more a *serverFault.
func (cl *client) send(method, target string, body []byte, keyed bool, data any) error {
	srv := cl.servers[cl.at]
	req, err := http.NewRequest(method, srv.url+target, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if keyed {
		req.Header.Set(payments.HeaderAPIKey, cl.apiKey)
		req.Header.Set(payments.HeaderAPISecret, cl.apiSecret)
	} else {
		req.Header.Set(payments.HeaderPlatformID, cl.platform.PlatformID.String())
		req.Header.Set(payments.HeaderSignature, payments.Sign(cl.platform.Secret, method, target, body))
	}
	resp, err := cl.http.Do(req)
	if err != nil {
		cl.at = (cl.at + 1) % len(cl.servers)
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		cl.at = (cl.at + 1) % len(cl.servers)
		return err
	}
	if resp.StatusCode >= 500 {
		return &serverFault{resp.StatusCode, string(raw)}
	}
	if resp.StatusCode != http.StatusOK {
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

// step makes the client's n-th object: a user, a bank account of one of its last few
// users (the default when asked, at random), or a payee bank.
func (cl *client) step(n int) (world, error) {
	var w world
	w.init()
	switch n % 4 {
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
		if n%4 == 2 {
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
	default:
		cl.seq++
		var b struct {
			BankID string `json:"bank_id"`
		}
		target := "/api/platform/cross-border/payee/bank/" + cl.users[0]
		body := fmt.Appendf(nil, `{"payee_id":%q,"account_number":"%06d%06d","country":"IN",`+
			`"bank_acc_type":"savings","identifier_value":"SBIN0001234"}`, cl.payee, cl.id, cl.seq)
		if err := cl.send(http.MethodPost, target, body, false, &b); err != nil {
			return w, err
		}
		w.payeeBanks[b.BankID] = true
		return w, nil
	}
}

// check compares the database with what was acknowledged.
func check(t *testing.T, dsn string, platform payments.PlatformCredentials, srv *instance, acked world) {
	t.Helper()
	db, err := sql.Open("pgx", dsn)
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
	// More users than acknowledged only by those the kill cut off after their commit.
	if extra := n - int64(len(acked.users)); extra < 0 || extra > 32 {
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
	for user := range ids("SELECT user_id FROM bank_accounts GROUP BY user_id HAVING sum(is_default) <> 1") {
		t.Errorf("user %s has accounts but not exactly one default", user)
	}
	defaults := map[string]string{}
	rows, err := db.Query("SELECT user_id, id FROM bank_accounts WHERE is_default = 1")
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
