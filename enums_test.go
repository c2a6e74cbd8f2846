package payments

import "testing"

// Each limit and enumeration is written once: in schema/, or for what the schemas do not
// hold, in one Go constant. What else names them is derived from there, or kept true here.

// A Go table keyed by a schema's enumeration stops the validator from starting when the
// two differ.
func TestEnumTables(t *testing.T) {
	v, err := newValidator()
	if err != nil {
		t.Fatalf("the tables disagree with the schemas: %v", err)
	}
	bankAccTypes := enumTables()[0]
	for _, tc := range []struct {
		name  string
		table enumTable
	}{
		{"ErrTypeWithoutCode", enumTable{bankAccTypes.schema, bankAccTypes.pointer, []string{"savings", "current"}}},
		{"ErrCodeWithoutType", enumTable{bankAccTypes.schema, bankAccTypes.pointer, []string{"savings", "current", "no_needed", "checking"}}},
		{"ErrNoEnumeration", enumTable{bankAccTypes.schema, "/properties/body/properties/country/enum", []string{"IN"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := v.checkEnumTables([]enumTable{tc.table}); err == nil {
				t.Errorf("%v accepted for %s%s", tc.table.keys, tc.table.schema, tc.table.pointer)
			}
		})
	}
	// An optional enumeration's null is no value to key a table by.
	if err := v.checkEnumTables([]enumTable{{"addresses_add.json", "/properties/body/properties/address_type/enum",
		[]string{"residential", "business", "mailing"}}}); err != nil {
		t.Error(err)
	}
}
