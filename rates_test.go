package payments_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/platform-payments/payments"
)

// Exchange rates (CONTRACT.md sections 3-5, issue 4): an append-only history, read as
// the latest rate per base currency whose apply_time has come, with the digits as given.

// ratesText writes rates as "BASE=RATE@APPLY_TIME(fixed)" items, for comparison.
func ratesText(t *testing.T, rates []payments.ExchangeRate) string {
	t.Helper()
	var out []string
	for _, r := range rates {
		raw, _ := json.Marshal(r.ExchangeRate)
		item := r.BaseCurrency + "=" + string(raw) + "@" + r.ApplyTime
		if r.Fixed == 1 {
			item += "(fixed)"
		}
		out = append(out, item)
	}
	return strings.Join(out, " ")
}

func mustRate(t *testing.T, svc *payments.Service, base, payout, rate, at string) payments.ExchangeRate {
	t.Helper()
	r, err := svc.SetExchangeRate(context.Background(), payments.NewExchangeRate{
		BaseCurrency: base, PayoutCurrency: payout, ExchangeRate: rate, ApplyTime: at})
	if err != nil {
		t.Fatalf("SetExchangeRate %s/%s %s at %s: %v", base, payout, rate, at, err)
	}
	return r
}

func mustRates(t *testing.T, svc *payments.Service, payout string) string {
	t.Helper()
	rates, err := svc.ExchangeRates(context.Background(), payout)
	if err != nil {
		t.Fatalf("ExchangeRates %s: %v", payout, err)
	}
	return ratesText(t, rates)
}

func TestExchangeRates_History(t *testing.T) {
	now, setNow := fixedClock(time.Date(2026, 1, 3, 12, 0, 0, 0, time.UTC))
	svc := mustOpen(t, payments.Options{Now: now})

	// Two entries of a pair: the later apply_time wins, whatever the order recorded.
	mustRate(t, svc, "USD", "INR", "83.25", "2026-01-02T00:00:00")
	mustRate(t, svc, "USD", "INR", "83.10", "2026-01-01T00:00:00")
	if got := mustRates(t, svc, "INR"); got != "USD=83.25@2026-01-02T00:00:00" {
		t.Errorf("rates %s", got)
	}

	// A future-dated entry is recorded but not in force until its time.
	mustRate(t, svc, "USD", "INR", "84.00", "2026-01-05T00:00:00")
	if got := mustRates(t, svc, "INR"); got != "USD=83.25@2026-01-02T00:00:00" {
		t.Errorf("before its time: rates %s", got)
	}
	setNow(time.Date(2026, 1, 4, 23, 59, 59, 999999999, time.UTC))
	if got := mustRates(t, svc, "INR"); got != "USD=83.25@2026-01-02T00:00:00" {
		t.Errorf("a moment before its time: rates %s", got)
	}
	setNow(time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC))
	if got := mustRates(t, svc, "INR"); got != "USD=84.00@2026-01-05T00:00:00" {
		t.Errorf("at its time: rates %s", got)
	}
	// In another zone, the same instant.
	setNow(time.Date(2026, 1, 5, 5, 30, 0, 0, time.FixedZone("IST", 5*3600+1800)))
	if got := mustRates(t, svc, "INR"); got != "USD=84.00@2026-01-05T00:00:00" {
		t.Errorf("same instant in IST: rates %s", got)
	}
	setNow(time.Date(2026, 1, 5, 5, 29, 59, 0, time.FixedZone("IST", 5*3600+1800)))
	if got := mustRates(t, svc, "INR"); got != "USD=83.25@2026-01-02T00:00:00" {
		t.Errorf("a second before, in IST: rates %s", got)
	}

	// A base currency whose only entry is in the future is not listed at all.
	mustRate(t, svc, "EUR", "INR", "90.00", "2030-01-01T00:00:00")
	setNow(time.Date(2026, 1, 6, 0, 0, 0, 0, time.UTC))
	if got := mustRates(t, svc, "INR"); got != "USD=84.00@2026-01-05T00:00:00" {
		t.Errorf("rates %s", got)
	}

	// Without -at, a rate applies from now (to the second, without offset).
	setNow(time.Date(2026, 1, 6, 10, 11, 12, 999000000, time.FixedZone("EST", -5*3600)))
	r := mustRate(t, svc, "USD", "INR", "84.10", "")
	if r.ApplyTime != "2026-01-06T15:11:12" {
		t.Errorf("apply_time = %q, want now in UTC without offset", r.ApplyTime)
	}
	if got := mustRates(t, svc, "INR"); got != "USD=84.10@2026-01-06T15:11:12" {
		t.Errorf("rates %s", got)
	}
}

