package httpserver

import (
	"context"

	"github.com/platform-payments/payments"
)

func (s *server) createPayee(ctx context.Context, c *call) (any, error) {
	var in payments.NewPayee
	if err := s.svc.Decode("payees_create", c.req, &in); err != nil {
		return nil, err
	}
	p, err := s.svc.CreatePayee(ctx, c.caller, in)
	if err != nil {
		return nil, err
	}
	return s.success(p), nil
}

func (s *server) updatePayee(ctx context.Context, c *call) (any, error) {
	var in payments.PayeeRename
	if err := s.svc.Decode("payees_update", c.req, &in); err != nil {
		return nil, err
	}
	p, err := s.svc.UpdatePayee(ctx, c.platform, c.req.Path["user_id"], in)
	if err != nil {
		return nil, err
	}
	return s.success(p), nil
}
