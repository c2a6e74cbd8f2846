package httpserver

// The document's webhooks: one entry per event type, each the POST a platform's endpoint
// receives, whose body is the event (payments.Event, as the events API shows it) with
// that type, signed by the Standard Webhooks scheme.

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"reflect"
	"slices"

	"github.com/platform-payments/payments"
)

// eventDoc says what an event of a type tells of and what its data carries beyond the
// object's type and id.
type eventDoc struct {
	typ, summary string
	object       string   // data.object.type
	required     []string // data.object's members besides type and id
	data         []string // data's members besides object
	optional     []string // data.object's members that may be left out
}

// eventDocs lists every event type, in payments.EventTypes' order (TestOpenAPI fails
// when one is missing).
var eventDocs = []eventDoc{
	{payments.EventUserCreated, "A user was created (Create User).", "user", nil, nil, nil},
	{payments.EventUserVerificationSucceeded, "A user's identity was verified (an operator's `paymentsd user verify`): their bank accounts can be read.", "user", nil, nil, nil},
	{payments.EventUserVerificationFailed, "A user's identity verification failed (an operator's `paymentsd user verify -fail`); data.reason says why.", "user", nil, []string{"reason"}, nil},
	{payments.EventBankAccountAdded, "A bank account was added for a user (Add Bank Account).", "bank_account", []string{"user_id"}, nil, nil},
	{payments.EventCardAdded, "A card was saved for a user (an operator's `paymentsd card add`).", "card", []string{"user_id"}, nil, nil},
	{payments.EventCardDeleted, "A user's card was deleted (Delete Card).", "card", []string{"user_id"}, nil, nil},
	{payments.EventPayeeCreated, "A user created a payee (Create Payee, through the user's API key).", "payee", []string{"user_id"}, nil, nil},
	{payments.EventPayeeUpdated, "A payee was changed (Update Payee); data.changed names the fields that changed.", "payee", []string{"user_id"}, []string{"changed"}, nil},
	{payments.EventPayeeBankAdded, "A bank was added for a payee (Add Payee Bank).", "payee_bank", []string{"user_id", "payee_id"}, nil, nil},
	{payments.EventPayeeBankDeleted, "A payee's bank was deleted (Delete Payee Bank).", "payee_bank", []string{"user_id"}, nil, nil},
	{payments.EventPayeeAddressAdded, "An address was stored for a payee (an operator's `paymentsd address add`).", "payee_address", []string{"user_id", "payee_id"}, nil, nil},
	{payments.EventExchangeRateUpdated, "An exchange rate was added to the history (an operator's `paymentsd rates set`); the object carries the pair and the rate. Sent to every platform with an endpoint subscribed to the type.", "exchange_rate", []string{"base_currency", "payout_currency", "exchange_rate"}, nil, nil},
	{payments.EventPayeeRulesUpdated, "The payee rules were replaced (an operator's `paymentsd rules load`); the object carries the countries they cover. Sent to every platform with an endpoint subscribed to the type.", "payee_rules", nil, nil, []string{"countries"}},
	{payments.EventWebhookTest, "A test event (Send Test Webhook), to check an endpoint's URL and secret; the object is the endpoint. Sent to that endpoint alone, whatever its types; never recovered.", "webhook_endpoint", nil, nil, nil},
	{payments.EventWebhookEndpointDisabled, "An endpoint of the platform was disabled for its failures (it answered 410 Gone, or failed every attempt for 5 days); the object is that endpoint, data.reason says why. Sent to the platform's other enabled endpoints subscribed to the type.", "webhook_endpoint", nil, []string{"reason"}, nil},
}

// webhookParameters are the Standard Webhooks headers of a delivery.
func webhookParameters() map[string]any {
	return map[string]any{
		"webhook-id": map[string]any{
			"name": "webhook-id", "in": "header", "required": true,
			"description": "The event's id, the same on every attempt and every resend: process each event once.",
			"schema":      map[string]any{"type": "string", "format": "uuid"},
		},
		"webhook-timestamp": map[string]any{
			"name": "webhook-timestamp", "in": "header", "required": true,
			"description": "When this attempt was sent, in Unix seconds. Refuse a delivery too far from your clock (5 minutes either way is usual): a replay.",
			"schema":      map[string]any{"type": "string", "pattern": "^[0-9]+$"},
			"example":     "1614265330",
		},
		"webhook-signature": map[string]any{
			"name": "webhook-signature", "in": "header", "required": true,
			"description": "Space-separated signatures, each `v1,` and base64(HMAC-SHA256(key = the secret's bytes after `whsec_`, base64-decoded; message = webhook-id + \".\" + webhook-timestamp + \".\" + the body as received)). " +
				"One per live secret: for 24 hours after a rotation, under both. Accept the delivery when one matches (compare in constant time). " +
				"An endpoint created with `\"signature\": \"ed25519\"` sends `v1a,` and base64 of the ed25519 signature of the same message instead, verified with its `whpk_` public key (the base64 after it is the 32-byte key); after a rotation, or a switch of kinds, both keys' signatures are sent. " +
				"Go receivers verify with `payments.VerifyWebhook`; docs/webhooks.md has a worked example.",
			"schema":  map[string]any{"type": "string", "pattern": "^v1a?,[A-Za-z0-9+/]+={0,2}( v1a?,[A-Za-z0-9+/]+={0,2})*$"},
			"example": "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
		},
	}
}

