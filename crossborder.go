package payments

// Cross-border payees: the payee's bank accounts (Add, List and Delete Payee Bank) and
// addresses (Add and List Payee Addresses), endpoints 9 to 12. What a country requires of
// each is in its payee rules (rules.go); the rates its payouts convert at are in rates.go.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/platform-payments/payments/internal/seal"
	"github.com/platform-payments/payments/internal/store"
	"github.com/platform-payments/payments/internal/stored"
	"github.com/platform-payments/payments/internal/validate"
	"github.com/platform-payments/payments/queries"
)

// PayeeBank is a payee's bank account for cross-border payouts.
type PayeeBank struct {
	BankID              uuid.UUID `json:"bank_id"`
	AccountNumber       string    `json:"account_number"`
	Country             string    `json:"country"`
	BankAccType         string    `json:"bank_acc_type"`
	BankNickName        *string   `json:"bank_nick_name"`
	BankIdentifierType  *string   `json:"bank_identifier_type"`
	BankIdentifierValue *string   `json:"bank_identifier_value"`
	CreatedAt           time.Time `json:"created_at"`
	UpdatedAt           time.Time `json:"updated_at"`
}

// NewPayeeBank is the body of Add Payee Bank. Its limits live in
// schema/payee_banks_add.json and in the destination country's payee rules. A field left
// nil is absent, as a JSON null is: a mandatory one of the country is missing.
type NewPayeeBank struct {
	PayeeID         string  `json:"payee_id"`
	BankNickName    *string `json:"bank_nick_name,omitempty"`
	AccountNumber   string  `json:"account_number"`
	Country         string  `json:"country"`
	BankAccType     string  `json:"bank_acc_type"`
	IdentifierType  *string `json:"identifier_type,omitempty"`
	IdentifierValue *string `json:"identifier_value,omitempty"`
	PayoutBankID    *string `json:"payout_bank_id,omitempty"`
}

func (NewPayeeBank) requestSchema() string { return payeeBankRequest }

// providerAccountTypes maps bank_acc_type to the payout provider's account type code. The
// types are those schema/payee_banks_add.json accepts: the validator refuses to start
// when a type has no code here, or a code no type there (see enumTables).
var providerAccountTypes = map[string]string{"savings": "AHO", "current": "CTE", "no_needed": "NON"}

// ProviderAccountType returns the payout provider's code for a payee bank's bank_acc_type,
// any type Add Payee Bank accepts (savings is AHO).
//
// Returns CodeInvalid for any other type.
func ProviderAccountType(bankAccType string) (string, error) {
	code, ok := providerAccountTypes[bankAccType]
	if !ok {
		return "", Errorf(CodeInvalid, "Unknown bank_acc_type %q.", bankAccType)
	}
	return code, nil
}

// AddPayeeBank adds a cross-border bank account of one of a user's payees. The body meets
// its schema first, then the destination country's payee rules: the mandatory fields,
// the country's lengths, and its formats (IFSC, IBAN, CLABE, digits).
//
// Returns CodeInvalid when the request fails either, and CodeNotFound when the user is not
// the platform's or the payee not the user's.
//
// Options: WithKey, with which it adds the bank at most once, and Validated.
func (s *Service) AddPayeeBank(ctx context.Context, platformID uuid.UUID, userID string, in NewPayeeBank, opts ...Call) (PayeeBank, error) {
	c := options(opts)
	return once(ctx, s, c.key, platformScope(platformID), "AddPayeeBank", []any{userID, in}, func(a *attempt) (PayeeBank, error) {
		return s.addPayeeBank(ctx, a, c.validated, platformID, userID, in)
	})
}

