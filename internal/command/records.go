package command

import (
	"context"
	"flag"
	"strconv"
	"strings"

	"github.com/platform-payments/payments"
)

// What the HTTP API reads but does not create: cards, payee addresses, exchange rates and
// payee rules; and the data keys' state.

var cardAdd = &Command{
	Name:    "card add",
	Summary: "Save a card for a user (brand, last four digits, expiry; never the full number) and print it as JSON.",
	Usage:   "-user USER_ID [-brand visa] [-last4 4242] [-exp 12/2030]",
	Uses:    UsesDatabase,
	Sets:    []Export{{"CARD_ID", "card_id"}},
	Run:     runCardAdd,
}

func runCardAdd(ctx context.Context, x *Invocation, args []string) error {
	fs := x.FlagSet()
	user := idFlag(fs, "user", "the `USER_ID` of the card holder (required)")
	brand := fs.String("brand", "visa", "the card `BRAND`, one of those schema/cards_add.json lists (visa, amex, …)")
	last4 := fs.String("last4", "4242", "the last four `DIGITS` of the card number")
	exp := fs.String("exp", "12/2030", "the expiry `MM/YYYY` (the month may have one digit)")
	if err := x.Parse(fs, args); err != nil {
		return err
	}
	if err := required(user); err != nil {
		return err
	}
	month, year, err := ParseExpiry(*exp)
	if err != nil {
		return err
	}
	if err := NoArgs(fs); err != nil {
		return err
	}
	return x.printResult(ctx, func(svc *payments.Service) (any, error) {
		return svc.AddCard(ctx, user.String(), payments.NewCard{Brand: *brand, Last4: *last4, ExpMonth: month, ExpYear: year})
	})
}

// ParseExpiry reads -exp, MM/YYYY: a month of one or two digits and a year of four, no
// sign. It does not judge the date: the library does that.
func ParseExpiry(s string) (month, year int, err error) {
	m, y, found := strings.Cut(s, "/")
	if !found || !digits(m, 1, 2) || !digits(y, 4, 4) {
		return 0, 0, Usagef("-exp: %q is not MM/YYYY", s)
	}
	month, _ = strconv.Atoi(m)
	year, _ = strconv.Atoi(y)
	return month, year, nil
}

