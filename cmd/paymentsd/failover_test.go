package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/platform-payments/payments"
)

// PGBinEnv names the directory of PostgreSQL's server programs (initdb, pg_ctl,
// pg_basebackup: /usr/lib/postgresql/15/bin on Debian) that TestFailover builds its
// primary and standby with; without it, the test is skipped.
const PGBinEnv = "PAYMENTS_TEST_PG_BIN"

var (
	failoverFor   = flag.Duration("failover-for", 12*time.Second, "how long TestFailover's clients run; the primary is killed at a third of it")
	failoverAsync = flag.Bool("failover-async", false, "TestFailover with an asynchronous standby: acknowledged writes may be lost, which it reports instead of failing")
	failoverDelay = flag.Duration("failover-repl-delay", 0, "TestFailover: delay the replication stream by this much each way (a proxy between standby and primary)")
)

// TestFailover loses the database machine under load: a PostgreSQL primary and a
// synchronous streaming standby (pg_basebackup -R) on loopback, three paymentsd serve
// processes on the two-host URL with target_session_attrs=read-write, 32 clients through
// every keyed write (faultRun's). A third of the way through, every process of the
// primary is killed (SIGKILL), and a second later the standby is promoted (pg_ctl
// promote). The clients take the 503s as they should (the same request again under its
// key after a pause). Afterwards: no 500, every acknowledged write in the database once,
// pw_id dense, one default account per user, every event delivered, and every instance
// acknowledging writes again within 5 s of the promotion, none restarted.
func TestFailover(t *testing.T) {
	bin := os.Getenv(PGBinEnv)
	if bin == "" {
		t.Skipf("needs PostgreSQL's server programs: set $%s (e.g. /usr/lib/postgresql/15/bin)", PGBinEnv)
	}
	run := *failoverFor
	if testing.Short() {
		run = 8 * time.Second
	}
	ctx := context.Background()
	setUp := time.Now()
	pair := newPGPair(t, bin, !*failoverAsync, *failoverDelay)
	t.Logf("primary and standby streaming after %v", time.Since(setUp).Round(time.Millisecond))
	dsn := fmt.Sprintf("postgres://postgres@127.0.0.1:%d,127.0.0.1:%d/payments?sslmode=disable&target_session_attrs=read-write",
		pair.primaryPort, pair.standbyPort)
	keyFile := filepath.Join(t.TempDir(), "payments.key")

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

	exe := filepath.Join(t.TempDir(), "paymentsd")
	if err := os.Symlink(os.Args[0], exe); err != nil {
		t.Fatal(err)
	}
	servers := &fleet{}
	const n = 3
	for i := range n {
		servers.add(startInstance(t, exe, dsn, keyFile, i, "-webhook-allow-cidr", "127.0.0.0/8", "-webhook-timeout", "2s"))
	}

	t.Logf("%d instances ready after %v", n, time.Since(setUp).Round(time.Millisecond))
	const clients = 32
	shared := &recentUsers{}
	var (
		mu                   sync.Mutex
		acked                world
		lost                 int
		failures             []string
		unavailable          int
		first503, last503    time.Time
		killedAt, promotedAt time.Time
	)
	acked.init()
	fail := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		if len(failures) < 20 {
			failures = append(failures, fmt.Sprintf(format, args...))
		}
	}
	noted := func(at time.Time) {
		mu.Lock()
		defer mu.Unlock()
		unavailable++
		if first503.IsZero() {
			first503 = at
		}
		last503 = at
	}
	began := time.Now()
	deadline := began.Add(run)
	failedOver := make(chan error, 1)
	go func() {
		time.Sleep(time.Until(began.Add(run / 3)))
		k := pair.killPrimary()
		time.Sleep(time.Second)
		p, err := pair.promote()
		mu.Lock()
		killedAt, promotedAt = k, p
		mu.Unlock()
		failedOver <- err
	}()

	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			cl := &client{http: &http.Client{Timeout: 30 * time.Second}, servers: servers, at: c,
				platform: platform, id: c, admin: admin, shared: shared, spare: hooks.URL + "/spare", unavailable: noted}
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
	if err := <-failedOver; err != nil {
		t.Fatal(err)
	}
	for _, f := range failures {
		t.Error(f)
	}
	rel := func(at time.Time) string {
		if at.IsZero() {
			return "-"
		}
		return at.Sub(began).Round(10 * time.Millisecond).String()
	}
	mode := "synchronous"
	if *failoverAsync {
		mode = "asynchronous"
	}
	t.Logf("%s standby (replication delay %v), %s on %d instances: primary killed at %s, standby promoted at %s; "+
		"%d users, %d bank accounts, %d payee banks acknowledged; %d answers 503 (between %s and %s), %d requests failed (4xx or lost)",
		mode, *failoverDelay, run, n, rel(killedAt), rel(promotedAt), len(acked.users), len(acked.accounts), len(acked.payeeBanks),
		unavailable, rel(first503), rel(last503), lost)
	for i, srv := range servers.all() {
		at, ok := srv.firstWriteAfter(promotedAt)
		switch {
		case !ok:
			t.Errorf("instance %d acknowledged no write after the promotion", i)
		case at.Sub(promotedAt) > 5*time.Second:
			t.Errorf("instance %d first acknowledged a write %v after the promotion, want within 5 s", i, at.Sub(promotedAt))
		default:
			t.Logf("instance %d writing again %v after the promotion", i, at.Sub(promotedAt).Round(time.Millisecond))
		}
	}
	if *failoverAsync {
		// Acknowledged writes may be lost: count them rather than fail.
		t.Logf("asynchronous: acknowledged but missing from the new primary: %d users, %d bank accounts, %d payee banks",
			missingIn(pair, t, "users", acked.users), missingIn(pair, t, "bank_accounts", acked.accounts),
			missingIn(pair, t, "payee_banks", acked.payeeBanks))
		return
	}
	_, live := servers.next(0)
	check(t, dsn, platform, live, acked, lost)
	checkDelivered(t, admin, platform.PlatformID, hooks)
	for _, srv := range servers.all() {
		srv.stop(t)
	}
}

