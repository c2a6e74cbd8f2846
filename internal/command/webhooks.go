package command

import (
	"context"
	"strings"

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
