package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	_ "modernc.org/sqlite" // to look at what was stored

	"github.com/platform-payments/payments"
)

// paymentsd address add, rates set and rules load: the reference data and records the
// HTTP API reads but does not create (CONTRACT.md section 6).

// printedAddress is every field address add may print; decodeLine refuses any other.
type printedAddress struct {
	ID           uuid.UUID  `json:"id"`
	UserID       uuid.UUID  `json:"user_id"`
	Name         string     `json:"name"`
	LastName     *string    `json:"last_name"`
	AddressLine1 string     `json:"address_line_1"`
	City         string     `json:"city"`
	State        string     `json:"state"`
	Zipcode      string     `json:"zipcode"`
	Country      string     `json:"country"`
	CreatedAt    time.Time  `json:"created_at"`
	UpdatedAt    *time.Time `json:"updated_at"`
}

// recordsSQL opens the database file directly, to see what was stored.
func recordsSQL(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func recordsCount(t *testing.T, db *sql.DB, table string) int {
	t.Helper()
	var n int
	if err := db.QueryRow("SELECT count(*) FROM " + table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// wantExit checks a run's exit status, that stdout is empty, and that stderr is one line
// containing each of want.
func wantExit(t *testing.T, r result, code int, want ...string) {
	t.Helper()
	if r.code != code {
		t.Errorf("exit status %d, want %d (stderr %q)", r.code, code, r.stderr)
	}
	if r.stdout != "" {
		t.Errorf("stdout = %q, want nothing", r.stdout)
	}
	for _, w := range want {
		wantOneLine(t, "stderr", r.stderr, w)
	}
}

const fullAddressJSON = `{"name": "Ravi", "last_name": "Kumar", "address_line_1": "12 MG Road",
  "address_line_2": "Flat 4B", "company_name": "Kumar Traders", "city": "Bengaluru",
  "state": "Karnataka", "zipcode": "560001", "country": "IN", "address_type": "business",
  "is_default": true}`

func TestAddressAdd(t *testing.T) {
	ctx := context.Background()
	path := tempDB(t)
	svc := openDB(t, path, "")
	creds, user := newUser(t, svc)
	caller := payments.Caller{UserID: user.UserID, PlatformID: creds.PlatformID}
	payee, err := svc.CreatePayee(ctx, caller, payments.NewPayee{Name: "Ravi Kumar"})
	if err != nil {
		t.Fatal(err)
	}
	db := recordsSQL(t, path)
	userID, payeeID := user.UserID.String(), payee.PayeeID.String()
	args := func(extra ...string) []string {
		return append([]string{"address", "add", "-db", path, "-user", userID, "-payee", payeeID}, extra...)
	}

	t.Run("OK", func(t *testing.T) {
		r := runT(t, fullAddressJSON, args()...)
		if r.code != 0 || r.stderr != "" {
			t.Fatalf("exit status %d, stderr %q", r.code, r.stderr)
		}
		// The record the API shows, and nothing else.
		var a printedAddress
		decodeLine(t, r.stdout, &a)
		for _, hidden := range []string{"address_line_2", "company_name", "is_default", "address_type", "contact_id"} {
			if strings.Contains(r.stdout, hidden) {
				t.Errorf("stdout shows %s: %s", hidden, r.stdout)
			}
		}
		if a.UserID != payee.PayeeID || a.Name != "Ravi" || a.LastName == nil || *a.LastName != "Kumar" ||
			a.AddressLine1 != "12 MG Road" || a.City != "Bengaluru" || a.State != "Karnataka" ||
			a.Zipcode != "560001" || a.Country != "IN" || a.UpdatedAt != nil || a.CreatedAt.IsZero() {
			t.Errorf("printed %+v", a)
		}

		// Every field is stored, including those never shown.
		var line2, company, addressType, contactID, storedUser string
		var isDefault int
		if err := db.QueryRow(`SELECT address_line_2, company_name, address_type, is_default, contact_id, user_id
			FROM payee_addresses WHERE id = ?`, a.ID.String()).Scan(&line2, &company, &addressType, &isDefault, &contactID, &storedUser); err != nil {
			t.Fatal(err)
		}
		if line2 != "Flat 4B" || company != "Kumar Traders" || addressType != "business" || isDefault != 1 || contactID == "" || storedUser != userID {
			t.Errorf("stored %q %q %q %d %q %q", line2, company, addressType, isDefault, contactID, storedUser)
		}

		// The platform reads the same record.
		got, err := svc.GetPayeeAddress(ctx, creds.PlatformID, userID, a.ID.String())
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := json.Marshal(got)
		if strings.TrimSpace(r.stdout) != string(raw) {
			t.Errorf("printed %s, Get Payee Address %s", r.stdout, raw)
		}
	})

	t.Run("OKMinimalUpperCaseIDs", func(t *testing.T) {
		in := `{"name":"Ravi","address_line_1":"1 Main St","city":"Pune","state":"MH","zipcode":"411001","country":"IN"}`
		r := runT(t, in, "address", "add", "-db", path, "-user", strings.ToUpper(userID), "-payee", strings.ToUpper(payeeID))
		if r.code != 0 || r.stderr != "" {
			t.Fatalf("exit status %d, stderr %q", r.code, r.stderr)
		}
		var a printedAddress
		decodeLine(t, r.stdout, &a)
		if a.UserID != payee.PayeeID || a.LastName != nil || !strings.Contains(r.stdout, `"last_name":null`) {
			t.Errorf("printed %s", r.stdout)
		}
	})

	t.Run("OKNullMeansAbsent", func(t *testing.T) {
		// The address record shows last_name as "string or null": null is accepted on
		// every optional field, stored as if the field were left out.
		in := `{"name":"Ravi","last_name":null,"address_line_1":"1 Main St","address_line_2":null,"company_name":null,
			"city":"Pune","state":"MH","zipcode":"411001","country":"IN","address_type":null,"is_default":null}`
		r := runT(t, in, args()...)
		if r.code != 0 || r.stderr != "" {
			t.Fatalf("exit status %d, stderr %q", r.code, r.stderr)
		}
		var a printedAddress
		decodeLine(t, r.stdout, &a)
		if a.LastName != nil || !strings.Contains(r.stdout, `"last_name":null`) {
			t.Errorf("printed %s", r.stdout)
		}
		var n int
		if err := db.QueryRow(`SELECT count(*) FROM payee_addresses WHERE id = ? AND is_default = 0
			AND coalesce(last_name, address_line_2, company_name, address_type) IS NULL`, a.ID.String()).Scan(&n); err != nil || n != 1 {
			t.Errorf("the nulls were not stored as fields left out (%d, %v)", n, err)
		}
	})

	failures := []struct {
		name  string
		stdin string
		args  []string
		want  []string
	}{
		{"RequiredNull", strings.Replace(fullAddressJSON, `"Bengaluru"`, `null`, 1), nil,
			[]string{"body.city: Input should be a valid string"}},
		{"UnknownField", `{"name":"Ravi","address_line_1":"a","city":"c","state":"s","zipcode":"1","country":"IN","nickname":"R"}`, nil,
			[]string{"paymentsd address add: ", "body.nickname: Extra inputs are not permitted"}},
		{"ContactIDGiven", strings.Replace(fullAddressJSON, "{", `{"contact_id": "x",`, 1), nil,
			[]string{"body.contact_id: Extra inputs are not permitted"}},
		{"MissingField", `{"name":"Ravi","address_line_1":"a","city":"c","state":"s","country":"IN"}`, nil,
			[]string{"body.zipcode: Field required"}},
		{"BadCountry", strings.Replace(fullAddressJSON, `"IN"`, `"XX"`, 1), nil,
			[]string{"body.country: Value error, 'XX' is not an ISO 3166-1 alpha-2 country code"}},
		{"BadAddressType", strings.Replace(fullAddressJSON, `"business"`, `"home"`, 1), nil,
			[]string{"body.address_type: Input should be 'residential', 'business' or 'mailing'"}},
		{"IsDefaultString", strings.Replace(fullAddressJSON, `true`, `"yes"`, 1), nil,
			[]string{"body.is_default: Input should be a valid boolean"}},
		{"NotJSON", `{"name": "Ravi",`, nil, []string{"body", "JSON decode error"}},
		{"NotAnObject", `["Ravi"]`, nil, []string{"body: Input should be a valid dictionary"}},
		{"EmptyStdin", ``, nil, []string{"body: Field required"}},
		{"OtherUsersPayee", fullAddressJSON, []string{"address", "add", "-db", path, "-user", uuid.NewString(), "-payee", payeeID},
			[]string{"Payee not found."}},
		{"UnknownPayee", fullAddressJSON, []string{"address", "add", "-db", path, "-user", userID, "-payee", uuid.NewString()},
			[]string{"Payee not found."}},
	}
	for _, tc := range failures {
		t.Run("Err/"+tc.name, func(t *testing.T) {
			before := recordsCount(t, db, "payee_addresses")
			a := tc.args
			if a == nil {
				a = args()
			}
			wantExit(t, runT(t, tc.stdin, a...), 1, tc.want...)
			if n := recordsCount(t, db, "payee_addresses"); n != before {
				t.Errorf("%d addresses stored by a failed run", n-before)
			}
		})
	}

	// Bad flags or arguments: exit status 2, and the database is not touched.
	usage := []struct {
		name string
		args []string
		want string
	}{
		{"NoUser", []string{"-payee", payeeID}, "paymentsd address add: -user and -payee are required (see 'paymentsd address add -h')"},
		{"NoPayee", []string{"-user", userID}, "-user and -payee are required"},
		{"NoFlags", nil, "-user and -payee are required"},
		{"EmptyUser", []string{"-user", "", "-payee", payeeID}, "-user and -payee are required"},
		{"UnknownFlag", []string{"-user", userID, "-payee", payeeID, "-country", "IN"}, "flag provided but not defined: -country"},
		{"ExtraArgument", []string{"-user", userID, "-payee", payeeID, "address.json"}, `unexpected argument "address.json"`},
		// A malformed id is a bad flag, as it is for apikey create and card add.
		{"MalformedUser", []string{"-user", "42", "-payee", payeeID}, `"42"`},
		{"MalformedPayee", []string{"-user", userID, "-payee", "ravi"}, `"ravi"`},
	}
	for _, tc := range usage {
		t.Run("Usage/"+tc.name, func(t *testing.T) {
			wantUsage(t, fullAddressJSON, []string{"address", "add"}, tc.args, tc.want)
		})
	}
}

// wantUsage runs the command with -db naming a file that does not exist, then args, and
// checks that it fails as a usage error (exit status 2, one line saying want) without
// creating the database.
func wantUsage(t *testing.T, stdin string, command, args []string, want string) {
	t.Helper()
	fresh := filepath.Join(t.TempDir(), "untouched.db")
	wantExit(t, runT(t, stdin, append(append(command, "-db", fresh), args...)...), 2, want)
	if _, err := os.Stat(fresh); !os.IsNotExist(err) {
		t.Errorf("a usage error touched the database: %v", err)
	}
}

func TestRatesSet(t *testing.T) {
	ctx := context.Background()
	path := tempDB(t)
	svc := openDB(t, path, "")
	db := recordsSQL(t, path)

	t.Run("OKExactDigits", func(t *testing.T) {
		r := runT(t, "", "rates", "set", "-db", path, "-base", "USD", "-payout", "INR", "-rate", "0.5600", "-fixed", "-at", "2026-01-02T15:04:05")
		want := `{"id":1,"payout_currency":"INR","base_currency":"USD","exchange_rate":0.5600,"apply_time":"2026-01-02T15:04:05","fixed":1}` + "\n"
		if r.code != 0 || r.stderr != "" || r.stdout != want {
			t.Fatalf("got %+v, want stdout %q", r, want)
		}
		rates, err := svc.ExchangeRates(ctx, "INR")
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := json.Marshal(rates)
		if string(raw) != "["+strings.TrimSpace(want)+"]" {
			t.Errorf("Get Exchange Rates = %s", raw)
		}
	})

	t.Run("OKDefaults", func(t *testing.T) {
		before := time.Now().UTC().Truncate(time.Second)
		r := runT(t, "", "rates", "set", "-db", path, "-base", "EUR", "-payout", "INR", "-rate", "90.123456789012")
		after := time.Now().UTC()
		if r.code != 0 || r.stderr != "" {
			t.Fatalf("got %+v", r)
		}
		var rec map[string]json.RawMessage
		decodeLine(t, r.stdout, &rec)
		if string(rec["exchange_rate"]) != "90.123456789012" || string(rec["fixed"]) != "0" || string(rec["base_currency"]) != `"EUR"` {
			t.Errorf("printed %s", r.stdout)
		}
		var at string
		json.Unmarshal(rec["apply_time"], &at)
		applied, err := time.Parse("2006-01-02T15:04:05", at)
		if err != nil || !regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$`).MatchString(at) || applied.Before(before) || applied.After(after) {
			t.Errorf("apply_time %q, want now (%v..%v) without offset", at, before, after)
		}
	})

	failures := []struct {
		name string
		args []string
		want string
	}{
		{"RateZero", []string{"-base", "USD", "-payout", "INR", "-rate", "0"}, "body.exchange_rate: Value error, must be greater than zero"},
		{"RateNegative", []string{"-base", "USD", "-payout", "INR", "-rate", "-83.12"}, "body.exchange_rate: String should match pattern"},
		{"RateTooManyDecimals", []string{"-base", "USD", "-payout", "INR", "-rate", "83.1234567890123"}, "body.exchange_rate: String should match pattern"},
		{"RateWords", []string{"-base", "USD", "-payout", "INR", "-rate", "lots"}, "body.exchange_rate"},
		{"RateExponent", []string{"-base", "USD", "-payout", "INR", "-rate", "8e1"}, "body.exchange_rate"},
		{"AtNotADate", []string{"-base", "USD", "-payout", "INR", "-rate", "83.12", "-at", "2026-02-30T00:00:00"}, "body.apply_time: Value error, not a valid date and time"},
		{"AtWithOffset", []string{"-base", "USD", "-payout", "INR", "-rate", "83.12", "-at", "2026-01-02T15:04:05+05:30"}, "body.apply_time"},
		{"AtDateOnly", []string{"-base", "USD", "-payout", "INR", "-rate", "83.12", "-at", "2026-01-02"}, "body.apply_time"},
		{"BaseLowerCase", []string{"-base", "usd", "-payout", "INR", "-rate", "83.12"}, "body.base_currency"},
		{"PayoutUnknown", []string{"-base", "USD", "-payout", "ABC", "-rate", "83.12"}, "body.payout_currency: Value error, 'ABC' is not an active ISO 4217 currency code"},
	}
	for _, tc := range failures {
		t.Run("Err/"+tc.name, func(t *testing.T) {
			before := recordsCount(t, db, "exchange_rates")
			r := runT(t, "", append([]string{"rates", "set", "-db", path}, tc.args...)...)
			wantExit(t, r, 1, "paymentsd rates set: ", tc.want)
			if n := recordsCount(t, db, "exchange_rates"); n != before {
				t.Errorf("%d rates stored by a failed run", n-before)
			}
		})
	}

	usage := []struct {
		name string
		args []string
		want string
	}{
		{"NoBase", []string{"-payout", "INR", "-rate", "83.12"}, "paymentsd rates set: -base, -payout and -rate are required (see 'paymentsd rates set -h')"},
		{"NoPayout", []string{"-base", "USD", "-rate", "83.12"}, "-base, -payout and -rate are required"},
		{"NoRate", []string{"-base", "USD", "-payout", "INR"}, "-base, -payout and -rate are required"},
		{"EmptyRate", []string{"-base", "USD", "-payout", "INR", "-rate", ""}, "-base, -payout and -rate are required"},
		{"NoFlags", nil, "-base, -payout and -rate are required"},
		{"RateWithoutValue", []string{"-base", "USD", "-payout", "INR", "-rate"}, "flag needs an argument: -rate"},
		{"FixedWithValue", []string{"-base", "USD", "-payout", "INR", "-rate", "1", "-fixed=maybe"}, "-fixed"},
		{"ExtraArgument", []string{"-base", "USD", "-payout", "INR", "-rate", "83.12", "now"}, `unexpected argument "now"`},
	}
	for _, tc := range usage {
		t.Run("Usage/"+tc.name, func(t *testing.T) {
			wantUsage(t, "", []string{"rates", "set"}, tc.args, tc.want)
		})
	}
}

// recordsRules reads the rules in force for the shipped pairs, as one comparable text.
func recordsRules(t *testing.T, svc *payments.Service) string {
	t.Helper()
	var out []string
	for _, pair := range [][2]string{{"IN", "INR"}, {"PK", "PKR"}, {"AE", "AED"}, {"PH", "PHP"}, {"MX", "MXN"}, {"GB", "GBP"}, {"NG", "NGN"}, {"BD", "BDT"}} {
		r, err := svc.GetPayeeRules(context.Background(), pair[0], pair[1])
		if err != nil {
			out = append(out, pair[0]+": "+err.Error())
			continue
		}
		raw, _ := json.Marshal(r)
		out = append(out, string(raw))
	}
	return strings.Join(out, "\n")
}

// shippedRulesFile returns the embedded rules file decoded, numbers as written.
func shippedRulesFile(t *testing.T) []map[string]any {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "data", "payee_rules.json"))
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	var rules []map[string]any
	if err := dec.Decode(&rules); err != nil {
		t.Fatal(err)
	}
	return rules
}

func writeRules(t *testing.T, name string, v any) string {
	t.Helper()
	var raw []byte
	if s, ok := v.(string); ok {
		raw = []byte(s)
	} else {
		var err error
		if raw, err = json.Marshal(v); err != nil {
			t.Fatal(err)
		}
	}
	file := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(file, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

func TestRulesLoad(t *testing.T) {
	ctx := context.Background()

	t.Run("OK", func(t *testing.T) {
		path := tempDB(t)
		svc := openDB(t, path, "")
		// India only, with a new country name and a 10-digit account number.
		var india map[string]any
		for _, r := range shippedRulesFile(t) {
			if r["country_code"] == "IN" {
				india = r
			}
		}
		india["country_name"] = "Republic of India"
		for _, f := range india["mandatory_fields"].([]any) {
			if d := f.(map[string]any); d["tag"] == "account_number" {
				d["length"] = 10
			}
		}
		file := writeRules(t, "india.json", []any{india})
		r := runT(t, "", "rules", "load", "-db", path, file)
		if r.code != 0 || r.stderr != "" {
			t.Fatalf("exit status %d, stderr %q", r.code, r.stderr)
		}
		var printed struct {
			Source string `json:"source"`
			Rules  int    `json:"rules_loaded"`
		}
		decodeLine(t, r.stdout, &printed)
		if printed.Source != file || printed.Rules != 1 {
			t.Errorf("printed %s", r.stdout)
		}

		// The running service sees the new rules on its next call.
		got, err := svc.GetPayeeRules(ctx, "IN", "INR")
		if err != nil {
			t.Fatal(err)
		}
		if got.CountryName != "Republic of India" {
			t.Errorf("country_name %q", got.CountryName)
		}
		if _, err := svc.GetPayeeRules(ctx, "GB", "GBP"); payments.ErrorCode(err) != payments.CodeNotFound {
			t.Errorf("GB/GBP after loading India only: %v, want not found", err)
		}
	})

	t.Run("OKNewDatabase", func(t *testing.T) {
		// On a database that does not exist yet, the file replaces the embedded rules.
		path := tempDB(t)
		file := writeRules(t, "all.json", shippedRulesFile(t))
		r := runT(t, "", "rules", "load", "-db", path, file)
		if r.code != 0 || withoutKeyNote(t, r.stderr, path) != "" || !strings.Contains(r.stdout, `"rules_loaded":8`) {
			t.Fatalf("got %+v", r)
		}
	})

	path := tempDB(t)
	svc := openDB(t, path, "")
	before := recordsRules(t, svc)
	unknownTag := shippedRulesFile(t)
	unknownTag[0]["optional_fields"] = append(unknownTag[0]["optional_fields"].([]any),
		map[string]any{"tag": "swift_code", "label": "SWIFT", "data_type": "string", "length": 11})
	minAboveMax := shippedRulesFile(t)
	minAboveMax[1]["account"].(map[string]any)["min_payout_amount"] = 10000000
	refused := []struct {
		name string
		file any
		want string
	}{
		{"NotJSON", `[{"country_code": "IN",`, "Payee rules refused: not JSON"},
		{"EmptyArray", `[]`, "Payee rules refused: the file: List should have at least 1 item"},
		{"NotAnArray", `{"country_code": "IN"}`, "Payee rules refused: the file: Input should be a valid list"},
		{"UnknownTag", unknownTag, `Payee rules refused: entry 0 (IN/INR): tag "swift_code" is not a payee bank or address field.`},
		{"MinAboveMax", minAboveMax, "Payee rules refused: entry 1 (PK/PKR): min_payout_amount is above max_payout_amount."},
	}
	for _, tc := range refused {
		t.Run("Err/"+tc.name, func(t *testing.T) {
			r := runT(t, "", "rules", "load", "-db", path, writeRules(t, tc.name+".json", tc.file))
			wantExit(t, r, 1, "paymentsd rules load: "+tc.want)
			if after := recordsRules(t, svc); after != before {
				t.Errorf("rules changed by a refused file:\n%s", after)
			}
		})
	}

	t.Run("ErrNoSuchFile", func(t *testing.T) {
		r := runT(t, "", "rules", "load", "-db", path, filepath.Join(t.TempDir(), "missing.json"))
		if r.code == 0 || r.stdout != "" {
			t.Errorf("got %+v, want a failure", r)
		}
		wantOneLine(t, "stderr", r.stderr, "missing.json")
		if after := recordsRules(t, svc); after != before {
			t.Error("rules changed")
		}
	})

	file := writeRules(t, "all.json", shippedRulesFile(t))
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"NoArgument", nil, "paymentsd rules load: want exactly one argument, FILE.json; got 0 (see 'paymentsd rules load -h')"},
		{"TwoArguments", []string{file, file}, "want exactly one argument, FILE.json; got 2"},
		{"UnknownFlag", []string{"-replace", file}, "flag provided but not defined: -replace"},
	} {
		t.Run("Usage/"+tc.name, func(t *testing.T) {
			wantUsage(t, "", []string{"rules", "load"}, tc.args, tc.want)
		})
	}
}
