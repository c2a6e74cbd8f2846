// Package payeerules checks and compiles payee rules: a rules file's entries, each on its
// own and together, and each country's field rules as a validator of Add Payee Bank bodies.
package payeerules

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/big"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/platform-payments/payments/internal/store"
	"github.com/platform-payments/payments/internal/validate"
	"github.com/platform-payments/payments/queries"
)

// Field is one payee field rule of a country, as payments.FieldRule (which converts to it).
type Field struct {
	Tag      string `json:"tag"`
	Label    string `json:"label"`
	DataType string `json:"data_type"`
	Length   int    `json:"length"`
}

// Entry is one entry of a rules file, as the checks read it.
type Entry struct {
	Country, CountryName, IdentifierType string
	Mandatory, Optional                  []Field
	Currency, MinAmount, MaxAmount       string
	// Account and Documents are the entry's payout account and documents allowed, as
	// Save stores them (JSON of the values).
	Account, Documents any
}

// Refused is why a rules file is refused, a sentence.
type Refused string

func (r Refused) Error() string { return string(r) }

func fault(format string, args ...any) error { return Refused(fmt.Sprintf(format, args...)) }

// PayeeBankRequest is the request whose fields the rules govern (with the address fields).
const PayeeBankRequest = "payee_banks_add"

// DataTypes gives each data type of a field rule its meaning: the one field a
// format-bearing type may govern ("" for any), and the check it adds to the length (nil
// for none). Its keys are the data_type enumeration of schema/payee_rules_load.json, where
// the types are written: the validator refuses to start when the two differ (the root's enumTables).
var DataTypes = map[string]struct {
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

// Check checks the entries of a rules file, each on its own and all together, and returns
// each country's field rules compiled (Compile).
func Check(v *validate.Validator, rules []Entry) (map[string]*validate.Validator, error) {
	limits := ruleTagLimits(v)
	required := requiredBankFields(v)
	countries := map[string]Entry{}
	compiled := map[string]*validate.Validator{}
	pairs := map[string]bool{}
	for i, r := range rules {
		at := fmt.Sprintf("entry %d (%s/%s)", i, r.Country, r.Currency)
		pair := r.Country + "/" + r.Currency
		if pairs[pair] {
			return nil, fault("%s: a second entry for the same country and currency.", at)
		}
		pairs[pair] = true
		if err := checkRuleEntry(at, r, limits, required); err != nil {
			return nil, err
		}
		if first, seen := countries[r.Country]; seen {
			if !sameFieldRules(first, r) {
				return nil, fault("%s: field rules differ from another entry of %s; they belong to the country.", at, r.Country)
			}
			continue // the country's other entries have the same field rules: compiled already
		}
		countries[r.Country] = r
		c, err := Compile(v, r.Country, r.IdentifierType, r.Mandatory, r.Optional)
		if err != nil {
			return nil, fault("%s: %v.", at, err)
		}
		compiled[r.Country] = c
	}
	return compiled, nil
}

// Validate checks a rules file against schema/payee_rules_load.json, each failure told as
// "entry PATH: message".
func Validate(v *validate.Validator, raw []byte) error {
	doc, fe := validate.ParseBody(raw)
	if fe != nil {
		return fault("not JSON: %s at character %v.", fe.Ctx["error"], fe.Loc[1])
	}
	fields, err := v.ValidateBody("payee_rules_load", doc)
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
		return fault("%s.", strings.Join(where, "; "))
	}
	return err
}

// checkRuleEntry checks one entry of a rules file on its own: its tags are fields of the
// requests, each once, within the requests' lengths and with a data type that may govern
// it; the fields every payee bank needs are mandatory; its amounts are in order.
func checkRuleEntry(at string, r Entry, limits map[string]int, required []string) error {
	tags := map[string]bool{}
	for _, f := range append(append([]Field{}, r.Mandatory...), r.Optional...) {
		limit, known := limits[f.Tag]
		switch {
		case !known:
			return fault("%s: tag %q is not a payee bank or address field.", at, f.Tag)
		case tags[f.Tag]:
			return fault("%s: tag %q is listed twice.", at, f.Tag)
		case limit > 0 && f.Length > limit:
			return fault("%s: %s length %d exceeds the request's limit of %d.", at, f.Tag, f.Length, limit)
		case DataTypes[f.DataType].field != "" && DataTypes[f.DataType].field != f.Tag:
			return fault("%s: data_type %q applies to %s only, not %s.", at, f.DataType, DataTypes[f.DataType].field, f.Tag)
		}
		tags[f.Tag] = true
	}
	for _, field := range required {
		if !containsTag(r.Mandatory, field) {
			return fault("%s: %s must be a mandatory field.", at, field)
		}
	}
	min, minOK := new(big.Rat).SetString(r.MinAmount)
	max, maxOK := new(big.Rat).SetString(r.MaxAmount)
	if !minOK || !maxOK {
		return fault("%s: min_payout_amount and max_payout_amount must be decimal numbers.", at)
	}
	if min.Cmp(max) > 0 {
		return fault("%s: min_payout_amount is above max_payout_amount.", at)
	}
	return nil
}

