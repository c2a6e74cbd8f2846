package validate

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// The plain checks say exactly what the validator says, valid or not (plaincheck.go), for
// every request schema that has one and every body rule.

// Which schemas have a plain check: a schema that gains a keyword the checks do not know
// loses it (and is only slower), which this list makes seen.
func TestPlainCheckSchemas(t *testing.T) {
	v := testValidator(t)
	var names []string
	for name := range v.plain {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, want := range []string{"users_create", "payees_create", "payees_update"} {
		if !slices.Contains(names, want) {
			t.Errorf("%s has no plain check (have %q)", want, names)
		}
	}
	for name, rules := range v.rules {
		for _, r := range rules {
			if r.plain == nil {
				t.Errorf("%s: rule %q has no plain check", name, r.reason)
			}
		}
	}
}

// A plain check reads the fields of the validator's compiled schemas: a new version of the
// validator with a field more may bring a keyword compilable does not refuse.
func TestPlainCheckKnowsEverySchemaField(t *testing.T) {
	if n := reflect.TypeFor[jsonschema.Schema]().NumField(); n != 71 {
		t.Errorf("jsonschema.Schema has %d fields, not the 71 compilable was written for: review it", n)
	}
}

// plainSameAsSchema fails t when the plain check of name and the validator disagree on
// doc, and the same for each rule of name on doc's body.
func plainSameAsSchema(t *testing.T, v *Validator, name string, doc map[string]any) {
	t.Helper()
	if c := v.plain[name]; c != nil {
		want := v.schemas[name].Validate(doc) == nil
		if got := c.valid(doc); got != want {
			t.Fatalf("%s %s: plain check %v, validator %v", name, mustJSON(t, doc), got, want)
		}
		if !want {
			return // rules run on a body that met its schema
		}
	}
	for _, r := range v.rules[name] {
		if r.plain == nil {
			continue
		}
		want := r.schema.Validate(doc["body"]) == nil
		if got := r.plain.valid(doc["body"]); got != want {
			t.Fatalf("%s rule %q %s: plain check %v, validator %v", name, r.reason, mustJSON(t, doc["body"]), got, want)
		}
	}
}

func mustJSON(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The seeds of FuzzRequestValidation (a valid and an invalid request of each schema),
// each body under every schema with a check.
func TestPlainCheckSeeds(t *testing.T) {
	v := testValidator(t)
	files, err := filepath.Glob(filepath.Join("testdata", "fuzz", "FuzzRequestValidation", "*"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no seeds: %v", err)
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
		body, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(lines[len(lines)-1], "[]byte("), ")"))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		decoded, fe := ParseBody([]byte(body))
		if fe != nil {
			continue
		}
		for name := range v.schemas {
			plainSameAsSchema(t, v, name, map[string]any{"path": map[string]any{}, "query": map[string]any{}, "body": decoded})
		}
	}
}

// Bodies of every schema with a check, their declared fields drawn from values on both
// sides of each limit, of every type, left out, and with a field undeclared.
func TestPlainCheckBodies(t *testing.T) {
	v := testValidator(t)
	values := []any{
		nil, true, json.Number("1"), json.Number("1.5"), []any{}, []any{"a"}, map[string]any{}, map[string]any{"a": "b"},
		"", "a", "Ada Lovelace", "ada@example.com", "ADA@Example.COM", "not an email", "a@b", "@example.com",
		"+1", "+44", "+1234", "+12345", "1", "2079460000", "12a", "123456789012345", "1234567890123456",
		"IN", "in", "INR", "USD", "US", "X", "ABCD", "021000021", "021000022", "checking", "savings",
		"tab\there", "line\nbreak", "nul\x00", "\u200bzero width", "é", "日本語", "\xff",
		strings.Repeat("a", 50), strings.Repeat("a", 51), strings.Repeat("a", 100), strings.Repeat("a", 101),
		strings.Repeat("é", 100), strings.Repeat("é", 101), strings.Repeat("日", 50) + "x",
		strings.Repeat("a", 90) + "@example.com", " padded ", "2024-01-02T03:04:05",
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for name := range v.plain {
		fields, _ := v.BodyFields(name)
		if len(fields) == 0 {
			continue
		}
		for range 5000 {
			body := map[string]any{}
			for _, f := range fields {
				if rng.IntN(4) == 0 {
					continue // left out
				}
				body[f.Name] = values[rng.IntN(len(values))]
			}
			if rng.IntN(10) == 0 {
				body["undeclared"] = "x"
			}
			plainSameAsSchema(t, v, name, map[string]any{"path": map[string]any{}, "query": map[string]any{}, "body": body})
		}
		for _, body := range []any{nil, "text", json.Number("1"), []any{}, map[string]any{}} {
			plainSameAsSchema(t, v, name, map[string]any{"path": map[string]any{}, "query": map[string]any{}, "body": body})
		}
		plainSameAsSchema(t, v, name, map[string]any{"path": map[string]any{}, "query": map[string]any{}})
	}
}

// A document the plain check accepts is what the validator accepts: Validate's answer is
// the same with the checks and without them.
func TestPlainCheckValidateSameAnswers(t *testing.T) {
	with := testValidator(t)
	without := testValidator(t)
	clear(without.plain)
	for name, rules := range without.rules {
		for i := range rules {
			rules[i].plain = nil
		}
		without.rules[name] = rules
	}
	for _, c := range []struct{ name, body string }{
		{"users_create", `{"name":"Ada","email":"ada@example.com"}`},
		{"users_create", `{"name":"Ada","phone_country_code":"+44","phone":"2079460000"}`},
		{"users_create", `{"name":"Ada","phone":"2079460000"}`},
		{"users_create", `{"name":"Ada"}`},
		{"users_create", `{"name":"","email":"x"}`},
		{"users_create", `{"name":"Ada","email":"ada@example.com","extra":1}`},
		{"users_create", `{"name":"Ada","email":null,"phone":null,"phone_country_code":null}`},
		{"users_create", `null`},
		{"payees_create", `{"name":"Ada","email":"ada@example.com"}`},
	} {
		b1, f1, err1 := with.Validate(c.name, nil, nil, []byte(c.body))
		b2, f2, err2 := without.Validate(c.name, nil, nil, []byte(c.body))
		if !reflect.DeepEqual(b1, b2) || !reflect.DeepEqual(f1, f2) || (err1 == nil) != (err2 == nil) {
			t.Errorf("%s %s: with plain checks %v %+v %v, without %v %+v %v", c.name, c.body, b1, f1, err1, b2, f2, err2)
		}
		if with.Validations() != without.Validations() {
			t.Errorf("%s %s: %d validations counted with plain checks, %d without", c.name, c.body, with.Validations(), without.Validations())
		}
	}
}

// FuzzPlainCheck: for any body, under every schema with a plain check, the check and the
// validator agree.
//
//	go test -run '^$' -fuzz FuzzPlainCheck -fuzztime 1m ./internal/validate
func FuzzPlainCheck(f *testing.F) {
	v := testValidator(f)
	for _, seed := range []string{`{"name":"Ada","email":"ada@example.com"}`, `{"name":"Ada","phone":"1","phone_country_code":"+1"}`, `{"name":""}`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		decoded, fe := ParseBody(body)
		if fe != nil {
			return
		}
		for name := range v.plain {
			plainSameAsSchema(t, v, name, map[string]any{"path": map[string]any{}, "query": map[string]any{}, "body": decoded})
		}
	})
}
