package main

// paymentsd webhook probe: checks a webhook receiver from outside, as a platform's
// developer runs it against the receiver they wrote.

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"strings"
	"time"

	"github.com/platform-payments/payments/dispatch"
	"github.com/platform-payments/payments/internal/command"
	"github.com/platform-payments/payments/internal/webhook"
	"github.com/platform-payments/payments/internal/webhook/egress"
	"github.com/platform-payments/payments/internal/webhook/probe"
)

var webhookProbeCommand = &command.Command{
	Name:    "webhook probe",
	Summary: "Send a webhook receiver the deliveries it must tell apart and report whether it answered each as it should.",
	Usage:   "-secret whsec_…|whsk_… [-webhook-allow-cidr CIDR]... [-timeout 15s] [-json] URL",
	Details: `The cases, each signed with -secret as deliveries are (a whsec_ secret signs v1; a whsk_
ed25519 private key signs v1a, for a receiver that holds its whpk_ public key):
  valid delivery                              expects 2xx
  same webhook-id again                       expects 2xx (whether it acted twice is reported
                                              as "cannot tell": it cannot be seen from outside)
  timestamp 10 minutes old, 10 minutes ahead  expect a refusal (4xx)
  wrong signature, no signature               expect a refusal (4xx)
  valid signature beside a stale one          expects 2xx (a rotation)
  unknown v2 signature beside a valid one     expects 2xx
  1 MiB body                                  expects 2xx
A refusal must be 4xx: a 5xx asks the sender to retry. Each case is printed as one line,
"pass", "fail" or "cannot tell" and why (-json: one JSON array). The URL obeys the rules of
endpoints' URLs, and the probe connects only where deliveries may: public addresses, and
the ranges -webhook-allow-cidr (else $PAYMENTS_WEBHOOK_ALLOW_CIDR) allows (127.0.0.0/8 for a
receiver on this machine), as serve. Exit
status 1 when a case fails.`,
	Run: runWebhookProbe,
}

func runWebhookProbe(ctx context.Context, x *command.Invocation, args []string) error {
	fs := x.FlagSet()
	secret := fs.String("secret", "", "sign with the receiver's `KEY`: its whsec_ secret, or a whsk_ private key whose whpk_ public key it holds")
	timeout := fs.Duration("timeout", dispatch.DefaultTimeout, "give up on a case after `DURATION`")
	asJSON := fs.Bool("json", false, "print the results as one JSON array")
	var allow []netip.Prefix
	fs.Func("webhook-allow-cidr", "let the receiver be at addresses in `CIDR` although not public, e.g. 127.0.0.0/8, as serve's flag "+
		"(comma-separated or repeated; default $"+envAllowCIDR+")", func(v string) error {
		ranges, err := dispatch.ParseCIDRs(v)
		allow = append(allow, ranges...)
		return err
	})
	if err := x.Parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return command.Usagef("want one URL, the receiver's")
	}
	url := fs.Arg(0)
	if *secret == "" {
		return command.Usagef("-secret is required: the receiver's whsec_ secret, or a whsk_ private key")
	}
	key, err := webhook.ParseSecret(*secret)
	if err != nil {
		return command.Usagef("-secret: %v", err)
	}
	if strings.HasPrefix(strings.TrimSpace(*secret), "whpk_") {
		return command.Usagef("-secret: a whpk_ public key verifies but cannot sign: give the whsk_ private key whose public key the receiver holds")
	}
	if *timeout <= 0 {
		return command.Usagef("-timeout must be positive")
	}
	if v := os.Getenv(envAllowCIDR); allow == nil && v != "" {
		if allow, err = dispatch.ParseCIDRs(v); err != nil {
			return command.Usagef("$%s: %v", envAllowCIDR, err)
		}
	}
	if err := webhook.CheckURL(url, false, allow...); err != nil {
		return command.Usagef("%s: %v", url, err)
	}
	client := egress.NewClient(webhook.NewDialer(allow, *timeout), *timeout)
	results := probe.Run(ctx, probe.Config{URL: url, Key: key, Client: client, Now: time.Now})
	if *asJSON {
		if err := x.PrintJSON(results); err != nil {
			return err
		}
	} else {
		for _, r := range results {
			fmt.Fprintf(x.Stdout, "%-11s  %s: %s\n", r.Outcome, r.Case, r.Detail)
		}
	}
	if probe.Failed(results) {
		n := 0
		for _, r := range results {
			if r.Outcome == probe.Fail {
				n++
			}
		}
		return fmt.Errorf("%d of %d cases failed", n, len(results))
	}
	if ctx.Err() != nil {
		return errors.New("stopped before every case was sent")
	}
	return nil
}
