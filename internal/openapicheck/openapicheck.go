// Package openapicheck checks HTTP answers against an OpenAPI 3.1 document. The document
// is loaded and validated by github.com/getkin/kin-openapi, and a request is routed to its
// operation by its router; the answer's status must be one the operation lists, its
// required headers present, and its body is validated against the document's schema for
// that status as JSON Schema 2020-12, by github.com/santhosh-tekuri/jsonschema with the
// whole document as the schema resource (so #/components/schemas references resolve).
//
// Not kin-openapi's openapi3filter for the bodies: for a 3.1 document it validates a
// schema with a JSON Schema 2020-12 validator only when the schema uses a keyword of 2020
// features; a schema that references #/components/schemas without one silently falls back
// to its OpenAPI 3.0 validator, which refuses null where a 3.1 schema allows any value
// ({}), and so refuses real answers (a 422's "input": null). Its example validation
// (Validate) takes the same path, so examples are validated here too.
//
// Only tests import it: the server and paymentsd never load kin-openapi.
package openapicheck

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
	"github.com/santhosh-tekuri/jsonschema/v5"
)

// Checker checks answers against one document.
type Checker struct {
	Doc    *openapi3.T
	router routers.Router
	raw    []byte

	mu       sync.Mutex
	compiler *jsonschema.Compiler
	schemas  map[string]*jsonschema.Schema // by JSON pointer into the document
}

// docURL is the document's address as a schema resource.
const docURL = "file:///openapi.json"

// New loads doc and validates it (its examples against their schemas included), and
// returns a Checker for its operations. Requests are routed as if sent to the document's
// first server: the answers checked come from test servers at any address.
func New(doc []byte) (*Checker, error) {
	loader := openapi3.NewLoader()
	d, err := loader.LoadFromData(doc)
	if err != nil {
		return nil, fmt.Errorf("openapi: loading: %w", err)
	}
	if !d.IsOpenAPI31OrLater() {
		return nil, fmt.Errorf("openapi: version %s, want 3.1", d.OpenAPI)
	}
	if err := d.Validate(context.Background(), openapi3.DisableExamplesValidation()); err != nil {
		return nil, fmt.Errorf("openapi: invalid document: %w", err)
	}
	if len(d.Servers) == 0 {
		return nil, fmt.Errorf("openapi: the document names no server")
	}
	router, err := legacy.NewRouter(d, openapi3.DisableExamplesValidation())
	if err != nil {
		return nil, fmt.Errorf("openapi: router: %w", err)
	}
	c := &Checker{Doc: d, router: router, raw: doc, schemas: map[string]*jsonschema.Schema{}}
	c.compiler = jsonschema.NewCompiler()
	c.compiler.Draft = jsonschema.Draft2020
	c.compiler.AssertFormat = true
	c.compiler.LoadURL = func(s string) (io.ReadCloser, error) { return nil, fmt.Errorf("%s is not in the document", s) }
	if err := c.compiler.AddResource(docURL, bytes.NewReader(doc)); err != nil {
		return nil, fmt.Errorf("openapi: %w", err)
	}
	if err := c.checkExamples(); err != nil {
		return nil, err
	}
	return c, nil
}

// pointer escapes a member name for a JSON pointer.
func pointer(parts ...string) string {
	r := strings.NewReplacer("~", "~0", "/", "~1")
	for i, p := range parts {
		parts[i] = r.Replace(p)
	}
	return "#/" + strings.Join(parts, "/")
}

// schema returns the compiled schema at ptr in the document.
func (c *Checker) schema(ptr string) (*jsonschema.Schema, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.schemas[ptr]; ok {
		return s, nil
	}
	s, err := c.compiler.Compile(docURL + ptr)
	if err != nil {
		return nil, fmt.Errorf("openapi: compiling %s: %w", ptr, err)
	}
	c.schemas[ptr] = s
	return s, nil
}

// validate validates a JSON value against the schema at ptr.
func (c *Checker) validate(ptr string, body []byte) error {
	s, err := c.schema(ptr)
	if err != nil {
		return err
	}
	v, err := decode(body)
	if err != nil {
		return err
	}
	return s.Validate(v)
}

func decode(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	return v, nil
}

// checkExamples validates every example of a media type, and of a parameter, against
// its schema.
func (c *Checker) checkExamples() error {
	var doc map[string]any
	if err := json.Unmarshal(c.raw, &doc); err != nil {
		return err
	}
	var errs []error
	var walk func(node any, path []string)
	walk = func(node any, path []string) {
		m, ok := node.(map[string]any)
		if !ok {
			return
		}
		if ex, ok := m["example"]; ok {
			if _, ok := m["schema"]; ok {
				b, _ := json.Marshal(ex)
				if err := c.validate(pointer(append(slices.Clone(path), "schema")...), b); err != nil {
					errs = append(errs, fmt.Errorf("openapi: example at %s: %w", pointer(path...), err))
				}
			}
		}
		for k, v := range m {
			walk(v, append(slices.Clone(path), k))
		}
	}
	walk(doc, nil)
	return errors.Join(errs...)
}

// ErrNoOperation is returned by Check for a request the document has no operation for (a
// path outside the API, or a method its path does not take).
var ErrNoOperation = errors.New("openapi: no operation for this request")

// Check checks the answer to req (status, header and body) against the document: the
// status must be one its operation lists, and the headers and body must match what the
// document says of that status.
func (c *Checker) Check(req *http.Request, status int, header http.Header, body []byte) error {
	// Route by path alone, whatever host the request went to.
	server, err := url.Parse(c.Doc.Servers[0].URL)
	if err != nil {
		return err
	}
	r := req.Clone(context.Background())
	r.URL = &url.URL{Scheme: server.Scheme, Host: server.Host, Path: req.URL.Path, RawPath: req.URL.RawPath, RawQuery: req.URL.RawQuery}
	r.Host = server.Host
	route, _, err := c.router.FindRoute(r)
	if err != nil {
		var re *routers.RouteError
		if errors.As(err, &re) {
			return fmt.Errorf("%w: %s %s: %v", ErrNoOperation, req.Method, req.URL.Path, err)
		}
		return err
	}
	method := strings.ToLower(req.Method)
	status_ := strconv.Itoa(status)
	resp := route.Operation.Responses.Value(status_)
	if resp == nil {
		return fmt.Errorf("openapi: %s %s answered %d, a status the document does not list", req.Method, route.Path, status)
	}
	base := []string{"paths", route.Path, method, "responses", status_}
	r0 := resp
	if resp.Ref != "" {
		name, _ := strings.CutPrefix(resp.Ref, "#/components/responses/")
		base = []string{"components", "responses", name}
	}
	for name, h := range r0.Value.Headers {
		if h.Value != nil && h.Value.Required && header.Get(name) == "" {
			return fmt.Errorf("openapi: %s %s answered %d without its header %s", req.Method, route.Path, status, name)
		}
	}
	ct := header.Get("Content-Type")
	if r0.Value.Content.Get(ct) == nil {
		return fmt.Errorf("openapi: %s %s answered %d with Content-Type %q, which the document does not list", req.Method, route.Path, status, ct)
	}
	if err := c.validate(pointer(append(base, "content", "application/json", "schema")...), body); err != nil {
		return fmt.Errorf("openapi: %s %s answered %d: %w", req.Method, route.Path, status, err)
	}
	return nil
}