func TestExchangeRates_TiesAndOrder(t *testing.T) {
	now, _ := fixedClock(time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC))
	path := newDSN(t)
	svc := mustOpenFile(t, path, payments.Options{Now: now})

	// Of two with the same apply_time, the later recorded wins.
	first := mustRate(t, svc, "GBP", "PKR", "350.10", "2026-05-01T00:00:00")
	second := mustRate(t, svc, "GBP", "PKR", "350.20", "2026-05-01T00:00:00")
	if second.ID <= first.ID {
		t.Errorf("ids %d then %d: not increasing", first.ID, second.ID)
	}
	if got := mustRates(t, svc, "PKR"); got != "GBP=350.20@2026-05-01T00:00:00" {
		t.Errorf("tie: rates %s", got)
	}
	third := mustRate(t, svc, "GBP", "PKR", "349.99", "2026-05-01T00:00:00")
	rates, err := svc.ExchangeRates(context.Background(), "PKR")
	if err != nil {
		t.Fatal(err)
	}
	if len(rates) != 1 || rates[0].ID != third.ID {
		t.Errorf("rates %+v, want the last recorded (id %d)", rates, third.ID)
	}

	// Sorted by base currency, whatever the order recorded; other payout currencies are
	// not mixed in; each entry is the one in force.
	for _, r := range []struct{ base, payout, rate, at string }{
		{"USD", "PKR", "278.50", "2026-05-02T00:00:00"},
		{"AED", "PKR", "75.80", "2026-05-03T00:00:00"},
		{"EUR", "PKR", "301.00", "2026-04-01T00:00:00"},
		{"CAD", "PKR", "204.00", "2026-05-04T00:00:00"},
		{"USD", "INR", "83.00", "2026-05-01T00:00:00"},
		{"PKR", "USD", "0.0036", "2026-05-01T00:00:00"},
		{"AED", "PKR", "75.90", "2026-07-01T00:00:00"}, // future
	} {
		mustRate(t, svc, r.base, r.payout, r.rate, r.at)
	}
	want := "AED=75.80@2026-05-03T00:00:00 CAD=204.00@2026-05-04T00:00:00 EUR=301.00@2026-04-01T00:00:00 " +
		"GBP=349.99@2026-05-01T00:00:00 USD=278.50@2026-05-02T00:00:00"
	if got := mustRates(t, svc, "PKR"); got != want {
		t.Errorf("rates\n %s\nwant\n %s", got, want)
	}

	// The history is kept: nothing is replaced.
	if n := queryInt(t, rawDB(t, path), `SELECT count(*) FROM exchange_rates`); n != 10 {
		t.Errorf("%d rows, want all 10 entries", n)
	}
}

