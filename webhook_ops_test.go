package payments_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/platform-payments/payments"
	"github.com/platform-payments/payments/internal/outbox"
)

// An endpoint disabled for its failures is told to the platform's other enabled
// endpoints subscribed to webhook_endpoint.disabled, and to no other; the log hook hears
// why.
func TestAutoDisabledEndpointIsTold(t *testing.T) {
	ctx := context.Background()
	svc := mustOpen(t, payments.Options{WebhookAllow: loopback})
	p := mustPlatform(t, svc)
	hook := func(events ...string) payments.WebhookEndpoint {
		e, err := svc.CreateWebhookEndpoint(ctx, p.PlatformID, payments.NewWebhookEndpoint{URL: "http://127.0.0.1:9/x", Events: events})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	gone, watcher := hook("user.created"), hook(payments.EventWebhookEndpointDisabled)
	hook("payee.created") // subscribed to neither
	var logged []string
	svc.Outbox().LogDisabled(func(id, reason string) { logged = append(logged, id, reason) })
	mustUser(t, svc, p.PlatformID, "U", "u@example.com")
	claimed, err := svc.Outbox().ClaimDeliveries(ctx, 10, time.Minute)
	if err != nil || len(claimed) != 1 {
		t.Fatalf("claimed %d, %v", len(claimed), err)
	}
	if err := svc.Outbox().RecordAttempts(ctx, []outbox.AttemptResult{{Delivery: claimed[0], At: time.Now(), StatusCode: 410, Gone: true}},
		outbox.DeliveryPolicy{Schedule: []time.Duration{time.Hour}}); err != nil {
		t.Fatal(err)
	}
	const reason = "The endpoint answered 410 Gone."
	if len(logged) != 2 || logged[0] != gone.ID.String() || logged[1] != reason {
		t.Errorf("logged %q", logged)
	}
	page, err := svc.ListEvents(ctx, p.PlatformID, payments.EventQuery{Type: payments.EventWebhookEndpointDisabled})
	if err != nil || len(page.Events) != 1 {
		t.Fatalf("disabled events %+v, %v", page, err)
	}
	ev := page.Events[0]
	if ev.Data.Object.Type != "webhook_endpoint" || ev.Data.Object.ID != gone.ID.String() || ev.Data.Reason != reason {
		t.Errorf("event data %+v", ev.Data)
	}
	claimed, err = svc.Outbox().ClaimDeliveries(ctx, 10, time.Minute)
	if err != nil || len(claimed) != 1 || claimed[0].EndpointID != watcher.ID.String() || claimed[0].EventID != ev.ID.String() {
		t.Fatalf("deliveries of the disabled event %+v, %v", claimed, err)
	}
	// Disabled by hand: nothing is told.
	if _, err := svc.EnableWebhookEndpoint(ctx, p.PlatformID, gone.ID.String()); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.DisableWebhookEndpoint(ctx, p.PlatformID, gone.ID.String()); err != nil {
		t.Fatal(err)
	}
	if page, _ := svc.ListEvents(ctx, p.PlatformID, payments.EventQuery{Type: payments.EventWebhookEndpointDisabled}); len(page.Events) != 1 {
		t.Errorf("%d disabled events after a disable by hand, want 1", len(page.Events))
	}
}

// Recovery queues what the endpoint did not receive with a 2xx (failed for good, or made
// while it was disabled), not what it received or what waits, nor test events; a second
// recovery queues nothing.
func TestRecoverWebhookEndpoint(t *testing.T) {
	ctx := context.Background()
	svc := mustOpen(t, payments.Options{WebhookAllow: loopback})
	p := mustPlatform(t, svc)
	e, err := svc.CreateWebhookEndpoint(ctx, p.PlatformID, payments.NewWebhookEndpoint{URL: "http://127.0.0.1:9/x"})
	if err != nil {
		t.Fatal(err)
	}
	id := e.ID.String()
	since := svc.Now().Add(-time.Second)
	answer := func(status int) { // the next due delivery answered so, for good
		t.Helper()
		claimed, err := svc.Outbox().ClaimDeliveries(ctx, 10, time.Minute)
		if err != nil || len(claimed) != 1 {
			t.Fatalf("claimed %d, %v", len(claimed), err)
		}
		if err := svc.Outbox().RecordAttempts(ctx, []outbox.AttemptResult{{Delivery: claimed[0], At: time.Now(), StatusCode: status,
			Succeeded: status < 300}}, outbox.DeliveryPolicy{}); err != nil {
			t.Fatal(err)
		}
	}
	mustUser(t, svc, p.PlatformID, "A", "a@example.com")
	answer(200)
	mustUser(t, svc, p.PlatformID, "B", "b@example.com")
	answer(500) // no retry: failed for good
	if _, err := svc.SendTestWebhook(ctx, p.PlatformID, id); err != nil {
		t.Fatal(err)
	}
	answer(500)
	if _, err := svc.DisableWebhookEndpoint(ctx, p.PlatformID, id); err != nil {
		t.Fatal(err)
	}
	mustUser(t, svc, p.PlatformID, "C", "c@example.com")
	recover := func(in payments.WebhookRecovery) (int64, error) {
		r, err := svc.RecoverWebhookEndpoint(ctx, p.PlatformID, id, in)
		return r.Queued, err
	}
	if _, err := recover(payments.WebhookRecovery{Since: since}); payments.ErrorCode(err) != payments.CodeConflict {
		t.Errorf("recovery of a disabled endpoint: %v", err)
	}
	if _, err := svc.EnableWebhookEndpoint(ctx, p.PlatformID, id); err != nil {
		t.Fatal(err)
	}
	now := svc.Now()
	for _, c := range []struct {
		name string
		in   payments.WebhookRecovery
		want int64
		code payments.Code
	}{
		{"too old", payments.WebhookRecovery{Since: now.Add(-payments.MaxRecoveryAge - time.Minute)}, 0, payments.CodeInvalid},
		{"in the future", payments.WebhookRecovery{Since: now.Add(time.Hour)}, 0, payments.CodeInvalid},
		{"ends before it starts", payments.WebhookRecovery{Since: since, Until: &since}, 0, payments.CodeInvalid},
		{"before the events", payments.WebhookRecovery{Since: since.Add(-time.Hour), Until: &since}, 0, ""},
		{"B and C", payments.WebhookRecovery{Since: since}, 2, ""},
		{"again: they wait", payments.WebhookRecovery{Since: since}, 0, ""},
	} {
		got, err := recover(c.in)
		if payments.ErrorCode(err) != c.code || got != c.want {
			t.Errorf("%s: queued %d, %v; want %d, code %q", c.name, got, err, c.want, c.code)
		}
	}
	claimed, err := svc.Outbox().ClaimDeliveries(ctx, 10, time.Minute)
	if err != nil || len(claimed) != 2 {
		t.Fatalf("claimed %d after recovery, %v", len(claimed), err)
	}
	if claimed[0].Attempt*claimed[1].Attempt != 2 { // B's second attempt, C's first, in either order
		t.Errorf("attempt numbers %d, %d", claimed[0].Attempt, claimed[1].Attempt)
	}
	if _, err := svc.RecoverWebhookEndpoint(ctx, p.PlatformID, "7f0c2a4e-1b7d-4c61-9a53-0d8e7f6b5a41", payments.WebhookRecovery{Since: since}); payments.ErrorCode(err) != payments.CodeNotFound {
		t.Errorf("unknown endpoint: %v", err)
	}
	var apiErr *payments.Error
	if _, err := svc.RecoverWebhookEndpoint(ctx, p.PlatformID, "42", payments.WebhookRecovery{Since: since}); !errors.As(err, &apiErr) || apiErr.Code != payments.CodeInvalid {
		t.Errorf("malformed id: %v", err)
	}
}

// Update keeps what is left out, the secret and the status; its answer and Get carry the
// health.
func TestUpdateWebhookEndpoint(t *testing.T) {
	ctx := context.Background()
	svc := mustOpen(t, payments.Options{WebhookAllow: loopback})
	p := mustPlatform(t, svc)
	e, err := svc.CreateWebhookEndpoint(ctx, p.PlatformID, payments.NewWebhookEndpoint{URL: "http://127.0.0.1:9/x", Description: new("d"),
		Events: []string{"user.created"}})
	if err != nil {
		t.Fatal(err)
	}
	id := e.ID.String()
	for _, c := range []struct {
		in          payments.WebhookEndpointUpdate
		url         string
		description *string
		events      []string
	}{
		{payments.WebhookEndpointUpdate{URL: new("http://127.0.0.1:9/y")}, "http://127.0.0.1:9/y", new("d"), []string{"user.created"}},
		{payments.WebhookEndpointUpdate{Events: []string{"payee.created", "card.added"}}, "http://127.0.0.1:9/y", new("d"), []string{"card.added", "payee.created"}},
		{payments.WebhookEndpointUpdate{Description: payments.OptionalText{Set: true, Value: new("e")}}, "http://127.0.0.1:9/y", new("e"), []string{"card.added", "payee.created"}},
		{payments.WebhookEndpointUpdate{Description: payments.OptionalText{Set: true}, Events: []string{"*", "card.added"}}, "http://127.0.0.1:9/y", nil, []string{"*"}},
	} {
		got, err := svc.UpdateWebhookEndpoint(ctx, p.PlatformID, id, c.in)
		if err != nil {
			t.Fatal(err)
		}
		if got.URL != c.url || (got.Description == nil) != (c.description == nil) || got.Description != nil && *got.Description != *c.description ||
			len(got.Events) != len(c.events) || got.Events[0] != c.events[0] || got.Secret != "" || got.EndpointHealth == nil {
			t.Errorf("update %+v: %+v", c.in, got)
		}
		if g, err := svc.GetWebhookEndpoint(ctx, p.PlatformID, id); err != nil || g.URL != got.URL || len(g.Events) != len(got.Events) {
			t.Errorf("get after update: %+v, %v", g, err)
		}
	}
	if _, err := svc.UpdateWebhookEndpoint(ctx, p.PlatformID, id, payments.WebhookEndpointUpdate{}); payments.ErrorCode(err) != payments.CodeInvalid {
		t.Errorf("empty update: %v", err)
	}
	if _, err := svc.UpdateWebhookEndpoint(ctx, p.PlatformID, id, payments.WebhookEndpointUpdate{URL: new("ftp://x")}); payments.ErrorCode(err) != payments.CodeInvalid {
		t.Errorf("ftp URL: %v", err)
	}
	// The secret is kept: a delivery after the update is signed with the one shown at creation.
	mustUser(t, svc, p.PlatformID, "U", "u@example.com")
	claimed, err := svc.Outbox().ClaimDeliveries(ctx, 10, time.Minute)
	if err != nil || len(claimed) != 1 {
		t.Fatalf("claimed %d, %v", len(claimed), err)
	}
	if err := payments.VerifyWebhook(e.Secret, claimed[0].Headers(time.Now()), claimed[0].Payload, 0); err != nil {
		t.Errorf("delivery after update under the first secret: %v", err)
	}
}
