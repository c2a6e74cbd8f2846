package payments

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/platform-payments/payments/queries"
)

// PayeeAddress is a payee's address for cross-border payouts, as the API shows it.
// PayeeID is the payee's id, which the API names user_id. The address line 2, company name, default flag, address type and
// the provider's contact id are stored but never shown.
type PayeeAddress struct {
	ID           uuid.UUID  `json:"id"`
	PayeeID      uuid.UUID  `json:"user_id"` // the payee's id, under the API's name
	Name         string     `json:"name"`
	LastName     *string    `json:"last_name"`
	AddressLine1 string     `json:"address_line_1"`
	City         string     `json:"city"`
	State        string     `json:"state"`
	Zipcode      string     `json:"zipcode"`
	Country      string     `json:"country"`
	CreatedAt    time.Time  `json:"created_at"`
	UpdatedAt    *time.Time `json:"updated_at"`
}

// NewPayeeAddress is an address to store for a payee. Its limits live in
// schema/addresses_add.json.
type NewPayeeAddress struct {
	Name         string  `json:"name"`
	LastName     *string `json:"last_name,omitempty"`
	AddressLine1 string  `json:"address_line_1"`
	AddressLine2 *string `json:"address_line_2,omitempty"`
	CompanyName  *string `json:"company_name,omitempty"`
	City         string  `json:"city"`
	State        string  `json:"state"`
	Zipcode      string  `json:"zipcode"`
	Country      string  `json:"country"`
	AddressType  *string `json:"address_type,omitempty"`
	IsDefault    *bool   `json:"is_default,omitempty"`
}

// payeeAddressFromRow is the API's view of a stored address: ids and times as Go values,
// and only the columns it shows.
func payeeAddressFromRow(r queries.PayeeAddress) PayeeAddress {
	return PayeeAddress{
		ID:           uuid.MustParse(r.ID),
		PayeeID:      uuid.MustParse(r.PayeeID),
		Name:         r.Name,
		LastName:     r.LastName,
		AddressLine1: r.AddressLine1,
		City:         r.City,
		State:        r.State,
		Zipcode:      r.Zipcode,
		Country:      r.Country,
		CreatedAt:    parseTime(r.CreatedAt),
		UpdatedAt:    parseNullTime(r.UpdatedAt),
	}
}

// AddPayeeAddress stores an address of one of a user's payees. It is an administrative
// operation: it is not scoped to a platform.
//
// Returns CodeInvalid when the address fails validation and CodeNotFound when the user or
// the user's payee does not exist.
func (s *Service) AddPayeeAddress(ctx context.Context, userID, payeeID string, in NewPayeeAddress) (PayeeAddress, error) {
	if _, err := s.validate("addresses_add", map[string]string{"user_id": userID, "payee_id": payeeID}, nil, in); err != nil {
		return PayeeAddress{}, err
	}
	params := queries.CreatePayeeAddressParams{
		ID:           s.newID().String(),
		UserID:       canonicalID(userID),
		PayeeID:      canonicalID(payeeID),
		ContactID:    s.newID().String(),
		Name:         in.Name,
		LastName:     in.LastName,
		AddressLine1: in.AddressLine1,
		AddressLine2: in.AddressLine2,
		CompanyName:  in.CompanyName,
		City:         in.City,
		State:        in.State,
		Zipcode:      in.Zipcode,
		Country:      in.Country,
		AddressType:  in.AddressType,
		CreatedAt:    formatTime(s.Now()),
	}
	if in.IsDefault != nil && *in.IsDefault {
		params.IsDefault = 1
	}
	var a PayeeAddress
	err := s.write(ctx, func(ctx context.Context, q queries.Querier) error {
		if _, err := q.GetUserPayee(ctx, queries.GetUserPayeeParams{ID: params.PayeeID, UserID: params.UserID}); err != nil {
			return notFound(err, "Payee not found.")
		}
		row, err := q.CreatePayeeAddress(ctx, params)
		if err != nil {
			return err
		}
		a = payeeAddressFromRow(row)
		return nil
	})
	if err != nil {
		return PayeeAddress{}, err
	}
	return a, nil
}

// ListPayeeAddresses returns the addresses of a user's payees, oldest first; payeeID,
// when not empty, keeps those of one payee. A payee without addresses, unknown, or
// another user's, has none: an empty list.
//
// Returns CodeInvalid for malformed ids and CodeNotFound when the user is not the
// platform's.
func (s *Service) ListPayeeAddresses(ctx context.Context, platformID uuid.UUID, userID, payeeID string) ([]PayeeAddress, error) {
	query := map[string]string{"payee_id": payeeID}
	if err := s.validateAsSent(ctx, "addresses_list", map[string]string{"user_id": userID}, query, "payee_id"); err != nil {
		return nil, err
	}
	out := []PayeeAddress{}
	// The user's existence never changes once seen: its addresses need no snapshot with it.
	err := s.query(ctx, func(q queries.Querier) error {
		user, err := s.platformUser(ctx, q, platformID, userID)
		if err != nil {
			return err
		}
		var filter *string // nil: every payee's
		if payeeID != "" {
			filter = new(canonicalID(payeeID))
		}
		rows, err := q.ListPayeeAddresses(ctx, queries.ListPayeeAddressesParams{UserID: user.ID, PayeeID: filter})
		for _, r := range rows {
			out = append(out, payeeAddressFromRow(r))
		}
		return err
	})
	return out, err
}

// GetPayeeAddress returns one address of a user's payees.
//
// Returns CodeInvalid for malformed ids and CodeNotFound when the user is not the
// platform's or the address is not the user's.
func (s *Service) GetPayeeAddress(ctx context.Context, platformID uuid.UUID, userID, addressID string) (PayeeAddress, error) {
	if _, err := s.validate("addresses_get", map[string]string{"user_id": userID, "address_id": addressID}, nil, nil); err != nil {
		return PayeeAddress{}, err
	}
	var a PayeeAddress
	err := s.query(ctx, func(q queries.Querier) error {
		user, err := s.platformUser(ctx, q, platformID, userID)
		if err != nil {
			return err
		}
		r, err := q.GetPayeeAddress(ctx, queries.GetPayeeAddressParams{ID: canonicalID(addressID), UserID: user.ID})
		if err != nil {
			return notFound(err, "Payee address not found.")
		}
		a = payeeAddressFromRow(r)
		return nil
	})
	return a, err
}
