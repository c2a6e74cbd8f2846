package payments

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

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

// What docs/decisions.md says of the schemas' limits and enumerations, and of the
// constants of validation, is what they say.
func TestDecisionsClaims(t *testing.T) {
	raw, err := os.ReadFile("docs/decisions.md")
	if err != nil {
		t.Fatal(err)
	}
	decisions := strings.Join(strings.Fields(string(raw)), " ") // claims wrap across lines
	v, err := newValidator()
	if err != nil {
		t.Fatal(err)
	}
	claim := func(t *testing.T, pattern string) []string {
		t.Helper()
		m := regexp.MustCompile(pattern).FindStringSubmatch(decisions)
		if m == nil {
			t.Fatalf("docs/decisions.md no longer says %q: say it again, or change this test with it", pattern)
		}
		return m[1:]
	}
	number := func(t *testing.T, s string) int {
		t.Helper()
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	// refused reports whether the schema refuses body field value (other fields may fail).
	refused := func(schema, field, value string) bool {
		err := v.validate(schema, map[string]any{"body": map[string]any{field: value}}, nil)
		e, _ := err.(*Error)
		return e != nil && slices.ContainsFunc(e.Fields, func(f FieldError) bool {
			return len(f.Loc) == 2 && f.Loc[1] == field
		})
	}

	t.Run("CardBrands", func(t *testing.T) {
		brands := strings.Split(claim(t, `\*\*Cards\*\*.*? brand \(([a-z, ]+)\)`)[0], ", ")
		enum := asSlice(lookup(v.docs[schemaBaseURL+"cards_add.json"], splitPointer("/properties/body/properties/brand/enum")))
		var want []string
		for _, b := range enum {
			want = append(want, b.(string))
		}
		if !slices.Equal(brands, want) {
			t.Errorf("docs/decisions.md lists the brands %v, schema/cards_add.json %v", brands, want)
		}
	})
	t.Run("ExchangeRateDigits", func(t *testing.T) {
		n := number(t, claim(t, `A rate must be greater than zero, with at most (\d+) digits on either side of the point`)[0])
		most := "1" + strings.Repeat("0", n-1) + "." + strings.Repeat("5", n)
		for value, want := range map[string]bool{most: false, most + "5": true, "1" + most: true} {
			if refused("rates_set", "exchange_rate", value) != want {
				t.Errorf("exchange_rate %s: refused %v, want %v (docs/decisions.md: at most %d digits either side)", value, !want, want, n)
			}
		}
	})
	t.Run("AccountNumberDigits", func(t *testing.T) {
		m := claim(t, `the account number \(as validated: (\d+) to (\d+) digits`)
		least, most := number(t, m[0]), number(t, m[1])
		for value, want := range map[string]bool{
			strings.Repeat("1", least): false, strings.Repeat("1", least-1): true,
			strings.Repeat("1", most): false, strings.Repeat("1", most+1): true,
		} {
			if refused("accounts_add", "account_number", value) != want {
				t.Errorf("account_number of %d digits: refused %v, want %v (docs/decisions.md: %d to %d)", len(value), !want, want, least, most)
			}
		}
	})
	t.Run("DefaultRows", func(t *testing.T) {
		for _, pattern := range []string{"`{}` takes the defaults: (\\d+) rows, page 1", "`{\"rows_per_page\": null}` lists (\\d+) rows"} {
			if n := number(t, claim(t, pattern)[0]); n != DefaultRowsPerPage {
				t.Errorf("docs/decisions.md: %d rows by default, DefaultRowsPerPage %d", n, DefaultRowsPerPage)
			}
		}
		rows := lookup(v.docs[schemaBaseURL+"users_list.json"], splitPointer("/properties/body/properties/rows_per_page/enum"))
		if !slices.ContainsFunc(asSlice(rows), func(r any) bool { return r != nil && asInt(r) == DefaultRowsPerPage }) {
			t.Errorf("DefaultRowsPerPage %d is not a rows_per_page schema/users_list.json accepts: %v", DefaultRowsPerPage, rows)
		}
	})
	t.Run("Nesting", func(t *testing.T) {
		if n := number(t, claim(t, `Nesting deeper than (\d+) levels`)[0]); n != maxJSONDepth {
			t.Errorf("docs/decisions.md: nesting deeper than %d levels, maxJSONDepth %d", n, maxJSONDepth)
		}
	})
	t.Run("BankIdentifierTypes", func(t *testing.T) {
		said := claim(t, `\*\*Bank identifier types\*\* of the countries without IFSC, IBAN or CLABE: (.*?\))\.`)[0]
		var saidTypes []string
		for _, m := range regexp.MustCompile("`([A-Z_]+)` \\(([A-Z]{2})\\)").FindAllStringSubmatch(said, -1) {
			saidTypes = append(saidTypes, m[2]+" "+m[1])
		}
		var rules []PayeeRules
		if err := json.Unmarshal(defaultPayeeRules, &rules); err != nil {
			t.Fatal(err)
		}
		var shipped []string
		for _, r := range rules {
			if !slices.Contains([]string{"IFSC", "IBAN", "CLABE"}, r.BankIdentifierType) {
				shipped = append(shipped, r.CountryCode+" "+r.BankIdentifierType)
			}
		}
		slices.Sort(saidTypes)
		slices.Sort(shipped)
		if !slices.Equal(saidTypes, slices.Compact(shipped)) {
			t.Errorf("docs/decisions.md names %v, data/payee_rules.json has %v", saidTypes, shipped)
		}
	})
}
