package validate

// How a JSON Schema validation error tree becomes the pydantic v2 entries of a 422: one
// entry per failing field, the first failure of type, length, pattern and the rest, in the
// order pydantic reports them (path, query, body; fields as the schema declares them).

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// keywordRank orders the failures of one value: pydantic reports the first that fails of
// type, length, pattern, then the rest, and only one per field.
var keywordRank = map[string]int{
	"required": 0, "additionalProperties": 0, "type": 1, "strict-integer": 2,
	"minLength": 3, "maxLength": 4, "pattern": 5, "format": 6,
	"enum": 7, "const": 7, "minimum": 8, "maximum": 9, "minItems": 3,
}

var sectionRank = map[string]int{"path": 0, "query": 1, "body": 2}

// candidate is the entry chosen so far for one loc, and where it goes in the answer.
type candidate struct {
	rank           int    // keywordRank of the failure: the lowest wins
	key            string // locKey of the entry
	section, field int    // its place: see sortFieldErrors
	fe             FieldError
}

func (v *Validator) fieldErrors(name string, doc map[string]any, root *jsonschema.ValidationError, rawBody []byte) []FieldError {
	es := entries{byLoc: map[string]int{}}
	for _, leaf := range leaves(root, nil) {
		v.addLeaf(&es, doc, leaf)
	}
	return v.sortFieldErrors(name, es.found, rawBody)
}

// entries collects a 422's entries, one per location: where a value fails several ways,
// the entry of the lowest rank (the failure pydantic reports first) is kept.
type entries struct {
	found []candidate
	byLoc map[string]int // locKey -> index in found
}

func (es *entries) add(rank int, fe FieldError) {
	key := locKey(fe.Loc)
	if i, ok := es.byLoc[key]; !ok {
		es.byLoc[key] = len(es.found)
		es.found = append(es.found, candidate{rank: rank, key: key, fe: fe})
	} else if rank < es.found[i].rank {
		es.found[i].rank, es.found[i].fe = rank, fe
	}
}

// leaves appends to out the failures of e that have no causes: the keywords that failed.
func leaves(e *jsonschema.ValidationError, out []*jsonschema.ValidationError) []*jsonschema.ValidationError {
	if len(e.Causes) == 0 {
		return append(out, e)
	}
	for _, c := range e.Causes {
		out = leaves(c, out)
	}
	return out
}

// addLeaf adds the entries of one failed keyword: one for each field a "required" misses
// or an "additionalProperties" refuses, else the keyword's own entry at the value's place.
func (v *Validator) addLeaf(es *entries, doc map[string]any, e *jsonschema.ValidationError) {
	docURL, ptr, _ := strings.Cut(e.AbsoluteKeywordLocation, "#")
	keyword := path.Base(ptr)
	node, _ := lookup(v.docs[docURL], splitPointer(path.Dir(ptr))).(map[string]any)
	loc := splitPointer(e.InstanceLocation)
	value := lookup(doc, loc)
	switch keyword {
	case "required":
		obj, _ := value.(map[string]any)
		for _, r := range asSlice(node["required"]) {
			field := r.(string)
			if _, present := obj[field]; !present {
				es.add(0, FieldError{Type: "missing", Loc: append(anyLoc(loc), field), Msg: "Field required", Input: missingInput(loc, value)})
			}
		}
	case "additionalProperties":
		obj, _ := value.(map[string]any)
		props, _ := node["properties"].(map[string]any)
		for field, fv := range obj {
			if _, declared := props[field]; !declared {
				es.add(0, FieldError{Type: "extra_forbidden", Loc: append(anyLoc(loc), field), Msg: "Extra inputs are not permitted", Input: fv})
			}
		}
	default:
		rank, fe := v.describe(keyword, node, value)
		fe.Loc = anyLoc(loc)
		es.add(rank, fe)
	}
}

// sortFieldErrors puts the entries in pydantic's order: path, then query, then body; within
// each, declared fields in the order the schema declares them, then undeclared fields in
// the order the client wrote them. Each entry's place is worked out once, from an index of
// the body's keys made in one pass (when an undeclared field needs it), and the entries are
// sorted by reference, so ordering n entries costs O(n log n).
func (v *Validator) sortFieldErrors(name string, found []candidate, rawBody []byte) []FieldError {
	var written map[string]int
	writtenAt := func(field string) (int, bool) {
		if written == nil {
			keys := objectKeys(rawBody)
			written = make(map[string]int, len(keys))
			for i, k := range keys {
				if _, seen := written[k]; !seen {
					written[k] = i
				}
			}
		}
		i, ok := written[field]
		return i, ok
	}
	order := make([]*candidate, len(found))
	for i := range found {
		c := &found[i]
		order[i] = c
		section, _ := c.fe.Loc[0].(string)
		c.section, c.field = sectionRank[section], -1
		if len(c.fe.Loc) < 2 {
			continue
		}
		field, _ := c.fe.Loc[1].(string)
		if i, ok := v.order[name][section+"/"+field]; ok {
			c.field = i
		} else if i, ok := writtenAt(field); ok {
			c.field = 1000 + i
		} else {
			c.field = math.MaxInt
		}
	}
	slices.SortFunc(order, func(a, b *candidate) int {
		return cmp.Or(cmp.Compare(a.section, b.section), cmp.Compare(a.field, b.field), strings.Compare(a.key, b.key))
	})
	entries := make([]FieldError, len(order))
	for i, c := range order {
		entries[i] = c.fe
	}
	return entries
}

// locKey is loc as text, one key per field: distinct locs give distinct keys.
func locKey(loc []any) string {
	var b strings.Builder
	for _, part := range loc {
		switch p := part.(type) {
		case string:
			b.WriteString(p)
		default:
			fmt.Fprint(&b, p)
		}
		b.WriteByte(0)
	}
	return b.String()
}

