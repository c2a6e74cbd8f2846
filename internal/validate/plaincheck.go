package validate

import (
	"encoding/json"
	"regexp"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// The validator builds its error tree for every document it checks, valid or not: maps of
// the properties evaluated, the scope of each subschema, an error value for each branch of
// an if that is not taken. For the schemas made of the few keywords most requests use
// (types, properties, required, closed objects, string lengths, patterns, formats, $ref,
// allOf, if/then/else) New compiles a plain check as well, which says exactly what the
// validator says, valid or not, without building anything. A document it finds valid is
// valid; one it refuses goes to the validator, which builds the error tree the 422 is
// made of. A schema with any other keyword gets no such check.

// kind is a JSON type as a bit, so that a schema's types are one mask.
type kind uint8

const (
	kindNull kind = 1 << iota
	kindBoolean
	kindNumber
	kindString
	kindArray
	kindObject
)

var kindByName = map[string]kind{
	"null": kindNull, "boolean": kindBoolean, "string": kindString, "array": kindArray, "object": kindObject,
	// "number" and "integer" are not compiled: an integer written 10.0 is the
	// validator's to judge.
}

// kindOf returns the JSON type of a decoded value, or false for a value that is not one
// (the validator reports that as an error of its own).
func kindOf(v any) (kind, bool) {
	switch v.(type) {
	case nil:
		return kindNull, true
	case bool:
		return kindBoolean, true
	case json.Number, float32, float64, int, int8, int32, int64, uint, uint8, uint32, uint64:
		return kindNumber, true
	case string:
		return kindString, true
	case []any:
		return kindArray, true
	case map[string]any:
		return kindObject, true
	}
	return 0, false
}

// plainCheck is a compiled schema of the keywords above.
type plainCheck struct {
	types                         kind // 0: any
	format                        func(any) bool
	required                      []string
	properties                    []property
	closed                        bool // additionalProperties: false
	minLength                     int  // -1: none
	maxLength                     int  // -1: none
	pattern                       *regexp.Regexp
	ref                           *plainCheck
	allOf                         []*plainCheck
	ifCheck, thenCheck, elseCheck *plainCheck
}

type property struct {
	name  string
	check *plainCheck
}

// compilePlainCheck compiles s into a check, or returns nil when s, or a schema it applies,
// uses a keyword the checks do not know. formats are the validator's formats, by name.
func compilePlainCheck(s *jsonschema.Schema, formats map[string]format) *plainCheck {
	return (&plainCompiler{formats: formats, done: map[*jsonschema.Schema]*plainCheck{}}).compile(s)
}

type plainCompiler struct {
	formats map[string]format
	done    map[*jsonschema.Schema]*plainCheck // compiled or being compiled: a $ref may loop
	failed  bool
}

func (cc *plainCompiler) compile(s *jsonschema.Schema) *plainCheck {
	c := cc.sub(s)
	if cc.failed {
		return nil
	}
	return c
}

func (cc *plainCompiler) sub(s *jsonschema.Schema) *plainCheck {
	if s == nil || cc.failed {
		return nil
	}
	if c, ok := cc.done[s]; ok {
		return c
	}
	if !compilable(s) {
		cc.failed = true
		return nil
	}
	c := &plainCheck{minLength: s.MinLength, maxLength: s.MaxLength, pattern: s.Pattern, required: s.Required, closed: s.AdditionalProperties == false}
	cc.done[s] = c
	for _, t := range s.Types {
		k, ok := kindByName[t]
		if !ok {
			cc.failed = true
			return nil
		}
		c.types |= k
	}
	if s.Format != "" {
		f, ok := cc.formats[s.Format]
		if !ok {
			cc.failed = true
			return nil
		}
		c.format = f.valid
	}
	for name, p := range s.Properties {
		c.properties = append(c.properties, property{name: name, check: cc.sub(p)})
	}
	c.ref = cc.sub(s.Ref)
	for _, a := range s.AllOf {
		c.allOf = append(c.allOf, cc.sub(a))
	}
	c.ifCheck, c.thenCheck, c.elseCheck = cc.sub(s.If), cc.sub(s.Then), cc.sub(s.Else)
	return c
}

// compilable reports whether s uses no keyword but those a check knows (its subschemas
// are judged on their own).
func compilable(s *jsonschema.Schema) bool {
	return s.Always == nil && s.RecursiveRef == nil && s.DynamicRef == nil &&
		len(s.Constant) == 0 && len(s.Enum) == 0 && s.Not == nil && len(s.AnyOf) == 0 && len(s.OneOf) == 0 &&
		s.MinProperties == -1 && s.MaxProperties == -1 && s.PropertyNames == nil && !s.RegexProperties &&
		len(s.PatternProperties) == 0 && (s.AdditionalProperties == nil || s.AdditionalProperties == false) &&
		len(s.Dependencies) == 0 && len(s.DependentRequired) == 0 && len(s.DependentSchemas) == 0 &&
		s.UnevaluatedProperties == nil &&
		s.MinItems == -1 && s.MaxItems == -1 && !s.UniqueItems && s.Items == nil && s.AdditionalItems == nil &&
		len(s.PrefixItems) == 0 && s.Items2020 == nil && s.Contains == nil && s.UnevaluatedItems == nil &&
		s.ContentEncoding == "" && s.ContentMediaType == "" && s.ContentSchema == nil &&
		s.Minimum == nil && s.ExclusiveMinimum == nil && s.Maximum == nil && s.ExclusiveMaximum == nil &&
		s.MultipleOf == nil && len(s.Extensions) == 0
}

// valid reports whether v meets the check: exactly when the validator finds no error.
// A value that is not decoded JSON is not valid here (the validator reports it).
func (c *plainCheck) valid(v any) bool {
	k, ok := kindOf(v)
	if !ok || c.types != 0 && c.types&k == 0 {
		return false
	}
	if c.format != nil && !c.format(v) {
		return false
	}
	switch k {
	case kindObject:
		m := v.(map[string]any)
		for _, name := range c.required {
			if _, ok := m[name]; !ok {
				return false
			}
		}
		for _, p := range c.properties {
			if pv, ok := m[p.name]; ok && !p.check.valid(pv) {
				return false
			}
		}
		if c.closed && len(m) > 0 {
			for name := range m {
				if !c.declares(name) {
					return false
				}
			}
		}
	case kindString:
		s := v.(string)
		if c.minLength != -1 || c.maxLength != -1 {
			n := utf8.RuneCountInString(s)
			if c.minLength != -1 && n < c.minLength || c.maxLength != -1 && n > c.maxLength {
				return false
			}
		}
		if c.pattern != nil && !c.pattern.MatchString(s) {
			return false
		}
	}
	if c.ref != nil && !c.ref.valid(v) {
		return false
	}
	for _, a := range c.allOf {
		if !a.valid(v) {
			return false
		}
	}
	if c.ifCheck != nil {
		if c.ifCheck.valid(v) {
			return c.thenCheck == nil || c.thenCheck.valid(v)
		}
		return c.elseCheck == nil || c.elseCheck.valid(v)
	}
	return true
}

// declares reports whether name is one of the check's properties.
func (c *plainCheck) declares(name string) bool {
	for _, p := range c.properties {
		if p.name == name {
			return true
		}
	}
	return false
}
