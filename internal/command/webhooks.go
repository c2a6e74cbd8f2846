package command

import (
	"context"
	"flag"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/platform-payments/payments"
)

// A platform's webhook endpoints, as the operator sets them up: the same operations as
// the API's Create, List and Delete Webhook Endpoint, done on the database. The library
// judges the URL and the event types, as it does an API body.

var webhookAdd = &Command{
	Name:    "webhook add",
	Summary: "Register a URL of a platform to receive its events and print the endpoint, with its signing secret, as JSON.",
	Usage:   "-platform ID -url URL [-events a,b] [-description TEXT] [-signature v1|ed25519]",
	Details: `The secret (whsec_…) is shown only once: the receiver verifies every delivery with it
(paymentsd webhook listen -secret, payments.VerifyWebhook). With -signature ed25519 the
deliveries are signed v1a with a private key the service keeps, and the endpoint shows its
public_key (whpk_…) instead, which verifies them the same ways. Without -events the endpoint
receives every type, those added later included (its events are ["*"]). The types are
` + strings.Join(payments.EventTypes(), ", ") + `.
The URL and the types are checked as the API checks Create Webhook Endpoint's body.`,
	Uses: UsesDatabase,
	Sets: []Export{{"WEBHOOK_ID", "id"}, {"WEBHOOK_SECRET", "secret|public_key"}},
	Run:  runWebhookAdd,
}

func runWebhookAdd(ctx context.Context, x *Invocation, args []string) error {
	fs := x.FlagSet()
	platform := idFlag(fs, "platform", "the `ID` of the platform the endpoint belongs to (required)")
	url := fs.String("url", "", "the `URL` deliveries are posted to (required)")
	events := fs.String("events", "", "the event `TYPES` to receive, separated by commas (default: every type, *)")
	description := fs.String("description", "", "a `TEXT` describing the endpoint")
	signature := fs.String("signature", "", "the signature `KIND`: v1 (HMAC-SHA256, the default) or ed25519 (v1a)")
	if err := x.Parse(fs, args); err != nil {
		return err
	}
	if err := required(platform); err != nil {
		return err
	}
	if *url == "" {
		return Usagef("-url is required")
	}
	if err := NoArgs(fs); err != nil {
		return err
	}
	in := payments.NewWebhookEndpoint{URL: *url, Signature: *signature}
	if IsSet(fs, "events") {
		for _, t := range strings.Split(*events, ",") {
			in.Events = append(in.Events, strings.TrimSpace(t))
		}
	}
	if IsSet(fs, "description") {
		in.Description = description
	}
	return x.printResult(ctx, func(svc *payments.Service) (any, error) {
		return svc.CreateWebhookEndpoint(ctx, platform.value, in)
	})
}

var webhookList = &Command{
	Name:    "webhook list",
	Summary: "Print a platform's webhook endpoints, oldest first, as a JSON array (without their secrets).",
	Usage:   "-platform ID",
	Uses:    UsesDatabase,
	Run:     runWebhookList,
}

func runWebhookList(ctx context.Context, x *Invocation, args []string) error {
	fs := x.FlagSet()
	platform := idFlag(fs, "platform", "the `ID` of the platform (required)")
	if err := x.Parse(fs, args); err != nil {
		return err
	}
	if err := required(platform); err != nil {
		return err
	}
	if err := NoArgs(fs); err != nil {
		return err
	}
	return x.printResult(ctx, func(svc *payments.Service) (any, error) {
		endpoints, err := svc.ListWebhookEndpoints(ctx, platform.value)
		if endpoints == nil {
			endpoints = []payments.WebhookEndpoint{} // [], not null
		}
		return endpoints, err
	})
}

var webhookRemove = &Command{
	Name:    "webhook remove",
	Summary: "Delete a webhook endpoint of a platform and print {\"id\", \"deleted\": true}.",
	Usage:   "-platform ID ENDPOINT_ID",
	Details: "The endpoint receives nothing more; its past deliveries stay in the events' history.",
	Uses:    UsesDatabase,
	Run:     runWebhookRemove,
}

