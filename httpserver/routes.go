package httpserver

import "net/http"

// addRoutes mounts the whole API surface: the fourteen endpoints of the specification.
func addRoutes(mux *http.ServeMux, s *server) {
	// User-API (X-Api-Key and X-Api-Secret).
	s.route(mux, "POST /api/user-api/payee/create", userAPI, withBody, s.createPayee)

	// Platform endpoints (X-Platform-ID and X-Signature).
	s.route(mux, "PUT /api/platform/payee/update/{user_id}", platformAPI, withBody, s.updatePayee)
	s.route(mux, "POST /api/platform/users/create", platformAPI, withBody, s.createUser)
	s.route(mux, "POST /api/platform/users/list", platformAPI, withBody, s.listUsers)
	s.route(mux, "GET /api/platform/users/get/{user_id}", platformAPI, noBody, s.getUser)
	s.route(mux, "POST /api/platform/accounts/add-account", platformAPI, withBody, s.addBankAccount)
	s.route(mux, "GET /api/platform/accounts/get-account/{account_id}", platformAPI, noBody, s.getBankAccount)
	s.route(mux, "DELETE /api/platform/card/delete/{user_id}", platformAPI, withBody, s.deleteCard)
	s.route(mux, "POST /api/platform/cross-border/payee/bank/{user_id}", platformAPI, withBody, s.addPayeeBank)
	s.route(mux, "DELETE /api/platform/cross-border/payee/bank/{user_id}/{bank_uuid}", platformAPI, noBody, s.deletePayeeBank)
	s.route(mux, "GET /api/platform/cross-border/payee/addresses/{user_id}", platformAPI, noBody, s.listPayeeAddresses)
	s.route(mux, "GET /api/platform/cross-border/payee/address/{user_id}/{address_id}", platformAPI, noBody, s.getPayeeAddress)
	s.route(mux, "GET /api/platform/cross-border/payee-rules", platformAPI, noBody, s.getPayeeRules)
	s.route(mux, "GET /api/platform/cross-border/rates", platformAPI, noBody, s.getExchangeRates)
}
