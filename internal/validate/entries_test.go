package validate_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/platform-payments/payments/internal/validate"
)

// The expected 422 entries, one constructor per kind, and how tests compare them.

// anyText, as an expected ctx value, stands for any non-empty text: the contract leaves
// the wording of the JSON decoder's messages (ctx.error of json_invalid) to us.
const anyText = "<any text>"

type fieldErrors = []validate.FieldError

type object = map[string]any

func loc(parts ...any) []any { return parts }

// request is the input of one validation: path and query parameters, and the body as
// JSON text (nil: none).
type request struct {
	path, query map[string]string
	body        []byte
}

func body(s string) request { return request{body: []byte(s)} }

func pathParams(kv ...string) request {
	r := request{path: map[string]string{}}
	for i := 0; i+1 < len(kv); i += 2 {
		r.path[kv[i]] = kv[i+1]
	}
	return r
}

// Expected entries, one constructor per kind.

func missing(input any, l ...any) validate.FieldError {
	return validate.FieldError{Type: "missing", Loc: l, Msg: "Field required", Input: input}
}

func stringType(input any, l ...any) validate.FieldError {
	return validate.FieldError{Type: "string_type", Loc: l, Msg: "Input should be a valid string", Input: input}
}

func tooShort(n int, input any, l ...any) validate.FieldError {
	return validate.FieldError{Type: "string_too_short", Loc: l, Input: input,
		Msg: fmt.Sprintf("String should have at least %d character%s", n, plural(n)),
		Ctx: object{"min_length": n}}
}

func tooLong(n int, input any, l ...any) validate.FieldError {
	return validate.FieldError{Type: "string_too_long", Loc: l, Input: input,
		Msg: fmt.Sprintf("String should have at most %d character%s", n, plural(n)),
		Ctx: object{"max_length": n}}
}

func patternMismatch(pattern string, input any, l ...any) validate.FieldError {
	return validate.FieldError{Type: "string_pattern_mismatch", Loc: l, Input: input,
		Msg: "String should match pattern '" + pattern + "'",
		Ctx: object{"pattern": pattern}}
}

func intType(input any, l ...any) validate.FieldError {
	return validate.FieldError{Type: "int_type", Loc: l, Msg: "Input should be a valid integer", Input: input}
}

func boolType(input any, l ...any) validate.FieldError {
	return validate.FieldError{Type: "bool_type", Loc: l, Msg: "Input should be a valid boolean", Input: input}
}

func literal(expected string, input any, l ...any) validate.FieldError {
	return validate.FieldError{Type: "literal_error", Loc: l, Msg: "Input should be " + expected, Input: input,
		Ctx: object{"expected": expected}}
}

func uuidParsing(reason string, input any, l ...any) validate.FieldError {
	return validate.FieldError{Type: "uuid_parsing", Loc: l, Input: input,
		Msg: "Input should be a valid UUID, " + reason,
		Ctx: object{"error": reason}}
}

func emailError(reason string, input any, l ...any) validate.FieldError {
	return validate.FieldError{Type: "value_error", Loc: l, Input: input,
		Msg: "value is not a valid email address: " + reason,
		Ctx: object{"reason": reason}}
}

func valueError(reason string, input any, l ...any) validate.FieldError {
	return validate.FieldError{Type: "value_error", Loc: l, Input: input,
		Msg: "Value error, " + reason, Ctx: object{"error": object{}}}
}

func extra(input any, l ...any) validate.FieldError {
	return validate.FieldError{Type: "extra_forbidden", Loc: l, Msg: "Extra inputs are not permitted", Input: input}
}

func notAnObject(input any) validate.FieldError {
	return validate.FieldError{Type: "model_attributes_type", Loc: loc("body"), Input: input,
		Msg: "Input should be a valid dictionary or object to extract fields from"}
}

func jsonInvalid(offset int) validate.FieldError {
	return validate.FieldError{Type: "json_invalid", Loc: loc("body", offset), Msg: "JSON decode error",
		Input: object{}, Ctx: object{"error": anyText}}
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// nested returns levels of arrays, one inside the other, as JSON text and as the value
// it decodes to.
func nested(levels int) (string, any) {
	var v any = []any{}
	for i := 1; i < levels; i++ {
		v = []any{v}
	}
	return strings.Repeat("[", levels) + strings.Repeat("]", levels), v
}

// assertFields checks that got is exactly want (nil: no entries), compared as JSON; an
// anyText ctx value of want matches any non-empty text.
func assertFields(t *testing.T, got, want fieldErrors) {
	t.Helper()
	got = slices.Clone(got)
	for i := range got {
		if i >= len(want) {
			break
		}
		for k, v := range want[i].Ctx {
			if v != anyText {
				continue
			}
			if s, ok := got[i].Ctx[k].(string); ok && s != "" {
				ctx := object{}
				for k2, v2 := range got[i].Ctx {
					ctx[k2] = v2
				}
				ctx[k] = anyText
				got[i].Ctx = ctx
			}
		}
	}
	if g, w := canonicalJSON(t, got), canonicalJSON(t, want); g != w {
		t.Errorf("fields:\n got %s\nwant %s", g, w)
	}
}

// canonicalJSON writes v as JSON with its objects' members sorted and its numbers as
// float64 values: 10 and 10.0 are one number.
func canonicalJSON(tb testing.TB, v any) string {
	tb.Helper()
	if f, ok := v.(fieldErrors); ok && len(f) == 0 {
		return "[]" // no entries, nil or empty
	}
	raw, err := json.Marshal(v)
	if err != nil {
		tb.Fatalf("encode %#v: %v", v, err)
	}
	var plain any
	if err := json.Unmarshal(raw, &plain); err != nil {
		tb.Fatalf("decode %s: %v", raw, err)
	}
	out, err := json.Marshal(plain)
	if err != nil {
		tb.Fatal(err)
	}
	return string(out)
}
