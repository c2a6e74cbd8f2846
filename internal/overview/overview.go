// Package overview is the console's reads that the API has no operation for: the
// platforms, a search of a platform's users, what a user holds beside its profile, the
// events about a user and an endpoint's recent attempts. It only reads, through the
// service's own reads (outbox.Outbox.Read) and the engines' sqlc queries, and returns
// nothing sealed: no secret and no account number, whole or in part.
package overview

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/platform-payments/payments/internal/outbox"
	"github.com/platform-payments/payments/internal/seal"
	"github.com/platform-payments/payments/internal/store"
	"github.com/platform-payments/payments/internal/stored"
	"github.com/platform-payments/payments/queries"
)

// Reader reads a service's store for the console.
type Reader struct {
	read func(ctx context.Context, fn func(q store.Querier) error) error
	ring *seal.Keyring
	// searchWindow and eventWindow are SearchWindow and EventWindow (tests make them small).
	searchWindow, eventWindow int64
}

// New returns the reader of the service whose outbox is o and whose data keys are ring
// (which open a bank account's number, to show its last four digits as the API does).
func New(o *outbox.Outbox, ring *seal.Keyring) *Reader {
	return &Reader{read: o.Read, ring: ring, searchWindow: SearchWindow, eventWindow: EventWindow}
}

// Platform is a platform as the console lists it: never its secret.
type Platform struct {
	ID          string
	Name        string
	Environment string
	Users       int64
	CreatedAt   time.Time
}

// Platforms returns a page of the platforms, oldest first: at most limit after the first
// offset.
func (r *Reader) Platforms(ctx context.Context, offset, limit int) ([]Platform, error) {
	var rows []queries.ListPlatformsPageRow
	err := r.read(ctx, func(q store.Querier) (err error) {
		rows, err = q.ListPlatformsPage(ctx, queries.ListPlatformsPageParams{PageSize: int64(limit), PageOffset: int64(offset)})
		return err
	})
	if err != nil {
		return nil, err
	}
	out := make([]Platform, 0, len(rows))
	for _, p := range rows {
		at, err := stored.ParseTime(p.CreatedAt)
		if err != nil {
			return nil, err
		}
		out = append(out, Platform{ID: p.ID, Name: p.Name, Environment: p.Environment, Users: p.UserCount, CreatedAt: at})
	}
	return out, nil
}

// UserMatch is a user a search found.
type UserMatch struct {
	PwID       int64
	ID         string
	Name       string
	Email      *string
	VerifiedAt *time.Time
	CreatedAt  time.Time
}

// SearchWindow is how many users, by pw_id, one name search reads at most: a search for
// a rare name reads the platform's users a window at a time, a page each (SearchUsers).
const SearchWindow = 20_000

// SearchPage is a page of a search: the users found and, when there may be more, the
// pw_id to search after next (0: none).
type SearchPage struct {
	Users []UserMatch
	Next  int64
}

// SearchUsers returns a page of at most limit users of the platform (which has total
// users) after pw_id after: for a term with an @, the user whose email it is (in any case:
// the indexed email key); for any other, those whose name contains it (in any case), by
// pw_id, among the next SearchWindow users at most.
func (r *Reader) SearchUsers(ctx context.Context, platformID, term string, after, total int64, limit int) (SearchPage, error) {
	lower := strings.ToLower(term)
	var (
		rows  []queries.User
		page  SearchPage
		until = after + r.searchWindow
	)
	err := r.read(ctx, func(q store.Querier) (err error) {
		if strings.Contains(term, "@") {
			if after > 0 {
				rows = nil // one user at most: no page after the first
				return nil
			}
			rows, err = q.GetUserByEmailKey(ctx, queries.GetUserByEmailKeyParams{PlatformID: platformID, EmailKey: &lower})
			return err
		}
		rows, err = q.SearchUsersByName(ctx, queries.SearchUsersByNameParams{PlatformID: platformID, AfterPwID: after,
			UntilPwID: until, NamePart: lower, PageSize: int64(limit) + 1})
		return err
	})
	if err != nil {
		return page, err
	}
	switch {
	case strings.Contains(term, "@"):
	case len(rows) > limit:
		rows = rows[:limit]
		page.Next = rows[limit-1].PwID
	case until < total:
		page.Next = until
	}
	for _, u := range rows {
		at, err := stored.ParseTime(u.CreatedAt)
		if err != nil {
			return page, err
		}
		verified, err := stored.ParseNullTime(u.VerifiedAt)
		if err != nil {
			return page, err
		}
		page.Users = append(page.Users, UserMatch{PwID: u.PwID, ID: u.ID, Name: u.Name, Email: u.Email, VerifiedAt: verified, CreatedAt: at})
	}
	return page, nil
}

// Holdings is what a user holds beside the profile Get User shows. A bank account's number
// is its last four digits, as Get Bank Account shows it; a payee bank carries none.
type Holdings struct {
	Verified     *time.Time
	Wallet       queries.Wallet
	Settings     queries.UserSetting
	BankAccounts []BankAccount
	Cards        []queries.Card
	Payees       []queries.Payee
	PayeeBanks   []queries.ListUserPayeeBanksRow
}

