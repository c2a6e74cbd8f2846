package validate_test

import (
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/platform-payments/payments/internal/validate"
)

// A broken schema fails New: nothing is left to the first request.
func TestNew_ErrBrokenSchema(t *testing.T) {
	request := func(body string) *fstest.MapFile {
		return &fstest.MapFile{Data: []byte(`{"type": "object", "properties": {"body": ` + body + `}}`)}
	}
	for name, files := range map[string]fstest.MapFS{
		"ErrNotJSON":       {"things_create.json": {Data: []byte(`{"type": `)}},
		"ErrUnknownRef":    {"things_create.json": request(`{"$ref": "defs.json#/$defs/nothing"}`)},
		"ErrNotEmbedded":   {"things_create.json": request(`{"$ref": "https://example.com/thing.json"}`)},
		"ErrBadKeyword":    {"things_create.json": request(`{"minLength": "one"}`)},
		"ErrRuleAsAFormat": {"things_create.json": request(`{"properties": {"a": {"$ref": "defs.json#/$defs/rule"}}}`), "defs.json": {Data: []byte(`{"$defs": {"rule": {"x-rule": "a rule"}}}`)}},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := validate.New(files); err == nil {
				t.Error("compiled")
			}
		})
	}
	if _, err := validate.New(fstest.MapFS{"things_create.json": request(`{"type": "object"}`)}); err != nil {
		t.Errorf("a sound schema: %v", err)
	}
}

func TestBodyFields(t *testing.T) {
	v := mustNew(t)
	fields, required := v.BodyFields("payee_banks_add")
	var names []string
	for _, f := range fields {
		names = append(names, f.Name)
	}
	if want := "payee_id bank_nick_name account_number country bank_acc_type identifier_type identifier_value payout_bank_id"; strings.Join(names, " ") != want {
		t.Errorf("fields %v, want %s (the order of the schema)", names, want)
	}
	if want := []validate.Field{{"payee_id", 0}, {"bank_nick_name", 100}, {"account_number", 64}}; !slices.Equal(fields[:3], want) {
		t.Errorf("fields %v, want %v first", fields[:3], want)
	}
	if want := []string{"payee_id", "account_number", "country", "bank_acc_type"}; !slices.Equal(required, want) {
		t.Errorf("required %v, want %v", required, want)
	}
	if fields, required := v.BodyFields("users_get"); fields != nil || required != nil {
		t.Errorf("a request without a body: %v, %v", fields, required)
	}
}

// Checks over a body fail as the request's own entries: missing (showing the body they
// saw), or a value_error at the field, in the order the request's schema declares them.
func TestBodyChecks(t *testing.T) {
	v := mustNew(t)
	digits := func(s string) string {
		if strings.Trim(s, "0123456789") != "" {
			return "account_number must contain digits only"
		}
		return ""
	}
	refused := func(string) string { return "bank_nick_name is not accepted" }
	checks, err := v.BodyChecks("payee_banks_add", []string{"account_number", "country"},
		map[string]validate.Check{"account_number": digits, "bank_nick_name": refused})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		body map[string]any
		want fieldErrors
	}{
		{"OK", object{"account_number": "123", "country": "IN"}, nil},
		{"OKNotAString", object{"account_number": 5, "country": "IN"}, nil}, // the request's schema says
		{"ErrCheck", object{"account_number": "12a", "country": "IN"}, fieldErrors{
			valueError("account_number must contain digits only", "12a", "body", "account_number")}},
		{"ErrOrder", object{"country": "IN", "account_number": "x", "bank_nick_name": "Main"}, fieldErrors{
			valueError("bank_nick_name is not accepted", "Main", "body", "bank_nick_name"),
			valueError("account_number must contain digits only", "x", "body", "account_number")}},
		{"ErrMissing", object{"account_number": "1"}, fieldErrors{
			missing(object{"account_number": "1"}, "body", "country")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := checks.ValidateBody("payee_banks_add", tc.body)
			if err != nil {
				t.Fatal(err)
			}
			assertFields(t, got, tc.want)
		})
	}
	if _, err := checks.ValidateBody("users_create", object{}); err == nil {
		t.Error("checks of payee_banks_add validated users_create")
	}
	if n := v.Validations(); n != 0 {
		t.Errorf("the checks counted %d validations of the request schemas", n)
	}
}

// ValidateBody validates a value as the body, null included: a document that is not a
// request (a payee rules file) may be null, and then it is a null, not a body left out.
func TestValidateBody(t *testing.T) {
	v := mustNew(t)
	got, err := v.ValidateBody("payee_rules_load", nil)
	if err != nil {
		t.Fatal(err)
	}
	assertFields(t, got, fieldErrors{{Type: "list_type", Loc: loc("body"), Msg: "Input should be a valid list"}})
	_, got, err = v.Validate("payee_rules_load", nil, nil, []byte("null"))
	if err != nil {
		t.Fatal(err)
	}
	assertFields(t, got, fieldErrors{missing(nil, "body")}) // a null body sent is none
	if _, err := v.ValidateBody("nothing", object{}); err == nil {
		t.Error("validated against no schema")
	}
}
