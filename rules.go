package payments

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/platform-payments/payments/internal/payeerules"
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
const payeeBankRequest = payeerules.PayeeBankRequest

// dataTypes are the data types of a field rule (package payeerules gives their meaning).
var dataTypes = payeerules.DataTypes

// GetPayeeRules returns the rules for a destination country and payout currency.
//
// Returns CodeInvalid for a malformed or unknown country or currency code and CodeNotFound
// when there are no rules for the pair.
//
// Options: AsSent.
func (s *Service) GetPayeeRules(ctx context.Context, countryCode, payoutCurrency string, opts ...Call) (PayeeRules, error) {
	query := map[string]string{"country_code": countryCode, "payout_currency": payoutCurrency}
	if err := s.validateAsSent(options(opts).sent, "rules_get", nil, query); err != nil {
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
	entries, compiled, err := s.parsePayeeRules(raw)
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
		var countries []string
		if setID, countries, err = payeerules.Save(ctx, q, source, formatTime(s.Now()), entries); err != nil {
			return err
		}
		return s.emitGlobal(ctx, q, EventPayeeRulesUpdated, EventData{Object: EventObject{
			Type: "payee_rules", ID: strconv.FormatInt(setID, 10), Countries: countries,
		}})
	})
	if err != nil || setID == 0 {
		return 0, err
	}
	for country, v := range compiled { // compiled to check the file: kept for use
		s.countryRules.Put(country, setID, v)
	}
	return len(entries), nil
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

// parsePayeeRules checks a rules file as a whole (package payeerules) and returns its
// entries, with each country's field rules compiled.
func (s *Service) parsePayeeRules(raw []byte) ([]payeerules.Entry, map[string]*validate.Validator, error) {
	if err := payeerules.Validate(s.schemas, raw); err != nil {
		return nil, nil, rulesError(err)
	}
	var rules []PayeeRules
	if err := json.Unmarshal(raw, &rules); err != nil {
		return nil, nil, rulesError(payeerules.Refused(err.Error() + "."))
	}
	entries := make([]payeerules.Entry, len(rules))
	for i, r := range rules {
		entries[i] = payeerules.Entry{
			Country: r.CountryCode, CountryName: r.CountryName, IdentifierType: r.BankIdentifierType,
			Mandatory: ruleFields(r.MandatoryFields), Optional: ruleFields(r.OptionalFields),
			Currency: r.Account.PayoutCurrency, MinAmount: string(r.Account.MinPayoutAmount), MaxAmount: string(r.Account.MaxPayoutAmount),
			Account: r.Account, Documents: r.DocumentsAllowed,
		}
	}
	compiled, err := payeerules.Check(s.schemas, entries)
	return entries, compiled, rulesError(err)
}

// rulesError is a refused rules file as CodeInvalid; other errors pass through.
func rulesError(err error) error {
	if r, ok := err.(payeerules.Refused); ok {
		return &Error{Code: CodeInvalid, Message: "Payee rules refused: " + string(r)}
	}
	return err
}

func ruleFields(fields []FieldRule) []payeerules.Field {
	if fields == nil {
		return nil // stored as null, as the file had it
	}
	out := make([]payeerules.Field, len(fields))
	for i, f := range fields {
		out[i] = payeerules.Field(f)
	}
	return out
}
