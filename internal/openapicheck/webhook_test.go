package openapicheck_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/platform-payments/payments"
	"github.com/platform-payments/payments/internal/openapicheck"
)

var (
	checkerOnce sync.Once
	checker     *openapicheck.Checker
	checkerErr  error
)

// docChecker returns a Checker of the module's openapi.json.
func docChecker(t *testing.T) *openapicheck.Checker {
	t.Helper()
	checkerOnce.Do(func() { checker, checkerErr = openapicheck.New(payments.OpenAPI()) })
	if checkerErr != nil {
		t.Fatal(checkerErr)
	}
	return checker
}

// deliveryHeader returns the headers of a delivery, as the dispatcher sends them.
func deliveryHeader() http.Header {
	return http.Header{
		"Content-Type":      {"application/json"},
		"Webhook-Id":        {"0190a8b2-4f6e-7c3d-9a1b-2c3d4e5f6a7b"},
		"Webhook-Timestamp": {"1614265330"},
		"Webhook-Signature": {"v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE= v1,bm90IGEgc2lnbmF0dXJl"},
	}
}

// validEvents returns an event of every type, with the data the service writes for it.
func validEvents() map[string]payments.Event {
	user := payments.EventObject{Type: "user", ID: uuid.NewString()}
	owned := func(typ string) payments.EventObject {
		return payments.EventObject{Type: typ, ID: uuid.NewString(), UserID: uuid.NewString()}
	}
	ofPayee := func(typ string) payments.EventObject {
		o := owned(typ)
		o.PayeeID = uuid.NewString()
		return o
	}
	changed := []string{"name", "email"}
	data := map[string]payments.EventData{
		payments.EventUserCreated:               {Object: user},
		payments.EventUserVerificationSucceeded: {Object: user},
		payments.EventUserVerificationFailed:    {Object: user, Reason: "Document expired."},
		payments.EventBankAccountAdded:          {Object: owned("bank_account")},
		payments.EventCardAdded:                 {Object: owned("card")},
		payments.EventCardDeleted:               {Object: owned("card")},
		payments.EventPayeeCreated:              {Object: owned("payee")},
		payments.EventPayeeUpdated:              {Object: owned("payee"), Changed: &changed},
		payments.EventPayeeBankAdded:            {Object: ofPayee("payee_bank")},
		payments.EventPayeeBankDeleted:          {Object: owned("payee_bank")},
		payments.EventPayeeAddressAdded:         {Object: ofPayee("payee_address")},
		payments.EventExchangeRateUpdated: {Object: payments.EventObject{Type: "exchange_rate", ID: "USD-MXN",
			BaseCurrency: "USD", PayoutCurrency: "MXN", ExchangeRate: "17.0525"}},
		payments.EventPayeeRulesUpdated: {Object: payments.EventObject{Type: "payee_rules", ID: "payee_rules",
			Countries: []string{"MX", "US"}}},
		payments.EventWebhookTest: {Object: payments.EventObject{Type: "webhook_endpoint", ID: uuid.NewString()}},
		payments.EventWebhookEndpointDisabled: {Object: payments.EventObject{Type: "webhook_endpoint", ID: uuid.NewString()},
			Reason: "The endpoint answered 410 Gone."},
	}
	out := map[string]payments.Event{}
	for typ, d := range data {
		out[typ] = payments.Event{
			ID: uuid.Must(uuid.NewV7()), Type: typ, Timestamp: time.Date(2026, 11, 23, 10, 0, 0, 123456789, time.UTC),
			PlatformID: uuid.New(), Environment: payments.Sandbox, Data: d,
		}
	}
	return out
}

func marshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestCheckWebhookEveryType: an event of every type the service emits passes, and every
// type has an entry.
func TestCheckWebhookEveryType(t *testing.T) {
	c := docChecker(t)
	events := validEvents()
	for _, typ := range payments.EventTypes() {
		ev, ok := events[typ]
		if !ok {
			t.Errorf("%s: no event of this type in the test", typ)
			continue
		}
		if err := c.CheckWebhook(deliveryHeader(), marshal(t, ev)); err != nil {
			t.Errorf("%s: %v", typ, err)
		}
	}
	if len(events) != len(payments.EventTypes()) {
		t.Errorf("the test has %d event types, the service %d", len(events), len(payments.EventTypes()))
	}
}

