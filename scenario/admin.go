package scenario

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/platform-payments/payments"
	"github.com/platform-payments/payments/httpserver"
)

// The administrative commands call the library directly, as an operator would through
// the command line: none of them is part of the HTTP surface.

// cmdPlatform: platform create NAME [-env sandbox|production] [-require-timestamp]
func cmdPlatform(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) == 0 || args[0] != "create" {
		usage(ts, "platform")
	}
	var name string
	var env payments.Environment
	var opts payments.PlatformOptions
	haveName := false
	for rest := args[1:]; len(rest) > 0; rest = rest[1:] {
		switch {
		case rest[0] == "-env" && len(rest) > 1 && env == "":
			e, err := payments.ParseEnvironment(rest[1])
			if err != nil {
				usagef(ts, "platform", "unknown environment %q", rest[1])
			}
			env, rest = e, rest[1:]
		case rest[0] == "-require-timestamp" && !opts.RequireTimestamp:
			opts.RequireTimestamp = true
		case !haveName && (rest[0] == "" || rest[0][0] != '-'):
			name, haveName = rest[0], true
		default:
			usagef(ts, "platform", "unexpected %q", rest[0])
		}
	}
	if !haveName {
		usagef(ts, "platform", "NAME is missing")
	}
	st := getState(ts)
	creds, err := st.svc.CreatePlatform(context.Background(), name, env, opts)
	if !done(ts, neg, "platform create", err) {
		return
	}
	printJSON(ts, creds)
	ts.Setenv("PLATFORM_ID", creds.PlatformID.String())
	ts.Setenv("PLATFORM_SECRET", creds.Secret)
}

// cmdAPIKey: apikey USER_ID
func cmdAPIKey(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		usage(ts, "apikey")
	}
	key, err := getState(ts).svc.CreateAPIKey(context.Background(), args[0])
	if !done(ts, neg, "apikey", err) {
		return
	}
	printJSON(ts, key)
	ts.Setenv("API_KEY", key.APIKey.String())
	ts.Setenv("API_SECRET", key.APISecret)
}

// cmdVerify: verify USER_ID
func cmdVerify(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		usage(ts, "verify")
	}
	err := getState(ts).svc.VerifyUser(context.Background(), args[0])
	if !done(ts, neg, "verify", err) {
		return
	}
	printJSON(ts, map[string]any{"user_id": args[0], "verified": true})
}

// cmdRestart: restart [-env sandbox|production] [-timestamp-tolerance DURATION] [-rate-limit R] [-rate-burst B] [-auth-failures N] [-client-ip-header NAME]
//
// The limit flags are paymentsd serve's, parsed by the same code.
func cmdRestart(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "restart", "")
	fs := flag.NewFlagSet("restart", flag.ContinueOnError)
	envName := fs.String("env", string(payments.Sandbox), "")
	tolerance := fs.Duration("timestamp-tolerance", payments.DefaultTimestampTolerance, "")
	limits := httpserver.LimitFlags(fs)
	pos, _ := parseFlags(ts, "restart", fs, args)
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
	st := getState(ts)
	if err := st.stop(); err != nil {
		ts.Fatalf("restart: closing the store: %v", err)
	}
	st.limits = lim
	if err := st.start(payments.Options{Environment: env, TimestampTolerance: *tolerance}); err != nil {
		ts.Fatalf("restart: %v", err)
	}
	ts.Setenv("URL", st.srv.URL)
}

// printJSON writes v to the command's stdout as one line of JSON.
func printJSON(ts *testscript.TestScript, v any) {
	b, err := json.Marshal(v)
	ts.Check(err)
	fmt.Fprintf(ts.Stdout(), "%s\n", b)
}

