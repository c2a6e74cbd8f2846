package validate

import (
	"fmt"
	"slices"
	"strings"
)

// EnumTable is a Go table keyed by the values of a schema enumeration: the values are
// written in the schema, where clients meet them (a 422's literal_error lists them), and
// the table only attaches to each what Go needs (a provider's code, a check). New refuses
// a table whose keys and enumeration differ, so neither changes without the other.
type EnumTable struct {
	Schema  string   // the schema file, as "payee_banks_add.json"
	Pointer string   // the enumeration in it, a JSON pointer
	Keys    []string // the table's keys
}

// checkEnumTables reports the first table whose keys are not exactly the values of its
// enumeration (a null among them, an optional field's, aside).
func (v *Validator) checkEnumTables(tables []EnumTable) error {
	for _, t := range tables {
		node, ok := lookup(v.docs[schemaBaseURL+t.Schema], splitPointer(t.Pointer)).([]any)
		if !ok {
			return fmt.Errorf("payments: schema/%s has no enumeration at %s", t.Schema, t.Pointer)
		}
		var values []string
		for _, value := range node {
			if value != nil {
				values = append(values, fmt.Sprint(value))
			}
		}
		slices.Sort(values)
		keys := slices.Sorted(slices.Values(t.Keys))
		if !slices.Equal(values, keys) {
			return fmt.Errorf("payments: schema/%s#%s lists %s, but Go has an entry for %s",
				t.Schema, t.Pointer, strings.Join(values, ", "), strings.Join(keys, ", "))
		}
	}
	return nil
}
