package httpserver

import (
	"context"
	"net/http"

	"github.com/platform-payments/payments"
)

// The handlers of the routes: each runs one library operation, on the service
// its adapter hands it. Every request is validated once, against the schema its operation
// names: body routes decode their body into the operation's request value and run the
// operation on the service scoped to what was validated (payments.Service.Decoded), which
// does not validate it again; routes whose input is their path validate it in the
// operation (params); and a query parameter left out and one sent empty are different
// failures, which an operation's string arguments cannot tell apart, so the query routes
// run the operation on the service scoped to the request as sent
// (payments.Service.AsSent), which validates that.

// none is the input of a route without a body: its path and query are in the call.
type none struct{}

// body adapts op to a route with a JSON body: it validates the request against the schema
// of op's request value, decodes the body into it and runs op on the service scoped to it.
func body[In any](op func(s *server, ctx context.Context, svc *payments.Service, c *call, in In) (any, error)) handlerFunc {
	return func(s *server, ctx context.Context, c *call) (any, error) {
		var in In
		decoded, err := s.svc.Decoded(c.request(), &in)
		if err != nil {
			return nil, err
		}
		return op(s, ctx, decoded, c, in)
	}
}

// params adapts op to a route whose only input is its path: the operation validates it.
func params(op func(s *server, ctx context.Context, svc *payments.Service, c *call, in none) (any, error)) handlerFunc {
	return func(s *server, ctx context.Context, c *call) (any, error) { return op(s, ctx, s.svc, c, none{}) }
}

// query adapts op to a route with query parameters: op runs on the service scoped to the
// request as sent, and validates that.
func query(op func(s *server, ctx context.Context, svc *payments.Service, c *call, in none) (any, error)) handlerFunc {
	return func(s *server, ctx context.Context, c *call) (any, error) {
		return op(s, ctx, s.svc.AsSent(c.request()), c, none{})
	}
}

// success wraps what an operation returned in the common envelope, or passes its error on.
func (s *server) success(data any, err error) (any, error) {
	if err != nil {
		return nil, err
	}
	return payments.Envelope{Success: true, Message: "Success", Data: data, QueryGeneratedTime: s.svc.Now().Unix()}, nil
}

func (s *server) createPayee(ctx context.Context, svc *payments.Service, c *call, in payments.NewPayee) (any, error) {
	return s.success(svc.Idempotent(c.idem).CreatePayee(ctx, c.caller, in))
}

func (s *server) updatePayee(ctx context.Context, svc *payments.Service, c *call, in payments.PayeeRename) (any, error) {
	return s.success(svc.Idempotent(c.idem).UpdatePayee(ctx, c.platform, c.path("user_id"), in))
}

// createUser answers with the user's JSON written without reflection (userJSON).
func (s *server) createUser(ctx context.Context, svc *payments.Service, c *call, in payments.NewUser) (any, error) {
	u, err := svc.Idempotent(c.idem).CreateUser(ctx, c.platform, in)
	if err != nil {
		return nil, err
	}
	return rendered{data: userJSON(u), at: s.svc.Now().Unix()}, nil
}

// listUsers answers in List Users' own envelope.
func (s *server) listUsers(ctx context.Context, svc *payments.Service, c *call, in payments.ListUsersParams) (any, error) {
	page, err := svc.ListUsers(ctx, c.platform, in)
	if err != nil {
		return nil, err
	}
	return payments.UserListEnvelope{
		Success:            true,
		StatusCode:         http.StatusOK,
		Message:            "Success",
		Records:            page.Records,
		TotalRecords:       page.TotalRecords,
		QueryGeneratedTime: s.svc.Now().Unix(),
	}, nil
}

// getUser answers with the user's JSON rendered once (renderedUsers).
func (s *server) getUser(ctx context.Context, svc *payments.Service, c *call, _ none) (any, error) {
	u, err := svc.GetUser(ctx, c.platform, c.path("user_id"))
	if err != nil {
		return nil, err
	}
	return rendered{data: s.users.json(u), at: s.svc.Now().Unix()}, nil
}

