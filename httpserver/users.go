package httpserver

import (
	"context"
	"net/http"

	"github.com/platform-payments/payments"
)

func (s *server) createUser(ctx context.Context, c *call) (any, error) {
	var in payments.NewUser
	if err := s.svc.Decode("users_create", c.req, &in); err != nil {
		return nil, err
	}
	u, err := s.svc.CreateUser(ctx, c.platform, in)
	if err != nil {
		return nil, err
	}
	return s.success(u), nil
}

func (s *server) listUsers(ctx context.Context, c *call) (any, error) {
	var in payments.ListUsersParams
	if err := s.svc.Decode("users_list", c.req, &in); err != nil {
		return nil, err
	}
	page, err := s.svc.ListUsers(ctx, c.platform, in)
	if err != nil {
		return nil, err
	}
	return payments.UserListEnvelope{
		Success:            true,
		StatusCode:         http.StatusOK,
		Message:            "Success",
		Records:            page.Records,
		TotalRecords:       page.TotalRecords,
		QueryGeneratedTime: s.svc.Now().Unix(),
	}, nil
}

func (s *server) getUser(ctx context.Context, c *call) (any, error) {
	if err := s.svc.Decode("users_get", c.req, nil); err != nil {
		return nil, err
	}
	u, err := s.svc.GetUser(ctx, c.platform, c.req.Path["user_id"])
	if err != nil {
		return nil, err
	}
	return s.success(u), nil
}
