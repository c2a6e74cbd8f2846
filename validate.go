package payments

import (
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"

	"github.com/platform-payments/payments/internal/validate"
)

// Request validation. Each request (path parameters, query parameters and JSON body) has
// one JSON Schema file in schema/, which owns every length, pattern and enumeration of it;
// package validate compiles them once, at Open, and turns a failure into the pydantic v2
// entries of the API's 422. This file decides what is validated, and when: once per
// request.

//go:embed schema/*.json
var schemaFiles embed.FS

// Request is a request as a client sent it, before validation.
type Request struct {
	Path  map[string]string
	Query map[string]string
	// Body is the raw JSON body; empty means no body.
	Body []byte
}

// newValidator compiles the request schemas, checking the Go tables keyed by their
// enumerations against them.
func newValidator() (*validate.Validator, error) {
	return validate.New(RequestSchemas(), enumTables()...)
}

// enumTables are the Go tables keyed by a schema's enumeration. The validator refuses to
// start when one and its enumeration differ, so neither changes without the other.
func enumTables() []validate.EnumTable {
	return []validate.EnumTable{
		{Schema: "payee_banks_add.json", Pointer: "/properties/body/properties/bank_acc_type/enum", Keys: slices.Collect(maps.Keys(providerAccountTypes))},
		{Schema: "payee_rules_load.json", Pointer: "/$defs/field/properties/data_type/enum", Keys: slices.Collect(maps.Keys(dataTypes))},
		{Schema: "webhooks_create.json", Pointer: "/properties/body/properties/events/items/enum", Keys: append(EventTypes(), AllEvents)},
		{Schema: "events_list.json", Pointer: "/properties/query/properties/type/enum", Keys: EventTypes()},
	}
}

// A request is validated once. An operation validates what it is given, unless it is
// called through a service scoped to the request as its client sent it, which says so
// where the call is written:
//
//   - Decoded validates a request and decodes its body into a request value: called
//     through the service it returns, the operation given that value runs on it as
//     validated.
//   - AsSent hands the operations whose string arguments cannot tell a query parameter
//     left out from one sent empty the request itself, which they validate instead.
//
// A request value is plain data: one built in Go and one decoded validate alike.

// requestValue is a request body type of the API: it names its schema once, for Decoded
// and its operation alike.
type requestValue interface {
	requestSchema() string
}

// sent is the request as its client sent it, which a scoped service's operations
// validate (AsSent) or have had validated (Decoded) in place of their arguments.
type sent struct {
	req Request
	// What Decoded validated: the schema, a copy of the value the body decoded into
	// (sharing no memory with the caller's), and the body as sent, nulls included (what
	// the 422 of a payee rule shows as its input, as pydantic shows the model's input).
	schema string
	value  reflect.Value
	body   map[string]any
}

// AsSent returns the service scoped to req, the request exactly as its client sent it,
// for the operations whose string arguments cannot tell a query parameter left out from
// one sent empty, two different 422s: ListPayeeAddresses, GetPayeeRules and
// ExchangeRates. Called through the scoped service, such an operation validates req, once,
// instead of its arguments, provided they say what req says (a parameter left out reads
// as ""); given other arguments, it validates those. The scope changes nothing else.
//
//	query := map[string]string{"payout_currency": "INR"} // country_code left out
//	_, err := svc.AsSent(payments.Request{Query: query}).GetPayeeRules(ctx, "", "INR")
//	// CodeInvalid: country_code missing (without the scope: too short)
func (s *Service) AsSent(req Request) *Service {
	return s.scoped(&sent{req: req})
}

// Decoded validates req against the request schema of dst, a pointer to a request value
// of the API (NewUser, NewPayee, PayeeRename, ListUsersParams, NewBankAccount,
// CardDeletion, NewPayeeBank), decodes the body into it as Decode does, and returns the
// service scoped to what it validated. The operation called through the scoped service
// with the value dst holds (or an equal one) and req's path parameters runs on it without
// validating it again; given anything else, it validates what it is given.
//
//	var in payments.NewUser
//	decoded, err := svc.Decoded(req, &in)
//	if err != nil {
//		return err // CodeInvalid with the 422 entries
//	}
//	user, err := decoded.CreateUser(ctx, platformID, in) // validated once, by Decoded
func (s *Service) Decoded(req Request, dst any) (*Service, error) {
	v, ok := dst.(requestValue)
	value := reflect.ValueOf(dst)
	if !ok || value.Kind() != reflect.Pointer || value.IsNil() {
		return nil, fmt.Errorf("payments: %T is not a pointer to a request value of the API", dst)
	}
	body, err := s.decode(v.requestSchema(), req, dst)
	if err != nil {
		return nil, err
	}
	fields, _ := body.(map[string]any)
	return s.scoped(&sent{req: req, schema: v.requestSchema(), value: validate.CopyValue(value.Elem()), body: fields}), nil
}

// DecodeRequest is Decoded without the scoped service: it validates req against the
// request schema of dst and decodes the body into dst. An operation given the value
// validates it, as any other: to validate a request once, use Decoded.
func (s *Service) DecodeRequest(req Request, dst any) error {
	_, err := s.Decoded(req, dst)
	return err
}

