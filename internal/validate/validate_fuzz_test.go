package validate_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/platform-payments/payments/internal/validate"
)

// Request validation under arbitrary input: every request schema, any path and query
// parameters, any body.
//
//	go test -run '^$' -fuzz FuzzRequestValidation -fuzztime 1m ./internal/validate
//
// The seed corpus, testdata/fuzz/FuzzRequestValidation, holds a valid and an invalid
// example of each request (TestRequestValidationSeeds keeps it so); go test runs it. The
// payments package decodes the same seeds into its request types (FuzzDecodeRequest).

// errorTypes are the pydantic v2 error types a 422 entry may carry.
var errorTypes = map[string]bool{
	"missing": true, "extra_forbidden": true, "json_invalid": true, "value_error": true,
	"string_type": true, "int_type": true, "bool_type": true, "float_type": true, "list_type": true,
	"model_attributes_type": true, "string_too_short": true, "string_too_long": true,
	"string_pattern_mismatch": true, "literal_error": true, "greater_than_equal": true,
	"less_than_equal": true, "too_short": true, "uuid_parsing": true,
}

// requestSchemas returns the names of the request schemas, sorted: every schema file but
// the shared definitions.
func requestSchemas(tb testing.TB) []string {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join(schemaDir, "*.json"))
	if err != nil || len(files) == 0 {
		tb.Fatalf("no request schemas: %v", err)
	}
	var names []string
	for _, f := range files {
		if name := strings.TrimSuffix(filepath.Base(f), ".json"); name != "defs" {
			names = append(names, name)
		}
	}
	return names
}

// fuzzRequest is the request a fuzz input stands for: the schema it names (or, when it
// names none, one chosen by its length), path and query parameters written as a query
// string (name=value&...; of a name given twice the last wins, as the server has it), and
// the body.
func fuzzRequest(schemas []string, name, path, query string, body []byte) (string, request) {
	if !slices.Contains(schemas, name) {
		name = schemas[len(name)%len(schemas)]
	}
	return name, request{path: params(path), query: params(query), body: body}
}

// params reads name=value pairs as a query string; nil when there are none. A pair that
// does not unescape is left out.
func params(s string) map[string]string {
	values, _ := url.ParseQuery(s) // the pairs that parse are the input
	if len(values) == 0 {
		return nil
	}
	out := make(map[string]string, len(values))
	for k, v := range values {
		out[k] = v[len(v)-1]
	}
	return out
}

// FuzzRequestValidation: whatever the request, Validate never panics and either accepts
// it or returns well-formed 422 entries, never an error; it answers the same each time;
// and a body it accepts, decoded and encoded again, is accepted again.
func FuzzRequestValidation(f *testing.F) {
	v := mustNew(f)
	schemas := requestSchemas(f)
	f.Fuzz(func(t *testing.T, name, path, query string, body []byte) {
		name, req := fuzzRequest(schemas, name, path, query, body)
		decoded, fields, err := v.Validate(name, req.path, req.query, req.body)
		if err != nil {
			t.Fatalf("%s %+v: %v", name, req, err)
		}
		_, again, _ := v.Validate(name, req.path, req.query, req.body)
		if got, want := outcome(t, again), outcome(t, fields); got != want {
			t.Fatalf("%s %+v: Validate answered %s, then %s", name, req, want, got)
		}
		if len(fields) > 0 {
			checkEntries(t, name, req, fields)
			return
		}
		if decoded == nil {
			return
		}
		reencoded, merr := json.Marshal(decoded)
		if merr != nil {
			t.Fatalf("%s %s: the decoded body does not encode: %v", name, req.body, merr)
		}
		if _, fields, _ := v.Validate(name, req.path, req.query, reencoded); len(fields) > 0 {
			t.Fatalf("%s %s: accepted, but decoded and encoded again as %s refused: %s", name, req.body, reencoded, outcome(t, fields))
		}
	})
}

// outcome is what a test compares of two answers: accepted, or the 422 entries as the API
// writes them.
func outcome(t *testing.T, fields []validate.FieldError) string {
	if len(fields) == 0 {
		return "accepted"
	}
	detail, err := json.Marshal(fields)
	if err != nil {
		t.Fatalf("the 422 entries do not encode: %v", err)
	}
	return string(detail)
}

