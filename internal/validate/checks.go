package validate

import (
	"bytes"
	"cmp"
	"encoding/json"
	"slices"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// Checks written in Go over the body of a request, compiled as a schema of their own (the
// payee rules of a destination country over Add Payee Bank): they run on a body that met
// the request's schema, and their failures read as the request's own.

// Field is a body field a request schema declares, with its own maxLength (0 when it has
// none).
type Field struct {
	Name      string
	MaxLength int
}

// BodyFields returns the body fields the named request schema declares, in the order it
// declares them, and the fields it requires, in the order it lists them.
func (v *Validator) BodyFields(name string) (fields []Field, required []string) {
	body := v.requestBody(name)
	props, _ := body["properties"].(map[string]any)
	for field, p := range props {
		node, _ := p.(map[string]any)
		f := Field{Name: field}
		if n, ok := node["maxLength"]; ok {
			f.MaxLength = int(asInt(n))
		}
		fields = append(fields, f)
	}
	order := v.order[name]
	slices.SortFunc(fields, func(a, b Field) int { return cmp.Compare(order["body/"+a.Name], order["body/"+b.Name]) })
	for _, r := range asSlice(body["required"]) {
		if s, ok := r.(string); ok {
			required = append(required, s)
		}
	}
	return fields, required
}

// requestBody returns the body schema node of the named request.
func (v *Validator) requestBody(name string) map[string]any {
	body, _ := lookup(v.docs[schemaBaseURL+name+".json"], []string{"properties", "body"}).(map[string]any)
	return body
}

// A Check says what is wrong with a string, "" when nothing is.
type Check func(string) string

// BodyChecks compiles checks over the body of the named request into a Validator of that
// request alone, to run (ValidateBody) on a body that met the request's schema: required
// lists the fields the body must have, and checks holds the check of each field it checks
// (a field given as anything but a string passes: the request's schema has judged its
// type). A failure is the request's own entry at the field: missing, or a value_error
// whose message is "Value error, " and what the check says; entries come in the order of
// the request's schema.
func (v *Validator) BodyChecks(name string, required []string, checks map[string]Check) (*Validator, error) {
	cv := &Validator{
		schemas: map[string]*jsonschema.Schema{},
		docs:    map[string]any{},
		order:   map[string]map[string]int{name: v.order[name]},
		formats: map[string]format{},
	}
	fields := map[string]any{}
	for field, check := range checks {
		format := "check/" + field
		cv.formats[format] = valueErrorFormat(check)
		fields[field] = map[string]any{"format": format}
	}
	requiredFields := make([]any, len(required))
	for i, field := range required {
		requiredFields[i] = field
	}
	schema := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"body": map[string]any{"type": "object", "properties": fields, "required": requiredFields},
		},
	}
	raw, err := json.Marshal(schema)
	if err != nil {
		return nil, err
	}
	url := "file:///checks/" + name + ".json"
	if cv.docs[url], err = DecodeJSON(raw); err != nil {
		return nil, err
	}
	c := cv.compiler()
	if err := c.AddResource(url, bytes.NewReader(raw)); err != nil {
		return nil, err
	}
	if cv.schemas[name], err = c.Compile(url); err != nil {
		return nil, err
	}
	return cv, nil
}