func TestExchangeRates_ExactDigits(t *testing.T) {
	ctx := context.Background()
	now, _ := fixedClock(time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC))
	svc := mustOpen(t, payments.Options{Now: now})

	digits := []string{
		"0.5600",
		"83.120000000000",
		"1",
		"10.0",
		"0.000000000001",
		"123456789012.123456789012", // the most digits accepted on each side
		"999999999999",
		"0.100000000000",
	}
	bases := []string{"AED", "CAD", "CHF", "EUR", "GBP", "JPY", "SGD", "USD"}
	for i, d := range digits {
		r, err := svc.SetExchangeRate(ctx, payments.NewExchangeRate{BaseCurrency: bases[i], PayoutCurrency: "MXN",
			ExchangeRate: d, ApplyTime: "2026-05-01T00:00:00", Fixed: i%2 == 0})
		if err != nil {
			t.Fatalf("%s: %v", d, err)
		}
		raw, _ := json.Marshal(r)
		wantFixed := map[bool]string{true: "1", false: "0"}[i%2 == 0]
		want := `{"id":` + jsonInt(r.ID) + `,"payout_currency":"MXN","base_currency":"` + bases[i] +
			`","exchange_rate":` + d + `,"apply_time":"2026-05-01T00:00:00","fixed":` + wantFixed + `}`
		if string(raw) != want {
			t.Errorf("SetExchangeRate record\n %s\nwant\n %s", raw, want)
		}
	}

	rates, err := svc.ExchangeRates(ctx, "MXN")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(rates)
	for i, d := range digits {
		if !strings.Contains(string(raw), `"base_currency":"`+bases[i]+`","exchange_rate":`+d+`,`) {
			t.Errorf("%s: the rate is not written as %s in %s", bases[i], d, raw)
		}
	}
	for i, r := range rates {
		if wantFixed := map[bool]int{true: 1, false: 0}[i%2 == 0]; r.Fixed != wantFixed {
			t.Errorf("%s fixed = %d, want %d", r.BaseCurrency, r.Fixed, wantFixed)
		}
	}
	var records []map[string]json.RawMessage
	json.Unmarshal(raw, &records)
	for _, rec := range records {
		wantKeys(t, "rate", mustJSON(t, rec), "apply_time", "base_currency", "exchange_rate", "fixed", "id", "payout_currency")
	}
}

