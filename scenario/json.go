package scenario

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/google/uuid"
	"github.com/rogpeppe/go-internal/diff"
	"github.com/rogpeppe/go-internal/testscript"
)

// ignoredKeys are the members cmpjson does not compare when both sides have them: they
// change with the clock.
var ignoredKeys = map[string]bool{"queryGeneratedTime": true, "created_at": true, "updated_at": true}

// Placeholders, as strings in an expected document: anyValue matches any value that is
// present, uuidValue a UUID in the form the API answers (lower case, hyphenated), such as
// a generated id.
const (
	anyValue  = "<any>"
	uuidValue = "<uuid>"
)

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
	// v was decoded from JSON, so it encodes; should it not, the text says why and
	// compares unequal to any JSON a script expects.
	if err := enc.Encode(v); err != nil {
		return unencodable(err)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// pretty returns v as indented JSON.
func pretty(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return []byte(unencodable(err) + "\n")
	}
	return b.Bytes()
}

// unencodable stands for a value that did not encode as JSON: it is not JSON itself.
func unencodable(err error) string {
	return fmt.Sprintf("(not encodable as JSON: %v)", err)
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
				return nil, fmt.Errorf("%s has no member %q (%s)", where, step, members(x))
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

// members names the members an object has, for a path that names another.
func members(x map[string]any) string {
	if len(x) == 0 {
		return "it is empty"
	}
	names := make([]string, 0, len(x))
	for name := range x {
		names = append(names, name)
	}
	sort.Strings(names)
	return "it has " + strings.Join(names, ", ")
}

// lastJSON returns the last response body decoded.
func lastJSON(ts *testscript.TestScript, name string) any {
	r := lastResponse(ts, name)
	v, err := decodeJSON(r.body)
	if err != nil {
		ts.Fatalf("%s: the last response body is not JSON (%v)\n    response body:\n%s", name, err, showBody(r.body))
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
	body := lastJSON(ts, "jsonget")
	v, err := lookupPath(body, args[1])
	if err != nil {
		ts.Fatalf("no value at %s: %v\n    response body:\n%s", args[1], err, showBody(getState(ts).last.body))
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
	body := lastJSON(ts, "json")
	v, err := lookupPath(body, args[0])
	switch {
	case err != nil && neg:
		return // absent: differs
	case err != nil:
		ts.Fatalf("no value at %s: %v\n    expected: %s\n    response body:\n%s",
			args[0], err, args[1], showBody(getState(ts).last.body))
	case neg && matchesText(v, args[1]):
		ts.Fatalf("unexpected value at %s\n    expected: anything but %s\n    actual:   %s",
			args[0], expectedText(v, args[1]), compact(v))
	case !neg && !matchesText(v, args[1]):
		ts.Fatalf("unexpected value at %s\n    expected: %s\n    actual:   %s",
			args[0], expectedText(v, args[1]), compact(v))
	}
}

// expectedText writes what a script expected in the notation of the actual value v: a
// string is compared as it is written, so it is shown quoted, as v is.
func expectedText(v any, want string) string {
	if _, ok := v.(string); ok {
		return compact(want)
	}
	return want
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
		ts.Fatalf("the last response body differs from %s\n"+
			"    (- lines are expected, + lines came back; clock fields and placeholders already settled)\n%s",
			args[0], indent(unifiedDiff(args[0], pretty(expected), "response", pretty(seen)), "    "))
	}
}

// unifiedDiff returns the unified diff of old and new, without the "diff OLD NEW" line
// that precedes its "---" and "+++" lines.
func unifiedDiff(oldName string, old []byte, newName string, new []byte) []byte {
	d := diff.Diff(oldName, old, newName, new)
	if bytes.HasPrefix(d, []byte("diff ")) {
		if i := bytes.IndexByte(d, '\n'); i >= 0 {
			d = d[i+1:]
		}
	}
	return d
}

// indent puts prefix before each line of text.
func indent(text []byte, prefix string) string {
	lines := strings.Split(strings.TrimRight(string(text), "\n"), "\n")
	return prefix + strings.Join(lines, "\n"+prefix)
}

// isUUID reports whether v is a UUID string in canonical form.
func isUUID(v any) bool {
	s, ok := v.(string)
	if !ok {
		return false
	}
	id, err := uuid.Parse(s)
	return err == nil && id.String() == s
}

// settle returns a copy of actual in which whatever expected does not compare is replaced
// by expected's value: a member named in ignoredKeys present on both sides, any value
// present where expected has "<any>", and a UUID where it has "<uuid>". What remains
// different is a real difference, so actual matches expected exactly when the result
// equals expected.
func settle(expected, actual any) any {
	if s, ok := expected.(string); ok && (s == anyValue || (s == uuidValue && isUUID(actual))) {
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