// describe turns one failed keyword of schema node on value into its pydantic entry.
func (v *Validator) describe(keyword string, node map[string]any, value any) (int, FieldError) {
	rank := keywordRank[keyword]
	fe := FieldError{Input: value}
	switch keyword {
	case "type":
		fe.Type, fe.Msg = typeError(asSlice(node["type"]))
	case "minLength":
		n := asInt(node["minLength"])
		fe.Type, fe.Msg = "string_too_short", fmt.Sprintf("String should have at least %d character%s", n, plural(n))
		fe.Ctx = map[string]any{"min_length": n}
	case "maxLength":
		n := asInt(node["maxLength"])
		fe.Type, fe.Msg = "string_too_long", fmt.Sprintf("String should have at most %d character%s", n, plural(n))
		fe.Ctx = map[string]any{"max_length": n}
	case "pattern":
		p, _ := node["pattern"].(string)
		fe.Type, fe.Msg = "string_pattern_mismatch", fmt.Sprintf("String should match pattern '%s'", p)
		fe.Ctx = map[string]any{"pattern": p}
	case "minimum":
		n := asNumber(node["minimum"])
		fe.Type, fe.Msg = "greater_than_equal", fmt.Sprintf("Input should be greater than or equal to %v", n)
		fe.Ctx = map[string]any{"ge": n}
	case "maximum":
		n := asNumber(node["maximum"])
		fe.Type, fe.Msg = "less_than_equal", fmt.Sprintf("Input should be less than or equal to %v", n)
		fe.Ctx = map[string]any{"le": n}
	case "minItems":
		n, got := asInt(node["minItems"]), len(asSlice(value))
		fe.Type, fe.Msg = "too_short", fmt.Sprintf("List should have at least %d item%s after validation, not %d", n, plural(n), got)
		fe.Ctx = map[string]any{"field_type": "List", "min_length": n, "actual_length": got}
	case "enum", "const":
		allowed := asSlice(node["enum"])
		if keyword == "const" {
			allowed = []any{node["const"]}
		}
		expected := literalList(allowed)
		fe.Type, fe.Msg = "literal_error", "Input should be "+expected
		fe.Ctx = map[string]any{"expected": expected}
	case "format":
		name, _ := node["format"].(string)
		f := v.formats[name]
		if name == "strict-integer" {
			rank = keywordRank[name]
		}
		if f.describe != nil {
			f.describe(&fe, value)
		} else {
			fe.Type, fe.Msg = "value_error", "Value error, invalid "+name
			fe.Ctx = map[string]any{"error": map[string]any{}}
		}
	default:
		fe.Type, fe.Msg = "value_error", "Value error, invalid value"
		fe.Ctx = map[string]any{"error": map[string]any{}}
	}
	return rank, fe
}

// typeError is the entry of a value of the wrong type, named after the first of the types
// the schema allows: an optional field's ["string", "null"] reports string_type.
func typeError(types []any) (typ, msg string) {
	want, _ := types[0].(string)
	switch want {
	case "string":
		return "string_type", "Input should be a valid string"
	case "integer":
		return "int_type", "Input should be a valid integer"
	case "boolean":
		return "bool_type", "Input should be a valid boolean"
	case "number":
		return "float_type", "Input should be a valid number"
	case "array":
		return "list_type", "Input should be a valid list"
	}
	return "model_attributes_type", "Input should be a valid dictionary or object to extract fields from"
}

// literalList writes allowed values as pydantic does: 'a', 'b' or 'c' (numbers unquoted).
// A null among them is left out: it is how an optional field's schema accepts null, and
// pydantic names only the literals of an Optional[Literal[...]].
func literalList(values []any) string {
	parts := make([]string, 0, len(values))
	for _, v := range values {
		switch v := v.(type) {
		case nil:
		case string:
			parts = append(parts, "'"+v+"'")
		default:
			parts = append(parts, fmt.Sprint(v))
		}
	}
	if len(parts) < 2 {
		return strings.Join(parts, "")
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " or " + parts[len(parts)-1]
}

// missingInput is the input pydantic reports for a missing field: the enclosing object for
// a body field; nothing for a path or query parameter or the body itself.
func missingInput(loc []string, enclosing any) any {
	if len(loc) == 0 || (len(loc) == 1 && loc[0] != "body") {
		return nil
	}
	return enclosing
}

func plural(n int64) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func splitPointer(p string) []string {
	p = strings.TrimPrefix(p, "/")
	if p == "" || p == "." {
		return nil
	}
	parts := strings.Split(p, "/")
	for i, s := range parts {
		parts[i] = strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
	}
	return parts
}

func lookup(v any, ptr []string) any {
	for _, p := range ptr {
		switch x := v.(type) {
		case map[string]any:
			v = x[p]
		case []any:
			i, err := strconv.Atoi(p)
			if err != nil || i < 0 || i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}

func anyLoc(loc []string) []any {
	out := make([]any, len(loc), len(loc)+1)
	for i, s := range loc {
		out[i] = s
	}
	return out
}

func asSlice(v any) []any {
	switch x := v.(type) {
	case []any:
		return x
	case nil:
		return nil
	}
	return []any{v}
}

func asInt(v any) int64 {
	n, _ := v.(json.Number).Int64()
	return n
}

// asNumber returns a schema's numeric keyword as an integer when it is one.
func asNumber(v any) any {
	num, _ := v.(json.Number)
	if i, err := num.Int64(); err == nil {
		return i
	}
	f, _ := num.Float64()
	return f
}
