package payments_test

import (
	"bytes"
	"context"
	"encoding/json"
	"math/big"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/platform-payments/payments"
)

// Payee rules (CONTRACT.md sections 4 and 5, issue 4): the shipped reference data, Get
// Payee Rules, and replacing the rules from a file.

// shippedPairs are the destination countries and payout currencies the embedded rules
// must cover, with the bank identifier each names.
var shippedPairs = []struct {
	country, currency, name, identifier string
	accountType                         string // data_type of account_number
	accountLength                       int    // its length (0: any positive length)
}{
	{"IN", "INR", "India", "IFSC", "numeric", 0},
	{"PK", "PKR", "Pakistan", "IBAN", "iban", 24},
	{"AE", "AED", "United Arab Emirates", "IBAN", "iban", 23},
	{"PH", "PHP", "Philippines", "", "numeric", 0},
	{"MX", "MXN", "Mexico", "CLABE", "clabe", 18},
	{"GB", "GBP", "United Kingdom", "IBAN", "iban", 22},
	{"NG", "NGN", "Nigeria", "", "numeric", 0},
	{"BD", "BDT", "Bangladesh", "", "numeric", 0},
}

func TestGetPayeeRules(t *testing.T) {
	ctx := context.Background()
	svc := mustOpen(t)

	for _, pair := range shippedPairs {
		t.Run("OK/"+pair.country+"/"+pair.currency, func(t *testing.T) {
			r, err := svc.GetPayeeRules(ctx, pair.country, pair.currency)
			if err != nil {
				t.Fatal(err)
			}
			if r.CountryCode != pair.country || r.CountryName != pair.name {
				t.Errorf("country %q %q, want %q %q", r.CountryCode, r.CountryName, pair.country, pair.name)
			}

			// The record has exactly the spec's members.
			raw, _ := json.Marshal(r)
			wantKeys(t, "payee rules", raw, "account", "bank_identifier_type", "country_code", "country_name",
				"documents_allowed", "mandatory_fields", "optional_fields")

			// Every descriptor is complete, and no tag appears twice.
			tags := map[string]payments.FieldRule{}
			mandatory := map[string]bool{}
			for i, list := range [][]payments.FieldRule{r.MandatoryFields, r.OptionalFields} {
				for _, f := range list {
					if f.Tag == "" || f.Label == "" || f.DataType == "" || f.Length <= 0 {
						t.Errorf("incomplete descriptor %+v", f)
					}
					if _, dup := tags[f.Tag]; dup {
						t.Errorf("tag %q listed twice", f.Tag)
					}
					tags[f.Tag] = f
					mandatory[f.Tag] = i == 0
				}
			}
			for _, list := range []string{"mandatory_fields", "optional_fields"} {
				var fields []json.RawMessage
				json.Unmarshal(mustField(t, raw, list), &fields)
				for _, f := range fields {
					wantKeys(t, "field descriptor", f, "data_type", "label", "length", "tag")
				}
			}

			// The payee bank request's own required fields are mandatory everywhere, and
			// the address too.
			for _, tag := range []string{"account_number", "country", "bank_acc_type", "name", "address_line_1", "city", "state", "zipcode"} {
				if !mandatory[tag] {
					t.Errorf("%s is not a mandatory field", tag)
				}
			}
			// bank_nick_name is optional in the request; every country lists it so.
			if _, listed := tags["bank_nick_name"]; !listed || mandatory["bank_nick_name"] {
				t.Error("bank_nick_name is not an optional field")
			}

			// The bank identifier (CONTRACT.md section 5 "Payee bank formats").
			switch pair.identifier {
			case "":
				if r.BankIdentifierType == "" || r.BankIdentifierType == "IFSC" || r.BankIdentifierType == "IBAN" || r.BankIdentifierType == "CLABE" {
					t.Errorf("bank_identifier_type = %q, want the local bank-code scheme", r.BankIdentifierType)
				}
			default:
				if r.BankIdentifierType != pair.identifier {
					t.Errorf("bank_identifier_type = %q, want %q", r.BankIdentifierType, pair.identifier)
				}
			}
			acct := tags["account_number"]
			if acct.DataType != pair.accountType || (pair.accountLength > 0 && acct.Length != pair.accountLength) {
				t.Errorf("account_number rule %+v, want data_type %q length %d", acct, pair.accountType, pair.accountLength)
			}

			// identifier_value is India's alone (mandatory there, an IFSC);
			// payout_bank_id is Pakistan's and the UAE's (optional).
			iv, hasIV := tags["identifier_value"]
			_, hasIT := tags["identifier_type"]
			if pair.country == "IN" {
				if !hasIV || !mandatory["identifier_value"] || iv.DataType != "ifsc" || iv.Length != 11 {
					t.Errorf("identifier_value rule %+v (mandatory %v), want a mandatory ifsc of 11", iv, mandatory["identifier_value"])
				}
				if hasIT && mandatory["identifier_type"] {
					t.Error("identifier_type is mandatory for IN; the contract makes it optional")
				}
			} else if hasIV || hasIT {
				t.Errorf("%s lists identifier_type or identifier_value", pair.country)
			}
			_, hasBankID := tags["payout_bank_id"]
			if wantBankID := pair.country == "PK" || pair.country == "AE"; hasBankID != wantBankID || mandatory["payout_bank_id"] {
				t.Errorf("payout_bank_id listed %v (mandatory %v), want optional %v", hasBankID, mandatory["payout_bank_id"], wantBankID)
			}

			// The account: payout currency and limits, min <= max.
			if r.Account.PayoutCurrency != pair.currency {
				t.Errorf("account.payout_currency = %q, want %q", r.Account.PayoutCurrency, pair.currency)
			}
			min, okMin := new(big.Rat).SetString(string(r.Account.MinPayoutAmount))
			max, okMax := new(big.Rat).SetString(string(r.Account.MaxPayoutAmount))
			if !okMin || !okMax || min.Sign() < 0 || min.Cmp(max) > 0 || max.Sign() <= 0 {
				t.Errorf("account limits %q..%q", r.Account.MinPayoutAmount, r.Account.MaxPayoutAmount)
			}
			wantKeys(t, "account", mustField(t, raw, "account"), "max_payout_amount", "min_payout_amount", "payout_currency")
			if len(r.DocumentsAllowed) == 0 {
				t.Error("documents_allowed is empty")
			}
		})
	}

	t.Run("OKLimitsKeepTheirDigits", func(t *testing.T) {
		r, err := svc.GetPayeeRules(ctx, "IN", "INR")
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := json.Marshal(r.Account)
		if string(raw) != `{"payout_currency":"INR","min_payout_amount":100,"max_payout_amount":1000000}` {
			t.Errorf("account = %s", raw)
		}
	})

	for _, pair := range [][2]string{{"US", "USD"}, {"IN", "USD"}, {"GB", "EUR"}, {"FR", "EUR"}} {
		t.Run("ErrNotFound/"+pair[0]+"/"+pair[1], func(t *testing.T) {
			_, err := svc.GetPayeeRules(ctx, pair[0], pair[1])
			if e := errorOf(t, err, payments.CodeNotFound); e.Message == "" {
				t.Error("no message")
			}
		})
	}

	invalid := []struct {
		name              string
		country, currency string
		want              fieldErrors
	}{
		{"CountryLowerCase", "in", "INR", fieldErrors{patternMismatch("^[A-Z]{2}$", "in", "query", "country_code")}},
		{"CountryUnknown", "XX", "INR", fieldErrors{ruleValueError("'XX' is not an ISO 3166-1 alpha-2 country code", "XX", "query", "country_code")}},
		{"CountryAlpha3", "IND", "INR", fieldErrors{tooLong(2, "IND", "query", "country_code")}},
		{"CountryEmpty", "", "INR", fieldErrors{tooShort(1, "", "query", "country_code")}},
		{"CurrencyLowerCase", "IN", "inr", fieldErrors{patternMismatch("^[A-Z]{3}$", "inr", "query", "payout_currency")}},
		{"CurrencyUnknown", "IN", "ABC", fieldErrors{ruleValueError("'ABC' is not an active ISO 4217 currency code", "ABC", "query", "payout_currency")}},
		{"CurrencyEmpty", "IN", "", fieldErrors{tooShort(1, "", "query", "payout_currency")}},
		{"Both", "india", "rupee", fieldErrors{
			tooLong(2, "india", "query", "country_code"),
			tooLong(3, "rupee", "query", "payout_currency"),
		}},
	}
	for _, tc := range invalid {
		t.Run("ErrInvalid/"+tc.name, func(t *testing.T) {
			_, err := svc.GetPayeeRules(ctx, tc.country, tc.currency)
			assertFields(t, err, tc.want)
		})
	}
}