var sectionOrder = map[string]int{"path": 0, "query": 1, "body": 2}

// checkEntries checks that the entries of a refused request are well-formed: each at a
// loc under path, query or body, of a known type, with a message; path and query entries
// at one parameter, showing the value sent (nil when missing); a json_invalid entry at a
// character offset inside the body; one entry a loc, in section order.
func checkEntries(t *testing.T, name string, req request, fields []validate.FieldError) {
	t.Helper()
	seen := map[string]bool{}
	last := 0
	for _, fe := range fields {
		bad := func(why string) { t.Fatalf("%s %+v: entry %+v: %s", name, req, fe, why) }
		if len(fe.Loc) == 0 {
			bad("no loc")
		}
		section, _ := fe.Loc[0].(string)
		order, known := sectionOrder[section]
		switch {
		case !known:
			bad("loc not under path, query or body")
		case !errorTypes[fe.Type]:
			bad("unknown type")
		case fe.Msg == "":
			bad("no msg")
		case order < last:
			bad("out of section order")
		}
		last = order
		key := fmt.Sprintf("%#v", fe.Loc)
		if seen[key] {
			bad("a second entry at this loc")
		}
		seen[key] = true
		for _, part := range fe.Loc[1:] {
			switch part.(type) {
			case string, int:
			default:
				bad("loc part neither a name nor an index")
			}
		}
		if section == "path" || section == "query" {
			param, ok := fe.Loc[len(fe.Loc)-1].(string)
			sent := req.path
			if section == "query" {
				sent = req.query
			}
			value, present := sent[param]
			switch {
			case len(fe.Loc) != 2 || !ok:
				bad("loc not one parameter")
			case !present && fe.Input != nil:
				bad("input of a parameter not sent")
			case present && fe.Input != value:
				bad("input not the value sent")
			}
		}
		if fe.Type == "json_invalid" {
			offset, ok := fe.Loc[len(fe.Loc)-1].(int)
			if len(fe.Loc) != 2 || !ok || offset < 0 || offset > utf8.RuneCount(req.body) {
				bad("json_invalid not at a character offset of the body")
			}
		}
	}
}

// TestRequestValidationSeeds keeps the seed corpus what it says it is: for every request
// schema, at least one seed that Validate accepts and one it refuses.
func TestRequestValidationSeeds(t *testing.T) {
	v := mustNew(t)
	schemas := requestSchemas(t)
	dir := filepath.Join("testdata", "fuzz", "FuzzRequestValidation")
	files, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	valid, invalid := map[string]int{}, map[string]int{}
	for _, file := range files {
		args := readCorpusFile(t, filepath.Join(dir, file.Name()))
		if len(args) != 4 {
			t.Fatalf("%s: %d values, want name, path, query and body", file.Name(), len(args))
		}
		name, req := fuzzRequest(schemas, args[0], args[1], args[2], []byte(args[3]))
		if _, fields, err := v.Validate(name, req.path, req.query, req.body); err == nil && len(fields) == 0 {
			valid[name]++
		} else {
			invalid[name]++
		}
	}
	for _, name := range schemas {
		if valid[name] == 0 || invalid[name] == 0 {
			t.Errorf("%s: %d valid and %d invalid seeds in %s, want at least one of each", name, valid[name], invalid[name], dir)
		}
	}
}

// readCorpusFile reads the values of a seed file of the fuzzing engine ("go test fuzz
// v1", then one value a line): string("...") and []byte("...") unquoted.
func readCorpusFile(t *testing.T, path string) []string {
	t.Helper()
	raw, err := os.ReadFile(path) // #nosec G304 -- a file of the test's own corpus
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	if lines[0] != "go test fuzz v1" {
		t.Fatalf("%s: not a seed file", path)
	}
	var values []string
	for _, line := range lines[1:] {
		open, close := strings.Index(line, "("), strings.LastIndex(line, ")")
		if open < 0 || close < open {
			t.Fatalf("%s: %q is no value", path, line)
		}
		v := line[open+1 : close]
		if kind := line[:open]; kind == "string" || kind == "[]byte" {
			if v, err = strconv.Unquote(v); err != nil {
				t.Fatalf("%s: %q: %v", path, line, err)
			}
		}
		values = append(values, v)
	}
	return values
}
