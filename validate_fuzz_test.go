package payments_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/platform-payments/payments"
)

// Request validation under arbitrary input: every request schema, through Decode, the
// library's public validation entry point (DecodeRequest, which the HTTP server decodes
// bodies with, is Decode with the schema its value names).
//
//	go test -run '^$' -fuzz FuzzRequestValidation -fuzztime 1m .
//
// The seed corpus, testdata/fuzz/FuzzRequestValidation, holds a valid and an invalid
// example of each request (TestRequestValidationSeeds keeps it so); go test runs it.

// requestValues makes, for each request schema whose body a Go type holds, a new value of
// that type (the operations' request types); the body of any other request decodes into
// an any.
var requestValues = map[string]func() any{
	"accounts_add":     func() any { return new(payments.NewBankAccount) },
	"addresses_add":    func() any { return new(payments.NewPayeeAddress) },
	"cards_add":        func() any { return new(payments.NewCard) },
	"cards_delete":     func() any { return new(payments.CardDeletion) },
	"payee_banks_add":  func() any { return new(payments.NewPayeeBank) },
	"payee_rules_load": func() any { return new([]payments.PayeeRules) },
	"payees_create":    func() any { return new(payments.NewPayee) },
	"payees_update":    func() any { return new(payments.PayeeRename) },
	"rates_set":        func() any { return new(payments.NewExchangeRate) },
	"users_create":     func() any { return new(payments.NewUser) },
	"users_list":       func() any { return new(payments.ListUsersParams) },
}

// errorTypes are the pydantic v2 error types a 422 entry may carry.
var errorTypes = map[string]bool{
	"missing": true, "extra_forbidden": true, "json_invalid": true, "value_error": true,
	"string_type": true, "int_type": true, "bool_type": true, "float_type": true, "list_type": true,
	"model_attributes_type": true, "string_too_short": true, "string_too_long": true,
	"string_pattern_mismatch": true, "literal_error": true, "greater_than_equal": true,
	"less_than_equal": true, "too_short": true, "uuid_parsing": true,
}

// requestSchemas returns the names of the request schemas, sorted: every schema/*.json
// but the shared definitions.
func requestSchemas(tb testing.TB) []string {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join("schema", "*.json"))
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
func fuzzRequest(schemas []string, name, path, query string, body []byte) (string, payments.Request) {
	if !slices.Contains(schemas, name) {
		name = schemas[len(name)%len(schemas)]
	}
	return name, payments.Request{Path: params(path), Query: params(query), Body: body}
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

// FuzzRequestValidation: whatever the request, Decode never panics and either accepts it
// or returns a CodeInvalid *Error whose entries are well-formed 422 entries; it answers
// the same each time, whatever it decodes into; and a body it accepts decodes into its
// request type, which, encoded again, is accepted again.
func FuzzRequestValidation(f *testing.F) {
	svc := mustOpen(f)
	schemas := requestSchemas(f)
	f.Fuzz(func(t *testing.T, name, path, query string, body []byte) {
		name, req := fuzzRequest(schemas, name, path, query, body)
		newValue, typed := requestValues[name]
		if !typed {
			newValue = func() any { return new(any) }
		}
		dst := newValue()
		err := svc.Decode(name, req, dst)
		again := svc.Decode(name, req, newValue())
		unread := svc.Decode(name, req, nil)
		if got, want := outcome(again), outcome(err); got != want {
			t.Fatalf("%s %+v: Decode answered %s, then %s", name, req, want, got)
		}
		if got, want := outcome(unread), outcome(err); got != want {
			t.Fatalf("%s %+v: Decode answered %s, and into nil %s", name, req, want, got)
		}
		if err != nil {
			checkInvalid(t, name, req, err)
			return
		}
		if !typed || len(req.Body) == 0 {
			return
		}
		reencoded, merr := json.Marshal(dst)
		if merr != nil {
			t.Fatalf("%s %s: the decoded %T does not encode: %v", name, req.Body, dst, merr)
		}
		if err := svc.Decode(name, payments.Request{Path: req.Path, Query: req.Query, Body: reencoded}, newValue()); err != nil {
			t.Fatalf("%s %s: accepted, but decoded and encoded again as %s refused: %v", name, req.Body, reencoded, err)
		}
	})
}

// outcome is what a test compares of two answers of Decode: nil, or the error with its
// 422 entries as the API would write them.
func outcome(err error) string {
	if err == nil {
		return "accepted"
	}
	var pe *payments.Error
	if !errors.As(err, &pe) {
		return "error " + err.Error()
	}
	detail, merr := json.Marshal(payments.ValidationBody{Detail: pe.Fields})
	if merr != nil {
		return fmt.Sprintf("%s %q (entries that do not encode: %v)", pe.Code, pe.Message, merr)
	}
	return fmt.Sprintf("%s %q %s", pe.Code, pe.Message, detail)
}

var sectionOrder = map[string]int{"path": 0, "query": 1, "body": 2}

// checkInvalid checks that err is a CodeInvalid *Error whose entries are well-formed: each
// at a loc under path, query or body, of a known type, with a message; path and query
// entries at one parameter, showing the value sent (nil when missing); a json_invalid
// entry at a character offset inside the body; one entry a loc, in section order, and all
// of them encoding as the API's 422 body.
func checkInvalid(t *testing.T, name string, req payments.Request, err error) {
	t.Helper()
	var pe *payments.Error
	if !errors.As(err, &pe) || pe.Code != payments.CodeInvalid || payments.ErrorCode(err) != payments.CodeInvalid {
		t.Fatalf("%s %+v: %v (%T), want a CodeInvalid *payments.Error", name, req, err, err)
	}
	if len(pe.Fields) == 0 {
		t.Fatalf("%s %+v: %v without entries", name, req, err)
	}
	if _, merr := json.Marshal(payments.ValidationBody{Detail: pe.Fields}); merr != nil {
		t.Fatalf("%s %+v: the 422 body does not encode: %v", name, req, merr)
	}
	seen := map[string]bool{}
	last := 0
	for _, fe := range pe.Fields {
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
			sent := req.Path
			if section == "query" {
				sent = req.Query
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
			if len(fe.Loc) != 2 || !ok || offset < 0 || offset > utf8.RuneCount(req.Body) {
				bad("json_invalid not at a character offset of the body")
			}
		}
	}
}

// TestRequestValidationSeeds keeps the seed corpus what it says it is: for every request
// schema, at least one seed that Decode accepts and one it refuses.
func TestRequestValidationSeeds(t *testing.T) {
	svc := mustOpen(t)
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
		if err := svc.Decode(name, req, nil); err == nil {
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
// v1", then one value a line): string("...") and []byte("...") unquoted, integers such as
// uint8(42) as the digits written, and a byte written as a character, byte('\x2a'), as its
// value in decimal.
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
		var err error
		switch kind := line[:open]; {
		case kind == "string" || kind == "[]byte":
			v, err = strconv.Unquote(v)
		case kind == "byte" && len(v) >= 3 && v[0] == '\'' && v[len(v)-1] == '\'':
			var c rune
			c, _, _, err = strconv.UnquoteChar(v[1:len(v)-1], '\'')
			v = strconv.Itoa(int(c))
		}
		if err != nil {
			t.Fatalf("%s: %q: %v", path, line, err)
		}
		values = append(values, v)
	}
	return values
}
