package payments_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/platform-payments/payments"
)

// Loading payee rules from a file.

func TestLoadPayeeRules(t *testing.T) {
	ctx := context.Background()

	t.Run("OKReplaces", func(t *testing.T) {
		path := newDSN(t)
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

	t.Run("OKSourceAnyBytes", func(t *testing.T) {
		// A file name is bytes: what is not UTF-8 is stored as U+FFFD and a NUL is
		// dropped, the same on every engine (PostgreSQL refuses both in text).
		path := newDSN(t)
		svc := mustOpenFile(t, path)
		if _, err := svc.LoadPayeeRules(ctx, "r\xffules\x00.json", rulesFile(t, shippedRules(t))); err != nil {
			t.Fatal(err)
		}
		if got := queryString(t, rawDB(t, path), `SELECT source FROM payee_rule_sets ORDER BY id DESC LIMIT 1`); got != "r\uFFFDules.json" {
			t.Errorf("source %q, want %q", got, "r\uFFFDules.json")
		}
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
		path := newDSN(t)
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
	path := newDSN(t)
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