func (s *Service) addPayeeBank(ctx context.Context, a *attempt, v *Validation, platformID uuid.UUID, userID string, in NewPayeeBank) (PayeeBank, error) {
	pathParams := map[string]string{"user_id": userID}
	body, err := s.validateValue(v, in.requestSchema(), pathParams, nil, in)
	if err != nil {
		return PayeeBank{}, err
	}
	now := s.Now()
	b := PayeeBank{
		BankID:        s.newID(),
		AccountNumber: in.AccountNumber,
		Country:       in.Country,
		BankAccType:   in.BankAccType,
		BankNickName:  in.BankNickName,
		CreatedAt:     now,
		UpdatedAt:     now,
	}
	opts := store.WriteOptions{} // a new bank is a new row: it locks nothing first
	var read userRead
	err = s.writeRemembering(ctx, opts, a, func() any { return b }, func(ctx context.Context, q store.Querier) error {
		country, err := q.GetRuleCountry(ctx, in.Country)
		if errors.Is(err, sql.ErrNoRows) {
			return invalid(FieldError{
				Type: "value_error", Loc: []any{"body", "country"},
				Msg:   fmt.Sprintf("Value error, there are no payee rules for %s", in.Country),
				Input: in.Country, Ctx: map[string]any{"error": map[string]any{}},
			})
		}
		if err != nil {
			return err
		}
		rules, err := s.countryRules.Validator(s.schemas, country)
		if err != nil {
			return err
		}
		// The country rules see the body without its nulls (a null is a field left out);
		// a mandatory field missing shows the body as sent.
		fields, err := rules.ValidateBody(payeeBankRequest, validate.WithoutNulls(body))
		if err := checked(validate.MissingShows(fields, body), err); err != nil {
			return err
		}
		user, err := s.platformOwner(ctx, q, platformID, userID, &read)
		if err != nil {
			return err
		}
		payeeID := canonicalID(in.PayeeID)
		if in.IdentifierValue != nil {
			b.BankIdentifierType = &country.BankIdentifierType
			b.BankIdentifierValue = in.IdentifierValue
		}
		// Written only when the payee is the user's, in the same statement.
		written, err := q.CreatePayeeBank(ctx, queries.CreatePayeeBankParams{
			ID:                  b.BankID.String(),
			UserID:              user.ID,
			PayeeID:             payeeID,
			AccountNumberSealed: s.keys.Seal([]byte(b.AccountNumber), seal.PayeeBankNumberAAD(b.BankID.String())),
			Country:             b.Country,
			BankAccType:         b.BankAccType,
			BankNickName:        b.BankNickName,
			IdentifierType:      b.BankIdentifierType,
			IdentifierValue:     b.BankIdentifierValue,
			PayoutBankID:        in.PayoutBankID,
			CreatedAt:           formatTime(now),
			UpdatedAt:           formatTime(now),
		})
		if err != nil {
			return err
		}
		if written == 0 {
			return &Error{Code: CodeNotFound, Message: "Payee not found."} // or not the user's
		}
		return s.emit(ctx, q, platformID.String(), s.env, EventPayeeBankAdded,
			EventData{Object: EventObject{Type: "payee_bank", ID: b.BankID.String(), UserID: user.ID, PayeeID: payeeID}})
	})
	if err != nil {
		return PayeeBank{}, err
	}
	s.remember(read)
	return b, nil
}

// DeletePayeeBank deletes a payee bank of a user of the platform. The row is kept, marked
// deleted, and is gone for every later call.
//
// Returns CodeInvalid for malformed ids and CodeNotFound when the user is not the
// platform's or the bank is not the user's or already deleted.
//
// Options: WithKey, with which a retry answers as the first call did.
func (s *Service) DeletePayeeBank(ctx context.Context, platformID uuid.UUID, userID, bankID string, opts ...Call) error {
	_, err := once(ctx, s, options(opts).key, platformScope(platformID), "DeletePayeeBank", []any{userID, bankID}, func(a *attempt) (*struct{}, error) {
		return nil, s.deletePayeeBank(ctx, a, platformID, userID, bankID)
	})
	return err
}

