package httpserver

// route is one endpoint of the API, as data: New mounts each (server.go's route), and the
// tests read the same table (every route has a scenario).
type route struct {
	pattern string   // "METHOD /path/{param}", as http.ServeMux takes it
	auth    authKind // the credentials it takes
	body    bodyKind // whether it carries a JSON body
	effect  effect   // whether it changes something, and whether it takes an Idempotency-Key
	handler handlerFunc
}

// effect says whether a route changes something and takes an Idempotency-Key: one that
// reads ignores the key, whatever its method, and so does one that changes without a key
// (its operation keeps none: see its route).
type effect int

const (
	reads   effect = iota
	changes        // takes an Idempotency-Key: its operation runs under it (payments.WithKey)
	// changesUnkeyed changes something, but its operation keeps no Idempotency-Key (one
	// sent is ignored): enabling twice is enabling once, a resend retried schedules the
	// delivery again, and a rotation retried rotates again (the secret the retry replaces
	// still signs for 24 hours, so a client that lost the first answer loses nothing).
	changesUnkeyed
)

// routes is the whole API surface: the fourteen endpoints of the specification, plus fourteen
// for webhook endpoints and events, each with its authentication, whether it carries a JSON
// body, whether it changes anything, how its request is validated (once: see handlers.go)
// and its handler. List Users is a POST that changes nothing; Resend Event's body is
// optional (none is {}).
var routes = []route{
	// User-API (X-Api-Key and X-Api-Secret).
	{"POST /api/user-api/payee/create", userAPI, withBody, changes, body((*server).createPayee)},

	// Platform endpoints (X-Platform-ID and X-Signature).
	{"PUT /api/platform/payee/update/{user_id}", platformAPI, withBody, changes, body((*server).updatePayee)},
	{"POST /api/platform/users/create", platformAPI, withBody, changes, body((*server).createUser)},
	{"POST /api/platform/users/list", platformAPI, withBody, reads, body((*server).listUsers)},
	{"GET /api/platform/users/get/{user_id}", platformAPI, noBody, reads, params((*server).getUser)},
	{"POST /api/platform/accounts/add-account", platformAPI, withBody, changes, body((*server).addBankAccount)},
	{"GET /api/platform/accounts/get-account/{account_id}", platformAPI, noBody, reads, params((*server).getBankAccount)},
	{"DELETE /api/platform/card/delete/{user_id}", platformAPI, withBody, changes, body((*server).deleteCard)},
	{"POST /api/platform/cross-border/payee/bank/{user_id}", platformAPI, withBody, changes, body((*server).addPayeeBank)},
	{"DELETE /api/platform/cross-border/payee/bank/{user_id}/{bank_uuid}", platformAPI, noBody, changes, params((*server).deletePayeeBank)},
	{"GET /api/platform/cross-border/payee/addresses/{user_id}", platformAPI, noBody, reads, query((*server).listPayeeAddresses)},
	{"GET /api/platform/cross-border/payee/address/{user_id}/{address_id}", platformAPI, noBody, reads, params((*server).getPayeeAddress)},
	{"GET /api/platform/cross-border/payee-rules", platformAPI, noBody, reads, query((*server).getPayeeRules)},
	{"GET /api/platform/cross-border/rates", platformAPI, noBody, reads, query((*server).getExchangeRates)},

	// Webhook endpoints and events (platform endpoints too).
	{"POST /api/platform/webhooks/create", platformAPI, withBody, changes, body((*server).createWebhookEndpoint)},
	{"GET /api/platform/webhooks/list", platformAPI, noBody, reads, params((*server).listWebhookEndpoints)},
	{"DELETE /api/platform/webhooks/delete/{endpoint_id}", platformAPI, noBody, changes, params((*server).deleteWebhookEndpoint)},
	{"POST /api/platform/webhooks/enable/{endpoint_id}", platformAPI, noBody, changesUnkeyed, params((*server).enableWebhookEndpoint)},
	{"POST /api/platform/webhooks/rotate-secret/{endpoint_id}", platformAPI, noBody, changesUnkeyed, params((*server).rotateWebhookSecret)},
	{"GET /api/platform/webhooks/get/{endpoint_id}", platformAPI, noBody, reads, params((*server).getWebhookEndpoint)},
	{"PUT /api/platform/webhooks/update/{endpoint_id}", platformAPI, withBody, changesUnkeyed, body((*server).updateWebhookEndpoint)},
	{"POST /api/platform/webhooks/disable/{endpoint_id}", platformAPI, noBody, changesUnkeyed, params((*server).disableWebhookEndpoint)},
	{"POST /api/platform/webhooks/recover/{endpoint_id}", platformAPI, withBody, changesUnkeyed, body((*server).recoverWebhookEndpoint)},
	{"POST /api/platform/webhooks/test/{endpoint_id}", platformAPI, noBody, changesUnkeyed, params((*server).sendTestWebhook)},
	{"GET /api/platform/webhooks/attempts/{endpoint_id}", platformAPI, noBody, reads, query((*server).listWebhookAttempts)},
	{"GET /api/platform/events/list", platformAPI, noBody, reads, query((*server).listEvents)},
	{"GET /api/platform/events/get/{event_id}", platformAPI, noBody, reads, params((*server).getEvent)},
	{"POST /api/platform/events/resend/{event_id}", platformAPI, withBody, changesUnkeyed, body((*server).resendEvent)},
}
