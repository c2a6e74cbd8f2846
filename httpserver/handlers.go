package httpserver

import (
	"context"
	"net/http"
	"time"

	"github.com/platform-payments/payments"
)

// The handlers of the routes: each runs one library operation and renders its outcome.
// Every request is validated once, against the schema its operation names: body routes
// decode their body into the operation's request value (payments.Service.DecodeValue) and
// pass the operation that value with payments.Validated, so that it is not validated
// again; routes whose input is their path validate it in the operation (params); and a
// query parameter left out and one sent empty are different failures, which an
// operation's string arguments cannot tell apart, so the query routes pass the operation
// the request as sent (payments.AsSent), which it validates.
//
// A route that changes something passes its operation the request's Idempotency-Key
// (payments.WithKey(c.idem)). A replay comes back from the operation as the first call's
// outcome did, and the handler renders both alike, at the first call's time (call.at): a
// replay is the first answer byte for byte.

// body adapts op to a route with a JSON body: it validates the request against the schema
// of op's request value, decodes the body into it and runs op with it, validated.
func body[In any](op func(s *server, ctx context.Context, c *call, in In, validated payments.Call) (any, error)) handlerFunc {
	return func(s *server, ctx context.Context, c *call) (any, error) {
		var in In
		v, err := s.svc.DecodeValue(c.request(), &in)
		if err != nil {
			return nil, err
		}
		return op(s, ctx, c, in, payments.Validated(v))
	}
}

// params adapts op to a route whose only input is its path: the operation validates it.
func params(op func(s *server, ctx context.Context, c *call) (any, error)) handlerFunc {
	return op
}

// query adapts op to a route with query parameters: op passes its operation the request
// as sent, which it validates.
func query(op func(s *server, ctx context.Context, c *call, sent payments.Call) (any, error)) handlerFunc {
	return func(s *server, ctx context.Context, c *call) (any, error) {
		return op(s, ctx, c, payments.AsSent(c.request()))
	}
}

// at is the time of the call's answer, its queryGeneratedTime: for an outcome stored under
// an Idempotency-Key, the time of the first call, in its first answer and in every replay;
// else now.
func (c *call) at() time.Time {
	if c.idem != nil && !c.idem.At.IsZero() {
		return c.idem.At
	}
	return c.svc.Now()
}

// success wraps what an operation returned in the common envelope, or passes its error on.
func (c *call) success(data any, err error) (any, error) {
	if err != nil {
		return nil, err
	}
	return payments.Envelope{Success: true, Message: "Success", Data: data, QueryGeneratedTime: c.at().Unix()}, nil
}

func (s *server) createPayee(ctx context.Context, c *call, in payments.NewPayee, validated payments.Call) (any, error) {
	return c.success(s.svc.CreatePayee(ctx, c.caller, in, validated, payments.WithKey(c.idem)))
}

func (s *server) updatePayee(ctx context.Context, c *call, in payments.PayeeRename, validated payments.Call) (any, error) {
	return c.success(s.svc.UpdatePayee(ctx, c.platform, c.path("user_id"), in, validated, payments.WithKey(c.idem)))
}

func (s *server) createUser(ctx context.Context, c *call, in payments.NewUser, validated payments.Call) (any, error) {
	return c.success(s.svc.CreateUser(ctx, c.platform, in, validated, payments.WithKey(c.idem)))
}

// listUsers answers in List Users' own envelope.
func (s *server) listUsers(ctx context.Context, c *call, in payments.ListUsersParams, validated payments.Call) (any, error) {
	page, err := s.svc.ListUsers(ctx, c.platform, in, validated)
	if err != nil {
		return nil, err
	}
	return payments.UserListEnvelope{
		Success:            true,
		StatusCode:         http.StatusOK,
		Message:            "Success",
		Records:            page.Records,
		TotalRecords:       page.TotalRecords,
		QueryGeneratedTime: c.at().Unix(),
	}, nil
}

func (s *server) getUser(ctx context.Context, c *call) (any, error) {
	return c.success(s.svc.GetUser(ctx, c.platform, c.path("user_id")))
}

func (s *server) addBankAccount(ctx context.Context, c *call, in payments.NewBankAccount, validated payments.Call) (any, error) {
	return c.success(s.svc.AddBankAccount(ctx, c.platform, in, validated, payments.WithKey(c.idem)))
}

func (s *server) getBankAccount(ctx context.Context, c *call) (any, error) {
	return c.success(s.svc.GetBankAccount(ctx, c.platform, c.path("account_id")))
}

func (s *server) deleteCard(ctx context.Context, c *call, in payments.CardDeletion, validated payments.Call) (any, error) {
	return c.success(s.svc.DeleteCard(ctx, c.platform, c.path("user_id"), in, validated, payments.WithKey(c.idem)))
}

