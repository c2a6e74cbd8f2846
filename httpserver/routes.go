package httpserver

// route is one endpoint of the API, as data: New mounts each (server.go's route), and the
// tests read the same table (every route has a scenario).
type route struct {
	pattern string   // "METHOD /path/{param}", as http.ServeMux takes it
	auth    authKind // the credentials it takes
	body    bodyKind // whether it carries a JSON body
	handler handlerFunc
}

// routes is the whole API surface: the fourteen endpoints of the specification, each with
// its authentication, whether it carries a JSON body, how its request is validated (once:
// see handlers.go) and its handler.
var routes = []route{
	// User-API (X-Api-Key and X-Api-Secret).
	{"POST /api/user-api/payee/create", userAPI, withBody, body((*server).createPayee)},

	// Platform endpoints (X-Platform-ID and X-Signature).
	{"PUT /api/platform/payee/update/{user_id}", platformAPI, withBody, body((*server).updatePayee)},
	{"POST /api/platform/users/create", platformAPI, withBody, body((*server).createUser)},
	{"POST /api/platform/users/list", platformAPI, withBody, body((*server).listUsers)},
	{"GET /api/platform/users/get/{user_id}", platformAPI, noBody, params((*server).getUser)},
	{"POST /api/platform/accounts/add-account", platformAPI, withBody, body((*server).addBankAccount)},
	{"GET /api/platform/accounts/get-account/{account_id}", platformAPI, noBody, params((*server).getBankAccount)},
	{"DELETE /api/platform/card/delete/{user_id}", platformAPI, withBody, body((*server).deleteCard)},
	{"POST /api/platform/cross-border/payee/bank/{user_id}", platformAPI, withBody, body((*server).addPayeeBank)},
	{"DELETE /api/platform/cross-border/payee/bank/{user_id}/{bank_uuid}", platformAPI, noBody, params((*server).deletePayeeBank)},
	{"GET /api/platform/cross-border/payee/addresses/{user_id}", platformAPI, noBody, query((*server).listPayeeAddresses)},
	{"GET /api/platform/cross-border/payee/address/{user_id}/{address_id}", platformAPI, noBody, params((*server).getPayeeAddress)},
	{"GET /api/platform/cross-border/payee-rules", platformAPI, noBody, query((*server).getPayeeRules)},
	{"GET /api/platform/cross-border/rates", platformAPI, noBody, query((*server).getExchangeRates)},
}

// readOnly lists the routes that change nothing although their method is not GET: an
// Idempotency-Key sent to them is ignored.
var readOnly = map[string]bool{"POST /api/platform/users/list": true}
