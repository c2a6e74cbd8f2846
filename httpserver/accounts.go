package httpserver

import (
	"context"

	"github.com/platform-payments/payments"
)

func (s *server) addBankAccount(ctx context.Context, c *call) (any, error) {
	var in payments.NewBankAccount
	if err := s.svc.Decode("accounts_add", c.req, &in); err != nil {
		return nil, err
	}
	a, err := s.svc.AddBankAccount(ctx, c.platform, in)
	if err != nil {
		return nil, err
	}
	return s.success(a), nil
}

func (s *server) getBankAccount(ctx context.Context, c *call) (any, error) {
	if err := s.svc.Decode("accounts_get", c.req, nil); err != nil {
		return nil, err
	}
	a, err := s.svc.GetBankAccount(ctx, c.platform, c.req.Path["account_id"])
	if err != nil {
		return nil, err
	}
	return s.success(a), nil
}
