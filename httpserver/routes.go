package httpserver

import "net/http"

// readOnly lists the routes that change nothing although their method is not GET: an
// Idempotency-Key sent to them is ignored.
var readOnly = map[string]bool{"POST /api/platform/users/list": true}

// addRoutes mounts the whole API surface: the fourteen endpoints of the specification,
// each with its authentication, whether it carries a JSON body, how its request is
// validated (once: see handlers.go) and its handler.
func addRoutes(mux *http.ServeMux, s *server) {
	// User-API (X-Api-Key and X-Api-Secret).
	s.route(mux, "POST /api/user-api/payee/create", userAPI, withBody, body(s, s.createPayee))

	// Platform endpoints (X-Platform-ID and X-Signature).
	s.route(mux, "PUT /api/platform/payee/update/{user_id}", platformAPI, withBody, body(s, s.updatePayee))
	s.route(mux, "POST /api/platform/users/create", platformAPI, withBody, body(s, s.createUser))
	s.route(mux, "POST /api/platform/users/list", platformAPI, withBody, body(s, s.listUsers))
	s.route(mux, "GET /api/platform/users/get/{user_id}", platformAPI, noBody, params(s.getUser))
	s.route(mux, "POST /api/platform/accounts/add-account", platformAPI, withBody, body(s, s.addBankAccount))
	s.route(mux, "GET /api/platform/accounts/get-account/{account_id}", platformAPI, noBody, params(s.getBankAccount))
	s.route(mux, "DELETE /api/platform/card/delete/{user_id}", platformAPI, withBody, body(s, s.deleteCard))
	s.route(mux, "POST /api/platform/cross-border/payee/bank/{user_id}", platformAPI, withBody, body(s, s.addPayeeBank))
	s.route(mux, "DELETE /api/platform/cross-border/payee/bank/{user_id}/{bank_uuid}", platformAPI, noBody, params(s.deletePayeeBank))
	s.route(mux, "GET /api/platform/cross-border/payee/addresses/{user_id}", platformAPI, noBody, query(s.listPayeeAddresses))
	s.route(mux, "GET /api/platform/cross-border/payee/address/{user_id}/{address_id}", platformAPI, noBody, params(s.getPayeeAddress))
	s.route(mux, "GET /api/platform/cross-border/payee-rules", platformAPI, noBody, query(s.getPayeeRules))
	s.route(mux, "GET /api/platform/cross-border/rates", platformAPI, noBody, query(s.getExchangeRates))
}
