package payments

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// Request validation. Each request (path parameters, query parameters and JSON body) has
// one JSON Schema file in schema/, validating the document
//
//	{"path": {...}, "query": {...}, "body": ...}
//
// so that an error's instance location is already the API's loc ("body", "email"), and
// path errors sort before query errors before body errors. The files own every length,
// pattern and enumeration; this file only turns the validator's error tree into pydantic
// v2 error entries.

//go:embed schema/*.json
var schemaFiles embed.FS

const schemaBaseURL = "file:///schema/"

// maxJSONDepth bounds the nesting of a request body.
const maxJSONDepth = 32

// Request is a request as a client sent it, before validation.
type Request struct {
	Path  map[string]string
	Query map[string]string
	// Body is the raw JSON body; empty means no body.
	Body []byte
}

type validator struct {
	schemas map[string]*jsonschema.Schema // request schemas by name (file name without .json)
	docs    map[string]any                // every schema document by URL, to read keyword values
	order   map[string]map[string]int     // request name -> "section/field" -> declaration index
	formats map[string]format             // the formats the schemas may name
	rules   map[string][]bodyRule         // request name -> the rules over its body, in order
	// uuidOnly lists, for each request whose only input is path parameters that are all
	// required UUIDs, those parameters: such a request is checked by a compiled fast path.
	uuidOnly map[string][]string

	validations atomic.Int64 // requests validated so far: each once
}

func newValidator() (*validator, error) {
	v := &validator{
		schemas:  map[string]*jsonschema.Schema{},
		docs:     map[string]any{},
		order:    map[string]map[string]int{},
		uuidOnly: map[string][]string{},
		formats:  formats,
	}
	c := v.compiler()
	entries, err := schemaFiles.ReadDir("schema")
	if err != nil {
		return nil, err
	}
	raws := map[string][]byte{}
	for _, e := range entries {
		raw, err := schemaFiles.ReadFile("schema/" + e.Name())
		if err != nil {
			return nil, err
		}
		url := schemaBaseURL + e.Name()
		doc, err := decodeJSON(raw)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", e.Name(), err)
		}
		v.docs[url] = doc
		raws[e.Name()] = raw
	}
	// The rules over a body run once it meets the rest of its schema (bodyrules.go).
	changed, rules, err := takeBodyRules(v.docs)
	if err != nil {
		return nil, err
	}
	for file, raw := range raws {
		url := schemaBaseURL + file
		if withoutRules, ok := changed[url]; ok {
			raw = withoutRules
		}
		if err := c.AddResource(url, bytes.NewReader(raw)); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
	}
	if err := v.compileBodyRules(c, rules); err != nil {
		return nil, err
	}
	for file, raw := range raws {
		if file == "defs.json" {
			continue // shared definitions, not a request
		}
		name := strings.TrimSuffix(file, ".json")
		sch, err := c.Compile(schemaBaseURL + file)
		if err != nil {
			return nil, err
		}
		v.schemas[name] = sch
		if v.order[name], err = declarationOrder(raw); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		if params := uuidPathParams(v.docs[schemaBaseURL+file]); params != nil {
			v.uuidOnly[name] = params
		}
	}
	if err := v.checkEnumTables(enumTables()); err != nil {
		return nil, err
	}
	return v, nil
}

// compiler returns a schema compiler that knows v's formats and loads nothing from outside.
func (v *validator) compiler() *jsonschema.Compiler {
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	c.AssertFormat = true
	c.LoadURL = func(s string) (io.ReadCloser, error) {
		return nil, fmt.Errorf("schema %s is not embedded", s)
	}
	for name, f := range v.formats {
		c.Formats[name] = f.valid
	}
	return c
}