func runWebhookRemove(ctx context.Context, x *Invocation, args []string) error {
	fs := x.FlagSet()
	platform := idFlag(fs, "platform", "the `ID` of the platform the endpoint belongs to (required)")
	if err := x.Parse(fs, args); err != nil {
		return err
	}
	if err := required(platform); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return Usagef("want exactly one argument, ENDPOINT_ID; got %d", fs.NArg())
	}
	endpointID, err := parseID("ENDPOINT_ID", "webhook endpoint", fs.Arg(0))
	if err != nil {
		return err
	}
	return x.printResult(ctx, func(svc *payments.Service) (any, error) {
		return svc.DeleteWebhookEndpoint(ctx, platform.value, endpointID.String())
	})
}

// The operations on one endpoint (issue 32): get, update, disable, enable, recover, a test
// event and the attempts list, as the API's routes of the same names do them.

var webhookGet = &Command{
	Name:    "webhook get",
	Summary: "Print a webhook endpoint of a platform, with its health, as JSON (without its secret).",
	Usage:   "-platform ID ENDPOINT_ID",
	Uses:    UsesDatabase,
	Run: endpointCommand(nil, func(ctx context.Context, svc *payments.Service, platform uuid.UUID, endpoint string) (any, error) {
		return svc.GetWebhookEndpoint(ctx, platform, endpoint)
	}),
}

var webhookUpdate = &Command{
	Name:    "webhook update",
	Summary: "Change a webhook endpoint's URL, event types, description or kind of signature, and print it as JSON.",
	Usage:   "-platform ID [-url URL] [-events a,b] [-description TEXT | -no-description] [-signature v1|ed25519] ENDPOINT_ID",
	Details: "What is not given stays as it is: the secret too, unless -signature changes the endpoint's kind (a rotation to a key of the other kind: the new v1 secret is printed once, or the new public key). The URL and the types are checked as the API checks Update Webhook Endpoint's body.",
	Uses:    UsesDatabase,
	Run:     runWebhookUpdate,
}

func runWebhookUpdate(ctx context.Context, x *Invocation, args []string) error {
	var in payments.WebhookEndpointUpdate
	return endpointCommand(func(fs *flag.FlagSet) func() error {
		url := fs.String("url", "", "the new `URL`")
		events := fs.String("events", "", "the new event `TYPES`, separated by commas (* for every type)")
		description := fs.String("description", "", "the new `TEXT` describing the endpoint")
		none := fs.Bool("no-description", false, "remove the endpoint's description")
		signature := fs.String("signature", "", "sign with `KIND`: v1 (HMAC) or ed25519 (v1a)")
		return func() error {
			if IsSet(fs, "signature") {
				in.Signature = signature
			}
			if IsSet(fs, "url") {
				in.URL = url
			}
			if IsSet(fs, "events") {
				for _, t := range strings.Split(*events, ",") {
					in.Events = append(in.Events, strings.TrimSpace(t))
				}
			}
			if IsSet(fs, "description") || *none {
				in.Description = payments.OptionalText{Set: true}
				if !*none {
					in.Description.Value = description
				}
			}
			return nil
		}
	}, func(ctx context.Context, svc *payments.Service, platform uuid.UUID, endpoint string) (any, error) {
		return svc.UpdateWebhookEndpoint(ctx, platform, endpoint, in)
	})(ctx, x, args)
}

var webhookDisable = &Command{
	Name:    "webhook disable",
	Summary: "Pause a webhook endpoint by hand (it receives nothing until enabled) and print it as JSON.",
	Usage:   "-platform ID ENDPOINT_ID",
	Uses:    UsesDatabase,
	Run: endpointCommand(nil, func(ctx context.Context, svc *payments.Service, platform uuid.UUID, endpoint string) (any, error) {
		return svc.DisableWebhookEndpoint(ctx, platform, endpoint)
	}),
}

var webhookEnable = &Command{
	Name:    "webhook enable",
	Summary: "Enable a disabled webhook endpoint again, forgetting its failures, and print it as JSON.",
	Usage:   "-platform ID ENDPOINT_ID",
	Details: "The events it missed meanwhile are sent with paymentsd webhook recover.",
	Uses:    UsesDatabase,
	Run: endpointCommand(nil, func(ctx context.Context, svc *payments.Service, platform uuid.UUID, endpoint string) (any, error) {
		return svc.EnableWebhookEndpoint(ctx, platform, endpoint)
	}),
}