// pgPair is a PostgreSQL primary and its streaming standby on loopback, in a temporary
// directory, run as the postgres user when the test runs as root.
type pgPair struct {
	bin, dir                 string
	primaryPort, standbyPort int
	asRoot                   bool
	// cut, when the stream goes through a delaying proxy, ends it and drops what it
	// holds: the link goes with the primary's machine.
	cut func()
}

// newPGPair initdb's a primary, starts it (the standby it waits for synchronous unless
// async), makes a standby of it with pg_basebackup -R (through a proxy that delays the
// stream by delay, if any), starts it, and waits for it to stream. Both are stopped
// (immediate) when the test ends.
func newPGPair(t *testing.T, bin string, sync bool, delay time.Duration) *pgPair {
	t.Helper()
	dir, err := os.MkdirTemp("", "failover-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	p := &pgPair{bin: bin, dir: dir, asRoot: os.Getuid() == 0}
	if p.asRoot {
		pg, err := user.Lookup("postgres")
		if err != nil {
			t.Fatalf("running as root, the servers run as postgres: %v", err)
		}
		uid, _ := strconv.Atoi(pg.Uid)
		if err := os.Chown(dir, uid, -1); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(dir, 0o755); err != nil { // #nosec G302 -- the servers' owner must reach it
		t.Fatal(err)
	}
	p.primaryPort, p.standbyPort = freePort(t), freePort(t)
	primary, standby := filepath.Join(dir, "primary"), filepath.Join(dir, "standby")
	p.pg(t, "initdb", "-D", primary, "--no-sync", "--locale=C", "-E", "UTF8", "-U", "postgres", "-A", "trust")
	conf := "listen_addresses = '127.0.0.1'\nunix_socket_directories = '" + dir + "'\nmax_connections = 300\n" +
		"fsync = off\nfull_page_writes = off\nwal_keep_size = '256MB'\n"
	p.appendConf(t, primary, conf+fmt.Sprintf("port = %d\n", p.primaryPort))
	p.pg(t, "pg_ctl", "-D", primary, "-l", filepath.Join(dir, "primary.log"), "-w", "-t", "30", "start")
	t.Cleanup(func() { p.stop(primary) })
	p.pg(t, "createdb", "-h", "127.0.0.1", "-p", strconv.Itoa(p.primaryPort), "-U", "postgres", "payments")

	source := p.primaryPort
	if delay > 0 {
		source, p.cut = delayProxy(t, p.primaryPort, delay)
	}
	p.pg(t, "pg_basebackup", "-h", "127.0.0.1", "-p", strconv.Itoa(source), "-U", "postgres", "-D", standby, "-R", "-X", "stream", "-c", "fast", "--no-sync")
	// The standby, once promoted, has no standby of its own: it must not wait for one.
	p.appendConf(t, standby, fmt.Sprintf("synchronous_standby_names = ''\nport = %d\n", p.standbyPort))
	p.pg(t, "pg_ctl", "-D", standby, "-l", filepath.Join(dir, "standby.log"), "-w", "-t", "30", "start")
	t.Cleanup(func() { p.stop(standby) })
	if sync {
		// Only now: with no standby, the primary's commits (CREATE DATABASE's among them)
		// would wait for one.
		p.pg(t, "psql", "-h", "127.0.0.1", "-p", strconv.Itoa(p.primaryPort), "-U", "postgres", "-c",
			"ALTER SYSTEM SET synchronous_standby_names = '*'", "-c", "ALTER SYSTEM SET synchronous_commit = on", "-c", "SELECT pg_reload_conf()")
	}

	// Streaming (and, synchronous, the primary's sync standby) before the load begins.
	want := "streaming"
	if sync {
		want = "streaming sync"
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		out, _ := p.output("psql", "-h", "127.0.0.1", "-p", strconv.Itoa(p.primaryPort), "-U", "postgres", "-Atc",
			"SELECT state || ' ' || sync_state FROM pg_stat_replication")
		if strings.HasPrefix(strings.TrimSpace(out), want) {
			return p
		}
		if time.Now().After(deadline) {
			t.Fatalf("the standby is not %q after 30 s: %q", want, out)
		}
	}
}

// command returns name (a program of bin) with args, run as postgres when we are root.
func (p *pgPair) command(name string, args ...string) *exec.Cmd {
	prog := filepath.Join(p.bin, name)
	if p.asRoot {
		line := shellQuote(prog)
		for _, a := range args {
			line += " " + shellQuote(a)
		}
		return exec.Command("su", "postgres", "-s", "/bin/sh", "-c", line) // #nosec G204 -- the test's own command line
	}
	return exec.Command(prog, args...) // #nosec G204 -- the test's own command line
}

// output runs a program of bin and returns what it wrote, through a file rather than a
// pipe: a server pg_ctl starts would hold a pipe open after pg_ctl returns.
func (p *pgPair) output(name string, args ...string) (string, error) {
	f, err := os.CreateTemp("", "pg-out-")
	if err != nil {
		return "", err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	cmd := p.command(name, args...)
	cmd.Stdout, cmd.Stderr = f, f
	err = cmd.Run()
	out, _ := os.ReadFile(f.Name())
	return string(out), err
}

func (p *pgPair) pg(t *testing.T, name string, args ...string) {
	t.Helper()
	if out, err := p.output(name, args...); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

func (p *pgPair) appendConf(t *testing.T, data, conf string) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(data, "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(conf); err != nil {
		t.Fatal(err)
	}
}

// stop stops the cluster in data, if it runs, at once.
func (p *pgPair) stop(data string) {
	_, _ = p.output("pg_ctl", "-D", data, "-m", "immediate", "-w", "stop")
}

// killPrimary kills every process of the primary with SIGKILL, the postmaster first (so
// that it restarts none), as the loss of its machine would end them, and returns when.
func (p *pgPair) killPrimary() time.Time {
	raw, err := os.ReadFile(filepath.Join(p.dir, "primary", "postmaster.pid"))
	if err != nil {
		panic(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(strings.SplitN(string(raw), "\n", 2)[0]))
	if err != nil {
		panic(err)
	}
	children := childrenOf(pid)
	_ = syscall.Kill(pid, syscall.SIGKILL)
	for _, c := range children {
		_ = syscall.Kill(c, syscall.SIGKILL)
	}
	if p.cut != nil {
		p.cut()
	}
	return time.Now()
}

// childrenOf returns the processes whose parent is pid, from /proc.
func childrenOf(pid int) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid …: comm may hold spaces, so from the last ')'.
		fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(fields) > 1 && fields[1] == strconv.Itoa(pid) {
			out = append(out, child)
		}
	}
	return out
}

// promote promotes the standby (pg_ctl promote, waiting for it) and returns when it was
// done.
func (p *pgPair) promote() (time.Time, error) {
	if out, err := p.output("pg_ctl", "-D", filepath.Join(p.dir, "standby"), "-w", "-t", "30", "promote"); err != nil {
		return time.Time{}, fmt.Errorf("pg_ctl promote: %v\n%s", err, out)
	}
	return time.Now(), nil
}

// missingIn counts the acknowledged ids the table of the new primary lacks.
func missingIn[V any](p *pgPair, t *testing.T, table string, acked map[string]V) int {
	t.Helper()
	out, err := p.output("psql", "-h", "127.0.0.1", "-p", strconv.Itoa(p.standbyPort), "-U", "postgres", "-At", "-d", "payments",
		"-c", "SELECT id FROM "+table)
	if err != nil {
		t.Fatalf("psql: %v\n%s", err, out)
	}
	have := map[string]bool{}
	for _, id := range strings.Fields(out) {
		have[id] = true
	}
	missing := 0
	for id := range acked {
		if !have[id] {
			missing++
		}
	}
	return missing
}

// freePort returns a port of 127.0.0.1 free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// delayProxy forwards connections on a port of 127.0.0.1 to port, each chunk either way
// delivered delay after it was read (a slow link between standby and primary); it
// returns its port, and a function that cuts the link: every connection closed, what
// was in flight dropped.
func delayProxy(t *testing.T, port int, delay time.Duration) (int, func()) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		cut   bool
		conns []net.Conn
	)
	isCut := func() bool {
		mu.Lock()
		defer mu.Unlock()
		return cut
	}
	cutAll := func() {
		mu.Lock()
		defer mu.Unlock()
		cut = true
		_ = l.Close()
		for _, c := range conns {
			_ = c.Close()
		}
	}
	t.Cleanup(cutAll)
	pass := func(dst, src net.Conn) {
		type chunk struct {
			b  []byte
			at time.Time
		}
		q := make(chan chunk, 4096)
		go func() {
			defer dst.Close()
			for c := range q {
				time.Sleep(time.Until(c.at))
				if isCut() {
					return
				}
				if _, err := dst.Write(c.b); err != nil {
					return
				}
			}
		}()
		buf := make([]byte, 64<<10)
		for {
			n, err := src.Read(buf)
			if n > 0 {
				q <- chunk{append([]byte(nil), buf[:n]...), time.Now().Add(delay)}
			}
			if err != nil {
				close(q)
				return
			}
		}
	}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
			if err != nil {
				_ = c.Close()
				continue
			}
			mu.Lock()
			conns = append(conns, c, s)
			mu.Unlock()
			go pass(s, c)
			go pass(c, s)
		}
	}()
	return l.Addr().(*net.TCPAddr).Port, cutAll
}
