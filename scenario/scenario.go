package scenario

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/platform-payments/payments"
	"github.com/platform-payments/payments/dispatch"
	"github.com/platform-payments/payments/httpserver"
	"github.com/platform-payments/payments/internal/command"
	"github.com/platform-payments/payments/internal/pgtest"
)

// Run runs every script (*.txtar) in dir as a subtest of t, each against its own database
// and server, with the commands of this package.
func Run(t *testing.T, dir string) {
	testscript.Run(t, Params(dir))
}

// Params returns the testscript parameters Run uses for the scripts in dir, for callers
// that want to adjust them (add commands, keep work directories, update scripts) before
// calling testscript.Run themselves.
func Params(dir string) testscript.Params {
	return testscript.Params{
		Dir:                dir,
		Setup:              setup,
		Cmds:               Commands(),
		Condition:          pgtest.Condition,
		RequireUniqueNames: true,
	}
}

// CheckResponses returns p with check run on every answer a script's call receives (its
// request is resp.Request): an error fails the script at that call, with or without "!".
// The module's own tests check every answer against openapi.json this way.
func CheckResponses(p testscript.Params, check func(resp *http.Response, body []byte) error) testscript.Params {
	return onSetUp(p, "CheckResponses", func(st *state) { st.check = check })
}

// onSetUp returns p with fn run on each script's state once p's set-up has made it; name
// is the caller's, for the error of parameters that make no state.
func onSetUp(p testscript.Params, name string, fn func(st *state)) testscript.Params {
	setup := p.Setup
	p.Setup = func(env *testscript.Env) error {
		if setup != nil {
			if err := setup(env); err != nil {
				return err
			}
		}
		st, ok := env.Values[stateKey{}].(*state)
		if !ok {
			return fmt.Errorf("scenario: %s needs the parameters of Params", name)
		}
		fn(st)
		return nil
	}
	return p
}

// CheckDeliveries returns p with check run on every webhook delivery a script's receiver
// (webhook listen) gets, with the delivery's request headers and body, as it arrives. A
// delivery check fails the script at its next webhook command (of any subcommand, with or
// without "!"), or at the end of the script when no webhook command follows, naming the
// delivery. The module's own tests check every delivery against openapi.json's webhooks
// section this way.
func CheckDeliveries(p testscript.Params, check func(header http.Header, body []byte) error) testscript.Params {
	return onSetUp(p, "CheckDeliveries", func(st *state) { st.webhooks.setCheck(check) })
}

// Commands returns the script commands of this package by name: the first words of
// paymentsd's commands in package command's table (platform, apikey, user, card,
// address, rates, rules, keys, webhook, call), and the commands of scenarios alone
// (webhook listen, expect and count among them, beside the table's webhook add, list and
// remove). The package documentation describes each.
func Commands() map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	cmds := map[string]func(ts *testscript.TestScript, neg bool, args []string){
		"restart":  cmdRestart,
		"sign":     cmdSign,
		"status":   cmdStatus,
		"header":   cmdHeader,
		"jsonget":  cmdJSONGet,
		"json":     cmdJSON,
		"cmpjson":  cmdCmpJSON,
		"genbody":  cmdGenBody,
		"uuidform": cmdUUIDForm,
	}
	for _, c := range command.Table {
		word, _, _ := strings.Cut(c.Name, " ")
		cmds[word] = tableCommand(word)
	}
	// webhook listen, expect and count are scenarios' own; any other webhook
	// subcommand is the table's.
	cmds["webhook"] = cmdWebhook
	return cmds
}

// ownUsages holds the usage line of every command of scenarios alone, in the order the
// references present them after the table's.
var ownUsages = []string{
	"restart [-env sandbox|production] [-timestamp-tolerance DURATION] [-rate-limit R] [-rate-burst B] [-auth-failures N] [-client-ip-header NAME] [-webhook-retry-schedule LIST] [-webhook-timeout DURATION] [-webhook-workers N] [-webhook-endpoint-concurrency N] [-event-retention DURATION] [-webhook-allow-cidr CIDR|none]",
	"sign [-secret S] [-upper] [-timestamp T] [-expand] VAR METHOD TARGET [BODY]",
	"status CODE",
	"header NAME VALUE_REGEXP",
	"jsonget VAR PATH",
	"json PATH EXPECTED",
	"cmpjson FILE",
	"webhook listen [-fail N] [-status CODE]",
	"webhook expect TYPE [-within DURATION]",
	"webhook count TYPE N",
	"genbody FILE SIZE",
	"uuidform VAR upper|simple|braced|urn ID",
}

