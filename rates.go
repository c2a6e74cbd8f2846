package payments

import (
	"context"
	"strconv"

	"github.com/platform-payments/payments/internal/store"
	"github.com/platform-payments/payments/internal/validate"
	"github.com/platform-payments/payments/queries"
)

// localTimeLayout is how apply_time is written: UTC, without an offset.
const localTimeLayout = validate.LocalTimeLayout

// ExchangeRate is one entry of the rates history: how many units of the payout currency
// one unit of the base currency buys from ApplyTime on.
type ExchangeRate struct {
	ID             int64   `json:"id"`
	PayoutCurrency string  `json:"payout_currency"`
	BaseCurrency   string  `json:"base_currency"`
	ExchangeRate   Decimal `json:"exchange_rate"`
	ApplyTime      string  `json:"apply_time"`
	Fixed          int     `json:"fixed"`
}

// NewExchangeRate is a rate to add to the history. ExchangeRate is a decimal written as
// text, kept with exactly its digits. ApplyTime is YYYY-MM-DDTHH:MM:SS in UTC; empty
// means now.
type NewExchangeRate struct {
	BaseCurrency   string `json:"base_currency"`
	PayoutCurrency string `json:"payout_currency"`
	ExchangeRate   string `json:"exchange_rate"`
	ApplyTime      string `json:"apply_time,omitempty"`
	Fixed          bool   `json:"fixed,omitempty"`
}

// rateFromRow is the API's view of a stored rate: the rate as a Decimal, without the
// time it was recorded.
func rateFromRow(r queries.ExchangeRate) ExchangeRate {
	return ExchangeRate{
		ID:             r.ID,
		PayoutCurrency: r.PayoutCurrency,
		BaseCurrency:   r.BaseCurrency,
		ExchangeRate:   Decimal(r.ExchangeRate),
		ApplyTime:      r.ApplyTime,
		Fixed:          int(r.Fixed),
	}
}

// SetExchangeRate adds a rate to the history; earlier entries are kept. It is an
// administrative operation: rates are reference data of the whole deployment.
//
// Returns CodeInvalid when the rate fails validation.
func (s *Service) SetExchangeRate(ctx context.Context, in NewExchangeRate) (ExchangeRate, error) {
	if _, err := s.validate("rates_set", nil, nil, in); err != nil {
		return ExchangeRate{}, err
	}
	now := s.Now()
	params := queries.AddExchangeRateParams{
		PayoutCurrency: in.PayoutCurrency,
		BaseCurrency:   in.BaseCurrency,
		ExchangeRate:   in.ExchangeRate,
		ApplyTime:      in.ApplyTime,
		CreatedAt:      formatTime(now),
	}
	if params.ApplyTime == "" {
		params.ApplyTime = now.Format(localTimeLayout)
	}
	if in.Fixed {
		params.Fixed = 1
	}
	var row queries.ExchangeRate
	err := s.write(ctx, store.WriteOptions{}, func(ctx context.Context, q store.Querier) (err error) {
		if row, err = q.AddExchangeRate(ctx, params); err != nil {
			return err
		}
		return s.emitGlobal(ctx, q, EventExchangeRateUpdated, EventData{Object: EventObject{
			Type: "exchange_rate", ID: strconv.FormatInt(row.ID, 10), BaseCurrency: row.BaseCurrency,
			PayoutCurrency: row.PayoutCurrency, ExchangeRate: Decimal(row.ExchangeRate),
		}})
	})
	if err != nil {
		return ExchangeRate{}, err
	}
	return rateFromRow(row), nil
}

// ExchangeRates returns the rates in force for a payout currency: for each base currency
// the latest entry whose apply time has come (of two with the same apply time, the later
// recorded), sorted by base currency. A currency without rates has none: an empty list.
//
// Returns CodeInvalid for a malformed or unknown currency code.
//
// Options: AsSent.
func (s *Service) ExchangeRates(ctx context.Context, payoutCurrency string, opts ...Call) ([]ExchangeRate, error) {
	if err := s.validateAsSent(options(opts).sent, "rates_get", nil, map[string]string{"payout_currency": payoutCurrency}); err != nil {
		return nil, err
	}
	out := []ExchangeRate{}
	err := s.query(ctx, func(q store.Querier) error {
		rows, err := q.CurrentExchangeRates(ctx, queries.CurrentExchangeRatesParams{
			PayoutCurrency: payoutCurrency,
			AsOf:           s.Now().Format(localTimeLayout),
		})
		for _, r := range rows {
			out = append(out, rateFromRow(r))
		}
		return err
	})
	return out, err
}
