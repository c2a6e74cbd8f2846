package httpserver

// The generator of openapi.json: the OpenAPI 3.1 document of the API, built from
//   - the route table (paths, methods, credentials, whether a route takes a body and an
//     Idempotency-Key),
//   - the request schemas of schema/ (request bodies, path and query parameters; the
//     shared definitions of defs.json become components/schemas),
//   - the response types of package payments, by reflection of their json tags,
//   - statusByCode and each operation's own refusals (operationDocs), for the statuses,
//   - and the examples the real handler answered (openapi_examples_test.go).
// TestOpenAPI compares the result with the committed file; -update rewrites it.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/google/uuid"

	"github.com/platform-payments/payments"
)

// operationDoc is what the document says of a route beyond the table: the library method
// behind it (whose first result is the response's data) and the refusals of its own.
type operationDoc struct {
	library string          // the *payments.Service method the handler runs
	codes   []payments.Code // the operation's own refusals, besides validation (422)
	whole   reflect.Type    // the whole 200 body, when it is not the common envelope
	// name and schema, for a route whose request schema is not a file of its own titled
	// "Name: METHOD /path": its name, and the file of schema/ that validates it (one shared
	// by several routes), or none for a route without input (and so without a 422).
	name, schema string
}

var operationDocs = map[string]operationDoc{
	"POST /api/user-api/payee/create":                                     {library: "CreatePayee"},
	"PUT /api/platform/payee/update/{user_id}":                            {library: "UpdatePayee", codes: []payments.Code{payments.CodeNotFound}},
	"POST /api/platform/users/create":                                     {library: "CreateUser", codes: []payments.Code{payments.CodeConflict}},
	"POST /api/platform/users/list":                                       {library: "ListUsers", whole: reflect.TypeFor[payments.UserListEnvelope]()},
	"GET /api/platform/users/get/{user_id}":                               {library: "GetUser", codes: []payments.Code{payments.CodeNotFound}},
	"POST /api/platform/accounts/add-account":                             {library: "AddBankAccount", codes: []payments.Code{payments.CodeNotFound, payments.CodeConflict}},
	"GET /api/platform/accounts/get-account/{account_id}":                 {library: "GetBankAccount", codes: []payments.Code{payments.CodeForbidden, payments.CodeNotFound}},
	"DELETE /api/platform/card/delete/{user_id}":                          {library: "DeleteCard", codes: []payments.Code{payments.CodeNotFound}},
	"POST /api/platform/cross-border/payee/bank/{user_id}":                {library: "AddPayeeBank", codes: []payments.Code{payments.CodeNotFound}},
	"DELETE /api/platform/cross-border/payee/bank/{user_id}/{bank_uuid}":  {library: "DeletePayeeBank", codes: []payments.Code{payments.CodeNotFound}},
	"GET /api/platform/cross-border/payee/addresses/{user_id}":            {library: "ListPayeeAddresses", codes: []payments.Code{payments.CodeNotFound}},
	"GET /api/platform/cross-border/payee/address/{user_id}/{address_id}": {library: "GetPayeeAddress", codes: []payments.Code{payments.CodeNotFound}},
	"GET /api/platform/cross-border/payee-rules":                          {library: "GetPayeeRules", codes: []payments.Code{payments.CodeNotFound}},
	"GET /api/platform/cross-border/rates":                                {library: "ExchangeRates"},
	"POST /api/platform/webhooks/create":                                  {library: "CreateWebhookEndpoint"},
	"GET /api/platform/webhooks/list":                                     {library: "ListWebhookEndpoints", name: "List Webhook Endpoints"},
	"DELETE /api/platform/webhooks/delete/{endpoint_id}":                  {library: "DeleteWebhookEndpoint", codes: []payments.Code{payments.CodeNotFound}, name: "Delete Webhook Endpoint", schema: "webhooks_endpoint.json"},
	"POST /api/platform/webhooks/enable/{endpoint_id}":                    {library: "EnableWebhookEndpoint", codes: []payments.Code{payments.CodeNotFound}, name: "Enable Webhook Endpoint", schema: "webhooks_endpoint.json"},
	"POST /api/platform/webhooks/rotate-secret/{endpoint_id}":             {library: "RotateWebhookSecret", codes: []payments.Code{payments.CodeNotFound}, name: "Rotate Webhook Secret", schema: "webhooks_endpoint.json"},
	"GET /api/platform/webhooks/get/{endpoint_id}":                        {library: "GetWebhookEndpoint", codes: []payments.Code{payments.CodeNotFound}, name: "Get Webhook Endpoint", schema: "webhooks_endpoint.json"},
	"PUT /api/platform/webhooks/update/{endpoint_id}":                     {library: "UpdateWebhookEndpoint", codes: []payments.Code{payments.CodeNotFound}},
	"POST /api/platform/webhooks/disable/{endpoint_id}":                   {library: "DisableWebhookEndpoint", codes: []payments.Code{payments.CodeNotFound}, name: "Disable Webhook Endpoint", schema: "webhooks_endpoint.json"},
	"POST /api/platform/webhooks/recover/{endpoint_id}":                   {library: "RecoverWebhookEndpoint", codes: []payments.Code{payments.CodeNotFound, payments.CodeConflict}},
	"POST /api/platform/webhooks/test/{endpoint_id}":                      {library: "SendTestWebhook", codes: []payments.Code{payments.CodeNotFound, payments.CodeConflict}, name: "Send Test Webhook", schema: "webhooks_endpoint.json"},
	"GET /api/platform/webhooks/attempts/{endpoint_id}":                   {library: "ListWebhookAttempts", codes: []payments.Code{payments.CodeNotFound}},
	"GET /api/platform/events/list":                                       {library: "ListEvents"},
	"GET /api/platform/events/get/{event_id}":                             {library: "GetEvent", codes: []payments.Code{payments.CodeNotFound}},
	"POST /api/platform/events/resend/{event_id}":                         {library: "ResendEvent", codes: []payments.Code{payments.CodeNotFound, payments.CodeConflict}},
}

