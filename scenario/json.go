package scenario

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"strconv"
	"strings"

	"github.com/rogpeppe/go-internal/diff"
	"github.com/rogpeppe/go-internal/testscript"
)

// ignoredKeys are the members cmpjson does not compare when both sides have them: they
// change with the clock.
var ignoredKeys = map[string]bool{"queryGeneratedTime": true, "created_at": true, "updated_at": true}

// anyValue, as a string in an expected document, matches any value that is present.
const anyValue = "<any>"

// decodeJSON decodes one JSON document, keeping numbers as written.
func decodeJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("more than one JSON value")
	}
	return v, nil
}

// compact returns the compact JSON encoding of v (object members sorted by name).
func compact(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(v) // v was decoded from JSON: it always encodes
	return strings.TrimSuffix(b.String(), "\n")
}

// pretty returns v as indented JSON.
func pretty(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	enc.Encode(v)
	return b.Bytes()
}

// lookupPath returns the value at a dot path ("data.user_id", "detail.0.loc") in v; "."
// is v itself. It says why when there is no such value.
func lookupPath(v any, path string) (any, error) {
	if path == "." {
		return v, nil
	}
	if path == "" {
		return nil, fmt.Errorf("empty path")
	}
	seen := ""
	for _, step := range strings.Split(path, ".") {
		where := seen
		if where == "" {
			where = "the body"
		}
		switch x := v.(type) {
		case map[string]any:
			next, ok := x[step]
			if !ok {
				return nil, fmt.Errorf("%s has no member %q", where, step)
			}
			v = next
		case []any:
			i, err := strconv.Atoi(step)
			if err != nil || i < 0 {
				return nil, fmt.Errorf("%s is an array: want an index, have %q", where, step)
			}
			if i >= len(x) {
				return nil, fmt.Errorf("%s has %d elements: no index %d", where, len(x), i)
			}
			v = x[i]
		default:
			return nil, fmt.Errorf("%s is %s, not an object or array", where, compact(x))
		}
		seen = strings.TrimPrefix(seen+"."+step, ".")
	}
	return v, nil
}

// lastJSON returns the last response body decoded.
func lastJSON(ts *testscript.TestScript, name string) any {
	r := lastResponse(ts, name)
	v, err := decodeJSON(r.body)
	if err != nil {
		ts.Fatalf("%s: the last response body is not JSON (%v): %q", name, err, r.body)
	}
	return v
}

// text is how a value is written in a script: a string as it is, anything else as
// compact JSON.
func text(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return compact(v)
}

// cmdJSONGet: jsonget VAR PATH
func cmdJSONGet(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "jsonget", " (to assert that PATH is absent, use ! json PATH VALUE)")
	if len(args) != 2 || args[0] == "" || args[1] == "" {
		usage(ts, "jsonget")
	}
	v, err := lookupPath(lastJSON(ts, "jsonget"), args[1])
	if err != nil {
		ts.Fatalf("jsonget %s: %v", args[1], err)
	}
	ts.Setenv(args[0], text(v))
}

// matchesText reports whether the value v is what a script wrote as want.
func matchesText(v any, want string) bool {
	if s, ok := v.(string); ok {
		return s == want
	}
	if compact(v) == want {
		return true
	}
	w, err := decodeJSON([]byte(want)) // the same JSON written differently
	return err == nil && reflect.DeepEqual(w, v)
}

// cmdJSON: json PATH EXPECTED
func cmdJSON(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 || args[0] == "" {
		usage(ts, "json")
	}
	v, err := lookupPath(lastJSON(ts, "json"), args[0])
	switch {
	case err != nil && neg:
		return // absent: differs
	case err != nil:
		ts.Fatalf("json %s: %v", args[0], err)
	case neg && matchesText(v, args[1]):
		ts.Fatalf("json %s is %s, want anything else", args[0], compact(v))
	case !neg && !matchesText(v, args[1]):
		ts.Fatalf("json %s is %s, want %s", args[0], compact(v), args[1])
	}
}

// cmdCmpJSON: cmpjson FILE
func cmdCmpJSON(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		usage(ts, "cmpjson")
	}
	expected, err := decodeJSON([]byte(os.Expand(ts.ReadFile(args[0]), ts.Getenv)))
	if err != nil {
		ts.Fatalf("cmpjson: %s is not JSON (after expanding $VARS): %v", args[0], err)
	}
	actual := lastJSON(ts, "cmpjson")
	seen := settle(expected, actual)
	same := reflect.DeepEqual(expected, seen)
	switch {
	case neg && same:
		ts.Fatalf("cmpjson: the last response body matches %s", args[0])
	case !neg && !same:
		ts.Fatalf("cmpjson: the last response body differs from %s (- expected, + actual; "+
			"clock fields and \"<any>\" already settled):\n%s", args[0],
			diff.Diff(args[0], pretty(expected), "response", pretty(seen)))
	}
}

// settle returns a copy of actual in which whatever expected does not compare is replaced
// by expected's value: a member named in ignoredKeys present on both sides, and any value
// present where expected has "<any>". What remains different is a real difference, so
// actual matches expected exactly when the result equals expected.
func settle(expected, actual any) any {
	if s, ok := expected.(string); ok && s == anyValue {
		return expected
	}
	switch e := expected.(type) {
	case map[string]any:
		a, ok := actual.(map[string]any)
		if !ok {
			return actual
		}
		out := make(map[string]any, len(a))
		for k, av := range a {
			ev, inExpected := e[k]
			switch {
			case !inExpected:
				out[k] = av
			case ignoredKeys[k]:
				out[k] = ev
			default:
				out[k] = settle(ev, av)
			}
		}
		return out
	case []any:
		a, ok := actual.([]any)
		if !ok {
			return actual
		}
		out := make([]any, len(a))
		for i, av := range a {
			if i < len(e) {
				out[i] = settle(e[i], av)
			} else {
				out[i] = av
			}
		}
		return out
	}
	return actual
}
