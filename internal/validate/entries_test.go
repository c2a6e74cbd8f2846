package validate_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/platform-payments/payments/internal/validate"
	"github.com/platform-payments/payments/internal/validate/entrytest"
)

// The expected 422 entries, one constructor per kind, and how tests compare them.

const anyText = entrytest.AnyText

type fieldErrors = []validate.FieldError

type object = map[string]any

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

// Expected entries, one constructor per kind (package entrytest).
var (
	loc             = entrytest.Loc
	missing         = entrytest.Missing
	stringType      = entrytest.StringType
	tooShort        = entrytest.TooShort
	tooLong         = entrytest.TooLong
	patternMismatch = entrytest.PatternMismatch
	intType         = entrytest.IntType
	boolType        = entrytest.BoolType
	literal         = entrytest.Literal
	uuidParsing     = entrytest.UUIDParsing
	emailError      = entrytest.EmailError
	valueError      = entrytest.ValueError
	extra           = entrytest.Extra
	notAnObject     = entrytest.NotAnObject
	jsonInvalid     = entrytest.JSONInvalid
)

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
