package payments

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"maps"
	"math/big"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/platform-payments/payments/internal/store"
	"github.com/platform-payments/payments/internal/stored"
	"github.com/platform-payments/payments/internal/validate"
	"github.com/platform-payments/payments/queries"
)

// Payee rules: which payee bank and address fields a destination country needs, with the
// payout limits and accepted documents per payout currency. They are reference data: the
// embedded data/payee_rules.json is loaded on first open, and LoadPayeeRules replaces
// them with a new set (the old sets stay as history).

//go:embed data/payee_rules.json
var defaultPayeeRules []byte

// FieldRule describes one payee field of a destination country. Tag is the request field
// it governs; Length its maximum length in characters; DataType its format: "string",
// "numeric" (digits), "iban" (an IBAN of the country, exactly Length long), "clabe",
// "ifsc", "country" or "enum" (the request's own values).
type FieldRule struct {
	Tag      string `json:"tag"`
	Label    string `json:"label"`
	DataType string `json:"data_type"`
	Length   int    `json:"length"`
}

// PayoutAccount is the payout currency of a rule and its payout amount limits.
type PayoutAccount struct {
	PayoutCurrency  string  `json:"payout_currency"`
	MinPayoutAmount Decimal `json:"min_payout_amount"`
	MaxPayoutAmount Decimal `json:"max_payout_amount"`
}

// PayeeRules are the rules of one destination country and payout currency, as Get Payee
// Rules returns them and as a rules file lists them.
type PayeeRules struct {
	CountryCode        string          `json:"country_code"`
	CountryName        string          `json:"country_name"`
	MandatoryFields    []FieldRule     `json:"mandatory_fields"`
	OptionalFields     []FieldRule     `json:"optional_fields"`
	Account            PayoutAccount   `json:"account"`
	DocumentsAllowed   map[string]bool `json:"documents_allowed"`
	BankIdentifierType string          `json:"bank_identifier_type"`
}

// payeeBankRequest is the request whose fields the rules govern (with the address fields).
const payeeBankRequest = "payee_banks_add"

// dataTypes gives each data type of a field rule its meaning: the one field a
// format-bearing type may govern ("" for any), and the check it adds to the length (nil
// for none). Its keys are the data_type enumeration of schema/payee_rules_load.json, where
// the types are written: the validator refuses to start when the two differ (enumTables).
var dataTypes = map[string]struct {
	field string
	check func(value, country string, length int) string // see validate.IBANProblem
}{
	"string":  {},
	"numeric": {check: digitsProblem},
	"iban":    {field: "account_number", check: validate.IBANProblem},
	"clabe":   {field: "account_number", check: func(s, _ string, _ int) string { return validate.CLABEProblem(s) }},
	"ifsc":    {field: "identifier_value", check: ifscProblem},
	"country": {field: "country"},
	"enum":    {field: "bank_acc_type"},
}

func digitsProblem(s, _ string, _ int) string {
	if strings.Trim(s, "0123456789") != "" {
		return "must contain digits only"
	}
	return ""
}

func ifscProblem(s, _ string, _ int) string {
	if !ifscPattern.MatchString(s) {
		return "must be an IFSC code: four letters, a zero, then six letters or digits"
	}
	return ""
}

var ifscPattern = regexp.MustCompile(`^[A-Z]{4}0[A-Z0-9]{6}$`)

// GetPayeeRules returns the rules for a destination country and payout currency.
//
// Returns CodeInvalid for a malformed or unknown country or currency code and CodeNotFound
// when there are no rules for the pair.
func (s *Service) GetPayeeRules(ctx context.Context, countryCode, payoutCurrency string) (PayeeRules, error) {
	query := map[string]string{"country_code": countryCode, "payout_currency": payoutCurrency}
	if err := s.validateAsSent(ctx, "rules_get", nil, query); err != nil {
		return PayeeRules{}, err
	}
	var r PayeeRules
	err := s.query(ctx, func(q store.Querier) error {
		row, err := q.GetPayeeRules(ctx, queries.GetPayeeRulesParams{CountryCode: countryCode, PayoutCurrency: payoutCurrency})
		if err != nil {
			return notFound(err, fmt.Sprintf("No payee rules for %s and %s.", countryCode, payoutCurrency))
		}
		c := row.PayeeRuleCountry
		r = PayeeRules{CountryCode: c.CountryCode, CountryName: c.CountryName, BankIdentifierType: c.BankIdentifierType}
		for _, part := range []struct {
			raw string
			dst any
		}{
			{c.MandatoryFields, &r.MandatoryFields},
			{c.OptionalFields, &r.OptionalFields},
			{row.Account, &r.Account},
			{row.DocumentsAllowed, &r.DocumentsAllowed},
		} {
			if err := json.Unmarshal([]byte(part.raw), part.dst); err != nil {
				return fmt.Errorf("payments: stored payee rules %s/%s: %w", countryCode, payoutCurrency, err)
			}
		}
		return nil
	})
	return r, err
}

