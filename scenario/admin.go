package scenario

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/platform-payments/payments"
	"github.com/platform-payments/payments/dispatch"
	"github.com/platform-payments/payments/httpserver"
	"github.com/platform-payments/payments/internal/command"
)

// The administration commands and call are paymentsd's (package command's table), run on
// the script's own database and server: a line is the paymentsd command without -db and
// -url.

// tableCommand returns the script command for the first word of the table's commands,
// "platform" for platform create.
func tableCommand(word string) func(ts *testscript.TestScript, neg bool, args []string) {
	return func(ts *testscript.TestScript, neg bool, args []string) {
		cmd, rest, err := command.Lookup(command.Table, "scenario", append([]string{word}, args...))
		if err != nil {
			ts.Fatalf("%v\nusage: %s", err, usageOf(word))
		}
		if cmd.Uses == command.UsesServer {
			noNeg(ts, neg, cmd.Name, " (assert the answer with status)")
		}
		var printed bytes.Buffer // for the webhook secrets it may show
		stdout := io.MultiWriter(ts.Stdout(), &printed)
		x := &command.Invocation{Command: cmd, Host: &host{ts: ts}, Stdout: stdout, Stderr: ts.Stderr()}
		err = cmd.Run(context.Background(), x, rest)
		if cmd != command.Call { // call's answer is learnt from in Answered
			for line := range bytes.Lines(printed.Bytes()) {
				getState(ts).learnSecrets(line)
			}
		}
		var ue *command.UsageError
		switch {
		case errors.Is(err, command.ErrHelp):
			x.PrintHelp()
			return
		case errors.As(err, &ue):
			ts.Fatalf("%s: %s\nusage: %s", cmd.Name, command.OneLine(ue.Msg), usageOf(cmd.Name))
		}
		if !done(ts, neg, cmd.Name, err) {
			return
		}
		vars, err := x.Exports()
		ts.Check(err)
		for name, value := range vars {
			ts.Setenv(name, value)
		}
	}
}

// host runs a command of the table on the script's database and server.
type host struct{ ts *testscript.TestScript }

func (h *host) Flags(*command.Command, *flag.FlagSet) func() error { return nil }

func (h *host) Usage(c *command.Command) string { return strings.TrimSpace(c.Name + " " + c.Usage) }

func (h *host) Service(_ context.Context, fn func(*payments.Service) error) error {
	return fn(getState(h.ts).svc)
}

// ReadFile reads a file of the script. A script has no standard input of its own.
func (h *host) ReadFile(name string) ([]byte, error) {
	if name == "-" {
		return nil, command.Usagef("a scenario has no standard input: write the input as a file (-- name --) and name it")
	}
	return os.ReadFile(h.ts.MkAbs(name))
}

func (h *host) Getenv(name string) string { return h.ts.Getenv(name) }

// Server is the script's server, with the credentials of the last platform create.
func (h *host) Server() (command.Server, error) {
	st := getState(h.ts)
	u, err := url.Parse(st.srv.URL)
	if err != nil {
		return command.Server{}, err
	}
	return command.Server{
		URL:        u,
		Client:     st.client,
		Now:        st.svc.Now,
		PlatformID: h.ts.Getenv("PLATFORM_ID"),
		Secret:     h.ts.Getenv("PLATFORM_SECRET"),
	}, nil
}

// Answered keeps the answer as the last response, learns the webhook secret it may hold
// and writes its status line on stderr.
func (h *host) Answered(resp *http.Response, body []byte) error {
	st := getState(h.ts)
	st.last = &response{status: resp.StatusCode, header: resp.Header, body: body}
	st.learnSecrets(body)
	if st.check != nil {
		if err := st.check(resp, body); err != nil {
			h.ts.Fatalf("the answer does not match the API's description: %v", err)
		}
	}
	fmt.Fprintf(h.ts.Stderr(), "%s\n", resp.Status)
	return nil
}

// cmdRestart: restart [-env sandbox|production] [-timestamp-tolerance DURATION] [-rate-limit R] [-rate-burst B] [-auth-failures N] [-client-ip-header NAME] [-webhook-retry-schedule LIST] [-webhook-timeout DURATION] [-webhook-workers N] [-webhook-endpoint-concurrency N] [-event-retention DURATION] [-webhook-allow-cidr CIDR|none]
//
// The limit and webhook flags are paymentsd serve's, parsed by the same code; a webhook
// flag left out keeps its value (at first: loopback allowed, retries after 1s, 1s, 1s), and
// -webhook-allow-cidr none allows no range beyond the public ones.
func cmdRestart(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "restart", "")
	fs := flag.NewFlagSet("restart", flag.ContinueOnError)
	envName := fs.String("env", string(payments.Sandbox), "")
	tolerance := fs.Duration("timestamp-tolerance", payments.DefaultTimestampTolerance, "")
	limits := httpserver.LimitFlags(fs)
	none := false
	for i, a := range args { // "none" is not a CIDR: take it before the flag's own parsing
		if (a == "-webhook-allow-cidr" || a == "--webhook-allow-cidr") && i+1 < len(args) && args[i+1] == "none" {
			none, args = true, append(args[:i:i], args[i+2:]...)
			break
		}
	}
	webhooks := dispatch.Flags(fs)
	pos, set := parseFlags(ts, "restart", fs, args)
	if len(pos) > 0 {
		usagef(ts, "restart", "unexpected %q", pos)
	}
	env, err := payments.ParseEnvironment(*envName)
	if err != nil {
		usagef(ts, "restart", "unknown environment %q", *envName)
	}
	if *tolerance < time.Second || *tolerance%time.Second != 0 {
		usagef(ts, "restart", "-timestamp-tolerance %v: want whole seconds, at least 1s (30s, 5m)", *tolerance)
	}
	lim, err := limits()
	if err != nil {
		usagef(ts, "restart", "%v", err)
	}
	d, err := webhooks()
	if err != nil {
		usagef(ts, "restart", "%v", err)
	}
	st := getState(ts)
	if err := st.stop(); err != nil {
		ts.Fatalf("restart: closing the store: %v", err)
	}
	st.limits = lim
	for name, field := range map[string]func(){
		"webhook-retry-schedule":       func() { st.dispatch.Schedule = d.Schedule },
		"webhook-timeout":              func() { st.dispatch.Timeout = d.Timeout },
		"webhook-workers":              func() { st.dispatch.Workers = d.Workers },
		"webhook-endpoint-concurrency": func() { st.dispatch.PerEndpoint = d.PerEndpoint },
		"event-retention":              func() { st.dispatch.Retention = d.Retention },
		"webhook-allow-cidr":           func() { st.dispatch.Allow = d.Allow },
	} {
		if set[name] {
			field()
		}
	}
	if none {
		st.dispatch.Allow = nil
	}
	if err := st.start(payments.Options{Environment: env, TimestampTolerance: *tolerance}); err != nil {
		ts.Fatalf("restart: %v", err)
	}
	ts.Setenv("URL", st.srv.URL)
}
