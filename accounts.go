package payments

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/platform-payments/payments/internal/seal"
	"github.com/platform-payments/payments/internal/store"
	"github.com/platform-payments/payments/queries"
)

// BankAccount is a US bank account linked to a user, as the API returns it: the account
// number is shortened to its last four digits (the full number is stored sealed, for ACH,
// and never leaves the service). A new account's balance and verification state are the
// store's defaults (0, not_applied, MD): verification happens outside the API.
type BankAccount struct {
	AccountID          uuid.UUID `json:"account_id"`
	BankNickName       *string   `json:"bank_nick_name"`
	AccountNumber      string    `json:"account_number"`
	AccountBalance     Decimal   `json:"account_balance"`
	RoutingNumber      string    `json:"routing_number"`
	AccountType        string    `json:"account_type"`
	BankName           string    `json:"bank_name"`
	AccountHolderName  string    `json:"account_holder_name"`
	VerificationStatus string    `json:"verification_status"`
	VerificationType   string    `json:"verification_type"`
	IsVerified         bool      `json:"is_verified"`
	IsDefault          bool      `json:"is_default"`
	CreatedAt          time.Time `json:"created_at"`
}

// NewBankAccount is the body of Add Bank Account. Field limits, the account number and
// routing number formats and the account types live in schema/accounts_add.json.
type NewBankAccount struct {
	UserID               string  `json:"user_id"`
	AccountHolderName    *string `json:"account_holder_name,omitempty"`
	BankName             string  `json:"bank_name"`
	NickName             *string `json:"nick_name,omitempty"`
	AccountNumber        string  `json:"account_number"`
	RoutingNumber        string  `json:"routing_number"`
	BankAddress          *string `json:"bank_address,omitempty"`
	City                 *string `json:"city,omitempty"`
	State                *string `json:"state,omitempty"`
	Zip                  *string `json:"zip,omitempty"`
	Country              *string `json:"country,omitempty"`
	AccountType          string  `json:"account_type"`
	AccountHolderAddress *string `json:"account_holder_address,omitempty"`
	AccountHolderCity    *string `json:"account_holder_city,omitempty"`
	AccountHolderState   *string `json:"account_holder_state,omitempty"`
	AccountHolderZip     *string `json:"account_holder_zip,omitempty"`
	AccountHolderCountry *string `json:"account_holder_country,omitempty"`
	IsDefault            *bool   `json:"is_default,omitempty"`
}

func (NewBankAccount) requestSchema() string { return "accounts_add" }

// bankAccountFromRow is the API's view of a stored account. The row holds the number
// sealed, so the caller gives it in the clear (as added, or opened) and the API shows its
// last four digits; the rest is the API's types (UUID, time, booleans) and leaves out
// what it never shows (the addresses, the blind index).
func bankAccountFromRow(r queries.BankAccount, number string) (BankAccount, error) {
	created, err := parseTime(r.CreatedAt)
	return BankAccount{
		AccountID:          uuid.MustParse(r.ID),
		BankNickName:       r.NickName,
		AccountNumber:      number[len(number)-4:],
		AccountBalance:     Decimal(r.Balance),
		RoutingNumber:      r.RoutingNumber,
		AccountType:        r.AccountType,
		BankName:           r.BankName,
		AccountHolderName:  r.AccountHolderName,
		VerificationStatus: r.VerificationStatus,
		VerificationType:   r.VerificationType,
		IsVerified:         r.IsVerified == 1,
		IsDefault:          r.IsDefault == 1,
		CreatedAt:          created,
	}, err
}

// AddBankAccount links a bank account to a user of the platform. The holder's name
// defaults to the user's. A user has exactly one default account: the first one linked,
// until an account added with IsDefault takes its place.
//
// Returns CodeInvalid when the body fails validation, CodeNotFound when the user is not
// the platform's, and CodeConflict when the user already has this routing and account
// number.
//
// Options: WithKey, with which it links the account at most once, and Validated.
func (s *Service) AddBankAccount(ctx context.Context, platformID uuid.UUID, in NewBankAccount, opts ...Call) (BankAccount, error) {
	c := options(opts)
	return once(ctx, s, c.key, platformScope(platformID), "AddBankAccount", in, func(a *attempt) (BankAccount, error) {
		return s.addBankAccount(ctx, a, c.validated, platformID, in)
	})
}