// LoadPayeeRules replaces the payee rules in force with those of a rules file: a JSON
// array of PayeeRules. The file is checked as a whole first (its schema, known tags,
// lengths within the request limits, formats in their place, one set of field rules per
// country, minimum not above maximum); a file with any fault changes nothing. source
// names the file in the history of rule sets, as text: a file name's bytes that are not
// UTF-8 become U+FFFD and a NUL is dropped, as every engine can store. It returns the
// number of rules loaded.
//
// Returns CodeInvalid, saying what is wrong and where, for a faulty file.
func (s *Service) LoadPayeeRules(ctx context.Context, source string, raw []byte) (int, error) {
	return s.loadPayeeRules(ctx, source, raw, false)
}

// loadPayeeRules is LoadPayeeRules; with first, it loads nothing (and returns 0) when the
// store already holds rules, checked in the write's own transaction, so that services
// opening a new database at once load the shipped rules once.
func (s *Service) loadPayeeRules(ctx context.Context, source string, raw []byte, first bool) (int, error) {
	rules, compiled, err := s.parsePayeeRules(raw)
	if err != nil {
		return 0, err
	}
	source = stored.Text(source)
	var setID int64
	err = s.write(ctx, store.WriteOptions{}, func(ctx context.Context, q store.Querier) (err error) {
		setID = 0
		if first {
			if current, err := q.CurrentRuleSet(ctx); err != nil || current > 0 {
				return err
			}
		}
		setID, err = q.CreateRuleSet(ctx, queries.CreateRuleSetParams{Source: source, LoadedAt: formatTime(s.Now())})
		if err != nil {
			return err
		}
		added := map[string]bool{}
		for _, r := range rules {
			if !added[r.CountryCode] {
				added[r.CountryCode] = true
				mandatory, err := json.Marshal(r.MandatoryFields)
				if err != nil {
					return err
				}
				optional, err := json.Marshal(r.OptionalFields)
				if err != nil {
					return err
				}
				if err := q.AddRuleCountry(ctx, queries.AddRuleCountryParams{
					SetID:              setID,
					CountryCode:        r.CountryCode,
					CountryName:        r.CountryName,
					BankIdentifierType: r.BankIdentifierType,
					MandatoryFields:    string(mandatory),
					OptionalFields:     string(optional),
				}); err != nil {
					return err
				}
			}
			account, err := json.Marshal(r.Account)
			if err != nil {
				return err
			}
			documents, err := json.Marshal(r.DocumentsAllowed)
			if err != nil {
				return err
			}
			if err := q.AddRuleCurrency(ctx, queries.AddRuleCurrencyParams{
				SetID:            setID,
				CountryCode:      r.CountryCode,
				PayoutCurrency:   r.Account.PayoutCurrency,
				Account:          string(account),
				DocumentsAllowed: string(documents),
			}); err != nil {
				return err
			}
		}
		countries := slices.Sorted(maps.Keys(added))
		return s.emitGlobal(ctx, q, EventPayeeRulesUpdated, EventData{Object: EventObject{
			Type: "payee_rules", ID: strconv.FormatInt(setID, 10), Countries: countries,
		}})
	})
	if err != nil || setID == 0 {
		return 0, err
	}
	for country, v := range compiled { // compiled to check the file: kept for use
		s.countryRules.Store(country, countryRules{setID: setID, v: v})
	}
	return len(rules), nil
}