// usages holds the usage line of every command, in the order the references present
// them: the table's administration commands, restart, call, then the rest, a group of the
// table's subcommands (webhook add) just before the scenarios' own subcommands of the same
// command (webhook listen). It is what a misused command prints, and what the package
// documentation and docs/scenarios.md must show (a test checks that they do).
var usages = func() []usageLine {
	var lines []usageLine
	add := func(line string, sets []command.Export) {
		name, _, _ := strings.Cut(line, " ")
		lines = append(lines, usageLine{name, line, sets})
	}
	own := map[string]bool{} // the first words of the scenarios' own commands
	for _, line := range ownUsages {
		word, _, _ := strings.Cut(line, " ")
		own[word] = true
	}
	// addTable adds the table's commands but call whose first word keep accepts.
	addTable := func(keep func(word string) bool) {
		for _, c := range command.Table {
			word, _, _ := strings.Cut(c.Name, " ")
			if c != command.Call && keep(word) {
				add(strings.TrimSpace(c.Name+" "+c.Usage), c.Sets)
			}
		}
	}
	addTable(func(word string) bool { return !own[word] })
	add(ownUsages[0], nil) // restart
	add(command.Call.Name+" "+command.Call.Usage, nil)
	placed := map[string]bool{}
	for _, line := range ownUsages[1:] {
		word, _, _ := strings.Cut(line, " ")
		if !placed[word] {
			placed[word] = true
			addTable(func(w string) bool { return w == word })
		}
		add(line, nil)
	}
	return lines
}()

// usageLine is the usage line of the command name, and the variables it sets.
type usageLine struct {
	name, line string
	sets       []command.Export
}

// Usages returns the usage line of every command, in the order of the package
// documentation, each followed by the variables it sets, for a command-line help to list.
func Usages() []string {
	lines := make([]string, len(usages))
	for i, u := range usages {
		lines[i] = u.line
		for j, e := range u.sets {
			sep := ", $"
			if j == 0 {
				sep = "  (sets $"
			}
			lines[i] += sep + e.Var
		}
		if len(u.sets) > 0 {
			lines[i] += ")"
		}
	}
	return lines
}

// usageOf returns the usage lines of the named command, one under the other as a
// "usage: " message shows them: name is a command ("webhook", every line of its
// subcommands) or a command and its subcommand ("webhook listen", that line alone).
func usageOf(name string) string {
	var lines []string
	for _, u := range usages {
		if u.line == name || strings.HasPrefix(u.line, name+" ") {
			lines = append(lines, u.line)
		}
	}
	if len(lines) == 0 {
		panic("scenario: no usage line for " + name)
	}
	return strings.Join(lines, "\n       ") // under the first, after "usage: "
}

// usage aborts the script with the usage line of the named command. Misuse is a fault of
// the script, so it fails with or without "!".
func usage(ts *testscript.TestScript, name string) {
	ts.Fatalf("usage: %s", usageOf(name))
}

// usagef aborts the script saying what is wrong, then the usage line of the command.
func usagef(ts *testscript.TestScript, name, format string, args ...any) {
	ts.Fatalf("%s: %s\nusage: %s", name, fmt.Sprintf(format, args...), usageOf(name))
}

// noNeg rejects "!" for a command that cannot meaningfully fail; hint says what to
// write instead, if anything.
func noNeg(ts *testscript.TestScript, neg bool, name, hint string) {
	if neg {
		ts.Fatalf("! %s is not supported: %s cannot meaningfully fail%s", name, name, hint)
	}
}

// done settles the outcome of an operation that may fail: without "!" an error aborts the
// script; with "!" the error is expected (and written to stderr) and success aborts it.
// It reports whether the operation succeeded.
func done(ts *testscript.TestScript, neg bool, name string, err error) bool {
	switch {
	case err != nil && neg:
		fmt.Fprintln(ts.Stderr(), command.Failure(err))
		return false
	case err != nil:
		ts.Fatalf("%s: %s", name, command.Failure(err))
	case neg:
		ts.Fatalf("%s: unexpected success", name)
	}
	return true
}

// stateKey is the key of a script's *state in testscript's Env.Values.
type stateKey struct{}