// digits reports whether s is min to max decimal digits and nothing else.
func digits(s string, min, max int) bool {
	if len(s) < min || len(s) > max {
		return false
	}
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

var addressAdd = &Command{
	Name:    "address add",
	Summary: "Store a payee's cross-border address, read as JSON from FILE (- for standard input), and print the API's record of it.",
	Usage:   "-user USER_ID -payee PAYEE_ID FILE",
	Details: "The JSON object has name, last_name, address_line_1, address_line_2, company_name, city, state, " +
		"zipcode, country, address_type and is_default; it is validated as strictly as an API body " +
		"(an optional field may be null, which is the field left out). " +
		"The printed record, like the API's, leaves out address_line_2, company_name, is_default and address_type.",
	Uses: UsesDatabase,
	Sets: []Export{{"ADDRESS_ID", "id"}},
	Run:  runAddressAdd,
}

func runAddressAdd(ctx context.Context, x *Invocation, args []string) error {
	fs := x.FlagSet()
	user := idFlag(fs, "user", "the `USER_ID` the payee belongs to (required)")
	payee := idFlag(fs, "payee", "the `PAYEE_ID` of the payee (required)")
	if err := x.Parse(fs, args); err != nil {
		return err
	}
	if err := required(user, payee); err != nil {
		return err
	}
	body, err := x.input(fs)
	if err != nil {
		return err
	}
	return x.printResult(ctx, func(svc *payments.Service) (any, error) {
		path := map[string]string{"user_id": user.String(), "payee_id": payee.String()}
		var in payments.NewPayeeAddress
		if err := svc.Decode("addresses_add", payments.Request{Path: path, Body: body}, &in); err != nil {
			return nil, err
		}
		return svc.AddPayeeAddress(ctx, path["user_id"], path["payee_id"], in)
	})
}

// input returns what the one argument FILE names (- for standard input).
func (x *Invocation) input(fs *flag.FlagSet) ([]byte, error) {
	if fs.NArg() != 1 {
		return nil, Usagef("want exactly one argument, FILE (- for standard input); got %d", fs.NArg())
	}
	name := fs.Arg(0)
	if name == "" {
		return nil, Usagef("FILE is empty: name a file, or - for standard input")
	}
	return x.Host.ReadFile(name)
}

var ratesSet = &Command{
	Name:    "rates set",
	Summary: "Add an exchange rate to the history and print the rate record as JSON.",
	Usage:   "-base USD -payout INR -rate 83.12 [-fixed] [-at 2026-01-02T15:04:05]",
	Details: "The rate keeps exactly the digits given. It applies from -at (UTC, no offset; default now); " +
		"earlier entries stay in the history.",
	Uses: UsesDatabase,
	Run:  runRatesSet,
}

func runRatesSet(ctx context.Context, x *Invocation, args []string) error {
	fs := x.FlagSet()
	base := fs.String("base", "", "the base currency `CODE` (ISO 4217, required)")
	payout := fs.String("payout", "", "the payout currency `CODE` (ISO 4217, required)")
	rate := fs.String("rate", "", "units of the payout currency per unit of the base currency, a `DECIMAL` (required)")
	fixed := fs.Bool("fixed", false, "mark the rate fixed")
	at := fs.String("at", "", "when the rate applies from, `YYYY-MM-DDTHH:MM:SS` in UTC (default now)")
	if err := x.Parse(fs, args); err != nil {
		return err
	}
	if *base == "" || *payout == "" || *rate == "" {
		return Usagef("-base, -payout and -rate are required")
	}
	if err := NoArgs(fs); err != nil {
		return err
	}
	return x.printResult(ctx, func(svc *payments.Service) (any, error) {
		return svc.SetExchangeRate(ctx, payments.NewExchangeRate{
			BaseCurrency: *base, PayoutCurrency: *payout, ExchangeRate: *rate, ApplyTime: *at, Fixed: *fixed,
		})
	})
}

var rulesLoad = &Command{
	Name:    "rules load",
	Summary: "Replace the payee rules with those of a JSON file (- for standard input) and print how many were loaded.",
	Usage:   "FILE",
	Details: "The file is a JSON array of payee rules objects, as Get Payee Rules returns them. " +
		"It is checked as a whole; a file with any fault changes nothing.",
	Uses: UsesDatabase,
	Run:  runRulesLoad,
}

// rulesLoaded is what rules load prints.
type rulesLoaded struct {
	Source string `json:"source"`
	Rules  int    `json:"rules_loaded"`
}

func runRulesLoad(ctx context.Context, x *Invocation, args []string) error {
	fs := x.FlagSet()
	if err := x.Parse(fs, args); err != nil {
		return err
	}
	raw, err := x.input(fs)
	if err != nil {
		return err
	}
	source := fs.Arg(0)
	return x.printResult(ctx, func(svc *payments.Service) (any, error) {
		n, err := svc.LoadPayeeRules(ctx, source, raw)
		return rulesLoaded{Source: source, Rules: n}, err
	})
}

var keysStatus = &Command{
	Name:    "keys status",
	Summary: "Print the database's data keys with how many values each seals, and which key seals new values.",
	Details: `A rotation is finished when the new key seals every value and the older keys are retired
(retired_at set): only then may the older keys be destroyed.

keys status only reads: it changes nothing in the database, creates none (nor a key file)
and registers no key. A new current key given with the database's own as an older one
(-data-key-file NEW -old-data-key-file CURRENT), before anything registered it, is printed
as "unregistered_key": the database seals under CURRENT until a command that writes with
NEW first registers it (serve at its start, keys rotate, an administration command).`,
	Uses:      UsesDatabase,
	ReadsOnly: true,
	Run:       runKeysStatus,
}

// keyStatus is what keys status prints.
type keyStatus struct {
	SealingKey string                 `json:"sealing_key"`
	Keys       []payments.DataKeyInfo `json:"keys"`
	// Unregistered is the current key given that the database does not know yet.
	Unregistered string `json:"unregistered_key,omitempty"`
}

func runKeysStatus(ctx context.Context, x *Invocation, args []string) error {
	fs := x.FlagSet()
	if err := x.Parse(fs, args); err != nil {
		return err
	}
	if err := NoArgs(fs); err != nil {
		return err
	}
	return x.printResult(ctx, func(svc *payments.Service) (any, error) {
		keys, err := svc.DataKeys().List(ctx)
		return keyStatus{SealingKey: svc.DataKeys().SealingID(), Keys: keys, Unregistered: svc.DataKeys().Unregistered()}, err
	})
}
