package payments

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/platform-payments/payments/internal/validate"
)

// Each limit and enumeration is written once: in schema/, or for what the schemas do not
// hold, in one Go constant. What else names them is derived from there, or kept true here.

// The Go tables keyed by a schema's enumeration agree with it: the validator would not
// start otherwise (package validate's TestEnumTables shows it refusing one that differs).
func TestEnumTables(t *testing.T) {
	if _, err := newValidator(); err != nil {
		t.Fatalf("the tables disagree with the schemas: %v", err)
	}
}

// What docs/decisions/ says of the schemas' limits and enumerations, and of the
// constants of validation, is what they say.
func TestDecisionsClaims(t *testing.T) {
	files, err := filepath.Glob("docs/decisions/*.md")
	if err != nil || len(files) == 0 {
		t.Fatalf("no docs/decisions/*.md: %v", err)
	}
	var raw []byte
	for _, file := range files {
		text, err := os.ReadFile(file) // #nosec G304 -- a document of the repository
		if err != nil {
			t.Fatal(err)
		}
		raw = append(append(raw, text...), '\n')
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
			t.Fatalf("docs/decisions/ no longer says %q: say it again, or change this test with it", pattern)
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
		fields, err := v.ValidateBody(schema, map[string]any{field: value})
		if err != nil {
			t.Fatal(err)
		}
		return slices.ContainsFunc(fields, func(f FieldError) bool {
			return len(f.Loc) == 2 && f.Loc[1] == field
		})
	}
	// enum returns the enumeration at a JSON pointer of a schema file.
	enum := func(t *testing.T, file string, pointer ...string) []any {
		t.Helper()
		raw, err := fs.ReadFile(RequestSchemas(), file)
		if err != nil {
			t.Fatal(err)
		}
		node, err := validate.DecodeJSON(raw)
		for _, p := range pointer {
			m, _ := node.(map[string]any)
			node = m[p]
		}
		values, ok := node.([]any)
		if err != nil || !ok {
			t.Fatalf("schema/%s has no enumeration at %v: %v", file, pointer, err)
		}
		return values
	}

	t.Run("CardBrands", func(t *testing.T) {
		brands := strings.Split(claim(t, `\*\*Cards\*\*.*? brand \(([a-z, ]+)\)`)[0], ", ")
		var want []string
		for _, b := range enum(t, "cards_add.json", "properties", "body", "properties", "brand", "enum") {
			want = append(want, b.(string))
		}
		if !slices.Equal(brands, want) {
			t.Errorf("docs/decisions/ lists the brands %v, schema/cards_add.json %v", brands, want)
		}
	})
	t.Run("ExchangeRateDigits", func(t *testing.T) {
		n := number(t, claim(t, `A rate must be greater than zero, with at most (\d+) digits on either side of the point`)[0])
		most := "1" + strings.Repeat("0", n-1) + "." + strings.Repeat("5", n)
		for value, want := range map[string]bool{most: false, most + "5": true, "1" + most: true} {
			if refused("rates_set", "exchange_rate", value) != want {
				t.Errorf("exchange_rate %s: refused %v, want %v (docs/decisions/: at most %d digits either side)", value, !want, want, n)
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
				t.Errorf("account_number of %d digits: refused %v, want %v (docs/decisions/: %d to %d)", len(value), !want, want, least, most)
			}
		}
	})
	t.Run("DefaultRows", func(t *testing.T) {
		for _, pattern := range []string{"`{}` takes the defaults: (\\d+) rows, page 1", "`{\"rows_per_page\": null}` lists (\\d+) rows"} {
			if n := number(t, claim(t, pattern)[0]); n != DefaultRowsPerPage {
				t.Errorf("docs/decisions/: %d rows by default, DefaultRowsPerPage %d", n, DefaultRowsPerPage)
			}
		}
		rows := enum(t, "users_list.json", "properties", "body", "properties", "rows_per_page", "enum")
		if !slices.Contains(rows, any(json.Number(strconv.Itoa(DefaultRowsPerPage)))) {
			t.Errorf("DefaultRowsPerPage %d is not a rows_per_page schema/users_list.json accepts: %v", DefaultRowsPerPage, rows)
		}
	})
	t.Run("Nesting", func(t *testing.T) {
		if n := number(t, claim(t, `Nesting deeper than (\d+) levels`)[0]); n != validate.MaxDepth {
			t.Errorf("docs/decisions/: nesting deeper than %d levels, validate.MaxDepth %d", n, validate.MaxDepth)
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
			t.Errorf("docs/decisions/ names %v, data/payee_rules.json has %v", saidTypes, shipped)
		}
	})
}
