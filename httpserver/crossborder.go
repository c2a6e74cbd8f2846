package httpserver

import (
	"context"

	"github.com/platform-payments/payments"
)

func (s *server) addPayeeBank(ctx context.Context, c *call) (any, error) {
	var in payments.NewPayeeBank
	if err := s.svc.Decode("payee_banks_add", c.req, &in); err != nil {
		return nil, err
	}
	b, err := s.svc.AddPayeeBank(ctx, c.platform, c.req.Path["user_id"], in)
	if err != nil {
		return nil, err
	}
	return s.success(b), nil
}

func (s *server) deletePayeeBank(ctx context.Context, c *call) (any, error) {
	if err := s.svc.Decode("payee_banks_delete", c.req, nil); err != nil {
		return nil, err
	}
	if err := s.svc.DeletePayeeBank(ctx, c.platform, c.req.Path["user_id"], c.req.Path["bank_uuid"]); err != nil {
		return nil, err
	}
	return s.success(nil), nil
}

func (s *server) listPayeeAddresses(ctx context.Context, c *call) (any, error) {
	if err := s.svc.Decode("addresses_list", c.req, nil); err != nil {
		return nil, err
	}
	list, err := s.svc.ListPayeeAddresses(ctx, c.platform, c.req.Path["user_id"], c.req.Query["payee_id"])
	if err != nil {
		return nil, err
	}
	return s.success(list), nil
}

func (s *server) getPayeeAddress(ctx context.Context, c *call) (any, error) {
	if err := s.svc.Decode("addresses_get", c.req, nil); err != nil {
		return nil, err
	}
	a, err := s.svc.GetPayeeAddress(ctx, c.platform, c.req.Path["user_id"], c.req.Path["address_id"])
	if err != nil {
		return nil, err
	}
	return s.success(a), nil
}

func (s *server) getPayeeRules(ctx context.Context, c *call) (any, error) {
	if err := s.svc.Decode("rules_get", c.req, nil); err != nil {
		return nil, err
	}
	r, err := s.svc.GetPayeeRules(ctx, c.req.Query["country_code"], c.req.Query["payout_currency"])
	if err != nil {
		return nil, err
	}
	return s.success(r), nil
}

func (s *server) getExchangeRates(ctx context.Context, c *call) (any, error) {
	if err := s.svc.Decode("rates_get", c.req, nil); err != nil {
		return nil, err
	}
	rates, err := s.svc.ExchangeRates(ctx, c.req.Query["payout_currency"])
	if err != nil {
		return nil, err
	}
	return s.success(rates), nil
}