// declarationOrder maps "section/field" to the field's position in the schema file, the
// order in which pydantic reports a model's fields.
func declarationOrder(raw []byte) (map[string]int, error) {
	var top struct {
		Properties map[string]struct {
			Properties json.RawMessage `json:"properties"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(raw, &top); err != nil {
		return nil, err
	}
	order := map[string]int{}
	for section, s := range top.Properties {
		for i, field := range objectKeys(s.Properties) {
			order[section+"/"+field] = i
		}
	}
	return order, nil
}

// objectKeys returns the member names of the JSON object raw in the order they are
// written. raw must be valid JSON; one pass, and no allocation beyond the names.
func objectKeys(raw []byte) []string {
	var keys []string
	depth, expectKey := 0, false
	for i := 0; i < len(raw); i++ {
		switch raw[i] {
		case '{':
			depth++
			expectKey = depth == 1
		case '[':
			depth++
		case '}', ']':
			depth--
		case ',':
			expectKey = depth == 1
		case '"':
			end, escaped := i+1, false
			for ; end < len(raw) && raw[end] != '"'; end++ {
				if raw[end] == '\\' {
					escaped = true
					end++
				}
			}
			if depth == 1 && expectKey {
				key := string(raw[i+1 : end])
				if escaped {
					json.Unmarshal(raw[i:end+1], &key) // #nosec G104 -- raw is valid JSON, so is the string
				}
				keys = append(keys, key)
				expectKey = false
			}
			i = end
		}
	}
	return keys
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
	doc := map[string]any{"path": stringMap(req.Path), "query": stringMap(req.Query)}
	if len(req.Body) > 0 {
		body, fe := parseBody(req.Body)
		if fe != nil {
			return invalid(*fe)
		}
		if body != nil { // a JSON null body is no body, as FastAPI has it
			doc["body"] = body
		}
	}
	if err := s.schemas.validate(name, doc, req.Body); err != nil {
		return err
	}
	if dst != nil && len(req.Body) > 0 {
		if err := json.Unmarshal(req.Body, dst); err != nil {
			return fmt.Errorf("payments: decode %s body after validation: %w", name, err)
		}
		if v, ok := dst.(requestValue); ok {
			fields, _ := doc["body"].(map[string]any)
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
		return s.schemas.validate(name, map[string]any{"path": stringMap(req.Path), "query": stringMap(req.Query)}, nil)
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
	if body == nil && len(query) == 0 && s.schemas.uuidPath(name, pathParams) {
		return nil, nil // what the schema would say; a failure takes the schema's path for its 422
	}
	doc := map[string]any{"path": stringMap(pathParams), "query": stringMap(query)}
	var bodyMap map[string]any
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return nil, fmt.Errorf("payments: encode %s body: %w", name, err)
		}
		decoded, err := decodeJSON(raw)
		if err != nil {
			return nil, fmt.Errorf("payments: decode %s body: %w", name, err)
		}
		doc["body"] = decoded
		bodyMap, _ = decoded.(map[string]any)
	}
	return bodyMap, s.schemas.validate(name, doc, nil)
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

func stringMap(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func invalid(fields ...FieldError) *Error {
	return &Error{Code: CodeInvalid, Message: "Validation failed.", Fields: fields}
}

// ruleError is the entry of a rule over a whole object (pydantic's model validators): a
// value_error at loc with the object, as the client sent it, as its input.
func ruleError(input any, msg string, loc ...any) FieldError {
	return FieldError{
		Type:  "value_error",
		Loc:   loc,
		Msg:   "Value error, " + msg,
		Input: input,
		Ctx:   map[string]any{"error": map[string]any{}},
	}
}

// missingShows makes the missing entries of err show input, the enclosing body.
func missingShows(err error, input map[string]any) error {
	var e *Error
	if errors.As(err, &e) {
		for i := range e.Fields {
			if e.Fields[i].Type == "missing" {
				e.Fields[i].Input = input
			}
		}
	}
	return err
}

func decodeJSON(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// parseBody decodes a request body, reporting malformed JSON, invalid UTF-8 and excessive
// nesting as pydantic's json_invalid at the character offset of the fault.
func parseBody(raw []byte) (any, *FieldError) {
	if !utf8.Valid(raw) {
		i := 0
		for i < len(raw) {
			r, size := utf8.DecodeRune(raw[i:])
			if r == utf8.RuneError && size <= 1 {
				break
			}
			i += size
		}
		return nil, jsonInvalid(utf8.RuneCount(raw[:i]), "Invalid UTF-8")
	}
	// encoding/json is the fast judge of the well-formed; the scanner, bounded in depth,
	// says where a refused text goes wrong (or where it nests too deep), as Python would.
	// Both cost one pass and memory bounded by maxJSONDepth, whatever the body.
	if tooDeep(raw) || !json.Valid(raw) {
		pos, msg, ok := jsonSyntaxError(raw)
		if !ok { // both refused it: only a fault of ours gets here
			pos, msg = 0, "Expecting value"
		}
		return nil, jsonInvalid(pos, msg)
	}
	v, err := decodeJSON(raw)
	if err != nil { // json.Valid said it is valid: only a fault of ours gets here
		return nil, jsonInvalid(0, err.Error())
	}
	return v, nil
}

// jsonInvalid is pydantic's entry for a body that is not JSON, at a character offset.
func jsonInvalid(charOffset int, reason string) *FieldError {
	return &FieldError{
		Type:  "json_invalid",
		Loc:   []any{"body", charOffset},
		Msg:   "JSON decode error",
		Input: map[string]any{},
		Ctx:   map[string]any{"error": reason},
	}
}

// uuidPathParams returns the path parameters of a request schema whose only input is
// path parameters that are all required UUIDs (the defs.json uuid), or nil for any other.
func uuidPathParams(doc any) []string {
	top, _ := doc.(map[string]any)
	props, _ := top["properties"].(map[string]any)
	path, _ := props["path"].(map[string]any)
	if len(props) != 1 || path == nil {
		return nil
	}
	params, _ := path["properties"].(map[string]any)
	required := asSlice(path["required"])
	if len(params) == 0 || len(required) != len(params) {
		return nil
	}
	var names []string
	for _, r := range required {
		name, _ := r.(string)
		p, _ := params[name].(map[string]any)
		if len(p) != 2 || p["type"] != "string" || p["$ref"] != "defs.json#/$defs/uuid" {
			return nil
		}
		names = append(names, name)
	}
	return names
}

// uuidPath validates a request of name made of path alone, when name is a uuidOnly
// request and every parameter is a UUID in a form the uuid format takes: the fast path,
// counted as the request's validation. It reports false (and counts nothing) when the
// schema must decide, for the 422 it answers.
func (v *validator) uuidPath(name string, path map[string]string) bool {
	params, ok := v.uuidOnly[name]
	if !ok || len(path) != len(params) {
		return false
	}
	for _, p := range params {
		s, ok := path[p]
		if !ok || uuidProblem(s) != "" {
			return false
		}
	}
	v.validations.Add(1)
	return true
}

// tooDeep reports whether the JSON raw opens an array or object deeper than maxJSONDepth.
// It is checked before json.Valid, which would keep a stack as deep as the text nests; for
// a malformed text it is only a hint, and jsonSyntaxError settles which fault comes first.
func tooDeep(raw []byte) bool {
	depth, inString, escaped := 0, false, false
	for _, b := range raw {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case b == '\\':
				escaped = true
			case b == '"':
				inString = false
			}
		case b == '"':
			inString = true
		case b == '{' || b == '[':
			if depth++; depth > maxJSONDepth {
				return true
			}
		case b == '}' || b == ']':
			depth--
		}
	}
	return false
}

// validate checks doc against the named request schema. rawBody is the body as the client
// wrote it (nil for a Go caller's), which orders the entries of undeclared fields.
func (v *validator) validate(name string, doc map[string]any, rawBody []byte) error {
	v.validations.Add(1)
	sch, ok := v.schemas[name]
	if !ok {
		return fmt.Errorf("payments: no request schema %q", name)
	}
	err := sch.Validate(doc)
	if err == nil {
		return v.validateBodyRules(name, doc["body"])
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return fmt.Errorf("payments: validate %s: %w", name, err)
	}
	return invalid(v.fieldErrors(name, doc, ve, rawBody)...)
}