func (s *Service) addBankAccount(ctx context.Context, a *attempt, v *Validation, platformID uuid.UUID, in NewBankAccount) (BankAccount, error) {
	if _, err := s.validateValue(v, in.requestSchema(), nil, nil, in); err != nil {
		return BankAccount{}, err
	}
	params := s.bankAccountParams(in)
	var account BankAccount
	// The user's row is locked first for the default-account rule: the accounts of one
	// user gather in one batch, which takes the lock once.
	opts := store.WriteOptions{LockKey: "user:" + canonicalID(in.UserID)}
	var read userRead
	err := s.writeRemembering(ctx, opts, a, func() any { return account }, func(ctx context.Context, q store.Querier) error {
		user, err := s.platformOwner(ctx, q, platformID, in.UserID, &read)
		if err != nil {
			return err
		}
		params.UserID = user.ID
		params.AccountHolderName = user.Name
		if in.AccountHolderName != nil {
			params.AccountHolderName = *in.AccountHolderName
		}
		// The default-account rule, with the user's row locked first, so that the
		// default-account changes of one user run one after another wherever writes run
		// side by side.
		row, err := q.CreateBankAccountTakingDefault(ctx, params, in.IsDefault != nil && *in.IsDefault)
		if err != nil {
			return s.storeError(err)
		}
		// The row holds the number sealed: the digits shown are those of the number given.
		if account, err = bankAccountFromRow(row, in.AccountNumber); err != nil {
			return err
		}
		return s.emit(ctx, q, platformID.String(), s.env, EventBankAccountAdded,
			EventData{Object: EventObject{Type: "bank_account", ID: row.ID, UserID: user.ID}})
	})
	if err != nil {
		return BankAccount{}, err
	}
	s.remember(read)
	return account, nil
}

// bankAccountParams is the row of a new account as far as the request gives it (the user
// and the holder's name come from the store). The number is sealed, and its blind index
// computed, before the write transaction: the duplicate check is the store's UNIQUE
// (user, routing number, blind index).
func (s *Service) bankAccountParams(in NewBankAccount) queries.CreateBankAccountParams {
	id, userID := s.newID().String(), canonicalID(in.UserID)
	return queries.CreateBankAccountParams{
		ID:                   id,
		NickName:             in.NickName,
		BankName:             in.BankName,
		AccountNumberSealed:  s.keys.Seal([]byte(in.AccountNumber), seal.BankAccountNumberAAD(id)),
		AccountNumberIndex:   s.index.BankAccount(userID, in.RoutingNumber, in.AccountNumber),
		RoutingNumber:        in.RoutingNumber,
		BankAddress:          in.BankAddress,
		City:                 in.City,
		State:                in.State,
		Zip:                  in.Zip,
		Country:              in.Country,
		AccountType:          in.AccountType,
		AccountHolderAddress: in.AccountHolderAddress,
		AccountHolderCity:    in.AccountHolderCity,
		AccountHolderState:   in.AccountHolderState,
		AccountHolderZip:     in.AccountHolderZip,
		AccountHolderCountry: in.AccountHolderCountry,
		CreatedAt:            formatTime(s.Now()),
	}
}

// GetBankAccount returns a linked bank account of a user of the platform, once that user
// is identity-verified.
//
// Returns CodeInvalid for a malformed id, CodeNotFound when the account is not of one of
// the platform's users, and CodeForbidden while its user is not identity-verified.
func (s *Service) GetBankAccount(ctx context.Context, platformID uuid.UUID, accountID string) (BankAccount, error) {
	if _, err := s.validate("accounts_get", map[string]string{"account_id": accountID}, nil, nil); err != nil {
		return BankAccount{}, err
	}
	var row queries.BankAccount
	err := s.query(ctx, func(q store.Querier) error {
		r, err := q.GetPlatformBankAccount(ctx, queries.GetPlatformBankAccountParams{
			ID:         canonicalID(accountID),
			PlatformID: platformID.String(),
		})
		if err != nil {
			return notFound(err, "Bank account not found.")
		}
		if r.VerifiedAt == nil {
			return Errorf(CodeForbidden, "The account's user is not identity-verified.")
		}
		row = r.BankAccount
		return nil
	})
	if err != nil {
		return BankAccount{}, err
	}
	// Only the last four digits are shown, but even those are kept nowhere in the clear:
	// of a short number they would be most of it.
	number, err := s.keys.Open(row.AccountNumberSealed, seal.BankAccountNumberAAD(row.ID))
	if err != nil {
		return BankAccount{}, fmt.Errorf("payments: number of bank account %s: %w", row.ID, err)
	}
	return bankAccountFromRow(row, string(number))
}