// What each status means, for every route that can answer it.
var statusDescriptions = map[int]string{
	http.StatusOK:                    "Success.",
	http.StatusBadRequest:            "The Idempotency-Key header is malformed: empty, longer than 255 characters, not printable ASCII, or sent twice.",
	http.StatusUnauthorized:          "Authentication failed: a credential header is missing, or the credentials or the signature are not right (for a platform that requires signed timestamps, also a missing, malformed or out-of-window X-Timestamp). Checked before the body.",
	http.StatusForbidden:             "Authenticated, but not allowed yet.",
	http.StatusNotFound:              "Not found for this caller: what does not exist and what belongs to another platform are answered alike.",
	http.StatusConflict:              "Conflicts with what is stored.",
	http.StatusRequestEntityTooLarge: "The request body exceeds 64 KiB.",
	http.StatusUnsupportedMediaType:  "A body was sent without Content-Type: application/json.",
	http.StatusUnprocessableEntity:   "The request fails validation: FastAPI's shape, one pydantic v2 entry per failure, path before query before body.",
	http.StatusTooManyRequests:       "A limit refused the request: the caller's rate limit (when the server runs with -rate-limit), or too many failed authentications from this address or naming these credentials. Retry-After says when to come back.",
	http.StatusInternalServerError:   "A fault of the server; the details are logged with the request id, never answered.",
	http.StatusServiceUnavailable:    "The database cannot be reached for now (its connection refused or lost, PostgreSQL shutting down or starting up, SQLite's file locked by another process past its 10 s wait): error code unavailable, its cause logged, never answered. Retry-After (1 second) says when to try again; a change sent with an Idempotency-Key is retried safely with the same key (no outcome is stored for a 503, and a change that did commit before the connection was lost is replayed).",
}

// refusalDescriptions say what an operation's own refusal means for it, by route and
// status; statusDescriptions is the rest.
var refusalDescriptions = map[string]map[int]string{
	"GET /api/platform/accounts/get-account/{account_id}": {
		http.StatusForbidden: "The account's user is not identity-verified yet: an operator verifies a user with `paymentsd user verify USER_ID` (library `Service.VerifyUser`); until then the account is not shown.",
	},
	"POST /api/platform/users/create": {
		http.StatusConflict: "The platform already has a user with this email (compared case-insensitively).",
	},
	"POST /api/platform/accounts/add-account": {
		http.StatusConflict: "The user already has an account with this routing number and account number.",
	},
	"POST /api/platform/events/resend/{event_id}": {
		http.StatusNotFound: "The platform has no such event, or no such endpoint (endpoint_id).",
		http.StatusConflict: "The endpoint named by endpoint_id is disabled: enable it first.",
	},
}

const (
	idempotencyConflict = "The same Idempotency-Key is in use by a request still running."
	idempotencyMismatch = "Also: the Idempotency-Key was already used with a different request (the error envelope)."
)

// The OpenAPI document's top-level members, in the order they are written.
type openAPIDoc struct {
	OpenAPI    string         `json:"openapi"`
	Info       map[string]any `json:"info"`
	Servers    []any          `json:"servers"`
	Tags       []any          `json:"tags"`
	Paths      map[string]any `json:"paths"`
	Webhooks   map[string]any `json:"webhooks"`
	Components map[string]any `json:"components"`
}

// requestSchema is one file of schema/ that describes an API request.
type requestSchema struct {
	file, name, note string
	raw              []byte
	doc              map[string]any
}

// generator builds the document; schemas collects the reflected response types.
type generator struct {
	ex      *exampleSet
	schemas map[string]any
}

