package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/platform-payments/payments"
)

// Commands for what the HTTP API reads but does not create: cards, payee addresses,
// exchange rates and payee rules.

var cardAddCommand = &command{
	name:    "card add",
	summary: "Save a card for a user (brand, last four digits, expiry; never the full number) and print it as JSON.",
	usage:   "[-db F] -user USER_ID [-brand visa] [-last4 4242] [-exp 12/2030]",
	run:     runCardAdd,
}

func runCardAdd(ctx context.Context, inv *invocation, args []string) error {
	fs := inv.flagSet()
	db := storeFlags(fs)
	user := fs.String("user", "", "the `USER_ID` of the card holder (required)")
	brand := fs.String("brand", "visa", "the card `BRAND`: visa, mastercard, amex, discover, diners, jcb or unionpay")
	last4 := fs.String("last4", "4242", "the last four `DIGITS` of the card number")
	exp := fs.String("exp", "12/2030", "the expiry `MM/YYYY`")
	if err := inv.parse(fs, args); err != nil {
		return err
	}
	if err := db.check(); err != nil {
		return err
	}
	if *user == "" {
		return usagef("-user is required")
	}
	userID, err := parseUserID("-user", *user)
	if err != nil {
		return err
	}
	month, year, err := parseExpiry(*exp)
	if err != nil {
		return err
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	return inv.withService(ctx, db, "", func(svc *payments.Service) error {
		card, err := svc.AddCard(ctx, userID.String(), payments.NewCard{Brand: *brand, Last4: *last4, ExpMonth: month, ExpYear: year})
		if err != nil {
			return err
		}
		return inv.printJSON(card)
	})
}

// parseExpiry reads MM/YYYY; the library checks the ranges.
func parseExpiry(s string) (month, year int, err error) {
	m, y, ok := strings.Cut(s, "/")
	month, errM := strconv.Atoi(m)
	year, errY := strconv.Atoi(y)
	if !ok || errM != nil || errY != nil || len(y) != 4 {
		return 0, 0, usagef("-exp: %q is not MM/YYYY", s)
	}
	return month, year, nil
}

var addressAddCommand = &command{
	name:    "address add",
	summary: "Store a payee's cross-border address, read as JSON from stdin, and print the API's record of it.",
	usage:   "[-db F] -user USER_ID -payee PAYEE_ID < address.json",
	details: "The JSON object has name, last_name, address_line_1, address_line_2, company_name, city, state, " +
		"zipcode, country, address_type and is_default; it is validated as strictly as an API body " +
		"(an optional field may be null, which is the field left out). " +
		"The printed record, like the API's, leaves out address_line_2, company_name, is_default and address_type.",
	run: runAddressAdd,
}

func runAddressAdd(ctx context.Context, inv *invocation, args []string) error {
	fs := inv.flagSet()
	db := storeFlags(fs)
	user := fs.String("user", "", "the `USER_ID` the payee belongs to (required)")
	payee := fs.String("payee", "", "the `PAYEE_ID` of the payee (required)")
	if err := inv.parse(fs, args); err != nil {
		return err
	}
	if err := db.check(); err != nil {
		return err
	}
	if *user == "" || *payee == "" {
		return usagef("-user and -payee are required")
	}
	userID, err := parseUserID("-user", *user)
	if err != nil {
		return err
	}
	payeeID, err := uuid.Parse(*payee)
	if err != nil {
		return usagef("-payee: %q is not a payee id (want a UUID)", *payee)
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	body, err := io.ReadAll(inv.stdin)
	if err != nil {
		return fmt.Errorf("reading the address from stdin: %w", err)
	}
	return inv.withService(ctx, db, "", func(svc *payments.Service) error {
		path := map[string]string{"user_id": userID.String(), "payee_id": payeeID.String()}
		var in payments.NewPayeeAddress
		if err := svc.Decode("addresses_add", payments.Request{Path: path, Body: body}, &in); err != nil {
			return err
		}
		address, err := svc.AddPayeeAddress(ctx, path["user_id"], path["payee_id"], in)
		if err != nil {
			return err
		}
		return inv.printJSON(address)
	})
}

var ratesSetCommand = &command{
	name:    "rates set",
	summary: "Add an exchange rate to the history and print the rate record as JSON.",
	usage:   "[-db F] -base USD -payout INR -rate 83.12 [-fixed] [-at 2026-01-02T15:04:05]",
	details: "The rate keeps exactly the digits given. It applies from -at (UTC, no offset; default now); " +
		"earlier entries stay in the history.",
	run: runRatesSet,
}

func runRatesSet(ctx context.Context, inv *invocation, args []string) error {
	fs := inv.flagSet()
	db := storeFlags(fs)
	base := fs.String("base", "", "the base currency `CODE` (ISO 4217, required)")
	payout := fs.String("payout", "", "the payout currency `CODE` (ISO 4217, required)")
	rate := fs.String("rate", "", "units of the payout currency per unit of the base currency, a `DECIMAL` (required)")
	fixed := fs.Bool("fixed", false, "mark the rate fixed")
	at := fs.String("at", "", "when the rate applies from, `YYYY-MM-DDTHH:MM:SS` in UTC (default now)")
	if err := inv.parse(fs, args); err != nil {
		return err
	}
	if err := db.check(); err != nil {
		return err
	}
	if *base == "" || *payout == "" || *rate == "" {
		return usagef("-base, -payout and -rate are required")
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	return inv.withService(ctx, db, "", func(svc *payments.Service) error {
		r, err := svc.SetExchangeRate(ctx, payments.NewExchangeRate{
			BaseCurrency: *base, PayoutCurrency: *payout, ExchangeRate: *rate, ApplyTime: *at, Fixed: *fixed,
		})
		if err != nil {
			return err
		}
		return inv.printJSON(r)
	})
}

var rulesLoadCommand = &command{
	name:    "rules load",
	summary: "Replace the payee rules with those of a JSON file and print how many were loaded.",
	usage:   "[-db F] FILE.json",
	details: "The file is a JSON array of payee rules objects, as Get Payee Rules returns them. " +
		"It is checked as a whole; a file with any fault changes nothing.",
	run: runRulesLoad,
}

// rulesLoaded is what rules load prints.
type rulesLoaded struct {
	Source string `json:"source"`
	Rules  int    `json:"rules_loaded"`
}

func runRulesLoad(ctx context.Context, inv *invocation, args []string) error {
	fs := inv.flagSet()
	db := storeFlags(fs)
	if err := inv.parse(fs, args); err != nil {
		return err
	}
	if err := db.check(); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("want exactly one argument, FILE.json; got %d", fs.NArg())
	}
	raw, err := os.ReadFile(fs.Arg(0))
	if err != nil {
		return err
	}
	return inv.withService(ctx, db, "", func(svc *payments.Service) error {
		n, err := svc.LoadPayeeRules(ctx, fs.Arg(0), raw)
		if err != nil {
			return err
		}
		return inv.printJSON(rulesLoaded{Source: fs.Arg(0), Rules: n})
	})
}