func (s *server) addPayeeBank(ctx context.Context, c *call, in payments.NewPayeeBank, validated payments.Call) (any, error) {
	return c.success(s.svc.AddPayeeBank(ctx, c.platform, c.path("user_id"), in, validated, payments.WithKey(c.idem)))
}

func (s *server) deletePayeeBank(ctx context.Context, c *call) (any, error) {
	return c.success(nil, s.svc.DeletePayeeBank(ctx, c.platform, c.path("user_id"), c.path("bank_uuid"), payments.WithKey(c.idem)))
}

func (s *server) listPayeeAddresses(ctx context.Context, c *call, sent payments.Call) (any, error) {
	return c.success(s.svc.ListPayeeAddresses(ctx, c.platform, c.path("user_id"), c.req.Query["payee_id"], sent))
}

func (s *server) getPayeeAddress(ctx context.Context, c *call) (any, error) {
	return c.success(s.svc.GetPayeeAddress(ctx, c.platform, c.path("user_id"), c.path("address_id")))
}

func (s *server) getPayeeRules(ctx context.Context, c *call, sent payments.Call) (any, error) {
	return c.success(s.svc.GetPayeeRules(ctx, c.req.Query["country_code"], c.req.Query["payout_currency"], sent))
}

func (s *server) getExchangeRates(ctx context.Context, c *call, sent payments.Call) (any, error) {
	return c.success(s.svc.ExchangeRates(ctx, c.req.Query["payout_currency"], sent))
}

func (s *server) createWebhookEndpoint(ctx context.Context, c *call, in payments.NewWebhookEndpoint, validated payments.Call) (any, error) {
	return c.success(s.svc.CreateWebhookEndpoint(ctx, c.platform, in, validated, payments.WithKey(c.idem)))
}

func (s *server) listWebhookEndpoints(ctx context.Context, c *call) (any, error) {
	return c.success(s.svc.ListWebhookEndpoints(ctx, c.platform))
}

func (s *server) deleteWebhookEndpoint(ctx context.Context, c *call) (any, error) {
	return c.success(s.svc.DeleteWebhookEndpoint(ctx, c.platform, c.path("endpoint_id"), payments.WithKey(c.idem)))
}

func (s *server) enableWebhookEndpoint(ctx context.Context, c *call) (any, error) {
	return c.success(s.svc.EnableWebhookEndpoint(ctx, c.platform, c.path("endpoint_id")))
}

func (s *server) rotateWebhookSecret(ctx context.Context, c *call) (any, error) {
	return c.success(s.svc.RotateWebhookSecret(ctx, c.platform, c.path("endpoint_id")))
}

func (s *server) getWebhookEndpoint(ctx context.Context, c *call) (any, error) {
	return c.success(s.svc.GetWebhookEndpoint(ctx, c.platform, c.path("endpoint_id")))
}

func (s *server) updateWebhookEndpoint(ctx context.Context, c *call, in payments.WebhookEndpointUpdate, validated payments.Call) (any, error) {
	return c.success(s.svc.UpdateWebhookEndpoint(ctx, c.platform, c.path("endpoint_id"), in, validated))
}

func (s *server) disableWebhookEndpoint(ctx context.Context, c *call) (any, error) {
	return c.success(s.svc.DisableWebhookEndpoint(ctx, c.platform, c.path("endpoint_id")))
}

func (s *server) recoverWebhookEndpoint(ctx context.Context, c *call, in payments.WebhookRecovery, validated payments.Call) (any, error) {
	return c.success(s.svc.RecoverWebhookEndpoint(ctx, c.platform, c.path("endpoint_id"), in, validated))
}

func (s *server) sendTestWebhook(ctx context.Context, c *call) (any, error) {
	return c.success(s.svc.SendTestWebhook(ctx, c.platform, c.path("endpoint_id")))
}

func (s *server) listWebhookAttempts(ctx context.Context, c *call, sent payments.Call) (any, error) {
	q := c.req.Query
	return c.success(s.svc.ListWebhookAttempts(ctx, c.platform, c.path("endpoint_id"), payments.EventQuery{After: q["after"], Limit: q["limit"]}, sent))
}

func (s *server) listEvents(ctx context.Context, c *call, sent payments.Call) (any, error) {
	q := c.req.Query
	return c.success(s.svc.ListEvents(ctx, c.platform, payments.EventQuery{After: q["after"], Type: q["type"], Limit: q["limit"]}, sent))
}

func (s *server) getEvent(ctx context.Context, c *call) (any, error) {
	return c.success(s.svc.GetEvent(ctx, c.platform, c.path("event_id")))
}

// resendEvent takes its body as optional: none is {} (every subscribed endpoint), which
// the schema allows (events_resend.json does not require a body).
func (s *server) resendEvent(ctx context.Context, c *call, in payments.Resend, validated payments.Call) (any, error) {
	return c.success(s.svc.ResendEvent(ctx, c.platform, c.path("event_id"), in, validated))
}
