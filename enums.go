package payments

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// enumTable is a Go table keyed by the values of a schema enumeration: the values are
// written in the schema, where clients meet them (a 422's literal_error lists them), and
// the table only attaches to each what Go needs (a provider's code, a check).
type enumTable struct {
	schema  string // the file in schema/
	pointer string // the enumeration in it, a JSON pointer
	keys    []string
}

// enumTables are the Go tables keyed by a schema's enumeration. The validator refuses to
// start when one and its enumeration differ, so neither changes without the other.
func enumTables() []enumTable {
	return []enumTable{
		{"payee_banks_add.json", "/properties/body/properties/bank_acc_type/enum", slices.Collect(maps.Keys(providerAccountTypes))},
		{"payee_rules_load.json", "/$defs/field/properties/data_type/enum", slices.Collect(maps.Keys(dataTypes))},
	}
}

// checkEnumTables reports the first table whose keys are not exactly the values of its
// enumeration (a null among them, an optional field's, aside).
func (v *validator) checkEnumTables(tables []enumTable) error {
	for _, t := range tables {
		node, ok := lookup(v.docs[schemaBaseURL+t.schema], splitPointer(t.pointer)).([]any)
		if !ok {
			return fmt.Errorf("payments: schema/%s has no enumeration at %s", t.schema, t.pointer)
		}
		var values []string
		for _, value := range node {
			if value != nil {
				values = append(values, fmt.Sprint(value))
			}
		}
		slices.Sort(values)
		keys := slices.Sorted(slices.Values(t.keys))
		if !slices.Equal(values, keys) {
			return fmt.Errorf("payments: schema/%s#%s lists %s, but Go has an entry for %s",
				t.schema, t.pointer, strings.Join(values, ", "), strings.Join(keys, ", "))
		}
	}
	return nil
}
