package payments

import (
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

// A request is validated once. An operation validates what it is given, unless the call
// says otherwise with an option (call.go), where the call is written:
//
//   - DecodeValue validates a request and decodes its body into a request value; the
//     operation given that value with Validated runs on it as validated.
//   - AsSent hands the operations whose string arguments cannot tell a query parameter
//     left out from one sent empty the request itself, which they validate instead.
//
// A request value is plain data: one built in Go and one decoded validate alike.

// requestValue is a request body type of the API: it names its schema once, for
// DecodeValue and its operation alike.
type requestValue interface {
	requestSchema() string
}

// Validation is a request as DecodeValue validated it, for the operation given its value
// with Validated: the request, the schema, a copy of the value the body decoded into
// (sharing no memory with the caller's), and the body as sent, nulls included (what the
// 422 of a payee rule shows as its input, as pydantic shows the model's input).
type Validation struct {
	req    Request
	schema string
	value  reflect.Value
	body   map[string]any
}

// DecodeValue validates req against the request schema of dst, a pointer to a request
// value of the API (NewUser, ListUsersParams, NewPayee, PayeeRename, NewBankAccount,
// CardDeletion, NewPayeeBank, NewWebhookEndpoint, Resend), and decodes the body into it as
// Decode does. The operation given the value dst holds (or an equal one) and req's path
// parameters with Validated(v) runs on it without validating it again:
//
//	var in payments.NewUser
//	v, err := svc.DecodeValue(req, &in)
//	if err != nil {
//		return err // CodeInvalid with the 422 entries
//	}
//	user, err := svc.CreateUser(ctx, platformID, in, payments.Validated(v)) // validated once
func (s *Service) DecodeValue(req Request, dst any) (*Validation, error) {
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
	return &Validation{req: req, schema: v.requestSchema(), value: validate.CopyValue(value.Elem()), body: fields}, nil
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

// validateAsSent is validate for the operations AsSent describes, given sent, the request
// as sent (nil: none), which validate.Validator.ValidateParams validates instead of path and
// query when it holds the same values.
func (s *Service) validateAsSent(sent *Request, name string, path, query map[string]string, optional ...string) error {
	var as *validate.Params
	if sent != nil && len(sent.Body) == 0 {
		as = &validate.Params{Path: sent.Path, Query: sent.Query}
	}
	return checked(s.schemas.ValidateParams(name, as, path, query, optional...))
}

// validate validates what an operation was given: path and query parameters and a body
// value, which meets the same schema as an HTTP body. It returns the body as the validator
// saw it, for the payee rules, which run in Go after it.
func (s *Service) validate(name string, pathParams, query map[string]string, body any) (map[string]any, error) {
	value, fields, err := s.schemas.ValidateValue(name, pathParams, query, body)
	return value, checked(fields, err)
}

// validateValue is validate for an operation given v (Validated; nil: none): the value v
// validated (or an equal one), with the same schema and parameters, is not validated
// again, and the body is returned as its client sent it.
func (s *Service) validateValue(v *Validation, name string, pathParams, query map[string]string, body any) (map[string]any, error) {
	if v != nil && v.schema == name && maps.Equal(v.req.Path, pathParams) &&
		maps.Equal(v.req.Query, query) && validate.EqualValues(reflect.ValueOf(body), v.value) {
		return v.body, nil // validated once, by DecodeValue
	}
	return s.validate(name, pathParams, query, body)
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
