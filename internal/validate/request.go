package validate

import (
	"encoding/json"
	"fmt"
)

// What a service validates of what an operation was given, beside a request as sent.

// ValidateValue is Validate for what an operation was given in Go: path and query
// parameters and a body value (nil: none), which is encoded to JSON first so that it meets
// the same schema as an HTTP body. It returns the body as the validator saw it.
func (v *Validator) ValidateValue(name string, path, query map[string]string, body any) (map[string]any, []FieldError, error) {
	var raw []byte
	if body != nil {
		var err error
		if raw, err = json.Marshal(body); err != nil {
			return nil, nil, fmt.Errorf("payments: encode %s body: %w", name, err)
		}
	}
	value, fields, err := v.Validate(name, path, query, raw)
	bodyMap, _ := value.(map[string]any)
	return bodyMap, fields, err
}

// Params are the path and query parameters of a request as its client sent it.
type Params struct {
	Path, Query map[string]string
}

// ValidateParams validates the parameters an operation was given: path and query hold
// every parameter it declares, "" for one its caller left out; the names in optional are
// left out of what is validated when "". When sent (nil: none) holds the same values (a
// parameter left out reads as ""), it is validated instead, so that left out and empty
// stay apart.
func (v *Validator) ValidateParams(name string, sent *Params, path, query map[string]string, optional ...string) ([]FieldError, error) {
	if sent != nil && sameValues(sent.Path, path) && sameValues(sent.Query, query) {
		_, fields, err := v.Validate(name, sent.Path, sent.Query, nil)
		return fields, err
	}
	for _, k := range optional {
		if query[k] == "" {
			delete(query, k)
		}
	}
	_, fields, err := v.ValidateValue(name, path, query, nil)
	return fields, err
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

// WithoutNulls returns the members of body that are not null: the fields a client gave.
func WithoutNulls(body map[string]any) map[string]any {
	out := make(map[string]any, len(body))
	for k, v := range body {
		if v != nil {
			out[k] = v
		}
	}
	return out
}

// MissingShows makes the missing entries of fields show input, the enclosing body.
func MissingShows(fields []FieldError, input map[string]any) []FieldError {
	for i := range fields {
		if fields[i].Type == "missing" {
			fields[i].Input = input
		}
	}
	return fields
}