func (s *server) addBankAccount(ctx context.Context, svc *payments.Service, c *call, in payments.NewBankAccount) (any, error) {
	return s.success(svc.Idempotent(c.idem).AddBankAccount(ctx, c.platform, in))
}

func (s *server) getBankAccount(ctx context.Context, svc *payments.Service, c *call, _ none) (any, error) {
	return s.success(svc.GetBankAccount(ctx, c.platform, c.path("account_id")))
}

func (s *server) deleteCard(ctx context.Context, svc *payments.Service, c *call, in payments.CardDeletion) (any, error) {
	return s.success(svc.Idempotent(c.idem).DeleteCard(ctx, c.platform, c.path("user_id"), in))
}

func (s *server) addPayeeBank(ctx context.Context, svc *payments.Service, c *call, in payments.NewPayeeBank) (any, error) {
	return s.success(svc.Idempotent(c.idem).AddPayeeBank(ctx, c.platform, c.path("user_id"), in))
}

func (s *server) deletePayeeBank(ctx context.Context, svc *payments.Service, c *call, _ none) (any, error) {
	return s.success(nil, svc.Idempotent(c.idem).DeletePayeeBank(ctx, c.platform, c.path("user_id"), c.path("bank_uuid")))
}

func (s *server) listPayeeAddresses(ctx context.Context, svc *payments.Service, c *call, _ none) (any, error) {
	return s.success(svc.ListPayeeAddresses(ctx, c.platform, c.path("user_id"), c.req.Query["payee_id"]))
}

func (s *server) getPayeeAddress(ctx context.Context, svc *payments.Service, c *call, _ none) (any, error) {
	return s.success(svc.GetPayeeAddress(ctx, c.platform, c.path("user_id"), c.path("address_id")))
}

func (s *server) getPayeeRules(ctx context.Context, svc *payments.Service, c *call, _ none) (any, error) {
	return s.success(svc.GetPayeeRules(ctx, c.req.Query["country_code"], c.req.Query["payout_currency"]))
}

func (s *server) getExchangeRates(ctx context.Context, svc *payments.Service, c *call, _ none) (any, error) {
	return s.success(svc.ExchangeRates(ctx, c.req.Query["payout_currency"]))
}

func (s *server) createWebhookEndpoint(ctx context.Context, svc *payments.Service, c *call, in payments.NewWebhookEndpoint) (any, error) {
	return s.success(svc.Idempotent(c.idem).CreateWebhookEndpoint(ctx, c.platform, in))
}

func (s *server) listWebhookEndpoints(ctx context.Context, svc *payments.Service, c *call, _ none) (any, error) {
	return s.success(svc.ListWebhookEndpoints(ctx, c.platform))
}

func (s *server) deleteWebhookEndpoint(ctx context.Context, svc *payments.Service, c *call, _ none) (any, error) {
	return s.success(svc.Idempotent(c.idem).DeleteWebhookEndpoint(ctx, c.platform, c.path("endpoint_id")))
}

func (s *server) enableWebhookEndpoint(ctx context.Context, svc *payments.Service, c *call, _ none) (any, error) {
	return s.success(svc.EnableWebhookEndpoint(ctx, c.platform, c.path("endpoint_id")))
}

func (s *server) rotateWebhookSecret(ctx context.Context, svc *payments.Service, c *call, _ none) (any, error) {
	return s.success(svc.RotateWebhookSecret(ctx, c.platform, c.path("endpoint_id")))
}

func (s *server) listEvents(ctx context.Context, svc *payments.Service, c *call, _ none) (any, error) {
	q := c.req.Query
	return s.success(svc.ListEvents(ctx, c.platform, payments.EventQuery{After: q["after"], Type: q["type"], Limit: q["limit"]}))
}

func (s *server) getEvent(ctx context.Context, svc *payments.Service, c *call, _ none) (any, error) {
	return s.success(svc.GetEvent(ctx, c.platform, c.path("event_id")))
}

// resendEvent takes its body as optional: none is {} (every subscribed endpoint), which
// the schema allows (events_resend.json does not require a body).
func (s *server) resendEvent(ctx context.Context, svc *payments.Service, c *call, in payments.Resend) (any, error) {
	return s.success(svc.ResendEvent(ctx, c.platform, c.path("event_id"), in))
}
