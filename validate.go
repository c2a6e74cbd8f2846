package payments

import (
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"maps"
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
	}
}

// DecodeRequest validates req against the request schema of dst, a request value of the
// API (NewUser, NewPayee, PayeeRename, ListUsersParams, NewBankAccount, CardDeletion,
// NewPayeeBank), and decodes the body into dst, as Decode does. The operation dst is then
// passed to does not validate it again: each request is validated once.
func (s *Service) DecodeRequest(req Request, dst any) error {
	v, ok := dst.(requestValue)
	if !ok {
		return fmt.Errorf("payments: %T is not a request value of the API", dst)
	}
	return s.Decode(v.requestSchema(), req, dst)
}

// Decode validates req against the named request schema and, when it passes, decodes the
// body into dst (which may be nil): a null member decodes as the field left out. A request
// value remembers what it was validated as (see decoded). It returns a CodeInvalid *Error
// carrying the API's 422 entries.
func (s *Service) Decode(name string, req Request, dst any) error {
	body, fields, err := s.schemas.Validate(name, req.Path, req.Query, req.Body)
	if err := checked(fields, err); err != nil {
		return err
	}
	if dst != nil && len(req.Body) > 0 {
		if err := json.Unmarshal(req.Body, dst); err != nil {
			return fmt.Errorf("payments: decode %s body after validation: %w", name, err)
		}
		if v, ok := dst.(requestValue); ok {
			fields, _ := body.(map[string]any)
			v.mark(&decoded{schema: name, path: req.Path, query: req.Query, fields: fields})
		}
	}
	return nil
}

// decoded is what Decode validated a request value as: the schema, the path and query
// parameters, and the body as the client sent it, nulls included (what the 422 of a payee
// rule shows as its input, as pydantic shows the model's input).
type decoded struct {
	schema      string
	path, query map[string]string
	fields      map[string]any
}

// decodedMark, embedded in every request body type, holds what Decode validated the value
// as; a value a Go caller builds has none.
type decodedMark struct{ d *decoded }

func (m *decodedMark) mark(d *decoded)    { m.d = d }
func (m decodedMark) decodedAs() *decoded { return m.d }

// requestValue is a request body type of the API: it names its schema once, for Decode
// and its operation alike.
type requestValue interface {
	requestSchema() string
	mark(*decoded)
}

// WithRequest returns ctx carrying req, the request exactly as a client sent it, for an
// operation whose string arguments cannot tell a query parameter left out from one sent
// empty (List Payee Addresses, Get Payee Rules, Get Exchange Rates): the two are different
// 422s. Such an operation validates req, once, instead of what its arguments say, provided
// req says the same as its arguments (a parameter left out reads as ""). The HTTP server
// does this; a Go caller has no need to.
func WithRequest(ctx context.Context, req Request) context.Context {
	return context.WithValue(ctx, requestKey{}, &req)
}

type requestKey struct{}

// validateAsSent is validate for the operations WithRequest describes. params holds every
// path and query parameter the operation declares, "" for one its caller left out; the
// names in optional are left out of what is validated when "". When ctx carries the
// request as sent and it holds the same values (a parameter left out reads as ""), that
// request is validated instead, so that left out and empty stay apart.
func (s *Service) validateAsSent(ctx context.Context, name string, path, query map[string]string, optional ...string) error {
	if req, ok := ctx.Value(requestKey{}).(*Request); ok && len(req.Body) == 0 &&
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
// A value DecodeRequest validated against the same schema and parameters is not validated
// again. It returns the body as the validator saw it (as the client sent it, for a decoded
// value), for the payee rules, which run in Go after it.
func (s *Service) validate(name string, pathParams, query map[string]string, body any) (map[string]any, error) {
	if m, ok := body.(interface{ decodedAs() *decoded }); ok {
		if d := m.decodedAs(); d != nil && d.schema == name && maps.Equal(d.path, pathParams) && maps.Equal(d.query, query) {
			return d.fields, nil // validated once, by Decode
		}
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
