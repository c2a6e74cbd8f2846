package openapicheck

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// ErrNoWebhook is returned by CheckWebhook for a delivery whose event type has no entry
// in the document's webhooks section (or whose body names no type).
var ErrNoWebhook = errors.New("openapi: no webhook entry for this delivery")

// CheckWebhook checks a webhook delivery (its request headers and body) against the
// document's webhooks section. The entry is the one named by the body's "type" (the
// section has one per event type, each a POST); a type without one fails with
// ErrNoWebhook. The entry's required header parameters (webhook-id, webhook-timestamp,
// webhook-signature) must be present, each value valid against its schema; the
// Content-Type must be one its requestBody lists, and the body must validate against the
// requestBody's application/json schema, by the same JSON Schema 2020-12 validation as
// the answers.
func (c *Checker) CheckWebhook(header http.Header, body []byte) error {
	var event struct {
		Type any `json:"type"`
	}
	if err := json.Unmarshal(body, &event); err != nil {
		return fmt.Errorf("openapi: webhook delivery whose body is not a JSON object: %w", err)
	}
	typ, ok := event.Type.(string)
	if !ok || typ == "" {
		return fmt.Errorf("%w: the body has no event type (a string \"type\")", ErrNoWebhook)
	}
	item := c.Doc.Webhooks[typ]
	if item == nil || item.Post == nil {
		return fmt.Errorf("%w: event type %q has no POST entry in the document's webhooks section", ErrNoWebhook, typ)
	}
	op := item.Post
	what := "webhook " + typ

	// The header parameters of the path item, then of the operation, with where each is.
	type param struct {
		p   *openapi3.ParameterRef
		ptr []string
	}
	var params []param
	for i, p := range item.Parameters {
		params = append(params, param{p, []string{"webhooks", typ, "parameters", strconv.Itoa(i)}})
	}
	for i, p := range op.Parameters {
		params = append(params, param{p, []string{"webhooks", typ, "post", "parameters", strconv.Itoa(i)}})
	}
	for _, pp := range params {
		p := pp.p.Value
		if p == nil || p.In != openapi3.ParameterInHeader {
			continue
		}
		ptr := pp.ptr
		if name, ok := strings.CutPrefix(pp.p.Ref, "#/components/parameters/"); ok {
			ptr = []string{"components", "parameters", name}
		}
		values := header.Values(p.Name)
		if len(values) == 0 || values[0] == "" {
			if p.Required {
				return fmt.Errorf("openapi: %s delivered without its header %s", what, p.Name)
			}
			continue
		}
		if p.Schema == nil {
			continue
		}
		v, err := json.Marshal(values[0])
		if err != nil {
			return err
		}
		if err := c.validate(pointer(append(ptr, "schema")...), v); err != nil {
			return fmt.Errorf("openapi: %s delivered with header %s %q: %w", what, p.Name, values[0], err)
		}
	}

	rb := op.RequestBody
	if rb == nil || rb.Value == nil {
		return fmt.Errorf("openapi: the document's webhook %s has no requestBody", typ)
	}
	rbPtr := []string{"webhooks", typ, "post", "requestBody"}
	if name, ok := strings.CutPrefix(rb.Ref, "#/components/requestBodies/"); ok {
		rbPtr = []string{"components", "requestBodies", name}
	}
	ct := header.Get("Content-Type")
	if rb.Value.Content.Get(ct) == nil {
		return fmt.Errorf("openapi: %s delivered with Content-Type %q, which the document does not list", what, ct)
	}
	if rb.Value.Content.Get("application/json") == nil {
		return fmt.Errorf("openapi: the document's webhook %s has no application/json requestBody", typ)
	}
	if err := c.validate(pointer(append(rbPtr, "content", "application/json", "schema")...), body); err != nil {
		return fmt.Errorf("openapi: %s delivered: %w", what, err)
	}
	return nil
}