// cmdCard: card add USER_ID [-brand B] [-last4 DDDD] [-exp MM/YYYY]
func cmdCard(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 2 || args[0] != "add" {
		usage(ts, "card")
	}
	in := payments.NewCard{Brand: "visa", Last4: "4242", ExpMonth: 12, ExpYear: 2030}
	for rest := args[2:]; len(rest) > 0; rest = rest[2:] {
		if len(rest) < 2 {
			usagef(ts, "card", "%s needs a value", rest[0])
		}
		switch rest[0] {
		case "-brand":
			in.Brand = rest[1]
		case "-last4":
			in.Last4 = rest[1]
		case "-exp":
			month, year, ok := parseExpiry(rest[1])
			if !ok {
				usagef(ts, "card", "-exp wants MM/YYYY, not %q", rest[1])
			}
			in.ExpMonth, in.ExpYear = month, year
		default:
			usagef(ts, "card", "unexpected %q", rest[0])
		}
	}
	card, err := getState(ts).svc.AddCard(context.Background(), args[1], in)
	if !done(ts, neg, "card add", err) {
		return
	}
	printJSON(ts, card)
	ts.Setenv("CARD_ID", card.CardID.String())
}

// parseExpiry reads MM/YYYY (the month may have one digit) without judging the date:
// the library does that.
func parseExpiry(s string) (month, year int, ok bool) {
	m, y, found := strings.Cut(s, "/")
	if !found || len(m) < 1 || len(m) > 2 || len(y) != 4 {
		return 0, 0, false
	}
	month, err1 := strconv.Atoi(m)
	year, err2 := strconv.Atoi(y)
	return month, year, err1 == nil && err2 == nil && m[0] != '+' && m[0] != '-' && y[0] != '+' && y[0] != '-'
}

// cmdAddress: address add USER_ID PAYEE_ID FILE
func cmdAddress(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 4 || args[0] != "add" {
		usage(ts, "address")
	}
	svc := getState(ts).svc
	req := payments.Request{
		Path: map[string]string{"user_id": args[1], "payee_id": args[2]},
		Body: []byte(ts.ReadFile(args[3])),
	}
	var in payments.NewPayeeAddress
	err := svc.Decode("addresses_add", req, &in)
	var address payments.PayeeAddress
	if err == nil {
		address, err = svc.AddPayeeAddress(context.Background(), args[1], args[2], in)
	}
	if !done(ts, neg, "address add", err) {
		return
	}
	printJSON(ts, address)
	ts.Setenv("ADDRESS_ID", address.ID.String())
}

// cmdRates: rates set BASE PAYOUT RATE [-fixed] [-at YYYY-MM-DDTHH:MM:SS]
func cmdRates(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 4 || args[0] != "set" {
		usage(ts, "rates")
	}
	for _, arg := range args[1:4] {
		if strings.HasPrefix(arg, "-") {
			usagef(ts, "rates", "BASE, PAYOUT and RATE come before the flags, not %q", arg)
		}
	}
	in := payments.NewExchangeRate{BaseCurrency: args[1], PayoutCurrency: args[2], ExchangeRate: args[3]}
	for rest := args[4:]; len(rest) > 0; rest = rest[1:] {
		switch {
		case rest[0] == "-fixed":
			in.Fixed = true
		case rest[0] == "-at" && len(rest) > 1:
			in.ApplyTime, rest = rest[1], rest[1:]
		default:
			usagef(ts, "rates", "unexpected %q", rest[0])
		}
	}
	rate, err := getState(ts).svc.SetExchangeRate(context.Background(), in)
	if !done(ts, neg, "rates set", err) {
		return
	}
	printJSON(ts, rate)
}

// cmdRules: rules load FILE
func cmdRules(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 || args[0] != "load" {
		usage(ts, "rules")
	}
	n, err := getState(ts).svc.LoadPayeeRules(context.Background(), args[1], []byte(ts.ReadFile(args[1])))
	if !done(ts, neg, "rules load", err) {
		return
	}
	printJSON(ts, map[string]any{"source": args[1], "rules_loaded": n})
}