// webhooks is the document's webhooks member. example is a real event of the example
// script (of type user.created), shown on its entry.
func (g *generator) webhooks(example json.RawMessage) (map[string]any, error) {
	types := make([]string, len(eventDocs))
	for i, d := range eventDocs {
		types[i] = d.typ
	}
	params := webhookParameters()
	if !slices.Equal(types, payments.EventTypes()) {
		return nil, fmt.Errorf("eventDocs lists %v, want payments.EventTypes() %v", types, payments.EventTypes())
	}
	g.ref(reflect.TypeFor[payments.Event]())
	event, data, object := g.schemas["Event"].(map[string]any), g.schemas["EventData"].(map[string]any), g.schemas["EventObject"].(map[string]any)
	out := map[string]any{}
	for _, d := range eventDocs {
		// The event of this type exactly: its type, its object's type, and only the members
		// its data and object carry.
		pick := func(from map[string]any, names []string, extra map[string]any) map[string]any {
			props := map[string]any{}
			for k, v := range extra {
				props[k] = v
			}
			for _, n := range names {
				props[n] = from["properties"].(map[string]any)[n]
			}
			required := slices.Sorted(maps.Keys(props))
			for _, n := range d.optional {
				required = slices.DeleteFunc(required, func(r string) bool { return r == n })
			}
			return map[string]any{"type": "object", "properties": props, "required": stringsOf(required), "additionalProperties": false}
		}
		obj := pick(object, append([]string{"id"}, append(d.required, d.optional...)...),
			map[string]any{"type": map[string]any{"type": "string", "const": d.object}})
		dat := pick(data, d.data, map[string]any{"object": obj})
		props := map[string]any{}
		for k, v := range event["properties"].(map[string]any) {
			props[k] = v
		}
		props["type"] = map[string]any{"type": "string", "const": d.typ}
		props["data"] = dat
		schema := map[string]any{"type": "object", "properties": props, "required": event["required"], "additionalProperties": false}
		media := map[string]any{"schema": schema}
		if d.typ == payments.EventUserCreated && example != nil {
			media["example"] = example
		}
		out[d.typ] = map[string]any{"post": map[string]any{
			"operationId": "event:" + d.typ,
			"summary":     d.typ,
			"description": d.summary + toEndpoints(d.typ) + webhookDelivery,
			"tags":        []any{"webhooks"},
			"security":    []any{},
			// Written in each webhook, not referenced from components: generators keep
			// only the components that paths reference (oapi-codegen prunes the rest,
			// and its webhook code would name types it pruned).
			"parameters":  []any{params["webhook-id"], params["webhook-timestamp"], params["webhook-signature"]},
			"requestBody": map[string]any{"required": true, "content": map[string]any{"application/json": media}},
			"responses": map[string]any{
				"2XX": map[string]any{"description": "Accepted: any 2xx answer ends the delivery. The start of the answer (1 KiB) is kept in the event's attempts."},
				"410": map[string]any{"description": "Gone: the endpoint is disabled at once, and nothing more is sent to it until it is enabled again (Enable Webhook Endpoint)."},
				"default": map[string]any{"description": "Any other answer, none within the timeout, or a redirect (never followed) is a failure, retried on the schedule. " +
					"429, 502, 503 and 504 may say when with Retry-After, honoured within [the step, twice the step]."},
			},
		}}
	}
	return out, nil
}

// toEndpoints says which endpoints an event of the type goes to.
func toEndpoints(typ string) string {
	if typ == payments.EventWebhookTest {
		return " "
	}
	return " Sent to each enabled endpoint of the platform subscribed to the type (or to `*`). "
}

// webhookDelivery is what every webhook entry says of deliveries.
const webhookDelivery = "The body is exactly the event as the events API shows it (Get Event, without attempts). " +
	"A delivery is attempted up to ten times: at once, then 5s, 5m, 30m, 2h, 5h, 10h, 14h, 20h and 24h after each failure, each delay ±20% at random. " +
	"An endpoint that fails every attempt for 5 days is disabled. Events missed meanwhile can be sent again with Resend Event."

// eventExample is the first event of the example script's events list (of type
// user.created), as the server wrote it.
func eventExample(ex *exampleSet) (json.RawMessage, error) {
	e := ex.byRoute["GET /api/platform/events/list"][http.StatusOK]
	if e == nil {
		return nil, fmt.Errorf("no example of the events list")
	}
	var page struct {
		Data struct{ Events []json.RawMessage }
	}
	if err := json.Unmarshal(e.respBody, &page); err != nil {
		return nil, err
	}
	if len(page.Data.Events) == 0 {
		return nil, fmt.Errorf("the example events list is empty")
	}
	return page.Data.Events[0], nil
}