var webhookRecover = &Command{
	Name:    "webhook recover",
	Summary: "Queue again, to an enabled endpoint, every event of its types since a time that it did not receive with a 2xx; print {\"endpoint_id\", \"queued\"}.",
	Usage:   "-platform ID -since TIME [-until TIME] ENDPOINT_ID",
	Details: "TIME is RFC 3339 (2026-01-02T15:04:05Z); -since at most 30 days ago. An event waiting for the endpoint already is not queued again.",
	Uses:    UsesDatabase,
	Run:     runWebhookRecover,
}

func runWebhookRecover(ctx context.Context, x *Invocation, args []string) error {
	var in payments.WebhookRecovery
	return endpointCommand(func(fs *flag.FlagSet) func() error {
		since := fs.String("since", "", "recover the events created from `TIME` on (RFC 3339, required)")
		until := fs.String("until", "", "and before `TIME` (RFC 3339; default now)")
		return func() (err error) {
			if in.Since, err = time.Parse(time.RFC3339Nano, *since); err != nil {
				return Usagef("-since %q: want an RFC 3339 time, such as 2026-01-02T15:04:05Z", *since)
			}
			if IsSet(fs, "until") {
				t, err := time.Parse(time.RFC3339Nano, *until)
				if err != nil {
					return Usagef("-until %q: want an RFC 3339 time", *until)
				}
				in.Until = &t
			}
			return nil
		}
	}, func(ctx context.Context, svc *payments.Service, platform uuid.UUID, endpoint string) (any, error) {
		return svc.RecoverWebhookEndpoint(ctx, platform, endpoint, in)
	})(ctx, x, args)
}

var webhookTest = &Command{
	Name:    "webhook test",
	Summary: "Send an enabled endpoint, and it alone, a signed webhook.test event; print the event as JSON.",
	Usage:   "-platform ID ENDPOINT_ID",
	Details: "The dispatcher of a running paymentsd serve sends it; its attempts are the event's (events get).",
	Uses:    UsesDatabase,
	Run: endpointCommand(nil, func(ctx context.Context, svc *payments.Service, platform uuid.UUID, endpoint string) (any, error) {
		return svc.SendTestWebhook(ctx, platform, endpoint)
	}),
}

var webhookAttempts = &Command{
	Name:    "webhook attempts",
	Summary: "Print a page of an endpoint's delivery attempts, newest first, as JSON {\"attempts\", \"has_more\"}.",
	Usage:   "-platform ID [-after ATTEMPT_ID] [-limit N] ENDPOINT_ID",
	Uses:    UsesDatabase,
	Run:     runWebhookAttempts,
}

func runWebhookAttempts(ctx context.Context, x *Invocation, args []string) error {
	var q payments.EventQuery
	return endpointCommand(func(fs *flag.FlagSet) func() error {
		after := fs.String("after", "", "the page after the attempt `ATTEMPT_ID` (the last id of the page before)")
		limit := fs.String("limit", "", "at most `N` attempts, 1 to 100 (default 20)")
		return func() error {
			q.After, q.Limit = *after, *limit
			return nil
		}
	}, func(ctx context.Context, svc *payments.Service, platform uuid.UUID, endpoint string) (any, error) {
		return svc.ListWebhookAttempts(ctx, platform, endpoint, q)
	})(ctx, x, args)
}

// endpointCommand runs a command whose words are -platform ID, the flags flags declares
// (its function, run once they are parsed, checks them) and one ENDPOINT_ID, and prints
// what op returns.
func endpointCommand(flags func(fs *flag.FlagSet) func() error,
	op func(ctx context.Context, svc *payments.Service, platform uuid.UUID, endpoint string) (any, error)) func(context.Context, *Invocation, []string) error {
	return func(ctx context.Context, x *Invocation, args []string) error {
		fs := x.FlagSet()
		platform := idFlag(fs, "platform", "the `ID` of the platform the endpoint belongs to (required)")
		check := func() error { return nil }
		if flags != nil {
			check = flags(fs)
		}
		if err := x.Parse(fs, args); err != nil {
			return err
		}
		if err := required(platform); err != nil {
			return err
		}
		if fs.NArg() != 1 {
			return Usagef("want exactly one argument, ENDPOINT_ID; got %d", fs.NArg())
		}
		endpointID, err := parseID("ENDPOINT_ID", "webhook endpoint", fs.Arg(0))
		if err != nil {
			return err
		}
		if err := check(); err != nil {
			return err
		}
		return x.printResult(ctx, func(svc *payments.Service) (any, error) {
			return op(ctx, svc, platform.value, endpointID.String())
		})
	}
}
