package payments_test

import (
	"encoding/json"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/platform-payments/payments"
)

// Decoding under arbitrary input, every request schema, into the request types of the API: the validator's own
// fuzz target is package validate's FuzzRequestValidation, and its seed corpus is the
// seed corpus of this one.
//
//	go test -run '^$' -fuzz FuzzDecodeRequest -fuzztime 1m .

// validationSeeds is the seed corpus of package validate's FuzzRequestValidation.
var validationSeeds = filepath.Join("internal", "validate", "testdata", "fuzz", "FuzzRequestValidation")

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

// FuzzDecodeRequest: whatever the request, Decode answers the same whatever it decodes
// into (its request type, an any, or nothing); and a body it accepts decodes into its
// request type, which, encoded again, is accepted again: the Go types hold what the
// schemas accept.
func FuzzDecodeRequest(f *testing.F) {
	seeds, err := os.ReadDir(validationSeeds)
	if err != nil {
		f.Fatal(err)
	}
	for _, file := range seeds {
		args := readCorpusFile(f, filepath.Join(validationSeeds, file.Name()))
		if len(args) != 4 {
			f.Fatalf("%s: %d values, want name, path, query and body", file.Name(), len(args))
		}
		f.Add(args[0], args[1], args[2], []byte(args[3]))
	}
	svc := mustOpen(f)
	files, err := fs.Glob(payments.RequestSchemas(), "*.json")
	if err != nil {
		f.Fatal(err)
	}
	var schemas []string // sorted, as package validate's fuzz target has them
	for _, file := range files {
		if name := strings.TrimSuffix(file, ".json"); name != "defs" {
			schemas = append(schemas, name)
		}
	}
	f.Fuzz(func(t *testing.T, name, path, query string, body []byte) {
		if !slices.Contains(schemas, name) {
			name = schemas[len(name)%len(schemas)]
		}
		req := payments.Request{Path: queryParams(path), Query: queryParams(query), Body: body}
		newValue, typed := requestValues[name]
		if !typed {
			newValue = func() any { return new(any) }
		}
		dst := newValue()
		err := svc.Decode(name, req, dst)
		if got, want := decodeOutcome(svc.Decode(name, req, new(any))), decodeOutcome(err); got != want {
			t.Fatalf("%s %+v: Decode answered %s, and into an any %s", name, req, want, got)
		}
		if got, want := decodeOutcome(svc.Decode(name, req, nil)), decodeOutcome(err); got != want {
			t.Fatalf("%s %+v: Decode answered %s, and into nil %s", name, req, want, got)
		}
		if err != nil {
			errorOf(t, err, payments.CodeInvalid)
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

// decodeOutcome is what the fuzz target compares of two answers of Decode: nil, or the
// error with its 422 entries as the API writes them.
func decodeOutcome(err error) string {
	if err == nil {
		return "accepted"
	}
	e, ok := err.(*payments.Error)
	if !ok {
		return "error " + err.Error()
	}
	detail, merr := json.Marshal(payments.ValidationBody{Detail: e.Fields})
	if merr != nil {
		return string(e.Code) + " " + e.Message + " (entries that do not encode: " + merr.Error() + ")"
	}
	return string(e.Code) + " " + e.Message + " " + string(detail)
}

// queryParams reads name=value pairs as a query string; nil when there are none. Of a
// name given twice the last wins, as the server has it.
func queryParams(s string) map[string]string {
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

// readCorpusFile reads the values of a seed file of the fuzzing engine ("go test fuzz
// v1", then one value a line): string("...") and []byte("...") unquoted, integers such as
// uint8(42) as the digits written, and a byte written as a character, byte('\x2a'), as its
// value in decimal.
func readCorpusFile(tb testing.TB, path string) []string {
	tb.Helper()
	raw, err := os.ReadFile(path) // #nosec G304 -- a file of the test's own corpus
	if err != nil {
		tb.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	if lines[0] != "go test fuzz v1" {
		tb.Fatalf("%s: not a seed file", path)
	}
	var values []string
	for _, line := range lines[1:] {
		open, close := strings.Index(line, "("), strings.LastIndex(line, ")")
		if open < 0 || close < open {
			tb.Fatalf("%s: %q is no value", path, line)
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
			tb.Fatalf("%s: %q: %v", path, line, err)
		}
		values = append(values, v)
	}
	return values
}