// loadDefaultRules loads the embedded rules into a store that has none. The check before
// the write spares an open the parsing when rules are there; the write checks again.
func (s *Service) loadDefaultRules(ctx context.Context) error {
	var current int64
	err := s.query(ctx, func(q store.Querier) (err error) {
		current, err = q.CurrentRuleSet(ctx)
		return err
	})
	if err != nil || current > 0 {
		return err
	}
	_, err = s.loadPayeeRules(ctx, "embedded data/payee_rules.json", defaultPayeeRules, true)
	return err
}

func rulesFault(format string, args ...any) error {
	return Errorf(CodeInvalid, "Payee rules refused: "+format, args...)
}

// parsePayeeRules checks a rules file as a whole and returns its rules, with each
// country's field rules compiled.
func (s *Service) parsePayeeRules(raw []byte) ([]PayeeRules, map[string]*validate.Validator, error) {
	rules, err := s.decodePayeeRules(raw)
	if err != nil {
		return nil, nil, err
	}
	limits := ruleTagLimits(s.schemas)
	required := requiredBankFields(s.schemas)
	countries := map[string]PayeeRules{}
	compiled := map[string]*validate.Validator{}
	pairs := map[string]bool{}
	for i, r := range rules {
		at := fmt.Sprintf("entry %d (%s/%s)", i, r.CountryCode, r.Account.PayoutCurrency)
		pair := r.CountryCode + "/" + r.Account.PayoutCurrency
		if pairs[pair] {
			return nil, nil, rulesFault("%s: a second entry for the same country and currency.", at)
		}
		pairs[pair] = true
		if err := checkRuleEntry(at, r, limits, required); err != nil {
			return nil, nil, err
		}
		if first, seen := countries[r.CountryCode]; seen {
			if !sameFieldRules(first, r) {
				return nil, nil, rulesFault("%s: field rules differ from another entry of %s; they belong to the country.", at, r.CountryCode)
			}
			continue // the country's other entries have the same field rules: compiled already
		}
		countries[r.CountryCode] = r
		v, err := countryChecks(s.schemas, r.CountryCode, r.BankIdentifierType, r.MandatoryFields, r.OptionalFields)
		if err != nil {
			return nil, nil, rulesFault("%s: %v.", at, err)
		}
		compiled[r.CountryCode] = v
	}
	return rules, compiled, nil
}

// decodePayeeRules reads a rules file: JSON that meets schema/payee_rules_load.json, each
// failure told as "entry PATH: message".
func (s *Service) decodePayeeRules(raw []byte) ([]PayeeRules, error) {
	doc, fe := validate.ParseBody(raw)
	if fe != nil {
		return nil, rulesFault("not JSON: %s at character %v.", fe.Ctx["error"], fe.Loc[1])
	}
	fields, err := s.schemas.ValidateBody("payee_rules_load", doc)
	if len(fields) > 0 {
		var where []string
		for _, f := range fields {
			path := make([]string, 0, len(f.Loc))
			for _, p := range f.Loc[1:] {
				path = append(path, fmt.Sprint(p))
			}
			if len(path) == 0 {
				where = append(where, "the file: "+f.Msg)
			} else {
				where = append(where, fmt.Sprintf("entry %s: %s", strings.Join(path, "."), f.Msg))
			}
		}
		return nil, rulesFault("%s.", strings.Join(where, "; "))
	}
	if err != nil {
		return nil, err
	}
	var rules []PayeeRules
	if err := json.Unmarshal(raw, &rules); err != nil {
		return nil, rulesFault("%v.", err)
	}
	return rules, nil
}

