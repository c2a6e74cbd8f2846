package validate

import (
	"slices"
	"strings"
	"testing"
)

// The rules over a body are taken out of their request schemas to run after them, in the
// order the body's allOf lists them; a rule used any other way stops the validator from
// starting, since its failure would be reported as the failures of its keywords.
func TestTakeBodyRules(t *testing.T) {
	const defs = schemaBaseURL + "defs.json"
	const request = schemaBaseURL + "things_create.json"
	rule := func(reason string) map[string]any {
		return map[string]any{ruleKeyword: reason, "required": []any{"a"}}
	}
	docs := func(body map[string]any, defsDoc map[string]any) map[string]any {
		return map[string]any{
			defs:    defsDoc,
			request: map[string]any{"properties": map[string]any{"body": body}},
		}
	}
	twoRules := map[string]any{"$defs": map[string]any{"first": rule("first"), "second": rule("second")}}

	t.Run("OK", func(t *testing.T) {
		d := docs(map[string]any{"type": "object", "allOf": []any{
			map[string]any{"$ref": "defs.json#/$defs/second"},
			map[string]any{"required": []any{"b"}}, // not a rule: stays in the schema
			map[string]any{"$ref": "defs.json#/$defs/first"},
		}}, twoRules)
		changed, rules, err := takeBodyRules(d)
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{defs + "#/$defs/second", defs + "#/$defs/first"}; !slices.Equal(rules["things_create"], want) {
			t.Errorf("rules %v, want %v in the allOf's order", rules["things_create"], want)
		}
		if got := string(changed[request]); !strings.Contains(got, `"allOf":[{"required":["b"]}]`) || strings.Contains(got, "$ref") {
			t.Errorf("schema compiled without its rules: %s", got)
		}
	})
	for _, tc := range []struct {
		name       string
		body, defs map[string]any
	}{
		{"ErrRuleAsAProperty", map[string]any{"properties": map[string]any{"a": map[string]any{"$ref": "defs.json#/$defs/first"}}}, twoRules},
		{"ErrRuleBesideAnotherKeyword", map[string]any{"allOf": []any{map[string]any{"$ref": "defs.json#/$defs/first", "required": []any{"b"}}}}, twoRules},
		{"ErrRuleWrittenInPlace", map[string]any{"allOf": []any{rule("here")}}, twoRules},
		{"ErrRuleWithoutReason", map[string]any{"allOf": []any{map[string]any{"$ref": "defs.json#/$defs/first"}}},
			map[string]any{"$defs": map[string]any{"first": map[string]any{ruleKeyword: true}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, _, err := takeBodyRules(docs(tc.body, tc.defs)); err == nil {
				t.Error("accepted")
			}
		})
	}
}

// The schemas' rules are the contact rules: Create User's two, Create Payee's one.
func TestBodyRulesOfTheSchemas(t *testing.T) {
	v := testValidator(t)
	reasons := func(name string) (out []string) {
		for _, r := range v.rules[name] {
			out = append(out, r.reason)
		}
		return out
	}
	phone := "phone and phone_country_code must be given together"
	contact := "at least one contact method is required: an email, or a phone with its phone_country_code"
	if got := reasons("users_create"); !slices.Equal(got, []string{phone, contact}) {
		t.Errorf("users_create rules %q", got)
	}
	if got := reasons("payees_create"); !slices.Equal(got, []string{phone}) {
		t.Errorf("payees_create rules %q", got)
	}
	if n := len(v.rules); n != 2 {
		t.Errorf("%d requests have rules, want 2", n)
	}
}
