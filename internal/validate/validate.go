// Package validate checks the requests of the payments API against their JSON Schemas
// (draft 2020-12) and reports each failure as the pydantic v2 error entry a FastAPI
// service writes in its 422.
//
// Each request has one schema file, validating the document
//
//	{"path": {...}, "query": {...}, "body": ...}
//
// so that an error's instance location is already the API's loc ("body", "email"), and
// path errors sort before query errors before body errors. The files own every length,
// pattern and enumeration. This package compiles them once (New), runs the formats they
// name (formats.go) and the rules over a body (bodyrules.go), turns the validator's error
// tree into the entries (fielderrors.go), and reports a body that is not JSON where
// Python's decoder would (jsonerr.go).
package validate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"sync/atomic"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// schemaBaseURL is where the schema files are, for the compiler: a file's URL is this and
// its name, and its $refs resolve against it.
const schemaBaseURL = "file:///schema/"

// FieldError is one validation failure, shaped as a pydantic v2 error entry so that the
// 422 body of the HTTP API is the list of these as they are.
type FieldError struct {
	Type  string         `json:"type"`
	Loc   []any          `json:"loc"`
	Msg   string         `json:"msg"`
	Input any            `json:"input"`
	Ctx   map[string]any `json:"ctx,omitempty"`
}

// Validator validates the requests of one set of schema files. It is safe for concurrent
// use.
type Validator struct {
	schemas map[string]*jsonschema.Schema // request schemas by name (file name without .json)
	docs    map[string]any                // every schema document by URL, to read keyword values
	order   map[string]map[string]int     // request name -> "section/field" -> declaration index
	formats map[string]format             // the formats the schemas may name
	rules   map[string][]bodyRule         // request name -> the rules over its body, in order
	// uuidOnly lists, for each request whose only input is path parameters that are all
	// required UUIDs, those parameters: such a request is checked by a compiled fast path.
	uuidOnly map[string][]string
	// plain holds the plain check of each request schema that has one (plaincheck.go).
	plain map[string]*plainCheck

	validations atomic.Int64 // requests validated so far
}

// New compiles the request schemas in files: every *.json file at its root but defs.json
// (the definitions the others share) is the schema of the request its name names
// (users_create.json is "users_create"). Everything is read and compiled here, so that a
// broken schema fails New rather than a request. tables are Go tables keyed by the values
// of a schema enumeration: New fails when one and its enumeration differ.
func New(files fs.FS, tables ...EnumTable) (*Validator, error) {
	v := &Validator{
		schemas:  map[string]*jsonschema.Schema{},
		docs:     map[string]any{},
		order:    map[string]map[string]int{},
		uuidOnly: map[string][]string{},
		plain:    map[string]*plainCheck{},
		formats:  formats,
	}
	c := v.compiler()
	names, err := fs.Glob(files, "*.json")
	if err != nil {
		return nil, err
	}
	raws := map[string][]byte{}
	for _, file := range names {
		raw, err := fs.ReadFile(files, file)
		if err != nil {
			return nil, err
		}
		doc, err := DecodeJSON(raw)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		v.docs[schemaBaseURL+file] = doc
		raws[file] = raw
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
		if c := compilePlainCheck(sch, v.formats); c != nil {
			v.plain[name] = c
		}
		if v.order[name], err = declarationOrder(raw); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		if params := uuidPathParams(v.docs[schemaBaseURL+file]); params != nil {
			v.uuidOnly[name] = params
		}
	}
	if err := v.checkEnumTables(tables); err != nil {
		return nil, err
	}
	return v, nil
}

// compiler returns a schema compiler that knows v's formats and loads nothing from outside.
func (v *Validator) compiler() *jsonschema.Compiler {
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

// Validate validates a request of the named schema: its path and query parameters, and
// its body as JSON text (none when empty; a JSON null is none too, as FastAPI has it). It
// returns the body decoded as DecodeJSON decodes it (nil when there is none) and, when the
// request fails, its 422 entries in the order the API reports them. An error is a fault
// of the caller (no such schema) or of the schemas, never of the request.
func (v *Validator) Validate(name string, path, query map[string]string, body []byte) (decoded any, fields []FieldError, err error) {
	if len(body) == 0 && len(query) == 0 && v.uuidPath(name, path) {
		return nil, nil, nil // what the schema would say; a failure takes the schema's path for its 422
	}
	if len(body) > 0 {
		value, fe := ParseBody(body)
		if fe != nil {
			return nil, []FieldError{*fe}, nil
		}
		decoded = value
	}
	doc := map[string]any{"path": stringMap(path), "query": stringMap(query)}
	if decoded != nil { // a JSON null body is none, as FastAPI has it
		doc["body"] = decoded
	}
	fields, err = v.validate(name, doc, body)
	return decoded, fields, err
}

// ValidateBody validates body, a JSON value as DecodeJSON decodes it, as the body of the
// named schema's document, without path or query parameters: for a document that is not
// a request (a payee rules file), or a body already decoded. A nil body is a JSON null,
// not a body left out.
func (v *Validator) ValidateBody(name string, body any) ([]FieldError, error) {
	return v.validate(name, map[string]any{"path": map[string]any{}, "query": map[string]any{}, "body": body}, nil)
}

// Validations returns how many documents v has validated: each request counts once,
// whether the schema or its fast path judged it.
func (v *Validator) Validations() int64 { return v.validations.Load() }

// validate checks doc against the named request schema. rawBody is the body as the client
// wrote it (nil for a value decoded already), which orders the entries of undeclared
// fields.
func (v *Validator) validate(name string, doc map[string]any, rawBody []byte) ([]FieldError, error) {
	v.validations.Add(1)
	sch, ok := v.schemas[name]
	if !ok {
		return nil, fmt.Errorf("payments: no request schema %q", name)
	}
	if c := v.plain[name]; c != nil && c.valid(doc) {
		return v.validateBodyRules(name, doc["body"]) // what sch.Validate(doc) == nil leads to
	}
	err := sch.Validate(doc)
	if err == nil {
		return v.validateBodyRules(name, doc["body"])
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return nil, fmt.Errorf("payments: validate %s: %w", name, err)
	}
	return v.fieldErrors(name, doc, ve, rawBody), nil
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
func (v *Validator) uuidPath(name string, path map[string]string) bool {
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

func stringMap(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
