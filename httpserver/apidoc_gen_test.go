package httpserver

// The generator of docs/api.md: the API reference, rendered from the OpenAPI document
// (buildOpenAPI's output, as openapi.json holds it) and a worked signing example computed
// by the library's own signing functions. TestAPIDoc compares it with the committed file.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/platform-payments/payments"
	"github.com/platform-payments/payments/dispatch"
	"github.com/platform-payments/payments/internal/webhook"
)

// The worked signing example: a secret as paymentsd platform create issues it (64 hex
// digits), and a request.
const (
	signingSecret    = "9a41c0de5be5b0c3a7e2f8d61c4b2a9e0f7d3c5b8a1e6f2d4c9b7a0e3f5d8c21"
	signingTimestamp = "1795341600"
)

func buildAPIDoc(doc []byte) ([]byte, error) {
	var d map[string]any
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	if err := dec.Decode(&d); err != nil {
		return nil, err
	}
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	get := func(m any, path ...string) any {
		for _, p := range path {
			mm, ok := m.(map[string]any)
			if !ok {
				return nil
			}
			m = mm[p]
		}
		return m
	}
	str := func(v any) string { s, _ := v.(string); return s }
	resolve := func(v any) map[string]any { // a $ref to components, or the object itself
		m, _ := v.(map[string]any)
		if ref := str(m["$ref"]); ref != "" {
			parts := strings.Split(strings.TrimPrefix(ref, "#/"), "/")
			m, _ = get(d, parts...).(map[string]any)
		}
		return m
	}
	// The examples as the server wrote them, members in its order (a map would sort them).
	var raw struct {
		Paths map[string]map[string]struct {
			RequestBody struct {
				Content map[string]struct{ Example json.RawMessage }
			}
			Responses map[string]struct {
				Content map[string]struct{ Example json.RawMessage }
			}
		}
		Components struct {
			Responses map[string]struct {
				Content map[string]struct{ Example json.RawMessage }
			}
		}
	}
	if err := json.Unmarshal(doc, &raw); err != nil {
		return nil, err
	}
	// inline shows a schema with a $ref to a shared definition merged into it.
	// A nullable reference, anyOf [$ref, {type: null}], shows as the definition with null
	// among its types.
	inline := func(v any) any {
		m, ok := v.(map[string]any)
		if !ok {
			return v
		}
		null := false
		if alts, _ := m["anyOf"].([]any); len(alts) == 2 && resolve(alts[1])["type"] == "null" {
			if r := str(resolve(alts[0])["$ref"]); r == "" {
				if first, _ := alts[0].(map[string]any); first["$ref"] != nil {
					m = map[string]any{"$ref": first["$ref"]}
					null = true
				}
			}
		}
		if m["$ref"] == nil {
			return v
		}
		out := map[string]any{}
		for k, x := range resolve(m) {
			out[k] = x
		}
		for k, x := range m {
			if k != "$ref" {
				out[k] = x
			}
		}
		if null {
			out["type"] = []any{out["type"], "null"}
		}
		return out
	}
	pretty := func(ex json.RawMessage) string {
		var out bytes.Buffer
		if err := json.Indent(&out, compactJSON(ex), "", "  "); err != nil {
			return string(ex)
		}
		return out.String()
	}

	w("# Platform Payments API reference\n\n")
	w("<!-- Generated from openapi.json by go test ./httpserver -run 'TestOpenAPI|TestAPIDoc' -update: do not edit. -->\n\n")
	w("%s\n\n", str(get(d, "info", "summary")))
	w("The machine-readable description is [`openapi.json`](../openapi.json) (OpenAPI 3.1), also served by a running server at `GET /openapi.json` and printed by `paymentsd openapi`. ")
	w("Every example below is a real answer of the server, recorded by the test that generates this file.\n\n")
	w("Every answer is JSON. Success is `200` with the envelope `{\"success\":true,\"message\":\"Success\",\"data\":…,\"queryGeneratedTime\":UNIX_SECONDS}` ")
	w("(List Users has its own); a refusal is the error envelope, `success` false and `data` null, ")
	w("except a validation failure (`422`), which is FastAPI's `{\"detail\":[…]}` list of pydantic v2 entries. ")
	w("Any endpoint may answer `500`, a fault of ours, or `503` with `Retry-After`, the database out of reach for a moment (the library's error code `unavailable`): ")
	w("a client retries a `503`, with the same Idempotency-Key for a change.\n\n")

	// Signing.
	body := []byte(`{"name":"Ada Lovelace","email":"ada@example.com"}`)
	const method, target = "POST", "/api/platform/users/create"
	sum := payments.StringToSign(method, target, body)
	w("Webhook endpoints and events (the event object, its types, deliveries, their signatures and retries) are described in [webhooks.md](webhooks.md).\n\n")
	w("## Authentication and signing\n\n")
	w("Platform endpoints take `%s` and `%s`; the user-API endpoint takes `%s` and `%s` instead. ",
		payments.HeaderPlatformID, payments.HeaderSignature, payments.HeaderAPIKey, payments.HeaderAPISecret)
	w("Any authentication failure is `401` with the error envelope, before the body is looked at.\n\n")
	w("    string_to_sign = METHOD + PATH_AND_QUERY + hex(sha256(BODY))          (no separators)\n")
	w("    X-Signature    = hex(HMAC-SHA256(key = the platform secret as issued, string_to_sign))\n\n")
	w("`PATH_AND_QUERY` is the request target exactly as sent on the request line; an empty body hashes the empty string. ")
	w("Go clients sign with `payments.Sign(secret, method, target, body)`, the function the server verifies with.\n\n")
	w("**Worked example** (computed by `payments.Sign` when this file is generated):\n\n")
	w("| | |\n|---|---|\n")
	w("| platform secret | `%s` |\n| request | `%s %s` |\n| body | `%s` |\n", signingSecret, method, target, body)
	w("| hex(sha256(body)) | `%s` |\n", strings.TrimPrefix(sum, method+target))
	w("| string to sign | `%s` |\n", sum)
	w("| `X-Signature` | `%s` |\n\n", payments.Sign(signingSecret, method, target, body))
	w("A platform created with `paymentsd platform create -require-timestamp` also sends `%s`, the time in Unix seconds, ", payments.HeaderTimestamp)
	w("appended as sent to the string to sign (`payments.SignTimestamped`); the server accepts it within %d seconds of its clock. With `X-Timestamp: %s`:\n\n",
		int(payments.DefaultTimestampTolerance.Seconds()), signingTimestamp)
	w("| | |\n|---|---|\n")
	w("| string to sign | `%s` |\n", payments.StringToSignTimestamped(method, target, body, signingTimestamp))
	w("| `X-Signature` | `%s` |\n\n", payments.SignTimestamped(signingSecret, method, target, body, signingTimestamp))

	w("## Verification\n\n")
	forbidden, _ := get(d, "paths", "/api/platform/accounts/get-account/{account_id}", "get", "responses", "403", "content", "application/json", "example").(map[string]any)
	if forbidden == nil {
		return nil, fmt.Errorf("no example of Get Bank Account's 403")
	}
	w("Get Bank Account answers `403` (%q) until the account's user is identity-verified. ", str(forbidden["message"]))
	w("Verification is an operator's act, not an API call: `paymentsd user verify USER_ID` (library `Service.VerifyUser`). ")
	w("Adding the account does not need it, and the verification covers every account of the user, those added before and after.\n\n")

	w("## Idempotency keys and limits\n\n")
	w("%s\n\n", str(get(d, "components", "parameters", "Idempotency-Key", "description")))
	w("Every endpoint that changes something takes it (each but List Users and the GETs), except Enable Webhook Endpoint, Rotate Webhook Secret and Resend Event, which keep none (each says why). %s\n\n", str(get(d, "components", "responses", "429", "description")))

	// Endpoints, in the route table's order.
	w("## Endpoints\n\n")
	type op struct {
		method, path string
		op           map[string]any
	}
	var ops []op
	for _, rt := range routes {
		method, path, _ := strings.Cut(rt.pattern, " ")
		o, _ := get(d, "paths", path, strings.ToLower(method)).(map[string]any)
		if o == nil {
			return nil, fmt.Errorf("%s: not in the document", rt.pattern)
		}
		ops = append(ops, op{method, path, o})
	}
	for i, o := range ops {
		w("%d. [%s](#%s)\n", i+1, str(o.op["summary"]), anchor(str(o.op["summary"])))
	}
	w("\n")
	for _, o := range ops {
		w("### %s\n\n`%s %s`\n\n%s\n\n", str(o.op["summary"]), o.method, o.path, str(o.op["description"]))
		if sec, _ := o.op["security"].([]any); len(sec) > 0 && sec[0].(map[string]any)["apiKey"] != nil {
			w("Credentials: `X-Api-Key` and `X-Api-Secret`.\n\n")
		} else {
			w("Credentials: `X-Platform-ID` and `X-Signature` (and `X-Timestamp` for a platform that requires it).\n\n")
		}
		if params, _ := o.op["parameters"].([]any); len(params) > 0 {
			w("| parameter | in | required | schema |\n|---|---|---|---|\n")
			for _, p := range params {
				pm := resolve(p)
				w("| `%s` | %s | %v | `` %s `` |\n", str(pm["name"]), str(pm["in"]), pm["required"] == true, compact(inline(pm["schema"])))
			}
			w("\n")
		}
		rawOp := raw.Paths[o.path][strings.ToLower(o.method)]
		if body, _ := get(o.op, "requestBody", "content", "application/json", "schema").(map[string]any); body != nil {
			props, _ := body["properties"].(map[string]any)
			required, _ := body["required"].([]any)
			names := make([]string, 0, len(props))
			for name := range props {
				names = append(names, name)
			}
			sort.Strings(names)
			w("| body field | required | schema |\n|---|---|---|\n")
			for _, name := range names {
				w("| `%s` | %v | `` %s `` |\n", name, slices.Contains(required, any(name)), compact(inline(props[name])))
			}
			w("\n")
			if all, _ := body["allOf"].([]any); len(all) > 0 {
				w("Rules over the whole body (each a `value_error` at the body when it fails):\n\n")
				for _, r := range all {
					w("- %s\n", str(resolve(r)["x-rule"]))
				}
				w("\n")
			}
		}
		if ex := rawOp.RequestBody.Content["application/json"].Example; ex != nil {
			w("Request body:\n\n```json\n%s\n```\n\n", pretty(ex))
		}
		if ex := rawOp.Responses["200"].Content["application/json"].Example; ex != nil {
			w("Response `200`:\n\n```json\n%s\n```\n\n", pretty(ex))
		}
		w("Errors:\n\n| status | when | example |\n|---|---|---|\n")
		responses, _ := o.op["responses"].(map[string]any)
		statuses := make([]string, 0, len(responses))
		for s := range responses {
			if s != "200" {
				statuses = append(statuses, s)
			}
		}
		sort.Strings(statuses)
		for _, s := range statuses {
			r := resolve(responses[s])
			ex := rawOp.Responses[s].Content["application/json"].Example
			if ref := str(get(responses[s], "$ref")); ref != "" {
				ex = raw.Components.Responses[strings.TrimPrefix(ref, "#/components/responses/")].Content["application/json"].Example
			}
			example := "-"
			if ex != nil {
				example = "`` " + string(compactJSON(ex)) + " ``" // the text may hold a backtick
			}
			w("| `%s` | %s | %s |\n", s, strings.ReplaceAll(str(r["description"]), "|", "\\|"), strings.ReplaceAll(example, "|", "\\|"))
		}
		w("\n")
	}
	if err := writeWebhooks(w, d); err != nil {
		return nil, err
	}
	return []byte(b.String()), nil
}