// state is one script's world: its database, the service and server on it, and the last
// response received. Each script has its own, so scripts run in parallel.
type state struct {
	dbPath string
	// keyFile is the data key's file when not the default (on PostgreSQL).
	keyFile string
	log     *slog.Logger
	svc     *payments.Service
	srv     *httptest.Server
	client  *http.Client
	last    *response
	limits  httpserver.Options // the server's limits, as restart last set them
	// dispatch is the webhook dispatcher's configuration, as restart last set it; the
	// dispatcher runs while the server does, and stopDispatch stops it.
	dispatch     dispatch.Options
	stopDispatch func()
	// check, when set, checks every answer (CheckResponses).
	check func(resp *http.Response, body []byte) error
	// webhooks holds the webhook secrets the script has seen and its receiver; it
	// outlives restarts.
	webhooks *webhooks
}

func setup(env *testscript.Env) error {
	st := &state{
		dbPath:   filepath.Join(env.WorkDir, "payments.db"),
		log:      slog.New(slog.NewTextHandler(tLog{env.T()}, &slog.HandlerOptions{Level: slog.LevelWarn})),
		webhooks: newWebhooks(),
		// Scripts' webhooks go to their receiver on a loopback address, and are retried
		// within seconds.
		dispatch: dispatch.Options{
			Allow:    []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")},
			Schedule: []time.Duration{time.Second, time.Second, time.Second},
			Timeout:  5 * time.Second,
		},
	}
	t := env.T()
	// After the server stops (deferred below), so last: the receiver stops, and a
	// delivery refused by CheckDeliveries' check that no webhook command reported fails
	// the script.
	env.Defer(func() {
		st.webhooks.close()
		if msg := st.webhooks.refused(); msg != "" {
			t.Fatal("at the end of the script: " + msg)
		}
	})
	if pgtest.Enabled() {
		// A schema of its own in the PostgreSQL database (a database of its own behind a
		// pooler), dropped when the script ends,
		// and the data key in the work directory rather than the working one.
		dsn, drop, err := pgtest.New(context.Background())
		if err != nil {
			return err
		}
		env.Defer(func() {
			if err := drop(); err != nil {
				t.Fatal(err)
			}
		})
		st.dbPath, st.keyFile = dsn, filepath.Join(env.WorkDir, "payments.key")
	}
	if err := st.start(payments.Options{Environment: payments.Sandbox}); err != nil {
		return err
	}
	env.Defer(func() {
		if err := st.stop(); err != nil {
			t.Fatal("closing the payments store: ", err)
		}
	})
	env.Values[stateKey{}] = st
	env.Setenv("DB", st.dbPath)
	env.Setenv("URL", st.srv.URL)
	return nil
}

func getState(ts *testscript.TestScript) *state {
	st, ok := ts.Value(stateKey{}).(*state)
	if !ok {
		ts.Fatalf("no payments server: the script was not set up by scenario.Params")
	}
	return st
}

// start opens the service on the state's database file and serves it over HTTP.
func (st *state) start(opts payments.Options) error {
	opts.KeyFile = st.keyFile
	opts.WebhookAllow = st.dispatch.Allow
	svc, err := payments.Open(context.Background(), st.dbPath, opts)
	if err != nil {
		return err
	}
	st.svc = svc
	st.srv = httptest.NewServer(httpserver.NewWithOptions(svc, st.log, st.limits))
	client := *st.srv.Client()
	client.CheckRedirect = func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse // the scripts see every answer as the server gave it
	}
	st.client = &client
	st.last = nil
	// The dispatcher, as paymentsd serve runs it, sending to the script's receiver.
	ctx, cancel := context.WithCancel(context.Background())
	d := st.dispatch
	d.Exclusive, d.Logger, d.Poll, d.Confined = !pgtest.Enabled(), st.log, 100*time.Millisecond, true
	done := make(chan error, 1)
	go func() { done <- dispatch.New(svc, d).Run(ctx) }()
	st.stopDispatch = func() { cancel(); <-done }
	return nil
}

// stop closes the server, then the service, and returns the service's Close error.
func (st *state) stop() error {
	if st.stopDispatch != nil {
		st.stopDispatch()
		st.stopDispatch = nil
	}
	if st.srv != nil {
		st.srv.Close()
		st.srv = nil
	}
	var err error
	if st.svc != nil {
		err = st.svc.Close()
		st.svc = nil
	}
	return err
}

// tLog writes the server's warnings and errors to the test log.
type tLog struct{ t testscript.T }

func (w tLog) Write(p []byte) (int, error) {
	w.t.Log("server: " + strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}
