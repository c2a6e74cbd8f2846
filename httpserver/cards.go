package httpserver

import (
	"context"

	"github.com/platform-payments/payments"
)

func (s *server) deleteCard(ctx context.Context, c *call) (any, error) {
	var in payments.CardDeletion
	if err := s.svc.Decode("cards_delete", c.req, &in); err != nil {
		return nil, err
	}
	d, err := s.svc.DeleteCard(ctx, c.platform, c.req.Path["user_id"], in)
	if err != nil {
		return nil, err
	}
	return s.success(d), nil
}