func containsTag(fields []Field, tag string) bool {
	for _, f := range fields {
		if f.Tag == tag {
			return true
		}
	}
	return false
}

func sameFieldRules(a, b Entry) bool {
	return a.CountryName == b.CountryName && a.IdentifierType == b.IdentifierType &&
		slices.Equal(a.Mandatory, b.Mandatory) && slices.Equal(a.Optional, b.Optional)
}

// ruleTagLimits maps every field a rule may govern (the fields of the payee bank and
// address requests) to the request's own maximum length (0 when it has none of its own).
func ruleTagLimits(v *validate.Validator) map[string]int {
	limits := map[string]int{}
	for _, request := range []string{"addresses_add", PayeeBankRequest} {
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
	_, required := v.BodyFields(PayeeBankRequest)
	for _, r := range required {
		if r != "payee_id" {
			out = append(out, r)
		}
	}
	return out
}

// Compile compiles a country's field rules into a validator of Add Payee Bank
// bodies: the mandatory fields are required, and each field has a check of the country's
// length and data type, or refuses it when the country does not list it. Failures come
// out as the request's own: missing, or value_error, at the field.
func Compile(v *validate.Validator, country, identifierType string, mandatory, optional []Field) (*validate.Validator, error) {
	rules := map[string]Field{}
	for _, f := range append(append([]Field{}, mandatory...), optional...) {
		rules[f.Tag] = f
	}
	fields, _ := v.BodyFields(PayeeBankRequest)
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
	return v.BodyChecks(PayeeBankRequest, required, checks)
}

// ruleProblem returns the check of one payee bank field under a country's rules.
func ruleProblem(country, field, identifierType string, rule Field, listed bool) func(string) string {
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
		if check := DataTypes[rule.DataType].check; check != nil {
			if problem := check(s, country, rule.Length); problem != "" {
				return fmt.Sprintf("%s %s for %s", field, problem, country)
			}
		}
		return ""
	}
}

// Cache holds each country's compiled field rules with the rule set they came from; a
// newer set (loaded by another process, too) replaces them on next use. The zero value is
// empty and ready.
type Cache struct {
	m sync.Map // country code -> compiled
}

// compiled is a country's compiled field rules, valid while its rule set is in force.
type compiled struct {
	setID int64
	v     *validate.Validator
}

// Put keeps a country's field rules of rule set setID, compiled.
func (c *Cache) Put(country string, setID int64, v *validate.Validator) {
	c.m.Store(country, compiled{setID: setID, v: v})
}

// Validator returns the compiled field rules of a country of the rule set in force, as
// row stores them, compiling them against v when the cache has not them.
func (c *Cache) Validator(v *validate.Validator, row queries.PayeeRuleCountry) (*validate.Validator, error) {
	if e, ok := c.m.Load(row.CountryCode); ok && e.(compiled).setID == row.SetID {
		return e.(compiled).v, nil
	}
	var mandatory, optional []Field
	if err := errors.Join(
		json.Unmarshal([]byte(row.MandatoryFields), &mandatory),
		json.Unmarshal([]byte(row.OptionalFields), &optional),
	); err != nil {
		return nil, fmt.Errorf("payments: stored payee rules of %s: %w", row.CountryCode, err)
	}
	compiledV, err := Compile(v, row.CountryCode, row.BankIdentifierType, mandatory, optional)
	if err != nil {
		return nil, err
	}
	c.Put(row.CountryCode, row.SetID, compiledV)
	return compiledV, nil
}

// Save writes a file's entries as a new rule set, loaded from source at at, in the
// transaction of q, and returns its id and the countries it covers, sorted. A country's
// name and field rules are those of its first entry.
func Save(ctx context.Context, q store.Querier, source, at string, entries []Entry) (setID int64, countries []string, err error) {
	if setID, err = q.CreateRuleSet(ctx, queries.CreateRuleSetParams{Source: source, LoadedAt: at}); err != nil {
		return 0, nil, err
	}
	var js [4][]byte
	added := map[string]bool{}
	for _, e := range entries {
		for i, v := range []any{e.Mandatory, e.Optional, e.Account, e.Documents} {
			if js[i], err = json.Marshal(v); err != nil {
				return 0, nil, err
			}
		}
		if !added[e.Country] {
			added[e.Country] = true
			if err := q.AddRuleCountry(ctx, queries.AddRuleCountryParams{
				SetID: setID, CountryCode: e.Country, CountryName: e.CountryName, BankIdentifierType: e.IdentifierType,
				MandatoryFields: string(js[0]), OptionalFields: string(js[1]),
			}); err != nil {
				return 0, nil, err
			}
		}
		if err := q.AddRuleCurrency(ctx, queries.AddRuleCurrencyParams{
			SetID: setID, CountryCode: e.Country, PayoutCurrency: e.Currency,
			Account: string(js[2]), DocumentsAllowed: string(js[3]),
		}); err != nil {
			return 0, nil, err
		}
	}
	return setID, slices.Sorted(maps.Keys(added)), nil
}