// BankAccount is a user's linked bank account, its number masked as the API masks it.
type BankAccount struct {
	ID                 string
	BankName           string
	NickName           *string
	HolderName         string
	Last4              string
	RoutingNumber      string
	AccountType        string
	VerificationStatus string
	IsDefault          bool
	CreatedAt          time.Time
}

// bankAccount returns the row as the console shows it: of the number, its last four digits.
func (r *Reader) bankAccount(a queries.BankAccount) (BankAccount, error) {
	number, err := r.ring.Open(a.AccountNumberSealed, seal.BankAccountNumberAAD(a.ID))
	if err != nil {
		return BankAccount{}, fmt.Errorf("overview: number of bank account %s: %w", a.ID, err)
	}
	at, err := stored.ParseTime(a.CreatedAt)
	if err != nil {
		return BankAccount{}, err
	}
	return BankAccount{ID: a.ID, BankName: a.BankName, NickName: a.NickName, HolderName: a.AccountHolderName,
		Last4: string(number[max(0, len(number)-4):]), RoutingNumber: a.RoutingNumber, AccountType: a.AccountType,
		VerificationStatus: a.VerificationStatus, IsDefault: a.IsDefault == 1, CreatedAt: at}, nil
}

// UserHoldings returns what the user userID holds; sql.ErrNoRows when there is no such
// user of the platform.
func (r *Reader) UserHoldings(ctx context.Context, platformID, userID string) (Holdings, error) {
	var h Holdings
	err := r.read(ctx, func(q store.Querier) error {
		u, err := q.GetPlatformUser(ctx, queries.GetPlatformUserParams{ID: userID, PlatformID: platformID})
		if err != nil {
			return err
		}
		if h.Verified, err = stored.ParseNullTime(u.VerifiedAt); err != nil {
			return err
		}
		if h.Wallet, err = q.GetUserWallet(ctx, userID); err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		if h.Settings, err = q.GetUserSettings(ctx, userID); err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		accounts, err := q.ListUserBankAccounts(ctx, userID)
		if err != nil {
			return err
		}
		h.BankAccounts = h.BankAccounts[:0] // fn may run again
		for _, a := range accounts {
			b, err := r.bankAccount(a)
			if err != nil {
				return err
			}
			h.BankAccounts = append(h.BankAccounts, b)
		}
		if h.Cards, err = q.ListUserCards(ctx, userID); err != nil {
			return err
		}
		if h.Payees, err = q.ListUserPayees(ctx, userID); err != nil {
			return err
		}
		h.PayeeBanks, err = q.ListUserPayeeBanks(ctx, userID)
		return err
	})
	return h, err
}

// EventRef is an event as a list of them names it.
type EventRef struct {
	ID   string
	Type string
	At   time.Time
}

// EventWindow is how many of a platform's latest events UserEvents reads at most.
const EventWindow = 5_000

// UserEvents returns the platform's latest events (at most limit) whose payload names the
// user, newest first, among its latest EventWindow events since since (the user's
// creation: none is about the user before).
func (r *Reader) UserEvents(ctx context.Context, platformID, userID string, since time.Time, limit int) ([]EventRef, error) {
	var rows []queries.Event
	err := r.read(ctx, func(q store.Querier) (err error) {
		rows, err = q.ListUserEvents(ctx, queries.ListUserEventsParams{PlatformID: platformID, FromID: CursorAt(since),
			WindowSize: r.eventWindow, Part: userID, PageSize: int64(limit)})
		return err
	})
	if err != nil {
		return nil, err
	}
	out := make([]EventRef, 0, len(rows))
	for _, e := range rows {
		at, err := stored.ParseTime(e.CreatedAt)
		if err != nil {
			return nil, err
		}
		out = append(out, EventRef{ID: e.ID, Type: e.Type, At: at})
	}
	return out, nil
}

// Platform returns the platform id names; sql.ErrNoRows when there is none.
func (r *Reader) Platform(ctx context.Context, id string) (Platform, error) {
	var p queries.Platform
	err := r.read(ctx, func(q store.Querier) (err error) {
		p, err = q.GetPlatform(ctx, id)
		return err
	})
	if err != nil {
		return Platform{}, err
	}
	at, err := stored.ParseTime(p.CreatedAt)
	return Platform{ID: p.ID, Name: p.Name, Environment: p.Environment, Users: p.UserCount, CreatedAt: at}, err
}

// Health is what the store tells of an endpoint's deliveries.
type Health struct {
	// FailingSince is when its deliveries began failing; nil while they succeed.
	FailingSince *time.Time
	// LastSuccess is the last time a delivery to it succeeded; nil for never (or pruned).
	LastSuccess *time.Time
	// Pending is how many deliveries to it wait to be sent or retried.
	Pending int64
	// Attempts are its attempts since the time asked for, oldest first.
	Attempts []Attempt
}