// The Standard Webhooks specification's own example, signed when this file is generated.
const (
	webhookSecret    = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	webhookID        = "msg_p5jXN8AQM9LWM0D4loKWxJek"
	webhookTimestamp = 1614265330
	webhookBody      = `{"test": 2432232314}`
)

// writeWebhooks writes the events (from the document's webhooks section), how a delivery
// is signed, with a worked example computed by the server's signing code, and the retry
// schedule the dispatcher uses by default.
func writeWebhooks(w func(string, ...any), d map[string]any) error {
	hooks, _ := d["webhooks"].(map[string]any)
	if len(hooks) == 0 {
		return fmt.Errorf("openapi.json has no webhooks")
	}
	w("## Webhooks\n\n")
	w("Every change writes an event in its own transaction; the events of a platform are listed by List Events and sent to its webhook endpoints, ")
	w("each a `POST` of the event as Get Event shows it (without `attempts`). [webhooks.md](webhooks.md) tells the whole story.\n\n")
	w("An event is `{\"id\", \"type\", \"timestamp\", \"platform_id\", \"environment\", \"data\": {\"object\": {…}}}`: a time-ordered UUID (the `webhook-id` of its deliveries and List Events' cursor), ")
	w("its type, when it happened (RFC 3339, UTC), the platform and its environment, and what it is about: ids and state that is not sensitive, never an account number, card data, an address, an email or a phone.\n\n")
	w("| event type | when | `data.object` members |\n|---|---|---|\n")
	for _, typ := range payments.EventTypes() {
		hook, _ := hooks[typ].(map[string]any)
		post, _ := hook["post"].(map[string]any)
		if post == nil {
			return fmt.Errorf("openapi.json has no webhook %s", typ)
		}
		schema, _ := post["requestBody"].(map[string]any)["content"].(map[string]any)["application/json"].(map[string]any)["schema"].(map[string]any)
		object, _ := schema["properties"].(map[string]any)["data"].(map[string]any)["properties"].(map[string]any)["object"].(map[string]any)
		props, _ := object["properties"].(map[string]any)
		names := make([]string, 0, len(props))
		for name := range props {
			names = append(names, "`"+name+"`")
		}
		sort.Strings(names)
		when, _, _ := strings.Cut(post["description"].(string), ". ")
		w("| `%s` | %s | %s |\n", typ, when, strings.Join(names, ", "))
	}
	w("\n")
	w("A delivery carries `webhook-id` (the event's id: the same on every attempt), `webhook-timestamp` (Unix seconds) and `webhook-signature`, ")
	w("`v1,` and the base64 of HMAC-SHA256 over `webhook-id.webhook-timestamp.body` under the secret's bytes (the base64 after `whsec_`), ")
	w("one such signature per live secret, separated by spaces (two for 24 hours after Rotate Webhook Secret). ")
	w("Go receivers check it with `payments.VerifyWebhook(secret, r.Header, body, 5*time.Minute)`.\n\n")
	secret, err := webhook.ParseSecret(webhookSecret)
	if err != nil {
		return err
	}
	w("**Worked example** (the Standard Webhooks specification's, computed by the server's signing code when this file is generated):\n\n")
	w("| | |\n|---|---|\n| secret | `%s` |\n| `webhook-id` | `%s` |\n| `webhook-timestamp` | `%d` |\n| body | `%s` |\n",
		webhookSecret, webhookID, webhookTimestamp, webhookBody)
	w("| signed content | `%s.%d.%s` |\n", webhookID, webhookTimestamp, webhookBody)
	w("| `webhook-signature` | `%s` |\n\n", webhook.Sign(webhookID, time.Unix(webhookTimestamp, 0), []byte(webhookBody), secret))
	w("A `2xx` within the timeout ends a delivery. Anything else is retried %s after each failure in turn, each delay ±20%% at random, ",
		strings.ReplaceAll(dispatch.FormatSchedule(dispatch.DefaultSchedule), ",", ", "))
	w("then the delivery has failed for good (Resend Event sends it again). A redirect is a failure, never followed. ")
	w("`410 Gone` disables the endpoint at once; `429`, `502`, `503` and `504` may set `Retry-After`, honoured between the step and twice it. ")
	w("An endpoint that fails every attempt for 5 days is disabled; Enable Webhook Endpoint brings it back.\n")
	return nil
}

// anchor is the GitHub anchor of a heading.
func anchor(heading string) string {
	return strings.ReplaceAll(strings.ToLower(heading), " ", "-")
}

// compactJSON writes JSON text on one line, its members in their order.
func compactJSON(b []byte) []byte {
	var out bytes.Buffer
	if err := json.Compact(&out, b); err != nil {
		return b
	}
	return out.Bytes()
}

// compact writes a schema on one line, for a table cell (| escaped).
func compact(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(v) // #nosec G104 -- a value decoded from JSON encodes
	return strings.ReplaceAll(strings.TrimSpace(b.String()), "|", "\\|")
}
