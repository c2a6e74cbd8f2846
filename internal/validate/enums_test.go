package validate

import "testing"

// A Go table keyed by a schema's enumeration stops the validator from starting when the
// two differ.
func TestEnumTables(t *testing.T) {
	v := testValidator(t)
	const schema, pointer = "payee_banks_add.json", "/properties/body/properties/bank_acc_type/enum"
	if err := v.checkEnumTables([]EnumTable{{schema, pointer, []string{"no_needed", "current", "savings"}}}); err != nil {
		t.Errorf("the table of the enumeration's values: %v", err)
	}
	for _, tc := range []struct {
		name  string
		table EnumTable
	}{
		{"ErrTypeWithoutCode", EnumTable{schema, pointer, []string{"savings", "current"}}},
		{"ErrCodeWithoutType", EnumTable{schema, pointer, []string{"savings", "current", "no_needed", "checking"}}},
		{"ErrNoEnumeration", EnumTable{schema, "/properties/body/properties/country/enum", []string{"IN"}}},
		{"ErrNoSchema", EnumTable{"nothing.json", pointer, []string{"savings"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := v.checkEnumTables([]EnumTable{tc.table}); err == nil {
				t.Errorf("%v accepted for %s%s", tc.table.Keys, tc.table.Schema, tc.table.Pointer)
			}
		})
	}
	// An optional enumeration's null is no value to key a table by.
	if err := v.checkEnumTables([]EnumTable{{"addresses_add.json", "/properties/body/properties/address_type/enum",
		[]string{"residential", "business", "mailing"}}}); err != nil {
		t.Error(err)
	}
}
