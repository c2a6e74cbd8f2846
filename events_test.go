package payments_test

import (
	"context"
	"encoding/json"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/platform-payments/payments"
	"github.com/platform-payments/payments/internal/outbox"
)

// Events: each change writes its event in its own transaction; a refused change and an
// idempotent replay write none; endpoints subscribed to a type get one delivery each.

var loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}

// eventTypes lists the types of the platform's events, oldest first.
func eventTypes(tb testing.TB, svc *payments.Service, platformID uuid.UUID) []string {
	tb.Helper()
	page, err := svc.ListEvents(context.Background(), platformID, payments.EventQuery{Limit: "100"})
	if err != nil {
		tb.Fatal(err)
	}
	var out []string
	for _, e := range page.Events {
		out = append(out, e.Type)
	}
	return out
}

func TestEventsWrittenWithTheChange(t *testing.T) {
	ctx := context.Background()
	svc := mustOpen(t)
	p := mustPlatform(t, svc)
	u := mustUser(t, svc, p.PlatformID, "Ada", "ada@example.com")

	// Refused: a duplicate email writes nothing, event included.
	if _, err := svc.CreateUser(ctx, p.PlatformID, payments.NewUser{Name: "Ada", Email: ptr("ADA@example.com")}); err == nil {
		t.Fatal("duplicate email accepted")
	}
	// Replayed: one event for one key, however many calls.
	for range 3 {
		idem := &payments.Idempotency{Key: "k-1"}
		if _, err := svc.CreateUser(ctx, p.PlatformID, payments.NewUser{Name: "Bob", Email: ptr("bob@example.com")}, payments.WithKey(idem)); err != nil {
			t.Fatal(err)
		}
	}
	if err := svc.VerifyUser(ctx, u.UserID.String()); err != nil {
		t.Fatal(err)
	}
	if err := svc.VerifyUser(ctx, u.UserID.String()); err != nil { // changes nothing: no event
		t.Fatal(err)
	}
	if err := svc.FailUserVerification(ctx, u.UserID.String(), payments.VerificationFailure{Reason: "document expired"}); err != nil {
		t.Fatal(err)
	}
	card := mustCard(t, svc, u.UserID)
	if _, err := svc.DeleteCard(ctx, p.PlatformID, u.UserID.String(), payments.CardDeletion{CardID: card.CardID.String()}); err != nil {
		t.Fatal(err)
	}
	want := []string{"user.created", "user.created", "user.verification.succeeded", "user.verification.failed", "card.added", "card.deleted"}
	if got := eventTypes(t, svc, p.PlatformID); !slices.Equal(got, want) {
		t.Fatalf("events %q, want %q", got, want)
	}

	page, err := svc.ListEvents(ctx, p.PlatformID, payments.EventQuery{Type: "user.verification.failed"})
	if err != nil || len(page.Events) != 1 {
		t.Fatalf("filtered list: %+v, %v", page, err)
	}
	ev := page.Events[0]
	raw, _ := json.Marshal(ev)
	for _, member := range []string{`"reason":"document expired"`, `"object":{"type":"user","id":"` + u.UserID.String() + `"}`, `"environment":"sandbox"`} {
		if !strings.Contains(string(raw), member) {
			t.Errorf("event %s lacks %s", raw, member)
		}
	}
	if strings.Contains(string(raw), "ada@example.com") {
		t.Errorf("event %s shows the email", raw)
	}
	if ev.ID.Version() != 7 {
		t.Errorf("event id %s is version %d, want 7", ev.ID, ev.ID.Version())
	}
	// Another platform sees none of them.
	other := mustPlatform(t, svc)
	if got := eventTypes(t, svc, other.PlatformID); len(got) != 0 {
		t.Errorf("another platform's events: %q", got)
	}
	if _, err := svc.GetEvent(ctx, other.PlatformID, ev.ID.String()); payments.ErrorCode(err) != payments.CodeNotFound {
		t.Errorf("another platform's event: %v, want not found", err)
	}
}

func TestEventsList(t *testing.T) {
	ctx := context.Background()
	svc := mustOpen(t)
	p := mustPlatform(t, svc)
	for i := range 5 {
		mustUser(t, svc, p.PlatformID, "U", "u"+string(rune('a'+i))+"@example.com")
	}
	var seen []uuid.UUID
	after := ""
	for {
		page, err := svc.ListEvents(ctx, p.PlatformID, payments.EventQuery{After: after, Limit: "2"})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range page.Events {
			seen = append(seen, e.ID)
		}
		if !page.HasMore {
			break
		}
		after = page.Events[len(page.Events)-1].ID.String()
	}
	if len(seen) != 5 || !slices.IsSortedFunc(seen, func(a, b uuid.UUID) int { return strings.Compare(a.String(), b.String()) }) {
		t.Fatalf("paged through %v", seen)
	}
	for _, q := range []payments.EventQuery{{Limit: "0"}, {Limit: "101"}, {Limit: "x"}, {After: "nope"}, {Type: "user.deleted"}} {
		if _, err := svc.ListEvents(ctx, p.PlatformID, q); payments.ErrorCode(err) != payments.CodeInvalid {
			t.Errorf("%+v: %v, want invalid", q, err)
		}
	}
}

