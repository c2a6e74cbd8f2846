package pgqueries

import (
	"context"

	"github.com/platform-payments/payments/queries"
)

// RenameUserPayee is store.Querier's: the payee read, locked, and renamed in one
// statement (RenameUserPayee), its name before beside the payee as stored.
func (a Adapter) RenameUserPayee(ctx context.Context, p queries.RenamePayeeParams) (string, queries.Payee, error) {
	r, err := a.Q.RenameUserPayee(ctx, RenameUserPayeeParams{ID: p.ID, UserID: p.UserID, Name: p.Name, UpdatedAt: p.UpdatedAt})
	if err != nil {
		return "", queries.Payee{}, err
	}
	return r.BeforeName, queries.Payee{ID: r.ID, UserID: r.UserID, Name: r.Name, Email: r.Email,
		PhoneCountryCode: r.PhoneCountryCode, Phone: r.Phone, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}, nil
}
