package httpserver

// route is one endpoint of the API, as data: New mounts each (server.go's route), and the
// tests read the same table (every route has a scenario).
type route struct {
	pattern string   // "METHOD /path/{param}", as http.ServeMux takes it
	auth    authKind // the credentials it takes
	body    bodyKind // whether it carries a JSON body
	effect  effect   // whether it changes something (and so takes an Idempotency-Key)
	handler handlerFunc
}

// effect says whether a route changes something: a route that does takes an
// Idempotency-Key; one that reads ignores it, whatever its method.
type effect bool

const (
	changes effect = true
	reads   effect = false
)

// routes is the whole API surface: the fourteen endpoints of the specification, each with
// its authentication, whether it carries a JSON body, whether it changes anything, how its
// request is validated (once: see handlers.go) and its handler. List Users is a POST that
// changes nothing.
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
}
