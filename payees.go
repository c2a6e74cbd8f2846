package payments

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/platform-payments/payments/internal/store"
	"github.com/platform-payments/payments/queries"
)

// Payee is a payout recipient of a user. Field limits live in schema/payees_*.json.
type Payee struct {
	PayeeID          uuid.UUID `json:"payee_id"`
	Name             string    `json:"name"`
	Email            *string   `json:"email"`
	PhoneCountryCode *string   `json:"phone_country_code"`
	Phone            *string   `json:"phone"`
	CreatedAt        time.Time `json:"created_at"`
}

// NewPayee is the body of Create Payee. A field left nil is absent, as a JSON null is.
type NewPayee struct {
	Name             string  `json:"name"`
	Email            *string `json:"email,omitempty"`
	PhoneCountryCode *string `json:"phone_country_code,omitempty"`
	Phone            *string `json:"phone,omitempty"`
}

func (NewPayee) requestSchema() string { return "payees_create" }

// PayeeRename is the body of Update Payee.
type PayeeRename struct {
	PayeeID string `json:"payee_id"`
	Name    string `json:"name"`
}

func (PayeeRename) requestSchema() string { return "payees_update" }

// payeeFromRow is the API's view of a stored payee: the id and the time as Go values,
// without its user and its update time, which the API does not show.
func payeeFromRow(r queries.Payee) (Payee, error) {
	created, err := parseTime(r.CreatedAt)
	return Payee{
		PayeeID:          uuid.MustParse(r.ID),
		Name:             r.Name,
		Email:            r.Email,
		PhoneCountryCode: r.PhoneCountryCode,
		Phone:            r.Phone,
		CreatedAt:        created,
	}, err
}

// CreatePayee creates a payee of the user whose API key made the call. A payee needs no
// contact, but a phone number goes with its country code.
//
// Returns CodeInvalid when the body fails validation.
//
// Options: WithKey, with which it creates the payee at most once, and Validated.
func (s *Service) CreatePayee(ctx context.Context, caller Caller, in NewPayee, opts ...Call) (Payee, error) {
	c := options(opts)
	return once(ctx, s, c.key, userScope(caller.UserID), "CreatePayee", in, func(a *attempt) (Payee, error) {
		return s.createPayee(ctx, a, c.validated, caller, in)
	})
}

func (s *Service) createPayee(ctx context.Context, a *attempt, v *Validation, caller Caller, in NewPayee) (Payee, error) {
	_, err := s.validateValue(v, in.requestSchema(), nil, nil, in)
	if err != nil {
		return Payee{}, err
	}
	params := queries.CreatePayeeParams{
		ID:               s.newID().String(),
		UserID:           caller.UserID.String(),
		Name:             in.Name,
		Email:            in.Email,
		PhoneCountryCode: in.PhoneCountryCode,
		Phone:            in.Phone,
		CreatedAt:        formatTime(s.Now()),
	}
	var p Payee
	opts := store.WriteOptions{} // a new payee is a new row alone
	err = s.writeRemembering(ctx, opts, a, func() any { return p }, func(ctx context.Context, q store.Querier) error {
		row, err := q.CreatePayee(ctx, params)
		if err != nil {
			return err
		}
		if p, err = payeeFromRow(row); err != nil {
			return err
		}
		return s.emit(ctx, q, caller.PlatformID.String(), s.env, EventPayeeCreated,
			EventData{Object: EventObject{Type: "payee", ID: row.ID, UserID: row.UserID}})
	})
	if err != nil {
		return Payee{}, err
	}
	return p, nil
}

// UpdatePayee renames a payee of a user of the platform.
//
// Returns CodeInvalid when the request fails validation and CodeNotFound when the user is
// not the platform's or the payee not the user's.
//
// Options: WithKey, with which it renames the payee at most once, and Validated.
func (s *Service) UpdatePayee(ctx context.Context, platformID uuid.UUID, userID string, in PayeeRename, opts ...Call) (Payee, error) {
	c := options(opts)
	return once(ctx, s, c.key, platformScope(platformID), "UpdatePayee", []any{userID, in}, func(a *attempt) (Payee, error) {
		return s.updatePayee(ctx, a, c.validated, platformID, userID, in)
	})
}

func (s *Service) updatePayee(ctx context.Context, a *attempt, v *Validation, platformID uuid.UUID, userID string, in PayeeRename) (Payee, error) {
	if _, err := s.validateValue(v, in.requestSchema(), map[string]string{"user_id": userID}, nil, in); err != nil {
		return Payee{}, err
	}
	var p Payee
	// The event says what changed from the name read with the payee's row locked
	// (RenameUserPayee): renames of one payee run one after another.
	opts := store.WriteOptions{}
	var read userRead
	err := s.writeRemembering(ctx, opts, a, func() any { return p }, func(ctx context.Context, q store.Querier) error {
		user, err := s.platformOwner(ctx, q, platformID, userID, &read)
		if err != nil {
			return err
		}
		before, row, err := q.RenameUserPayee(ctx, queries.RenamePayeeParams{
			Name:      in.Name,
			UpdatedAt: new(formatTime(s.Now())),
			ID:        canonicalID(in.PayeeID),
			UserID:    user.ID,
		})
		if err != nil {
			return notFound(err, "Payee not found.") // or not the user's
		}
		if p, err = payeeFromRow(row); err != nil {
			return err
		}
		changed := []string{}
		if before != row.Name {
			changed = append(changed, "name")
		}
		return s.emit(ctx, q, platformID.String(), s.env, EventPayeeUpdated,
			EventData{Object: EventObject{Type: "payee", ID: row.ID, UserID: row.UserID}, Changed: &changed})
	})
	if err == nil {
		s.remember(read)
	}
	return p, err
}