// ruleValueError is the entry of a rule beyond JSON Schema (CONTRACT.md section 3).
func ruleValueError(msg string, input any, l ...any) payments.FieldError {
	return payments.FieldError{Type: "value_error", Loc: l, Msg: "Value error, " + msg, Input: input,
		Ctx: object{"error": object{}}}
}

// wantKeys fails unless the JSON object raw has exactly the members want.
func wantKeys(t *testing.T, what string, raw []byte, want ...string) {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("%s: %s is not a JSON object: %v", what, raw, err)
	}
	got := mapKeys(m)
	sort.Strings(want)
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("%s has members %v, want exactly %v", what, got, want)
	}
}

// mustField returns the member name of the JSON object raw.
func mustField(t *testing.T, raw []byte, name string) []byte {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	v, ok := m[name]
	if !ok {
		t.Fatalf("%s has no member %q", raw, name)
	}
	return v
}

func mapKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// shippedRules returns the embedded rules file, decoded with its numbers as written, for
// tests to change.
func shippedRules(t *testing.T) []map[string]any {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("data", "payee_rules.json"))
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var rules []map[string]any
	if err := dec.Decode(&rules); err != nil {
		t.Fatal(err)
	}
	return rules
}

// rulesFile encodes rules as a rules file.
func rulesFile(t *testing.T, rules any) []byte {
	t.Helper()
	raw, err := json.Marshal(rules)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// ruleOf returns the entry of rules for the country (the first).
func ruleOf(t *testing.T, rules []map[string]any, country string) map[string]any {
	t.Helper()
	for _, r := range rules {
		if r["country_code"] == country {
			return r
		}
	}
	t.Fatalf("no rules for %s", country)
	return nil
}

// fieldOf returns the descriptor of tag in the entry's mandatory or optional fields.
func fieldOf(t *testing.T, rule map[string]any, tag string) map[string]any {
	t.Helper()
	for _, list := range []string{"mandatory_fields", "optional_fields"} {
		for _, f := range rule[list].([]any) {
			if d := f.(map[string]any); d["tag"] == tag {
				return d
			}
		}
	}
	t.Fatalf("%s has no field %s", rule["country_code"], tag)
	return nil
}

// deepCopy copies a decoded JSON value.
func deepCopy[T any](t *testing.T, v T) T {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out T
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

// allRules reads the rules in force for every shipped pair, as one comparable text.
func allRules(t *testing.T, svc *payments.Service) string {
	t.Helper()
	var out []string
	for _, p := range shippedPairs {
		r, err := svc.GetPayeeRules(context.Background(), p.country, p.currency)
		if err != nil {
			out = append(out, p.country+": "+string(payments.ErrorCode(err)))
			continue
		}
		out = append(out, canonicalJSON(t, r))
	}
	return strings.Join(out, "\n")
}