// TestCheckWebhookRefuses: a body that is not its type's exact event, an unknown type or
// a missing header fails, saying why.
func TestCheckWebhookRefuses(t *testing.T) {
	c := docChecker(t)
	events := validEvents()
	// edit returns the JSON of an event of typ, changed by f on its generic form.
	edit := func(typ string, f func(ev map[string]any)) []byte {
		var ev map[string]any
		if err := json.Unmarshal(marshal(t, events[typ]), &ev); err != nil {
			t.Fatal(err)
		}
		f(ev)
		return marshal(t, ev)
	}
	object := func(ev map[string]any) map[string]any {
		return ev["data"].(map[string]any)["object"].(map[string]any)
	}
	for _, tc := range []struct {
		name   string
		header func(http.Header)
		body   []byte
		want   []string // in the message
		noHook bool     // ErrNoWebhook
	}{
		{name: "unknown member at the top", body: edit(payments.EventUserCreated, func(ev map[string]any) { ev["livemode"] = false }),
			want: []string{"webhook user.created", "additionalProperties 'livemode' not allowed"}},
		{name: "unknown member in the object", body: edit(payments.EventCardAdded, func(ev map[string]any) { object(ev)["last4"] = "4242" }),
			want: []string{"webhook card.added", "/data/object", "additionalProperties 'last4' not allowed"}},
		{name: "a member of another type", body: edit(payments.EventPayeeBankDeleted, func(ev map[string]any) { object(ev)["payee_id"] = uuid.NewString() }),
			want: []string{"webhook payee_bank.deleted", "additionalProperties 'payee_id' not allowed"}},
		{name: "missing member", body: edit(payments.EventPayeeBankAdded, func(ev map[string]any) { delete(object(ev), "payee_id") }),
			want: []string{"webhook payee_bank.added", "missing properties: 'payee_id'"}},
		{name: "missing reason", body: edit(payments.EventUserVerificationFailed, func(ev map[string]any) { delete(ev["data"].(map[string]any), "reason") }),
			want: []string{"webhook user.verification.failed", "missing properties: 'reason'"}},
		{name: "missing timestamp", body: edit(payments.EventUserCreated, func(ev map[string]any) { delete(ev, "timestamp") }),
			want: []string{"missing properties: 'timestamp'"}},
		{name: "wrong type", body: edit(payments.EventExchangeRateUpdated, func(ev map[string]any) { object(ev)["exchange_rate"] = "17.05" }),
			want: []string{"webhook exchange_rate.updated", "/data/object/exchange_rate", "expected number, but got string"}},
		{name: "wrong object type", body: edit(payments.EventCardDeleted, func(ev map[string]any) { object(ev)["type"] = "bank_account" }),
			want: []string{"webhook card.deleted", "/data/object/type"}},
		{name: "wrong format", body: edit(payments.EventUserCreated, func(ev map[string]any) { ev["platform_id"] = "acme" }),
			want: []string{"/platform_id", "uuid"}},
		{name: "unknown event type", body: edit(payments.EventUserCreated, func(ev map[string]any) { ev["type"] = "user.deleted" }),
			want: []string{`event type "user.deleted" has no POST entry`}, noHook: true},
		{name: "no event type", body: edit(payments.EventUserCreated, func(ev map[string]any) { delete(ev, "type") }),
			want: []string{"no event type"}, noHook: true},
		{name: "not JSON", body: []byte("user.created"), want: []string{"not a JSON object"}},
		{name: "no webhook-signature", header: func(h http.Header) { h.Del("webhook-signature") },
			body: marshal(t, events[payments.EventUserCreated]), want: []string{"webhook user.created delivered without its header webhook-signature"}},
		{name: "no webhook-id", header: func(h http.Header) { h.Del("webhook-id") },
			body: marshal(t, events[payments.EventUserCreated]), want: []string{"without its header webhook-id"}},
		{name: "no webhook-timestamp", header: func(h http.Header) { h.Del("webhook-timestamp") },
			body: marshal(t, events[payments.EventUserCreated]), want: []string{"without its header webhook-timestamp"}},
		{name: "malformed webhook-timestamp", header: func(h http.Header) { h.Set("webhook-timestamp", "2026-11-23T10:00:00Z") },
			body: marshal(t, events[payments.EventUserCreated]), want: []string{"header webhook-timestamp", "does not match pattern"}},
		{name: "malformed webhook-signature", header: func(h http.Header) { h.Set("webhook-signature", "g0hM9SsE") },
			body: marshal(t, events[payments.EventUserCreated]), want: []string{"header webhook-signature", "does not match pattern"}},
		{name: "undocumented Content-Type", header: func(h http.Header) { h.Set("Content-Type", "text/plain") },
			body: marshal(t, events[payments.EventUserCreated]), want: []string{`Content-Type "text/plain"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := deliveryHeader()
			if tc.header != nil {
				tc.header(h)
			}
			err := c.CheckWebhook(h, tc.body)
			if err == nil {
				t.Fatalf("accepted %s", tc.body)
			}
			t.Log(err)
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("the error does not say %q:\n%v", w, err)
				}
			}
			if errors.Is(err, openapicheck.ErrNoWebhook) != tc.noHook {
				t.Errorf("errors.Is(err, ErrNoWebhook) = %v, want %v", !tc.noHook, tc.noHook)
			}
		})
	}
}

// TestTallyDeliveries: a Tally counts the deliveries it checks and those it refuses; a
// lenient one fails none.
func TestTallyDeliveries(t *testing.T) {
	for _, lenient := range []bool{false, true} {
		tally, err := openapicheck.NewTally(payments.OpenAPI(), lenient)
		if err != nil {
			t.Fatal(err)
		}
		good := marshal(t, validEvents()[payments.EventCardAdded])
		if err := tally.CheckDelivery(deliveryHeader(), good); err != nil {
			t.Errorf("lenient %v: %v", lenient, err)
		}
		bad := []byte(strings.Replace(string(good), `"card.added"`, `"card.lost"`, 1))
		if err := tally.CheckDelivery(deliveryHeader(), bad); (err == nil) != lenient {
			t.Errorf("lenient %v: a refused delivery returned %v", lenient, err)
		}
		if checked, refused := tally.DeliveryCounts(); checked != 2 || refused != 1 {
			t.Errorf("lenient %v: %d checked, %d refused, want 2 and 1", lenient, checked, refused)
		}
	}
}