func TestWebhookEndpoints(t *testing.T) {
	ctx := context.Background()
	svc := mustOpen(t, payments.Options{WebhookAllow: loopback})
	p := mustPlatform(t, svc)

	all, err := svc.CreateWebhookEndpoint(ctx, p.PlatformID, payments.NewWebhookEndpoint{URL: "http://127.0.0.1:9/all"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(all.Secret, "whsec_") || !slices.Equal(all.Events, []string{"*"}) || all.Status != payments.EndpointEnabled {
		t.Fatalf("created %+v", all)
	}
	some, err := svc.CreateWebhookEndpoint(ctx, p.PlatformID, payments.NewWebhookEndpoint{
		URL: "http://[::1]:9/some", Events: []string{"card.added"}, Description: ptr("cards"),
	})
	if err != nil {
		t.Fatal(err)
	}
	list, err := svc.ListWebhookEndpoints(ctx, p.PlatformID)
	if err != nil || len(list) != 2 || list[0].Secret != "" || !slices.Equal(list[1].Events, []string{"card.added"}) {
		t.Fatalf("list %+v, %v", list, err)
	}

	u := mustUser(t, svc, p.PlatformID, "Ada", "ada@example.com") // to "all" only
	mustCard(t, svc, u.UserID)                                    // to both
	claimed, err := svc.Outbox().ClaimDeliveries(ctx, 10, time.Minute)
	if err != nil || len(claimed) != 3 {
		t.Fatalf("claimed %d, %v; want 3", len(claimed), err)
	}
	if again, _ := svc.Outbox().ClaimDeliveries(ctx, 10, time.Minute); len(again) != 0 {
		t.Fatalf("claimed under a lease again: %d", len(again))
	}
	h := claimed[0].Headers(time.Now())
	if err := payments.VerifyWebhook(all.Secret, h, claimed[0].Payload, 0); err != nil {
		t.Fatalf("delivery does not verify under the endpoint's secret: %v", err)
	}

	// Rotation: both secrets sign.
	rotated, err := svc.RotateWebhookSecret(ctx, p.PlatformID, all.ID.String())
	if err != nil || rotated.Secret == all.Secret || !strings.HasPrefix(rotated.Secret, "whsec_") {
		t.Fatalf("rotated %+v, %v", rotated, err)
	}
	mustUser(t, svc, p.PlatformID, "Bob", "bob@example.com")
	fresh, err := svc.Outbox().ClaimDeliveries(ctx, 10, time.Minute)
	if err != nil || len(fresh) != 1 {
		t.Fatalf("claimed %d, %v; want 1", len(fresh), err)
	}
	for _, secret := range []string{all.Secret, rotated.Secret} {
		if err := payments.VerifyWebhook(secret, fresh[0].Headers(time.Now()), fresh[0].Payload, 0); err != nil {
			t.Errorf("after rotation: %v", err)
		}
	}

	// A 410 disables; enable brings it back.
	err = svc.Outbox().RecordAttempts(ctx, []outbox.AttemptResult{{Delivery: fresh[0], At: time.Now(), StatusCode: 410, Error: "status 410", Gone: true}},
		outbox.DeliveryPolicy{Schedule: []time.Duration{time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	list, _ = svc.ListWebhookEndpoints(ctx, p.PlatformID)
	if list[0].Status != payments.EndpointDisabled || list[0].DisabledReason == nil {
		t.Fatalf("after 410: %+v", list[0])
	}
	detail, err := svc.GetEvent(ctx, p.PlatformID, fresh[0].EventID)
	if err != nil || len(detail.Attempts) != 1 || *detail.Attempts[0].StatusCode != 410 {
		t.Fatalf("event detail %+v, %v", detail, err)
	}
	if _, err := svc.ResendEvent(ctx, p.PlatformID, fresh[0].EventID, payments.Resend{EndpointID: ptr(all.ID.String())}); payments.ErrorCode(err) != payments.CodeConflict {
		t.Fatalf("resend to a disabled endpoint: %v", err)
	}
	if e, err := svc.EnableWebhookEndpoint(ctx, p.PlatformID, all.ID.String()); err != nil || e.Status != payments.EndpointEnabled {
		t.Fatalf("enable: %+v, %v", e, err)
	}
	resent, err := svc.ResendEvent(ctx, p.PlatformID, fresh[0].EventID, payments.Resend{})
	if err != nil || len(resent.EndpointIDs) != 1 || resent.EndpointIDs[0] != all.ID {
		t.Fatalf("resend: %+v, %v", resent, err)
	}
	if again, _ := svc.Outbox().ClaimDeliveries(ctx, 10, time.Minute); len(again) != 1 || again[0].Attempt != 2 {
		t.Fatalf("after resend claimed %+v", again)
	}

	if _, err := svc.DeleteWebhookEndpoint(ctx, p.PlatformID, some.ID.String()); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.DeleteWebhookEndpoint(ctx, p.PlatformID, some.ID.String()); payments.ErrorCode(err) != payments.CodeNotFound {
		t.Fatalf("second delete: %v", err)
	}
}

func TestWebhookEndpointURLs(t *testing.T) {
	ctx := context.Background()
	svc := mustOpen(t)
	p := mustPlatform(t, svc)
	for _, url := range []string{"http://127.0.0.1/x", "http://[::1]/x", "http://localhost/x", "ftp://example.com/x",
		"https://user:pw@example.com/x", "http://10.0.0.1/x", "http://169.254.169.254/x", "https://example.com/" + strings.Repeat("a", 2048)} {
		_, err := svc.CreateWebhookEndpoint(ctx, p.PlatformID, payments.NewWebhookEndpoint{URL: url})
		if e := errorOf(t, err, payments.CodeInvalid); len(e.Fields) != 1 || e.Fields[0].Loc[1] != "url" {
			t.Errorf("%.40s: %+v", url, e)
		}
	}
	if _, err := svc.CreateWebhookEndpoint(ctx, p.PlatformID, payments.NewWebhookEndpoint{URL: "https://hooks.example.com/x", Events: []string{"user.deleted"}}); payments.ErrorCode(err) != payments.CodeInvalid {
		t.Errorf("unknown event type: %v", err)
	}
	if got := eventTypes(t, svc, p.PlatformID); len(got) != 0 {
		t.Errorf("refused endpoints wrote events %q", got)
	}
}

func TestGlobalEventsGoToSubscribedPlatforms(t *testing.T) {
	ctx := context.Background()
	svc := mustOpen(t, payments.Options{WebhookAllow: loopback})
	subscribed, bystander := mustPlatform(t, svc), mustPlatform(t, svc)
	if _, err := svc.CreateWebhookEndpoint(ctx, subscribed.PlatformID, payments.NewWebhookEndpoint{
		URL: "http://127.0.0.1:9/x", Events: []string{"exchange_rate.updated"},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.SetExchangeRate(ctx, payments.NewExchangeRate{BaseCurrency: "USD", PayoutCurrency: "INR", ExchangeRate: "83.12"}); err != nil {
		t.Fatal(err)
	}
	page, err := svc.ListEvents(ctx, subscribed.PlatformID, payments.EventQuery{})
	if err != nil || len(page.Events) != 1 {
		t.Fatalf("subscribed platform's events %+v, %v", page, err)
	}
	o := page.Events[0].Data.Object
	if o.Type != "exchange_rate" || o.BaseCurrency != "USD" || o.PayoutCurrency != "INR" || o.ExchangeRate != "83.12" {
		t.Errorf("rate event object %+v", o)
	}
	if got := eventTypes(t, svc, bystander.PlatformID); len(got) != 0 {
		t.Errorf("a platform without endpoints got %q", got)
	}
}

func TestEndpointFailingForDaysIsDisabled(t *testing.T) {
	ctx := context.Background()
	svc := mustOpen(t, payments.Options{WebhookAllow: loopback})
	p := mustPlatform(t, svc)
	if _, err := svc.CreateWebhookEndpoint(ctx, p.PlatformID, payments.NewWebhookEndpoint{URL: "http://127.0.0.1:9/x"}); err != nil {
		t.Fatal(err)
	}
	policy := outbox.DeliveryPolicy{Schedule: []time.Duration{time.Hour, time.Hour}}
	start := time.Now()
	// Failures at the start, 3 days and 5 days later (each a new event, so each is due).
	for i, at := range []time.Time{start, start.Add(72 * time.Hour), start.Add(payments.DisableAfter)} {
		mustUser(t, svc, p.PlatformID, "U", "u"+string(rune('a'+i))+"@example.com")
		claimed, err := svc.Outbox().ClaimDeliveries(ctx, 10, time.Minute)
		if err != nil || len(claimed) != 1 {
			t.Fatalf("claimed %d, %v", len(claimed), err)
		}
		if err := svc.Outbox().RecordAttempts(ctx, []outbox.AttemptResult{{Delivery: claimed[0], At: at, StatusCode: 500, Error: "status 500"}}, policy); err != nil {
			t.Fatal(err)
		}
		list, _ := svc.ListWebhookEndpoints(ctx, p.PlatformID)
		if disabled := list[0].Status == payments.EndpointDisabled; disabled != (i == 2) {
			t.Fatalf("after failing for %v: %s", at.Sub(start), list[0].Status)
		}
	}
}

func TestPruneEvents(t *testing.T) {
	ctx := context.Background()
	svc := mustOpen(t, payments.Options{WebhookAllow: loopback})
	p := mustPlatform(t, svc)
	if _, err := svc.CreateWebhookEndpoint(ctx, p.PlatformID, payments.NewWebhookEndpoint{URL: "http://127.0.0.1:9/x"}); err != nil {
		t.Fatal(err)
	}
	mustUser(t, svc, p.PlatformID, "U", "u@example.com")
	claimed, _ := svc.Outbox().ClaimDeliveries(ctx, 10, time.Minute)
	if err := svc.Outbox().RecordAttempts(ctx, []outbox.AttemptResult{{Delivery: claimed[0], At: time.Now(), StatusCode: 200, Succeeded: true}}, outbox.DeliveryPolicy{}); err != nil {
		t.Fatal(err)
	}
	if n, err := svc.Outbox().PruneEvents(ctx, time.Now().Add(-time.Hour)); err != nil || n != 0 {
		t.Fatalf("pruned %d recent events, %v", n, err)
	}
	if n, err := svc.Outbox().PruneEvents(ctx, time.Now().Add(time.Hour)); err != nil || n != 1 {
		t.Fatalf("pruned %d, %v; want 1", n, err)
	}
	if got := eventTypes(t, svc, p.PlatformID); len(got) != 0 {
		t.Fatalf("after pruning: %q", got)
	}
	if n, _, err := svc.Outbox().PendingDeliveries(ctx); err != nil || n != 0 {
		t.Fatalf("pending after pruning: %d, %v", n, err)
	}
}

// A key rotation reseals webhook secrets, the previous one of a rotated secret included;
// deliveries are signed under both afterwards as before.
func TestRotateKeysResealsWebhookSecrets(t *testing.T) {
	ctx := context.Background()
	path := newDSN(t)
	oldKey, newKey := payments.NewDataKey(), payments.NewDataKey()
	old := mustOpenFile(t, path, payments.Options{DataKeys: []payments.DataKey{oldKey}, WebhookAllow: loopback})
	p := mustPlatform(t, old)
	first, err := old.CreateWebhookEndpoint(ctx, p.PlatformID, payments.NewWebhookEndpoint{URL: "http://127.0.0.1:9/x"})
	if err != nil {
		t.Fatal(err)
	}
	second, err := old.RotateWebhookSecret(ctx, p.PlatformID, first.ID.String())
	if err != nil {
		t.Fatal(err)
	}
	old.Close()

	svc := mustOpenFile(t, path, payments.Options{DataKeys: []payments.DataKey{newKey, oldKey}, WebhookAllow: loopback})
	if _, err := svc.DataKeys().Rotate(ctx, payments.RotateOptions{}); err != nil {
		t.Fatal(err)
	}
	keys, err := svc.DataKeys().List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if k.KeyID == oldKey.ID() && (k.Values != 0 || k.RetiredAt == nil) {
			t.Fatalf("the old key after the rotation: %+v", k)
		}
	}
	svc.Close()

	fresh := mustOpenFile(t, path, payments.Options{DataKeys: []payments.DataKey{newKey}, WebhookAllow: loopback})
	mustUser(t, fresh, p.PlatformID, "Ada", "ada@example.com")
	claimed, err := fresh.Outbox().ClaimDeliveries(ctx, 10, time.Minute)
	if err != nil || len(claimed) != 1 {
		t.Fatalf("claimed %d, %v", len(claimed), err)
	}
	for _, secret := range []string{first.Secret, second.Secret} {
		if err := payments.VerifyWebhook(secret, claimed[0].Headers(time.Now()), claimed[0].Payload, 0); err != nil {
			t.Errorf("after the key rotation: %v", err)
		}
	}
}

// A production platform's endpoint is https only, whichever service registers it (the
// administration commands open a sandbox service).
func TestProductionEndpointsAreHTTPS(t *testing.T) {
	ctx := context.Background()
	svc := mustOpen(t)
	p, err := svc.CreatePlatform(ctx, "Live", payments.Production)
	if err != nil {
		t.Fatal(err)
	}
	_, err = svc.CreateWebhookEndpoint(ctx, p.PlatformID, payments.NewWebhookEndpoint{URL: "http://hooks.example.com/x"})
	if e := errorOf(t, err, payments.CodeInvalid); e.Fields[0].Msg != "URL scheme should be 'https' in production" {
		t.Fatalf("%+v", e)
	}
	if _, err := svc.CreateWebhookEndpoint(ctx, p.PlatformID, payments.NewWebhookEndpoint{URL: "https://hooks.example.com/x"}); err != nil {
		t.Fatal(err)
	}
}
