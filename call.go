package payments

// Per-call options. What changes one call of an operation is given with that call, as its
// trailing arguments, where a reader of the call sees it:
//
//	user, err := svc.CreateUser(ctx, platformID, in, payments.WithKey(idem))
//
// An option is a small value: the service is never copied or scoped for a call. An
// operation takes the options its doc comment names and ignores the others.

// Call is an option of one call of an operation: WithKey, Validated or AsSent.
type Call struct {
	key       *Idempotency
	validated *Validation
	sent      *Request
}

// WithKey runs a write operation at most once per idem.Key, and reports in idem whether
// its outcome was replayed (see Idempotency). A nil idem is no key.
//
// The operations that take a key are CreateUser, CreatePayee, UpdatePayee, AddBankAccount,
// DeleteCard, AddPayeeBank, DeletePayeeBank, CreateWebhookEndpoint and
// DeleteWebhookEndpoint.
func WithKey(idem *Idempotency) Call { return Call{key: idem} }

// Validated tells the operation given the request value v holds that DecodeValue has
// validated it: the operation does not validate it again, provided it is given that value
// (or an equal one) with the path parameters v was validated with. Given anything else,
// it validates what it is given. A nil v changes nothing.
func Validated(v *Validation) Call { return Call{validated: v} }

// AsSent hands an operation whose string arguments cannot tell a query parameter left out
// from one sent empty (two different 422s) the request as its client sent it:
// ListPayeeAddresses, GetPayeeRules, ExchangeRates and ListEvents. Such an operation
// validates req, once, instead of its arguments, provided they say what req says (a
// parameter left out reads as ""); given other arguments, it validates those.
//
//	query := map[string]string{"payout_currency": "INR"} // country_code left out
//	_, err := svc.GetPayeeRules(ctx, "", "INR", payments.AsSent(payments.Request{Query: query}))
//	// CodeInvalid: country_code missing (without AsSent: too short)
func AsSent(req Request) Call { return Call{sent: &req} }

// options folds the options of one call into one: of two that set the same thing, the
// later wins.
func options(opts []Call) Call {
	var c Call
	for _, o := range opts {
		if o.key != nil {
			c.key = o.key
		}
		if o.validated != nil {
			c.validated = o.validated
		}
		if o.sent != nil {
			c.sent = o.sent
		}
	}
	return c
}