func jsonInt(n int64) string {
	raw, _ := json.Marshal(n)
	return string(raw)
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func TestExchangeRates_Empty(t *testing.T) {
	svc := mustOpen(t)
	mustRate(t, svc, "USD", "INR", "83.00", "2020-01-01T00:00:00")
	for _, c := range []string{"JPY", "USD", "XAU"} {
		rates, err := svc.ExchangeRates(context.Background(), c)
		if err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		if raw, _ := json.Marshal(rates); string(raw) != "[]" {
			t.Errorf("%s: %s, want []", c, raw)
		}
	}
}

func TestExchangeRates_Invalid(t *testing.T) {
	svc := mustOpen(t)
	for _, tc := range []struct {
		in   string
		want payments.FieldError
	}{
		{"inr", patternMismatch("^[A-Z]{3}$", "inr", "query", "payout_currency")},
		{"ABC", ruleValueError("'ABC' is not an active ISO 4217 currency code", "ABC", "query", "payout_currency")},
		{"VEF", ruleValueError("'VEF' is not an active ISO 4217 currency code", "VEF", "query", "payout_currency")},
		{"", tooShort(1, "", "query", "payout_currency")},
		{"INRR", tooLong(3, "INRR", "query", "payout_currency")},
		{"IN1", patternMismatch("^[A-Z]{3}$", "IN1", "query", "payout_currency")},
	} {
		t.Run(tc.in, func(t *testing.T) {
			_, err := svc.ExchangeRates(context.Background(), tc.in)
			assertFields(t, err, fieldErrors{tc.want})
		})
	}
}

func TestSetExchangeRate_Invalid(t *testing.T) {
	path := newDSN(t)
	svc := mustOpenFile(t, path)
	const ratePattern = `^(0|[1-9][0-9]{0,11})(\.[0-9]{1,12})?$`
	const timePattern = `^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}$`
	ok := payments.NewExchangeRate{BaseCurrency: "USD", PayoutCurrency: "INR", ExchangeRate: "83.12"}
	with := func(f func(r *payments.NewExchangeRate)) payments.NewExchangeRate {
		r := ok
		f(&r)
		return r
	}
	rate := func(s string) payments.NewExchangeRate {
		return with(func(r *payments.NewExchangeRate) { r.ExchangeRate = s })
	}
	at := func(s string) payments.NewExchangeRate {
		return with(func(r *payments.NewExchangeRate) { r.ApplyTime = s })
	}
	tests := []struct {
		name string
		in   payments.NewExchangeRate
		want fieldErrors
	}{
		{"RateZero", rate("0"), fieldErrors{ruleValueError("must be greater than zero", "0", "body", "exchange_rate")}},
		{"RateZeroDecimals", rate("0.000"), fieldErrors{ruleValueError("must be greater than zero", "0.000", "body", "exchange_rate")}},
		{"RateNegative", rate("-83.12"), fieldErrors{patternMismatch(ratePattern, "-83.12", "body", "exchange_rate")}},
		{"RateTooManyDecimals", rate("1.1234567890123"), fieldErrors{patternMismatch(ratePattern, "1.1234567890123", "body", "exchange_rate")}},
		{"RateTooManyIntegerDigits", rate("1234567890123"), fieldErrors{patternMismatch(ratePattern, "1234567890123", "body", "exchange_rate")}},
		{"RateTooLong", rate("1234567890123.1234567890123"), fieldErrors{tooLong(25, "1234567890123.1234567890123", "body", "exchange_rate")}},
		{"RateExponent", rate("8.3e1"), fieldErrors{patternMismatch(ratePattern, "8.3e1", "body", "exchange_rate")}},
		{"RateLeadingZero", rate("083.12"), fieldErrors{patternMismatch(ratePattern, "083.12", "body", "exchange_rate")}},
		{"RateTrailingPoint", rate("83."), fieldErrors{patternMismatch(ratePattern, "83.", "body", "exchange_rate")}},
		{"RateComma", rate("83,12"), fieldErrors{patternMismatch(ratePattern, "83,12", "body", "exchange_rate")}},
		{"RateWords", rate("abc"), fieldErrors{patternMismatch(ratePattern, "abc", "body", "exchange_rate")}},
		{"RateEmpty", rate(""), fieldErrors{tooShort(1, "", "body", "exchange_rate")}},
		{"AtNotADate", at("2026-02-30T00:00:00"), fieldErrors{ruleValueError("not a valid date and time", "2026-02-30T00:00:00", "body", "apply_time")}},
		{"AtHour24", at("2026-01-02T24:00:00"), fieldErrors{ruleValueError("not a valid date and time", "2026-01-02T24:00:00", "body", "apply_time")}},
		{"AtSpace", at("2026-01-02 15:04:05"), fieldErrors{patternMismatch(timePattern, "2026-01-02 15:04:05", "body", "apply_time")}},
		{"AtDateOnly", at("2026-01-02"), fieldErrors{patternMismatch(timePattern, "2026-01-02", "body", "apply_time")}},
		{"AtWithOffset", at("2026-01-02T15:04:05Z"), fieldErrors{tooLong(19, "2026-01-02T15:04:05Z", "body", "apply_time")}},
		{"BaseLowerCase", with(func(r *payments.NewExchangeRate) { r.BaseCurrency = "usd" }), fieldErrors{patternMismatch("^[A-Z]{3}$", "usd", "body", "base_currency")}},
		{"BaseUnknown", with(func(r *payments.NewExchangeRate) { r.BaseCurrency = "ABC" }), fieldErrors{ruleValueError("'ABC' is not an active ISO 4217 currency code", "ABC", "body", "base_currency")}},
		{"PayoutMissing", with(func(r *payments.NewExchangeRate) { r.PayoutCurrency = "" }), fieldErrors{tooShort(1, "", "body", "payout_currency")}},
		{"Several", payments.NewExchangeRate{BaseCurrency: "US", PayoutCurrency: "inr", ExchangeRate: "0", ApplyTime: "yesterday"}, fieldErrors{
			patternMismatch("^[A-Z]{3}$", "US", "body", "base_currency"),
			patternMismatch("^[A-Z]{3}$", "inr", "body", "payout_currency"),
			ruleValueError("must be greater than zero", "0", "body", "exchange_rate"),
			patternMismatch(timePattern, "yesterday", "body", "apply_time"),
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := svc.SetExchangeRate(context.Background(), tc.in)
			assertFields(t, err, tc.want)
		})
	}
	if n := queryInt(t, rawDB(t, path), `SELECT count(*) FROM exchange_rates`); n != 0 {
		t.Errorf("%d rates stored by refused calls", n)
	}
}
