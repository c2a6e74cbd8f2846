package payments

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/platform-payments/payments/internal/store"
	"github.com/platform-payments/payments/queries"
)

// Card is a saved payment card of a user: what a card record needs to be shown and
// chosen, never the full number or the security code. Cards are created through the
// library and the command line only; the API can delete them. Field rules live in
// schema/cards_add.json.
type Card struct {
	CardID    uuid.UUID `json:"card_id"`
	UserID    uuid.UUID `json:"user_id"`
	Brand     string    `json:"brand"`
	Last4     string    `json:"last4"`
	ExpMonth  int       `json:"exp_month"`
	ExpYear   int       `json:"exp_year"`
	CreatedAt time.Time `json:"created_at"`
}

// NewCard is a card to save.
type NewCard struct {
	Brand    string `json:"brand"`
	Last4    string `json:"last4"`
	ExpMonth int    `json:"exp_month"`
	ExpYear  int    `json:"exp_year"`
}

// CardDeletion is the body of Delete Card.
type CardDeletion struct {
	CardID string `json:"card_id"`
}

func (CardDeletion) requestSchema() string { return "cards_delete" }

// DeletedCard is what Delete Card returns.
type DeletedCard struct {
	CardID  uuid.UUID `json:"card_id"`
	Deleted bool      `json:"deleted"`
}

// AddCard saves a card for a user. It is an administrative operation: it is not scoped to
// a platform.
//
// Returns CodeInvalid when the card fails validation and CodeNotFound for an unknown user.
func (s *Service) AddCard(ctx context.Context, userID string, in NewCard) (Card, error) {
	if _, err := s.validate("cards_add", map[string]string{"user_id": userID}, nil, in); err != nil {
		return Card{}, err
	}
	c := Card{
		CardID:    s.newID(),
		UserID:    uuid.MustParse(userID),
		Brand:     in.Brand,
		Last4:     in.Last4,
		ExpMonth:  in.ExpMonth,
		ExpYear:   in.ExpYear,
		CreatedAt: s.Now(),
	}
	err := s.write(ctx, store.WriteOptions{}, func(ctx context.Context, q store.Querier) error {
		user, err := q.GetUser(ctx, c.UserID.String())
		if err != nil {
			return notFound(err, "User not found.")
		}
		if err := q.CreateCard(ctx, queries.CreateCardParams{
			ID:        c.CardID.String(),
			UserID:    c.UserID.String(),
			Brand:     c.Brand,
			Last4:     c.Last4,
			ExpMonth:  int64(c.ExpMonth),
			ExpYear:   int64(c.ExpYear),
			CreatedAt: formatTime(c.CreatedAt),
		}); err != nil {
			return err
		}
		return s.emitFor(ctx, q, user.PlatformID, EventCardAdded, EventData{Object: EventObject{Type: "card", ID: c.CardID.String(), UserID: user.ID}})
	})
	if err != nil {
		return Card{}, err
	}
	return c, nil
}

// DeleteCard deletes a card of a user of the platform. The card is kept, marked deleted,
// and is gone for every later call.
//
// Returns CodeInvalid when the request fails validation and CodeNotFound when the user is
// not the platform's or the card is not the user's or already deleted.
//
// Options: WithKey, with which a retry answers as the first call did, and Validated.
func (s *Service) DeleteCard(ctx context.Context, platformID uuid.UUID, userID string, in CardDeletion, opts ...Call) (DeletedCard, error) {
	c := options(opts)
	return once(ctx, s, c.key, platformScope(platformID), "DeleteCard", []any{userID, in}, func(a *attempt) (DeletedCard, error) {
		return s.deleteCard(ctx, a, c.validated, platformID, userID, in)
	})
}

func (s *Service) deleteCard(ctx context.Context, a *attempt, v *Validation, platformID uuid.UUID, userID string, in CardDeletion) (DeletedCard, error) {
	if _, err := s.validateValue(v, in.requestSchema(), map[string]string{"user_id": userID}, nil, in); err != nil {
		return DeletedCard{}, err
	}
	cardID := uuid.MustParse(in.CardID)
	deleted := DeletedCard{CardID: cardID, Deleted: true}
	opts := store.WriteOptions{} // one statement changes the card: it locks nothing first
	var read userRead
	err := s.writeRemembering(ctx, opts, a, func() any { return deleted }, func(ctx context.Context, q store.Querier) error {
		user, err := s.platformOwner(ctx, q, platformID, userID, &read)
		if err != nil {
			return err
		}
		n, err := q.SoftDeleteCard(ctx, queries.SoftDeleteCardParams{
			DeletedAt: new(formatTime(s.Now())),
			ID:        cardID.String(),
			UserID:    user.ID,
		})
		if err == nil && n == 0 {
			return Errorf(CodeNotFound, "Card not found.")
		}
		if err != nil {
			return err
		}
		return s.emit(ctx, q, platformID.String(), s.env, EventCardDeleted,
			EventData{Object: EventObject{Type: "card", ID: cardID.String(), UserID: user.ID}})
	})
	if err != nil {
		return DeletedCard{}, err
	}
	s.remember(read)
	return deleted, nil
}
