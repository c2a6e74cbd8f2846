package validate

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// Rules over a body as a whole (the contact rules of users and payees) are written in the
// schemas: a definition with an x-rule, the reason its failure gives, which a request
// lists in its body's allOf ({"$ref": "defs.json#/$defs/a_contact"}). For any JSON Schema
// validator the body must meet them like the rest of its schema. This validator runs them
// as pydantic runs a model's validators: after the body meets the rest of its schema, in
// the order the allOf lists them, the first failing one making the 422 (one value_error at
// ["body"], its input the body as sent). So a 422 lists the field failures or else the
// rule's, a rule never sees a body of undeclared fields, and a hostile body costs no more
// for the rules its request has.

// ruleKeyword names the reason a rule's failure gives, "Value error, " and it.
const ruleKeyword = "x-rule"

// bodyRule is one rule over a request body.
type bodyRule struct {
	reason string
	schema *jsonschema.Schema
	plain  *plainCheck // nil: none (plaincheck.go)
}

// takeBodyRules takes the rules out of the body allOf of each request schema in docs (by
// URL), changing docs, and returns each changed document as JSON to compile in place of
// its file, and the URLs of each request's rules (by request name), in order. A rule used
// anywhere else is refused: it would be reported as the failures of its keywords.
func takeBodyRules(docs map[string]any) (changed map[string][]byte, rules map[string][]string, err error) {
	changed, rules = map[string][]byte{}, map[string][]string{}
	for docURL, doc := range docs {
		body, _ := lookup(doc, []string{"properties", "body"}).(map[string]any)
		allOf, _ := body["allOf"].([]any)
		var kept []any
		for _, item := range allOf {
			m, _ := item.(map[string]any)
			ref, _ := m["$ref"].(string)
			target := resolveRef(docURL, ref)
			if len(m) != 1 || ruleReason(docs, target) == "" {
				kept = append(kept, item)
				continue
			}
			name := strings.TrimSuffix(strings.TrimPrefix(docURL, schemaBaseURL), ".json")
			rules[name] = append(rules[name], target)
		}
		if len(kept) == len(allOf) {
			continue
		}
		if body["allOf"] = kept; len(kept) == 0 {
			delete(body, "allOf")
		}
		if changed[docURL], err = json.Marshal(doc); err != nil {
			return nil, nil, err
		}
	}
	for docURL, doc := range docs {
		if err := checkRulesUse(docs, docURL, doc, ""); err != nil {
			return nil, nil, err
		}
	}
	return changed, rules, nil
}

// checkRulesUse refuses a rule written anywhere but as a definition, and one referred to
// from anywhere but a request body's allOf (taken out of docs by then).
func checkRulesUse(docs map[string]any, docURL string, node any, ptr string) error {
	switch n := node.(type) {
	case map[string]any:
		if _, ok := n[ruleKeyword]; ok {
			switch {
			case ruleReason(docs, docURL+"#"+ptr) == "":
				return fmt.Errorf("payments: %s#%s: %s must be the reason the rule gives, as text", docURL, ptr, ruleKeyword)
			case !strings.HasPrefix(ptr, "/$defs/") || strings.Count(ptr, "/") != 2:
				return fmt.Errorf("payments: %s#%s: a rule is a definition (in $defs)", docURL, ptr)
			}
		}
		if ref, ok := n["$ref"].(string); ok && ruleReason(docs, resolveRef(docURL, ref)) != "" {
			return fmt.Errorf("payments: %s#%s: rule %s is used from a request body's allOf only", docURL, ptr, ref)
		}
		for k, child := range n {
			if err := checkRulesUse(docs, docURL, child, ptr+"/"+strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")); err != nil {
				return err
			}
		}
	case []any:
		for i, child := range n {
			if err := checkRulesUse(docs, docURL, child, fmt.Sprintf("%s/%d", ptr, i)); err != nil {
				return err
			}
		}
	}
	return nil
}

// resolveRef returns the absolute URL of ref, written in the document at docURL.
func resolveRef(docURL, ref string) string {
	base, err1 := url.Parse(docURL)
	r, err2 := url.Parse(ref)
	if err1 != nil || err2 != nil || ref == "" {
		return ""
	}
	return base.ResolveReference(r).String()
}

// ruleReason returns the reason of the rule at target (a URL with a JSON pointer), "" when
// target is no rule.
func ruleReason(docs map[string]any, target string) string {
	docURL, ptr, _ := strings.Cut(target, "#")
	node, _ := lookup(docs[docURL], splitPointer(ptr)).(map[string]any)
	reason, _ := node[ruleKeyword].(string)
	return reason
}

// compileBodyRules compiles the rules of each request.
func (v *Validator) compileBodyRules(c *jsonschema.Compiler, rules map[string][]string) error {
	v.rules = map[string][]bodyRule{}
	for name, targets := range rules {
		for _, target := range targets {
			sch, err := c.Compile(target)
			if err != nil {
				return err
			}
			v.rules[name] = append(v.rules[name], bodyRule{reason: ruleReason(v.docs, target), schema: sch, plain: compilePlainCheck(sch, v.formats)})
		}
	}
	return nil
}

// validateBodyRules runs the rules of the named request on body, which meets the rest of its
// schema: the first failing one is the 422.
func (v *Validator) validateBodyRules(name string, body any) ([]FieldError, error) {
	for _, r := range v.rules[name] {
		if r.plain != nil && r.plain.valid(body) {
			continue // what r.schema.Validate(body) == nil leads to
		}
		err := r.schema.Validate(body)
		if _, failed := err.(*jsonschema.ValidationError); failed {
			return []FieldError{ruleError(body, r.reason, "body")}, nil
		}
		if err != nil {
			return nil, fmt.Errorf("payments: validate %s: %w", name, err)
		}
	}
	return nil, nil
}

// ruleError is the entry of a rule over a whole object (pydantic's model validators): a
// value_error at loc with the object, as the client sent it, as its input.
func ruleError(input any, msg string, loc ...any) FieldError {
	return FieldError{
		Type:  "value_error",
		Loc:   loc,
		Msg:   "Value error, " + msg,
		Input: input,
		Ctx:   map[string]any{"error": map[string]any{}},
	}
}