func (s *Service) deletePayeeBank(ctx context.Context, a *attempt, platformID uuid.UUID, userID, bankID string) error {
	if _, err := s.validate("payee_banks_delete", map[string]string{"user_id": userID, "bank_uuid": bankID}, nil, nil); err != nil {
		return err
	}
	opts := store.WriteOptions{} // one statement changes the bank: it locks nothing first
	var read userRead
	err := s.writeRemembering(ctx, opts, a, func() any { return nil }, func(ctx context.Context, q store.Querier) error {
		user, err := s.platformOwner(ctx, q, platformID, userID, &read)
		if err != nil {
			return err
		}
		n, err := q.SoftDeletePayeeBank(ctx, queries.SoftDeletePayeeBankParams{
			DeletedAt: new(formatTime(s.Now())),
			ID:        canonicalID(bankID),
			UserID:    user.ID,
		})
		if err == nil && n == 0 {
			return Errorf(CodeNotFound, "Payee bank not found.")
		}
		if err != nil {
			return err
		}
		return s.emit(ctx, q, platformID.String(), s.env, EventPayeeBankDeleted,
			EventData{Object: EventObject{Type: "payee_bank", ID: canonicalID(bankID), UserID: user.ID}})
	})
	if err == nil {
		s.remember(read)
	}
	return err
}

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
func payeeAddressFromRow(r queries.PayeeAddress) (PayeeAddress, error) {
	created, err := parseTime(r.CreatedAt)
	if err != nil {
		return PayeeAddress{}, err
	}
	updated, err := stored.ParseNullTime(r.UpdatedAt)
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
		CreatedAt:    created,
		UpdatedAt:    updated,
	}, err
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
	err := s.write(ctx, store.WriteOptions{}, func(ctx context.Context, q store.Querier) error {
		if _, err := q.GetUserPayee(ctx, queries.GetUserPayeeParams{ID: params.PayeeID, UserID: params.UserID}); err != nil {
			return notFound(err, "Payee not found.")
		}
		row, err := q.CreatePayeeAddress(ctx, params)
		if err != nil {
			return err
		}
		if a, err = payeeAddressFromRow(row); err != nil {
			return err
		}
		user, err := q.GetUser(ctx, params.UserID)
		if err != nil {
			return err
		}
		return s.emitFor(ctx, q, user.PlatformID, EventPayeeAddressAdded,
			EventData{Object: EventObject{Type: "payee_address", ID: row.ID, UserID: row.UserID, PayeeID: row.PayeeID}})
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
//
// Options: AsSent.
func (s *Service) ListPayeeAddresses(ctx context.Context, platformID uuid.UUID, userID, payeeID string, opts ...Call) ([]PayeeAddress, error) {
	query := map[string]string{"payee_id": payeeID}
	if err := s.validateAsSent(options(opts).sent, "addresses_list", map[string]string{"user_id": userID}, query, "payee_id"); err != nil {
		return nil, err
	}
	out := []PayeeAddress{}
	// The user's existence never changes once seen: its addresses need no snapshot with it.
	err := s.query(ctx, func(q store.Querier) error {
		user, err := s.platformUser(ctx, q, platformID, userID)
		if err != nil {
			return err
		}
		var filter *string // nil: every payee's
		if payeeID != "" {
			filter = new(canonicalID(payeeID))
		}
		rows, err := q.ListPayeeAddresses(ctx, queries.ListPayeeAddressesParams{UserID: user.ID, PayeeID: filter})
		if err != nil {
			return err
		}
		for _, r := range rows {
			a, err := payeeAddressFromRow(r)
			if err != nil {
				return err
			}
			out = append(out, a)
		}
		return nil
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
	err := s.query(ctx, func(q store.Querier) error {
		user, err := s.platformUser(ctx, q, platformID, userID)
		if err != nil {
			return err
		}
		r, err := q.GetPayeeAddress(ctx, queries.GetPayeeAddressParams{ID: canonicalID(addressID), UserID: user.ID})
		if err != nil {
			return notFound(err, "Payee address not found.")
		}
		a, err = payeeAddressFromRow(r)
		return err
	})
	return a, err
}