// buildOpenAPI returns the document, indented, ending in a newline.
func buildOpenAPI(ex *exampleSet) ([]byte, error) {
	g := &generator{ex: ex, schemas: map[string]any{}}
	requests, shared, defs, err := readRequestSchemas()
	if err != nil {
		return nil, err
	}
	if err := typeForGenerators(requests, shared, defs); err != nil {
		return nil, err
	}
	for name, def := range defs {
		g.schemas[name] = def
	}
	errorEnvelope := g.envelope(nullData())
	errorEnvelope["description"] = "The error envelope: success false, the message, data null."
	g.schemas["ErrorEnvelope"] = errorEnvelope
	g.ref(reflect.TypeFor[payments.ValidationBody]())

	paths := map[string]any{}
	for _, rt := range routes {
		od, ok := operationDocs[rt.pattern]
		if !ok {
			return nil, fmt.Errorf("route %s has no entry in operationDocs", rt.pattern)
		}
		req, ok := requests[rt.pattern]
		if od.name != "" {
			if ok {
				return nil, fmt.Errorf("route %s has a request schema of its own and a name in operationDocs", rt.pattern)
			}
			req, ok = &requestSchema{name: od.name, doc: map[string]any{}}, true
			if od.schema != "" {
				if req, ok = shared[od.schema]; ok {
					req = &requestSchema{file: req.file, name: od.name, raw: req.raw, doc: req.doc}
				}
			}
		}
		if !ok {
			return nil, fmt.Errorf("route %s has no request schema in schema/ (a file titled \"Name: %s\")", rt.pattern, rt.pattern)
		}
		method, path, _ := strings.Cut(rt.pattern, " ")
		op, err := g.operation(rt, od, req)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", rt.pattern, err)
		}
		item, _ := paths[path].(map[string]any)
		if item == nil {
			item = map[string]any{}
			paths[path] = item
		}
		item[strings.ToLower(method)] = op
	}

	example, err := eventExample(ex)
	if err != nil {
		return nil, err
	}
	webhooks, err := g.webhooks(example)
	if err != nil {
		return nil, err
	}
	parameters := sharedParameters()

	doc := openAPIDoc{
		OpenAPI: "3.1.0",
		Info: map[string]any{
			"title":   "Platform Payments API",
			"version": "1.0.0",
			"summary": "Users, payees, bank accounts, cards and cross-border payouts of a payments platform.",
			"description": "Generated from the route table, the request schemas (schema/) and the response types of " +
				"github.com/platform-payments/payments; do not edit by hand (go test ./httpserver -run TestOpenAPI -update). " +
				"Platform requests are signed with HMAC-SHA256: see the security scheme platformSignature and docs/api.md. " +
				"Custom formats: text (free text without control, bidirectional-override or invisible-only content), " +
				"iso4217 and iso3166-alpha2 (known codes), " +
				"aba-routing (an ABA routing number with its checksum). Integers in requests are strict: a JSON integer, never 10.0 or \"10\". x-rule is a rule over a whole body, " +
				"answered as one value_error at the body.",
			"license": map[string]any{"name": "Proprietary", "identifier": "LicenseRef-Proprietary"},
		},
		Servers: []any{map[string]any{"url": "http://127.0.0.1:8080", "description": "paymentsd serve's default address"}},
		Tags: []any{
			map[string]any{"name": "users", "description": "A platform's users: create, list, get (platform credentials)."},
			map[string]any{"name": "payees", "description": "Payee profiles: created by a user with an API key (X-Api-Key, X-Api-Secret), updated by the platform."},
			map[string]any{"name": "bank-accounts", "description": "Users' bank accounts (platform credentials)."},
			map[string]any{"name": "cards", "description": "Users' cards (platform credentials)."},
			map[string]any{"name": "cross-border", "description": "Cross-border payouts: payee banks and addresses, payee rules, exchange rates (platform credentials)."},
			map[string]any{"name": "webhook-endpoints", "description": "The platform's webhook endpoints (platform credentials)."},
			map[string]any{"name": "events", "description": "The platform's events and their deliveries (platform credentials)."},
			map[string]any{"name": "webhooks", "description": "Events, as the platform's webhook endpoints receive them: signed by the Standard Webhooks scheme (webhook-id, webhook-timestamp, webhook-signature)."},
		},
		Paths:    paths,
		Webhooks: webhooks,
		Components: map[string]any{
			"schemas":         g.schemas,
			"securitySchemes": securitySchemes(),
			"parameters":      parameters,
			"headers":         sharedHeaders(),
			"responses":       g.sharedResponses(),
		},
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// readRequestSchemas reads schema/: the request files of the API by the route each names
// in its title ("Create User: POST /api/platform/users/create"), the files whose title
// names no one route (one shared by several) by file name, and the shared definitions,
// with every reference to defs.json rewritten to components/schemas.
func readRequestSchemas() (requests, shared map[string]*requestSchema, defs map[string]any, err error) {
	files := payments.RequestSchemas()
	names, err := fs.Glob(files, "*.json")
	if err != nil {
		return nil, nil, nil, err
	}
	requests, shared = map[string]*requestSchema{}, map[string]*requestSchema{}
	for _, file := range names {
		raw, err := fs.ReadFile(files, file)
		if err != nil {
			return nil, nil, nil, err
		}
		var doc map[string]any
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if err := dec.Decode(&doc); err != nil {
			return nil, nil, nil, fmt.Errorf("%s: %w", file, err)
		}
		rewriteRefs(doc)
		if file == "defs.json" {
			defs, _ = doc["$defs"].(map[string]any)
			continue
		}
		title, _ := doc["title"].(string)
		name, rest, ok := strings.Cut(title, ": ")
		method, _, _ := strings.Cut(rest, " ")
		if !ok || method == "" || strings.ToUpper(method) != method || !strings.Contains(rest, " /") {
			// Not one HTTP request: library and command line only, or shared by routes
			// that operationDocs names.
			shared[file] = &requestSchema{file: file, raw: raw, doc: doc}
			continue
		}
		pattern, note, _ := strings.Cut(rest, ". ")
		pattern, _, _ = strings.Cut(pattern, "?")
		requests[pattern] = &requestSchema{file: file, name: name, note: note, raw: raw, doc: doc}
	}
	if defs == nil {
		return nil, nil, nil, fmt.Errorf("schema/defs.json: no $defs")
	}
	return requests, shared, defs, nil
}

// rewriteRefs points references to defs.json at the document's components/schemas.
func rewriteRefs(node any) {
	switch n := node.(type) {
	case map[string]any:
		for k, v := range n {
			if s, ok := v.(string); ok && k == "$ref" {
				if def, ok := strings.CutPrefix(s, "defs.json#/$defs/"); ok {
					n[k] = "#/components/schemas/" + def
				}
				continue
			}
			rewriteRefs(v)
		}
	case []any:
		for _, v := range n {
			rewriteRefs(v)
		}
	}
}

// section returns a section ("path", "query", "body") of a request schema.
func (r *requestSchema) section(name string) map[string]any {
	props, _ := r.doc["properties"].(map[string]any)
	s, _ := props[name].(map[string]any)
	return s
}

// operationID is the request's name in lower camel case: "Create User" is createUser.
func operationID(name string) string {
	words := strings.Fields(name)
	for i, w := range words {
		if i == 0 {
			words[i] = strings.ToLower(w)
		} else {
			r := []rune(w)
			r[0] = unicode.ToUpper(r[0])
			words[i] = string(r)
		}
	}
	return strings.Join(words, "")
}

func (g *generator) operation(rt route, od operationDoc, req *requestSchema) (map[string]any, error) {
	m, ok := reflect.TypeFor[*payments.Service]().MethodByName(od.library)
	if !ok {
		return nil, fmt.Errorf("payments.Service has no method %s", od.library)
	}
	op := map[string]any{
		"operationId": operationID(req.name),
		"summary":     req.name,
	}
	desc := fmt.Sprintf("Library: `Service.%s`.", od.library)
	if req.file != "" {
		desc += fmt.Sprintf(" Request schema: `schema/%s`.", req.file)
	} else {
		desc += " Takes no parameters and no body."
	}
	if req.note != "" {
		desc = req.note + " " + desc
	}
	switch {
	case rt.effect == changes:
		desc += " Takes an optional Idempotency-Key: a retry with the same key, method, target and body gets the stored answer back (Idempotent-Replayed: true)."
	case rt.effect == changesUnkeyed:
		desc += " Takes no Idempotency-Key (one sent is ignored): " + unkeyedNotes[rt.pattern]
	case rt.body == withBody:
		desc += " Changes nothing: an Idempotency-Key is ignored."
	}
	if rt.body == withBody && !bodyRequired(req) {
		desc += " The body is optional: none is `{}`."
	}
	op["description"] = desc
	tag, err := tagOf(rt.pattern)
	if err != nil {
		return nil, err
	}
	op["tags"] = []any{tag}
	if rt.auth == userAPI {
		op["security"] = []any{map[string]any{"apiKey": []any{}, "apiSecret": []any{}}}
	} else {
		op["security"] = []any{map[string]any{"platformID": []any{}, "platformSignature": []any{}}}
	}

	// Parameters: the path's, in the pattern's order; the query's, in the file's order;
	// then the headers.
	var params []any
	if path := req.section("path"); path != nil {
		props, _ := path["properties"].(map[string]any)
		for _, m := range pathParam.FindAllStringSubmatch(rt.pattern, -1) {
			s, ok := props[m[1]]
			if !ok {
				return nil, fmt.Errorf("path parameter %s is not in schema/%s", m[1], req.file)
			}
			params = append(params, map[string]any{"name": m[1], "in": "path", "required": true, "schema": s})
		}
		if len(props) != len(params) {
			return nil, fmt.Errorf("schema/%s has path parameters the pattern does not", req.file)
		}
	} else if pathParam.MatchString(rt.pattern) {
		return nil, fmt.Errorf("schema/%s describes no path parameters", req.file)
	}
	if query := req.section("query"); query != nil {
		props, _ := query["properties"].(map[string]any)
		required, _ := query["required"].([]any)
		names := make([]string, 0, len(props))
		for name := range props {
			names = append(names, name)
		}
		sort.Slice(names, func(i, j int) bool { // the file's order
			return bytes.Index(req.raw, []byte(`"`+names[i]+`"`)) < bytes.Index(req.raw, []byte(`"`+names[j]+`"`))
		})
		for _, name := range names {
			params = append(params, map[string]any{
				"name": name, "in": "query", "required": slices.Contains(required, any(name)), "schema": props[name],
			})
		}
	}
	if rt.auth == platformAPI {
		params = append(params, map[string]any{"$ref": "#/components/parameters/X-Timestamp"})
	}
	if rt.effect == changes {
		params = append(params, map[string]any{"$ref": "#/components/parameters/Idempotency-Key"})
	}
	op["parameters"] = params

	ex := g.ex.byRoute[rt.pattern]
	if rt.body == withBody {
		body := req.section("body")
		if body == nil {
			return nil, fmt.Errorf("schema/%s describes no body", req.file)
		}
		ok := ex[http.StatusOK]
		if ok == nil {
			return nil, fmt.Errorf("no example of a 200")
		}
		op["requestBody"] = map[string]any{
			"required": bodyRequired(req),
			"content": map[string]any{"application/json": map[string]any{
				"schema":  body,
				"example": rawJSON(ok.reqBody),
			}},
		}
	} else if req.section("body") != nil {
		return nil, fmt.Errorf("schema/%s describes a body, but the route takes none", req.file)
	}

	responses := map[string]any{}
	// 200: the envelope around the method's first result, or its own body.
	var okSchema map[string]any
	if od.whole != nil {
		okSchema = g.ref(od.whole)
	} else if m.Type.NumOut() == 1 {
		okSchema = g.envelope(nullData())
	} else {
		okSchema = g.envelope(g.schemaOf(m.Type.Out(0)))
	}
	okHeaders := map[string]any{
		"RateLimit-Limit":     map[string]any{"$ref": "#/components/headers/RateLimit-Limit"},
		"RateLimit-Remaining": map[string]any{"$ref": "#/components/headers/RateLimit-Remaining"},
		"RateLimit-Reset":     map[string]any{"$ref": "#/components/headers/RateLimit-Reset"},
	}
	if rt.effect == changes {
		okHeaders["Idempotent-Replayed"] = map[string]any{"$ref": "#/components/headers/Idempotent-Replayed"}
	}
	responses["200"] = g.response(statusDescriptions[http.StatusOK], okSchema, ex[http.StatusOK], okHeaders, true)

	// The operation's own refusals, in the error envelope.
	own := map[int]bool{}
	for _, code := range od.codes {
		own[statusByCode[code]] = true
	}
	if rt.effect == changes {
		own[http.StatusConflict] = true // an Idempotency-Key in use
	}
	for _, status := range []int{http.StatusForbidden, http.StatusNotFound, http.StatusConflict} {
		if !own[status] {
			continue
		}
		desc := statusDescriptions[status]
		if d := refusalDescriptions[rt.pattern][status]; d != "" {
			desc = d
		}
		if status == http.StatusConflict && rt.effect == changes {
			if slices.Contains(od.codes, payments.CodeConflict) {
				desc += " Or: " + idempotencyConflict
			} else {
				desc = idempotencyConflict
			}
		}
		e := ex[status]
		if e == nil && status != http.StatusConflict {
			return nil, fmt.Errorf("no example of a %d", status)
		}
		responses[strconv.Itoa(status)] = g.response(desc, ref("ErrorEnvelope"), e, nil, false)
	}
	// 422: the pydantic detail list; on a route that changes something, also the
	// envelope of an Idempotency-Key used with another request.
	invalid := ref("ValidationBody")
	desc = statusDescriptions[http.StatusUnprocessableEntity]
	if rt.effect == changes {
		invalid = map[string]any{"anyOf": []any{ref("ValidationBody"), ref("ErrorEnvelope")}}
		desc += " " + idempotencyMismatch
	}
	if req.file != "" || rt.effect == changes { // a route without input is never invalid
		if ex[http.StatusUnprocessableEntity] == nil {
			return nil, fmt.Errorf("no example of a 422")
		}
		responses["422"] = g.response(desc, invalid, ex[http.StatusUnprocessableEntity], nil, false)
	}
	// What every route of its kind can answer.
	shared := []string{"401", "413", "429", "500", "503"}
	if rt.body == withBody {
		shared = append(shared, "415")
	}
	if rt.effect == changes {
		shared = append(shared, "400")
	}
	for _, s := range shared {
		responses[s] = map[string]any{"$ref": "#/components/responses/" + s}
	}
	op["responses"] = responses
	return op, nil
}

// bodyRequired reports whether a request schema requires its body.
func bodyRequired(req *requestSchema) bool {
	required, _ := req.doc["required"].([]any)
	return slices.Contains(required, any("body"))
}

// unkeyedNotes say why a route that changes something keeps no Idempotency-Key.
var unkeyedNotes = map[string]string{
	"POST /api/platform/webhooks/enable/{endpoint_id}":        "enabling an enabled endpoint changes nothing.",
	"POST /api/platform/webhooks/rotate-secret/{endpoint_id}": "a retry rotates again, and the secret it replaces still signs deliveries for 24 hours, so a client that lost the first answer loses nothing.",
	"PUT /api/platform/webhooks/update/{endpoint_id}":         "an update retried sets the same values again.",
	"POST /api/platform/webhooks/disable/{endpoint_id}":       "disabling a disabled endpoint changes nothing.",
	"POST /api/platform/webhooks/recover/{endpoint_id}":       "a retry queues only what is not waiting already.",
	"POST /api/platform/webhooks/test/{endpoint_id}":          "a retry sends another test event, which changes nothing else.",
	"POST /api/platform/events/resend/{event_id}":             "a retry schedules the same deliveries again.",
}

// response is a response object with its JSON schema and, when one was answered, the
// real answer as its example.
func (g *generator) response(desc string, schema map[string]any, e *exchange, headers map[string]any, _ bool) map[string]any {
	media := map[string]any{"schema": schema}
	if e != nil {
		media["example"] = rawJSON(e.respBody)
	}
	r := map[string]any{"description": desc, "content": map[string]any{"application/json": media}}
	if len(headers) > 0 {
		r["headers"] = headers
	}
	return r
}

func ref(name string) map[string]any { return map[string]any{"$ref": "#/components/schemas/" + name} }

// rawJSON keeps an example's bytes as the server wrote them (compacted, as it writes).
func rawJSON(b []byte) json.RawMessage { return json.RawMessage(bytes.TrimSpace(b)) }

// envelope is the schema of payments.Envelope with data's schema given.
func (g *generator) envelope(data map[string]any) map[string]any {
	s := g.structSchema(reflect.TypeFor[payments.Envelope]())
	s["properties"].(map[string]any)["data"] = data
	return s
}

var (
	timeType    = reflect.TypeFor[time.Time]()
	uuidType    = reflect.TypeFor[uuid.UUID]()
	decimalType = reflect.TypeFor[payments.Decimal]()
	marshaler   = reflect.TypeFor[json.Marshaler]()
	textMarsh   = reflect.TypeFor[interface{ MarshalText() ([]byte, error) }]()
)

// schemaOf is the JSON Schema of what encoding/json writes for a value of t.
func (g *generator) schemaOf(t reflect.Type) map[string]any {
	switch t {
	case timeType:
		return map[string]any{"type": "string", "format": "date-time"}
	case uuidType:
		return map[string]any{"type": "string", "format": "uuid"}
	case decimalType:
		return map[string]any{"type": "number", "format": "double", "description": "A decimal, written with exactly its digits."}
	}
	if t.Kind() != reflect.Pointer && (t.Implements(marshaler) || t.Implements(textMarsh)) {
		panic(fmt.Sprintf("openapi: %s encodes itself: teach schemaOf what it writes", t))
	}
	switch t.Kind() {
	case reflect.Pointer:
		return nullable(g.schemaOf(t.Elem()))
	case reflect.Struct:
		return g.ref(t)
	case reflect.Slice:
		// A nil slice is null: the response types never hold one (checked by every
		// scenario's answers against this document).
		return map[string]any{"type": "array", "items": g.schemaOf(t.Elem())}
	case reflect.Map:
		return map[string]any{"type": "object", "additionalProperties": g.schemaOf(t.Elem())}
	case reflect.String:
		if enum := typeEnums[t]; enum != nil {
			return map[string]any{"type": "string", "enum": enum}
		}
		return map[string]any{"type": "string"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return map[string]any{"type": "integer", "format": "int64"}
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number", "format": "double"}
	case reflect.Interface:
		panic(fmt.Sprintf("openapi: %s can hold anything: say what in fieldSchemas", t))
	}
	panic(fmt.Sprintf("openapi: no schema for %s", t))
}

// nullable adds null to what a schema allows.
func nullable(s map[string]any) map[string]any {
	if typ, ok := s["type"].(string); ok {
		s["type"] = []any{typ, "null"}
		return s
	}
	return map[string]any{"anyOf": []any{s, map[string]any{"type": "null"}}}
}

// ref registers a named struct type as a component schema and returns a reference to it.
func (g *generator) ref(t reflect.Type) map[string]any {
	name := t.Name()
	if _, done := g.schemas[name]; !done {
		g.schemas[name] = nil // reserved, for recursive types
		g.schemas[name] = g.structSchema(t)
	}
	return ref(name)
}

// structSchema is the object encoding/json writes for a struct: a property for each
// exported field by its json name; a field without omitempty is always there (required),
// a pointer without omitempty is null when nil, and a field with omitempty is left out
// when empty (optional, never null). No property is written that is not a field.
//
// A struct embedded without a json name (EventDetail's Event) has its fields written as
// the embedding struct's own, as encoding/json writes them; through a pointer
// (WebhookEndpoint's EndpointHealth), they are left out together when it is nil, so none
// is required.
func (g *generator) structSchema(t reflect.Type) map[string]any {
	props := map[string]any{}
	var required []any
	g.fields(t, t, props, &required)
	s := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

// fields adds the properties of t's fields to props, and those always written to
// required; top is the struct being described (t, or one embedding t).
func (g *generator) fields(top, t reflect.Type, props map[string]any, required *[]any) {
	for f := range t.Fields() {
		tag := f.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			g.fields(top, f.Type, props, required)
			continue
		}
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Pointer && f.Type.Elem().Kind() == reflect.Struct {
			var together []any // written together, or (nil) all left out: none required
			g.fields(top, f.Type.Elem(), props, &together)
			continue
		}
		if !f.IsExported() {
			continue
		}
		if f.Anonymous {
			panic(fmt.Sprintf("openapi: %s embeds %s: not supported", t, f.Type))
		}
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if _, dup := props[name]; dup {
			panic(fmt.Sprintf("openapi: %s writes %s twice", top, name))
		}
		omitempty := strings.Contains(","+opts+",", ",omitempty,")
		var s map[string]any
		switch {
		case fieldSchemas[t.Name()+"."+name] != nil:
			s = fieldSchemas[t.Name()+"."+name]()
		case omitempty && f.Type.Kind() == reflect.Pointer:
			s = g.schemaOf(f.Type.Elem()) // left out when nil: never null
		default:
			s = g.schemaOf(f.Type)
		}
		if enum := fieldEnums[t.Name()+"."+name]; enum != nil {
			if s["type"] == "array" {
				s["items"] = map[string]any{"type": "string", "enum": enum}
			} else {
				s["enum"] = enum
			}
		}
		props[name] = s
		if !omitempty {
			*required = append(*required, name)
		}
	}
}

// typeEnums are the string types of package payments whose values are a fixed set.
var typeEnums = map[reflect.Type][]any{
	reflect.TypeFor[payments.Environment]():    {string(payments.Sandbox), string(payments.Production)},
	reflect.TypeFor[payments.EndpointStatus](): {string(payments.EndpointEnabled), string(payments.EndpointDisabled)},
}

// fieldEnums are the string fields (or the strings of an array field) whose values are a
// fixed set, by "Type.json_name".
var fieldEnums = map[string][]any{
	"Event.type":             stringsOf(payments.EventTypes()),
	"WebhookEndpoint.events": stringsOf(append(payments.EventTypes(), payments.AllEvents)),
}

func stringsOf(values []string) []any {
	out := make([]any, len(values))
	for i, v := range values {
		out[i] = v
	}
	return out
}

func securitySchemes() map[string]any {
	return map[string]any{
		"platformID": map[string]any{
			"type": "apiKey", "in": "header", "name": payments.HeaderPlatformID,
			"description": "The platform's id, as `paymentsd platform create` issued it. Sent with X-Signature.",
		},
		"platformSignature": map[string]any{
			"type": "apiKey", "in": "header", "name": payments.HeaderSignature,
			"description": "hex(HMAC-SHA256(key = the platform secret as issued, message = METHOD + PATH_AND_QUERY + hex(SHA-256(BODY)))), " +
				"no separators; PATH_AND_QUERY is the request target exactly as sent. A platform created with -require-timestamp " +
				"also sends X-Timestamp and appends it, as sent, to the message. Go clients sign with payments.Sign and " +
				"payments.SignTimestamped (package client of the module signs every request so); docs/api.md has a worked example.",
		},
		"apiKey": map[string]any{
			"type": "apiKey", "in": "header", "name": payments.HeaderAPIKey,
			"description": "A user's API key, as `paymentsd apikey create` issued it. Sent with X-Api-Secret.",
		},
		"apiSecret": map[string]any{
			"type": "apiKey", "in": "header", "name": payments.HeaderAPISecret,
			"description": "The API key's secret.",
		},
	}
}

func sharedParameters() map[string]any {
	return map[string]any{
		"X-Timestamp": map[string]any{
			"name": payments.HeaderTimestamp, "in": "header", "required": false,
			"description": fmt.Sprintf("The time of the request in Unix seconds, covered by X-Signature: required of a platform "+
				"created with -require-timestamp (within %d seconds of the server's clock by default), ignored for the others.",
				int(payments.DefaultTimestampTolerance/time.Second)),
			"schema":  map[string]any{"type": "string", "pattern": "^[0-9]+$"},
			"example": "1795341600",
		},
		"Idempotency-Key": map[string]any{
			"name": headerIdempotencyKey, "in": "header", "required": false,
			"description": "A key of the client's choosing for this operation: the same key, method, target and body " +
				"replays the stored answer (kept 24 hours by default) instead of running again.",
			"schema": map[string]any{"type": "string", "minLength": 1, "maxLength": payments.MaxIdempotencyKeyLength,
				"pattern": "^[\\x20-\\x7E]+$"},
			"example": "create-ada-2026-11-23",
		},
	}
}

func sharedHeaders() map[string]any {
	integer := func(desc string) map[string]any {
		return map[string]any{"description": desc, "schema": map[string]any{"type": "integer", "format": "int64", "minimum": 0}}
	}
	return map[string]any{
		"RateLimit-Limit":     integer("Requests the caller's bucket holds when full (the burst). Sent on every answer to an authenticated request when the server runs with a rate limit."),
		"RateLimit-Remaining": integer("Whole requests in the caller's bucket now."),
		"RateLimit-Reset":     integer("Seconds until the bucket is full again."),
		"Retry-After": map[string]any{"description": "Seconds until a request may be sent again (at least 1).", "required": true,
			"schema": map[string]any{"type": "integer", "format": "int64", "minimum": 1}},
		"Idempotent-Replayed": map[string]any{
			"description": "true when the answer is the one stored under the Idempotency-Key, not a new run.",
			"schema":      map[string]any{"type": "string", "enum": []any{"true"}},
		},
	}
}

// sharedResponses are the answers of every route of a kind, each with the real answer
// as its example.
func (g *generator) sharedResponses() map[string]any {
	out := map[string]any{}
	for _, status := range []int{400, 401, 413, 415, 429, 500, 503} {
		var headers map[string]any
		if status == http.StatusServiceUnavailable {
			headers = map[string]any{"Retry-After": map[string]any{"$ref": "#/components/headers/Retry-After"}}
		}
		if status == http.StatusTooManyRequests {
			headers = map[string]any{
				"Retry-After":         map[string]any{"$ref": "#/components/headers/Retry-After"},
				"RateLimit-Limit":     map[string]any{"$ref": "#/components/headers/RateLimit-Limit"},
				"RateLimit-Remaining": map[string]any{"$ref": "#/components/headers/RateLimit-Remaining"},
				"RateLimit-Reset":     map[string]any{"$ref": "#/components/headers/RateLimit-Reset"},
			}
		}
		out[strconv.Itoa(status)] = g.response(statusDescriptions[status], ref("ErrorEnvelope"), g.ex.shared[status], headers, false)
	}
	return out
}

// tagOf is the tag of a route: the resource its path names.
func tagOf(pattern string) (string, error) {
	_, path, _ := strings.Cut(pattern, " ")
	for _, t := range []struct{ prefix, tag string }{
		{"/api/platform/users/", "users"},
		{"/api/user-api/payee/", "payees"},
		{"/api/platform/payee/", "payees"},
		{"/api/platform/accounts/", "bank-accounts"},
		{"/api/platform/card/", "cards"},
		{"/api/platform/cross-border/", "cross-border"},
		{"/api/platform/webhooks/", "webhook-endpoints"},
		{"/api/platform/events/", "events"},
	} {
		if strings.HasPrefix(path, t.prefix) {
			return t.tag, nil
		}
	}
	return "", fmt.Errorf("route %s has no tag: add its path to tagOf", pattern)
}

// fieldSchemas are the schemas of the fields whose Go type says too little (any), by
// "Type.json_name": what the values are. x-go-type has oapi-codegen keep such a value as
// json.RawMessage (encoding/json, which the generated code imports already) rather than a
// union type of its own for each.
var fieldSchemas = map[string]func() map[string]any{
	// The envelope's data: each route's own (envelope replaces it), null in the error one.
	"Envelope.data": nullData,
	// pydantic's location: names, and indexes of arrays.
	"FieldError.loc": func() map[string]any {
		return map[string]any{"type": "array", "items": map[string]any{
			"anyOf":     []any{map[string]any{"type": "string"}, map[string]any{"type": "integer", "format": "int64"}},
			"x-go-type": "json.RawMessage",
		}}
	},
	// The value that failed, as sent: any JSON value, so no type. (TypeScript's type of it
	// is unknown: a recursive JSON type, arrays of itself, is beyond openapi-typescript.)
	"FieldError.input": func() map[string]any {
		return map[string]any{"description": "The value that failed, as sent: any JSON value.", "x-go-type": "json.RawMessage"}
	},
	// The failure's parameters: a bound, a pattern, a reason, or {} for an error.
	"FieldError.ctx": func() map[string]any {
		return map[string]any{"type": "object", "additionalProperties": map[string]any{
			"anyOf": []any{
				map[string]any{"type": "string"},
				map[string]any{"type": "number", "format": "double"},
				map[string]any{"type": "object", "additionalProperties": false},
			},
			"x-go-type": "json.RawMessage",
		}}
	},
}

// typeForGenerators rewrites the request schemas read from schema/ into equivalent forms
// that code generators (oapi-codegen, openapi-typescript) read as exact types; the
// validator keeps reading schema/ as it is. In the document:
//   - a shared definition states its own type (schema/defs.json leaves it to each use, so
//     that one definition serves required and optional fields): the one type its uses name
//     beside their $ref, which then goes; a use that allows null becomes
//     anyOf [$ref, {type: null}];
//   - an enum that lists null becomes anyOf [the typed enum without null, {type: null}];
//   - an enum without a type gets the type of its values;
//   - integers are format int64 (strict-integer, the validator's format, is said in the
//     info's description) and numbers format double;
//   - a rule over a whole body (a definition with x-rule, which is no type: if/then/else
//     over the body's members) is written inline in the body's allOf, not as a component
//     that generators would turn into a type of its own.
func typeForGenerators(requests, shared map[string]*requestSchema, defs map[string]any) error {
	defTypes := map[string]string{}
	var walk func(node any) (any, error)
	walk = func(node any) (any, error) {
		switch n := node.(type) {
		case []any:
			for i, v := range n {
				w, err := walk(v)
				if err != nil {
					return nil, err
				}
				n[i] = w
			}
			return n, nil
		case map[string]any:
			for k, v := range n {
				if k == "example" || k == "examples" || k == "enum" || k == "const" {
					continue
				}
				w, err := walk(v)
				if err != nil {
					return nil, err
				}
				n[k] = w
			}
			return typedSchema(n, defs, defTypes)
		}
		return node, nil
	}
	seen := map[*requestSchema]bool{}
	for _, set := range []map[string]*requestSchema{requests, shared} {
		for _, r := range set {
			if seen[r] {
				continue
			}
			seen[r] = true
			if _, err := walk(r.doc); err != nil {
				return fmt.Errorf("schema/%s: %w", r.file, err)
			}
		}
	}
	for name, def := range defs {
		d := def.(map[string]any)
		if d["x-rule"] != nil {
			delete(defs, name) // written inline where used
			continue
		}
		typ, ok := defTypes[name]
		if !ok {
			return fmt.Errorf("schema/defs.json: %s is used with no type", name)
		}
		d["type"] = typ
	}
	return nil
}

// typedSchema is typeForGenerators' rewrite of one schema object (its members done).
func typedSchema(n map[string]any, defs map[string]any, defTypes map[string]string) (any, error) {
	// A property named "type", "enum" or "$ref" (a map under properties) is no keyword.
	typ := n["type"]
	switch typ.(type) {
	case nil, string, []any:
	default:
		return n, nil
	}
	if r, ok := n["$ref"].(string); ok {
		name, ok := strings.CutPrefix(r, "#/components/schemas/")
		if !ok {
			return n, nil
		}
		def, _ := defs[name].(map[string]any)
		if def == nil {
			return nil, fmt.Errorf("$ref %s: no such definition", r)
		}
		if def["x-rule"] != nil {
			if len(n) != 1 {
				return nil, fmt.Errorf("$ref %s: a rule with members beside it", r)
			}
			inline := map[string]any{}
			for k, v := range def {
				if sub, ok := v.(map[string]any); ok && (k == "if" || k == "then" || k == "else") {
					// Said open, as JSON Schema has it by default: Redocly's example
					// check reads an inline object schema without additionalProperties
					// as closed, which the body's other members would then fail.
					open := map[string]any{"additionalProperties": true}
					for k, v := range sub {
						open[k] = v
					}
					v = open
				}
				inline[k] = v
			}
			return inline, nil
		}
		if typ == nil {
			return n, nil
		}
		types, null := nonNull(typ)
		if len(types) != 1 {
			return nil, fmt.Errorf("$ref %s beside the types %v", r, typ)
		}
		if t, ok := defTypes[name]; ok && t != types[0] {
			return nil, fmt.Errorf("%s is used as a %s and as a %s", name, t, types[0])
		}
		defTypes[name] = types[0]
		delete(n, "type")
		if !null {
			return n, nil
		}
		out := map[string]any{}
		for k, v := range n {
			if k != "$ref" {
				out[k] = v
			}
		}
		out["anyOf"] = []any{map[string]any{"$ref": r}, map[string]any{"type": "null"}}
		return out, nil
	}
	if enum, ok := n["enum"].([]any); ok && typ == nil {
		var t any = "string"
		for _, v := range enum {
			if v == nil {
				t = []any{"string", "null"}
			} else if _, ok := v.(string); !ok {
				return nil, fmt.Errorf("an enum without a type whose values are not all strings or null: %v", enum)
			}
		}
		n["type"] = t
		typ = t
	}
	types, null := nonNull(typ)
	if len(types) == 1 {
		switch {
		case types[0] == "integer" && (n["format"] == nil || n["format"] == "strict-integer"):
			n["format"] = "int64"
		case types[0] == "number" && n["format"] == nil:
			n["format"] = "double"
		}
	}
	if enum, ok := n["enum"].([]any); ok && slices.Contains(enum, nil) {
		if len(types) != 1 || !null {
			return nil, fmt.Errorf("an enum with null of the types %v", typ)
		}
		inner := map[string]any{}
		for k, v := range n {
			inner[k] = v
		}
		inner["type"] = types[0]
		inner["enum"] = slices.DeleteFunc(slices.Clone(enum), func(v any) bool { return v == nil })
		out := map[string]any{"anyOf": []any{inner, map[string]any{"type": "null"}}}
		if d, ok := inner["description"]; ok {
			out["description"] = d
			delete(inner, "description")
		}
		return out, nil
	}
	return n, nil
}

// nonNull splits a type keyword's value into its types other than null, and whether it
// allows null.
func nonNull(typ any) (types []string, null bool) {
	switch t := typ.(type) {
	case string:
		if t == "null" {
			return nil, true
		}
		return []string{t}, false
	case []any:
		for _, v := range t {
			s, _ := v.(string)
			if s == "null" {
				null = true
			} else {
				types = append(types, s)
			}
		}
	}
	return types, null
}

// nullData is the data of an envelope that carries none: always null. oapi-codegen types
// a schema of type null as any; x-go-type struct{} makes it *struct{}, as exact (always nil).
func nullData() map[string]any {
	return map[string]any{"type": "null", "x-go-type": "struct{}"}
}