// Decode validates req against the named request schema and, when it passes, decodes the
// body into dst (which may be nil): a null member decodes as the field left out. It
// returns a CodeInvalid *Error carrying the API's 422 entries.
func (s *Service) Decode(name string, req Request, dst any) error {
	_, err := s.decode(name, req, dst)
	return err
}

// decode is Decode, returning the body as validated.
func (s *Service) decode(name string, req Request, dst any) (any, error) {
	body, fields, err := s.schemas.Validate(name, req.Path, req.Query, req.Body)
	if err := checked(fields, err); err != nil {
		return nil, err
	}
	if dst != nil && len(req.Body) > 0 {
		if err := json.Unmarshal(req.Body, dst); err != nil {
			return nil, fmt.Errorf("payments: decode %s body after validation: %w", name, err)
		}
	}
	return body, nil
}

// scoped returns a copy of s whose calls see the request as sent.
func (s *Service) scoped(to *sent) *Service {
	c := *s
	c.sent = to
	return &c
}

// WithRequest returns ctx carrying req, the request exactly as its client sent it, which
// ListPayeeAddresses, GetPayeeRules and ExchangeRates validate as AsSent describes.
//
// Deprecated: use AsSent, which says where the call is written what the call validates.
func WithRequest(ctx context.Context, req Request) context.Context {
	return context.WithValue(ctx, requestKey{}, &req)
}

type requestKey struct{}

// requestAsSent is the request s is scoped to (AsSent), or else the one ctx carries
// (WithRequest); nil for none.
func (s *Service) requestAsSent(ctx context.Context) *Request {
	if s.sent != nil {
		return &s.sent.req
	}
	req, _ := ctx.Value(requestKey{}).(*Request)
	return req
}

// validateAsSent is validate for the operations AsSent describes. path and query hold
// every parameter the operation declares, "" for one its caller left out; the names in
// optional are left out of what is validated when "". When the request as sent holds the
// same values (a parameter left out reads as ""), it is validated instead, so that left
// out and empty stay apart.
func (s *Service) validateAsSent(ctx context.Context, name string, path, query map[string]string, optional ...string) error {
	if req := s.requestAsSent(ctx); req != nil && len(req.Body) == 0 &&
		sameValues(req.Path, path) && sameValues(req.Query, query) {
		_, fields, err := s.schemas.Validate(name, req.Path, req.Query, nil)
		return checked(fields, err)
	}
	for _, k := range optional {
		if query[k] == "" {
			delete(query, k)
		}
	}
	_, err := s.validate(name, path, query, nil)
	return err
}

// sameValues reports whether sent has the value of every parameter in params, one left
// out counting as "". Parameters the operation does not declare may be sent: the schema
// allows them.
func sameValues(sent, params map[string]string) bool {
	for k, v := range params {
		if sent[k] != v {
			return false
		}
	}
	return true
}

// validate validates what an operation was given: path and query parameters and a body
// value, which is encoded to JSON first so that it meets the same schema as an HTTP body.
// Through a service Decoded scoped, the value it decoded (or an equal one), with the same
// schema and parameters, is not validated again. It returns the body as the validator saw
// it (as the client sent it, for a decoded value), for the payee rules, which run in Go
// after it.
func (s *Service) validate(name string, pathParams, query map[string]string, body any) (map[string]any, error) {
	if d := s.sent; d != nil && d.schema == name && maps.Equal(d.req.Path, pathParams) &&
		maps.Equal(d.req.Query, query) && validate.EqualValues(reflect.ValueOf(body), d.value) {
		return d.body, nil // validated once, by Decoded
	}
	var raw []byte // the body as JSON, so that it meets the same schema as an HTTP body
	if body != nil {
		var err error
		if raw, err = json.Marshal(body); err != nil {
			return nil, fmt.Errorf("payments: encode %s body: %w", name, err)
		}
	}
	value, fields, err := s.schemas.Validate(name, pathParams, query, raw)
	bodyMap, _ := value.(map[string]any)
	return bodyMap, checked(fields, err)
}

// withoutNulls returns the members of body that are not null: the fields a client gave.
func withoutNulls(body map[string]any) map[string]any {
	out := make(map[string]any, len(body))
	for k, v := range body {
		if v != nil {
			out[k] = v
		}
	}
	return out
}

// checked is the error of a validation: fields, the 422 entries of a request that fails,
// as a CodeInvalid *Error; err, a fault of ours.
func checked(fields []FieldError, err error) error {
	if err != nil {
		return err
	}
	if len(fields) > 0 {
		return invalid(fields...)
	}
	return nil
}

func invalid(fields ...FieldError) *Error {
	return &Error{Code: CodeInvalid, Message: "Validation failed.", Fields: fields}
}

// missingShows makes the missing entries of fields show input, the enclosing body.
func missingShows(fields []FieldError, input map[string]any) []FieldError {
	for i := range fields {
		if fields[i].Type == "missing" {
			fields[i].Input = input
		}
	}
	return fields
}
