package scenario

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/platform-payments/payments"
	"github.com/platform-payments/payments/httpserver"
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
		RequireUniqueNames: true,
	}
}

// Commands returns the script commands of this package by name. The package
// documentation describes each.
func Commands() map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	return map[string]func(ts *testscript.TestScript, neg bool, args []string){
		"platform": cmdPlatform,
		"apikey":   cmdAPIKey,
		"verify":   cmdVerify,
		"restart":  cmdRestart,
		"card":     cmdCard,
		"address":  cmdAddress,
		"rates":    cmdRates,
		"rules":    cmdRules,
		"call":     cmdCall,
		"userapi":  cmdUserAPI,
		"sign":     cmdSign,
		"status":   cmdStatus,
		"header":   cmdHeader,
		"jsonget":  cmdJSONGet,
		"json":     cmdJSON,
		"cmpjson":  cmdCmpJSON,
		"genbody":  cmdGenBody,
		"uuidform": cmdUUIDForm,
	}
}

// usages holds the usage line of every command, in the order the references present
// them: what a misused command prints, and what the package documentation and the
// README must show (a test checks that they do).
var usages = []struct{ name, line string }{
	{"platform", "platform create NAME [-env sandbox|production] [-require-timestamp]"},
	{"apikey", "apikey USER_ID"},
	{"verify", "verify USER_ID"},
	{"card", "card add USER_ID [-brand BRAND] [-last4 DDDD] [-exp MM/YYYY]"},
	{"address", "address add USER_ID PAYEE_ID FILE"},
	{"rates", "rates set BASE PAYOUT RATE [-fixed] [-at YYYY-MM-DDTHH:MM:SS]"},
	{"rules", "rules load FILE"},
	{"restart", "restart [-env sandbox|production] [-timestamp-tolerance DURATION] [-rate-limit R] [-rate-burst B] [-auth-failures N] [-client-ip-header NAME]"},
	{"call", "call [-platform ID] [-secret S] [-sig SIGNATURE] [-nosign] [-timestamp T] [-type CONTENT_TYPE] [-header 'Name: value']... [-expand] METHOD TARGET [BODYFILE]"},
	{"userapi", "userapi [-key K] [-secret S] [-nokey] [-type CONTENT_TYPE] [-header 'Name: value']... [-expand] METHOD TARGET [BODYFILE]"},
	{"sign", "sign [-secret S] [-upper] [-timestamp T] [-expand] VAR METHOD TARGET [BODYFILE]"},
	{"status", "status CODE"},
	{"header", "header NAME VALUE_REGEXP"},
	{"jsonget", "jsonget VAR PATH"},
	{"json", "json PATH EXPECTED"},
	{"cmpjson", "cmpjson FILE"},
	{"genbody", "genbody FILE SIZE"},
	{"uuidform", "uuidform VAR upper|simple|braced|urn ID"},
}

// Usages returns the usage line of every command, in the order of the package
// documentation, for a command-line help to list.
func Usages() []string {
	lines := make([]string, len(usages))
	for i, u := range usages {
		lines[i] = u.line
	}
	return lines
}

// usageOf returns the usage line of the named command.
func usageOf(name string) string {
	for _, u := range usages {
		if u.name == name {
			return u.line
		}
	}
	panic("scenario: no usage line for " + name)
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
		fmt.Fprintln(ts.Stderr(), err)
		return false
	case err != nil:
		ts.Fatalf("%s: %v", name, err)
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
	log    *slog.Logger
	svc    *payments.Service
	srv    *httptest.Server
	client *http.Client
	last   *response
	limits httpserver.Options // the server's limits, as restart last set them
}

func setup(env *testscript.Env) error {
	st := &state{
		dbPath: filepath.Join(env.WorkDir, "payments.db"),
		log:    slog.New(slog.NewTextHandler(tLog{env.T()}, &slog.HandlerOptions{Level: slog.LevelWarn})),
	}
	if err := st.start(payments.Options{Environment: payments.Sandbox}); err != nil {
		return err
	}
	t := env.T()
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
	return nil
}

// stop closes the server, then the service, and returns the service's Close error.
func (st *state) stop() error {
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