// checkRuleEntry checks one entry of a rules file on its own: its tags are fields of the
// requests, each once, within the requests' lengths and with a data type that may govern
// it; the fields every payee bank needs are mandatory; its amounts are in order.
func checkRuleEntry(at string, r PayeeRules, limits map[string]int, required []string) error {
	tags := map[string]bool{}
	for _, f := range append(append([]FieldRule{}, r.MandatoryFields...), r.OptionalFields...) {
		limit, known := limits[f.Tag]
		switch {
		case !known:
			return rulesFault("%s: tag %q is not a payee bank or address field.", at, f.Tag)
		case tags[f.Tag]:
			return rulesFault("%s: tag %q is listed twice.", at, f.Tag)
		case limit > 0 && f.Length > limit:
			return rulesFault("%s: %s length %d exceeds the request's limit of %d.", at, f.Tag, f.Length, limit)
		case dataTypes[f.DataType].field != "" && dataTypes[f.DataType].field != f.Tag:
			return rulesFault("%s: data_type %q applies to %s only, not %s.", at, f.DataType, dataTypes[f.DataType].field, f.Tag)
		}
		tags[f.Tag] = true
	}
	for _, field := range required {
		if !containsTag(r.MandatoryFields, field) {
			return rulesFault("%s: %s must be a mandatory field.", at, field)
		}
	}
	min, minOK := new(big.Rat).SetString(string(r.Account.MinPayoutAmount))
	max, maxOK := new(big.Rat).SetString(string(r.Account.MaxPayoutAmount))
	if !minOK || !maxOK {
		return rulesFault("%s: min_payout_amount and max_payout_amount must be decimal numbers.", at)
	}
	if min.Cmp(max) > 0 {
		return rulesFault("%s: min_payout_amount is above max_payout_amount.", at)
	}
	return nil
}

func containsTag(fields []FieldRule, tag string) bool {
	for _, f := range fields {
		if f.Tag == tag {
			return true
		}
	}
	return false
}

func sameFieldRules(a, b PayeeRules) bool {
	return a.CountryName == b.CountryName && a.BankIdentifierType == b.BankIdentifierType &&
		slices.Equal(a.MandatoryFields, b.MandatoryFields) && slices.Equal(a.OptionalFields, b.OptionalFields)
}

// ruleTagLimits maps every field a rule may govern (the fields of the payee bank and
// address requests) to the request's own maximum length (0 when it has none of its own).
func ruleTagLimits(v *validate.Validator) map[string]int {
	limits := map[string]int{}
	for _, request := range []string{"addresses_add", payeeBankRequest} {
		fields, _ := v.BodyFields(request)
		for _, f := range fields {
			limits[f.Name] = f.MaxLength
		}
	}
	delete(limits, "payee_id") // the payee, not a field of the payee's bank
	return limits
}

// requiredBankFields lists the payee bank fields every country must make mandatory: those
// the request itself requires.
func requiredBankFields(v *validate.Validator) []string {
	var out []string
	_, required := v.BodyFields(payeeBankRequest)
	for _, r := range required {
		if r != "payee_id" {
			out = append(out, r)
		}
	}
	return out
}

// countryChecks compiles a country's field rules into a validator of Add Payee Bank
// bodies: the mandatory fields are required, and each field has a check of the country's
// length and data type, or refuses it when the country does not list it. Failures come
// out as the request's own: missing, or value_error, at the field.
func countryChecks(v *validate.Validator, country, identifierType string, mandatory, optional []FieldRule) (*validate.Validator, error) {
	rules := map[string]FieldRule{}
	for _, f := range append(append([]FieldRule{}, mandatory...), optional...) {
		rules[f.Tag] = f
	}
	fields, _ := v.BodyFields(payeeBankRequest)
	declared := map[string]bool{}
	checks := map[string]validate.Check{}
	for _, f := range fields {
		declared[f.Name] = true
		if f.Name == "payee_id" {
			continue
		}
		rule, listed := rules[f.Name]
		checks[f.Name] = ruleProblem(country, f.Name, identifierType, rule, listed)
	}
	var required []string
	for _, f := range mandatory {
		if declared[f.Tag] {
			required = append(required, f.Tag)
		}
	}
	return v.BodyChecks(payeeBankRequest, required, checks)
}

// ruleProblem returns the check of one payee bank field under a country's rules.
func ruleProblem(country, field, identifierType string, rule FieldRule, listed bool) func(string) string {
	return func(s string) string {
		switch {
		case !listed:
			return fmt.Sprintf("%s is not accepted for %s", field, country)
		case field == "identifier_type" && s != identifierType:
			return fmt.Sprintf("%s must be '%s' for %s", field, identifierType, country)
		}
		if n := utf8.RuneCountInString(s); n > rule.Length {
			return fmt.Sprintf("%s must be at most %d characters for %s", field, rule.Length, country)
		}
		if check := dataTypes[rule.DataType].check; check != nil {
			if problem := check(s, country, rule.Length); problem != "" {
				return fmt.Sprintf("%s %s for %s", field, problem, country)
			}
		}
		return ""
	}
}
