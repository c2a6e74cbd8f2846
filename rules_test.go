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

func TestLoadPayeeRules(t *testing.T) {
	ctx := context.Background()

	t.Run("OKReplaces", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "payments.db")
		svc := mustOpenFile(t, path)
		w := newCBWorldOn(t, svc, path)

		// A 12-digit Indian account is fine under the shipped rules.
		if _, err := svc.AddPayeeBank(ctx, w.platformID, w.userID, cbBank(w.payeeID, "IN", "123456789012", "HDFC0001234")); err != nil {
			t.Fatal(err)
		}

		// The replacement: India only, accounts of at most 10 digits, and a second payout
		// currency (the same field rules, its own limits).
		in := ruleOf(t, shippedRules(t), "IN")
		fieldOf(t, in, "account_number")["length"] = 10
		usd := deepCopy(t, in)
		usd["account"] = map[string]any{"payout_currency": "USD", "min_payout_amount": json.Number("1.50"), "max_payout_amount": json.Number("12000.00")}
		usd["documents_allowed"] = map[string]any{"passport": true}
		n, err := svc.LoadPayeeRules(ctx, "india.json", rulesFile(t, []any{in, usd}))
		if err != nil || n != 2 {
			t.Fatalf("LoadPayeeRules = %d, %v; want 2 rules", n, err)
		}

		got, err := svc.GetPayeeRules(ctx, "IN", "USD")
		if err != nil {
			t.Fatal(err)
		}
		if raw, _ := json.Marshal(got.Account); string(raw) != `{"payout_currency":"USD","min_payout_amount":1.50,"max_payout_amount":12000.00}` {
			t.Errorf("IN/USD account = %s", raw)
		}
		if len(got.DocumentsAllowed) != 1 || !got.DocumentsAllowed["passport"] {
			t.Errorf("IN/USD documents_allowed = %v", got.DocumentsAllowed)
		}
		inr, err := svc.GetPayeeRules(ctx, "IN", "INR")
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range inr.MandatoryFields {
			if f.Tag == "account_number" && f.Length != 10 {
				t.Errorf("IN account_number length %d, want the new 10", f.Length)
			}
		}

		// The set replaced the old one as a whole: the other countries are gone.
		_, err = svc.GetPayeeRules(ctx, "GB", "GBP")
		errorOf(t, err, payments.CodeNotFound)
		_, err = svc.AddPayeeBank(ctx, w.platformID, w.userID, payments.NewPayeeBank{
			PayeeID: w.payeeID, AccountNumber: "GB29NWBK60161331926819", Country: "GB", BankAccType: "savings"})
		assertFields(t, err, fieldErrors{ruleValueError("there are no payee rules for GB", "GB", "body", "country")})

		// Add Payee Bank follows the new field rules at once.
		_, err = svc.AddPayeeBank(ctx, w.platformID, w.userID, cbBank(w.payeeID, "IN", "123456789012", "HDFC0001234"))
		assertFields(t, err, fieldErrors{ruleValueError("account_number must be at most 10 characters for IN", "123456789012", "body", "account_number")})
		if _, err := svc.AddPayeeBank(ctx, w.platformID, w.userID, cbBank(w.payeeID, "IN", "1234567890", "HDFC0001234")); err != nil {
			t.Errorf("a 10-digit account: %v", err)
		}

		// The old sets stay as history; the new one survives a reopen (the embedded
		// rules are loaded on first open only).
		db := rawDB(t, path)
		if n := queryInt(t, db, `SELECT count(*) FROM payee_rule_sets`); n != 2 {
			t.Errorf("%d rule sets, want 2", n)
		}
		svc.Close()
		again := mustOpenFile(t, path)
		if _, err := again.GetPayeeRules(ctx, "IN", "USD"); err != nil {
			t.Errorf("after reopening: %v", err)
		}
		_, err = again.GetPayeeRules(ctx, "PK", "PKR")
		errorOf(t, err, payments.CodeNotFound)
	})

	t.Run("OKRulesDriveAddPayeeBank", func(t *testing.T) {
		// A rule lives in the rules: what they make mandatory, how long they allow a
		// field to be, and which fields they list, Add Payee Bank enforces.
		w := newCBWorld(t)
		rules := shippedRules(t)
		gb := ruleOf(t, rules, "GB")
		nick := fieldOf(t, gb, "bank_nick_name")
		nick["length"] = 10
		var optional []any
		for _, f := range gb["optional_fields"].([]any) {
			if f.(map[string]any)["tag"] != "bank_nick_name" {
				optional = append(optional, f)
			}
		}
		gb["optional_fields"] = append(optional, map[string]any{"tag": "payout_bank_id", "label": "Sort code", "data_type": "numeric", "length": 6})
		gb["mandatory_fields"] = append(gb["mandatory_fields"].([]any), nick)
		if _, err := w.svc.LoadPayeeRules(ctx, "gb.json", rulesFile(t, rules)); err != nil {
			t.Fatal(err)
		}

		noNick := payments.NewPayeeBank{PayeeID: w.payeeID, AccountNumber: ibanGB, Country: "GB", BankAccType: "current"}
		_, err := w.svc.AddPayeeBank(ctx, w.platformID, w.userID, noNick)
		assertFields(t, err, fieldErrors{missing(object{"payee_id": w.payeeID, "account_number": ibanGB, "country": "GB", "bank_acc_type": "current"}, "body", "bank_nick_name")})

		longNick := noNick
		longNick.BankNickName = ptr("Westminster")
		_, err = w.svc.AddPayeeBank(ctx, w.platformID, w.userID, longNick)
		assertFields(t, err, fieldErrors{ruleValueError("bank_nick_name must be at most 10 characters for GB", "Westminster", "body", "bank_nick_name")})

		withSortCode := noNick
		withSortCode.BankNickName = ptr("NatWest")
		withSortCode.PayoutBankID = ptr("6016-3")
		_, err = w.svc.AddPayeeBank(ctx, w.platformID, w.userID, withSortCode)
		assertFields(t, err, fieldErrors{ruleValueError("payout_bank_id must contain digits only for GB", "6016-3", "body", "payout_bank_id")})

		withSortCode.PayoutBankID = ptr("601613")
		if _, err := w.svc.AddPayeeBank(ctx, w.platformID, w.userID, withSortCode); err != nil {
			t.Errorf("payout_bank_id listed for GB: %v", err)
		}
	})

	t.Run("OKRoundTrip", func(t *testing.T) {
		// What Get Payee Rules returns is a rules file.
		svc := mustOpen(t)
		var list []payments.PayeeRules
		for _, p := range shippedPairs {
			r, err := svc.GetPayeeRules(ctx, p.country, p.currency)
			if err != nil {
				t.Fatal(err)
			}
			list = append(list, r)
		}
		before := allRules(t, svc)
		n, err := svc.LoadPayeeRules(ctx, "round-trip.json", rulesFile(t, list))
		if err != nil || n != len(shippedPairs) {
			t.Fatalf("LoadPayeeRules = %d, %v", n, err)
		}
		if after := allRules(t, svc); after != before {
			t.Errorf("rules changed by reloading themselves:\n%s\nwant\n%s", after, before)
		}
	})

	t.Run("OKSeenByAnotherService", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "payments.db")
		first := mustOpenFile(t, path)
		w := newCBWorldOn(t, first, path)
		// The first service compiles and caches India's rules.
		if _, err := first.AddPayeeBank(ctx, w.platformID, w.userID, cbBank(w.payeeID, "IN", "123456789012", "HDFC0001234")); err != nil {
			t.Fatal(err)
		}
		if _, err := first.GetPayeeRules(ctx, "IN", "INR"); err != nil {
			t.Fatal(err)
		}

		second := mustOpenFile(t, path)
		rules := shippedRules(t)
		fieldOf(t, ruleOf(t, rules, "IN"), "account_number")["length"] = 10
		ruleOf(t, rules, "IN")["country_name"] = "Republic of India"
		if _, err := second.LoadPayeeRules(ctx, "second.json", rulesFile(t, rules)); err != nil {
			t.Fatal(err)
		}

		r, err := first.GetPayeeRules(ctx, "IN", "INR")
		if err != nil {
			t.Fatal(err)
		}
		if r.CountryName != "Republic of India" {
			t.Errorf("first service still reads country_name %q", r.CountryName)
		}
		_, err = first.AddPayeeBank(ctx, w.platformID, w.userID, cbBank(w.payeeID, "IN", "123456789012", "HDFC0001234"))
		assertFields(t, err, fieldErrors{ruleValueError("account_number must be at most 10 characters for IN", "123456789012", "body", "account_number")})
	})

	// Every class of malformed file is refused as a whole, with one message, and the
	// rules in force stay as they were.
	type edit func(t *testing.T, rules []map[string]any) any
	same := func(f func(t *testing.T, rules []map[string]any)) edit {
		return func(t *testing.T, rules []map[string]any) any { f(t, rules); return rules }
	}
	refused := []struct {
		name string
		raw  string // the file, or "" for edit applied to the shipped rules
		edit edit
		want string // in the message
	}{
		{name: "NotJSON", raw: `[{"country_code": "IN",`, want: "not JSON"},
		{name: "TrailingGarbage", raw: `[] []`, want: "not JSON"},
		{name: "EmptyFile", raw: ` `, want: "not JSON"},
		{name: "EmptyArray", raw: `[]`, want: "at least 1 item"},
		{name: "NotAnArray", edit: func(t *testing.T, rules []map[string]any) any { return rules[0] }, want: "valid list"},
		{name: "MissingKey", edit: same(func(t *testing.T, rules []map[string]any) {
			delete(ruleOf(t, rules, "PK"), "documents_allowed")
		}), want: "documents_allowed"},
		{name: "MissingDescriptorKey", edit: same(func(t *testing.T, rules []map[string]any) {
			delete(fieldOf(t, ruleOf(t, rules, "MX"), "city"), "label")
		}), want: "label"},
		{name: "UnknownKey", edit: same(func(t *testing.T, rules []map[string]any) {
			ruleOf(t, rules, "NG")["currency"] = "NGN"
		}), want: "currency"},
		{name: "UnknownTag", edit: same(func(t *testing.T, rules []map[string]any) {
			r := ruleOf(t, rules, "GB")
			r["optional_fields"] = append(r["optional_fields"].([]any), map[string]any{"tag": "sort_code", "label": "Sort code", "data_type": "numeric", "length": 6})
		}), want: `"sort_code"`},
		{name: "TagTwice", edit: same(func(t *testing.T, rules []map[string]any) {
			r := ruleOf(t, rules, "PH")
			r["optional_fields"] = append(r["optional_fields"].([]any), deepCopy(t, fieldOf(t, r, "city")))
		}), want: `"city" is listed twice`},
		{name: "LengthAboveRequestLimit", edit: same(func(t *testing.T, rules []map[string]any) {
			fieldOf(t, ruleOf(t, rules, "BD"), "bank_nick_name")["length"] = 101
		}), want: "exceeds the request's limit of 100"},
		{name: "AccountLengthAboveRequestLimit", edit: same(func(t *testing.T, rules []map[string]any) {
			fieldOf(t, ruleOf(t, rules, "IN"), "account_number")["length"] = 65
		}), want: "exceeds the request's limit of 64"},
		{name: "LengthZero", edit: same(func(t *testing.T, rules []map[string]any) {
			fieldOf(t, ruleOf(t, rules, "IN"), "city")["length"] = 0
		}), want: "length"},
		{name: "UnknownDataType", edit: same(func(t *testing.T, rules []map[string]any) {
			fieldOf(t, ruleOf(t, rules, "IN"), "city")["data_type"] = "text"
		}), want: "data_type"},
		{name: "IBANOnZipcode", edit: same(func(t *testing.T, rules []map[string]any) {
			fieldOf(t, ruleOf(t, rules, "GB"), "zipcode")["data_type"] = "iban"
		}), want: `data_type "iban" applies to account_number only`},
		{name: "IFSCOnAccountNumber", edit: same(func(t *testing.T, rules []map[string]any) {
			fieldOf(t, ruleOf(t, rules, "IN"), "account_number")["data_type"] = "ifsc"
		}), want: `data_type "ifsc" applies to identifier_value only`},
		{name: "AccountNumberOptional", edit: same(func(t *testing.T, rules []map[string]any) {
			r := ruleOf(t, rules, "NG")
			acct := fieldOf(t, r, "account_number")
			var kept []any
			for _, f := range r["mandatory_fields"].([]any) {
				if f.(map[string]any)["tag"] != "account_number" {
					kept = append(kept, f)
				}
			}
			r["mandatory_fields"] = kept
			r["optional_fields"] = append(r["optional_fields"].([]any), acct)
		}), want: "account_number must be a mandatory field"},
		{name: "BankAccTypeMissing", edit: same(func(t *testing.T, rules []map[string]any) {
			r := ruleOf(t, rules, "AE")
			var kept []any
			for _, f := range r["mandatory_fields"].([]any) {
				if f.(map[string]any)["tag"] != "bank_acc_type" {
					kept = append(kept, f)
				}
			}
			r["mandatory_fields"] = kept
		}), want: "bank_acc_type must be a mandatory field"},
		{name: "MinAboveMax", edit: same(func(t *testing.T, rules []map[string]any) {
			ruleOf(t, rules, "MX")["account"].(map[string]any)["min_payout_amount"] = json.Number("900000.01")
		}), want: "min_payout_amount is above max_payout_amount"},
		{name: "NegativeMin", edit: same(func(t *testing.T, rules []map[string]any) {
			ruleOf(t, rules, "MX")["account"].(map[string]any)["min_payout_amount"] = json.Number("-1")
		}), want: "min_payout_amount"},
		{name: "AmountNotANumber", edit: same(func(t *testing.T, rules []map[string]any) {
			ruleOf(t, rules, "MX")["account"].(map[string]any)["max_payout_amount"] = "900000"
		}), want: "max_payout_amount"},
		{name: "UnknownCurrency", edit: same(func(t *testing.T, rules []map[string]any) {
			ruleOf(t, rules, "MX")["account"].(map[string]any)["payout_currency"] = "ABC"
		}), want: "ISO 4217"},
		{name: "UnknownCountry", edit: same(func(t *testing.T, rules []map[string]any) {
			ruleOf(t, rules, "MX")["country_code"] = "XX"
		}), want: "ISO 3166-1"},
		{name: "DocumentNotBoolean", edit: same(func(t *testing.T, rules []map[string]any) {
			ruleOf(t, rules, "IN")["documents_allowed"].(map[string]any)["passport"] = "yes"
		}), want: "documents_allowed"},
		{name: "CountryRulesDiffer", edit: func(t *testing.T, rules []map[string]any) any {
			usd := deepCopy(t, ruleOf(t, rules, "IN"))
			usd["account"].(map[string]any)["payout_currency"] = "USD"
			fieldOf(t, usd, "zipcode")["length"] = 10
			return append(rules, usd)
		}, want: "field rules differ"},
		{name: "DuplicatePair", edit: func(t *testing.T, rules []map[string]any) any {
			return append(rules, deepCopy(t, ruleOf(t, rules, "BD")))
		}, want: "a second entry for the same country and currency"},
	}
	svc := mustOpen(t)
	path := filepath.Join(t.TempDir(), "payments.db")
	svcFile := mustOpenFile(t, path)
	db := rawDB(t, path)
	before := allRules(t, svc)
	for _, tc := range refused {
		t.Run("ErrRefused/"+tc.name, func(t *testing.T) {
			raw := []byte(tc.raw)
			if tc.edit != nil {
				raw = rulesFile(t, tc.edit(t, shippedRules(t)))
			}
			for _, s := range []*payments.Service{svc, svcFile} {
				n, err := s.LoadPayeeRules(ctx, tc.name+".json", raw)
				e := errorOf(t, err, payments.CodeInvalid)
				if n != 0 {
					t.Errorf("n = %d, want 0", n)
				}
				if !strings.HasPrefix(e.Message, "Payee rules refused: ") || !strings.Contains(e.Message, tc.want) || strings.Contains(e.Message, "\n") {
					t.Errorf("message %q, want one line saying %q", e.Message, tc.want)
				}
				if len(e.Fields) != 0 {
					t.Errorf("fields %v: a faulty file is one message", e.Fields)
				}
			}
			if after := allRules(t, svc); after != before {
				t.Errorf("rules changed by a refused file:\n%s", after)
			}
			if n := queryInt(t, db, `SELECT count(*) FROM payee_rule_sets`); n != 1 {
				t.Errorf("%d rule sets, want the first one only", n)
			}
		})
	}
}