// Attempt is one attempt at a delivery: its time and its outcome.
type Attempt struct {
	At         time.Time
	StatusCode *int64
	Error      *string
}

// OK reports whether the attempt succeeded (a 2xx answer).
func (a Attempt) OK() bool { return a.StatusCode != nil && *a.StatusCode >= 200 && *a.StatusCode < 300 }

// MaxAttempts is the most attempts EndpointHealth returns.
const MaxAttempts = 20000

// EndpointHealth returns the health of the platform's endpoint, with its attempts since
// since (at most MaxAttempts).
func (r *Reader) EndpointHealth(ctx context.Context, platformID, endpointID string, since time.Time) (Health, error) {
	var (
		h        Health
		failing  *string
		last     []*string
		attempts []queries.ListEndpointAttemptsSinceRow
	)
	err := r.read(ctx, func(q store.Querier) (err error) {
		if failing, err = q.GetEndpointFailingSince(ctx, queries.GetEndpointFailingSinceParams{ID: endpointID, PlatformID: platformID}); err != nil {
			return err
		}
		if h.Pending, err = q.CountEndpointPending(ctx, endpointID); err != nil {
			return err
		}
		if last, err = q.LastEndpointSuccess(ctx, endpointID); err != nil {
			return err
		}
		attempts, err = q.ListEndpointAttemptsSince(ctx, queries.ListEndpointAttemptsSinceParams{EndpointID: endpointID,
			Since: stored.Time(since), MaxRows: MaxAttempts})
		return err
	})
	if err != nil {
		return h, err
	}
	if h.FailingSince, err = stored.ParseNullTime(failing); err != nil {
		return h, err
	}
	if len(last) > 0 {
		if h.LastSuccess, err = stored.ParseNullTime(last[0]); err != nil {
			return h, err
		}
	}
	for _, a := range attempts {
		at, err := stored.ParseTime(a.AttemptedAt)
		if err != nil {
			return h, err
		}
		h.Attempts = append(h.Attempts, Attempt{At: at, StatusCode: a.StatusCode, Error: a.Error})
	}
	return h, nil
}

// CursorAt returns the least version-7 UUID of t's millisecond: every event id (they are
// time-ordered) made at t or later sorts after it, as the events list's cursor and as a
// lower bound of ids.
func CursorAt(t time.Time) string {
	var id [16]byte
	ms := uint64(max(0, t.UnixMilli())) // #nosec G115 -- not negative
	for i := 0; i < 6; i++ {
		id[i] = byte(ms >> (40 - 8*i)) // #nosec G115 -- one byte of ms, truncation meant
	}
	id[6] = 0x70 // version 7
	id[8] = 0x80 // RFC 4122 variant
	return fmt.Sprintf("%x-%x-%x-%x-%x", id[0:4], id[4:6], id[6:8], id[8:10], id[10:16])
}

// Rate is an entry of the exchange rates history, as the API shows a rate.
type Rate struct {
	ID           int64
	BaseCurrency string
	Rate         string
	ApplyTime    string
	Fixed        bool
	RecordedAt   time.Time
}

// RateHistory returns the history of the payout currency's rates, the latest apply time
// first, at most limit entries.
func (r *Reader) RateHistory(ctx context.Context, payoutCurrency string, limit int) ([]Rate, error) {
	var rows []queries.ExchangeRate
	err := r.read(ctx, func(q store.Querier) (err error) {
		rows, err = q.ListExchangeRateHistory(ctx, queries.ListExchangeRateHistoryParams{PayoutCurrency: payoutCurrency, PageSize: int64(limit)})
		return err
	})
	if err != nil {
		return nil, err
	}
	out := make([]Rate, 0, len(rows))
	for _, x := range rows {
		at, err := stored.ParseTime(x.CreatedAt)
		if err != nil {
			return nil, err
		}
		out = append(out, Rate{ID: x.ID, BaseCurrency: x.BaseCurrency, Rate: x.ExchangeRate, ApplyTime: x.ApplyTime, Fixed: x.Fixed == 1, RecordedAt: at})
	}
	return out, nil
}

// RuleCountry is a destination country of the current payee rules, with its payout
// currencies.
type RuleCountry struct {
	Code, Name string
	Currencies []string
}

// RuleCountries returns the countries of the current payee rule set, by code.
func (r *Reader) RuleCountries(ctx context.Context) ([]RuleCountry, error) {
	var rows []queries.ListRuleCurrenciesRow
	err := r.read(ctx, func(q store.Querier) (err error) {
		rows, err = q.ListRuleCurrencies(ctx)
		return err
	})
	var out []RuleCountry
	for _, x := range rows {
		if n := len(out); n == 0 || out[n-1].Code != x.CountryCode {
			out = append(out, RuleCountry{Code: x.CountryCode, Name: x.CountryName})
		}
		out[len(out)-1].Currencies = append(out[len(out)-1].Currencies, x.PayoutCurrency)
	}
	return out, err
}
